/** dcb-sandbox as a library: the engine, the server and the fixtures, for scripts and tests. */
export { Engine, ControlError } from './core/engine.js'
export { SandboxError, CONTROL_ERRORS, type ControlErrorCode } from './core/errors.js'
export { createControlOperations, type OperationsContext } from './control/operations.js'
export type { ControlOperations, RuleOperations, OtpOptions } from './contract/operations.js'
export type * from './contract/control.js'
export * from './contract/defaults.js'
export { RequestJournal } from './http/journal.js'
export type { SandboxEvent, InitInput, VerifyInput, StatusInput } from './core/engine.js'
export { OUTCOMES, CARRIER_CODES, envelope } from './core/outcomes.js'
export { State } from './core/state.js'
export { loadWorld, FixtureError } from './world/load.js'
export { WorldSchema } from './core/world-schema.js'
export type { World } from './core/world-schema.js'
export { createSandboxApp } from './http/app.js'
export { startSandbox } from './server.js'
export type { ServeOptions, RunningSandbox } from './server.js'
export { MemoryStore } from './store/memory.js'
export { FileStore } from './store/file.js'
export { scenarioList, scenarioTable, describeRule } from './core/scenarios.js'
export { createSandbox } from './library/sandbox.js'
export type { Sandbox, SandboxSession, SandboxOptions } from './library/sandbox.js'
export { SandboxError } from './library/errors.js'
export type {
  ClockMoveResult,
  ClockView,
  Inbox,
  JournalEntry,
  MoInput,
  MoResult,
  OtpMessage,
  RequestLog,
  ResetResult,
  RuleList,
  RuntimeRule,
  SessionInfo,
  SmsMessage,
  Subscription,
  SubscriptionFilter,
} from './library/types.js'
