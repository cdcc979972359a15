// The floor of an OTP flow's server CPU: bare node:http answering the flow's three calls (Init, the OTP
// read, Verify) with canned envelopes and, with --durable, each Init and Verify's line of about the
// size dcb writes to its write-ahead log, made durable the way dcb does (O_DSYNC, zeroed ahead, the lines of one turn of the
// event loop written together at its end, on the main thread). No engine, no validation, no routing:
// what is left is node:http and the disk (bench/run.js compares).
import { createServer } from 'node:http'
import { constants, openSync, writeSync } from 'node:fs'

const durable = process.argv[2] === '--durable'
const journal = process.argv[3]
const fd = durable ? openSync(journal, constants.O_WRONLY | constants.O_CREAT | constants.O_DSYNC) : -1
let good = 0
let zeroedTo = 0
let pending = []
const line = 'x'.repeat(900) + '\n' // an Init's or a Verify's write-ahead log line is 0.8-1.1 KB

function flush() {
  const waiters = pending
  pending = []
  const data = Buffer.from(line.repeat(waiters.length))
  if (good + data.length > zeroedTo) {
    writeSync(fd, Buffer.alloc(2 ** 20), 0, 2 ** 20, zeroedTo)
    zeroedTo += 2 ** 20
  }
  writeSync(fd, data, 0, data.length, good)
  good += data.length
  for (const w of waiters) w()
}
const durably = (answer) => {
  if (!durable) return answer()
  if (pending.push(answer) === 1) setImmediate(flush)
}

const envelope = (payload) => JSON.stringify({ status: 'SUCCESS', message: '', status_code: 200, payload })
let n = 0
const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (d) => chunks.push(d))
  req.on('end', () => {
    const send = (body) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
      res.end(body)
    }
    if (req.method === 'GET') return send(JSON.stringify({ otp: '1234', msisdn: '60123456001' }))
    JSON.parse(Buffer.concat(chunks).toString() || '{}')
    const id = `3f2f7a52-4a53-4d0c-9a0e-${String(n++).padStart(12, '0')}`
    if (req.url === '/subscriptions/init')
      durably(() => send(envelope({ verif_request_id: id, short_code: null, keyword: null, carrier_code: 'sbx-my-otp', redirect_url: null })))
    else durably(() => send(envelope({ subscription_id: id })))
  })
})
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`))
