import { BlockList, isIP } from 'node:net'
import type { IncomingMessage } from 'node:http'

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

/**
 * The client's address: the socket peer, or with `trustProxy` the first address of
 * X-Forwarded-For (only a reverse proxy you run should be trusted to set it).
 */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string | undefined {
  if (trustProxy) {
    const xff = req.headers['x-forwarded-for']
    const first = (Array.isArray(xff) ? xff[0] : xff)?.split(',')[0]
    const ip = normalizeIp(first)
    if (ip) return ip
  }
  return normalizeIp(req.socket.remoteAddress)
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
