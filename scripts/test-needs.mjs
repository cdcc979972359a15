// npm test, first step: the tests need a few programs that npm does not install (Debian's chromium for
// the console's browser tests, jq for the scripting guide's coverage gate, python3 for the pty tests,
// pytest for the scripting guide's pytest example).
// Missing ones are installed with apt-get when we are root on Debian; otherwise the run stops at once
// with one line saying what to install, instead of failing a suite deep in the run.
import { execFileSync } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/** Each need: the Debian package that brings it and how to tell it is there (a file, a command, or a check that runs). */
const NEEDS = [
  { pkg: 'chromium', path: '/usr/bin/chromium' },
  { pkg: 'jq', command: 'jq' },
  { pkg: 'python3', command: 'python3' },
  // The python3 on the PATH (pyenv's, here) may lack pytest while Debian's has it once installed: either
  // does. DCB_TEST_NEEDS_SYSTEM_PYTHON (a test's hook) stands in for Debian's.
  {
    pkg: 'python3-pytest',
    checks: [
      ['python3', '-c', 'import pytest'],
      [process.env.DCB_TEST_NEEDS_SYSTEM_PYTHON ?? '/usr/bin/python3', '-c', 'import pytest'],
    ],
  },
]

function executable(file) {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

function onPath(command) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && executable(join(dir, command)))
}

/** DCB_TEST_NEEDS_MISSING (a test's hook) names packages to take as missing, comma-separated. */
const forced = new Set((process.env.DCB_TEST_NEEDS_MISSING ?? '').split(',').filter(Boolean))
/** True when the check exits 0; a python3 that is not there fails it too. */
function passes([command, ...args]) {
  try {
    execFileSync(command, args, { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const there = (n) => !forced.has(n.pkg) && (n.path ? executable(n.path) : n.checks ? n.checks.some(passes) : onPath(n.command))
const missing = () => NEEDS.filter((n) => !there(n)).map((n) => n.pkg)

let absent = missing()
if (absent.length === 0) process.exit(0)

const canInstall = process.getuid?.() === 0 && onPath('apt-get') && !process.env.DCB_TEST_NEEDS_NO_INSTALL
if (canInstall) {
  process.stderr.write(`npm test: installing ${absent.join(', ')} (apt-get, as root)\n`)
  try {
    execFileSync('apt-get', ['update'], { stdio: 'ignore' })
    execFileSync('apt-get', ['install', '-y', ...absent], { stdio: 'ignore' })
  } catch {
    // Said below with the packages still missing.
  }
  absent = missing()
  if (absent.length === 0) process.exit(0)
}
process.stderr.write(
  `npm test: the tests need ${absent.join(', ')}: install with \`sudo apt-get install ${absent.join(' ')}\` (Debian's packages), then run again\n`,
)
process.exit(1)
