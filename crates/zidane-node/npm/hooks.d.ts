// Generated from zidane-core's hooks.txt (the Rust hook vocabulary's table) by the
// zidane-node crate's tests; do not edit.

import type { ToolResultContent } from './index'

/** Event map of the agent hook bus: each key a hook name, each value the handler. */
export interface AgentHooks {
  /** The run was aborted; once per aborted run, whatever path the abort took. */
  'agent:abort': (ctx: { readonly reason?: string; readonly runId?: string }) => void
  /** The run finished, on every exit path, with cumulative statistics. */
  'agent:done': (ctx: { [key: string]: any }) => void
  /** A run started; before its first turn. */
  'agent:start': (ctx: { readonly agentName?: string; readonly depth: number; readonly parentRunId?: string; readonly providerName?: string; readonly runId: string; readonly startedAt: number; readonly tracingContext: Record<string, string> }) => void
  /** The session stored an artifact a tool result declared. */
  'artifact:recorded': (ctx: { readonly artifact: any; readonly callId: string; readonly name: string; readonly runId: string; readonly turnId: string }) => void
  /** A running background task was handed over to this agent. */
  'background:adopt': (ctx: { readonly command: string; readonly cwd: string; readonly outputPath: string; readonly pid: number; readonly startedAt: number; readonly taskId: string }) => void
  /** A background task's process ended; once per task. */
  'background:exit': (ctx: { readonly command: string; readonly durationMs: number; readonly exitCode: number; readonly outputPath: string; readonly signal?: string; readonly status: any; readonly taskId: string }) => void
  /** A background task moved from one execution handle to another. */
  'background:reassign': (ctx: { readonly childId?: string; readonly command: string; readonly fromHandleId: string; readonly outputPath: string; readonly pid: number; readonly startedAt: number; readonly taskId: string; readonly toHandleId: string }) => void
  /** Background exits about to be shown to the model; handlers may edit the list. */
  'background:reconcile': (ctx: { exits: unknown[] }) => void
  /** A background task produced no output for the watchdog's window. */
  'background:stall': (ctx: { readonly bytesWritten: number; readonly command: string; readonly outputPath: string; readonly stalledForMs: number; readonly taskId: string }) => void
  /** A background task was spawned. */
  'background:start': (ctx: { readonly command: string; readonly cwd: string; readonly outputPath: string; readonly pid: number; readonly startedAt: number; readonly taskId: string }) => void
  /** A turn's tool output exceeded the byte budget. */
  'budget:exceeded': (ctx: { readonly budget: number; readonly bytes: number; readonly turn: number; readonly turnId: string }) => void
  /** A turn read back materially less cached prefix than the previous one established. */
  'cache:break': (ctx: { [key: string]: any }) => void
  /** The outgoing request differs from the previous turn's in a cache-relevant way. */
  'cache:drift': (ctx: { [key: string]: any }) => void
  /** A sub-agent's sub-agent is about to start (seen from an ancestor). */
  'child:spawn:before': (ctx: { readonly spawn: any; readonly parentChildId?: string; readonly depth: number }) => void
  /** A sub-agent's sub-agent finished (seen from an ancestor). */
  'child:spawn:complete': (ctx: { readonly stats: any; readonly parentChildId?: string; readonly depth: number }) => void
  /** A sub-agent's sub-agent failed (seen from an ancestor). */
  'child:spawn:error': (ctx: { readonly spawn: any; readonly parentChildId?: string; readonly depth: number; readonly error: Error }) => void
  /** A compaction finished, successfully or not; exactly once per `compact:start`. */
  'compact:end': (ctx: { readonly reason: any; readonly status: any; readonly replaced: number; readonly dropped: number; readonly restored: number; readonly effectiveTokens?: number; readonly error?: Error }) => void
  /** The compaction summary is streaming; a rough output-token estimate. */
  'compact:progress': (ctx: { readonly reason: any; readonly estOutputTokens: number }) => void
  /** A compaction is building the turns it keeps after the summary; handlers may add calls. */
  'compact:restore': (ctx: { readonly sessionId?: string; readonly session?: any }) => void
  /** A compaction is about to summarize older turns. */
  'compact:start': (ctx: { readonly reason: any; readonly turns: number; readonly estimatedTokens: number }) => void
  /** A block refers to persisted bytes; handlers supply them for the wire. */
  'content-ref:resolve': (ctx: { readonly block: any; readonly childId?: string; readonly depth?: number; data?: string }) => void
  /** The provider said the context is too long; an emergency elision follows. */
  'context:overflow': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly attempt: number; readonly err: Error }) => void
  /** The messages of the next request; handlers may rewrite them. */
  'context:transform': (ctx: { messages: unknown[] }) => void
  /** A decision finished, successfully or not. */
  'decision:end': (ctx: { readonly kind: string; readonly ok: boolean; readonly reason?: string; readonly answers?: any; readonly usage?: any; readonly durationMs: number }) => void
  /** A decision request started. */
  'decision:start': (ctx: { readonly kind: string; readonly provider?: string; readonly model?: string; readonly request: any }) => void
  /** The execution handle was bound for the first time; once per agent. */
  'execution:ready': (ctx: { readonly handle: any; readonly spawned: boolean }) => void
  /** Reasoning state the provider rejected was scrubbed from history. */
  'history:repair': (ctx: { readonly turnIds: string[]; readonly reason: string; readonly runId: string }) => void
  /** An interactive MCP login failed. */
  'mcp:auth:error': (ctx: { readonly name: string; readonly error: Error }) => void
  /** An MCP server needs a login before it can bootstrap. */
  'mcp:auth:required': (ctx: { readonly name: string; readonly reason: any; readonly transport: any }) => void
  /** An interactive MCP login succeeded and tokens were stored. */
  'mcp:auth:success': (ctx: { readonly name: string }) => void
  /** An interactive MCP login wants the user to open a URL. */
  'mcp:auth:url': (ctx: { readonly name: string; readonly url: string }) => void
  /** One MCP server's bootstrap attempt ended. */
  'mcp:bootstrap:end': (ctx: { readonly name: string; readonly transport: any; readonly durationMs: number; readonly outcome: any }) => void
  /** Every server of a bootstrap batch has settled; results sorted by name. */
  'mcp:bootstrap:settled': (ctx: { readonly results: unknown[] }) => void
  /** One MCP server's bootstrap attempt starts. */
  'mcp:bootstrap:start': (ctx: { readonly name: string; readonly transport: any }) => void
  /** An MCP connection was closed. */
  'mcp:close': (ctx: { readonly name: string }) => void
  /** An MCP client finished its handshake. */
  'mcp:connect': (ctx: { readonly lazy: boolean; readonly name: string; readonly tools: string[]; readonly transport: any }) => void
  /** An MCP server failed to connect or failed fatally. */
  'mcp:error': (ctx: { readonly name: string; readonly error: Error }) => void
  /** An MCP tool call returned. */
  'mcp:tool:after': (ctx: { readonly server: string; readonly tool: string; readonly name: string; readonly callId: string; readonly input: any; readonly outputBytes: number; readonly result: string | ToolResultContent[] }) => void
  /** An MCP tool call is about to be sent. */
  'mcp:tool:before': (ctx: { readonly server: string; readonly tool: string; readonly name: string; readonly callId: string; readonly input: any }) => void
  /** An MCP tool call failed. */
  'mcp:tool:error': (ctx: { readonly server: string; readonly tool: string; readonly name: string; readonly callId: string; readonly input: any; readonly error: Error }) => void
  /** Decide an MCP tool call inside the MCP wrapper: refuse it or substitute a result. */
  'mcp:tool:gate': (ctx: { readonly server: string; readonly tool: string; readonly name: string; readonly callId: string; readonly input: any; block: boolean; reason: string; result?: string | ToolResultContent[] }) => void
  /** An MCP tool result before it is returned; handlers may rewrite it. */
  'mcp:tool:transform': (ctx: { readonly server: string; readonly tool: string; readonly name: string; readonly callId: string; readonly input: any; readonly outputBytes: number; result: string | ToolResultContent[] }) => void
  /** A server's tools after the config filters; handlers may narrow the list. */
  'mcp:tools:filter': (ctx: { readonly server: string; tools: unknown[]; readonly transport: any }) => void
  /** The raw tool list a server advertised. */
  'mcp:tools:list': (ctx: { readonly name: string; readonly tools: unknown[]; readonly transport: any }) => void
  /** A diagnostic line from an MCP server (its stderr, a soft failure). */
  'mcp:warn': (ctx: { readonly message: string; readonly name: string }) => void
  /** The run moved to the next provider and model of its fallback chain. */
  'model:fallback': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly discardedThinking: boolean; readonly err: Error; readonly from: any; readonly targetIndex: number; readonly to: any }) => void
  /** OAuth credentials were refreshed during a run (an MCP server's tokens: `provider` is `mcp:<server>`). */
  'oauth:refresh': (ctx: { readonly provider: string; readonly expiresAt?: number }) => void
  /** The structured output of a run, validated against its schema. */
  'output': (ctx: { readonly output: any; readonly schema: any }) => void
  /** The pre-send pairing pass repaired the history. */
  'pairing:repair': (ctx: { readonly kind: any; readonly toolUseId: string; readonly messageIndex: number; readonly turnId?: string }) => void
  /** The provider reported a diagnostic for a turn. */
  'provider:diagnostic': (ctx: { readonly kind: string; readonly message: string; readonly data: any; readonly runId: string; readonly turnId: string }) => void
  /** The provider dropped replayed reasoning blocks before sampling. */
  'provider:input-transformations': (ctx: { readonly transformations: unknown[]; readonly runId: string; readonly turnId: string }) => void
  /** The repeat guard escalated on a tool. */
  'repeat-guard:exceeded': (ctx: { readonly action: any; readonly count: number; readonly threshold: number; readonly tool: string; readonly turnId: string }) => void
  /** A durable replay caught up with its journal and went live. */
  'replay:done': (ctx: {  }) => void
  /** A resume was refused because the step records no longer match the saved turns. */
  'resume:mismatch': (ctx: { readonly reason: string; readonly resumeTurn: number; readonly runId: string; readonly sessionId: string; readonly storedTurns: unknown[] }) => void
  /** The model gave a final answer and nothing is queued; a handler may keep the run going. */
  'run:beforeEnd': (ctx: { readonly runId: string; readonly sessionId?: string; readonly session?: any; readonly turn: number; followUp: (message: string) => void }) => void
  /** A run on a session ended. */
  'session:end': (ctx: { readonly sessionId: string; readonly session?: any; readonly runId: string; readonly status: any; readonly turnRange: [number, number] }) => void
  /** A session metadata key was set. */
  'session:meta': (ctx: { readonly sessionId: string; readonly key: string; readonly value: any }) => void
  /** The session was saved. */
  'session:save': (ctx: { readonly sessionId: string }) => void
  /** A run started on a session. */
  'session:start': (ctx: { readonly sessionId: string; readonly prompt: string; readonly runId: string }) => void
  /** New turns were flushed to the session. */
  'session:turns': (ctx: { readonly sessionId: string; readonly count: number; readonly turns: unknown[] }) => void
  /** A skill was activated. */
  'skills:activate': (ctx: { readonly skill: any; readonly via: any }) => void
  /** The rendered skills catalog and the skills it lists. */
  'skills:catalog': (ctx: { readonly catalog: string; readonly skills: unknown[] }) => void
  /** A skill was deactivated. */
  'skills:deactivate': (ctx: { readonly reason: any; readonly skill: any }) => void
  /** Skills were resolved. */
  'skills:resolve': (ctx: { readonly skills: unknown[] }) => void
  /** A sub-agent is about to start; tracers may inject their context. */
  'spawn:before': (ctx: { readonly childId: string; readonly agentName?: string; readonly prompt: string; readonly depth: number; readonly parentRunId?: string; tracingContext: Record<string, string> }) => void
  /** A sub-agent finished. */
  'spawn:complete': (ctx: { [key: string]: any }) => void
  /** A sub-agent failed. */
  'spawn:error': (ctx: { readonly spawn: any; readonly error: Error }) => void
  /** A top-level spawn waits for a free slot. */
  'spawn:queued': (ctx: { readonly childId: string; readonly agentName?: string; readonly running: number; readonly limit: number }) => void
  /** A queued message joined the conversation as a user turn. */
  'steer:inject': (ctx: { readonly content: unknown[]; readonly id?: string; readonly text: string }) => void
  /** The turn's text stream ended. */
  'stream:end': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly text: string }) => void
  /** The provider's stream failed before its end. */
  'stream:error': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly err: Error; readonly statusCode?: number; readonly requestId?: string }) => void
  /** Tokens streamed so far and a running cost estimate (throttled). */
  'stream:progress': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly tokens: number; readonly providerCounted: boolean; readonly costUsd?: number }) => void
  /** A retryable provider error; the loop sleeps, then tries again. */
  'stream:retry': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly attempt: number; readonly delayMs: number; readonly discardedText: boolean; readonly discardedThinking: boolean; readonly err: Error; readonly maxAttempts: number; readonly nextAttempt: number; readonly requestId?: string; readonly statusCode?: number }) => void
  /** A server-side tool result block closed. */
  'stream:server_tool_result': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly content: any; readonly toolName: string; readonly toolUseId: string }) => void
  /** A server-side tool call block closed. */
  'stream:server_tool_use': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly id: string; readonly input: any; readonly name: string }) => void
  /** The request is about to leave for the provider. */
  'stream:start': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly startedAt: number }) => void
  /** A text delta. */
  'stream:text': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly delta: string; readonly text: any }) => void
  /** A thinking delta. */
  'stream:thinking': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly delta: string; readonly thinking: any }) => void
  /** The run-level system prompt, once per run when one was given. */
  'system:before': (ctx: { readonly system: string }) => void
  /** The system prompt of the next request; handlers may rewrite it (keep it byte-stable). */
  'system:transform': (ctx: { readonly messages: unknown[]; readonly sessionId?: string; readonly session?: any; system: string; readonly turn: number; readonly turnId: string }) => void
  /** A durable run resumes a tool batch a dead process left unfinished. */
  'tool-batch:resumed': (ctx: { readonly done: string[]; readonly resuming: string[]; readonly runId: string; readonly turn: number; readonly turnId: string }) => void
  /** A per-tool call budget was exceeded. */
  'tool-budget:exceeded': (ctx: { readonly count: number; readonly max: number; readonly mode: any; readonly tool: string; readonly turnId: string }) => void
  /** The tool-results turn joined the conversation. */
  'tool-results:after': (ctx: { readonly message: any; readonly results: unknown[]; readonly turn: number; readonly turnId: string }) => void
  /** A settled call's durable tool state could not be committed. */
  'tool-state:commit-failed': (ctx: { readonly callId: string; readonly error: Error; handled: boolean; readonly ops: unknown[]; readonly runId: string; readonly toolName: string }) => void
  /** A tool result (executed or substituted by a gate) after transforms. */
  'tool:after': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly coercions: string[]; readonly isError: boolean; readonly outcome?: any; readonly outputBytes: number; readonly result: string | ToolResultContent[]; readonly runToolCounts: any }) => void
  /** A tool body is about to run; handlers may rewrite its input. */
  'tool:before': (ctx: { readonly name: string; readonly callId: string; input: any; readonly runId: string; readonly turnId: string; readonly coercions: string[]; readonly priorContent?: string; readonly runToolCounts: any; readonly unknown: boolean }) => void
  /** One in-flight call was cancelled. */
  'tool:cancelled': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly reason: string; readonly runToolCounts: any }) => void
  /** A call was dispatched, with the path it took; once per call. */
  'tool:dispatched': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly outcome: any; readonly reason?: string; readonly runToolCounts: any }) => void
  /** A tool body failed; handlers may substitute the result the model sees. */
  'tool:error': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly error: Error; result?: string | ToolResultContent[] }) => void
  /** Decide a call before it runs: refuse it, substitute a result or rewrite its input. */
  'tool:gate': (ctx: { readonly name: string; readonly callId: string; input: any; readonly runId: string; readonly turnId: string; readonly resumed: boolean; resumeState: any; block: boolean; metadata: any; reason: string; result?: string | ToolResultContent[]; readonly runToolCounts: any }) => void
  /** Live output of a running tool. */
  'tool:progress': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly progress: any }) => void
  /** A tool result before it goes back to the model; handlers may rewrite it. */
  'tool:transform': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly coercions: string[]; readonly isError: boolean; metadata: any; readonly outputBytes: number; result: string | ToolResultContent[] }) => void
  /** The model called a tool that does not exist; handlers may answer for it. */
  'tool:unknown': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; result?: string | ToolResultContent[]; suppressError: boolean }) => void
  /** A value about to leave for an observability sink; handlers redact it. */
  'tracing:redact': (ctx: { readonly kind: any; readonly meta?: any; redacted: string; readonly value: string }) => void
  /** An assistant turn finished, before its tool calls run. */
  'turn:after': (ctx: { readonly aborted: boolean; readonly cumulativeUsage: any; readonly message: any; readonly toolCounts: any; readonly turn: number; readonly turnId: string; readonly usage: any }) => void
  /** The request of the next turn; handlers may change its options. */
  'turn:before': (ctx: { options: any; readonly turn: number; readonly turnId: string }) => void
  /** A turn's usage and the run's running input and output totals. */
  'usage': (ctx: { readonly totalIn: number; readonly totalOut: number; readonly turn: number; readonly turnId: string; readonly usage: any }) => void
  /** Validation coerced some input fields into shape. */
  'validation:coerce': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly coercions: string[]; readonly schema: any }) => void
  /** Validation rejected a call's input. */
  'validation:reject': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly reason: string; readonly schema: any }) => void
  /** A sub-agent's `artifact:recorded`. */
  'child:artifact:recorded': (ctx: { readonly artifact: any; readonly callId: string; readonly name: string; readonly runId: string; readonly turnId: string; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `background:exit`. */
  'child:background:exit': (ctx: { readonly command: string; readonly durationMs: number; readonly exitCode: number; readonly outputPath: string; readonly signal?: string; readonly status: any; readonly taskId: string; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `background:reassign`. */
  'child:background:reassign': (ctx: { readonly command: string; readonly fromHandleId: string; readonly outputPath: string; readonly pid: number; readonly startedAt: number; readonly taskId: string; readonly toHandleId: string; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `background:start`. */
  'child:background:start': (ctx: { readonly command: string; readonly cwd: string; readonly outputPath: string; readonly pid: number; readonly startedAt: number; readonly taskId: string; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `mcp:tool:gate`; the parent's decision goes back to the child. */
  'child:mcp:tool:gate': (ctx: { readonly server: string; readonly tool: string; readonly name: string; readonly callId: string; readonly input: any; block: boolean; reason: string; result?: string | ToolResultContent[]; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `repeat-guard:exceeded`. */
  'child:repeat-guard:exceeded': (ctx: { readonly action: any; readonly count: number; readonly threshold: number; readonly tool: string; readonly turnId: string; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `stream:end`. */
  'child:stream:end': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly text: string; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `stream:error`. */
  'child:stream:error': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly err: Error; readonly statusCode?: number; readonly requestId?: string; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `stream:retry`. */
  'child:stream:retry': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly attempt: number; readonly delayMs: number; readonly discardedText: boolean; readonly discardedThinking: boolean; readonly err: Error; readonly maxAttempts: number; readonly nextAttempt: number; readonly requestId?: string; readonly statusCode?: number; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `stream:server_tool_result`. */
  'child:stream:server_tool_result': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly content: any; readonly toolName: string; readonly toolUseId: string; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `stream:server_tool_use`. */
  'child:stream:server_tool_use': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly id: string; readonly input: any; readonly name: string; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `stream:text`. */
  'child:stream:text': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly delta: string; readonly text: any; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `stream:thinking`. */
  'child:stream:thinking': (ctx: { readonly runId: string; readonly turn: number; readonly turnId: string; readonly model: string; readonly delta: string; readonly thinking: any; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `tool:after`. */
  'child:tool:after': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly coercions: string[]; readonly isError: boolean; readonly outcome?: any; readonly outputBytes: number; readonly result: string | ToolResultContent[]; readonly runToolCounts: any; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `tool:before`. */
  'child:tool:before': (ctx: { readonly name: string; readonly callId: string; input: any; readonly runId: string; readonly turnId: string; readonly coercions: string[]; readonly priorContent?: string; readonly runToolCounts: any; readonly unknown: boolean; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `tool:cancelled`. */
  'child:tool:cancelled': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly reason: string; readonly runToolCounts: any; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `tool:dispatched`. */
  'child:tool:dispatched': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly outcome: any; readonly reason?: string; readonly runToolCounts: any; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `tool:error`. */
  'child:tool:error': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly error: Error; result?: string | ToolResultContent[]; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `tool:gate`; the parent's decision goes back to the child. */
  'child:tool:gate': (ctx: { readonly name: string; readonly callId: string; input: any; readonly runId: string; readonly turnId: string; readonly resumed: boolean; resumeState: any; block: boolean; metadata: any; reason: string; result?: string | ToolResultContent[]; readonly runToolCounts: any; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `tool:progress`. */
  'child:tool:progress': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly progress: any; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `tool:transform`; the parent's rewrite goes back to the child. */
  'child:tool:transform': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly coercions: string[]; readonly isError: boolean; metadata: any; readonly outputBytes: number; result: string | ToolResultContent[]; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `turn:after`. */
  'child:turn:after': (ctx: { readonly aborted: boolean; readonly cumulativeUsage: any; readonly message: any; readonly toolCounts: any; readonly turn: number; readonly turnId: string; readonly usage: any; readonly childId: string; readonly depth: number }) => void
  /** A sub-agent's `validation:reject`. */
  'child:validation:reject': (ctx: { readonly name: string; readonly callId: string; readonly input: any; readonly runId: string; readonly turnId: string; readonly reason: string; readonly schema: any; readonly childId: string; readonly depth: number }) => void
}

/** Every hook name, in the vocabulary's order. */
export type AgentHookName = keyof AgentHooks
