//! What `create_agent` and a run take: `AgentOptions`, `AgentRunOptions`,
//! prompts and queued messages, and the cache-change questions.

use std::sync::Arc;

use zidane_core::ToolSet;
use zidane_core::clock::Clock;
use zidane_core::events::ExecutionHandle;
use zidane_core::tool::{ReadStateMap, ToolStateStore};
use zidane_hooks::HookMap;
use zidane_loop::{Behavior, ModelRef};
use zidane_provider::{CacheTtl, Pricing, Provider};

use zidane_core::execution::ExecutionContext;
#[cfg(feature = "mcp")]
use zidane_mcp::{McpConnector, McpServerConfig, McpToolWrap};

use crate::compact::AutoCompact;
use crate::decide::Decisions;
use zidane_core::session::{Session, SessionStore};

/// Options of [`create_agent`](crate::create_agent). Only `provider` is required.
#[derive(Clone, Default)]
pub struct AgentOptions {
    /// The provider(s); the first is the primary. Names must be unique.
    pub provider: Vec<Arc<dyn Provider>>,
    /// Display name (traces, logs, summaries).
    pub name: Option<String>,
    /// Default system prompt.
    pub system: Option<String>,
    /// The default model chain of a run that names none, in the same shape
    /// as [`AgentRunOptions::model`](crate::AgentRunOptions::model) (`vec!["claude-sonnet-4-5".into()]`);
    /// empty: the primary provider's default model.
    pub model: Vec<ModelRef>,
    /// Output token limit per request, for runs that set none.
    pub max_tokens: Option<u32>,
    /// Tools, with their aliases and description overrides.
    pub tools: ToolSet,
    /// Names the model sees instead of the canonical ones (canonical →
    /// alias), for every tool of a run, MCP tools included; history and
    /// hooks keep the canonical names. Applied over `tools`' own aliases;
    /// a key that names no tool is ignored (an MCP server may be offline).
    /// Inherited by sub-agents.
    pub tool_aliases: std::collections::BTreeMap<String, String>,
    /// Descriptions the model reads instead (a text, or a function of the
    /// current text), by canonical name, applied last: after `tools`' own
    /// overrides and the spawn tool's list of sub-agents. A key that names
    /// no tool is ignored. Inherited by sub-agents.
    pub tool_descriptions: std::collections::BTreeMap<String, zidane_core::tool::DescriptionOverride>,
    /// Agent-lifetime hooks, by the spec's names or by type.
    pub hooks: HookMap,
    /// Behavior defaults (a run may override them).
    pub behavior: Behavior,
    /// Auto-compaction; `None` disables it.
    pub auto_compact: Option<AutoCompact>,
    /// Prompt-cache lifetime requested (5 minutes when unset).
    pub cache_ttl: Option<CacheTtl>,
    /// Time and id source.
    pub clock: Option<Arc<dyn Clock>>,
    /// A session to run in.
    pub session: Option<Session>,
    /// The id of a session to load from (or create in) `store`.
    pub session_id: Option<String>,
    /// Whether `session_id` must name a session `store` already holds: the
    /// first run then fails with [`AgentError::SessionNotFound`] (naming
    /// the id and the store) instead of starting an empty session under a
    /// mistyped id.
    ///
    /// [`AgentError::SessionNotFound`]: crate::AgentError::SessionNotFound
    pub require_session: bool,
    /// Where sessions are kept.
    pub store: Option<Arc<dyn SessionStore>>,
    /// Backing store of durable tool state (default: the session store's,
    /// else memory).
    pub tool_state: Option<Arc<dyn ToolStateStore>>,
    /// The durable runtime every model call, tool call and loop decision
    /// goes through (checkpoint mode on the SQLite store), and what `run()`
    /// does with a run a dead process left. Sessions then live in the
    /// runtime's store: `store` may be left unset (or must be that store).
    /// Unset: nothing is recorded and [`Agent::resume`](crate::Agent::resume)
    /// is refused.
    pub durable: Option<crate::durable::DurableOptions>,
    /// A replay-mode durable runtime (a durable-execution engine's, such as
    /// `zidane-restate`'s): every model call, tool call and decision goes
    /// through it, and a call's tool-state writes travel in its step value.
    /// The engine re-runs a failed invocation, so `resume` does not apply;
    /// the host also passes the runtime's `clock`, so ids repeat on replay.
    /// Refused together with `durable`.
    pub replay_runtime: Option<Arc<dyn zidane_core::seams::DurableRuntime>>,
    /// Runs the `spawn` tool's children somewhere else than in this process
    /// (a durable-execution engine's own invocations, such as
    /// `zidane-restate`'s, so a child in flight at a crash resumes there);
    /// unset, children run in this process as [`SpawnConfig`](crate::SpawnConfig)
    /// says.
    pub spawner: Option<Arc<dyn zidane_core::seams::Spawner>>,
    /// Skills the model can load (a `skill` tool and a catalog in the
    /// system prompt's dynamic half); `None`: skills are off.
    pub skills: Option<crate::skills::SkillsConfig>,
    /// Read state shared with tools (and, when given, with a parent agent).
    pub read_state: Option<ReadStateMap>,
    /// Reason given to `cancel_tool` without one (default `user-cancelled-tool`).
    pub tool_kill_message: Option<String>,
    /// Decision provider settings.
    pub decisions: Decisions,
    /// Connect the MCP servers in the background as soon as `create_agent`
    /// returns, instead of at the first run or warm-up. A no-op without MCP
    /// servers; it needs a Tokio runtime (`create_agent` refuses it outside
    /// one). A failed bootstrap is left for the next run or warm-up to retry.
    pub eager: bool,
    /// Where tools run (default: this process, in the current folder).
    pub execution: Option<Arc<dyn ExecutionContext>>,
    /// A host-owned execution handle: used as is, never spawned, never destroyed.
    pub handle: Option<ExecutionHandle>,
    /// Prices for turn costs.
    pub pricing: Option<Pricing>,
    /// Whether tool results' reserved `metadata.artifacts` are kept in the
    /// session (and `artifact:recorded` fires); unset: on. Sessionless runs
    /// and stores without artifact support keep none either way.
    pub artifacts: Option<bool>,
    /// Extensions folded into the agent (see [`Extension`](crate::Extension)
    /// for what each field becomes); explicit options win every collision.
    pub extensions: Vec<crate::extensions::Extension>,
    /// Interceptors every tool call goes through before the gate, in order
    /// (allow, deny with a reason, rewrite the input, or ask). Inherited by
    /// sub-agents. Empty: no interceptor runs.
    pub interceptors: Vec<Arc<dyn crate::approvals::ToolCallInterceptor>>,
    /// Answers an interceptor's `ask` (the spec's `approveToolCall`); a
    /// person, often. Unset: a call that needs approval is refused.
    /// Inherited by sub-agents.
    pub approve_tool_call: Option<Arc<dyn crate::approvals::ToolCallApprover>>,
    /// How the `spawn` tool's sub-agents run: named definitions, depth and
    /// concurrency limits, read-state sharing. Inherited by the children.
    pub spawn: crate::subagents::SpawnConfig,
    /// MCP servers whose tools the agent offers (connected on the first run
    /// or warm-up, closed on destroy).
    #[cfg(feature = "mcp")]
    pub mcp_servers: Vec<McpServerConfig>,
    /// How the servers are connected (default: [`zidane_mcp::connect_mcp_servers`]).
    #[cfg(feature = "mcp")]
    pub mcp_connector: Option<Arc<dyn McpConnector>>,
    /// Re-shapes each discovered MCP tool before it is registered.
    #[cfg(feature = "mcp")]
    pub mcp_tool_wrap: Option<McpToolWrap>,
    /// Where MCP servers' OAuth tokens are kept (a [`SqliteStore`](crate::SqliteStore)
    /// keeps them in its file). Unset: in memory, for this agent's life.
    /// Set on every server whose configuration names no store of its own.
    #[cfg(feature = "mcp")]
    pub mcp_oauth_store: Option<Arc<dyn zidane_mcp::oauth::OAuthStore>>,
    /// Who answers MCP servers' elicitation requests (a dialog with the
    /// person), for every server whose configuration names none. Unset:
    /// requests are declined and the capability is not offered.
    #[cfg(feature = "mcp")]
    pub mcp_elicitation: Option<zidane_mcp::ElicitationHandler>,
    /// Folder checkpoints: the working folder recorded before each prompt
    /// and each tool batch that may change it, for [`Agent::checkpoints`],
    /// [`Agent::rewind`] and [`Agent::fork`]. One per agent (it follows the
    /// agent's run); runs need a session.
    ///
    /// [`Agent::checkpoints`]: crate::Agent::checkpoints
    /// [`Agent::rewind`]: crate::Agent::rewind
    /// [`Agent::fork`]: crate::Agent::fork
    pub checkpoints: Option<Arc<crate::checkpoints::Checkpoints>>,
    /// Language servers: after `write_file`, `edit` and `multi_edit` the
    /// result ends with the file's errors and warnings (new ones marked),
    /// and the `lsp` tool is offered when a server serves the folder.
    /// Servers start on the first file of their language, in the
    /// commands' sandbox, and stop on destroy; sub-agents share them.
    /// `None`: no language server.
    pub lsp: Option<zidane_lsp::Lsp>,
}

/// The short form: `AgentOptions::new(provider)` and a method per common
/// option, each setting its field (the struct form stays, for the rest).
///
/// ```no_run
/// use zidane::prelude::*;
/// # mod zidane { pub mod prelude { pub use zidane_agent::{AgentOptions, create_agent}; pub use zidane_core::{FnTool, ToolOutput};
/// #     pub use zidane_provider::anthropic::{AnthropicConfig, AnthropicProvider}; } }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let echo = FnTool::new("echo", "Echo.", serde_json::json!({"type": "object"}), |input, _cx| async move {
///     Ok(ToolOutput::text(input.to_string()))
/// });
/// let agent = create_agent(
///     AgentOptions::new(AnthropicProvider::new(AnthropicConfig::from_env()?)?)
///         .system("You are terse.")
///         .tool(echo)
///         .max_turns(4),
/// )?;
/// # let _ = agent;
/// # Ok(())
/// # }
/// ```
impl AgentOptions {
    /// Options with `provider` as the only provider, and the rest default.
    pub fn new(provider: impl Provider + 'static) -> Self {
        AgentOptions {
            provider: vec![Arc::new(provider)],
            ..AgentOptions::default()
        }
    }

    /// Adds a fallback provider (tried after the ones before it).
    #[must_use]
    pub fn fallback(mut self, provider: impl Provider + 'static) -> Self {
        self.provider.push(Arc::new(provider));
        self
    }

    /// With the default system prompt.
    #[must_use]
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// With the default model (the provider's own when unset).
    #[must_use]
    pub fn model(mut self, model: impl Into<ModelRef>) -> Self {
        self.model = vec![model.into()];
        self
    }

    /// Adds a tool (one of the same name is replaced).
    #[must_use]
    pub fn tool(mut self, tool: impl zidane_core::tool::Tool + 'static) -> Self {
        self.tools.insert(Arc::new(tool));
        self
    }

    /// Adds a set of tools, with its aliases and description overrides.
    #[must_use]
    pub fn tools(mut self, tools: ToolSet) -> Self {
        self.tools.merge(tools);
        self
    }

    /// With a preset's tools, system prompt and execution context (the
    /// `basic` coding agent: `.preset(basic(BasicOptions::in_folder(".")))`).
    #[must_use]
    pub fn preset(mut self, preset: zidane_tools::Preset) -> Self {
        self.tools.merge(preset.tools);
        self.system = Some(preset.system);
        self.execution = Some(preset.execution);
        self
    }

    /// With where tools run.
    #[must_use]
    pub fn execution(mut self, execution: Arc<dyn ExecutionContext>) -> Self {
        self.execution = Some(execution);
        self
    }

    /// With the behaviour defaults.
    #[must_use]
    pub fn behavior(mut self, behavior: Behavior) -> Self {
        self.behavior = behavior;
        self
    }

    /// With the number of model turns a run may take.
    #[must_use]
    pub fn max_turns(mut self, max_turns: u32) -> Self {
        self.behavior.max_turns = Some(max_turns);
        self
    }

    /// With the store sessions are kept in.
    #[must_use]
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Continues the session `id` of the store, created when new.
    #[must_use]
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// Continues the session `id`, which the store must hold already
    /// (`session_id` with [`AgentOptions::require_session`]).
    #[must_use]
    pub fn existing_session(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self.require_session = true;
        self
    }
}
