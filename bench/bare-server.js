// The baseline: bare node:http answering the same JSON as a Status call (bench/run.js compares).
import { createServer } from 'node:http'

const body = JSON.stringify({
  status: 'SUCCESS',
  message: '',
  status_code: 200,
  payload: {
    subscription_id: '3f2f7a52-4a53-4d0c-9a0e-3f5f1c1c9b11',
    status: 'ACTIVE',
    msisdn: '60123456001',
    service_code: 'STREAMPLUS',
    service_name: 'Stream Plus',
    subscribed_dt: '2026-11-22T13:10:44.125000',
    expiry_dt: '2026-12-22T13:10:44.125000',
    canceled_dt: null,
    content_link: 'https://content.sandbox.example/streamplus',
  },
})
const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (d) => chunks.push(d))
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString() || '{}')
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  })
})
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`))
