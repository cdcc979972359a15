/**
 * `dcb serve --https | --lan | --open`: listening through listhen (self-signed certificate, LAN
 * addresses, QR code, the browser). Loaded only with those flags; plain `dcb serve` keeps node:http.
 * listhen would move to another port when the one asked for is busy: the port is tried first, so a
 * busy port still fails.
 */
import { spawn } from 'node:child_process'
import type { RequestListener, Server } from 'node:http'
import { createServer as createNetServer } from 'node:net'
import { stripVTControlCharacters } from 'node:util'

export interface ListenhenOptions {
  https: boolean
  /** Listen on every interface and show the LAN URL and its QR code. */
  lan: boolean
}

export interface Listening {
  server: Server
  protocol: 'http' | 'https'
  /** The LAN URLs (with --lan). */
  lanUrls: () => Promise<string[]>
  /** Prints listhen's QR code and URLs. */
  showQr: () => Promise<void>
  /** Opens the base URL in the default browser (listhen's opener). */
  open: () => Promise<void>
}

/** Fails with EADDRINUSE when host:port is taken, so listhen never moves elsewhere. */
function probePort(port: number, host: string): Promise<void> {
  if (port === 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const probe = createNetServer()
    probe.once('error', reject)
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()))
  })
}

export function listenWithListhen(o: ListenhenOptions): {
  listen: (listener: RequestListener, port: number, host: string) => Promise<{ server: Server; protocol: 'http' | 'https' }>
  listening: () => Listening | undefined
} {
  let done: Listening | undefined
  return {
    listening: () => done,
    listen: async (listener, port, host) => {
      await probePort(port, host)
      const { listen } = await import('listhen')
      const l = await listen(listener, {
        // No alternative ports and no random one: the port asked for or nothing.
        port: port === 0 ? 0 : { port, random: false, alternativePortRange: [] as unknown as [number, number] },
        hostname: host,
        https: o.https,
        public: o.lan,
        showURL: false,
        open: false,
        qr: o.lan,
        isTest: false,
        isProd: false,
        // dcb serve closes the store on SIGINT/SIGTERM itself; listhen's exit handlers would skip that.
        autoClose: false,
      })
      const server = l.server as unknown as Server
      const got = (server.address() as { port: number } | null)?.port
      if (port !== 0 && got !== port) {
        await l.close()
        throw Object.assign(new Error(`listhen listened on ${got} instead of ${port}`), { code: 'EADDRINUSE' })
      }
      done = {
        server,
        protocol: l.https ? 'https' : 'http',
        lanUrls: async () => (await l.getURLs()).filter((u) => u.type === 'network').map((u) => u.url.replace(/\/$/, '')),
        showQr: () => withoutUnopenable(() => l.showURL({ qr: true })),
        open: () => l.open(),
      }
      return { server, protocol: done.protocol }
    },
  }
}

/**
 * Runs listhen's printing of its URLs and QR code (one console.log) without the lines a client cannot
 * use: `➜ Local: http://0.0.0.0:PORT/` (an address to bind, not to open; the banner names the loopback
 * URL) and, with no LAN address, listhen's own CLI advice to use --host. The QR code and the LAN URLs stay.
 */
async function withoutUnopenable(show: () => Promise<void>): Promise<void> {
  const log = console.log
  const unopenable = (line: string) => {
    const plain = stripVTControlCharacters(line)
    return /\bhttps?:\/\/(0\.0\.0\.0|\[::\])[:/]/.test(plain) || /use --host to expose/.test(plain)
  }
  console.log = (...args: unknown[]) =>
    log(
      ...args.map((a) =>
        typeof a === 'string'
          ? a
              .split('\n')
              .filter((line) => !unopenable(line))
              .join('\n')
          : a,
      ),
    )
  try {
    await show()
  } finally {
    console.log = log
  }
}

/**
 * Opens the console in the default browser: `$BROWSER URL` when BROWSER is set (the usual
 * convention; tests use it to see the URL), else listhen's opener.
 */
export async function openBrowser(url: string, l: Listening): Promise<void> {
  const browser = process.env.BROWSER
  const failed = () => void process.stderr.write(`dcb: could not open a browser; open ${url} yourself\n`)
  if (!browser) return l.open().catch(failed)
  const child = spawn(browser, [url], { stdio: 'ignore', detached: true })
  child.on('error', failed)
  child.unref()
}
