/**
 * msw's handler class, as `dcb-sandbox/msw` loads it: imported here in the ES module build; the
 * CommonJS build puts msw-peer-require.ts in this file's place (tsup.config.ts), which says why when
 * require() cannot load msw.
 */
export { HttpHandler as HttpHandlerClass } from 'msw'
