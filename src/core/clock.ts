/**
 * The sandbox clock: real time plus an offset, or frozen at a time. It lives in the state (so it
 * survives restarts) and only ever moves forward; a move runs the events that fall due on the way.
 */
import type { EngineContext } from './context.js'
import { SandboxError } from './errors.js'
import { ClockMove, EventLog } from './events.js'
import type { ClockRecord, State } from './state.js'
import type { Tx } from './tx.js'
import { addDuration, ambiguousDuration, formatTimestamp, isZeroDuration, LAST_TIME, parseDuration, parseTimestamp, timeProblem } from './time.js'

/** Where the clock lives in the state's meta collection. */
export const CLOCK = 'clock'

/**
 * Whether a state is new, so that a start-up clock (`--clock`) applies to it: it holds no record at
 * all. A store that was used keeps its clock, even one never set or moved (running real time, so no
 * clock record): a clock given later would move its subscriptions' time backwards.
 */
export function startsItsClock(state: State): boolean {
  return !state.meta.has(CLOCK) && state.size() === 0
}

export interface ClockView {
  now: string
  frozen: boolean
  offset_ms: number
  next_event_dt: string | null
  /** While a clock move runs: where it goes, and how many events it ran so far. */
  move?: { to: string; events_run: number }
}

/** A clock move under way, as its last batch left it. */
interface MoveProgress {
  to: number
  /** Where the last batch ended: every event up to it ran, none after. */
  reached: number
  log: EventLog
}

/** Where the clock starts (when the state has none yet, and on reset). */
export interface ClockStart {
  at: number
  frozen: boolean
}

export class Clock {
  /** The move under way (set as each batch ends), or null. Mid-move the view reads the time it reached. */
  moving: MoveProgress | null = null

  constructor(
    private readonly state: State,
    private readonly realNow: () => number,
  ) {}

  private record(): ClockRecord {
    return (this.state.meta.get(CLOCK) as ClockRecord | undefined) ?? { offset_ms: 0, frozen_at: null }
  }

  /** The sandbox time now, in epoch ms. */
  now(): number {
    const c = this.record()
    // A running clock stops at the last time a timestamp can say (it never drifts into year 10000).
    return c.frozen_at ?? Math.min(this.realNow() + c.offset_ms, LAST_TIME)
  }

  /**
   * The clock as the control API shows it. During a move, `now` is the time the move reached (a
   * running clock reads later, by the real time since its last batch, but the events due meanwhile
   * have not run yet), so the next event is never before it.
   */
  view(nextEventAt: number | null): ClockView {
    const c = this.record()
    const m = this.moving
    const view: ClockView = {
      now: formatTimestamp(m ? m.reached : this.now()),
      frozen: c.frozen_at !== null,
      offset_ms: c.offset_ms,
      next_event_dt: nextEventAt === null ? null : formatTimestamp(nextEventAt),
    }
    if (m) view.move = { to: formatTimestamp(m.to), events_run: m.log.count + m.log.omitted }
    return view
  }

  start(tx: Tx, start: ClockStart): void {
    const rec: ClockRecord = start.frozen ? { offset_ms: 0, frozen_at: start.at } : { offset_ms: start.at - this.realNow(), frozen_at: null }
    tx.put('meta', CLOCK, rec)
  }

  /** Moves the clock from `from` (the sandbox time read at the start) to `to`, exactly. */
  set(tx: Tx, from: number, to: number): void {
    const c = this.record()
    const rec: ClockRecord = c.frozen_at !== null ? { ...c, frozen_at: to } : { ...c, offset_ms: c.offset_ms + (to - from) }
    tx.put('meta', CLOCK, rec)
  }

  /** Where `advance(by)` goes from a time; a SandboxError for what is not a duration. */
  static byDuration(by: string): (now: number) => number {
    const d = parseDuration(by)
    const ambiguous = ambiguousDuration(by)
    if (ambiguous) throw new SandboxError('BAD_DURATION', ambiguous)
    if (!d || isZeroDuration(d))
      throw new SandboxError('BAD_DURATION', `"${by}" is not a duration: use ISO-8601 (P1M, PT6M, P1DT12H) or a short form (36h, 90m, 2d, 1w, 1mo)`)
    return (now) => addDuration(now, d)
  }

  /** Where `setTime(to)` goes; a SandboxError for what is not a time, or (when the move runs) one before the clock. */
  static toTime(to: string): (now: number) => number {
    const problem = timeProblem(to)
    if (problem) throw new SandboxError('BAD_TIME', problem)
    const t = parseTimestamp(to)
    return (now) => {
      if (t < now)
        throw new SandboxError(
          'CLOCK_BACKWARDS',
          `the sandbox clock cannot move backwards (now ${formatTimestamp(now)}); to start over at an earlier time, reset with a clock: POST /_sandbox/reset {"clock": "${to}"} or dcb reset --clock ${to}`,
        )
      return t
    }
  }

  /** A SandboxError when a move would go where timestamps cannot say (past the year 9999). */
  static checkLimit(to: number): void {
    if (!(to <= LAST_TIME))
      throw new SandboxError('CLOCK_LIMIT', `the sandbox clock cannot go past ${formatTimestamp(LAST_TIME)}: timestamps have four-digit years`)
  }
}

/**
 * Moves the clock to `target(now)`, running every event that falls due on the way, in time order,
 * recorded. A long move runs in batches (`EngineContext.batch`: 250,000 events or half a second of
 * work): each batch is one transaction that leaves the clock at its end, then the host gets a turn, so the server answers
 * and hears signals meanwhile. It runs alone: writes wait for it. Interrupted (the host shuts down),
 * it stops at a batch boundary, the clock there, every event up to it run and none after: a 503
 * `SHUTTING_DOWN`.
 */
export function moveClock(ctx: EngineContext, target: (now: number) => number): Promise<ClockMove<ClockView>> {
  return ctx.exclusive(async () => {
    const log = new EventLog()
    let to = NaN
    try {
      await inBatches(ctx, (tx, now) => {
        if (Number.isNaN(to)) {
          to = target(now)
          Clock.checkLimit(to)
        }
        // The batch ends no earlier than the clock reads now: the clock never moves back.
        const end = ctx.runDue(tx, to, log, ctx.batch(now))
        ctx.clock.set(tx, now, end ?? to)
        if (end !== null) ctx.clock.moving = { to, reached: end, log }
        return end === null
      })
    } finally {
      ctx.clock.moving = null
    }
    return new ClockMove(ctx.clock.view(ctx.queue.nextAt()), log)
  })
}

/**
 * Runs `batch` (one transaction each) until it answers true. Between batches the host gets a turn;
 * a batch's durability is awaited before the one after next (the store writes while the engine
 * runs), the last one's before answering.
 */
async function inBatches(ctx: EngineContext, batch: (tx: Tx, now: number) => boolean): Promise<void> {
  let writing: Promise<void> | null = null
  let rollbacks = ctx.rollbacks
  for (;;) {
    if (ctx.interrupted) {
      if (writing) await writing
      throw new SandboxError(
        'SHUTTING_DOWN',
        `the server is shutting down: the clock move stopped at ${formatTimestamp(ctx.clock.now())}, every event up to there run; move it on after the restart`,
      )
    }
    if (ctx.gate) await ctx.enterTurn()
    // A write failed meanwhile (its batch and every one behind it taken back, in the same turn of the
    // event loop as the failure): no batch runs on the state they were taken back to, and the move
    // answers that failure (the last batch's write rejects with it).
    if (ctx.rollbacks !== rollbacks) {
      if (writing) await writing
      rollbacks = ctx.rollbacks
    }
    const done = ctx.transaction(batch, false)
    // Handled at once: when the batch before fails, this one fails with it and nobody awaits it (an
    // unhandled rejection would end the server's process).
    done.durable?.catch(() => {})
    if (writing) await writing
    writing = done.durable
    if (done.result) break
    await ctx.yieldToHost()
  }
  if (writing) await writing
}

/**
 * Runs the events due by now (the server's timer, and at its start: the events that fell due while
 * it was down), in batches like a clock move; answers how many ran (counted, not listed: nobody
 * reads a catch-up's events).
 */
export async function catchUp(ctx: EngineContext): Promise<number> {
  const next = ctx.queue.nextAt()
  if (next === null || next > ctx.clock.now()) return 0
  return ctx.exclusive(async () => {
    const log = new EventLog(0, 0)
    await inBatches(ctx, (tx, now) => ctx.runDue(tx, now, log, ctx.batch()) === null)
    return log.omitted
  })
}
