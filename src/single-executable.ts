/**
 * The entry of the single executable (`npm run build:binary` → `dist/dcb-linux-x64`): Node's single
 * executable application runs this, bundled with everything as one script. The package's files are
 * assets embedded in the executable (see `scripts/build-binary.mjs`); they are handed to the program
 * before the CLI is loaded, since building the command tree already reads the version.
 */
import { getAsset } from 'node:sea'
import { useEmbeddedFiles } from './assets.js'

useEmbeddedFiles((path) => Buffer.from(getAsset(path)))
void import('./cli/main.js')
