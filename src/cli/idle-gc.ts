/**
 * A full garbage collection when the server falls idle after a burst. V8 collects its old
 * generation as it grows, and its memory reducer only some 8 s after the process goes idle: 2 s after
 * 200,000 Inits the heap held ~100 MiB, about half of it garbage, and the RSS stayed ~60 MiB above
 * what the kept records need. A sandbox sits idle between test runs most of its life; one collection
 * then (tens of ms, nobody waiting) gives that memory back.
 */
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'

/** How often the heap is looked at. */
const TICK_MS = 1000
/** How much the heap must have grown since the last collection. */
const GROWN_BYTES = 32 * 2 ** 20
/** Idle: the heap moved less than this in a tick (a tick's own look and a console heartbeat allocate a little). */
const IDLE_BYTES = 256 * 2 ** 10

/** Decides, from the heap's size at each tick, when to collect: idle for a tick, and grown since the last collection. */
export class IdleCollector {
  private last: number
  private afterCollection: number
  constructor(used: number) {
    this.last = this.afterCollection = used
  }

  /** The heap's size at this tick; answers whether to collect now. */
  tick(used: number): boolean {
    const idle = Math.abs(used - this.last) < IDLE_BYTES
    this.last = used
    return idle && used - this.afterCollection >= GROWN_BYTES
  }

  /** The heap's size right after a collection. */
  collected(used: number): void {
    this.last = this.afterCollection = used
  }
}

/** Starts watching (the server's process only: never a library user's); answers how to stop. */
export function collectWhenIdle(): () => void {
  const collector = new IdleCollector(heapUsed())
  const timer = setInterval(() => {
    if (!collector.tick(heapUsed())) return
    fullCollection()
    collector.collected(heapUsed())
  }, TICK_MS)
  timer.unref()
  return () => clearInterval(timer)
}

function heapUsed(): number {
  return v8.getHeapStatistics().used_heap_size
}

let gc: (() => void) | undefined

/** A full garbage collection. */
export function fullCollection(): void {
  if (!gc) {
    // `gc` is exposed to contexts made after the flag is set (Node has no other way to ask for a full collection).
    v8.setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as () => void
  }
  gc()
}
