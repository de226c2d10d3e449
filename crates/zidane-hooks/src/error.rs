//! The bus's one error type, and the error a handler returns.

/// The error a handler may return; it stops the chain and reaches the emitter.
pub type HandlerError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What an emission or a hook-map installation can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// A handler returned an error; the handlers after it did not run.
    #[error("handler for `{name}` failed")]
    Handler {
        /// Spec name of the event.
        name: &'static str,
        /// What the handler returned.
        #[source]
        source: HandlerError,
    },
    /// A handler panicked; the handlers after it did not run and the bus
    /// stays usable.
    #[error("handler for `{name}` panicked: {message}")]
    Panicked {
        /// Spec name of the event.
        name: &'static str,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// A [`crate::HookMap`] names a hook the catalogue does not know.
    #[error("unknown hook `{name}`{}", suggestion.map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    UnknownHook {
        /// The name as written.
        name: String,
        /// The closest valid name, when one is close enough to be a typo.
        suggestion: Option<&'static str>,
    },
}

impl HookError {
    /// The spec name of the event whose handler failed, or the unknown name.
    pub fn name(&self) -> &str {
        match self {
            HookError::Handler { name, .. } | HookError::Panicked { name, .. } => name,
            HookError::UnknownHook { name, .. } => name,
        }
    }
}
