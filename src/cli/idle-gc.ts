/**
 * A full garbage collection when the server falls idle (half a second without a request) after its
 * heap grew. V8 keeps what a burst made it take (2 s after 200,000 Inits: ~122 MiB of heap for ~55
 * MiB of live records) and its memory reducer gives it back only some 8 s after the process goes
 * idle. A sandbox sits idle between test runs most of its life; one collection then (tens of ms,
 * nobody waiting) gives that memory back at once.
 */
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'

/** How often the server is looked at. */
const TICK_MS = 500
/** How much the heap must have grown since the last collection. */
const GROWN_BYTES = 32 * 2 ** 20

/** Decides at each tick when to collect: no request since the last tick, and the heap grown since the last collection. */
export class IdleCollector {
  private requests = -1
  private afterCollection: number
  constructor(used: number) {
    this.afterCollection = used
  }

  /** Requests received so far and the heap's size at this tick; answers whether to collect now. */
  tick(requests: number, used: number): boolean {
    const idle = requests === this.requests
    this.requests = requests
    return idle && used - this.afterCollection >= GROWN_BYTES
  }

  /** The heap's size right after a collection. */
  collected(used: number): void {
    this.afterCollection = used
  }
}

/**
 * Starts watching the server's process (never a library user's) for a tick without requests after
 * the heap grew; answers how to stop.
 */
export function collectWhenIdle(requests: () => number): () => void {
  const collector = new IdleCollector(heapUsed())
  const timer = setInterval(() => {
    if (!collector.tick(requests(), heapUsed())) return
    fullCollection()
    collector.collected(heapUsed())
  }, TICK_MS)
  timer.unref()
  return () => clearInterval(timer)
}

function heapUsed(): number {
  return v8.getHeapStatistics().used_heap_size
}

type Gc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void
let gc: Gc | undefined
/** Whether `gc` takes the last-resort option: V8 12 and later (Node 22 and later). */
export const LAST_RESORT = Number(process.versions.v8.split('.')[0]) >= 12

/**
 * A full garbage collection that compacts every page and hands the freed ones back to the system: a
 * plain one leaves pages that keep a few live records among garbage (after 200,000 Inits: 86 MiB of
 * old space for 41 MiB live). Only this collection compacts all: V8's own stay as they are.
 */
export function fullCollection(): void {
  if (!gc) {
    // `gc` is exposed to contexts made after the flag is set (Node has no other way to ask for a full collection).
    v8.setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as Gc
  }
  v8.setFlagsFromString('--compact-on-every-full-gc')
  try {
    // Node 24's V8 keeps freed pages for itself after a plain collection (the RSS went up by what the
    // compaction touched) and hands them back after a last-resort one; Node 20's (V8 11) knows no such
    // option (it makes a minor collection of that call) and hands them back after a plain one.
    if (LAST_RESORT) gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
    else gc()
  } finally {
    v8.setFlagsFromString('--no-compact-on-every-full-gc')
  }
}
