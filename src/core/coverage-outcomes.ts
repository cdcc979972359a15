/**
 * The coverage outcomes, derived from the engine's own tables: the codes each merchant operation
 * answers (`OPERATION_OUTCOMES`), the steps and their effects (`STEP_EFFECTS`), and the rules in
 * force. Nothing here lists a carrier code by hand: a code added to those tables is an outcome at once.
 * Each family of outcomes is one entry of `OUTCOME_FAMILIES`; another family (OTP delivery, faults)
 * plugs in as one more entry, with the ids it may count and how each is produced.
 */
import { OPERATION_OUTCOMES, type CarrierCode, type OutcomeCode } from './outcomes.js'
import type { Merchant, Rule, Step } from './world-schema.js'

export type MerchantOp = keyof typeof OPERATION_OUTCOMES

/** The id part an operation's answer code counts as (`SUCCESS` splits by flow or state; 405 is no answer of an operation). */
type AnswerPart<C> = C extends 'SUCCESS' | 'METHOD_NOT_ALLOWED'
  ? never
  : C extends 'BAD_REQUEST' | 'PAYLOAD_TOO_LARGE'
    ? 'BAD_REQUEST'
    : C extends 'UNAUTHORIZED'
      ? 'UNAUTHORIZED_401'
      : C extends 'IP_NOT_ALLOWED'
        ? 'UNAUTHORIZED_403'
        : C extends 'SERVER_ERROR'
          ? 'ERROR_500'
          : C

/** What a SUCCESS of each operation counts as: the flow an Init started, the state a Status answered. */
export const SUCCESS_PARTS = { init: ['otp', 'psms', 'redirect'], verify: ['SUCCESS'], status: ['ACTIVE', 'CANCELED', 'EXPIRED'] } as const

type OpId<O extends MerchantOp> = `${O}.${(typeof SUCCESS_PARTS)[O][number] | AnswerPart<(typeof OPERATION_OUTCOMES)[O][number]>}`

/** The lifecycle outcomes, per step the engine runs for the subscriber or the clock (`STEP_EFFECTS`' steps). */
export const STEP_OUTCOMES = {
  mo: ['mo.subscribed', 'mo.charge_failed', 'mo.stop'],
  consent: ['consent.approved', 'consent.denied', 'consent.charge_failed'],
  renewal: ['renewal.succeeded', 'renewal.failed'],
  retry: ['retry.succeeded', 'retry.failed'],
  activate: ['carrier.canceled'],
} as const satisfies Partial<Record<Step, readonly string[]>>

/** Every outcome id the engine may count (the world decides which are listed). */
export type CoverageOutcome =
  | OpId<'init'>
  | OpId<'verify'>
  | OpId<'status'>
  | (typeof STEP_OUTCOMES)[keyof typeof STEP_OUTCOMES][number]
  | 'client.gone'
  | (typeof CHANNEL_OUTCOMES)[number]
  | (typeof WIRE_OUTCOMES)[number]

/** Outcomes that count per carrier code too (`codes`). */
export const CODED_OUTCOMES: ReadonlySet<string> = new Set(['renewal.failed', 'retry.failed', 'mo.charge_failed', 'consent.charge_failed'])

/** The id an operation's answer counts as (undefined: none, as a 405). `part` is the SUCCESS part. */
export function answerId(op: MerchantOp, code: OutcomeCode, part?: string): string | undefined {
  if (code === 'SUCCESS') return part === undefined ? undefined : `${op}.${part}`
  if (code === 'METHOD_NOT_ALLOWED') return undefined
  const p =
    code === 'BAD_REQUEST' || code === 'PAYLOAD_TOO_LARGE'
      ? 'BAD_REQUEST'
      : code === 'UNAUTHORIZED'
        ? 'UNAUTHORIZED_401'
        : code === 'IP_NOT_ALLOWED'
          ? 'UNAUTHORIZED_403'
          : code === 'SERVER_ERROR'
            ? 'ERROR_500'
            : code
  return `${op}.${p}`
}

/** What the derivation reads of the world in force. */
export interface OutcomeWorld {
  merchant: Merchant
  /** The flows the merchant's services can start, each with one way to reach it (a service, a carrier and its number prefix). */
  flows: ReadonlyMap<'otp' | 'psms' | 'redirect', { service: string; carrier: string; prefix: string }>
  /** The rules in force (runtime and world), in precedence order. */
  rules: readonly Rule[]
  /** Whether some country of the world has landline prefixes. */
  landlines: boolean
}

/** An outcome the world in force can produce, and how. */
export interface OutcomeDef {
  id: string
  how: string
}

/** A family of outcomes: the ids it may count, and those the world in force can produce (in order). */
export interface OutcomeFamily {
  ids: readonly string[]
  list(w: OutcomeWorld): OutcomeDef[]
}

/** "a number ending 201": who a rule's match picks, in words. */
export function whoMatches(rule: Rule): string {
  const m = rule.match ?? {}
  const who = m.msisdn
    ? `the number ${m.msisdn}`
    : m.ending
      ? `a number ending ${m.ending}`
      : m.ending_range
        ? `a number ending ${m.ending_range[0]} to ${m.ending_range[1]}`
        : m.prefix
          ? `a number starting ${m.prefix}`
          : m.regex
            ? `a number matching ${m.regex}`
            : 'any number'
  const where = [m.service && `of service ${m.service}`, m.country && `in ${m.country}`, m.carrier && `on carrier ${m.carrier}`].filter(Boolean).join(' ')
  return where ? `${who} ${where}` : who
}

const steps = (r: Rule): Step[] => (Array.isArray(r.step) ? r.step : [r.step])

/** The first rule in force at one of `at` whose effect gives `code` (`error`) or HTTP 500 (`http`). */
function ruleFor(w: OutcomeWorld, at: Step[], effect: 'error' | 'http' | 'cancel_after', code?: string): Rule | undefined {
  return w.rules.find((r) => steps(r).some((s) => at.includes(s)) && (effect === 'error' ? r.effect?.error === code : r.effect?.[effect] !== undefined))
}

const ruleText = (r: Rule) => `(rule ${r.id})`
const addRule = (step: Step, effect: string) => `add a rule { "step": "${step}", "effect": ${effect} }`

const flows = (w: OutcomeWorld) => w.flows
const VERB: Record<MerchantOp, string> = { init: 'Init', verify: 'Verify', status: 'Status' }

/** The merchant operations' answers: SUCCESS per flow or state, the protocol answers, the carrier codes, 500. */
function operation(op: MerchantOp): OutcomeFamily {
  const codes = OPERATION_OUTCOMES[op] as readonly OutcomeCode[]
  const ids = [...new Set([...SUCCESS_PARTS[op].map((p) => `${op}.${p}`), ...codes.map((c) => answerId(op, c)).filter((x): x is string => !!x)])]
  return {
    ids,
    list(w) {
      const out: OutcomeDef[] = []
      const add = (id: string | undefined, how: string | undefined) => {
        if (id && how && !out.some((o) => o.id === id)) out.push({ id, how })
      }
      const verb = VERB[op]
      // A refused key answers before anything else: an inactive merchant's calls are all 401.
      if (!w.merchant.active) return [{ id: `${op}.UNAUTHORIZED_401`, how: `${verb} with the key of ${w.merchant.id} (an inactive merchant)` }]
      // A merchant whose allowlist has no loopback address is refused 403 to every local test.
      const local = w.merchant.allowlist.some((c) => c.startsWith('127.') || c === '::1' || c === '0.0.0.0/0' || c === '::/0')
      if (!local) return [{ id: `${op}.UNAUTHORIZED_403`, how: `${verb} with the key of ${w.merchant.id} from an address outside its allowlist` }]
      if (!w.flows.size) return out
      if (op === 'init')
        for (const f of SUCCESS_PARTS.init) {
          const via = w.flows.get(f)
          if (via) add(`init.${f}`, `Init on service ${via.service} for a number of carrier ${via.carrier} (prefix ${via.prefix}) ending 000`)
        }
      if (op === 'verify' && flows(w).has('otp')) add('verify.SUCCESS', 'Verify with the OTP sent to a number ending 000')
      if (op === 'status') {
        add('status.ACTIVE', 'Status of a subscription just activated (a number ending 000)')
        const cancel = ruleFor(w, ['activate'], 'cancel_after')
        add(
          'status.CANCELED',
          `Status after a STOP MO or a carrier cancellation${cancel ? ` (${whoMatches(cancel)}, then move the clock ${cancel.effect.cancel_after})` : ''}`,
        )
        const lapse = ruleFor(w, ['renewal'], 'error', 'INSUFFICIENT_FUNDS') ?? w.rules.find((r) => steps(r).includes('renewal') && r.effect?.error)
        add('status.EXPIRED', `Status after a failed renewal${lapse ? ` (${whoMatches(lapse)}, then move the clock past its period)` : ''}`)
      }
      for (const code of codes) {
        if (code === 'SUCCESS') continue
        add(answerId(op, code), how(w, op, code))
      }
      return out
    },
  }
}

/** How an operation answers a code in the world in force; undefined: it cannot. */
function how(w: OutcomeWorld, op: MerchantOp, code: OutcomeCode): string | undefined {
  const verb = VERB[op]
  switch (code) {
    case 'BAD_REQUEST':
      return `${verb} with a body missing a field the spec requires`
    case 'UNAUTHORIZED':
    case 'IP_NOT_ALLOWED':
    case 'PAYLOAD_TOO_LARGE':
    case 'METHOD_NOT_ALLOWED':
      return undefined // refused keys are their own merchant's (above); 413 counts as BAD_REQUEST
    case 'MERCHANT_SERVICE_NOT_CONFIGURED':
      return op === 'init' ? 'Init for a service code or a country the merchant has no integration for' : undefined
    case 'SUBSCRIPTION_NOT_FOUND':
      return 'Status with a subscription_id the merchant was never given'
    case 'SERVER_ERROR': {
      const r = ruleFor(w, op === 'verify' ? ['verify', 'charge', 'api'] : [op, 'api'], 'http')
      return r ? `${verb} ${whoMatches(r)} ${ruleText(r)}` : `${verb} after you ${addRule(op, '{ "http": 500 }')}`
    }
  }
  if (op === 'status') return undefined
  const carrierCode = code as CarrierCode
  const at: Step[] = op === 'init' ? ['init'] : ['verify', 'charge']
  const r = ruleFor(w, at, 'error', carrierCode)
  const whose = op === 'verify' ? 'Verify (after Init) for' : 'Init'
  if (r) return `${whose} ${whoMatches(r)} ${ruleText(r)}`
  // What the engine answers by itself, without a rule.
  if (op === 'init' && code === 'INVALID_MSISDN') return 'Init a number of the wrong length or without the calling code'
  if (op === 'init' && code === 'INVALID_MSISDN_LANDLINE' && w.landlines) return "Init a landline number (a country's landline prefix)"
  if (code === 'ALREADY_SUBSCRIBED' && op === 'init') return 'Init again for a number that holds an ACTIVE subscription to the service'
  if (op === 'verify' && flows(w).has('otp')) {
    if (code === 'INVALID_PIN') return 'Verify with a wrong OTP'
    if (code === 'MAX_PIN_RETRIES') return 'Verify with a wrong OTP until the attempts run out'
    if (code === 'PIN_EXPIRED') return 'Verify after the OTP expired (move the clock past its lifetime) or with one used already'
  }
  return undefined
}

/** A lifecycle step's outcomes, for the flows that have them. */
const lifecycle: OutcomeFamily = {
  ids: [...Object.values(STEP_OUTCOMES).flat(), 'client.gone'],
  list(w) {
    if (!w.merchant.active || !w.flows.size) return []
    const f = flows(w)
    const out: OutcomeDef[] = []
    const failing = (at: Step[], what: string, fallback: Step) => {
      const r = w.rules.find((x) => steps(x).some((s) => at.includes(s)) && x.effect?.error)
      return r ? `${what} ${whoMatches(r)} ${ruleText(r)}` : `${what} a number after you ${addRule(fallback, '{ "error": "INSUFFICIENT_FUNDS" }')}`
    }
    if (f.has('psms')) {
      out.push({ id: 'mo.subscribed', how: 'Send the keyword MO for a PSMS service from a number ending 000' })
      out.push({ id: 'mo.charge_failed', how: failing(['mo', 'charge'], 'Send the keyword MO from', 'mo') })
      out.push({ id: 'mo.stop', how: 'Send STOP from a number with an ACTIVE subscription' })
    }
    if (f.has('redirect')) {
      out.push({ id: 'consent.approved', how: 'Approve the consent page of a redirect Init' })
      out.push({ id: 'consent.denied', how: 'Deny the consent page of a redirect Init' })
      out.push({ id: 'consent.charge_failed', how: failing(['consent', 'charge'], 'Approve the consent page for', 'consent') })
    }
    const renew = (r: Rule | undefined, fallback: string, what: string) =>
      r ? `Subscribe ${whoMatches(r)} ${ruleText(r)}, then move the clock ${what}` : `Subscribe a number after you ${fallback}, then move the clock ${what}`
    const failsAt = (step: Step, not?: Step) => w.rules.find((r) => steps(r).includes(step) && r.effect?.error && !(not && steps(r).includes(not)))
    const failRule = (step: Step) => addRule(step, '{ "error": "INSUFFICIENT_FUNDS" }')
    out.push({ id: 'renewal.succeeded', how: 'Subscribe a number ending 000, then move the clock past its period' })
    out.push({ id: 'renewal.failed', how: renew(failsAt('renewal'), failRule('renewal'), 'past its period') })
    out.push({
      id: 'retry.succeeded',
      how: renew(failsAt('renewal', 'retry'), `${failRule('renewal')} with "nth": 1`, "past its period and the carrier's retry"),
    })
    out.push({ id: 'retry.failed', how: renew(failsAt('retry'), failRule('retry'), "past its period and the carrier's retry") })
    const cancel = ruleFor(w, ['activate'], 'cancel_after')
    out.push({
      id: 'carrier.canceled',
      how: cancel
        ? `Subscribe ${whoMatches(cancel)} ${ruleText(cancel)}, then move the clock ${cancel.effect.cancel_after}`
        : `Subscribe a number after you ${addRule('activate', '{ "cancel_after": "P1D" }')}`,
    })
    out.push({ id: 'client.gone', how: 'Close the connection before the answer (a number ending 5NN holds it NN x 100 ms)' })
    return out
  },
}

/** The OTP SMS channel's outcomes: an Init whose SMS a rule withheld (`deliver: false`) or delayed (`deliver_after`). */
export const CHANNEL_OUTCOMES = ['otp.undelivered', 'otp.late'] as const
const channel: OutcomeFamily = {
  ids: CHANNEL_OUTCOMES,
  list(w) {
    if (!w.merchant.active || !w.flows.has('otp')) return []
    const byEffect = (effect: 'deliver' | 'deliver_after', fallback: string) => {
      const r = w.rules.find((x) => steps(x).includes('otp') && x.effect?.[effect] !== undefined)
      return r ? `Init ${whoMatches(r)} ${ruleText(r)}` : `Init after you ${addRule('otp', fallback)}`
    }
    return [
      { id: 'otp.undelivered', how: byEffect('deliver', '{ "deliver": false }') },
      { id: 'otp.late', how: byEffect('deliver_after', '{ "deliver_after": "PT2M" }') },
    ]
  },
}

/** What the connection did instead of an answer: a fault (`op.fault`) or a gateway's 429/502/503/504 (`op.gateway`). */
export const WIRE_OUTCOMES = ['init.fault', 'init.gateway', 'verify.fault', 'verify.gateway', 'status.fault', 'status.gateway'] as const
const wire: OutcomeFamily = {
  ids: WIRE_OUTCOMES,
  list(w) {
    if (!w.merchant.active || !w.flows.size) return []
    const out: OutcomeDef[] = []
    for (const op of ['init', 'verify', 'status'] as const) {
      const at: Step[] = [op, 'api']
      const fault = w.rules.find((r) => steps(r).some((s) => at.includes(s)) && r.effect?.fault !== undefined)
      const gateway = w.rules.find((r) => steps(r).some((s) => at.includes(s)) && [429, 502, 503, 504].includes(r.effect?.http as number))
      const verb = op === 'verify' ? 'Verify (after Init) for' : `${VERB[op]}`
      out.push({
        id: `${op}.fault`,
        how: fault ? `${verb} ${whoMatches(fault)} ${ruleText(fault)}` : `${VERB[op]} after you ${addRule(op, '{ "fault": "reset" }')}`,
      })
      out.push({
        id: `${op}.gateway`,
        how: gateway ? `${verb} ${whoMatches(gateway)} ${ruleText(gateway)}` : `${VERB[op]} after you ${addRule(op, '{ "http": 503 }')}`,
      })
    }
    return out
  },
}

/** Every family, in the order answers list them. Another family (a new step or effect's outcomes) is one more entry here. */
export const OUTCOME_FAMILIES: OutcomeFamily[] = [operation('init'), operation('verify'), operation('status'), lifecycle, channel, wire]

/** Every id any family may count (a count under any other id is ignored). */
export function countableIds(): Set<string> {
  return new Set(OUTCOME_FAMILIES.flatMap((f) => f.ids))
}

/** The outcomes the world in force can produce for one merchant, in order, each with how. */
export function outcomesFor(w: OutcomeWorld): OutcomeDef[] {
  return OUTCOME_FAMILIES.flatMap((f) => f.list(w))
}
