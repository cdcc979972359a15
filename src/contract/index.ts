/**
 * The wire contract shared by the server, the client and the CLI. This entry is light (no zod at run
 * time): defaults, the control error table and types. The zod schemas themselves are in `./merchant.js`
 * and `./control.js`, for the server and the in-process operations.
 */
export * from './defaults.js'
export { CONTROL_ERRORS, SandboxError, statusOf, type ControlErrorCode } from '../core/errors.js'
export type * from './control.js'
export type { InitBody, VerifyBody, StatusBody, InitPayload, VerifyPayload, StatusPayload } from './merchant.js'
export type { ControlOperations, RuleOperations, OtpOptions } from './operations.js'
