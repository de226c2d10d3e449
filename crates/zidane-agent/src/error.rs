//! The agent's error type.

use zidane_hooks::HookError;
use zidane_loop::RunError;
use zidane_loop::events::SharedError;
use zidane_provider::ProviderError;

/// What `create_agent` and the `Agent` methods fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
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
    /// A hook name is not a spec hook.
    #[error(transparent)]
    Hook(#[from] HookError),
    /// `session` and `session_id` were both given.
    #[error("`session` and `session_id` cannot be used together")]
    SessionAndSessionId,
    /// `session_id` needs a store to load the session from.
    #[error("`session_id` needs a session store (`store`)")]
    SessionIdWithoutStore,
    /// A run (or a compaction) is in progress.
    #[error("a run is already in progress")]
    Busy,
    /// The agent was destroyed.
    #[error("the agent was destroyed")]
    Destroyed,
    /// The run failed (its statistics are inside).
    #[error(transparent)]
    Run(#[from] RunError),
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
}
