/** A fetch Response over a body the in-process pipeline already holds in memory. */

/** A string as it reads after a trip through UTF-8 (lone surrogates become U+FFFD), as over a socket. */
export function wellFormed(s: string): string {
  const w = s as string & { isWellFormed(): boolean; toWellFormed(): string }
  return w.isWellFormed() ? s : w.toWellFormed()
}

/** The bytes of a body in memory. */
function bytesOf(body: string | Uint8Array | null): Uint8Array<ArrayBuffer> {
  if (body === null) return new Uint8Array(new ArrayBuffer(0))
  if (typeof body === 'string') return Buffer.from(wellFormed(body), 'utf8') as Uint8Array<ArrayBuffer>
  return body as Uint8Array<ArrayBuffer>
}

/**
 * A Response over a body already in memory, cheap to make and to read: Node 20's Response reads
 * even a buffered body through a web stream and converts its init through WebIDL, which together
 * cost several times the sandbox's own work for a small JSON answer. Here status and headers are
 * answered from what the listener wrote (the Headers object is made on first use), and json, text
 * and arrayBuffer take the body directly; `body` still gives a stream.
 *
 * The class is made on first use: `extends Response` reads the global, and that loads Node's fetch
 * (undici, ~20 ms) into every process that imports the HTTP layer, `dcb serve` included, which never
 * answers a fetch Request.
 */
export function bufferedResponse(status: number, statusText: string, headers: [string, string][], body: string | Uint8Array | null): Response {
  BufferedResponse ??= defineBufferedResponse()
  return new BufferedResponse(status, statusText, headers, body)
}

let BufferedResponse: ReturnType<typeof defineBufferedResponse> | undefined

const defineBufferedResponse = () =>
  class BufferedResponse extends Response {
    readonly #status: number
    readonly #statusText: string
    readonly #headerList: [string, string][]
    #headers: Headers | null = null
    readonly #body: string | Uint8Array | null
    #stream: ReadableStream<Uint8Array<ArrayBuffer>> | null = null
    #used = false

    constructor(status: number, statusText: string, headers: [string, string][], body: string | Uint8Array | null) {
      super()
      this.#status = status
      this.#statusText = statusText
      this.#headerList = headers
      this.#body = body
    }

    override get status(): number {
      return this.#status
    }
    override get ok(): boolean {
      return this.#status >= 200 && this.#status <= 299
    }
    override get statusText(): string {
      return this.#statusText
    }
    override get headers(): Headers {
      return (this.#headers ??= new Headers(this.#headerList))
    }

    override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
      if (this.#body === null) return null
      if (!this.#stream) {
        const body = this.#body
        // Pulled only when read (highWaterMark 0): reading it uses the body up, as with any Response.
        this.#stream = new ReadableStream<Uint8Array<ArrayBuffer>>(
          {
            pull: (controller) => {
              this.#used = true
              const bytes = bytesOf(body)
              if (bytes.byteLength) controller.enqueue(typeof body === 'string' ? bytes : bytes.slice())
              controller.close()
            },
          },
          { highWaterMark: 0 },
        )
      }
      return this.#stream
    }

    override get bodyUsed(): boolean {
      return this.#used || (this.#stream !== null && this.#stream.locked)
    }

    #take(): string | Uint8Array | null {
      if (this.bodyUsed) throw new TypeError('Body is unusable: Body has already been read')
      this.#used = true
      return this.#body
    }

    override async arrayBuffer(): Promise<ArrayBuffer> {
      const b = bytesOf(this.#take())
      return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer
    }
    override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
      const body = this.#take()
      return typeof body === 'string' ? bytesOf(body) : bytesOf(body).slice()
    }
    override async text(): Promise<string> {
      const body = this.#take()
      if (body === null) return ''
      if (typeof body === 'string') return wellFormed(body)
      return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
    }
    override async json(): Promise<unknown> {
      return JSON.parse(await this.text())
    }
    override async blob(): Promise<Blob> {
      return new Blob([bytesOf(this.#take())], { type: this.headers.get('content-type') ?? '' })
    }
    override async formData(): Promise<FormData> {
      return new Response(bytesOf(this.#take()), { headers: this.headers }).formData()
    }
    override clone(): Response {
      if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.')
      return new BufferedResponse(this.#status, this.#statusText, this.#headerList, this.#body)
    }
  }
