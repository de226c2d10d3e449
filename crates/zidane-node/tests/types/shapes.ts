// The reference's signatures, checked against the package's types: each
// line fails `tsc --noEmit` when a name or shape drifts.

import {
  createAgent,
  createRunSummaryCollector,
  anthropic,
  openai,
  openaiCompatible,
  basic,
  type Agent,
  type AgentOptions,
  type AgentHooks,
  type AgentHookMap,
  type AgentCacheChange,
  type AgentCacheImpact,
  type AgentCompactOptions,
  type AgentCompactResult,
  type AgentRunOptions,
  type AgentStats,
  type ContextBreakdown,
  type ContextBreakdownOptions,
  type PromptPart,
  type QueuedMessageOptions,
  type RunSummary,
  type RunSummaryCollector,
  type RunSummaryCollectorOptions,
  type SessionTurn,
  type ToolDef,
} from '@zidane-rs/agent'

// Functions.
const _createAgent: (rawOptions: AgentOptions) => Agent = createAgent
const _collector: (options?: RunSummaryCollectorOptions) => RunSummaryCollector = createRunSummaryCollector

// The Agent's members, as the reference types them.
declare const agent: Agent
const _abort: () => void = agent.abort
const _cacheExpiresAt: () => number | null = agent.cacheExpiresAt
const _cacheImpact: (change: AgentCacheChange) => AgentCacheImpact = agent.cacheImpact
const _cancelTool: (callId: string, reason?: string) => boolean = agent.cancelTool
const _compact: (options?: AgentCompactOptions) => Promise<AgentCompactResult> = agent.compact
const _destroy: () => Promise<void> = agent.destroy
const _followUp: (prompt: string | PromptPart[], options?: QueuedMessageOptions) => boolean = agent.followUp
const _breakdown: (opts?: ContextBreakdownOptions) => Promise<ContextBreakdown | null> = agent.getContextBreakdown
const _isRunning: boolean = agent.isRunning
const _reset: () => Promise<void> = agent.reset
const _run: (options: AgentRunOptions) => Promise<AgentStats> = agent.run
const _steer: (prompt: string | PromptPart[], options?: QueuedMessageOptions) => boolean = agent.steer
const _turns: SessionTurn[] = agent.turns
const _waitForIdle: () => Promise<void> = agent.waitForIdle
const _dispose: () => Promise<void> = agent[Symbol.asyncDispose]

// The hook map: names from the vocabulary, payloads in camelCase.
const hooks: AgentHookMap = {
  'tool:gate': async ctx => {
    if (ctx.name === 'shell' && ctx.callId) {
      ctx.block = true
      ctx.reason = 'no shell here'
    }
  },
  'tool:transform': [ctx => void (ctx.result = String(ctx.result))],
  'turn:after': ctx => void ctx.turnId.length,
}
const unsubscribe: () => void = agent.hooks.on('stream:text', ctx => void ctx.delta.length)
unsubscribe()
// @ts-expect-error: not a hook name
agent.hooks.on('tool:gait', () => {})
const names: (keyof AgentHooks)[] = ['agent:abort', 'child:tool:gate', 'usage']

// Tools: Record<string, ToolDef>, an async execute(input, ctx).
const tools: Record<string, ToolDef> = {
  add: {
    description: 'Adds two numbers.',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    execute: async ({ a, b }: { a: number; b: number }, ctx) => {
      ctx.signal.throwIfAborted()
      return String(a + b)
    },
  },
}

const withEverything: Agent = createAgent({
  ...basic,
  provider: [anthropic({ apiKey: 'k' }), openai({ apiKey: 'k', baseURL: 'http://127.0.0.1:1/v1' })],
  tools,
  hooks,
})
const compatible: Agent = createAgent({ provider: openaiCompatible({ baseURL: 'http://127.0.0.1:1/v1' }) })
const summary: RunSummary | undefined = createRunSummaryCollector().latest()

export { names, withEverything, compatible, summary }
