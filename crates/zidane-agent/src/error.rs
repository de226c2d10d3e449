//! The agent's error type.

use zidane_core::events::{AgentStats, SharedError};
use zidane_hooks::HookError;
use zidane_loop::{BudgetCap, RunError, RunErrorKind};
use zidane_provider::ProviderError;

/// What `create_agent` and the `Agent` methods fail with.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// A hook name is not a spec hook.
    #[error(transparent)]
    Hook(#[from] HookError),
    /// `session_id` needs a store to load the session from.
    #[error("`session_id` needs a session store (`store`)")]
    SessionIdWithoutStore,
    /// `session_id` names no session of the store, and
    /// [`AgentOptions::require_session`](crate::AgentOptions::require_session)
    /// asked for an existing one.
    #[error("no session `{id}` in {store}")]
    SessionNotFound {
        /// The id asked for.
        id: String,
        /// The store, as a person reads it (its file, or what it is).
        store: String,
    },
    /// `session` needs a store its turns are saved to. No longer
    /// returned: a session given without a store is kept in memory.
    #[error("`session` needs a session store (`store`) to save its turns to; use `MemoryStore` to keep them in memory")]
    SessionWithoutStore,
    /// Some MCP servers could not be connected (the others are).
    #[error("MCP servers failed to connect: {}", failures.iter().map(|(name, e)| format!("{name} ({e})")).collect::<Vec<_>>().join(", "))]
    McpBootstrap {
        /// Each failed server's configured name and error.
        failures: Vec<(String, SharedError)>,
    },
    /// No MCP server of this name is configured.
    #[error("no MCP server is named `{0}`")]
    UnknownMcpServer(String),
    /// An MCP server's OAuth login failed.
    #[error("the login to MCP server `{server}` failed: {error}")]
    McpLogin {
        /// The server.
        server: String,
        /// Why.
        #[source]
        error: SharedError,
    },
    /// A run (or a compaction) is in progress.
    #[error("a run is already in progress")]
    Busy,
    /// The agent was destroyed.
    #[error("the agent was destroyed")]
    Destroyed,
    /// The run failed (its statistics are inside).
    #[error(transparent)]
    Run(RunError),
    /// The session store failed.
    #[error("the session store failed")]
    Store(#[source] SharedError),
    /// The execution context failed.
    #[error("the execution context failed")]
    Execution(#[source] SharedError),
    /// A provider call outside a run (a summary, a count) failed.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// A compaction could not be made.
    #[error("compaction failed: {0}")]
    Compaction(String),
    /// A skill could not be activated.
    #[error(transparent)]
    Skill(#[from] crate::skills::SkillError),
    /// `resume` needs a checkpoint runtime (`AgentOptions::durable`).
    #[error("resume needs a checkpoint durable runtime (`durable`)")]
    NotDurable,
    /// Folder checkpoints were asked for on an agent without them
    /// (`AgentOptions::checkpoints`).
    #[error("this agent keeps no folder checkpoints (`checkpoints`)")]
    NoCheckpoints,
    /// A folder checkpoint, rewind or fork failed.
    #[error(transparent)]
    Checkpoint(#[from] crate::checkpoints::CheckpointError),
    /// `resume` needs a session (`session` or `session_id`).
    #[error("resume needs a session (`session` or `session_id`)")]
    NoSession,
    /// Another live process holds the session's lease.
    #[error(transparent)]
    RunLeaseHeld(#[from] zidane_core::durable::RunLeaseHeldError),
    /// Another process took the session over while this run was on it; the
    /// run stopped and wrote nothing more.
    #[error("{error}")]
    StaleEpoch {
        /// Which epochs.
        error: zidane_core::seams::StaleEpochError,
        /// The run's statistics up to then.
        stats: Box<AgentStats>,
    },
    /// The options could not make an agent (a sub-agent's, found when it is spawned).
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// Reads as its message with its causes (`zidane::providers::write_report`),
/// which is what a `main` returning `Result<(), Box<dyn Error>>` prints.
impl std::fmt::Debug for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        zidane_provider::write_report(self, f)
    }
}

/// Why `create_agent` refused the options. A run never fails with these:
/// they are found before there is an agent.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// `provider` was empty.
    #[error("at least one provider is required")]
    NoProvider,
    /// A provider of a multi-provider list has a blank name.
    #[error("provider #{index} has a blank name")]
    BlankProviderName {
        /// Its position in the list.
        index: usize,
    },
    /// Two providers share a name.
    #[error("two providers are named `{name}`")]
    DuplicateProviderName {
        /// The name.
        name: String,
    },
    /// `session` and `session_id` were both given.
    #[error("`session` and `session_id` cannot be used together")]
    SessionAndSessionId,
    /// `eager` needs a Tokio runtime to connect the MCP servers in. No
    /// longer returned: outside a runtime, the first run starts that work.
    #[error(
        "`eager` connects the MCP servers in the background and needs a Tokio runtime; call `create_agent` inside one"
    )]
    EagerWithoutRuntime,
    /// `store` is not the durable runtime's store.
    #[error("`store` must be the durable runtime's store (or unset) when `durable` is set")]
    DurableStoreMismatch,
    /// `durable` and `replay_runtime` were both set.
    #[error("`durable` (a checkpoint runtime) and `replay_runtime` cannot both be set")]
    TwoRuntimes,
    /// A hook name is unknown, or a hook map could not be installed.
    #[error(transparent)]
    Hook(#[from] HookError),
    /// `session_id` without a store to load it from.
    #[error("`session_id` needs a session store (`store`)")]
    SessionIdWithoutStore,
    /// `require_session` without a `session_id` to require.
    #[error("`require_session` needs the id of the session to continue (`session_id`)")]
    RequireSessionWithoutId,
    /// `session` without a store to save its turns to. No longer returned:
    /// such a session is kept in memory.
    #[error("`session` needs a session store (`store`) to save its turns to; use `MemoryStore` to keep them in memory")]
    SessionWithoutStore,
}

impl From<RunError> for AgentError {
    fn from(e: RunError) -> Self {
        match e.kind {
            RunErrorKind::StaleEpoch(error) => AgentError::StaleEpoch { error, stats: e.stats },
            _ => AgentError::Run(e),
        }
    }
}

impl AgentError {
    /// The provider's error, when a provider call failed (inside a run or
    /// outside one).
    pub fn provider_error(&self) -> Option<&ProviderError> {
        match self {
            AgentError::Provider(e) => Some(e),
            AgentError::Run(e) => e.kind.provider_error(),
            _ => None,
        }
    }

    /// The statistics of the failed run, when a run failed.
    pub fn stats(&self) -> Option<&AgentStats> {
        match self {
            AgentError::Run(e) => Some(&e.stats),
            AgentError::StaleEpoch { stats, .. } => Some(stats),
            _ => None,
        }
    }

    /// Why the run failed, when a run failed.
    pub fn run_error_kind(&self) -> Option<&RunErrorKind> {
        match self {
            AgentError::Run(e) => Some(&e.kind),
            _ => None,
        }
    }

    /// The cap that stopped the run (with its limit and the value reached),
    /// when a budget did.
    pub fn budget_exceeded(&self) -> Option<(BudgetCap, f64, f64)> {
        self.run_error_kind().and_then(RunErrorKind::budget_exceeded)
    }

    /// Whether a cost or token cap stopped the run.
    pub fn is_budget_exceeded(&self) -> bool {
        self.budget_exceeded().is_some()
    }

    /// Whether the agent was busy with another run or compaction.
    pub fn is_busy(&self) -> bool {
        matches!(self, AgentError::Busy) || matches!(self, AgentError::Run(e) if matches!(e.kind, RunErrorKind::Busy))
    }
}

/// Reads as its message with its causes (`zidane::providers::write_report`),
/// which is what a `main` returning `Result<(), Box<dyn Error>>` prints.
impl std::fmt::Debug for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        zidane_provider::write_report(self, f)
    }
}
