// Loaded with --import: records every package a dcb process loads, to check start-up stays light.
import { register } from 'node:module'
register('./trace-hooks.mjs', import.meta.url)
