/**
 * A rule that could never decide anything is refused, naming the rule's field or step and why: a step
 * that comes after Init's carrier check on carriers that are not provisioned (or do not bill the
 * service), a service sold nowhere (or not in the country), a regex no MSISDN has a match of. Over
 * loopback (`POST /_sandbox/rules`), in fixture files (`dcb fixtures validate`, `dcb serve`) and by
 * `dcb rules add` through the binary; and the rules of those carriers and services that can decide
 * (`api` before the carrier check, `status` of a seeded subscription) are taken and do decide.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEMO, startClient, tempFolderPerTest } from './helpers.js'
import { dcb, serve } from './cli/run.js'

const tmp = tempFolderPerTest()
const write = tmp.json

const NOT_BILLED = 'happens only on carriers that bill the service (Init answers CARRIER_NOT_SUPPORTED on the others)'
const LEGACY_OTP = `step: step "otp" ${NOT_BILLED} and carrier sbx-my-legacy is not provisioned: the rule would decide nothing`
const NOT_CONFIGURED = 'Init answers MERCHANT_SERVICE_NOT_CONFIGURED'
const NO_DIGITS = 'matches no string of digits, and MSISDNs are digits only (calling code first, no + or 00): the rule would match no MSISDN'

/** ORPHAN is sold nowhere (a warning, not an error); PSMSONLY in my through sbx-my-psms alone. */
const SERVICES = {
  services: [
    { code: 'ORPHAN', merchant: 'demo', name: 'Orphan', period: 'P1M' },
    { code: 'PSMSONLY', merchant: 'demo', name: 'PSMS Only', period: 'P1M', keyword: 'PONLY', integrations: [{ country: 'my', carriers: ['sbx-my-psms'] }] },
  ],
}

describe('POST /_sandbox/rules: a rule that could never decide is a 400 naming why', () => {
  it('a step after the carrier check on a carrier not provisioned; api (decided before it), status and renewals are taken', async () => {
    const c = await startClient()
    try {
      for (const [rule, message] of [
        [{ match: { carrier: 'sbx-my-legacy' }, step: 'otp', effect: { otp: '4242' } }, LEGACY_OTP],
        [
          { match: { msisdn: '60193456001' }, step: 'verify', effect: { delay_ms: 100 } },
          `step: step "verify" ${NOT_BILLED} and no carrier with number 60193456001 does (carrier sbx-my-legacy is not provisioned): the rule would decide nothing`,
        ],
        [
          { match: { prefix: '6019' }, step: ['api', 'init'], effect: { http: 500 } },
          `step.1: step "init" ${NOT_BILLED} and no carrier with numbers starting with 6019 does (carrier sbx-my-legacy is not provisioned): the rule would never decide it (leave it out of "step")`,
        ],
        [
          { match: { carrier: 'sbx-my-legacy', service: 'STREAMPLUS' }, step: 'charge', effect: { error: 'BARRED' } },
          `step: step "charge" ${NOT_BILLED} and carrier sbx-my-legacy is not provisioned: the rule would decide nothing`,
        ],
        [
          { match: { carrier: 'sbx-my-legacy' }, step: 'activate', effect: { cancel_after: 'P1D' } },
          `step: step "activate" ${NOT_BILLED} and carrier sbx-my-legacy is not provisioned: the rule would decide nothing`,
        ],
      ] as const) {
        const r = await c.control('/rules', rule)
        expect(r, JSON.stringify(rule)).toEqual({ status: 400, body: { error: 'BAD_RULE', message } })
      }
      expect((await c.control('/rules')).body.rules.filter((r: any) => r.source === 'runtime')).toEqual([])

      const init = () => c.api('/subscriptions/init', { msisdn: '60193456001', service_code: 'STREAMPLUS', country_code: 'my' })
      expect((await init()).body.message).toBe('CARRIER_NOT_SUPPORTED')
      // `api` is decided before the carrier check: its HTTP 500 comes first.
      expect((await c.control('/rules', { id: 'legacy-down', match: { carrier: 'sbx-my-legacy' }, step: 'api', effect: { http: 500 } })).status).toBe(200)
      expect((await init()).status).toBe(500)
      const later = { id: 'legacy-later', match: { carrier: 'sbx-my-legacy' }, step: ['status', 'renewal', 'retry'], effect: {} }
      expect((await c.control('/rules', later)).status).toBe(200)
    } finally {
      await c.close()
    }
  })

  it('a service sold nowhere, not in the country, or not through the carrier; its renewals and api are taken', async () => {
    const warnings: string[] = []
    const c = await startClient({ fixtures: [write('services.json', SERVICES)], onWarning: (w) => warnings.push(w) })
    try {
      expect(warnings.join('\n')).toContain('service "ORPHAN" has no integration')
      for (const [rule, message] of [
        [
          { match: { service: 'ORPHAN' }, step: 'init', effect: { error: 'BARRED' } },
          `match.service: service ORPHAN has no integration (it is sold in no country): ${NOT_CONFIGURED}, so the rule would decide nothing`,
        ],
        [
          { match: { service: 'ORPHAN' }, step: ['renewal', 'status'], effect: {} },
          `step.1: service ORPHAN has no integration (it is sold in no country): ${NOT_CONFIGURED}, so step "status" never happens: the rule would never decide it (leave it out of "step")`,
        ],
        [
          { match: { service: 'NEWSDAILY', country: 'gb' }, step: 'api', effect: { delay_ms: 100 } },
          `match.country: service NEWSDAILY is not sold in "gb" (only in my): ${NOT_CONFIGURED}, so the rule would decide nothing`,
        ],
        [
          { match: { service: 'PSMSONLY', carrier: 'sbx-my-otp' }, step: 'charge', effect: { error: 'BARRED' } },
          `step: step "charge" ${NOT_BILLED} and service PSMSONLY is not billed through carrier sbx-my-otp: the rule would decide nothing`,
        ],
        [
          { match: { service: 'PSMSONLY', prefix: '6012' }, step: 'init', effect: { error: 'BARRED' } },
          `step: step "init" ${NOT_BILLED} and no carrier with numbers starting with 6012 does (service PSMSONLY is not billed through carrier sbx-my-otp): the rule would decide nothing`,
        ],
      ] as const) {
        const r = await c.control('/rules', rule)
        expect(r, JSON.stringify(rule)).toEqual({ status: 400, body: { error: 'BAD_RULE', message } })
      }
      // A data file may keep subscriptions of a service from another world: they renew.
      expect((await c.control('/rules', { match: { service: 'ORPHAN' }, step: ['renewal', 'retry'], effect: { error: 'BARRED' } })).status).toBe(200)
      const init = () => c.api('/subscriptions/init', { msisdn: '601234000017', service_code: 'PSMSONLY', country_code: 'my' })
      expect((await init()).body.message).toBe('CARRIER_NOT_SUPPORTED')
      expect((await c.control('/rules', { match: { service: 'PSMSONLY', carrier: 'sbx-my-otp' }, step: 'api', effect: { http: 500 } })).status).toBe(200)
      expect((await init()).status).toBe(500)
    } finally {
      await c.close()
    }
  })

  it('a regex no string of digits has a match of; one that some number matches is taken', async () => {
    const c = await startClient()
    try {
      for (const regex of ['^\\+60', '^abc', '\\D{3}', '(?i)^sbx', '^$', '6012\\b\\d']) {
        const r = await c.control('/rules', { match: { regex }, step: 'init', effect: { error: 'BARRED' } })
        expect(r, regex).toEqual({ status: 400, body: { error: 'BAD_RULE', message: `match.regex: ${JSON.stringify(regex)} ${NO_DIGITS}` } })
      }
      for (const regex of ['^6012\\d+$', '(?:\\+|^)6012', '\\B0', '[a-z0-9]7$', '(?m)^60.*1$'])
        expect((await c.control('/rules', { match: { regex }, step: 'init', effect: { error: 'BARRED' } })).status, regex).toBe(200)
      // Taken, and deciding.
      const init = await c.api('/subscriptions/init', { msisdn: '601234000017', service_code: 'STREAMPLUS', country_code: 'my' })
      expect(init.body.message).toBe('BARRED')
    } finally {
      await c.close()
    }
  })
})

describe('fixture files and dcb rules add, through the binary', () => {
  it('dcb fixtures validate and dcb serve refuse each dead rule of a file, naming file, path and why', async () => {
    const f = write('dead.json', {
      ...SERVICES,
      rules: [
        { id: 'legacy-otp', match: { carrier: 'sbx-my-legacy' }, step: 'otp', effect: { otp: '4242' } },
        { id: 'orphan-init', match: { service: 'ORPHAN' }, step: 'init', effect: { error: 'BARRED' } },
        { id: 'plus', match: { regex: '^\\+60' }, step: 'init', effect: { error: 'BARRED' } },
      ],
    })
    const v = await dcb(['fixtures', 'validate', f])
    expect(v.code).toBe(1)
    expect(v.stderr).toContain(`${f}: $.rules[0].step: ${LEGACY_OTP.slice('step: '.length)}`)
    expect(v.stderr).toContain(
      `${f}: $.rules[1].match.service: service ORPHAN has no integration (it is sold in no country): ${NOT_CONFIGURED}, so the rule would decide nothing`,
    )
    expect(v.stderr).toContain(`${f}: $.rules[2].match.regex: "^\\\\+60" ${NO_DIGITS}`)
    const s = await dcb(['serve', '--in-memory', '--port', '0', '--fixtures', f])
    expect(s.code).toBe(1)
    expect(s.stderr).toContain(`dcb: fixture error: ${f}: $.rules[0].step: step "otp" ${NOT_BILLED} and carrier sbx-my-legacy is not provisioned`)

    // The same carriers and services with steps that do happen load.
    const ok = write('alive.json', {
      ...SERVICES,
      rules: [
        { id: 'legacy-slow', match: { carrier: 'sbx-my-legacy' }, step: 'api', effect: { delay_ms: 100 } },
        { id: 'orphan-renewal', match: { service: 'ORPHAN' }, step: 'renewal', effect: { error: 'BARRED' } },
        { id: 'digits', match: { regex: '^6019\\d+$' }, step: 'api', effect: { delay_ms: 100 } },
      ],
    })
    const good = await dcb(['fixtures', 'validate', ok])
    expect(good.stderr).not.toContain('$.rules')
    expect(good.code).toBe(0)
  })

  it('dcb rules add refuses a dead rule on one line and adds none of its list; a status rule on a seeded subscription of that carrier decides', async () => {
    // `dcb seed` puts subscriptions on the carrier of the numbers it is given, provisioned or not.
    const data = join(tmp.dir, 'seeded.json')
    expect((await dcb(['seed', '--subscriptions', '1', '--data', data, '--first-msisdn', '601900000000'])).code).toBe(0)
    const s = await serve(['--data', data])
    try {
      const base = ['--base-url', s.url]
      const list = write('add.json', [
        { id: 'legacy-slow', match: { carrier: 'sbx-my-legacy' }, step: 'api', effect: { delay_ms: 100 } },
        { id: 'legacy-otp', match: { carrier: 'sbx-my-legacy' }, step: 'otp', effect: { otp: '4242' } },
      ])
      const r = await dcb(['rules', 'add', list, ...base])
      expect(r.code).toBe(1)
      expect(r.stderr.trim().split('\n')).toEqual([`dcb: BAD_RULE: rule 2 (legacy-otp): ${LEGACY_OTP} (no rule was added: 1 of 2 have problems)`])
      const regex = await dcb(['rules', 'add', '{"step": "init", "match": {"regex": "^\\\\+60"}, "effect": {"error": "BARRED"}}', ...base])
      expect(regex.code).toBe(1)
      expect(regex.stderr.trim().split('\n')).toEqual([`dcb: BAD_RULE: match.regex: "^\\\\+60" ${NO_DIGITS}`])
      const listed = await dcb(['rules', 'list', '--json', ...base])
      expect(JSON.parse(listed.stdout).runtime).toEqual([])

      const status = { id: 'legacy-status', match: { carrier: 'sbx-my-legacy' }, step: 'status', effect: { http: 500 } }
      const added = await dcb(['rules', 'add', JSON.stringify(status), ...base])
      expect(added.stderr).toBe('')
      expect(added.code).toBe(0)
      const [sub] = (await (await fetch(`${s.url}/_sandbox/subscriptions?msisdn=601900000000`)).json()).subscriptions
      expect(sub).toMatchObject({ carrier_code: 'sbx-my-legacy' })
      const answer = await fetch(`${s.url}/subscriptions/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': DEMO },
        body: JSON.stringify({ subscription_id: sub.subscription_id }),
      })
      expect(answer.status).toBe(500)
    } finally {
      await s.stop()
    }
  })
})
