// Types of @zidane-rs/agent: the reference's `zidane/agent` names and shapes,
// for what this build serves (see README: "Node" for the members it does not).

import type { AgentHooks, AgentHookName } from './hooks'

export type { AgentHooks, AgentHookName } from './hooks'

// ------------------------------------------------------------------ content

/** A text part of a message or tool result. */
export interface TextContent {
  type: 'text'
  text: string
}

/** An image part (base64). */
export interface ImageContent {
  type: 'image'
  source: { type: 'base64'; media_type: string; data: string }
}

/** A part of a tool's result. */
export type ToolResultContent = TextContent | ImageContent

/** A part of a prompt: this build takes text parts. */
export type PromptPart = TextContent

// ---------------------------------------------------------------- providers

/** A model provider, as `anthropic()`, `openai()` and `openaiCompatible()` make it. */
export interface Provider {
  readonly name: string
  readonly meta: Readonly<Record<string, unknown>>
}

/** Options of a provider. */
export interface ProviderOptions {
  /** The API key; the provider's environment variable when unset. */
  apiKey?: string
  /** Where the API is (a proxy, a compatible server). */
  baseURL?: string
  /** The model the agent asks for unless a run names another. */
  defaultModel?: string
  /** Same as `defaultModel`. */
  model?: string
  /** The provider's name in hooks and summaries. */
  name?: string
}

/** The Anthropic Messages API (`ANTHROPIC_API_KEY` when `apiKey` is unset). */
export function anthropic(options?: ProviderOptions): Provider
/** OpenAI's Chat Completions API (`OPENAI_API_KEY`), or a compatible server at `baseURL`. */
export function openai(options?: ProviderOptions): Provider
/** An OpenAI-compatible server (OpenRouter, Cerebras, vLLM, llama.cpp, Ollama) at `baseURL`. */
export function openaiCompatible(options: ProviderOptions & { baseURL: string }): Provider

// ------------------------------------------------------------------ presets

/** A preset: spread it into `createAgent`'s options. */
export interface Preset {
  readonly name: string
}

/** The coding preset: files, search, shell, todos, in the current folder (`cwd` to change it). */
export const basic: Preset

// -------------------------------------------------------------------- tools

/** What a tool's body receives besides its input. */
export interface ToolContext {
  /** Id of the call. */
  callId: string
  /** Id of the run. */
  runId: string
  /** Id of the turn. */
  turnId: string
  /** Fires when the call is cancelled (`agent.cancelTool`) or the run aborted. */
  signal: AbortSignal
}

/** What a tool's body may return: text, content parts, or both with an error mark. */
export type ToolResult =
  | string
  | ToolResultContent[]
  | { content: string | ToolResultContent[]; isError?: boolean; metadata?: Record<string, unknown> }

/** A tool written in JavaScript. */
export interface ToolDef<Input = any> {
  /** What the tool does, for the model. */
  description: string
  /** JSON schema of the input; the loop validates each call against it. */
  inputSchema?: Record<string, unknown>
  /** Whether calls may run beside other parallel-safe calls of a turn (default `true`). */
  parallel?: boolean
  /** The body. A thrown error becomes the call's error result; the run goes on. */
  execute: (input: Input, ctx: ToolContext) => ToolResult | Promise<ToolResult>
}

// -------------------------------------------------------------------- hooks

/** A handler of hook `K`. */
export type AgentHookHandler<K extends AgentHookName> = AgentHooks[K]

/** Strongly-typed hook registration map accepted on `AgentOptions.hooks`. */
export type AgentHookMap = Partial<{ [K in keyof AgentHooks]: AgentHooks[K] | AgentHooks[K][] }>

/** The hook bus of an agent. */
export interface AgentHookBus {
  /** Registers `handler` on `name`; returns the function that removes it. */
  hook<K extends AgentHookName>(name: K, handler: AgentHooks[K]): () => void
  /** Same as `hook`. */
  on<K extends AgentHookName>(name: K, handler: AgentHooks[K]): () => void
  /** Registers a handler that runs once. */
  hookOnce<K extends AgentHookName>(name: K, handler: AgentHooks[K]): () => void
  /** Registers several handlers; returns the function that removes them all. */
  addHooks(map: AgentHookMap): () => void
  /** Removes `handler` from `name`. */
  removeHook<K extends AgentHookName>(name: K, handler: AgentHooks[K]): void
  /** Runs the JavaScript handlers of `name` on `payload`. */
  callHook<K extends AgentHookName>(name: K, payload: Parameters<AgentHooks[K]>[0]): Promise<void>
}

/** Same as `AgentHookBus` (the reference's `Hookable<AgentHooks>`). */
export type Hookable<_Hooks = AgentHooks> = AgentHookBus

// ------------------------------------------------------------------- agents

/** Usage of one turn. */
export interface TurnUsage {
  input: number
  output: number
  cacheRead: number
  cacheCreation: number
  cost?: number
  modelId?: string
  finishReason?: string
}

/** Statistics of a run. */
export interface AgentStats {
  turns: number
  toolCalls?: number
  totalIn: number
  totalOut: number
  totalCacheRead: number
  totalCacheCreation: number
  cost: number
  turnUsage: TurnUsage[]
  status?: 'completed' | 'aborted' | 'error'
  suspended?: boolean
  /** The final answer's text (an addition of this package). */
  text?: string
}

/** A turn of the conversation. */
export interface SessionTurn {
  id?: string
  role: 'user' | 'assistant'
  content: unknown[]
  [key: string]: unknown
}

/** A session bound to the agent. */
export interface Session {
  id: string
}

/** A session kept in a SQLite file. */
export interface SqliteSession {
  path: string
  id?: string
}

/** The checkpoint runtime on a SQLite file. */
export interface CheckpointRuntime {
  path: string
  onInterrupted?: 'heal' | 'resume'
}

/** Options for `createAgent`. Only `provider` is required. */
export interface AgentOptions {
  /** The provider, or several (the first answers; the others are fallbacks). */
  provider: Provider | Provider[]
  /** Display name of the agent. */
  name?: string
  /** Default system prompt. */
  system?: string
  /** The model, when not the provider's default. */
  model?: string
  /** Output token cap per request. */
  maxTokens?: number
  /** Tool definitions available to the agent. */
  tools?: Record<string, ToolDef>
  /** Agent-lifetime hook registrations. */
  hooks?: AgentHookMap
  /** Agent-level behavior defaults. */
  behavior?: { maxTurns?: number }
  /** The folder the `basic` preset's tools work in (default: the current folder). */
  cwd?: string
  /** A session kept in a SQLite file: `sqliteSession(path, id?)`. */
  session?: SqliteSession
  /** Id of the session in `durable`'s store (created when new). */
  sessionId?: string
  /** The durable runtime every model and tool call goes through: `checkpointRuntime(path)`. */
  durable?: CheckpointRuntime
}

/** Options of one run. */
export interface AgentRunOptions {
  /** The prompt: text, or text parts. */
  prompt: string | PromptPart[]
  /** The system prompt of this run. */
  system?: string
  /** Notes appended after the prompt. */
  systemNotes?: string[]
  /** The model of this run. */
  model?: string
  /** Output token cap of this run. */
  maxTokens?: number
}

/** Options of `steer` and `followUp`. */
export interface QueuedMessageOptions {
  /** Comes back in `steer:inject`. */
  id?: string
}

/** What `cacheImpact` compares with the last request. */
export interface AgentCacheChange {
  model?: string
  thinking?: 'off' | 'minimal' | 'low' | 'medium' | 'high'
  system?: boolean
  tools?: boolean
}

/** What a change would make the next request read again. */
export interface AgentCacheImpact {
  tokens: number
  changed: string[]
}

/** Options of `compact`. */
export interface AgentCompactOptions {
  keepTurns?: number
  focus?: string
}

/** What `compact` did. */
export interface AgentCompactResult {
  compacted: boolean
  replacedCount: number
  restoredFiles: number
  summary?: string | null
  effectiveTokens: number
}

/** Options of `getContextBreakdown`. */
export interface ContextBreakdownOptions {
  effectiveWindow?: number
}

/** One category of the context window. */
export interface ContextBreakdownCategory {
  name: string
  tokens: number
  estimated: boolean
}

/** Categorized context-window usage. */
export interface ContextBreakdown {
  categories: ContextBreakdownCategory[]
  used: number
  effectiveWindow?: number | null
  fraction?: number | null
}

/** Agent instance returned by `createAgent`. */
export interface Agent {
  /** Runs the agent loop until the model stops, a limit is hit or the run is aborted. */
  run: (options: AgentRunOptions) => Promise<AgentStats>
  /** Continues the session's run a dead process left; `null` when there is none. */
  resume: () => Promise<AgentStats | null>
  /** Queues a mid-run nudge injected as a user turn at the next tool/turn boundary. */
  steer: (prompt: string | PromptPart[], options?: QueuedMessageOptions) => boolean
  /** Queues a message delivered after the run would otherwise end. */
  followUp: (prompt: string | PromptPart[], options?: QueuedMessageOptions) => boolean
  /** Aborts the current run. No-op when idle. */
  abort: (reason?: string) => void
  /** Cancels a single in-flight tool call by id. */
  cancelTool: (callId: string, reason?: string) => boolean
  /** Resolves when the current run has finished. */
  waitForIdle: () => Promise<void>
  /** `true` while a run is in progress. */
  readonly isRunning: boolean
  /** Conversation turns held in memory by the agent. */
  readonly turns: SessionTurn[]
  /** Session bound to the agent, or `null`. */
  readonly session: Session | null
  /** Frozen view of the provider's meta. */
  readonly meta: Readonly<Record<string, unknown>>
  /** Clears the agent's in-memory state. Throws while a run is in progress. */
  reset: () => Promise<void>
  /** Releases everything the agent holds. Idempotent. */
  destroy: () => Promise<void>
  /** Summarizes the session's older turns now. */
  compact: (options?: AgentCompactOptions) => Promise<AgentCompactResult>
  /** When the prompt cache is estimated to expire, in epoch ms; `null` before any request. */
  cacheExpiresAt: () => number | null
  /** Estimates what `change` would make the next request read again. */
  cacheImpact: (change: AgentCacheChange) => AgentCacheImpact
  /** Categorized context-window usage; `null` after `destroy()`. */
  getContextBreakdown: (opts?: ContextBreakdownOptions) => Promise<ContextBreakdown | null>
  /** Pre-connects MCP servers (none in this build: resolves at once). */
  warmup: () => Promise<void>
  /** Hook bus for registering handlers on agent lifecycle events. */
  hooks: AgentHookBus
  /** `await using` sink: alias for `destroy`. */
  [Symbol.asyncDispose]: () => Promise<void>
}

/** Creates an agent: a provider, tools, hooks and an optional session behind one `run()`. */
export function createAgent(rawOptions: AgentOptions): Agent

// -------------------------------------------------------------- run summary

export interface RunSummaryTokens {
  cacheCreation: number
  cacheRead: number
  cost?: number
  input: number
  output: number
  ttftMs?: number
}

export interface RunSummaryBlock {
  callId: string
  outcome: 'gate-block' | 'unknown' | 'invalid-input'
  reason?: string
  toolName: string
}

export interface RunSummaryBudget {
  kind: 'bytes' | 'tool-count'
  limit: number
  mode?: 'steer' | 'block'
  observed: number
  toolName?: string
  turnId?: string
}

export interface RunSummaryByModel {
  cacheCreation: number
  cacheRead: number
  cost: number
  input: number
  modelId: string
  output: number
  turns: number
}

export interface RunSummaryError {
  callId?: string
  childId?: string
  errorType?: string
  kind: 'spawn' | 'tool' | 'mcp' | 'stream' | 'mcp-tool'
  message: string
  requestId?: string
  server?: string
  statusCode?: number
  toolName?: string
  turnId?: string
}

export interface RunSummaryRepeatGuard {
  action: 'steer' | 'block' | 'abort'
  count: number
  threshold: number
  toolName: string
  turnId?: string
}

export interface RunSummaryRetry {
  attempt: number
  delayMs: number
  [key: string]: unknown
}

export interface RunSummaryValidation {
  callId: string
  reason: string
  toolName: string
}

/** Postmortem snapshot of one `agent.run()`. */
export interface RunSummary {
  agentName?: string
  blocks: RunSummaryBlock[]
  budgetEvents: RunSummaryBudget[]
  byModel: RunSummaryByModel[]
  children?: RunSummary[]
  depth: number
  durationMs: number
  endedAt: number
  errors: RunSummaryError[]
  pairingRepairs: Record<string, number>
  parentRunId?: string
  repeatGuardEvents: RunSummaryRepeatGuard[]
  runId?: string
  startedAt: number
  status: 'completed' | 'aborted'
  streamRetries: RunSummaryRetry[]
  totals: RunSummaryTokens
  turns: number
  validationRejects: RunSummaryValidation[]
}

export interface RunSummaryCollectorOptions {
  /** Called with each finished summary. */
  onSummary?: (summary: RunSummary) => void
}

export interface RunSummaryCollector {
  /** Installs the collector on an agent's hooks; returns the uninstall function. */
  install: (hooks: Hookable<AgentHooks>) => () => void
  /** Most-recent summary; `undefined` until the first run ends. */
  latest: () => RunSummary | undefined
}

/** Builds a run-summary collector. */
export function createRunSummaryCollector(options?: RunSummaryCollectorOptions): RunSummaryCollector

// ---------------------------------------------------------------- sessions

/** A session kept in the SQLite file at `path` (`id` unset: a new session). */
export function sqliteSession(path: string, id?: string): SqliteSession
/** The checkpoint runtime on the SQLite file at `path`. */
export function checkpointRuntime(path: string, options?: { onInterrupted?: 'heal' | 'resume' }): CheckpointRuntime

// ------------------------------------------------------------------- misc

/** Every hook name of the vocabulary. */
export const hookNames: readonly AgentHookName[]

/** The members of `Agent` this build does not serve (each throws `NotAvailableError`). */
export const NOT_SERVED: readonly string[]

/** Thrown by a member this build does not serve. */
export class NotAvailableError extends Error {
  readonly member: string
  constructor(member: string)
}
