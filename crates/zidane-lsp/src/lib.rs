//! Language servers for zidane agents: the compiler's diagnostics after
//! every edit, and code navigated by meaning.
//!
//! [`Lsp`] holds the language servers of one folder. A server starts on
//! the first file of its language (one per language, shared by the agent's
//! sub-agents), speaks JSON-RPC over its standard input and output with
//! `Content-Length` framing (the protocol's types are `lsp-types`'), is
//! initialized for the folder, and is told of each file it is asked about
//! (`didOpen`, then `didChange`). Diagnostics are asked for
//! (`textDocument/diagnostic`) where the server offers it and otherwise
//! taken from its `publishDiagnostics`. Every request has a timeout; a
//! server that crashes is started again (at once, then after a doubling
//! wait), and after [`LspOptions::max_failures`] it is off for the session
//! with one notice.
//!
//! [`Lsp::install`] puts diagnostics after edits on an agent's hooks
//! (`tool:before` takes the file's diagnostics before the edit,
//! `tool:transform` appends the ones after it, told apart as new or
//! already there); [`Lsp::report_changed`] and [`append_reports`] do the
//! same for files a command changed, which the host names (the agent
//! finds them with a stat walk of the folder around each `shell` call);
//! [`LspTool`] is the `lsp` tool. An agent does both with
//! one option (`AgentOptions::lsp`).
//!
//! ```no_run
//! use zidane_lsp::{Lsp, LspOptions};
//!
//! # async fn demo() {
//! let lsp = Lsp::new(LspOptions { root: Some(".".into()), ..Default::default() });
//! let text = std::fs::read_to_string("src/main.py").unwrap();
//! if let Ok((server, diagnostics)) = lsp.diagnostics("src/main.py".as_ref(), &text).await {
//!     println!("{server}: {} diagnostics", diagnostics.len());
//! }
//! lsp.shutdown().await;
//! # }
//! ```

mod changed;
mod client;
mod config;
mod error;
mod framing;
mod hook;
mod manager;
mod options;
mod report;
mod tool;
mod uri;
mod wait;

pub use changed::{ChangedFile, MAX_CHANGED_FILES, append_reports, merge};
pub use client::Launcher;
pub use config::{ServerConfig, language_of};
pub use error::LspError;
pub use hook::METADATA_KEY;
pub use lsp_types;
pub use manager::{LauncherFactory, Lsp, ServerState, ServerStatus};
pub use options::{LspOptions, NoticeFn};
pub use report::{Counts, EditReport, Finding};
pub use tool::LspTool;
