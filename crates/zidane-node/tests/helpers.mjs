// What the suites share: the package as a user loads it, and a few builders.
// `ZIDANE_NODE_ADDON` names the addon `cargo xtask node-test` built.

import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const here = path.dirname(fileURLToPath(import.meta.url))

export const packageDir = path.join(here, '..', 'npm')

/** The package, as `require('@zidane-rs/agent')` gives it. */
export const z = require(packageDir)

/** A fresh temporary folder, removed when the process exits. */
export function tempDir(prefix = 'zidane-node-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A promise and its resolver. */
export function deferred() {
  let resolve
  const promise = new Promise(r => (resolve = r))
  return { promise, resolve }
}

/** `console.error` lines written while `fn` runs. */
export async function capturingErrors(fn) {
  const lines = []
  const original = console.error
  console.error = (...args) => lines.push(args.map(a => (a instanceof Error ? a.message : String(a))).join(' '))
  try {
    const value = await fn()
    return { value, lines }
  } finally {
    console.error = original
  }
}
