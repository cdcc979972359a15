import { BlockList, isIP } from 'node:net'
import type { IncomingMessage } from 'node:http'
import proxyaddr from 'proxy-addr'

/** `::ffff:127.0.0.1` -> `127.0.0.1`; strips an IPv6 zone; undefined when it is not an address. */
export function normalizeIp(raw: string | undefined): string | undefined {
  if (!raw) return undefined
  let ip = raw.trim()
  if (ip.startsWith('[') && ip.includes(']')) ip = ip.slice(1, ip.indexOf(']'))
  const zone = ip.indexOf('%')
  if (zone >= 0) ip = ip.slice(0, zone)
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip)
  if (mapped) ip = mapped[1]!
  return isIP(ip) ? ip : undefined
}

/** Which socket peers are proxies whose X-Forwarded-For is believed (`proxy-addr`'s compiled form). */
export type ProxyTrust = (addr: string, i: number) => boolean

export class TrustProxyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TrustProxyError'
  }
}

/**
 * Compiles `--trust-proxy` once: comma-separated addresses, CIDRs, or the words `loopback`,
 * `linklocal`, `uniquelocal` (the semantics of `proxy-addr`). Empty: undefined (X-Forwarded-For is
 * never read).
 */
export function compileTrust(list: string | string[] | undefined): ProxyTrust | undefined {
  const entries = (Array.isArray(list) ? list : (list ?? '').split(','))
    .flatMap((e) => e.split(','))
    .map((e) => e.trim())
    .filter(Boolean)
  if (!entries.length) return undefined
  for (const e of entries) {
    try {
      proxyaddr.compile(e)
    } catch {
      throw new TrustProxyError(`--trust-proxy: "${e}" is not an address, a CIDR range or one of loopback, linklocal, uniquelocal`)
    }
  }
  return proxyaddr.compile(entries)
}

/** The socket peer's address (normalised). */
export function peerIp(req: IncomingMessage): string | undefined {
  return normalizeIp(req.socket.remoteAddress)
}

/**
 * The client's address: the socket peer; or, when the peer is a trusted proxy, the first untrusted
 * address of X-Forwarded-For read right to left (a forged left-most entry never counts). Without a
 * trust list X-Forwarded-For is not looked at.
 */
export function clientIp(req: IncomingMessage, trust: ProxyTrust | undefined): string | undefined {
  if (!trust) return peerAddress(req.socket.remoteAddress)
  return normalizeIp(proxyaddr(req, trust))
}

/** Socket peers seen, normalised (every request of a keep-alive connection asks again; peers are few). */
const peers = new Map<string, string | undefined>()

function peerAddress(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  let ip = peers.get(raw)
  if (ip === undefined && !peers.has(raw)) {
    if (peers.size >= 1024) peers.clear()
    peers.set(raw, (ip = normalizeIp(raw)))
  }
  return ip
}

/**
 * Whether the client reached the server over https: the server serves TLS itself (dcb serve --https),
 * or a trusted proxy says so (X-Forwarded-Proto). Consent links and the console's cookie follow it.
 */
export function clientUsedHttps(req: IncomingMessage, trust: ProxyTrust | undefined): boolean {
  if ((req.socket as { encrypted?: boolean } | undefined)?.encrypted === true) return true
  return req.headers['x-forwarded-proto'] === 'https' && peerTrusted(req, trust)
}

/** Whether the socket peer is a trusted proxy (so its X-Forwarded-Proto may be believed). */
export function peerTrusted(req: IncomingMessage, trust: ProxyTrust | undefined): boolean {
  const peer = req.socket.remoteAddress
  return !!trust && !!peer && trust(peer, 0)
}

export function isLoopback(ip: string | undefined): boolean {
  return !!ip && (ip === '::1' || /^127\./.test(ip))
}

/** An allowlist of addresses and CIDR ranges, IPv4 and IPv6. */
export class Allowlist {
  private readonly list = new BlockList()
  /** Decisions per address (clients are few; bounded anyway). */
  private readonly seen = new Map<string, boolean>()

  constructor(entries: string[]) {
    for (const e of entries) {
      const [addr, bits] = e.split('/')
      const ip = normalizeIp(addr)
      if (!ip) continue
      const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4'
      if (bits === undefined) this.list.addAddress(ip, type)
      else this.list.addSubnet(ip, Number(bits), type)
    }
  }

  allows(ip: string | undefined): boolean {
    if (!ip) return false
    let ok = this.seen.get(ip)
    if (ok === undefined) {
      ok = this.list.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4')
      if (this.seen.size >= 1024) this.seen.clear()
      this.seen.set(ip, ok)
    }
    return ok
  }
}
