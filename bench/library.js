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

/** Full OTP flows (Init, read the OTP, Verify) one after another for `seconds`; answers flows/s and CPU µs per flow. */
async function flows(sandbox, fetchFn, base, seconds) {
  await sandbox?.reset()
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
    const { otp } = sandbox ? await sandbox.otp(msisdn) : { otp: '0000' }
    const v = await (
      await fetchFn(`${base}/subscriptions/verify`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ verif_request_id: init.payload.verif_request_id, otp }),
      })
    ).json()
    if (v.status !== 'SUCCESS') throw new Error(`flow failed: ${JSON.stringify(v)}`)
  }
  for (let k = 0; k < 300; k++) await one() // warm-up
  await sandbox?.reset()
  i = 0
  const t0 = performance.now()
  const cpu0 = process.cpuUsage()
  let n = 0
  while (performance.now() - t0 < seconds * 1000) {
    for (let k = 0; k < 100; k++) await one()
    n += 100
    // A fresh state now and then, so the figure is of flows, not of a growing state.
    if (n % 20_000 === 0) await sandbox?.reset()
  }
  const cpu = process.cpuUsage(cpu0)
  return { flows_s: Math.round(n / ((performance.now() - t0) / 1000)), cpu_us: Math.round((cpu.user + cpu.system) / n) }
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

  // Memory per empty session: 1,000 sessions, each used once.
  const many = await createSandbox({ clock: '2026-01-31T00:00:00' })
  gc()
  const before = process.memoryUsage().heapUsed
  for (let k = 0; k < 1000; k++) await many.session(`s${k}`).now()
  gc()
  figures.session_kb = round((process.memoryUsage().heapUsed - before) / 1000 / 1024, 1)
  log('memory per empty session', figures.session_kb, 'KB')

  // OTP flows through sandbox.fetch, through msw, and msw's own ceiling (the same two requests per
  // flow answered by a handler returning a constant Response): alternating rounds, medians, with the
  // process CPU per flow beside each (the machine is shared: throughput alone is noisy).
  const { setupServer } = await import('msw/node')
  const { http } = await import('msw')
  const { sandboxHandlers } = await import(join(root, 'dist', 'msw.js'))
  const base = 'https://api.carrier.test'
  const constant = JSON.stringify({ status: 'SUCCESS', message: '', status_code: 200, payload: { verif_request_id: 'v' } })
  const runs = { fetch: [], msw: [], ceiling: [] }
  const ROUNDS = 3
  const each = Math.max(2, Math.round(seconds / 2))
  for (let round = 0; round < ROUNDS; round++) {
    runs.fetch.push(await flows(sandbox, (url, init) => sandbox.fetch(url, init), 'http://localhost', each))
    const mocked = await createSandbox({ clock: '2026-01-31T00:00:00' })
    let server = setupServer(...sandboxHandlers(mocked, { baseUrl: base }))
    server.listen({ onUnhandledRequest: 'bypass' })
    try {
      runs.msw.push(await flows(mocked, (url, init) => fetch(url, init), base, each))
    } finally {
      server.close()
    }
    server = setupServer(http.all(`${base}/*`, () => new Response(constant, { headers: { 'content-type': 'application/json; charset=utf-8' } })))
    server.listen({ onUnhandledRequest: 'bypass' })
    try {
      runs.ceiling.push(await flows(null, (url, init) => fetch(url, init), base, each))
    } finally {
      server.close()
    }
  }
  const med = (rs, k) => median(rs.map((r) => r[k]))
  figures.fetch_flows_s = med(runs.fetch, 'flows_s')
  figures.fetch_cpu_us = med(runs.fetch, 'cpu_us')
  figures.msw_flows_s = med(runs.msw, 'flows_s')
  figures.msw_cpu_us = med(runs.msw, 'cpu_us')
  figures.msw_ceiling_flows_s = med(runs.ceiling, 'flows_s')
  figures.msw_ceiling_cpu_us = med(runs.ceiling, 'cpu_us')
  log('OTP flows/s via sandbox.fetch', figures.fetch_flows_s, `(${figures.fetch_cpu_us} µs CPU per flow)`)
  log('OTP flows/s via msw', figures.msw_flows_s, `(${figures.msw_cpu_us} µs CPU per flow)`)
  log('msw ceiling (constant Response, 2 requests per flow)', figures.msw_ceiling_flows_s, `(${figures.msw_ceiling_cpu_us} µs CPU per flow)`)
  return figures
}
