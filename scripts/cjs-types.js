// The declarations of the CommonJS build (dist/cjs, whose package.json says "type": "commonjs"): the
// same files as dist/types, read there as CommonJS. A CommonJS project's TypeScript (moduleResolution
// node16) refuses a require() of declarations it reads as an ES module's.
import { cpSync, rmSync } from 'node:fs'

rmSync('dist/cjs/types', { recursive: true, force: true })
cpSync('dist/types', 'dist/cjs/types', { recursive: true })
