/** The merchant API as OpenAPI 3.1, generated from the zod schemas that validate requests. */
import { z } from 'zod'
import { OUTCOMES, type OutcomeCode } from '../core/outcomes.js'
import { InitBody, InitPayload, StatusBody, StatusPayload, VerifyBody, VerifyPayload } from '../contract/merchant.js'

const ERRORS: Record<string, OutcomeCode[]> = {
  init: ['BAD_REQUEST', 'UNAUTHORIZED', 'IP_NOT_ALLOWED', 'MERCHANT_SERVICE_NOT_CONFIGURED', 'PAYLOAD_TOO_LARGE', 'METHOD_NOT_ALLOWED', 'SERVER_ERROR'],
  verify: ['BAD_REQUEST', 'UNAUTHORIZED', 'IP_NOT_ALLOWED', 'MERCHANT_SERVICE_NOT_CONFIGURED', 'PAYLOAD_TOO_LARGE', 'METHOD_NOT_ALLOWED', 'SERVER_ERROR'],
  status: [
    'BAD_REQUEST',
    'UNAUTHORIZED',
    'IP_NOT_ALLOWED',
    'MERCHANT_SERVICE_NOT_CONFIGURED',
    'SUBSCRIPTION_NOT_FOUND',
    'PAYLOAD_TOO_LARGE',
    'METHOD_NOT_ALLOWED',
    'SERVER_ERROR',
  ],
}

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' })

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
  const op = (name: 'init' | 'verify' | 'status', summary: string, body: z.ZodType, payload: z.ZodType) => {
    const responses: Record<string, unknown> = {
      '200': {
        description: 'SUCCESS, or a carrier/business failure (status FAIL, HTTP 200)',
        content: { 'application/json': { schema: envelope({ oneOf: [json(payload), { type: 'null' }] }) } },
      },
    }
    for (const code of ERRORS[name]!) {
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
        security: [{ apiKey: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: json(body) } } },
        responses,
      },
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Subscription Service API (dcb sandbox)', version },
    servers: [{ url: '/' }],
    components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'API-KEY' } } },
    paths: {
      '/subscriptions/init': op('init', 'Start a subscription flow for an MSISDN', InitBody, InitPayload),
      '/subscriptions/verify': op('verify', 'Submit the OTP; activates the subscription and attempts the first charge', VerifyBody, VerifyPayload),
      '/subscriptions/status': op('status', 'Read the state of one subscription of the calling merchant', StatusBody, StatusPayload),
    },
  }
}
