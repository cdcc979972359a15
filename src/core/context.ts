/**
 * What every part of the engine shares: the state, the world, the rules in force, the event queue,
 * the clock, the injected sources (ids, randomness) and limits; and the one transaction path every
 * operation takes.
 */
import { randomUUID } from 'node:crypto'
import { Clock, type ClockStart } from './clock.js'
import type { Coverage } from './coverage.js'
import { SandboxError } from './errors.js'
import type { EventLog } from './events.js'
import { DEFAULT_MAX_SUBSCRIPTIONS } from './limits.js'
import { EventQueue } from './queue.js'
import type { RenewalPlan } from './renewal-plan.js'
import { RuleSet } from './ruleset.js'
import type { RegexPool } from './regex-pool.js'
import { State, type Change } from './state.js'
import { Tx } from './tx.js'
import type { WorldSources } from './layering.js'
import { WorldIndex, type World } from './world.js'

export interface EngineOptions {
  /** The world, or the index of one already made (sessions share their world's). */
  world: World | WorldIndex
  /** Where the world's records and rules came from (the files), with a World; an index carries its own. */
  sources?: WorldSources
  state?: State
  /**
   * Persists a transaction's changes; resolves when they are durable. When they cannot be made
   * durable it calls `undo` (the transaction's changes taken back from the state, before anything
   * else runs) and rejects. `soft`: nobody waits for them (a read's coverage counts): the store may
   * hold them a moment, to write them with others.
   */
  persist?: (changes: Change[], undo?: () => void, soft?: boolean) => Promise<void>
  /**
   * A store that several processes share (PostgreSQL): every transaction runs inside one of its
   * turns, on the state as the store has it. None: this process alone owns its state.
   */
  gate?: Gate
  /** Real time in epoch ms (tests inject a fake). */
  realNow?: () => number
  /** A number in [0, 1), for OTPs. */
  random?: () => number
  newId?: () => string
  /** Start the sandbox clock at this time, frozen or running, when the state has no clock yet (and on reset). */
  clockStart?: ClockStart
  /** How many SMS messages to keep per MSISDN (oldest are dropped). */
  smsPerMsisdn?: number
  /** How many SMS messages to keep in all (oldest are dropped). */
  maxSms?: number
  /** How many verification requests (OTP and consent) to keep; the oldest are dropped (a dropped id answers INVALID_PIN). */
  maxVerifications?: number
  /** How many charges each subscription's history keeps (oldest are dropped; `charge_count` counts all). */
  chargesPerSubscription?: number
  /** How many subscriptions a session keeps (none is dropped: past it a new one is refused; default 100,000). */
  maxSubscriptions?: number
  /**
   * A long clock move (or catch-up) runs in batches: each one transaction, committed with the clock
   * at its end, then the host gets a turn (`yieldToHost`). A batch ends at the first event time after
   * this many events (default 250,000) or, with a `workClock`, after `moveBatchMs` of work (default
   * 500), whichever comes first: a move of tens of thousands of events stays one batch.
   */
  moveBatchEvents?: number
  moveBatchMs?: number
  /** Monotonic milliseconds (`performance.now`), to measure a batch's work; none: batches by count only. */
  workClock?: () => number
  /** Gives the host's event loop a turn between two batches of a long clock move (the server: `setImmediate`, so requests and signals are served meanwhile). */
  yieldToHost?: () => Promise<void>
  /** The regexes of runtime rules held for every session of a host, under one budget (default: this engine's own). */
  regexPool?: RegexPool
}

/**
 * The turns of a store that several processes share. A turn holds the store's lock; as it begins the
 * state gets every change the other processes made (answered, so the engine can re-derive what it
 * keeps beside the state and tell its listeners). Whoever entered runs its transaction at once (in
 * the microtasks that follow); its `persist` joins the turn, whose changes are written together as
 * it ends.
 */
export interface Gate {
  /** Resolves once a transaction may run: this process holds the store's lock, its state is up to date (`soft`: only
   * soft changes to write, a read's counts, which make no session anew: one another process deleted rejects SESSION_NOT_FOUND). */
  enter(soft?: boolean): Promise<readonly Change[]>
  /** Brings the state up to date without a lock (before a read: what any process wrote is seen). */
  sync(): Promise<readonly Change[]>
}

export interface Limits {
  smsPerMsisdn: number
  maxSms: number
  maxVerifications: number
  chargesPerSubscription: number
  maxSubscriptions: number
  moveBatchEvents: number
  moveBatchMs: number
}

/**
 * A transaction's answer, available at once. `durable` resolves when its changes survive a crash;
 * it is null when nothing changed (a read answers without waiting).
 */
export interface Committed<T> {
  result: T
  durable: Promise<void> | null
}

/**
 * Runs every event due at or before `to` (recorded in `log`, if any). With a `budget` (a batch of a
 * long move), stops once that many events ran or `overTime()` says so (asked every 1,024 events),
 * before the first event later than both `floor` and the last one run: answers that time (every
 * event up to it ran, none after), or null when every event up to `to` ran.
 */
export type RunDue = (tx: Tx, to: number, log: EventLog | null, budget?: Budget) => number | null

/** When a batch of a long move ends (see `RunDue`). */
export interface Budget {
  events: number
  floor?: number
  overTime?: () => boolean
}

/** A soft change as an update of the value a record has when it is written (see `EngineContext.soft`). */
interface SoftUpdate {
  c: 'counters' | 'meta'
  id: string
  update: (value: unknown) => unknown
}

export class EngineContext {
  readonly state: State
  readonly world: WorldIndex
  readonly ruleset: RuleSet
  /** When each record next needs the clock; entries carry a subscription's renewal plan once made. */
  readonly queue: EventQueue<RenewalPlan>
  readonly clock: Clock
  readonly limits: Limits
  readonly newId: () => string
  readonly random: () => number
  readonly clockStart: ClockStart | undefined
  readonly sources: WorldSources | undefined
  private readonly persist: (changes: Change[], undo?: () => void, soft?: boolean) => Promise<void>
  private due: RunDue = () => null
  readonly yieldToHost: () => Promise<void>
  readonly workClock: (() => number) | undefined
  /** The clock move or catch-up running now (they take turns; writes wait for it), or null. */
  private moving: Promise<void> | null = null
  /** Set when the host shuts down: a running move stops at its next batch boundary. */
  interrupted = false
  /** Transactions taken back so far (failed writes): a move runs no batch on a state taken back under it. */
  rollbacks = 0
  /** The coverage counts (set once, by the engine), for the flows that decide outcomes. */
  coverage!: Coverage
  private readonly listeners = new Set<(changes: readonly Change[]) => void>()
  /** Records changed by `soft` and not yet durable (collection and id; the value is read as it is written). */
  private readonly softPending = new Map<string, { c: 'counters' | 'meta'; id: string }>()
  private softWriting = false
  /** With a gate: the soft changes not yet written, as updates (made in a turn, on the state as the store has it). */
  private softUpdates: SoftUpdate[] = []
  private softTurn: Promise<void> | null = null
  readonly gate: Gate | undefined

  constructor(opts: EngineOptions) {
    this.state = opts.state ?? new State()
    this.persist = opts.persist ?? (async () => {})
    this.gate = opts.gate
    this.clock = new Clock(this.state, opts.realNow ?? Date.now)
    this.random = opts.random ?? Math.random
    this.newId = opts.newId ?? randomUUID
    this.limits = {
      smsPerMsisdn: opts.smsPerMsisdn ?? 50,
      chargesPerSubscription: Math.max(1, opts.chargesPerSubscription ?? 100),
      maxSms: Math.max(1, opts.maxSms ?? 50_000),
      maxVerifications: Math.max(1, opts.maxVerifications ?? 50_000),
      maxSubscriptions: Math.max(1, opts.maxSubscriptions ?? DEFAULT_MAX_SUBSCRIPTIONS),
      moveBatchEvents: Math.max(1, opts.moveBatchEvents ?? 250_000),
      moveBatchMs: Math.max(1, opts.moveBatchMs ?? 500),
    }
    this.workClock = opts.workClock
    this.yieldToHost = opts.yieldToHost ?? (() => Promise.resolve())
    this.clockStart = opts.clockStart
    this.world = opts.world instanceof WorldIndex ? opts.world : new WorldIndex(opts.world, opts.sources)
    this.sources = this.world.sources
    this.ruleset = new RuleSet(this.state, this.world.world.rules, this.sources?.rules, opts.regexPool)
    this.queue = new EventQueue(this.state)
  }

  /** Sets what runs the due events (the renewals module; set once, by the engine). */
  runDueWith(due: RunDue): void {
    this.due = due
  }

  /** Runs the events due by `to`, in time order (see `RunDue` for `budget`). */
  runDue(tx: Tx, to: number, log: EventLog | null, budget?: Budget): number | null {
    return this.due(tx, to, log, budget)
  }

  /** The budget of one batch of a long move that starts now, ending no earlier than `floor`. */
  batch(floor?: number): Budget {
    const clock = this.workClock
    if (!clock) return { events: this.limits.moveBatchEvents, floor }
    const end = clock() + this.limits.moveBatchMs
    return { events: this.limits.moveBatchEvents, floor, overTime: () => clock() >= end }
  }

  /** Resolves once no clock move runs; null when none runs (the hot path reads one field). */
  get busy(): Promise<void> | null {
    return this.moving
  }

  /** Waits until no move runs (a move queued meanwhile is waited for too). */
  async idle(): Promise<void> {
    while (this.moving) await this.moving
  }

  /**
   * Runs `fn` (a clock move, a catch-up) alone: after the move before it, and every write that comes
   * meanwhile waits for it. Its batches take `transaction` directly.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    await this.idle()
    let release!: () => void
    this.moving = new Promise<void>((resolve) => (release = resolve))
    try {
      return await fn()
    } finally {
      this.moving = null
      release()
    }
  }

  /**
   * The one transaction path. Runs `fn` in one transaction, at once, with the sandbox time read as
   * it starts; first the events due by then run (every operation sees the world as of now), unless
   * `catchUp` is false (a clock move runs them itself, to record them). What was applied before an
   * error is persisted all the same: memory and disk never differ. Changes that cannot be made
   * durable are taken back (`rollback`): afterwards the sandbox answers as if the call never ran.
   */
  transaction<T>(fn: (tx: Tx, now: number) => T, catchUp = true): Committed<T> {
    const tx = new Tx(this.state)
    let result: T
    try {
      const now = this.clock.now()
      if (catchUp) this.due(tx, now, null)
      result = fn(tx, now)
    } catch (e) {
      if (tx.size) {
        const changes = tx.changes
        this.tell(changes)
        void this.persist(changes, () => this.rollback(tx)).catch(() => {})
      }
      throw e
    }
    if (!tx.size) return { result, durable: null }
    const changes = tx.changes
    this.tell(changes)
    const durable = this.persist(changes, () => this.rollback(tx))
    // Soft changes that waited for writes to work again go as soon as one does.
    if (this.softPending.size && !this.softWriting)
      durable.then(
        () => this.writeSoft(),
        () => {},
      )
    return { result, durable }
  }

  /**
   * A change nobody waits for (what a read such as Status adds to the coverage counts): `update`
   * makes the record's next value from its value now (null: deleted). Applied at once, written on
   * its own soon after (all soft changes of a moment in one write). While writes fail it waits in
   * memory and is written after the next write that works. With a gate it is made in a turn of its
   * own, on the state as the store has it then (another process may have counted meanwhile).
   */
  soft(c: 'counters' | 'meta', id: string, update: (value: unknown) => unknown): void {
    if (this.gate) {
      // Written in this process's next turn, or by the next read or timer tick (softSettled): not a turn each.
      this.softUpdates.push({ c, id, update })
      return
    }
    const map = this.state[c] as Map<string, unknown>
    const v = update(map.get(id))
    if (v === null) map.delete(id)
    else map.set(id, v)
    this.softPending.set(c + '|' + id, { c, id })
    if (!this.softWriting) {
      this.softWriting = true
      queueMicrotask(() => this.writeSoft())
    }
  }

  private writeSoft(): void {
    if (!this.softPending.size) {
      this.softWriting = false
      return
    }
    this.softWriting = true
    const records = [...this.softPending.values()]
    this.softPending.clear()
    // The values as they are now: a later write of the same record never goes before an older one.
    const changes: Change[] = records.map(({ c, id }) => ({ c, id, v: (this.state[c] as Map<string, unknown>).get(id) ?? null }))
    this.persist(changes, undefined, true).then(
      () => this.writeSoft(),
      () => {
        for (const r of records) if (!this.softPending.has(r.c + '|' + r.id)) this.softPending.set(r.c + '|' + r.id, r)
        this.softWriting = false
      },
    )
  }

  /** The soft updates waiting, written in a turn of their own; kept for a later try when the store is away. */
  private writeSoftInTurn(): Promise<void> {
    return (this.softTurn ??= (async () => {
      try {
        if (!this.softUpdates.length) return
        try {
          // Entering writes them (see enterTurn); the store being away leaves them waiting; a session deleted, nowhere.
          await this.enterTurn(true)
        } catch (e) {
          if (e instanceof SandboxError && e.code === 'SESSION_NOT_FOUND') this.softUpdates = []
        }
      } finally {
        this.softTurn = null
      }
    })())
  }

  /** Resolves once the soft changes made so far are written (or could not be): a read that follows sees them. */
  async softSettled(): Promise<void> {
    if (this.softUpdates.length) await this.writeSoftInTurn()
  }

  /** With a gate: waits for a turn and takes in what the other processes changed; soft updates waiting go in it first. */
  async enterTurn(soft = false): Promise<void> {
    this.took(await this.gate!.enter(soft))
    if (this.softUpdates.length) this.softInTurn()
  }

  /** The soft updates waiting, as a transaction of the turn held now; kept for a later try when it is not written. */
  private softInTurn(): Promise<void> | null {
    const updates = this.softUpdates
    this.softUpdates = []
    const done = this.transaction((tx) => {
      const maps = this.state
      for (const { c, id, update } of updates) {
        const v = update((maps[c] as Map<string, unknown>).get(id))
        if (v !== null) tx.put(c, id, v)
        else if ((maps[c] as Map<string, unknown>).has(id)) tx.del(c, id)
      }
    }, false)
    const durable = done.durable?.catch((e: unknown) => {
      this.softUpdates = updates.concat(this.softUpdates)
      throw e
    })
    durable?.catch(() => {})
    return durable ?? null
  }

  /**
   * With a gate, before a call that writes only when events fall due or a counting rule decides
   * (Status): takes in what the other processes changed without the lock, and takes a turn only then.
   */
  async enterRead(subscriptionId: string): Promise<void> {
    this.took(await this.gate!.sync())
    const next = this.queue.nextAt()
    // A second of margin: a running clock may bring an event due before the call runs.
    if (next !== null && next <= this.clock.now() + 1000) return this.enterTurn()
    // A rule of the call's steps that counts (`nth`, `times`, a drawn delay) writes its count: that takes the lock too.
    const sub = this.state.subs.get(subscriptionId)
    if (sub && (this.ruleset.mayCount('api', sub) || this.ruleset.mayCount('status', sub))) return this.enterTurn()
  }

  /** With a gate: takes in what the other processes changed (no lock: before a read). */
  async sync(): Promise<void> {
    if (this.gate) this.took(await this.gate.sync())
  }

  /** Changes another process made, now in the state: what is derived from it is read anew, listeners hear them. */
  private took(changes: readonly Change[]): void {
    if (!changes.length) return
    const { queue, state, ruleset } = this
    if (changes.some((c) => 'reset' in c)) {
      // Read anew; a reset made elsewhere (not a state the store read afresh) starts the rules' decision counts over here too.
      queue.rebuild()
      ruleset.reload()
      if (changes.some((c) => 'reset' in c && !c.reloaded)) ruleset.resetCounts()
    } else {
      // Only what changed: the queue keeps stale entries anyway (skipped when their time comes).
      let rules = false
      for (const c of changes) {
        if (!('c' in c)) continue
        if (c.c === 'subs') {
          const sub = state.subs.get(c.id)
          if (sub) queue.scheduleSub(sub)
        } else if (c.c === 'verifs') {
          const v = state.verifs.get(c.id)
          if (v) queue.scheduleVerif(v)
        } else if (c.c === 'rules') rules = true
      }
      if (rules) ruleset.reload()
    }
    this.tell(changes)
    this.onTaken?.(changes)
  }

  /** Told of the changes other processes made (a shared store), after the listeners (set once, by the engine). */
  onTaken: ((changes: readonly Change[]) => void) | undefined

  /** Whether anyone listens to the changes (the console's stream) or waits for them (an OTP long poll). */
  get listened(): boolean {
    return this.listeners.size > 0
  }

  /**
   * Takes a transaction's changes back (its write failed). The store calls this for every
   * transaction of a failed write and those queued behind it, the latest first, so each one finds
   * the state as it left it. What is derived from the state (due events, runtime rules) is read anew.
   */
  private rollback(tx: Tx): void {
    this.rollbacks++
    tx.rollback()
    this.queue.rebuild()
    this.ruleset.reload()
  }

  /** Calls `listener` with the changes of every transaction from now on, as it ends; returns the unsubscribe function. */
  listen(listener: (changes: readonly Change[]) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Tells the change listeners (the console's live stream) what a transaction changed; nothing when none listen. */
  private tell(changes: readonly Change[]): void {
    if (this.listeners.size) for (const l of this.listeners) l(changes)
  }

  /** `transaction` once no clock move runs, answered once its changes are durable (the control operations). */
  async write<T>(fn: (tx: Tx, now: number) => T, catchUp = true): Promise<T> {
    if (this.moving) await this.idle()
    if (this.gate) await this.enterTurn()
    const done = this.transaction(fn, catchUp)
    if (done.durable) await done.durable
    return done.result
  }

  /** A number of random digits (an OTP). */
  randomDigits(n: number): string {
    let s = ''
    for (let i = 0; i < n; i++) s += Math.floor(this.random() * 10).toString()
    return s
  }
}
