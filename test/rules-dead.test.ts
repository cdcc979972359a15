/**
 * A rule that could never decide anything is refused, naming the rule's field or step and why: a step
 * that comes after Init's carrier check on carriers that are not provisioned (or do not bill the
 * service), a service sold nowhere (or not in the country), a regex no MSISDN has a match of. Over
 * loopback (`POST /_sandbox/rules`), in fixture files (`dcb fixtures validate`, `dcb serve`) and by
 * `dcb rules add` through the binary; and the rules of those carriers and services that can decide
 * (`api` before the carrier check, `status` of a seeded subscription) are taken and do decide.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO, startClient, tempDir, tempFolderPerTest, writeJson, type Client } from './helpers.js'
import { dcb, serve, type Result, type Served } from './cli/run.js'

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

/** Runs `fn` against a sandbox of its own, closed after it. */
async function withClient(fn: (c: Client) => Promise<void>, opts: Parameters<typeof startClient>[0] = {}): Promise<void> {
  const c = await startClient(opts)
  try {
    await fn(c)
  } finally {
    await c.close()
  }
}

describe('POST /_sandbox/rules: a rule that could never decide is a 400 naming why', () => {
  describe('on a carrier not provisioned', () => {
    const DEAD = [
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
    ] as const
    const API_RULE = { id: 'legacy-down', match: { carrier: 'sbx-my-legacy' }, step: 'api', effect: { http: 500 } }
    const init = (c: Client) => c.api('/subscriptions/init', { msisdn: '60193456001', service_code: 'STREAMPLUS', country_code: 'my' })

    it('refuses each step after the carrier check', () =>
      withClient(async (c) => {
        for (const [rule, message] of DEAD) {
          const r = await c.control('/rules', rule)
          expect(r, JSON.stringify(rule)).toEqual({ status: 400, body: { error: 'BAD_RULE', message } })
        }
      }))

    it('adds none of the rules it refuses', () =>
      withClient(async (c) => {
        for (const [rule] of DEAD) await c.control('/rules', rule)
        expect((await c.control('/rules')).body.rules.filter((r: any) => r.source === 'runtime')).toEqual([])
      }))

    it('takes an api rule', () =>
      withClient(async (c) => {
        expect((await c.control('/rules', API_RULE)).status).toBe(200)
      }))

    it('decides Init by an api rule before the carrier check', () =>
      withClient(async (c) => {
        expect((await init(c)).body.message).toBe('CARRIER_NOT_SUPPORTED')
        // `api` is decided before the carrier check: its HTTP 500 comes first.
        expect((await c.control('/rules', API_RULE)).status).toBe(200)
        expect((await init(c)).status).toBe(500)
      }))

    it('takes a rule whose steps are status, renewal, retry', () =>
      withClient(async (c) => {
        const later = { id: 'legacy-later', match: { carrier: 'sbx-my-legacy' }, step: ['status', 'renewal', 'retry'], effect: {} }
        expect((await c.control('/rules', later)).status).toBe(200)
      }))
  })

  describe('on a service sold nowhere, not in the country, or not through the carrier', () => {
    const API_RULE = { match: { service: 'PSMSONLY', carrier: 'sbx-my-otp' }, step: 'api', effect: { http: 500 } }
    const init = (c: Client) => c.api('/subscriptions/init', { msisdn: '601234000017', service_code: 'PSMSONLY', country_code: 'my' })
    /** Runs `fn` against a sandbox loading SERVICES, with the warnings it gave. */
    const withServices = (fn: (c: Client, warnings: string[]) => Promise<void>) => {
      const warnings: string[] = []
      return withClient((c) => fn(c, warnings), { fixtures: [write('services.json', SERVICES)], onWarning: (w) => warnings.push(w) })
    }

    it('warns that a service sold nowhere has no integration', () =>
      withServices(async (_c, warnings) => {
        expect(warnings.join('\n')).toContain('service "ORPHAN" has no integration')
      }))

    it('refuses each rule of a step that never happens for the service', () =>
      withServices(async (c) => {
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
      }))

    it('takes a renewal rule of a service sold nowhere', () =>
      withServices(async (c) => {
        // A data file may keep subscriptions of a service from another world: they renew.
        expect((await c.control('/rules', { match: { service: 'ORPHAN' }, step: ['renewal', 'retry'], effect: { error: 'BARRED' } })).status).toBe(200)
      }))

    it('takes an api rule of a service not billed through the carrier', () =>
      withServices(async (c) => {
        expect((await c.control('/rules', API_RULE)).status).toBe(200)
      }))

    it('decides Init by an api rule of a service not billed through the carrier', () =>
      withServices(async (c) => {
        expect((await init(c)).body.message).toBe('CARRIER_NOT_SUPPORTED')
        expect((await c.control('/rules', API_RULE)).status).toBe(200)
        expect((await init(c)).status).toBe(500)
      }))
  })

  describe('on a regex', () => {
    const MATCHING = ['^6012\\d+$', '(?:\\+|^)6012', '\\B0', '[a-z0-9]7$', '(?m)^60.*1$']

    it('refuses one no string of digits has a match of', () =>
      withClient(async (c) => {
        for (const regex of ['^\\+60', '^abc', '\\D{3}', '(?i)^sbx', '^$', '6012\\b\\d']) {
          const r = await c.control('/rules', { match: { regex }, step: 'init', effect: { error: 'BARRED' } })
          expect(r, regex).toEqual({ status: 400, body: { error: 'BAD_RULE', message: `match.regex: ${JSON.stringify(regex)} ${NO_DIGITS}` } })
        }
      }))

    it('takes one that some number matches', () =>
      withClient(async (c) => {
        for (const regex of MATCHING)
          expect((await c.control('/rules', { match: { regex }, step: 'init', effect: { error: 'BARRED' } })).status, regex).toBe(200)
      }))

    it('decides Init of a number it matches', () =>
      withClient(async (c) => {
        for (const regex of MATCHING) await c.control('/rules', { match: { regex }, step: 'init', effect: { error: 'BARRED' } })
        // Taken, and deciding.
        const init = await c.api('/subscriptions/init', { msisdn: '601234000017', service_code: 'STREAMPLUS', country_code: 'my' })
        expect(init.body.message).toBe('BARRED')
      }))
  })
})

describe('fixture files and dcb rules add, through the binary', () => {
  describe('a file of dead rules', () => {
    let folder: ReturnType<typeof tempDir>
    let f: string
    let ok: string
    let v: Result
    let s: Result
    let good: Result
    beforeAll(async () => {
      folder = tempDir()
      f = writeJson(folder.dir, 'dead.json', {
        ...SERVICES,
        rules: [
          { id: 'legacy-otp', match: { carrier: 'sbx-my-legacy' }, step: 'otp', effect: { otp: '4242' } },
          { id: 'orphan-init', match: { service: 'ORPHAN' }, step: 'init', effect: { error: 'BARRED' } },
          { id: 'plus', match: { regex: '^\\+60' }, step: 'init', effect: { error: 'BARRED' } },
        ],
      })
      // The same carriers and services with steps that do happen.
      ok = writeJson(folder.dir, 'alive.json', {
        ...SERVICES,
        rules: [
          { id: 'legacy-slow', match: { carrier: 'sbx-my-legacy' }, step: 'api', effect: { delay_ms: 100 } },
          { id: 'orphan-renewal', match: { service: 'ORPHAN' }, step: 'renewal', effect: { error: 'BARRED' } },
          { id: 'digits', match: { regex: '^6019\\d+$' }, step: 'api', effect: { delay_ms: 100 } },
        ],
      })
      v = await dcb(['fixtures', 'validate', f])
      s = await dcb(['serve', '--in-memory', '--port', '0', '--fixtures', f])
      good = await dcb(['fixtures', 'validate', ok])
    })
    afterAll(() => folder?.cleanup())

    it('fails dcb fixtures validate with exit 1', () => {
      expect(v.code).toBe(1)
    })

    it('dcb fixtures validate names a step on a carrier not provisioned at its JSON path in the file', () => {
      expect(v.stderr).toContain(`${f}: $.rules[0].step: ${LEGACY_OTP.slice('step: '.length)}`)
    })

    it('dcb fixtures validate names a service sold nowhere at its JSON path in the file', () => {
      expect(v.stderr).toContain(
        `${f}: $.rules[1].match.service: service ORPHAN has no integration (it is sold in no country): ${NOT_CONFIGURED}, so the rule would decide nothing`,
      )
    })

    it('dcb fixtures validate names a regex no number matches at its JSON path in the file', () => {
      expect(v.stderr).toContain(`${f}: $.rules[2].match.regex: "^\\\\+60" ${NO_DIGITS}`)
    })

    it('fails dcb serve with exit 1', () => {
      expect(s.code).toBe(1)
    })

    it('dcb serve names its first dead rule at its JSON path in the file', () => {
      expect(s.stderr).toContain(`dcb: fixture error: ${f}: $.rules[0].step: step "otp" ${NOT_BILLED} and carrier sbx-my-legacy is not provisioned`)
    })

    it('dcb fixtures validate passes rules on steps that do happen in the same world', () => {
      expect(good.stderr).not.toContain('$.rules')
      expect(good.code).toBe(0)
    })
  })

  describe('dcb rules add on a server with a subscription seeded on a carrier not provisioned', () => {
    let folder: ReturnType<typeof tempDir>
    let seeded: Result
    let srv: Served
    let r: Result
    let regex: Result
    let listed: Result
    let added: Result
    let sub: any
    let answer: Response
    beforeAll(async () => {
      folder = tempDir()
      // `dcb seed` puts subscriptions on the carrier of the numbers it is given, provisioned or not.
      const data = join(folder.dir, 'seeded.json')
      seeded = await dcb(['seed', '--subscriptions', '1', '--data', data, '--first-msisdn', '601900000000'])
      srv = await serve(['--data', data])
      const base = ['--base-url', srv.url]
      const list = writeJson(folder.dir, 'add.json', [
        { id: 'legacy-slow', match: { carrier: 'sbx-my-legacy' }, step: 'api', effect: { delay_ms: 100 } },
        { id: 'legacy-otp', match: { carrier: 'sbx-my-legacy' }, step: 'otp', effect: { otp: '4242' } },
      ])
      r = await dcb(['rules', 'add', list, ...base])
      regex = await dcb(['rules', 'add', '{"step": "init", "match": {"regex": "^\\\\+60"}, "effect": {"error": "BARRED"}}', ...base])
      listed = await dcb(['rules', 'list', '--json', ...base])
      const status = { id: 'legacy-status', match: { carrier: 'sbx-my-legacy' }, step: 'status', effect: { http: 500 } }
      added = await dcb(['rules', 'add', JSON.stringify(status), ...base])
      ;[sub] = (await (await fetch(`${srv.url}/_sandbox/subscriptions?msisdn=601900000000`)).json()).subscriptions
      answer = await fetch(`${srv.url}/subscriptions/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': DEMO },
        body: JSON.stringify({ subscription_id: sub.subscription_id }),
      })
    })
    afterAll(async () => {
      await srv?.stop()
      folder?.cleanup()
    })

    it('dcb seed puts the subscription on the carrier of its number', () => {
      expect(seeded.code).toBe(0)
      expect(sub).toMatchObject({ carrier_code: 'sbx-my-legacy' })
    })

    it('exits 1 on a list with a dead rule', () => {
      expect(r.code).toBe(1)
    })

    it('names the dead rule of a list on one line', () => {
      expect(r.stderr.trim().split('\n')).toEqual([`dcb: BAD_RULE: rule 2 (legacy-otp): ${LEGACY_OTP} (no rule was added: 1 of 2 have problems)`])
    })

    it('exits 1 on a dead regex', () => {
      expect(regex.code).toBe(1)
    })

    it('says why a regex is dead on one line', () => {
      expect(regex.stderr.trim().split('\n')).toEqual([`dcb: BAD_RULE: match.regex: "^\\\\+60" ${NO_DIGITS}`])
    })

    it('adds none of a list with a dead rule', () => {
      expect(JSON.parse(listed.stdout).runtime).toEqual([])
    })

    it('takes a status rule on the carrier not provisioned', () => {
      expect(added.stderr).toBe('')
      expect(added.code).toBe(0)
    })

    it('a status rule on that carrier decides Status of the seeded subscription', () => {
      expect(answer.status).toBe(500)
    })
  })
})
