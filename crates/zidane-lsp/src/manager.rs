//! [`Lsp`]: the language servers of one folder, started lazily, one per
//! language, restarted after a crash, and off after repeated failures.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lsp_types::{Diagnostic, Uri};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::client::{Client, Launcher};
use crate::config::{ServerConfig, language_of};
use crate::error::LspError;
use crate::options::LspOptions;
use crate::uri;

/// Makes a [`Launcher`] when the first server starts (`None`: a plain
/// child process).
pub type LauncherFactory = Arc<dyn Fn() -> Option<Launcher> + Send + Sync>;

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum ServerState {
    /// Its program is found; it starts with the first file of its language.
    Ready,
    /// Running.
    Running {
        /// Its process id.
        pid: Option<u32>,
    },
    /// It failed and starts again at its next use (after a wait).
    Restarting {
        /// Failures so far.
        failures: u32,
    },
    /// Off for the session after repeated failures.
    Off {
        /// The last failure.
        reason: String,
    },
    /// Turned off in the configuration.
    Disabled,
    /// Its program is not found.
    NotFound,
}

/// A server and where it stands, for a listing.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerStatus {
    /// Its name.
    pub name: String,
    /// Its program.
    pub command: String,
    /// Its languages.
    pub languages: Vec<String>,
    /// Whether the folder calls for it (a marker or a file of its languages).
    pub applies: bool,
    /// Where it stands.
    #[serde(flatten)]
    pub state: ServerState,
}

pub(crate) struct Slot {
    pub(crate) config: ServerConfig,
    program: Option<PathBuf>,
    state: tokio::sync::Mutex<SlotState>,
    shown: Mutex<ServerState>,
}

#[derive(Default)]
struct SlotState {
    client: Option<Arc<Client>>,
    failures: u32,
    retry_at: Option<Instant>,
    off: Option<String>,
    /// Open documents of the running client, with their versions and
    /// a hash of the text last sent.
    docs: HashMap<String, (i32, u64)>,
}

pub(crate) struct Shared {
    pub(crate) options: LspOptions,
    pub(crate) root: PathBuf,
    slots: Vec<Slot>,
    launcher: Mutex<Option<Launcher>>,
    /// Makes the launcher at the first start, when none is set.
    factory: Mutex<Option<LauncherFactory>>,
    pub(crate) baselines: Mutex<HashMap<String, tokio::task::JoinHandle<Option<Vec<Diagnostic>>>>>,
    pub(crate) counts: Mutex<crate::report::Counts>,
    /// The diagnostics last given for each file (the baseline of a change
    /// no edit tool made).
    pub(crate) last_seen: Mutex<HashMap<PathBuf, Vec<Diagnostic>>>,
}

/// The language servers of one folder. Cloning shares them (the agent's
/// sub-agents use their parent's); the servers stop with
/// [`shutdown`](Lsp::shutdown) of the handle that made them.
#[derive(Clone)]
pub struct Lsp {
    pub(crate) shared: Arc<Shared>,
    owner: bool,
}

impl std::fmt::Debug for Lsp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lsp")
            .field("root", &self.shared.root)
            .finish_non_exhaustive()
    }
}

impl Lsp {
    /// The servers of `options`, none started yet.
    pub fn new(options: LspOptions) -> Lsp {
        let root = options
            .root
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let root = root.canonicalize().unwrap_or(root);
        let slots = options
            .servers
            .iter()
            .map(|config| {
                let program = config.resolve();
                let shown = match (&program, config.enabled) {
                    (_, false) => ServerState::Disabled,
                    (None, true) => ServerState::NotFound,
                    (Some(_), true) => ServerState::Ready,
                };
                Slot {
                    config: config.clone(),
                    program,
                    state: tokio::sync::Mutex::default(),
                    shown: Mutex::new(shown),
                }
            })
            .collect();
        let launcher = options.launcher.clone();
        Lsp {
            shared: Arc::new(Shared {
                options,
                root,
                slots,
                launcher: Mutex::new(launcher),
                factory: Mutex::default(),
                baselines: Mutex::default(),
                counts: Mutex::default(),
                last_seen: Mutex::default(),
            }),
            owner: true,
        }
    }

    /// A handle on the same servers whose `shutdown` leaves them running
    /// (a sub-agent's).
    pub fn shared_handle(&self) -> Lsp {
        Lsp {
            shared: Arc::clone(&self.shared),
            owner: false,
        }
    }

    /// Sets how servers start, unless the options set it.
    pub fn set_launcher_if_unset(&self, launcher: Launcher) {
        let mut slot = self.shared.launcher.lock();
        if slot.is_none() {
            *slot = Some(launcher);
        }
    }

    /// Whether a launcher (or a way to make one) is set.
    pub fn has_launcher(&self) -> bool {
        self.shared.launcher.lock().is_some() || self.shared.factory.lock().is_some()
    }

    /// Sets how the launcher is made, at the first start, unless one is
    /// set (an agent's sandbox: made only when a server starts).
    pub fn set_launcher_factory(&self, factory: LauncherFactory) {
        if self.shared.launcher.lock().is_none() {
            *self.shared.factory.lock() = Some(factory);
        }
    }

    /// The launcher, made now when only its factory is set.
    fn launcher(&self) -> Option<Launcher> {
        if let Some(launcher) = self.shared.launcher.lock().clone() {
            return Some(launcher);
        }
        let factory = self.shared.factory.lock().take()?;
        let made = factory();
        let mut slot = self.shared.launcher.lock();
        if slot.is_none() {
            slot.clone_from(&made);
        }
        slot.clone()
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.shared.root
    }

    /// The options.
    pub fn options(&self) -> &LspOptions {
        &self.shared.options
    }

    /// Every server and where it stands.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.shared
            .slots
            .iter()
            .map(|slot| ServerStatus {
                name: slot.config.name.clone(),
                command: slot.config.command.clone(),
                languages: slot.config.languages.clone(),
                applies: slot.config.applies_to(&self.shared.root),
                state: slot.shown.lock().clone(),
            })
            .collect()
    }

    /// Whether a server can serve the folder: its program is found, the
    /// folder calls for it, and it is not off.
    pub fn available(&self) -> bool {
        self.shared.slots.iter().any(|slot| {
            usable(slot)
                && slot.config.applies_to(&self.shared.root)
                && slot.state.try_lock().map_or(true, |s| s.off.is_none())
        })
    }

    /// The server for `path`'s language, if one can run.
    pub(crate) fn slot_for(&self, path: &Path) -> Option<&Slot> {
        let language = language_of(path)?;
        self.shared
            .slots
            .iter()
            .find(|slot| usable(slot) && slot.config.languages.iter().any(|l| l == language))
    }

    /// Whether a server takes `path`'s language.
    pub fn handles(&self, path: &Path) -> bool {
        self.slot_for(path).is_some()
    }

    /// `path` made absolute under the folder.
    pub fn absolute(&self, path: &str) -> PathBuf {
        let p = Path::new(path);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.shared.root.join(p)
        }
    }

    /// `path` as the model reads it: relative to the folder when under it.
    pub fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.shared.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// The running server of `slot`, started (or restarted) when needed.
    pub(crate) async fn client(&self, slot: &Slot) -> Result<Arc<Client>, LspError> {
        let mut state = slot.state.lock().await;
        if let Some(reason) = &state.off {
            return Err(LspError::Off {
                name: slot.config.name.clone(),
                reason: reason.clone(),
            });
        }
        if let Some(client) = &state.client {
            if client.is_alive() {
                return Ok(Arc::clone(client));
            }
            state.client = None;
            state.docs.clear();
            self.failed(slot, &mut state, format!("`{}` exited", slot.config.name));
            if let Some(reason) = &state.off {
                return Err(LspError::Off {
                    name: slot.config.name.clone(),
                    reason: reason.clone(),
                });
            }
        }
        if state.retry_at.is_some_and(|at| Instant::now() < at) {
            return Err(LspError::Restarting(slot.config.name.clone()));
        }
        let Some(program) = slot.program.as_deref() else {
            return Err(LspError::NoServer(slot.config.name.clone()));
        };
        let launcher = self.launcher();
        let started = Client::start(
            &slot.config,
            program,
            &self.shared.root,
            launcher.as_ref(),
            self.shared.options.request_timeout,
        )
        .await;
        match started {
            Ok(client) => {
                let client = Arc::new(client);
                *slot.shown.lock() = ServerState::Running { pid: client.pid };
                state.client = Some(Arc::clone(&client));
                state.retry_at = None;
                Ok(client)
            }
            Err(e) => {
                self.failed(slot, &mut state, e.to_string());
                Err(e)
            }
        }
    }

    /// Counts a failure: a wait before the next start, or off for the
    /// session (told once).
    fn failed(&self, slot: &Slot, state: &mut SlotState, reason: String) {
        state.failures += 1;
        let options = &self.shared.options;
        if state.failures >= options.max_failures {
            let notice = format!(
                "language server `{}` is off for this session after {} failures: {reason}",
                slot.config.name, state.failures
            );
            tracing::warn!("{notice}");
            if let Some(tell) = &options.on_notice {
                tell(&notice);
            }
            *slot.shown.lock() = ServerState::Off { reason: reason.clone() };
            state.off = Some(reason);
            return;
        }
        tracing::info!(server = %slot.config.name, failures = state.failures, "language server failed: {reason}");
        let wait = match state.failures {
            0 | 1 => Duration::ZERO,
            n => options.backoff.saturating_mul(1 << (n - 2).min(16)),
        };
        state.retry_at = Some(Instant::now() + wait);
        *slot.shown.lock() = ServerState::Restarting {
            failures: state.failures,
        };
    }

    /// Opens `path` with `text` in its server, or sends the new text;
    /// the version the server has, and whether anything was sent (the
    /// same text again is not).
    pub(crate) async fn sync(
        &self,
        slot: &Slot,
        client: &Client,
        path: &Path,
        text: &str,
    ) -> Result<(Uri, i32, bool), LspError> {
        let uri = uri::from_path(path);
        let mut state = slot.state.lock().await;
        let key = uri.as_str().to_owned();
        let hash = text_hash(text);
        match state.docs.get(&key).copied() {
            Some((version, sent)) if sent == hash => Ok((uri, version, false)),
            Some((version, _)) => {
                let version = version + 1;
                client
                    .notify::<lsp_types::notification::DidChangeTextDocument>(lsp_types::DidChangeTextDocumentParams {
                        text_document: lsp_types::VersionedTextDocumentIdentifier {
                            uri: uri.clone(),
                            version,
                        },
                        content_changes: vec![lsp_types::TextDocumentContentChangeEvent {
                            range: None,
                            range_length: None,
                            text: text.to_owned(),
                        }],
                    })
                    .await?;
                state.docs.insert(key, (version, hash));
                Ok((uri, version, true))
            }
            None => {
                let language = language_of(path).unwrap_or("plaintext").to_owned();
                client
                    .notify::<lsp_types::notification::DidOpenTextDocument>(lsp_types::DidOpenTextDocumentParams {
                        text_document: lsp_types::TextDocumentItem {
                            uri: uri.clone(),
                            language_id: language,
                            version: 1,
                            text: text.to_owned(),
                        },
                    })
                    .await?;
                state.docs.insert(key, (1, hash));
                Ok((uri, 1, true))
            }
        }
    }

    /// The running server for `path`, with the file open in it as it is
    /// on disk.
    pub(crate) async fn open(&self, path: &Path) -> Result<(Arc<Client>, Uri, String), LspError> {
        let slot = self
            .slot_for(path)
            .ok_or_else(|| LspError::NoServer(self.shown(path)))?;
        let text = std::fs::read_to_string(path).map_err(|source| LspError::Read {
            path: self.shown(path),
            source,
        })?;
        let client = self.client(slot).await?;
        let before = client.published(&uri::from_path(path)).count;
        let (uri, version, sent) = self.sync(slot, &client, path, &text).await?;
        // A question asked before the server has analysed the file sees
        // too little (typescript-language-server answers references from
        // the file alone while its project loads): the file's diagnostics
        // say it has, waited for at most `settle`.
        if sent {
            match settled(slot, &client, &uri, before, version, self.shared.options.settle).await {
                Ok(list) => {
                    self.shared.last_seen.lock().insert(path.to_path_buf(), list);
                }
                Err(e) => tracing::debug!(error = %e, "asking before the server has analysed the file"),
            }
        }
        Ok((client, uri, text))
    }

    /// The diagnostics of `path` with `text` as its content, waiting at
    /// most `settle` for the server; with the server's name.
    pub async fn diagnostics(&self, path: &Path, text: &str) -> Result<(String, Vec<Diagnostic>), LspError> {
        self.diagnostics_within(path, text, self.shared.options.settle).await
    }

    /// The same, waiting at most `settle`.
    pub(crate) async fn diagnostics_within(
        &self,
        path: &Path,
        text: &str,
        settle: Duration,
    ) -> Result<(String, Vec<Diagnostic>), LspError> {
        let slot = self
            .slot_for(path)
            .ok_or_else(|| LspError::NoServer(self.shown(path)))?;
        let client = self.client(slot).await?;
        let before = client.published(&uri::from_path(path)).count;
        let (uri, version, sent) = self.sync(slot, &client, path, text).await?;
        let list = if sent || client.capabilities.diagnostic_provider.is_some() {
            settled(slot, &client, &uri, before, version, settle).await?
        } else {
            // The server has this text already: what it published is the
            // answer.
            client.published(&uri).diagnostics
        };
        self.shared.last_seen.lock().insert(path.to_path_buf(), list.clone());
        Ok((slot.config.name.clone(), list))
    }

    /// Stops every server (`shutdown`, `exit`, then a kill), unless this
    /// is a [`shared_handle`](Lsp::shared_handle).
    pub async fn shutdown(&self) {
        if !self.owner {
            return;
        }
        for slot in &self.shared.slots {
            let client = {
                let mut state = slot.state.lock().await;
                state.docs.clear();
                state.client.take()
            };
            if let Some(client) = client {
                client
                    .shutdown(self.shared.options.request_timeout.min(Duration::from_secs(3)))
                    .await;
                let mut shown = slot.shown.lock();
                if matches!(*shown, ServerState::Running { .. }) {
                    *shown = ServerState::Ready;
                }
            }
        }
    }

    /// The process id of the running server for `path`'s language (for
    /// a test that kills it, or a listing).
    pub fn pid_for(&self, path: &Path) -> Option<u32> {
        let slot = self.slot_for(path)?;
        match &*slot.shown.lock() {
            ServerState::Running { pid } => *pid,
            _ => None,
        }
    }
}

/// The diagnostics of `uri` once the server has analysed its `version`
/// (`before` publications had been seen): asked where the server offers
/// it, else the next publication.
async fn settled(
    slot: &Slot,
    client: &Client,
    uri: &Uri,
    before: u64,
    version: i32,
    settle: Duration,
) -> Result<Vec<Diagnostic>, LspError> {
    if client.capabilities.diagnostic_provider.is_some() {
        crate::wait::pull(client, uri, settle).await
    } else {
        crate::wait::push(client, uri, before, version, settle, slot.config.clean_silence).await
    }
}

fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

fn usable(slot: &Slot) -> bool {
    slot.config.enabled && slot.program.is_some()
}

impl Lsp {
    /// The server called `name`, if it can run.
    pub(crate) fn slot_named(&self, name: &str) -> Option<&Slot> {
        self.shared.slots.iter().find(|s| s.config.name == name && usable(s))
    }
}
