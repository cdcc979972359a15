// The benchmarks page's table (docs/reference/benchmarks.md, between its markers), written from
// `results`: the one place the figures are published.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, SECONDS, middle, results } from './common.js'

/** The stages measured after the full run, with their dates (a partial run: `node bench/run.js STAGE`). */
function laterStages() {
  const later = Object.entries(results.stages ?? {}).map(([name, date]) => `\`${name}\` ${date.slice(0, 10)}`)
  return later.length ? ` Measured again since: ${later.join(', ')}.` : ''
}

/** The table's markdown: a line on when and where, then a row for each figure measured. */
function markdown() {
  const f = results.figures
  const m = results.machine
  const rows = [
    `Measured ${results.date.slice(0, 10)} on ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, Node ${m.node} (${m.os}); ${SECONDS} s per load, all on 127.0.0.1.${laterStages()}`,
    '',
    '| figure | value | goal |',
    '|---|---|---|',
  ]
  if (f.status) {
    rows.push(
      `| Status throughput, dcb / bare node:http (median of ${f.status.rounds.length} paired rounds after a warm-up: ${f.status.rounds.join(', ')}) | ${f.status.dcb_req_s} / ${f.status.bare_req_s} req/s = **${f.status.ratio}** (p99 ${f.status.dcb_p99_ms} / ${f.status.bare_p99_ms} ms) | ratio >= 0.8 |`,
    )
    if (f.status.base)
      rows.push(
        `| Status throughput / bare node:http, before (${f.status.base.rounds.join(', ')}) and after, in the same rounds; after / before per round, median | before **${f.status.base.ratio}**, after **${f.status.ratio}**: after / before = **${f.status.after_over_before}** (server CPU ${f.status.base.cpu_us} -> ${f.status.dcb_cpu_us} µs per call) | up (> 1) |`,
      )
    rows.push(
      `| server CPU per Status call, dcb / bare | ${f.status.dcb_cpu_us} / ${f.status.bare_cpu_us} µs = ${Math.round((f.status.bare_cpu_us / f.status.dcb_cpu_us) * 100) / 100} | |`,
    )
  }
  if (f.console)
    rows.push(
      `| Status throughput with one console open (an SSE client reading /_sandbox/events) / with none (median of ${f.console.rounds.length} paired rounds: ${f.console.rounds.join(', ')}) | ${f.console.with_req_s} / ${f.console.without_req_s} req/s = **${f.console.ratio}** (${f.console.streamed_kib} KiB streamed) | within 5% (>= 0.95) |`,
    )
  if (f.console?.with_cpu_us)
    rows.push(
      `| server CPU per Status call, console open / none (load average ${f.console.load_average.toFixed(1)} during the run) | ${f.console.with_cpu_us} / ${f.console.without_cpu_us} µs | |`,
    )
  if (f.otp_flows) {
    const o = f.otp_flows
    rows.push(`| full OTP flows (init, read OTP, verify), 16 clients, each answer durable | ${o.flows_s} flows/s (p99 ${o.flow_p99_ms} ms) | |`)
    if (o.file_over_memory)
      rows.push(
        `| OTP flows, file store / in-memory store (median of ${o.rounds.length} paired rounds: ${o.rounds.join(', ')}) | ${o.flows_s} / ${o.memory_flows_s} flows/s = **${o.file_over_memory}** | >= 0.75 |`,
      )
    if (o.base)
      rows.push(
        o.base.cpu_rounds
          ? `| server CPU per OTP flow, file store, before / after (medians; after / before per round ${o.base.cpu_rounds.join(', ')}, median; flows/s after / before ${o.base.after_over_before}) | ${o.base.cpu_us} / ${o.cpu_us} µs: **${middle(o.base.cpu_rounds)}** | <= 0.67 (a third less) |`
          : `| server CPU per OTP flow, file store, before / after (same rounds; flows/s after / before ${o.base.after_over_before}) | ${o.base.cpu_us} / ${o.cpu_us} µs = **${Math.round((o.cpu_us / o.base.cpu_us) * 100) / 100}** | <= 0.67 (a third less) |`,
      )
    if (o.base?.cpu_us_whole)
      rows.push(
        `| server CPU per OTP flow, file store, before / after, over the whole run (every measured round, and what the rounds left running, a compaction, counted until the servers are idle${o.cpu_whole_idle === false ? ', but they were still busy 20 s after the last round: counted to then' : ''}; in memory ${o.memory_cpu_us_whole} µs) | ${o.base.cpu_us_whole} / ${o.cpu_us_whole} µs = **${Math.round((o.cpu_us_whole / o.base.cpu_us_whole) * 100) / 100}** | <= 0.67 (a third less) |`,
      )
    if (o.floor)
      rows.push(
        `| the floor under dcb, same rounds: bare node:http answering the three calls with canned envelopes / the same with each Init and Verify made durable as dcb does (O_DSYNC, zeroed ahead, each turn's lines in one write on the main thread; bench/floor-server.js): flows/s, and server CPU per flow beside dcb's with the file store | ${o.floor.flows_s} / ${o.floor.durable_flows_s} flows/s = ${o.floor.durable_over_bare}; ${o.floor.cpu_us} / ${o.floor.durable_cpu_us} µs (dcb ${o.cpu_us} µs${o.base ? `, the goal ${Math.round(o.base.cpu_us * 0.67)} µs` : ''}) | |`,
      )
  }
  if (f.instructions) {
    const i = f.instructions
    const k = (n) => `${Math.round(n / 1000)}k`
    const ratio = i.main.base ? ` = **${Math.round((i.main.file / i.main.base) * 100) / 100}** of the base's` : ''
    rows.push(
      `| instructions per OTP flow on the server's main thread, counted by valgrind (callgrind; ${i.warm_flows} warm-up flows, then ${i.counted_flows} counted${i.rounds > 1 ? `, median of ${i.rounds} rounds` : ''}): ${i.main.base ? 'base file store / ' : ''}file store / in memory / the floor (bare node:http); all threads beside (V8's compiler and GC helpers, which valgrind's slowdown distorts) | ${i.main.base ? `${k(i.main.base)} / ` : ''}${k(i.main.file)} / ${k(i.main.memory)} / ${k(i.main.floor)}${ratio}; all threads ${i.all.base ? `${k(i.all.base)} / ` : ''}${k(i.all.file)} / ${k(i.all.memory)} / ${k(i.all.floor)} | <= 0.67 of the base's (a third less) |`,
    )
    if (i.main.base_memory)
      rows.push(
        `| instructions per OTP flow on the main thread, the base in memory (no disk at all) / the goal (a third less than the base's file store) / the floor: what the base's engine, validation and HTTP layer took with nothing made durable | ${k(i.main.base_memory)} / ${k(i.main.base * 0.67)} / ${k(i.main.floor)}: the goal is **${Math.round(((i.main.base * 0.67) / i.main.base_memory) * 100) / 100}** of what the base took writing nothing | |`,
      )
  }
  if (f.shared) {
    const { file, one, three } = f.shared
    const by = `median of ${f.shared.rounds} paired rounds after a warm-up`
    rows.push(
      `| OTP flows (init, read OTP, verify), ${f.shared.flow_clients} clients: shared store (PostgreSQL ${f.shared.postgres}, one database) through 1 replica / through 3 replicas (each call to the next replica) / file store (${by}; per round 1 replica / file ${one.flow_rounds.join(', ')}, 3 replicas / file ${three.flow_rounds.join(', ')}) | ${one.flows_s} / ${three.flows_s} / ${file.flows_s} flows/s = **${one.flows_over_file}** / **${three.flows_over_file}** of the file store's (dcb CPU per flow, all replicas: ${one.flow_cpu_us} / ${three.flow_cpu_us} / ${file.flow_cpu_us} µs) | beside the file store's |`,
      `| Status, ${f.shared.status_clients} clients: shared store through 1 replica / through 3 replicas / file store (${by}; load average ${f.shared.load_average.toFixed(1)} at the end) | p50 ${one.status_p50_ms} / ${three.status_p50_ms} / ${file.status_p50_ms} ms, p99 **${one.status_p99_ms}** / **${three.status_p99_ms}** / ${file.status_p99_ms} ms; ${one.status_req_s} / ${three.status_req_s} / ${file.status_req_s} req/s (dcb CPU per call ${one.status_cpu_us} / ${three.status_cpu_us} / ${file.status_cpu_us} µs) | beside the file store's |`,
    )
  }
  if (f.write_p99)
    for (const [n, w] of Object.entries(f.write_p99))
      rows.push(
        `| write (Init) p99 with ${Number(n).toLocaleString('en')} stored subscriptions | ${w.p99_ms} ms (p50 ${w.p50_ms} ms, ${w.req_s} req/s) | flat, < 20 ms |`,
      )
  if (f.session_writes)
    rows.push(
      f.session_writes.default
        ? `| write (Init) p99 with ${f.session_writes.sessions.toLocaleString('en')} live sessions (each request in one of them, file store) / in the default session alone, same server, median of ${f.session_writes.rounds.length} alternating rounds (${f.session_writes.rounds.join(', ')} ms) | ${f.session_writes.p99_ms} / ${f.session_writes.default.p99_ms} ms (p50 ${f.session_writes.p50_ms} / ${f.session_writes.default.p50_ms} ms; ${f.session_writes.req_s} / ${f.session_writes.default.req_s} req/s; server CPU ${f.session_writes.cpu_us} / ${f.session_writes.default.cpu_us} µs per write) | flat (as the default session's) |`
        : `| write (Init) p99 with ${f.session_writes.sessions.toLocaleString('en')} live sessions (each request in one of them, file store) | ${f.session_writes.p99_ms} ms (p50 ${f.session_writes.p50_ms} ms, ${f.session_writes.req_s} req/s) | flat |`,
    )
  if (f.library) {
    const l = f.library
    rows.push(`| createSandbox() median (default world) | ${l.create_ms} ms | < 10 ms |`)
    rows.push(`| reset() median (3 subscriptions) | ${l.reset_ms} ms | < 1 ms |`)
    rows.push(
      l.fetch_cpu_us
        ? `| OTP flows (Init, sandbox.otp, Verify) in-process via sandbox.fetch, median of 3 alternating rounds | ${l.fetch_flows_s} flows/s (${l.fetch_cpu_us} µs CPU per flow: ${Math.round(1e6 / l.fetch_cpu_us)} flows per CPU-second) | >= 5,000/s |`
        : `| OTP flows (Init, sandbox.otp, Verify) in-process, via sandbox.fetch / via msw + global fetch | ${l.fetch_flows_s} / ${l.msw_flows_s} flows/s | >= 5,000/s |`,
    )
    if (l.msw_ceiling_flows_s)
      rows.push(
        `| OTP flows via msw + global fetch (sandboxHandlers) / msw's ceiling on this machine (the same 2 requests per flow answered by a handler returning a constant Response) | ${l.msw_flows_s} / ${l.msw_ceiling_flows_s} flows/s (${l.msw_cpu_us} / ${l.msw_ceiling_cpu_us} µs CPU per flow) | >= 5,000/s (above msw's ceiling here) |`,
      )
    rows.push(`| memory per empty session (1,000 sessions, heap after GC) | ${l.session_kb} KB | < 50 KB |`)
  }
  if (f.inits_rss) {
    rows.push(
      `| RSS 2 s after ${f.inits_rss.inits.toLocaleString('en')} Inits one after another (half to 200 handsets, half to new numbers), default caps${f.inits_rss.base_rss_mib ? `; before: ${f.inits_rss.base_rss_mib} MiB` : ''} | ${f.inits_rss.rss_mib} MiB | < 180 MiB |`,
    )
    const h = f.inits_rss.heap
    const b = f.inits_rss.base_heap
    const bytes = (x) => `${x.verification_bytes} / ${x.sms_bytes} / ${x.subscription_bytes} B (an OTP Init: ${x.otp_init_bytes} B)`
    if (h)
      rows.push(
        `| heap per retained verification / SMS / subscription (${h.records.toLocaleString('en')} of each kind in a fresh engine, changes serialized as the file store's write-ahead log does; heap growth after forced GC)${b ? `; before: ${bytes(b)}` : ''} | ${bytes(h)} | down, for the RSS goal above |`,
      )
    if (h?.at_caps_init_bytes)
      rows.push(
        `| heap per retained Init at the default caps under churn (${h.churn_inits.toLocaleString('en')} Inits in-process as the RSS load, heap after forced GC / the 50,000 verification requests kept, each with its SMS)${b?.at_caps_init_bytes ? `; before: ${b.at_caps_init_bytes} B` : ''} | ${h.at_caps_init_bytes} B | down, for the RSS goal above |`,
      )
  }
  if (f.serve)
    rows.push(
      f.serve.bare_ready_ms
        ? `| dcb serve: time to ready / a bare node:http server's, started in turns (median of 9 each)${f.serve.base_ready_ms ? `; before: ${f.serve.base_ready_ms} ms` : ''}; idle RSS | ${f.serve.ready_ms} / ${f.serve.bare_ready_ms} ms = **${f.serve.ratio}x**; ${f.serve.idle_rss_mib} MiB | <= 2x |`
        : `| dcb serve: time to ready / idle RSS | ${f.serve.ready_ms} ms / ${f.serve.idle_rss_mib} MiB | |`,
    )
  if (f.cli)
    rows.push(
      `| dcb status / dcb --help: process wall time${f.cli.base ? ` (before: ${f.cli.base.status_wall_ms} / ${f.cli.base.help_wall_ms} ms)` : ''} | ${f.cli.status_wall_ms} ms / ${f.cli.help_wall_ms} ms | no slower than before |`,
    )
  if (f.binary)
    rows.push(
      `| single executable (dist/dcb-linux-x64, ${f.binary.size_mib} MiB): serve time to ready / idle RSS; dcb status / dcb --help wall time | ${f.binary.ready_ms} ms / ${f.binary.idle_rss_mib} MiB; ${f.binary.status_wall_ms} ms / ${f.binary.help_wall_ms} ms | |`,
    )
  if (f.advance)
    for (const a of [].concat(f.advance))
      rows.push(
        `| clock/advance P1Y over ${a.subscriptions.toLocaleString('en')} monthly subscriptions started over a month (${a.events.toLocaleString('en')} renewals, each charged, recorded, with its SMS notice and its event in the answer; one durable write; over HTTP, median of 5 fresh servers) | ${a.ms} ms with the ${a.answer_mb ?? '?'} MB answer received and parsed (server ${a.server_ms ?? '?'} ms) | well under a second |`,
      )
  if (f.memory) {
    const q = (a) => [0, 1, 2, 3].map((k) => a.slice(Math.floor((k * a.length) / 4), Math.floor(((k + 1) * a.length) / 4)))
    const rq = q(f.memory.rss_samples_mib)
    rows.push(
      `| RSS over ${f.memory.requests.toLocaleString('en')} requests (half Init, every 2 s; a sawtooth between snapshot compactions) | max per quarter ${rq.map((x) => Math.max(...x)).join(' / ')} MiB; min per quarter ${rq.map((x) => Math.min(...x)).join(' / ')} MiB (${f.memory.seconds} s) | flat |`,
    )
  }
  return rows.join('\n')
}

export const PAGE = join(ROOT, 'docs', 'reference', 'benchmarks.md')
const MARKED = /(<!-- results:start -->\n)[\s\S]*?(\n<!-- results:end -->)/

/** The benchmarks page with the figures of `results` in its table (between its markers). */
export function pageWithResults() {
  const text = readFileSync(PAGE, 'utf8')
  if (!MARKED.test(text)) throw new Error(`${PAGE} has no <!-- results:start --> ... <!-- results:end --> block`)
  return text.replace(MARKED, (_, start, end) => start + markdown() + end)
}

/** Writes the figures into the benchmarks page of the docs, the one place they are published. */
export function writeResults() {
  writeFileSync(PAGE, pageWithResults())
  console.log(markdown())
}
