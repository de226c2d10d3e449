//! Why a server could not be used, in words a person reads.

use std::sync::Arc;

use zidane_core::events::SharedError;

/// Why a server could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The transport is not available in this build.
    #[error("the {0} transport is not supported by this build")]
    Unsupported(&'static str),
    /// The server could not be started or reached.
    #[error("cannot start the server: {what}{}", suffix(source.as_ref()))]
    Spawn {
        /// What could not be done.
        what: String,
        /// The underlying error, when there is one (`source()` returns it).
        #[source]
        source: Option<SharedError>,
    },
    /// The handshake or a request failed.
    #[error("{what}{}", suffix(source.as_ref()))]
    Protocol {
        /// What failed.
        what: String,
        /// The underlying error, when there is one (`source()` returns it).
        #[source]
        source: Option<SharedError>,
    },
    /// The connection or handshake took too long.
    #[error("no answer within {0}s")]
    Timeout(u64),
    /// The server answered 401 with this `WWW-Authenticate` challenge.
    #[error("the server requires authorization ({0})")]
    AuthRequired(String),
    /// The server is configured for OAuth and no tokens are stored: log in
    /// first (`login_mcp_server`).
    #[error("the server needs an OAuth login first")]
    LoginRequired,
    /// An OAuth login failed.
    #[error("the OAuth login failed: {0}")]
    Login(#[source] Arc<crate::oauth::OAuthError>),
}

/// The source's message after the context, so the one line a person reads
/// says both (the source stays reachable through `source()`).
pub(crate) fn suffix(source: Option<&SharedError>) -> String {
    source.map(|e| format!(": {e}")).unwrap_or_default()
}

impl McpError {
    /// A start or reach failure: `what` could not be done, because of `source`.
    pub fn spawn(what: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        McpError::Spawn {
            what: what.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// A start or reach failure with no underlying error.
    pub fn spawn_msg(what: impl Into<String>) -> Self {
        McpError::Spawn {
            what: what.into(),
            source: None,
        }
    }

    /// A protocol failure: `what` failed, because of `source`.
    pub fn protocol(what: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        McpError::Protocol {
            what: what.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// A protocol failure with no underlying error.
    pub fn protocol_msg(what: impl Into<String>) -> Self {
        McpError::Protocol {
            what: what.into(),
            source: None,
        }
    }
}

/// An error shown by its innermost cause in words: the SDK's own messages
/// name its Rust types, which say nothing to a person. The whole chain stays
/// reachable through `source()`.
#[derive(Debug)]
pub(crate) struct Plain {
    shown: String,
    inner: Box<dyn std::error::Error + Send + Sync>,
}

impl Plain {
    pub(crate) fn of(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        let mut shown = e.to_string();
        let mut cause: Option<&(dyn std::error::Error + 'static)> = e.source();
        while let Some(c) = cause {
            let text = c.to_string();
            if !text.contains("::") && !text.trim().is_empty() {
                shown = text;
            }
            cause = c.source();
        }
        if shown.contains("::") {
            // No cause in words: the message with its type names taken out.
            shown = strip_type_names(&shown);
        }
        Plain {
            shown,
            inner: Box::new(e),
        }
    }
}

impl std::fmt::Display for Plain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl std::error::Error for Plain {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.inner)
    }
}

/// `text` without bracketed Rust paths (`[a::b<c::d>]`).
pub(crate) fn strip_type_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    let mut held = String::new();
    for ch in text.chars() {
        match ch {
            '[' => {
                depth += 1;
                held.push(ch);
            }
            ']' if depth > 0 => {
                depth -= 1;
                held.push(ch);
                if depth == 0 {
                    if !held.contains("::") {
                        out.push_str(&held);
                    }
                    held.clear();
                }
            }
            _ if depth > 0 => held.push(ch),
            _ => out.push(ch),
        }
    }
    out.push_str(&held);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
