// Loaded with --import: records, in order, when the process installs a SIGTERM/SIGINT handler and when
// it prints that it is listening (DCB_TRACE_FILE), to check the handlers come first.
import { appendFileSync } from 'node:fs'
const file = process.env.DCB_TRACE_FILE
const on = process.on.bind(process)
process.on = (event, fn) => {
  if (file && (event === 'SIGTERM' || event === 'SIGINT')) appendFileSync(file, `handler ${event}\n`)
  return on(event, fn)
}
const write = process.stdout.write.bind(process.stdout)
process.stdout.write = (chunk, ...rest) => {
  if (file && String(chunk).includes('listening on')) appendFileSync(file, 'ready\n')
  return write(chunk, ...rest)
}
