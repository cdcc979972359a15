/**
 * msw in the CommonJS build of `dcb-sandbox/msw` (tsup.config.ts puts this file in msw-peer.ts's
 * place): require('msw'), and where that cannot work, one error that says why and what does, instead
 * of a stack from inside msw. msw 2.11.3 and later need packages that are ES modules only (until-async,
 * rettime): require() loads them only on a Node with require(esm) (20.19+, 22.12+, 24), and jest only
 * in its ESM mode on Node 24.9+.
 */
import type * as Msw from 'msw'

const GUIDE = 'node_modules/dcb-sandbox/docs/reference/library.md#commonjs-and-jest'

function loadMsw(): typeof Msw {
  try {
    return require('msw') as typeof Msw
  } catch (e) {
    const why = whyNot(e)
    if (why === undefined) throw e
    throw new Error(why, { cause: e })
  }
}

/** The words for a require('msw') that failed on an ES module, or undefined (another failure, such as msw not installed, speaks for itself). */
function whyNot(e: unknown): string | undefined {
  const err = e as { code?: unknown; message?: unknown } | null
  const first = String(err?.message ?? e).split('\n')[0]!
  // Node's code, and jest's words (its require() of an ES module has no code).
  if (err?.code !== 'ERR_REQUIRE_ESM' && !first.startsWith('Must use import to load ES Module')) return undefined
  // The package of the ES module the error names first (require() of ES Module PATH from PATH).
  const path = /ES Module:? (\S+)/.exec(first)?.[1] ?? ''
  const needed = [...path.matchAll(/node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/g)].pop()?.[1] ?? 'a package'
  return (
    `dcb-sandbox/msw: require('msw') cannot load msw ${mswVersion()}: it needs ${needed}, an ES module only, and ${requireEsmHere()}. ` +
    `msw 2.11.2 and earlier are CommonJS throughout; without msw, sandbox.fetch answers the same requests (${GUIDE})`
  )
}

/** Why require() of an ES module fails here. Jest gives every module it loads its own `jest`. */
function requireEsmHere(): string {
  if (typeof jest !== 'undefined') return 'jest does not require() ES modules here (it does in its ESM mode, node --experimental-vm-modules, on Node 24.9+)'
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
  const byDefault = major >= 23 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19)
  return byDefault
    ? `Node ${process.version} runs with require(esm) turned off (--no-experimental-require-module)`
    : `Node ${process.version} does not require() ES modules (20.19+, 22.12+ and 24 do)`
}

declare const jest: unknown

function mswVersion(): string {
  try {
    return (require('msw/package.json') as { version: string }).version
  } catch {
    return '(version unknown)'
  }
}

export const { HttpHandler: HttpHandlerClass } = loadMsw()
