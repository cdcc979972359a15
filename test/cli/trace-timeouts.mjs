// Loaded with --import into a dcb client: the HTTP time-out of a request to DCB_TEST_TIMEOUT_PATH runs
// DCB_TEST_TIMEOUT_SCALE times as long (0.001: a 30 s time-out gives up after 30 ms), so a test sees
// whether one is set without waiting for it; each request sent is said on stderr (`trace: sent METHOD
// PATH`), so a test knows it is out.
import http from 'node:http'
const scale = Number(process.env.DCB_TEST_TIMEOUT_SCALE ?? 1)
const path = process.env.DCB_TEST_TIMEOUT_PATH
const setTimeout = http.ClientRequest.prototype.setTimeout
http.ClientRequest.prototype.setTimeout = function (ms, fn) {
  return setTimeout.call(this, this.path === path ? Math.max(1, Math.round(ms * scale)) : ms, fn)
}
const end = http.ClientRequest.prototype.end
http.ClientRequest.prototype.end = function (...args) {
  process.stderr.write(`trace: sent ${this.method} ${this.path}\n`)
  return end.apply(this, args)
}
