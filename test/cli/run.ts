import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'dcb.js')

export interface Result {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the real binary to completion (stdin closed, no TTY). */
export function dcb(
  args: string[],
  opts: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number; input?: string } = {},
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(opts.input ?? '')
  })
}

export interface Served {
  child: ChildProcess
  url: string
  output: () => string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** Starts `dcb serve` and waits until it prints its URL. */
export function serve(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
      cwd: opts.cwd,
      env: { ...process.env, NO_COLOR: '1', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`dcb serve did not start: ${out}`))
    }, 15_000)
    const onData = (d: Buffer) => {
      out += d
      const m = /listening on (https?:\/\/\S+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({
          child,
          url: m[1]!,
          output: () => out,
          stop: (signal = 'SIGTERM') =>
            new Promise((res) => {
              // Ended already (a signal's end has no exit code: a SIGKILLed replica).
              if (child.exitCode !== null || child.signalCode !== null) return res(child.exitCode)
              child.once('exit', (code) => res(code))
              child.kill(signal)
            }),
        })
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (d) => (out += d))
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`dcb serve exited ${code}: ${out}`))
    })
  })
}
