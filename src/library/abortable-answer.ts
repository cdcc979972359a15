/**
 * The answer of a `sandbox.fetch` (or msw) call made with a signal, as fetch gives it: once the signal
 * aborts, a body not read yet rejects with the signal's reason (fetch errors its body stream with it),
 * while status and headers stay. The in-process answer is whole in memory the moment it is made, so
 * without this its body stayed readable after the caller gave up.
 */

const READS = ['arrayBuffer', 'blob', 'bytes', 'formData', 'json', 'text'] as const
const SIGNAL = Symbol('dcb.answerSignal')
const STREAM = Symbol('dcb.answerStream')

interface Abortable extends Response {
  [SIGNAL]: AbortSignal
  [STREAM]?: ReadableStream<Uint8Array> | null
}

/**
 * `response` (a fresh answer, its body unread) made to honour `signal` when its body is read. Its
 * prototype is swapped for one over its own class's that checks the signal: a call with a signal
 * (every msw request has one) costs a couple of microseconds, where own properties per answer cost ten.
 */
export function abortableAnswer(response: Response, signal: AbortSignal): Response {
  ;(response as Abortable)[SIGNAL] = signal
  return Object.setPrototypeOf(response, abortablePrototype(Object.getPrototypeOf(response) as Response)) as Response
}

const prototypes = new WeakMap<object, object>()

function abortablePrototype(base: Response): object {
  let proto = prototypes.get(base)
  if (proto) return proto
  const inherited = (name: 'body' | 'bodyUsed') => {
    for (let p: object | null = base; p; p = Object.getPrototypeOf(p) as object | null) {
      const get = Object.getOwnPropertyDescriptor(p, name)?.get
      if (get) return get
    }
    throw new TypeError(`not a Response: no ${name}`)
  }
  const bodyOf = inherited('body')
  const usedOf = inherited('bodyUsed')
  const methods: Record<string, unknown> = {}
  for (const name of READS) {
    const read = (base as unknown as Record<string, ((this: Response) => Promise<unknown>) | undefined>)[name]
    if (typeof read !== 'function') continue // `bytes` is newer than Node 20's Response
    // Checked again once read: a read under way when the signal aborts rejects too, as with fetch.
    methods[name] = function (this: Abortable) {
      const signal = this[SIGNAL]
      return signal.aborted ? Promise.reject(signal.reason) : read.call(this).then((v) => (signal.aborted ? Promise.reject(signal.reason) : v))
    }
  }
  const clone = base.clone
  proto = Object.create(base, {
    ...Object.fromEntries(Object.entries(methods).map(([name, value]) => [name, { value, writable: true, configurable: true }])),
    body: {
      configurable: true,
      get(this: Abortable) {
        if (this[STREAM] === undefined) {
          const inner = bodyOf.call(this) as ReadableStream<Uint8Array> | null
          this[STREAM] = inner && abortableStream(inner, this[SIGNAL])
        }
        return this[STREAM]
      },
    },
    // A stream the caller locked is used, as fetch's; the inner one is read only once the caller reads.
    bodyUsed: {
      configurable: true,
      get(this: Abortable) {
        return (this[STREAM]?.locked ?? false) || (usedOf.call(this) as boolean)
      },
    },
    clone: {
      configurable: true,
      writable: true,
      value(this: Abortable) {
        return abortableAnswer(clone.call(this), this[SIGNAL])
      },
    },
  }) as object
  prototypes.set(base, proto)
  return proto
}

/** `inner` read through, errored with the signal's reason if it aborts before the last chunk. */
function abortableStream(inner: ReadableStream<Uint8Array>, signal: AbortSignal): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  let onAbort: (() => void) | undefined
  const done = () => signal.removeEventListener('abort', onAbort!)
  return new ReadableStream<Uint8Array>(
    {
      start: (controller) => {
        onAbort = () => {
          controller.error(signal.reason)
          ;(reader ?? inner).cancel(signal.reason).catch(() => {})
        }
        if (signal.aborted) onAbort()
        else signal.addEventListener('abort', onAbort, { once: true })
      },
      pull: async (controller) => {
        const { done: end, value } = await (reader ??= inner.getReader()).read()
        if (signal.aborted) return
        if (end) {
          done()
          controller.close()
        } else controller.enqueue(value)
      },
      cancel: (reason) => {
        done()
        return (reader ?? inner).cancel(reason)
      },
    },
    { highWaterMark: 0 },
  )
}
