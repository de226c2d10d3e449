//! How a host sets language servers up.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::client::Launcher;
use crate::config::ServerConfig;

/// Told once when something about a server needs a person's attention
/// (a server turned off for the session).
pub type NoticeFn = Arc<dyn Fn(&str) + Send + Sync>;

/// The language servers of one folder.
#[derive(Clone)]
pub struct LspOptions {
    /// The folder (default: the agent's working folder, else the current
    /// one).
    pub root: Option<PathBuf>,
    /// The servers, in order of preference for a language (default:
    /// [`ServerConfig::known`]). A server whose program is not found is
    /// skipped.
    pub servers: Vec<ServerConfig>,
    /// The longest wait for any one answer (default 10 s).
    pub request_timeout: Duration,
    /// The longest wait for a file's diagnostics after a change (default
    /// 4 s): a slower server means no diagnostics for that edit.
    pub settle: Duration,
    /// Failures (a start that failed, a crash) after which a server is off
    /// for the session (default 3).
    pub max_failures: u32,
    /// The wait before the third start, doubled after each failure (the
    /// second start is immediate; default 1 s).
    pub backoff: Duration,
    /// At most this many diagnostics are listed after an edit (default 20).
    pub max_diagnostics: usize,
    /// The tools after whose calls a file's diagnostics are reported, the
    /// file being their input's `path` (default `write_file`, `edit`,
    /// `multi_edit`).
    pub edit_tools: Vec<String>,
    /// The tools after whose calls the files they changed get their
    /// diagnostics, when the host finds which (the agent does, with a stat
    /// walk of the folder around each call; default `shell`).
    pub command_tools: Vec<String>,
    /// Starts the servers' processes (the agent sets its commands' sandbox
    /// when unset).
    pub launcher: Option<Launcher>,
    /// Where notices go (besides `tracing`).
    pub on_notice: Option<NoticeFn>,
}

impl Default for LspOptions {
    fn default() -> Self {
        LspOptions {
            root: None,
            servers: ServerConfig::known(),
            request_timeout: Duration::from_secs(10),
            settle: Duration::from_secs(4),
            max_failures: 3,
            backoff: Duration::from_secs(1),
            max_diagnostics: 20,
            edit_tools: ["write_file", "edit", "multi_edit"].map(String::from).to_vec(),
            command_tools: vec!["shell".to_owned()],
            launcher: None,
            on_notice: None,
        }
    }
}

impl std::fmt::Debug for LspOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspOptions")
            .field("root", &self.root)
            .field("servers", &self.servers)
            .field("request_timeout", &self.request_timeout)
            .field("settle", &self.settle)
            .field("max_failures", &self.max_failures)
            .finish_non_exhaustive()
    }
}
