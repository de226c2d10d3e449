//! zidane, an LLM-agent SDK: the agent core in Rust.
//!
//! # Getting started
//!
//! The crates are not on crates.io yet: depend on the facade by git (or by
//! path, in a checkout), with tokio for `main`. The lightest first build
//! leaves the default features out and takes the HTTP providers:
//!
//! ```toml
//! [dependencies]
//! zidane = { git = "https://github.com/zidane-rs/zidane-rs", default-features = false, features = ["http"] }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! The defaults add SQLite sessions, MCP servers and typed tools, which
//! want `serde` and `schemars` beside the facade:
//!
//! ```toml
//! [dependencies]
//! zidane = { git = "https://github.com/zidane-rs/zidane-rs" }   # or { path = "../zidane-rs/crates/zidane" }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! serde = { version = "1", features = ["derive"] }                 # for typed tools
//! schemars = "1"                                                   # for typed tools: #[derive(JsonSchema)]
//! ```
//!
//! A whole program (with `ANTHROPIC_API_KEY` set):
//!
//! ```no_run
//! use zidane::prelude::*;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let provider = AnthropicProvider::new(AnthropicConfig::from_env()?)?;
//!     let agent = create_agent(AgentOptions::new(provider).system("You are brief."))?;
//!     let output = agent.run(AgentRunOptions::prompt("Say hello in five words.")).await?;
//!     println!("{}", output.text);
//!     Ok(())
//! }
//! ```
//!
//! `AgentOptions::new(provider)` is the short form of the options struct
//! (`AgentOptions { provider: vec![Arc::new(provider)], ..Default::default() }`).
//! An error `main` returns prints as a sentence with its causes.
//!
//! `run` gives back the answer's text with the statistics
//! ([`agent::RunOutput`]); a run that stops at its turn cap, is aborted or
//! suspended is not an error (`output.completed()`, `output.status`).
//! [`agent::Agent::run_stream`] gives the same run as a stream of events.
//!
//! # Modules
//!
//! - [`prelude`]: the names of a first program;
//! - [`agent`]: the `zidane/agent` entry point: [`agent::create_agent`] and
//!   the [`agent::Agent`], its options and errors, the run's output and
//!   events, sessions and their stores, the hook vocabulary
//!   ([`agent::events`], one type per spec event), prompt-cache telemetry,
//!   the run-summary collector, behaviour settings;
//! - [`tools`]: the [`tools::Tool`] trait, [`tools::FnTool`] and the call's
//!   context, execution contexts and the in-process one with its sandbox,
//!   durable tool state;
//! - [`presets`]: the `basic` coding preset, its commands confined by
//!   default;
//! - [`providers`]: the message model and the [`providers::Provider`] trait,
//!   with [`providers::anthropic`] and [`providers::openai`];
//! - [`durable`]: the `zidane/durable` entry point: runs that survive their
//!   process (`AgentOptions::durable`, `Agent::resume`), the checkpoint
//!   backend contract and its SQLite runtime;
//! - [`checkpoints`]: folder checkpoints, undo, rewind and fork;
//! - [`mcp`]: MCP servers as tools;
//! - [`hooks`]: the typed async hook bus underneath;
//! - [`runloop`]: the bare run loop, for hosts that need no agent;
//! - `otel` (feature `otel`): OpenTelemetry traces of runs;
//! - `restate` (feature `restate`): agents as durable Restate services.
//!
//! Each type has one path, in the module of its concept. Paths that moved
//! keep a deprecated alias for one release.
//!
//! Runnable examples are in the crate's `examples/` folder: `hello`, `quickstart`,
//! `custom_tool`, `hooks`, `mcp_servers`, `durable_resume`, `subagents`,
//! `skills` and `restate`. Each reads its provider from the environment and
//! takes `--base-url`: `cargo run -p zidane --example quickstart`.
//!
//! # Tools
//!
//! A typed tool takes its arguments as your type, with its input schema
//! derived (feature `schemars`). A call whose input does not fit reaches the
//! model as `Validation error: …`; a handler's `Err` as `Tool error: …`;
//! neither ends the run:
//!
//! ```no_run
//! use schemars::JsonSchema; // `schemars = "1"` in Cargo.toml
//! use serde::Deserialize;
//! use zidane::prelude::*;
//!
//! /// Two integers.
//! #[derive(Deserialize, JsonSchema)]
//! struct Add {
//!     a: i64,
//!     b: i64,
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let add = FnTool::typed("add", "Add two integers.", |args: Add, _cx| async move {
//!         Ok((args.a + args.b).to_string())
//!     });
//!     let provider = AnthropicProvider::new(AnthropicConfig::from_env()?)?;
//!     let agent = create_agent(AgentOptions::new(provider).tool(add).max_turns(4))?;
//!     let output = agent.run(AgentRunOptions::prompt("What is 17 + 25? Use the add tool.")).await?;
//!     println!("{} ({} tool calls)", output.text, output.stats.tool_calls);
//!     Ok(())
//! }
//! ```
//!
//! # Streaming, sessions, durable runs
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use zidane::durable::{CheckpointRuntime, DurableOptions};
//! use zidane::prelude::*;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Every model call and tool call is recorded in the sessions file
//!     // (before any call that is not safe to repeat starts); after a crash,
//!     // `agent.resume(..)` continues the run.
//!     let runtime = Arc::new(CheckpointRuntime::open("sessions.db")?);
//!     let agent = create_agent(AgentOptions {
//!         provider: vec![Arc::new(AnthropicProvider::new(AnthropicConfig::from_env()?)?)],
//!         durable: Some(DurableOptions::from(runtime)),
//!         ..Default::default()
//!     })?;
//!     // No session id was given: the agent started one; keep its id to come back.
//!     println!("session {}", agent.session_id().unwrap_or_default());
//!     let mut stream = agent.run_stream(AgentRunOptions::prompt("Write a haiku about Rust."));
//!     while let Some(event) = stream.next().await {
//!         match event? {
//!             RunEvent::TextDelta(text) => print!("{text}"),
//!             RunEvent::Done(output) => println!("\n{} turns", output.stats.turns),
//!             _ => {}
//!         }
//!     }
//!     Ok(())
//! }
//! ```
//!
//! Cancel safety: dropping the future of `run` or `resume` (or a
//! `run_stream`'s stream) stops the run where it is, as an abort would;
//! the turns already written stay, and a durable agent's run stays recorded
//! as interrupted, for `resume` to continue. Dropping `compact`'s future
//! before the summary arrives leaves the conversation as it was.
//!
//! # Hooks
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
//! use zidane::agent::HOOK_SPECS;
//! use zidane::hooks::{DynHandler, HookBus, HookMap};
//!
//! let hooks = HookMap::new().on_named("turn:after", DynHandler::sync(|_ev, _cx| Ok(())));
//! let bus = HookBus::new();
//! let installed = hooks.install(&bus, HOOK_SPECS).expect("every name is a spec hook");
//! # drop(installed);
//! let typo = HookMap::new().on_named("turn:aftr", DynHandler::sync(|_ev, _cx| Ok(())));
//! assert_eq!(
//!     typo.validate(HOOK_SPECS).unwrap_err().to_string(),
//!     "unknown hook `turn:aftr`; did you mean `turn:after`?",
//! );
//! ```
//!
//! # Providers
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
//! OpenAI, or any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM
//! Studio) by its root, with or without `/v1`; a compatible server needs its
//! model named:
//!
//! ```no_run
//! use zidane::providers::openai::{OpenAiConfig, OpenAiProvider};
//! use zidane::providers::{AbortSignal, Message, StreamOptions, complete};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = OpenAiProvider::new(OpenAiConfig::keyless("http://localhost:11434", "qwen3"))?;
//! let options = StreamOptions::new("", vec![Message::user("Say hello.")]);
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
//! - `sqlite` (default): `zidane::agent::SqliteStore`, sessions, tool
//!   state, durable runs and checkpoints in one local SQLite file. The
//!   bundled SQLite is compiled from C source; a host that keeps no
//!   sessions on disk can turn the feature off
//!   (`default-features = false, features = ["http", "mcp"]`) to skip it.
//! - `postgres`: `zidane::durable::PostgresRuntime` and
//!   `zidane::agent::PostgresStore`, sessions and durable runs in a
//!   PostgreSQL database several processes and hosts share (leases held
//!   as the database's advisory locks, the same fenced writes), on the
//!   pure-Rust `tokio-postgres` with rustls.
//! - `mcp` (default): MCP servers as tools (`zidane::mcp`, on `rmcp`), and
//!   `AgentOptions::mcp_servers`.
//! - `schemars` (default): `FnTool::typed`, with the input schema derived
//!   from the arguments' type; re-exports `zidane::schemars`. The derive
//!   needs `schemars = "1"` among the program's own dependencies (or
//!   `#[schemars(crate = "zidane::schemars")]` on the type).
//! - `otel`: OpenTelemetry traces of runs (`zidane::otel`).
//! - `restate`: agents as durable Restate services (`zidane::restate`).
//! - `web`: `zidane::tools::web_fetch`, web pages as text (HTML as
//!   Markdown) over the providers' HTTP client.
//! - `test-util`: `zidane::providers::scripted`, a provider that plays
//!   scripted responses, errors and delays (on tokio's pausable clock).
//!
//! Architecture invariant: this crate only re-exports; it holds no logic of
//! its own, and it is the only crate that re-exports other crates.

// Every `rust` block of the README compiles as a doc test, as pasted.
#[cfg(all(doctest, feature = "http", feature = "sqlite", feature = "schemars"))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

#[cfg(feature = "schemars")]
pub use schemars;
pub use serde_json;

pub mod prelude {
    //! The names of a first program: `use zidane::prelude::*;`.
    //!
    //! An agent and its options, a run's options, output, events and
    //! errors, behaviour settings, tools (the trait, `FnTool`, results,
    //! the set and the call's context), the `basic` preset, the providers
    //! (with the `http` feature), and the session stores.
    #[cfg(feature = "sqlite")]
    pub use crate::agent::SqliteStore;
    pub use crate::agent::{
        Agent, AgentError, AgentOptions, AgentRunOptions, AgentStats, Behavior, BuildError, MemoryStore, RunEvent,
        RunOutput, RunStatus, RunStream, Session, SessionStore, create_agent,
    };
    pub use crate::presets::{BasicOptions, basic};
    #[cfg(feature = "http")]
    pub use crate::providers::anthropic::{AnthropicConfig, AnthropicProvider};
    #[cfg(feature = "http")]
    pub use crate::providers::openai::{OpenAiConfig, OpenAiProvider};
    pub use crate::providers::{Message, Provider};
    pub use crate::tools::{FnTool, Tool, ToolContext, ToolFailure, ToolOutput, ToolSet};
}

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
        AbortController, AbortSignal, Aborted, AssistantMessage, BoxFuture, CacheTtl, Capabilities, Content,
        ContentBlock, DocumentSource, ErrorKind, EventStream, FinishReason, ImageSource, IncompleteToolCall, Message,
        MessageAccumulator, ModelPrice, Pricing, Provider, ProviderError, ProviderMeta, Role, SYSTEM_PROMPT_BOUNDARY,
        SessionTurn, StreamEvent, StreamOptions, TextToolCalls, TextToolMode, ThinkingLevel, Timestamp, ToolChoice,
        ToolResultContent, ToolSpec, TurnUsage, UsageReport, WireDecoder, WireProtocol, WireRequest, classify_status,
        classify_stream_error, complete, is_tool_parse_failure, retry_after_from_headers, retry_after_from_message,
        sse, write_report,
    };
    #[cfg(feature = "http")]
    pub use zidane_provider::{
        ApiKey, Auth, Endpoint, HttpClient, HttpProvider, LIVENESS_RECHECK, Liveness, RequestBody, ResponseBody,
        Timeouts,
    };
    // Choosing a provider from a kind, a base URL, a model and the
    // environment, and asking a server for its context window.
    #[cfg(feature = "http")]
    pub use zidane_provider::{
        ChoiceError, DEFAULT_LOCAL_WINDOW, LOCAL_IDLE_TIMEOUT, NoticeFn, ProviderChoice, ProviderKind, ResolvedWindow,
        SlotLiveness, Window, check_base_url, discover_window, is_local_url, known_window, resolve_window, shown_url,
        slots_busy,
    };

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
    pub use zidane_core::credentials::{is_secret_name, is_secret_value, is_secret_var};
    pub use zidane_core::events::ExecutionHandle;
    pub use zidane_core::execution::is_secret_env;
    pub use zidane_core::execution::{
        BackgroundChunk, BackgroundOptions, BackgroundOwner, BackgroundSink, BackgroundTask,
    };
    pub use zidane_core::execution::{
        DirEntry, EntryKind, ExecOptions, ExecOutput, ExecutionContext, ExecutionError, FileStat, Workspace,
        normalize_path,
    };
    pub use zidane_core::private::{Tightened, private_dir, private_file, private_options, tighten};
    pub use zidane_core::read_state::{
        ReadStateEntry, ReadStateMap, get_read_state, hydrate_read_state_from_session, read_state_key,
        resolve_read_state_map,
    };
    pub use zidane_core::tool::{
        DescriptionOverride, FnTool, MemoryToolState, Tool, ToolCallParts, ToolContext, ToolFailure, ToolHandler,
        ToolOutput, ToolSet, ToolState, ToolStateStore, apply_ops,
    };
    #[cfg(feature = "web")]
    pub use zidane_tools::{HostFilter, MAX_REDIRECTS, WebFetchOptions, web_fetch};
    pub use zidane_tools::{MARK_VAR, become_subreaper, credential_paths, env_files_near, stop_command_processes};
    pub use zidane_tools::{MAX_IMAGE_BYTES, ProcessContext, Sandbox, SandboxError, SandboxMode, image_media_type};
}

pub mod presets {
    //! Tool presets (`zidane-tools`): `basic`, a coding agent's tools and
    //! system prompt.
    pub use zidane_tools::{
        BasicOptions, Confinement, Preset, SPAWN_DESCRIPTION, basic, render_spawn_result, spawn, try_basic,
    };
}

#[cfg(feature = "mcp")]
pub mod mcp {
    //! MCP servers as tools (`zidane-mcp`, on `rmcp`): stdio, streamable HTTP
    //! and legacy SSE transports.
    pub use zidane_mcp::oauth;
    pub use zidane_mcp::{
        DefaultConnector, ElicitationAnswer, ElicitationHandler, ElicitationRequest, Launcher, McpConfigError,
        McpConnection, McpConnectionView, McpConnector, McpError, McpServerConfig, McpTool, McpToolMeta, McpToolWrap,
        McpTransportConfig, ToolFilter, connect_mcp_servers, login_mcp_server, namespaced_name, parse_mcp_config,
    };
}

pub mod lsp {
    //! Language servers (`zidane-lsp`): diagnostics after every edit in the
    //! tool's result, and the `lsp` tool. Turn them on with
    //! `AgentOptions::lsp`:
    //!
    //! ```no_run
    //! use zidane::lsp::{Lsp, LspOptions};
    //! let options = zidane::agent::AgentOptions {
    //!     lsp: Some(Lsp::new(LspOptions { root: Some(".".into()), ..Default::default() })),
    //!     ..Default::default()
    //! };
    //! # drop(options);
    //! ```
    pub use zidane_lsp::{
        Counts, EditReport, Finding, Launcher, LauncherFactory, Lsp, LspError, LspOptions, LspTool, METADATA_KEY,
        NoticeFn, ServerConfig, ServerState, ServerStatus, language_of, lsp_types,
    };
}

pub mod runloop {
    //! The bare run loop (`zidane-loop`), for hosts that drive a
    //! conversation without an agent: turns, the tool pipeline, retries and
    //! fallback, budgets and guards; and the seams it calls.
    pub use zidane_core::clock::{Clock, FixedClock, SystemClock};
    pub use zidane_core::seams;
    pub use zidane_loop::{LoopConfig, RunLoop, RunOptions, pairing, validate};

    // Behaviour and run errors live in `zidane::agent`, where the first
    // hour finds them; the old paths stay one release.
    /// Moved to `zidane::agent::Behavior`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::Behavior`")]
    pub type Behavior = zidane_loop::Behavior;
    /// Moved to `zidane::agent::BehaviorOverride`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::BehaviorOverride`")]
    pub type BehaviorOverride = zidane_loop::BehaviorOverride;
    /// Moved to `zidane::agent::BudgetCap`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::BudgetCap`")]
    pub type BudgetCap = zidane_loop::BudgetCap;
    /// Moved to `zidane::agent::ModelRef`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::ModelRef`")]
    pub type ModelRef = zidane_loop::ModelRef;
    /// Moved to `zidane::agent::RepeatGuard`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::RepeatGuard`")]
    pub type RepeatGuard = zidane_loop::RepeatGuard;
    /// Moved to `zidane::agent::RepeatMode`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::RepeatMode`")]
    pub type RepeatMode = zidane_loop::RepeatMode;
    /// Moved to `zidane::agent::RetryPolicy`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::RetryPolicy`")]
    pub type RetryPolicy = zidane_loop::RetryPolicy;
    /// Moved to `zidane::agent::RunError`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::RunError`")]
    pub type RunError = zidane_loop::RunError;
    /// Moved to `zidane::agent::RunErrorKind`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::RunErrorKind`")]
    pub type RunErrorKind = zidane_loop::RunErrorKind;
    /// Moved to `zidane::agent::ToolBudget`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::ToolBudget`")]
    pub type ToolBudget = zidane_loop::ToolBudget;
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
        IdentityKeyError, JournalCounts, JournalError, MessageRequest, RUN_INACTIVITY_TIMEOUT, ReplayClock,
        ReplayRuntime, ReplayTracker, RunRequest, RunResponse, TOOL_STATE_KEY, TURN_COUNT_KEY, ZidaneAgent,
        checkpoint_key, endpoint, endpoint_with_identity_keys, serve, serve_endpoint, service_options, turn_key,
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
        Changes, Checkpoint, CheckpointError, Checkpoints, CheckpointsConfig, Conflict, FileChange, ForkOutcome,
        READ_ONLY_TOOLS, RestoreAction, RestoreStep, RewindOptions, RewindOutcome, RewindPlan, RewindReport, diff,
        fork_session, fork_session_leased, rewind_conversation, rewind_conversation_leased,
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
    //! embedded SQLite store that implements it (feature `sqlite`), the
    //! PostgreSQL one several hosts share (feature `postgres`), their
    //! options, and the two errors a durable run can end with. Pass it as
    //! `AgentOptions::durable`; `Agent::resume` and `Agent::suspend` use it.
    #[cfg(feature = "sqlite")]
    pub use zidane_agent::{CheckpointOptions, CheckpointRuntime, DEFAULT_GROUP_COMMIT, Synchronous};
    pub use zidane_agent::{DurableOptions, DurableResumeOptions, SuspendOptions};
    #[cfg(feature = "postgres")]
    pub use zidane_agent::{PostgresError, PostgresOptions, PostgresRuntime};
    pub use zidane_core::durable::{
        CheckpointBackend, Durability, DurableMode, DurableRuntime, INTERRUPTED_CALL_MESSAGE, LeaseError, LeaseInfo,
        MemoryRuntime, OnInterrupted, RunLeaseHeldError, SessionWrite, StaleEpochError, StepKey, StepKind, StepRecord,
        StepValue,
    };

    /// Moved: the sessions store is `zidane::agent::SqliteStore`.
    #[cfg(feature = "sqlite")]
    #[deprecated(since = "0.1.0", note = "moved to `zidane::agent::SqliteStore`")]
    pub type SqliteStore = zidane_agent::SqliteStore;
    /// Moved: tool state is `zidane::tools::MemoryToolState`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::tools::MemoryToolState`")]
    pub type MemoryToolState = zidane_core::tool::MemoryToolState;
    #[doc(hidden)]
    pub use zidane_core::tool::ToolStateStore;
}

pub mod agent {
    //! The `zidane/agent` entry point: `create_agent` and the `Agent`, the
    //! hook vocabulary and its payload types, prompt-cache telemetry, the
    //! run-summary collector, and the types a custom tool and an agent's
    //! behaviour are written with.

    #[cfg(feature = "mcp")]
    pub use zidane_agent::McpConfigTransform;
    pub use zidane_agent::{
        ActiveSkill, SkillDefinition, SkillError, SkillPolicy, SkillProblem, SkillsConfig, load_skill_folders,
        parse_skill,
    };
    pub use zidane_agent::{
        Agent, AgentCacheChange, AgentCacheImpact, AgentError, AgentOptions, AgentRunOptions, AutoCompact, BuildError,
        CompactOptions, CompactionResult, ContextBreakdown, ContextCategory, ContextOptions, ContextSegment,
        DEFAULT_DECISION_TIMEOUT, DecideHookContext, DecisionError, DecisionRequest, DecisionResult, Decisions, Prompt,
        QueuedMessageOptions, RunEvent, RunOutput, RunStream, SegmentSource, create_agent, hook_names, new_session_id,
    };
    pub use zidane_agent::{
        ApprovalDecision, ApprovalRequest, FnInterceptor, RememberedApproval, ToolCall, ToolCallApprover,
        ToolCallInterceptor, ToolCallVerdict,
    };
    pub use zidane_agent::{
        BehaviorTransform, ContextSection, Extension, RunTransform, ToolCatalogTransform, ToolResultMetadataFn,
    };
    pub use zidane_agent::{
        CHILD_SESSION_MARK, RECORD_SESSION_PREFIX, SpawnConfig, SubagentDefinition, SubagentTools, child_session_id,
        is_conversation, spawning_call_id,
    };
    pub use zidane_agent::{
        DEFAULT_GOAL_CHECK_TIMEOUT, DEFAULT_GOAL_MAX_CHECKS, DEFAULT_GOAL_MAX_DURATION, DEFAULT_GOAL_MAX_TURNS,
        GOAL_KEY, Goal, GoalBudget, GoalCheck, GoalProgress, GoalStatus, GoalVerdict,
    };
    #[cfg(feature = "sqlite")]
    pub use zidane_agent::{OpenError, SqliteStore};
    #[cfg(feature = "postgres")]
    pub use zidane_agent::{PostgresOptions, PostgresStore};
    pub use zidane_cache_telemetry::{
        CacheBreakLoggerOptions, CacheDimensionDiff, CacheDimensionSnapshot, CachePromptSections, ErrorSink, LogSink,
        diff_cache_dimensions, fnv1a32, hash_message, hash_messages, install_cache_break_logger,
        snapshot_cache_dimensions,
    };
    pub use zidane_core::bubble::{Bubbling, install_bubbling};
    pub use zidane_core::events;
    pub use zidane_core::events::{
        AgentStats, CATALOGUE, CacheBreakInfo, CacheDimensionName, CacheDriftInfo, CacheSystemSection, HOOK_SPECS,
        HookInfo, RunStatus, TokenTotals, hook_info,
    };
    pub use zidane_core::seams::{
        ChildLedger, SpawnError, SpawnRequest, SpawnResult, Spawner, Spawning, SubagentSummary,
    };
    pub use zidane_core::session::{
        MemoryStore, Session, SessionConflict, SessionInfo, SessionRun, SessionRunOptions, SessionRunStatus,
        SessionStore, StoreError,
    };
    pub use zidane_loop::{
        Behavior, BehaviorOverride, BudgetCap, ModelRef, RepeatGuard, RepeatMode, RetryPolicy, RunError, RunErrorKind,
        ToolBudget,
    };
    pub use zidane_run_summary::{
        RunSummary, RunSummaryBlock, RunSummaryBudget, RunSummaryByModel, RunSummaryCollector,
        RunSummaryCollectorOptions, RunSummaryDiagnostics, RunSummaryError, RunSummaryRepeatGuard, RunSummaryRetry,
        RunSummarySavings, RunSummaryStatus, RunSummaryTokens, RunSummaryValidation, SummarySink,
        create_run_summary_collector,
    };

    /// Moved: the hook bus is `zidane::hooks::HookBus` (the spec's
    /// `AgentHooks`), the type `Agent::hooks` returns.
    #[deprecated(since = "0.1.0", note = "use `zidane::hooks::HookBus`")]
    pub type AgentHooks = zidane_hooks::HookBus;
    /// Moved: the hook bus is `zidane::hooks::HookBus`.
    #[deprecated(since = "0.1.0", note = "use `zidane::hooks::HookBus`")]
    pub type AgentHookBus = zidane_hooks::HookBus;
    /// Moved: hook registrations are `zidane::hooks::HookMap`, the type of
    /// `AgentOptions::hooks`.
    #[deprecated(since = "0.1.0", note = "use `zidane::hooks::HookMap`")]
    pub type AgentHookMap = zidane_hooks::HookMap;

    /// Moved to `zidane::tools::FnTool`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::tools::FnTool`")]
    pub type FnTool = zidane_core::tool::FnTool;
    /// Moved to `zidane::tools::ToolOutput`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::tools::ToolOutput`")]
    pub type ToolOutput = zidane_core::tool::ToolOutput;
    /// Moved to `zidane::tools::ToolSet`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::tools::ToolSet`")]
    pub type ToolSet = zidane_core::tool::ToolSet;
    /// Moved to `zidane::tools::ToolContext`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::tools::ToolContext`")]
    pub type ToolContext = zidane_core::tool::ToolContext;
    /// Moved to `zidane::tools::Workspace`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::tools::Workspace`")]
    pub type Workspace = zidane_core::execution::Workspace;
    /// Moved to `zidane::durable::DurableResumeOptions`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::durable::DurableResumeOptions`")]
    pub type DurableResumeOptions = zidane_agent::DurableResumeOptions;
    /// Moved to `zidane::durable::SuspendOptions`.
    #[deprecated(since = "0.1.0", note = "moved to `zidane::durable::SuspendOptions`")]
    pub type SuspendOptions = zidane_agent::SuspendOptions;
    // Traits cannot be aliased: the old paths stay, out of the docs.
    #[doc(hidden)]
    pub use zidane_core::execution::ExecutionContext;
    #[doc(hidden)]
    pub use zidane_core::tool::Tool;
}
