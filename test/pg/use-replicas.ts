import { afterAll, afterEach, beforeEach } from 'vitest'
import { startSandbox, type RunningSandbox } from '../../src/server.js'
import { serve, type Served } from '../cli/run.js'
import { cutProxy, type CutProxy } from './cut-proxy.js'
import { replicas, stopAll } from './replicas.js'

type SandboxOptions = NonNullable<Parameters<typeof startSandbox>[0]>

/**
 * The replicas a describe block starts on the test PostgreSQL, stopped for it: those a test starts
 * once it ends, those a `beforeAll` starts once the block ends. A block reads
 * `const replicas = useReplicas()`, then in a test `const [a, b] = await replicas.start(url, 2)`.
 *
 * Stopping, it first lets go of what would keep a replica from exiting: the proxies it started are
 * healed (closed once the replicas are gone), and a replica a test SIGSTOPped is continued. When a test
 * failed, every replica's output is printed. Hooks the block registers after `useReplicas()` run
 * before these (a database stopped by a test started again, say).
 */
export interface Replicas {
  /** `n` replicas of `dcb serve --store url ARGS`, started one after another. */
  start(url: string, n?: number, args?: string[]): Promise<Served[]>
  /** One `dcb serve ARGS` (its own --port, --in-memory, …). */
  serve(args: string[], opts?: Parameters<typeof serve>[1]): Promise<Served>
  /** A server in this process (`startSandbox`), closed as the replicas are stopped. */
  inProcess(opts: SandboxOptions): Promise<RunningSandbox>
  /** A cut proxy in front of the server on `port`, for a replica's `--store` URL. */
  proxy(port: number): Promise<CutProxy>
  /** Stops `list` now (every replica started so far when not given), as a restart of them does first. */
  stop(list?: Served[]): Promise<void>
}

export function useReplicas(): Replicas {
  /** Started by a beforeAll (stopped after the block), and by the test under way (stopped after it). */
  const ofBlock: Scope = scope()
  const ofTest: Scope = scope()
  let inTest = false
  const current = () => (inTest ? ofTest : ofBlock)

  beforeEach(() => {
    inTest = true
  })
  afterEach(async (ctx) => {
    inTest = false
    if (ctx.task.result?.state === 'fail')
      for (const x of [...ofBlock.served, ...ofTest.served]) console.error(`replica ${x.url} (exit ${x.child.exitCode}):\n${x.output()}`)
    await ofTest.end()
  })
  afterAll(async () => {
    await ofBlock.end()
  })

  return {
    async start(url, n = 1, args = []) {
      const list = await replicas(url, n, args)
      current().served.push(...list)
      return list
    },
    async serve(args, opts) {
      const one = await serve(args, opts)
      current().served.push(one)
      return one
    },
    async inProcess(opts) {
      // Its close() closes once: a test may close it first.
      const running = await startSandbox(opts)
      current().inProcess.push(running)
      return running
    },
    async proxy(port) {
      const made = await cutProxy(port)
      current().proxies.push(made)
      return made
    },
    async stop(list) {
      await stopAll(list ?? [...ofBlock.served, ...ofTest.served])
    },
  }
}

interface Scope {
  served: Served[]
  inProcess: RunningSandbox[]
  proxies: CutProxy[]
  end(): Promise<void>
}

function scope(): Scope {
  const s: Scope = {
    served: [],
    inProcess: [],
    proxies: [],
    async end() {
      const { served, inProcess, proxies } = s
      s.served = []
      s.inProcess = []
      s.proxies = []
      for (const p of proxies) p.heal()
      for (const x of served) if (x.child.exitCode === null && x.child.signalCode === null) x.child.kill('SIGCONT')
      await Promise.all([stopAll(served), ...inProcess.map((r) => r.close())])
      await Promise.all(proxies.map((p) => p.close()))
    },
  }
  return s
}
