import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context)
  if (process.env.DCB_TRACE_FILE) appendFileSync(process.env.DCB_TRACE_FILE, r.url + '\n')
  return r
}
// A package bundled into dist/ is no file of its own: esbuild names each of its modules in a
// comment (`// node_modules/zod/v4/core/core.js`), so those names are recorded as loaded too.
export async function load(url, context, next) {
  const r = await next(url, context)
  if (process.env.DCB_TRACE_FILE && url.startsWith('file:') && r.source) {
    const bundled = String(r.source).match(/^\/\/ \S*node_modules\/\S+$/gm)
    if (bundled) appendFileSync(process.env.DCB_TRACE_FILE, bundled.join('\n') + '\n')
  }
  return r
}
