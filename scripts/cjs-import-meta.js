// import.meta.url in the CommonJS build of the library (tsup.config.ts defines it as this): the URL of
// the file that holds it, every chunk being in dist/cjs. pathToFileURL encodes what a raw `file:` +
// path would not (a `#` or `%` in the folder).
import { pathToFileURL } from 'node:url'

const fileUrl = () => pathToFileURL(__filename).href
export const importMetaUrl = /* @__PURE__ */ fileUrl()
