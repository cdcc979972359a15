/**
 * SMS texts made from a template when read, not stored rendered: an OTP message keeps a pointer to
 * one shared template (per language, service and TTL) and renders with its own OTP. A stored text
 * cost ~100 heap bytes per message; the pointer 8. Readers see `text` as any other field (an
 * enumerable getter in the field's place), so answers, both logs and snapshots are unchanged and
 * old data files (rendered texts) load as they are.
 */
import type { SmsRecord } from './state.js'
import type { WorldIndex } from './world.js'

/** A text to render for a message from its record (`text` of an outgoing SMS). */
export interface DeferredText {
  render(rec: SmsRecord): string
}

/** The OTP message of one language, service and TTL; the OTP is the record's. */
class OtpText implements DeferredText {
  constructor(
    private readonly world: WorldIndex,
    private readonly language: string,
    private readonly service: string,
    private readonly ttlMinutes: number,
  ) {}

  render(rec: SmsRecord): string {
    return this.world.text('otp', this.language, { service: this.service, otp: rec.otp!, ttl_minutes: this.ttlMinutes })
  }
}

/** The shared OTP templates of a world (bounded: cleared past a few thousand language/service/TTL sets). */
export class OtpTexts {
  private readonly cache = new Map<string, OtpText>()
  constructor(private readonly world: WorldIndex) {}

  of(language: string, service: string, ttlMinutes: number): DeferredText {
    const key = `${language}\0${service}\0${ttlMinutes}`
    let t = this.cache.get(key)
    if (!t) {
      if (this.cache.size >= 4096) this.cache.clear()
      this.cache.set(key, (t = new OtpText(this.world, language, service, ttlMinutes)))
    }
    return t
  }
}

const TEXT_OF = Symbol('dcb.smsText')
type Deferred = SmsRecord & { [TEXT_OF]: DeferredText }

function renderText(this: Deferred): string {
  return this[TEXT_OF].render(this)
}
/** One getter shared by every message (V8 keeps it in the shared shape, not per object). */
const TEXT_GETTER: PropertyDescriptor = { get: renderText, enumerable: true, configurable: true }

/**
 * The record of an outgoing message whose text is deferred: its fields in the caller's order (so JSON
 * and answers list them as before), `text` a getter in its place. Built field by field: turning a
 * data field into a getter afterwards would put the object in the slow dictionary mode.
 */
export function withDeferredText<T extends { text: string | DeferredText }>(m: T): Omit<T, 'text'> & { text: string } {
  const rec = {} as Record<string | symbol, unknown>
  for (const k in m) {
    if (k === 'text') Object.defineProperty(rec, 'text', TEXT_GETTER)
    else rec[k] = m[k]
  }
  Object.defineProperty(rec, TEXT_OF, { value: m.text })
  return rec as Omit<T, 'text'> & { text: string }
}
