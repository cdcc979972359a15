/**
 * One session's request log in a PostgreSQL database that several `dcb serve` replicas share:
 * the entries this replica answers go to the database (numbered there, after the answer, on a
 * connection of their own), and the request log lists every replica's, as the database numbered them.
 */
import type { FedRequestLog, RequestLogFeed, RequestLogRecord } from './request-log-feed.js'
import type { SessionDatabase } from './postgres-session.js'

export class PostgresRequestLogFeed implements RequestLogFeed {
  private requestLog: FedRequestLog | null = null
  private pending: string[] = []
  /** The entries on their way to the database, or null. */
  writing: Promise<void> | null = null

  constructor(
    private readonly db: SessionDatabase,
    private readonly name: string,
  ) {}

  /** The session's request log: its entries go to the database, and it holds every replica's. */
  attach(requestLog: FedRequestLog): void {
    this.requestLog = requestLog
    requestLog.feed = this
    requestLog.sync = () => this.refresh()
  }

  write(entry: RequestLogRecord): void {
    this.pending.push(JSON.stringify(entry))
    if (!this.writing) this.writing = this.writeAll()
  }

  private async writeAll(): Promise<void> {
    try {
      while (this.pending.length) {
        const batch = this.pending
        this.pending = []
        await this.db.writeRequests(this.name, batch, this.requestLog?.capacity ?? 1000).catch(() => {})
      }
    } finally {
      this.writing = null
    }
  }

  clear(): void {
    void this.db.clearRequests(this.name).catch(() => {})
  }

  /** Another replica cleared the request log (a reset): its entries here go too. */
  forgetAll(): void {
    this.requestLog?.forgetAll()
  }

  /**
   * The session was found deleted (and perhaps made anew elsewhere): the entries here and those not
   * written yet, of calls answered before, were the deleted session's; one made anew numbers from 1.
   */
  restart(): void {
    this.pending = []
    this.requestLog?.restart()
  }

  /** The request log gets the entries every replica wrote since its newest (this replica's own written first). */
  private async refresh(): Promise<void> {
    const requestLog = this.requestLog
    if (!requestLog) return
    await this.writing
    let rows: { id: string; entry: string }[]
    try {
      ;({ rows } = await this.db.pool.query<{ id: string; entry: string }>(
        `SELECT id, entry FROM (SELECT id, entry FROM dcb_requests WHERE session = $1 AND id >= $2 ORDER BY id DESC LIMIT $3) r ORDER BY id`,
        [this.name, requestLog.nextId, requestLog.capacity],
      ))
    } catch (e) {
      // The database away: the control API answers 503 STORE_UNAVAILABLE naming it, as for any read.
      throw this.db.unreadable(e)
    }
    for (const r of rows) requestLog.mirror(JSON.parse(r.entry) as RequestLogRecord, Number(r.id))
  }
}
