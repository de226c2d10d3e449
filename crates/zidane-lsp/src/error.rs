//! What can go wrong with a language server.

use std::time::Duration;

/// A language server's failure. None of them stops a run: a tool result
/// goes without diagnostics, the `lsp` tool answers with the reason.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// Reading from or writing to the server failed.
    #[error("i/o with the language server: {0}")]
    Io(#[source] std::io::Error),
    /// The server could not be started.
    #[error("could not start `{command}`: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The server broke the protocol.
    #[error("the language server broke the protocol: {0}")]
    Protocol(String),
    /// The server answered a request with an error.
    #[error("the language server answered {method} with error {code}: {message}")]
    Rpc {
        /// The request's method.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The server did not answer in time.
    #[error("the language server did not answer {method} within {after:?}")]
    Timeout {
        /// The request's method.
        method: String,
        /// How long it was given.
        after: Duration,
    },
    /// The server's process ended.
    #[error("the language server `{0}` exited")]
    Exited(String),
    /// The server failed too often and is off for the session.
    #[error("the language server `{name}` is off for this session: {reason}")]
    Off {
        /// The server's name.
        name: String,
        /// The last failure.
        reason: String,
    },
    /// The server failed and waits before it is started again.
    #[error("the language server `{0}` is restarting")]
    Restarting(String),
    /// No server handles the file's language.
    #[error("no language server for {0}")]
    NoServer(String),
    /// A file could not be read.
    #[error("could not read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
