// Heap bytes per retained record, in-process: node --expose-gc bench/heap-per-record.js ROOT [N].
// Builds an Engine from ROOT's sources (any checkout: the base too), adds N records of one kind to a
// fresh one, forces GC and divides the heap's growth by N. Changes are serialized as the file
// store's write-ahead log does (as `dcb serve` keeps its state). Prints one JSON line.
import { createJiti } from 'jiti'
import { join } from 'node:path'

const root = process.argv[2]
const N = Number(process.argv[3] ?? 20_000)
const CHURN_INITS = 150_000
if (!root || typeof gc !== 'function') throw new Error('usage: node --expose-gc bench/heap-per-record.js ROOT [N]')
const jiti = createJiti(import.meta.url)
const { Engine } = await jiti.import(join(root, 'src', 'core', 'engine.ts'))
const { loadWorld } = await jiti.import(join(root, 'src', 'world', 'load.ts'))
const world = loadWorld().world

/** Distinct numbers ending 000-099 (no magic ending), after a prefix of 5 digits: 12 digits. */
const number = (prefix, i) => `${prefix}${String(Math.floor(i / 100)).padStart(4, '0')}0${String(i % 100).padStart(2, '0')}`

function heap() {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** Heap bytes per record: `fill(engine, first, count)` adds `count` records to a fresh engine (after a warm-up of 500). */
async function perRecord(fill) {
  const engine = new Engine({
    world,
    clockStart: { at: Date.parse('2026-01-31T09:00:00Z'), frozen: true },
    persist: async (changes) => void JSON.stringify(changes),
  })
  await fill(engine, N, 500)
  const before = heap()
  await fill(engine, 0, N)
  return Math.round((heap() - before) / N)
}

const initsOf = (prefix, country) => async (engine, first, count) => {
  const demo = engine.authenticate('sandbox-demo-key')
  for (let i = first; i < first + count; i++)
    await engine.init(demo, { msisdn: number(prefix, i), service_code: 'STREAMPLUS', country_code: country }, { baseUrl: 'http://127.0.0.1' })
}

// A redirect Init stores a verification request alone; an OTP Init one and its SMS; a seed subscriptions alone.
const verification = await perRecord(initsOf('35988', 'bg'))
const otpInit = await perRecord(initsOf('60120', 'my'))
const subscription = await perRecord((engine, first, count) => engine.seed(count, { firstMsisdn: number('60120', first) }))
// At the default caps under churn (as the RSS goal's load: half to 200 handsets, half to new numbers,
// past the 50,000-record caps): heap per retained Init (its verification request and SMS).
const churn = await (async () => {
  const engine = new Engine({
    world,
    clockStart: { at: Date.parse('2026-01-31T09:00:00Z'), frozen: true },
    persist: async (changes) => void JSON.stringify(changes),
  })
  const demo = engine.authenticate('sandbox-demo-key')
  const before = heap()
  for (let i = 0; i < CHURN_INITS; i++)
    await engine.init(
      demo,
      { msisdn: number('60121', i % 2 ? i % 200 : 1000 + i), service_code: 'STREAMPLUS', country_code: 'my' },
      { baseUrl: 'http://127.0.0.1' },
    )
  return Math.round((heap() - before) / engine.sizes().verifications)
})()
console.log(
  JSON.stringify({
    records: N,
    verification_bytes: verification,
    sms_bytes: otpInit - verification,
    otp_init_bytes: otpInit,
    subscription_bytes: subscription,
    churn_inits: CHURN_INITS,
    at_caps_init_bytes: churn,
  }),
)
