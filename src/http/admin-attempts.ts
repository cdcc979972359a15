/**
 * Wrong admin tokens, counted per client address: after 10 in a row an address is refused for a
 * minute whatever it sends, the right token included, so the token cannot be guessed from the network
 * at the rate requests can be sent. Loopback clients the control API lets in without a token never
 * reach this; a right token clears the count.
 */
import { SandboxError } from '../core/errors.js'

/** Wrong tokens in a row from one address before it is refused for a while. */
export const MAX_WRONG_TOKENS = 10
/** How long an address is refused after that (ms). */
export const LOCKOUT_MS = 60_000
/** Addresses remembered at most (the oldest forgotten first): many addresses cannot grow memory. */
const MAX_ADDRESSES = 10_000

export class AdminAttempts {
  private readonly wrong = new Map<string, { count: number; until: number }>()

  constructor(private readonly now: () => number = Date.now) {}

  /** Throws FORBIDDEN while the address is refused for too many wrong tokens. */
  check(address: string | undefined): void {
    const key = address ?? 'unknown'
    const entry = this.wrong.get(key)
    if (!entry || entry.until <= this.now()) return
    const wait = Math.ceil((entry.until - this.now()) / 1000)
    throw new SandboxError('FORBIDDEN', `${MAX_WRONG_TOKENS} wrong admin tokens in a row from ${key}: no token is taken from it for ${wait} s more`)
  }

  /** A token was given: counts a wrong one (refusing the address at the tenth), forgets the count on the right one. */
  given(address: string | undefined, right: boolean): void {
    const key = address ?? 'unknown'
    if (right) return void this.wrong.delete(key)
    const entry = this.wrong.get(key) ?? { count: 0, until: 0 }
    this.wrong.delete(key)
    entry.count++
    if (entry.count >= MAX_WRONG_TOKENS) {
      entry.count = 0
      entry.until = this.now() + LOCKOUT_MS
    }
    this.wrong.set(key, entry)
    if (this.wrong.size > MAX_ADDRESSES) this.wrong.delete(this.wrong.keys().next().value!)
  }
}
