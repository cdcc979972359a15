/**
 * The merchant API and the control API as OpenAPI 3.1, generated from the merchant calls' declaration
 * (`contract/merchant-calls.ts`: paths, summaries, and the body and payload schemas `contract/merchant.ts`
 * makes of it) and from the control route table, so the document cannot drift from the server.
 */
import { z } from 'zod'
import { ControlErrorAnswer } from '../contract/control.js'
import { CONTROL_ERRORS, type ControlErrorCode } from '../core/errors.js'
import { isCarrierCode, OUTCOMES, type OutcomeCode } from '../core/outcomes.js'
import { BODY_SCHEMAS, PAYLOAD_SCHEMAS } from '../contract/merchant.js'
import { MERCHANT_CALLS, MERCHANT_OPERATIONS, type MerchantOperation } from '../contract/merchant-calls.js'
import { CONTROL_ROUTES, SESSION_ROUTES, type ControlRoute } from './control-routes.js'

/** The failures of each operation on its path, from its declaration's outcomes; the carrier codes are HTTP 200's. */
const errorsOf = (op: MerchantOperation): OutcomeCode[] =>
  (MERCHANT_CALLS[op].outcomes as readonly OutcomeCode[]).filter((c) => c !== 'SUCCESS' && !isCarrierCode(c))

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' })
/** A schema inside the document (no `$schema` of its own). */
const inner = (schema: z.ZodType, io: 'input' | 'output' = 'input') => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' })
  return rest
}

/** Every control call can answer these besides its own errors. */
const PIPELINE_ERRORS: ControlErrorCode[] = ['FORBIDDEN', 'METHOD_NOT_ALLOWED', 'ERROR']

function controlOperation(r: Omit<ControlRoute, 'call' | 'operation'>): Record<string, unknown> {
  const errorSchema = inner(ControlErrorAnswer)
  const byStatus = new Map<number, ControlErrorCode[]>()
  for (const code of [...new Set([...r.errors, ...PIPELINE_ERRORS])]) {
    const status = CONTROL_ERRORS[code].status
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const responses: Record<string, unknown> = {
    '200': { description: 'OK', content: { 'application/json': { schema: inner(r.answer, 'output') } } },
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b))
    responses[String(status)] = {
      description: codes.map((c) => `${c}: ${CONTROL_ERRORS[c].describe}`).join('; '),
      content: {
        'application/json': {
          schema: { ...errorSchema, properties: { ...(errorSchema.properties as object), error: { type: 'string', enum: codes } } },
        },
      },
    }
  const parameters: Record<string, unknown>[] = []
  for (const [, name] of r.path.matchAll(/:(\w+)/g)) parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } })
  if (r.query)
    for (const [name, field] of Object.entries(r.query.shape)) {
      const schema = inner(field as z.ZodType)
      parameters.push({
        name,
        in: 'query',
        required: !(field as z.ZodType).safeParse(undefined).success,
        ...(schema.description ? { description: schema.description } : {}),
        schema,
      })
    }
  return {
    operationId: r.operationId,
    summary: r.summary,
    tags: ['control'],
    security: [{}, { adminToken: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(r.body ? { requestBody: { required: false, content: { 'application/json': { schema: inner(r.body) } } } } : {}),
    responses,
  }
}

function controlPaths(): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of [...CONTROL_ROUTES, ...SESSION_ROUTES]) {
    const path = `/_sandbox${r.path.replace(/:(\w+)/g, '{$1}')}`
    ;(paths[path] ??= {})[r.method.toLowerCase()] = controlOperation(r)
  }
  return paths
}

export function openApiDocument(version: string): Record<string, unknown> {
  const envelope = (payload: unknown) => ({
    type: 'object',
    required: ['status', 'message', 'status_code'],
    properties: {
      status: { type: 'string', enum: ['SUCCESS', 'FAIL'] },
      message: { type: 'string', description: 'Empty on success; the error code on failure' },
      status_code: { type: 'integer', description: 'Equals the HTTP status' },
      payload,
    },
  })
  const op = (name: MerchantOperation) => {
    const { summary } = MERCHANT_CALLS[name]
    const body: z.ZodType = BODY_SCHEMAS[name]
    const payload: z.ZodType = PAYLOAD_SCHEMAS[name]
    const responses: Record<string, unknown> = {
      '200': {
        description: 'SUCCESS, or a carrier/business failure (status FAIL, HTTP 200)',
        content: { 'application/json': { schema: envelope({ oneOf: [json(payload), { type: 'null' }] }) } },
      },
    }
    for (const code of errorsOf(name)) {
      const spec = OUTCOMES[code]
      const key = String(spec.http)
      const prev = responses[key] as { description: string } | undefined
      responses[key] = {
        description: prev ? `${prev.description}; ${spec.message}: ${spec.describe}` : `${spec.message}: ${spec.describe}`,
        content: { 'application/json': { schema: envelope({ type: 'null' }) } },
      }
    }
    return {
      post: {
        operationId: name,
        summary,
        tags: ['merchant'],
        security: [{ apiKey: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: json(body) } } },
        responses,
      },
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Subscription Service API (dcb sandbox)',
      version,
      description: 'The merchant API, and the sandbox control API under /_sandbox (open from loopback; from other addresses with the admin token).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'merchant', description: 'The merchant API (API-KEY header)' },
      { name: 'control', description: 'The sandbox control API: handsets, clock, subscriptions, rules, request log' },
    ],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'API-KEY' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'the --admin-token of dcb serve; not needed from loopback' },
      },
    },
    paths: {
      ...Object.fromEntries(MERCHANT_OPERATIONS.map((name) => [MERCHANT_CALLS[name].path, op(name)])),
      ...controlPaths(),
    },
  }
}
