// The library's figures (dcb-sandbox in-process, built dist): createSandbox and reset medians, OTP
// flows/s through sandbox.fetch and through msw, memory per empty session. Run by bench/run.js.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { join } from 'node:path'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc')

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const msisdnOf = (i) => `6012${String(Math.floor(i / 100) % 100000).padStart(5, '0')}0${String(i % 100).padStart(2, '0')}`

function median(a) {
  const s = [...a].sort((x, y) => x - y)
  return s[Math.floor(s.length / 2)]
}
const round = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d

/** Full OTP flows (Init, read the OTP, Verify) one after another for `seconds`; answers flows/s. */
async function flows(sandbox, fetchFn, base, seconds) {
  let i = 0
  const one = async () => {
    const msisdn = msisdnOf(i++)
    const init = await (
      await fetchFn(`${base}/subscriptions/init`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ msisdn, service_code: 'GAMECLUB', country_code: 'my' }),
      })
    ).json()
    const { otp } = await sandbox.otp(msisdn)
    const v = await (
      await fetchFn(`${base}/subscriptions/verify`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ verif_request_id: init.payload.verif_request_id, otp }),
      })
    ).json()
    if (v.status !== 'SUCCESS') throw new Error(`flow failed: ${JSON.stringify(v)}`)
  }
  for (let k = 0; k < 500; k++) await one() // warm-up
  await sandbox.reset()
  i = 0
  const t0 = performance.now()
  let n = 0
  while (performance.now() - t0 < seconds * 1000) {
    for (let k = 0; k < 100; k++) await one()
    n += 100
    // A fresh state now and then, so the figure is of flows, not of a growing state.
    if (n % 20_000 === 0) await sandbox.reset()
  }
  return Math.round(n / ((performance.now() - t0) / 1000))
}

export async function libraryFigures(root, seconds, log) {
  const { createSandbox } = await import(join(root, 'dist', 'index.js'))
  const figures = {}

  const created = []
  await createSandbox() // the default world is read once per process
  for (let k = 0; k < 200; k++) {
    const t = performance.now()
    const s = await createSandbox({ clock: '2026-01-31T00:00:00' })
    created.push(performance.now() - t)
    await s.close()
  }
  figures.create_ms = round(median(created))
  log('createSandbox median', figures.create_ms, 'ms')

  const sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
  const resets = []
  for (let k = 0; k < 200; k++) {
    // A small state: a few subscriptions and messages.
    for (let j = 0; j < 3; j++) {
      const msisdn = msisdnOf(j)
      const init = await (
        await sandbox.fetch('http://localhost/subscriptions/init', {
          method: 'POST',
          headers: H,
          body: JSON.stringify({ msisdn, service_code: 'GAMECLUB', country_code: 'my' }),
        })
      ).json()
      const { otp } = await sandbox.otp(msisdn)
      await sandbox.fetch('http://localhost/subscriptions/verify', {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ verif_request_id: init.payload.verif_request_id, otp }),
      })
    }
    const t = performance.now()
    await sandbox.reset()
    resets.push(performance.now() - t)
  }
  figures.reset_ms = round(median(resets))
  log('reset median (3 subscriptions)', figures.reset_ms, 'ms')

  figures.fetch_flows_s = await flows(sandbox, (url, init) => sandbox.fetch(url, init), 'http://localhost', seconds)
  log('OTP flows/s via sandbox.fetch', figures.fetch_flows_s)

  // Memory per empty session: 1,000 sessions, each used once.
  const many = await createSandbox({ clock: '2026-01-31T00:00:00' })
  gc()
  const before = process.memoryUsage().heapUsed
  for (let k = 0; k < 1000; k++) await many.session(`s${k}`).now()
  gc()
  figures.session_kb = round((process.memoryUsage().heapUsed - before) / 1000 / 1024, 1)
  log('memory per empty session', figures.session_kb, 'KB')

  const { setupServer } = await import('msw/node')
  const { sandboxHandlers } = await import(join(root, 'dist', 'msw.js'))
  const mocked = await createSandbox({ clock: '2026-01-31T00:00:00' })
  const server = setupServer(...sandboxHandlers(mocked, { baseUrl: 'https://api.carrier.test' }))
  server.listen({ onUnhandledRequest: 'bypass' })
  try {
    figures.msw_flows_s = await flows(mocked, (url, init) => fetch(url, init), 'https://api.carrier.test', seconds)
  } finally {
    server.close()
  }
  log('OTP flows/s via msw', figures.msw_flows_s)
  return figures
}
