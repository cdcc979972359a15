/** The server could not be reached, or what answered does not speak the API. */
export class TransportError extends Error {
  constructor(
    message: string,
    /** No answer came within the time-out (the server may still be working on the call). */
    readonly timedOut = false,
  ) {
    super(message)
    this.name = 'TransportError'
  }
}
