/**
 * A turn of the event loop (I/O, timers and signals run), for the engine between two batches of a
 * long clock move: the engine stays free of Node, the host injects this.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
