/** A control call the sandbox refused: `code` and `status` are the control API's (`{ error, message }` and its HTTP status). */
export class SandboxError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'SandboxError'
  }
}
