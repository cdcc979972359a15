/** The entry of the built CLI (`dist/cli.js`, loaded by `bin/dcb.js`): parse the arguments and run. */
import { main } from './index.js'

void main()
