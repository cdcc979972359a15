import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context)
  if (process.env.DCB_TRACE_FILE) appendFileSync(process.env.DCB_TRACE_FILE, r.url + '\n')
  return r
}
