//! zidane, an LLM-agent SDK: the agent core in Rust.
//!
//! This crate re-exports the `zidane-*` crates under the paths of the spec's
//! entry points:
//!
//! - [`agent`]: the `zidane/agent` entry point: [`agent::create_agent`] and
//!   the [`agent::Agent`], its options and errors, the hook vocabulary
//!   ([`agent::events`], one type per `AgentHooks` event), sessions,
//!   prompt-cache telemetry and the run-summary collector, and the types a
//!   custom tool is written with;
//! - [`providers`]: the message model and the [`providers::Provider`] trait,
//!   with [`providers::anthropic`] and [`providers::openai`];
//! - [`tools`]: the `Tool` trait and its context, execution contexts and the
//!   read-state helpers;
//! - [`presets`]: the `basic` coding preset;
//! - [`mcp`]: MCP servers as tools;
//! - [`hooks`]: the typed async hook bus underneath;
//! - [`runloop`]: the bare run loop, for hosts that need no agent;
//! - [`checkpoints`]: folder checkpoints, undo, rewind and fork;
//! - `restate` (feature `restate`): agents as durable Restate services.
//!
//! Features: `http` (default: the HTTP providers over hyper + rustls),
//! `sqlite` (default: sessions, durable runs and checkpoints in one SQLite
//! file), `mcp` (default: MCP servers as tools), `otel` (OpenTelemetry
//! traces), `restate` (agents on Restate), `test-util` (the scripted
//! provider).
//!
//! Runnable examples are in the crate's `examples/` folder: `quickstart`,
//! `custom_tool`, `hooks`, `mcp_servers`, `durable_resume`, `subagents`,
//! `skills` and `restate`. Each reads its provider from the environment and
//! takes `--base-url`: `cargo run -p zidane --example quickstart`.
//!
//! The spec's example, in Rust (with `ANTHROPIC_API_KEY` set):
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use zidane::agent::{
//!     AgentCacheChange, AgentOptions, AgentRunOptions, CompactOptions, RunSummaryCollectorOptions, create_agent,
//!     create_run_summary_collector,
//! };
//! use zidane::providers::anthropic::{AnthropicConfig, AnthropicProvider};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = AnthropicProvider::new(AnthropicConfig::from_env()?)?;
//! let agent = create_agent(AgentOptions { provider: vec![Arc::new(provider)], ..Default::default() })?;
//! let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
//! let installed = collector.install(agent.hooks());
//!
//! agent.run(AgentRunOptions::prompt("Name the files in this directory.")).await?;
//! drop(installed); // uninstall
//! println!("{:?}", collector.latest().map(|s| s.totals.output));
//! let change = AgentCacheChange { model: Some("claude-opus-4-1".into()), ..Default::default() };
//! println!("{} {:?}", agent.cache_impact(&change).tokens, agent.cache_expires_at());
//!
//! let result = agent.compact(CompactOptions { keep_turns: Some(2), ..Default::default() }).await?;
//! println!("{}", result.compacted);
//! # Ok(())
//! # }
//! ```
//!
//! A custom tool, and an agent that runs it (the model calls `add`):
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use zidane::agent::{AgentOptions, AgentRunOptions, Behavior, FnTool, ToolOutput, ToolSet, create_agent};
//! use zidane::providers::anthropic::{AnthropicConfig, AnthropicProvider};
//! use zidane::serde_json::json;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let add = FnTool::new(
//!     "add",
//!     "Add two integers.",
//!     json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
//!     |input, _cx| async move {
//!         let (a, b) = (input["a"].as_i64().unwrap_or(0), input["b"].as_i64().unwrap_or(0));
//!         Ok(ToolOutput::text((a + b).to_string()))
//!     },
//! );
//! let agent = create_agent(AgentOptions {
//!     provider: vec![Arc::new(AnthropicProvider::new(AnthropicConfig::from_env()?)?)],
//!     tools: ToolSet::new().with(add),
//!     behavior: Behavior { max_turns: Some(4), ..Default::default() },
//!     ..Default::default()
//! })?;
//! let stats = agent.run(AgentRunOptions::prompt("What is 17 + 25? Use the add tool.")).await?;
//! // A run that stops at the turn cap is not an error: check how it ended.
//! println!("{} turns, {} tool calls, completed: {}", stats.turns, stats.tool_calls, stats.completed());
//! # Ok(())
//! # }
//! ```
//!
//! Registering a handler on a spec event:
//!
//! ```
//! use zidane::agent::events::ToolGate;
//! use zidane::hooks::HookBus;
//!
//! let bus = HookBus::new();
//! bus.on_sync::<ToolGate, _>(|gate, _cx| {
//!     if gate.name() == "shell" {
//!         gate.block = true;
//!         gate.reason = "no shell in this deployment".into();
//!     }
//!     Ok(())
//! });
//! ```
//!
//! Or by the spec's hook names, checked against the catalogue:
//!
//! ```
//! use zidane::agent::{AgentHookMap, HOOK_SPECS};
//! use zidane::hooks::{DynHandler, HookBus};
//!
//! let hooks = AgentHookMap::new().on_named("turn:after", DynHandler::sync(|_ev, _cx| Ok(())));
//! let bus = HookBus::new();
//! let installed = hooks.install(&bus, HOOK_SPECS).expect("every name is a spec hook");
//! # drop(installed);
//! let typo = AgentHookMap::new().on_named("turn:aftr", DynHandler::sync(|_ev, _cx| Ok(())));
//! assert_eq!(
//!     typo.validate(HOOK_SPECS).unwrap_err().to_string(),
//!     "unknown hook `turn:aftr`; did you mean `turn:after`?",
//! );
//! ```
//!
//! Calling a model directly (with `ANTHROPIC_API_KEY` set):
//!
//! ```no_run
//! use zidane::providers::anthropic::{AnthropicConfig, AnthropicProvider};
//! use zidane::providers::{AbortSignal, Message, StreamOptions, complete};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = AnthropicProvider::new(AnthropicConfig::from_env()?)?;
//! let options = StreamOptions::new("claude-sonnet-4-5", vec![Message::user("Say hello.")]);
//! let reply = complete(&provider, &options, AbortSignal::never()).await?;
//! println!("{} ({} output tokens)", reply.text(), reply.usage.output);
//! # Ok(())
//! # }
//! ```
//!
//! The same with OpenAI, or any OpenAI-compatible server (Ollama, vLLM,
//! llama.cpp, LM Studio) by its base URL:
//!
//! ```no_run
//! use zidane::providers::openai::{OpenAiConfig, OpenAiProvider};
//! use zidane::providers::{AbortSignal, Message, StreamOptions, complete};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let key = std::env::var("OPENAI_API_KEY")?;
//! let provider = OpenAiProvider::new(OpenAiConfig::openai(key))?;
//! // Or: OpenAiConfig::compatible("http://localhost:11434/v1", None)
//! let options = StreamOptions::new("gpt-4.1", vec![Message::user("Say hello.")]);
//! let reply = complete(&provider, &options, AbortSignal::never()).await?;
//! println!("{}", reply.text());
//! # Ok(())
//! # }
//! ```
//!
//! # Feature flags
//!
//! - `http` (default): the HTTP providers, over hyper 1 and rustls with the
//!   `ring` crypto provider and bundled web roots (no OpenSSL, no aws-lc).
//!   Without it, `zidane` pulls no HTTP stack, TLS or tokio.
//! - `sqlite` (default): `zidane::agent::SqliteStore`, sessions and tool
//!   state in one local SQLite file. The bundled SQLite is compiled from C
//!   source; a host that keeps no sessions on disk can turn the feature off
//!   (`default-features = false, features = ["http", "mcp"]`) to skip it.
//! - `mcp` (default): MCP servers as tools (`zidane::mcp`, on `rmcp`), and
//!   `AgentOptions::mcp_servers`.
//! - `test-util`: `zidane::providers::scripted`, a provider that plays
//!   scripted responses, errors and delays (on tokio's pausable clock).
//!
//! Architecture invariant: this crate only re-exports; it holds no logic of
//! its own, and it is the only crate that re-exports other crates.

pub use serde_json;

pub mod hooks {
    //! The typed async hook bus (`zidane-hooks`).
    pub use zidane_hooks::{
        BoxFuture, Bubble, Child, DynEvent, DynHandler, HandlerError, HandlerResult, HookBus, HookCx, HookError,
        HookEvent, HookHandle, HookMap, HookScope, HookSpec,
    };
}

pub mod providers {
    //! The provider-neutral message model and the [`Provider`] trait
    //! (`zidane-provider`); the providers themselves are in [`anthropic`] and
    //! [`openai`].

    #[cfg(feature = "test-util")]
    pub use zidane_provider::scripted;
    pub use zidane_provider::{
        AbortController, AbortSignal, Aborted, AssistantMessage, BoxFuture, CacheTtl, Capabilities, ContentBlock,
        DocumentSource, ErrorKind, EventStream, FinishReason, ImageSource, IncompleteToolCall, Message,
        MessageAccumulator, ModelPrice, Pricing, Provider, ProviderError, ProviderMeta, Role, SYSTEM_PROMPT_BOUNDARY,
        SessionTurn, StreamEvent, StreamOptions, ThinkingLevel, ToolChoice, ToolResultContent, ToolSpec, TurnUsage,
        UsageReport, WireDecoder, WireProtocol, WireRequest, classify_status, classify_stream_error, complete,
        retry_after_from_headers, retry_after_from_message, sse,
    };
    #[cfg(feature = "http")]
    pub use zidane_provider::{ApiKey, Auth, Endpoint, HttpClient, HttpProvider, Timeouts};

    pub mod anthropic {
        //! Anthropic's Messages API: the provider (with the `http` feature)
        //! and the wire format, usable with any HTTP client.
        pub use zidane_provider::anthropic::{
            API_VERSION, BETA_EXTENDED_CACHE_TTL, DEFAULT_MAX_TOKENS, Decoder, Messages, Request, count_tokens_body,
            finish_reason, request_body, thinking_budget,
        };
        #[cfg(feature = "http")]
        pub use zidane_provider::anthropic::{AnthropicConfig, AnthropicProvider};
    }

    pub mod responses {
        //! OpenAI's Responses API wire format: the request body and the
        //! event decoder (`OpenAiConfig::openai_responses` uses them).
        pub use zidane_provider::responses::{Decoder, Responses, is_reasoning_item, request_body};
    }

    pub mod openai {
        //! OpenAI's Chat Completions API and compatible servers (OpenRouter,
        //! Cerebras, Ollama, vLLM, llama.cpp, LM Studio): the provider (with
        //! the `http` feature) and the wire format.
        pub use zidane_provider::openai::{
            ChatCompletions, Decoder, Dialect, MaxTokensField, finish_reason, request_body,
        };
        #[cfg(feature = "http")]
        pub use zidane_provider::openai::{OpenAiApi, OpenAiConfig, OpenAiProvider};
    }
}

pub mod tools {
    //! Writing tools and where they run (`zidane-core`, `zidane-tools`): the
    //! [`Tool`] trait and its [`ToolContext`], execution contexts and the
    //! in-process [`ProcessContext`], durable tool state and the read-state
    //! helpers.
    pub use zidane_core::execution::{
        BackgroundChunk, BackgroundOptions, BackgroundOwner, BackgroundSink, BackgroundTask,
    };
    pub use zidane_core::execution::{
        DirEntry, EntryKind, ExecOptions, ExecOutput, ExecutionContext, ExecutionError, FileStat, Workspace,
        normalize_path,
    };
    pub use zidane_core::read_state::{
        ReadStateEntry, ReadStateMap, get_read_state, hydrate_read_state_from_session, read_state_key,
        resolve_read_state_map,
    };
    pub use zidane_core::tool::{
        DescriptionOverride, FnTool, MemoryToolState, Tool, ToolCallParts, ToolContext, ToolFailure, ToolOutput,
        ToolSet, ToolState, ToolStateStore, apply_ops,
    };
    pub use zidane_tools::{ProcessContext, Sandbox, SandboxError, SandboxMode, is_secret_env};
}

pub mod presets {
    //! Tool presets (`zidane-tools`): `basic`, a coding agent's tools and
    //! system prompt.
    pub use zidane_tools::{BasicOptions, Preset, SPAWN_DESCRIPTION, basic, render_spawn_result, spawn};
}

#[cfg(feature = "mcp")]
pub mod mcp {
    //! MCP servers as tools (`zidane-mcp`, on `rmcp`): stdio, streamable HTTP
    //! and legacy SSE transports.
    pub use zidane_mcp::oauth;
    pub use zidane_mcp::{
        DefaultConnector, ElicitationAnswer, ElicitationHandler, ElicitationRequest, McpConfigError, McpConnection,
        McpConnector, McpError, McpServerConfig, McpTool, McpToolMeta, McpToolWrap, McpTransportConfig, ToolFilter,
        connect_mcp_servers, login_mcp_server, namespaced_name, parse_mcp_config,
    };
}

pub mod runloop {
    //! The bare run loop (`zidane-loop`), for hosts that drive a
    //! conversation without an agent: turns, the tool pipeline, retries and
    //! fallback, budgets and guards; and the seams it calls.
    pub use zidane_core::clock::{Clock, FixedClock, SystemClock};
    pub use zidane_core::seams;
    pub use zidane_loop::{
        Behavior, BehaviorOverride, BudgetCap, LoopConfig, ModelRef, RepeatGuard, RepeatMode, RetryPolicy, RunError,
        RunErrorKind, RunLoop, RunOptions, ToolBudget, pairing, validate,
    };
}

#[cfg(feature = "otel")]
pub mod otel {
    //! OpenTelemetry traces of runs, following the GenAI semantic
    //! conventions, sent to a collector as OTLP/HTTP JSON. Install
    //! [`OtelExporter::hooks`] on an agent (and on `SpawnConfig::hooks` for
    //! sub-agents), then `flush` before exiting. Payloads are attached only
    //! with `capture_payloads`, each through `tracing:redact`.
    pub use zidane_otel::{OtelError, OtelExporter, OtelOptions, REDACTION_FAILED, parse_traceparent};
}

#[cfg(feature = "restate")]
pub mod restate {
    //! The `zidane/restate` entry point: agents as durable Restate services
    //! (replay mode). [`ReplayRuntime`] journals every step of a run as a
    //! `ctx.run` entry of the invocation; [`ZidaneAgent`] is the agent as a
    //! Virtual Object keyed by session id; [`ReplayTracker`] fires
    //! `replay:done` when an invocation goes live; [`serve`] is the endpoint
    //! a Restate server registers.
    pub use zidane_restate::{
        AbortRequest, AgentFactory, CHECKPOINT_COUNT_KEY, CancelToolRequest, Control, Delivery, ENTRY_NAME,
        JournalCounts, JournalError, MessageRequest, RUN_INACTIVITY_TIMEOUT, ReplayClock, ReplayRuntime, ReplayTracker,
        RunRequest, RunResponse, TOOL_STATE_KEY, TURN_COUNT_KEY, ZidaneAgent, checkpoint_key, endpoint, serve,
        service_options, turn_key,
    };
}

pub mod checkpoints {
    //! Folder checkpoints: the working folder recorded before every prompt
    //! and every tool batch that may change it (contents kept once, by
    //! hash), so a prompt's changes can be listed, undone, rewound or
    //! forked. Give an agent a [`Checkpoints`] (`AgentOptions::checkpoints`)
    //! and use `Agent::checkpoints`, `Agent::rewind` and `Agent::fork`; the
    //! [`CheckpointStore`] contract is implemented by `SqliteStore` (feature
    //! `sqlite`), in the sessions file.
    pub use zidane_agent::checkpoints::{
        Changes, Checkpoint, CheckpointError, Checkpoints, CheckpointsConfig, Conflict, ForkOutcome, READ_ONLY_TOOLS,
        RestoreAction, RestoreStep, RewindOptions, RewindOutcome, RewindPlan, RewindReport, diff, fork_session,
        rewind_conversation,
    };
    pub use zidane_core::checkpoint::{
        CheckpointStore, CheckpointStoreError, EntryKind, JournaledSnapshot, Manifest, ManifestEntry, NewSnapshot,
        NotCovered, NotCoveredReason, PruneReport, Snapshot, SnapshotKind, StoredManifest,
    };
}

pub mod durable {
    //! The `zidane/durable` entry point: the [`CheckpointBackend`] contract
    //! a durable agent records its runs in (step records, leases with
    //! epochs, the fenced turn append), the checkpoint runtime on the
    //! embedded SQLite store that implements it (feature `sqlite`), its
    //! options, and the two errors a durable run can end with. Pass it as
    //! `AgentOptions::durable`; `Agent::resume` and `Agent::suspend` use it.
    #[cfg(feature = "sqlite")]
    pub use zidane_agent::{CheckpointOptions, CheckpointRuntime, SqliteStore, Synchronous};
    pub use zidane_agent::{DurableOptions, DurableResumeOptions, SuspendOptions};
    pub use zidane_core::durable::{
        CheckpointBackend, Durability, DurableMode, DurableRuntime, INTERRUPTED_CALL_MESSAGE, LeaseError, LeaseInfo,
        MemoryRuntime, OnInterrupted, RunLeaseHeldError, StaleEpochError, StepKey, StepKind, StepRecord, StepValue,
    };
    pub use zidane_core::tool::{MemoryToolState, ToolStateStore};
}

pub mod agent {
    //! The `zidane/agent` entry point: `create_agent` and the `Agent`, the
    //! hook vocabulary and its payload types, prompt-cache telemetry, the
    //! run-summary collector, and the types a custom tool and an agent's
    //! behaviour are written with.

    #[cfg(feature = "mcp")]
    pub use zidane_agent::McpConfigTransform;
    #[cfg(feature = "sqlite")]
    pub use zidane_agent::SqliteStore;
    pub use zidane_agent::{
        ActiveSkill, SkillDefinition, SkillError, SkillPolicy, SkillProblem, SkillsConfig, load_skill_folders,
        parse_skill,
    };
    pub use zidane_agent::{
        Agent, AgentCacheChange, AgentCacheImpact, AgentError, AgentOptions, AgentRunOptions, AutoCompact, BuildError,
        CompactOptions, CompactionResult, ContextBreakdown, ContextCategory, ContextOptions, ContextSegment,
        DecideHookContext, DecisionRequest, DecisionResult, Decisions, DurableResumeOptions, Prompt,
        QueuedMessageOptions, SegmentSource, SuspendOptions, create_agent, hook_names,
    };
    pub use zidane_agent::{
        ApprovalDecision, ApprovalRequest, FnInterceptor, RememberedApproval, ToolCall, ToolCallApprover,
        ToolCallInterceptor, ToolCallVerdict,
    };
    pub use zidane_agent::{
        BehaviorTransform, ContextSection, Extension, RunTransform, ToolCatalogTransform, ToolResultMetadataFn,
    };
    pub use zidane_agent::{CHILD_SESSION_MARK, SpawnConfig, SubagentDefinition, SubagentTools};
    pub use zidane_cache_telemetry::{
        CacheBreakLoggerOptions, CacheDimensionDiff, CacheDimensionSnapshot, CachePromptSections, ErrorSink, LogSink,
        diff_cache_dimensions, fnv1a32, hash_message, hash_messages, install_cache_break_logger,
        snapshot_cache_dimensions,
    };
    pub use zidane_core::bubble::install_bubbling;
    pub use zidane_core::events;
    pub use zidane_core::events::{
        AgentStats, CATALOGUE, CacheBreakInfo, CacheDimensionName, CacheDriftInfo, CacheSystemSection, HOOK_SPECS,
        HookInfo, RunStatus, hook_info,
    };
    pub use zidane_core::execution::{ExecutionContext, Workspace};
    pub use zidane_core::seams::{
        ChildLedger, SpawnError, SpawnRequest, SpawnResult, Spawner, Spawning, SubagentSummary,
    };
    pub use zidane_core::session::{
        MemoryStore, Session, SessionConflict, SessionInfo, SessionRun, SessionRunOptions, SessionRunStatus,
        SessionStore, StoreError,
    };
    pub use zidane_core::tool::{FnTool, Tool, ToolContext, ToolOutput, ToolSet};
    pub use zidane_loop::{
        Behavior, BehaviorOverride, BudgetCap, ModelRef, RepeatGuard, RepeatMode, RetryPolicy, RunError, RunErrorKind,
        ToolBudget,
    };
    pub use zidane_run_summary::{
        RunSummary, RunSummaryBlock, RunSummaryBudget, RunSummaryByModel, RunSummaryCollector,
        RunSummaryCollectorOptions, RunSummaryError, RunSummaryRepeatGuard, RunSummaryRetry, RunSummaryTokens,
        RunSummaryValidation, SummarySink, create_run_summary_collector,
    };

    /// The agent's hook bus (the spec's `AgentHooks`: every event of
    /// [`events`] is emitted on it).
    pub type AgentHooks = zidane_hooks::HookBus;

    /// The agent's hook bus, by the spec's other name for it.
    pub type AgentHookBus = zidane_hooks::HookBus;

    /// Hook registrations keyed by the spec's hook names (`AgentOptions.hooks`).
    pub type AgentHookMap = zidane_hooks::HookMap;
}
