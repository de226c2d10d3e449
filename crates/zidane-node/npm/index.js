// @zidane-rs/agent: the `zidane/agent` API of the reference, served by the
// zidane-rs Rust core through a native addon (crates/zidane-node).
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const HOOKS = require('./hooks.js')

const ADDON = 'zidane-agent.linux-x64-gnu.node'

function loadNative() {
  const tried = []
  for (const file of [process.env.ZIDANE_NODE_ADDON, path.join(__dirname, ADDON)]) {
    if (!file) continue
    tried.push(file)
    if (!fs.existsSync(file)) continue
    const mod = { exports: {} }
    process.dlopen(mod, file)
    return mod.exports
  }
  throw new Error(
    `@zidane-rs/agent: no native addon for ${process.platform}-${process.arch} (looked for ${tried.join(', ')}). ` +
      'This package ships linux-x64 (glibc); build another platform from the zidane-rs checkout (see its README).',
  )
}

const native = loadNative()

const PROVIDER = Symbol.for('zidane-rs.provider')
const PRESET = Symbol.for('zidane-rs.preset')
const BUS = Symbol.for('zidane-rs.bus')

/** Thrown by a member this build does not serve. */
class NotAvailableError extends Error {
  constructor(member) {
    super(`agent.${member} is not available in this build of @zidane-rs/agent`)
    this.name = 'NotAvailableError'
    this.member = member
  }
}

// ---------------------------------------------------------------- providers

let providerCount = 0

function providerOf(kind, name, options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${name}(): options must be an object`)
  // Agents made with the same provider object share one connection pool.
  const spec = {
    id: ++providerCount,
    kind,
    apiKey: options.apiKey ?? undefined,
    baseURL: options.baseURL ?? options.baseUrl ?? undefined,
    model: options.defaultModel ?? options.model ?? undefined,
  }
  return Object.freeze({ name: options.name ?? name, meta: Object.freeze({ defaultModel: spec.model }), [PROVIDER]: spec })
}

/** The Anthropic Messages API (`ANTHROPIC_API_KEY` when `apiKey` is unset). */
function anthropic(options) {
  return providerOf('anthropic', 'anthropic', options)
}

/** OpenAI's Chat Completions API, or any compatible server with `baseURL`. */
function openai(options) {
  return providerOf('openai', 'openai', options)
}

/** An OpenAI-compatible server (OpenRouter, Cerebras, vLLM, llama.cpp, Ollama) at `baseURL`. */
function openaiCompatible(options = {}) {
  if (!options.baseURL) throw new TypeError('openaiCompatible(): `baseURL` is required')
  return providerOf('openai-compatible', options.name ?? 'openai-compatible', options)
}

// ------------------------------------------------------------------ presets

/** The coding preset: files, search, shell, in the current folder (`cwd` to change it). */
const basic = Object.freeze({ name: 'basic', [PRESET]: 'basic' })

// ---------------------------------------------------------------- hook bus

function checkHookName(name) {
  if (!Object.prototype.hasOwnProperty.call(HOOKS, name)) {
    throw new Error(`unknown hook "${name}" (see AgentHooks for the ${Object.keys(HOOKS).length} names)`)
  }
}

/** The hook bus of an agent: handlers keyed by the reference's hook names. */
class AgentHookBus {
  constructor(agentNative) {
    this[BUS] = { native: agentNative, handlers: new Map(), subs: new Map() }
  }

  /** Registers `handler` on `name`; returns the function that removes it. */
  hook(name, handler) {
    checkHookName(name)
    if (typeof handler !== 'function') throw new TypeError(`hook "${name}": the handler must be a function`)
    const bus = this[BUS]
    let list = bus.handlers.get(name)
    if (!list) {
      list = []
      bus.handlers.set(name, list)
    }
    list.push(handler)
    if (!bus.subs.has(name) && bus.native) bus.subs.set(name, bus.native.subscribe(name))
    let done = false
    return () => {
      if (done) return
      done = true
      this.removeHook(name, handler)
    }
  }

  /** Same as `hook`. */
  on(name, handler) {
    return this.hook(name, handler)
  }

  /** Registers a handler that runs once. */
  hookOnce(name, handler) {
    const off = this.hook(name, (...args) => {
      off()
      return handler(...args)
    })
    return off
  }

  /** Registers several handlers at once; returns the function that removes them all. */
  addHooks(map) {
    const offs = []
    for (const [name, value] of Object.entries(map ?? {})) {
      for (const handler of Array.isArray(value) ? value : [value]) offs.push(this.hook(name, handler))
    }
    return () => offs.forEach(off => off())
  }

  /** Removes `handler` from `name`. */
  removeHook(name, handler) {
    const bus = this[BUS]
    const list = bus.handlers.get(name)
    if (!list) return
    const at = list.indexOf(handler)
    if (at >= 0) list.splice(at, 1)
    if (list.length === 0) {
      bus.handlers.delete(name)
      const id = bus.subs.get(name)
      bus.subs.delete(name)
      if (id !== undefined && bus.native) bus.native.unsubscribe(id)
    }
  }

  /** Runs the handlers of `name` on `payload`, in order; a handler that throws is logged. */
  async callHook(name, payload) {
    const list = this[BUS].handlers.get(name)
    if (!list) return
    for (const handler of [...list]) {
      try {
        await handler(payload)
      } catch (error) {
        console.error(`[@zidane-rs/agent] a "${name}" hook handler threw; the run goes on:`, error)
      }
    }
  }
}

// ------------------------------------------------------------------ tools

function toolOutput(result) {
  if (typeof result === 'string') return { content: result }
  if (Array.isArray(result)) return { content: result }
  if (result && typeof result === 'object' && 'content' in result) {
    return { content: result.content, isError: !!result.isError, metadata: result.metadata ?? {} }
  }
  if (result === undefined || result === null) return { content: '' }
  return { content: JSON.stringify(result) }
}

function errorMessage(error) {
  if (error instanceof Error) return error.message
  return String(error)
}

// ---------------------------------------------------------------- the agent

function normalizeOptions(options) {
  if (!options || typeof options !== 'object') throw new TypeError('createAgent: options are required')
  const providers = Array.isArray(options.provider) ? options.provider : [options.provider]
  if (providers.length === 0 || providers.some(p => !p || !p[PROVIDER])) {
    throw new TypeError('createAgent: `provider` must be anthropic(), openai() or openaiCompatible() (or a list of them)')
  }
  const tools = []
  const bodies = new Map()
  for (const [name, def] of Object.entries(options.tools ?? {})) {
    if (!def || typeof def.execute !== 'function') throw new TypeError(`tool "${name}": \`execute\` must be a function`)
    tools.push({
      name,
      description: def.description ?? '',
      inputSchema: def.inputSchema ?? def.parameters ?? { type: 'object', properties: {} },
      parallel: def.parallel ?? def.parallelSafe ?? true,
    })
    bodies.set(name, def.execute)
  }
  const session = options.session
  const durable = options.durable
  const spec = {
    provider: providers.map(p => p[PROVIDER]),
    name: options.name,
    system: options.system,
    model: options.model,
    maxTokens: options.maxTokens,
    preset: options[PRESET],
    cwd: options.cwd,
    tools,
    maxTurns: options.behavior?.maxTurns ?? options.maxTurns,
    session: session ? { path: session.path ?? session.store?.path, id: session.id } : undefined,
    sessionId: options.sessionId,
    durable: durable ? { path: durable.path ?? durable.runtime?.path, onInterrupted: durable.onInterrupted } : undefined,
  }
  if (spec.session && !spec.session.path) throw new TypeError('createAgent: `session` needs the SQLite file: sqliteSession(path)')
  if (spec.durable && !spec.durable.path) throw new TypeError('createAgent: `durable` needs the SQLite file: checkpointRuntime(path)')
  return { spec, bodies }
}

const NOT_SERVED = [
  'activateSkill',
  'deactivateSkill',
  'activeSkills',
  'decide',
  'ensureExecution',
  'execution',
  'getContextSegments',
  'handle',
  'hasPendingTaskNotifications',
  'killBackgroundTask',
  'mcpConnection',
  'mcpServers',
  'suspend',
  'toolState',
]

class Agent {
  constructor(options) {
    const { spec, bodies } = normalizeOptions(options)
    const aborts = new Map()
    const summaries = new Map()
    let hooks
    const dispatch = async envelope => {
      const message = JSON.parse(envelope)
      switch (message.kind) {
        case 'hook':
          return dispatchHook(hooks, message)
        case 'tool':
          return runTool(bodies, aborts, message)
        case 'abort-tool':
          aborts.get(message.callId)?.abort(message.reason ?? 'cancelled')
          return ''
        case 'summary':
          summaries.get(message.id)?.(message.summary)
          return ''
        default:
          return ''
      }
    }
    this._native = new native.NativeAgent(JSON.stringify(spec), dispatch)
    this._summaries = summaries
    this._destroyed = false
    hooks = new AgentHookBus(this._native)
    hooks[BUS].summaries = summaries
    /** Hook bus for registering handlers on agent lifecycle events. */
    this.hooks = hooks
    this.meta = Object.freeze({ ...(Array.isArray(options.provider) ? options.provider[0] : options.provider).meta })
    if (options.hooks) hooks.addHooks(options.hooks)
  }

  /** Runs the agent loop until the model stops, a limit is hit or the run is aborted. */
  async run(options) {
    if (!options || typeof options !== 'object') throw new TypeError('run: options are required ({ prompt })')
    const prompt = typeof options.prompt === 'string' ? options.prompt : promptText(options.prompt)
    return JSON.parse(
      await this._native.run(
        JSON.stringify({
          prompt,
          system: options.system,
          systemNotes: options.systemNotes,
          model: options.model,
          maxTokens: options.maxTokens,
        }),
      ),
    )
  }

  /** Continues the session's run a dead process left; `null` when there is none. */
  async resume() {
    const out = await this._native.resume()
    return out == null ? null : JSON.parse(out)
  }

  /** Queues a mid-run message for the next tool or turn boundary. */
  steer(prompt, options = {}) {
    return this._native.steer(promptText(prompt), options.id)
  }

  /** Queues a message delivered after the run would otherwise end. */
  followUp(prompt, options = {}) {
    return this._native.followUp(promptText(prompt), options.id)
  }

  /** Aborts the current run; a no-op when idle. */
  abort(reason) {
    this._native.abort(reason)
  }

  /** Cancels one in-flight tool call by id. */
  cancelTool(callId, reason) {
    return this._native.cancelTool(callId, reason)
  }

  /** Resolves when the current run has finished. */
  waitForIdle() {
    return this._native.waitForIdle()
  }

  /** `true` while a run is in progress. */
  get isRunning() {
    return this._native.isRunning
  }

  /** The conversation turns held in memory. */
  get turns() {
    return JSON.parse(this._native.turns())
  }

  /** The bound session (its id), or `null` without one. */
  get session() {
    const id = this._native.sessionId()
    return id == null ? null : { id }
  }

  /** Clears the in-memory state; throws while a run is in progress. */
  reset() {
    return this._native.reset()
  }

  /** Releases everything the agent holds. Idempotent. */
  async destroy() {
    if (this._destroyed) return
    this._destroyed = true
    const bus = this.hooks[BUS]
    bus.handlers.clear()
    bus.subs.clear()
    await this._native.destroy()
  }

  async [Symbol.asyncDispose]() {
    await this.destroy()
  }

  /** Summarizes the session's older turns now. */
  async compact(options = {}) {
    return JSON.parse(await this._native.compact(JSON.stringify(options)))
  }

  /** When the prompt cache is estimated to expire, in epoch ms; `null` before any request. */
  cacheExpiresAt() {
    return this._native.cacheExpiresAt() ?? null
  }

  /** What `change` would make the next request read again instead of from the cache. */
  cacheImpact(change = {}) {
    return JSON.parse(this._native.cacheImpact(JSON.stringify(change)))
  }

  /** Categorized context-window usage; `null` after `destroy()`. */
  async getContextBreakdown(options = {}) {
    const out = await this._native.getContextBreakdown(JSON.stringify(options))
    return out == null ? null : JSON.parse(out)
  }

  /** Pre-connects MCP servers; this build has none to connect, so it resolves at once. */
  async warmup() {}
}

for (const member of NOT_SERVED) {
  Object.defineProperty(Agent.prototype, member, {
    get() {
      throw new NotAvailableError(member)
    },
    configurable: true,
  })
}

function promptText(prompt) {
  if (typeof prompt === 'string') return prompt
  if (Array.isArray(prompt)) {
    return prompt
      .map(part => {
        if (part && part.type === 'text' && typeof part.text === 'string') return part.text
        throw new TypeError('prompt parts: this build takes text parts only')
      })
      .join('\n')
  }
  throw new TypeError('prompt must be a string or text parts')
}

async function dispatchHook(hooks, message) {
  const { name, payload } = message
  let followUp
  if (name === 'run:beforeEnd') {
    payload.followUp = text => {
      if (followUp === undefined) followUp = String(text)
    }
  }
  await hooks.callHook(name, payload)
  if (!HOOKS[name]) return ''
  if (followUp !== undefined) payload.followUp = followUp
  else delete payload.followUp
  return JSON.stringify(payload)
}

async function runTool(bodies, aborts, message) {
  const body = bodies.get(message.name)
  if (!body) return JSON.stringify({ error: `no JavaScript tool "${message.name}"` })
  const controller = new AbortController()
  aborts.set(message.ctx.callId, controller)
  try {
    const result = await body(message.input, { ...message.ctx, signal: controller.signal })
    return JSON.stringify({ output: toolOutput(result) })
  } catch (error) {
    return JSON.stringify({ error: errorMessage(error) })
  } finally {
    aborts.delete(message.ctx.callId)
  }
}

/** Creates an agent: a provider, tools, hooks and an optional session behind one `run()`. */
function createAgent(options) {
  return new Agent(options)
}

// ------------------------------------------------------------- run summary

/** Builds a run-summary collector (the Rust core's, installed on an agent's bus). */
function createRunSummaryCollector(options = {}) {
  const installs = new Set()
  let latestSeen
  return {
    install(hooks) {
      const bus = hooks && hooks[BUS]
      if (!bus || !bus.native) throw new TypeError('collector.install: pass an agent.hooks of @zidane-rs/agent')
      const id = bus.native.installSummary()
      const entry = { native: bus.native, id }
      installs.add(entry)
      bus.summaries.set(id, summary => {
        latestSeen = summary
        options.onSummary?.(summary)
      })
      return () => {
        if (!installs.delete(entry)) return
        const last = entry.native.summaryLatest(id)
        if (last) latestSeen = newest(latestSeen, JSON.parse(last))
        bus.summaries.delete(id)
        entry.native.uninstallSummary(id)
      }
    },
    latest() {
      let best = latestSeen
      for (const { native: n, id } of installs) {
        const s = n.summaryLatest(id)
        if (s) best = newest(best, JSON.parse(s))
      }
      return best
    },
  }
}

function newest(a, b) {
  if (!a) return b
  if (!b) return a
  return (b.endedAt ?? 0) >= (a.endedAt ?? 0) ? b : a
}

// ------------------------------------------------------------- sessions

/** A session kept in a SQLite file (`id` unset: a new session). */
function sqliteSession(path, id) {
  return { path, id }
}

/** The checkpoint runtime on a SQLite file: every model call and tool call a recorded step. */
function checkpointRuntime(path, options = {}) {
  return { path, onInterrupted: options.onInterrupted }
}

/** Every hook name of the vocabulary. */
const hookNames = Object.freeze(Object.keys(HOOKS))

module.exports = {
  createAgent,
  createRunSummaryCollector,
  anthropic,
  openai,
  openaiCompatible,
  basic,
  sqliteSession,
  checkpointRuntime,
  hookNames,
  NotAvailableError,
  AgentHookBus,
  NOT_SERVED: Object.freeze([...NOT_SERVED]),
}
