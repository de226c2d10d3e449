//! zidane, an LLM-agent SDK: the agent core in Rust.
//!
//! This crate re-exports the `zidane-*` crates under the paths of the spec's
//! entry points:
//!
//! - [`hooks`]: the typed async hook bus ([`hooks::HookBus`], [`hooks::HookMap`]);
//! - [`agent`]: the `zidane/agent` entry point; today its hook vocabulary
//!   ([`agent::events`], one type per `AgentHooks` event) and the payload types;
//! - [`provider`]: the message model and the providers;
//! - [`runloop`]: the run loop and its tool pipeline;
//! - [`presets`]: the `basic` coding preset.
//!
//! The spec's example, in Rust (with `ANTHROPIC_API_KEY` set):
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use zidane::agent::{
//!     AgentCacheChange, AgentOptions, AgentRunOptions, RunSummaryCollectorOptions, create_agent,
//!     create_run_summary_collector,
//! };
//! use zidane::provider::{AnthropicConfig, AnthropicProvider};
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
//! let result = agent.compact(2).await?;
//! println!("{}", result.compacted);
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
//! use zidane::provider::{AbortSignal, AnthropicConfig, AnthropicProvider, Message, StreamOptions, complete};
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
//! use zidane::provider::{AbortSignal, Message, OpenAiConfig, OpenAiProvider, StreamOptions, complete};
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
//!   state in one local SQLite file (the bundled SQLite is compiled in).
//! - `test-util`: `zidane::provider::scripted`, a provider that plays
//!   scripted responses, errors and delays (on tokio's pausable clock).
//!
//! Architecture invariant: this crate only re-exports; it holds no logic of
//! its own, and it is the only crate that re-exports other crates.

pub mod hooks {
    //! The typed async hook bus (`zidane-hooks`).
    pub use zidane_hooks::*;
}

pub mod provider {
    //! The provider-neutral message model (`zidane-provider`).
    pub use zidane_provider::*;
}

pub mod presets {
    //! Tool presets (`zidane-tools`): `basic`, a coding agent's tools and
    //! system prompt.
    pub use zidane_tools::{BasicOptions, Preset, basic};
}

pub mod runloop {
    //! The run loop (`zidane-loop`): turns, the tool pipeline, retries and
    //! fallback, budgets and guards.
    pub use zidane_loop::{
        Behavior, Clock, FixedClock, FnTool, LoopConfig, ModelRef, RepeatGuard, RepeatMode, RetryPolicy, RunError,
        RunErrorKind, RunLoop, RunOptions, SystemClock, Tool, ToolBudget, ToolContext, ToolOutput, ToolSet, pairing,
        seams, tool, validate,
    };
}

pub mod agent {
    //! The `zidane/agent` entry point: `create_agent` and the `Agent`, the
    //! hook vocabulary and its payload types, prompt-cache telemetry, the
    //! run-summary collector and the read-state helpers.

    #[cfg(feature = "sqlite")]
    pub use zidane_agent::SqliteStore;
    pub use zidane_agent::{
        Agent, AgentCacheChange, AgentCacheImpact, AgentError, AgentOptions, AgentRunOptions, AutoCompact,
        CompactionResult, ContextBreakdown, ContextCategory, ContextOptions, ContextSegment, DecisionRequest,
        DecisionResult, Decisions, DirEntry, ExecOptions, ExecOutput, ExecutionContext, MemoryStore, ProcessContext,
        SegmentSource, Session, SessionInfo, SessionRun, SessionRunStatus, SessionStore, create_agent, get_read_state,
        hook_names, hydrate_read_state_from_session, read_state_key, resolve_read_state_map,
    };

    pub use zidane_cache_telemetry::{
        CacheBreakLoggerOptions, CacheDimensionDiff, CacheDimensionSnapshot, CachePromptSections,
        diff_cache_dimensions, fnv1a32, hash_messages, install_cache_break_logger, snapshot_cache_dimensions,
    };
    pub use zidane_loop::events;
    pub use zidane_loop::events::{
        AgentStats, CATALOGUE, CacheBreakInfo, CacheDimensionName, CacheDriftInfo, CacheSystemSection, HOOK_SPECS,
        HookInfo, hook_info,
    };
    pub use zidane_mcp::{
        DefaultConnector, McpConfigError, McpConnection, McpConnector, McpServerConfig, McpToolMeta, McpToolWrap,
        McpTransportConfig, connect_mcp_servers, parse_mcp_config,
    };
    pub use zidane_run_summary::{
        RunSummary, RunSummaryBlock, RunSummaryBudget, RunSummaryByModel, RunSummaryCollector,
        RunSummaryCollectorOptions, RunSummaryError, RunSummaryRepeatGuard, RunSummaryRetry, RunSummaryTokens,
        RunSummaryValidation, create_run_summary_collector,
    };

    /// The agent's hook bus.
    pub type AgentHookBus = zidane_hooks::HookBus;

    /// Hook registrations keyed by the spec's hook names (`AgentOptions.hooks`).
    pub type AgentHookMap = zidane_hooks::HookMap;
}
