//! What every conversation in one folder is built from ([`Setup`]): the
//! settings, the sessions file and its durable runtime, the folder's
//! checkpoints, the provider's kind and context window, and the
//! instruction files; and the pieces a conversation needs from them (where
//! commands run, the trace exporter, the session to run in).

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use zidane::agent::{SessionStore, SqliteStore};
use zidane::durable::{CheckpointOptions, CheckpointRuntime, Synchronous};
use zidane::providers::ProviderKind;
use zidane::tools::ExecutionContext;

use crate::Error;
use crate::instructions::Instructions;
use crate::settings::{Approve, SandboxFlag, Settings};

/// The `shell` calls about to run: each command and its call's id, noted
/// when the call is dispatched (what a front end that runs commands
/// elsewhere, such as an editor's terminal, needs to tie a command to its
/// call).
#[derive(Debug, Clone, Default)]
pub struct ShellCalls(Arc<Mutex<Vec<(String, String)>>>);

impl ShellCalls {
    pub(crate) fn push(&self, command: String, call_id: String) {
        self.0.lock().push((command, call_id));
    }

    /// The id of the call that runs `command` (taken once).
    pub fn take(&self, command: &str) -> Option<String> {
        let mut calls = self.0.lock();
        calls.iter().position(|(c, _)| c == command).map(|i| calls.remove(i).1)
    }
}

/// Wraps where a conversation's tools run (an editor's files and
/// terminals around the local context).
pub type ExecutionWrap = Arc<dyn Fn(Arc<dyn ExecutionContext>, ShellCalls) -> Arc<dyn ExecutionContext> + Send + Sync>;

/// What every conversation of a folder is built from.
pub struct Setup {
    /// The settings in effect.
    pub settings: Settings,
    /// The sessions file.
    pub store: SqliteStore,
    /// The durable runtime on it.
    pub runtime: Arc<CheckpointRuntime>,
    /// The folder's checkpoints.
    pub checkpoints: Arc<zidane::checkpoints::Checkpoints>,
    /// The provider's kind.
    pub kind: ProviderKind,
    /// The model's context window, when known.
    pub window: Option<zidane::providers::Window>,
    /// Whether the model takes images.
    pub takes_images: bool,
    /// The instruction files found.
    pub instructions: Instructions,
    /// What runs without asking, changeable while conversations run.
    pub approve: Arc<Mutex<Approve>>,
    /// Whether the front end answers questions (approvals, forms); without
    /// it a call that would ask is refused.
    pub answers: bool,
    /// Whether the front end is one a person goes on with (the terminal
    /// session): it continues an interrupted run itself when it opens a
    /// session, where a run of its own (`--resume` once) continues it as
    /// its first step.
    pub interactive: bool,
    /// Wraps where the tools run.
    pub wrap_execution: Option<ExecutionWrap>,
    /// Lines for the person about the set-up: the window asked of the
    /// server, the instruction files, the configuration's notes.
    pub notes: Vec<String>,
    /// Facts the front end keeps with the session, written with its
    /// folder at the first prompt (a worktree of its own, where a server
    /// made it).
    pub session_meta: Vec<(String, serde_json::Value)>,
}

impl Setup {
    /// The set-up of `settings`' folder on `runtime`: what the provider's
    /// window is (asked of a local server), the instruction files, the
    /// checkpoints.
    pub async fn new(settings: Settings, runtime: Arc<CheckpointRuntime>, answers: bool) -> Result<Setup, Error> {
        let store = runtime.sqlite().clone();
        let checkpoints = crate::checkpoints::open(&settings.cwd, &store, settings.max_checkpoints);
        let kind = settings
            .provider_choice()
            .kind()
            .map_err(|e| Error::usage(e.to_string()))?;
        let takes_images = settings.images.unwrap_or(kind != ProviderKind::OpenaiCompatible);
        let resolved = zidane::providers::resolve_window(
            settings.context_window,
            kind,
            settings.model.as_deref(),
            settings.base_url.as_deref(),
        )
        .await;
        let mut notes = settings.notes.clone();
        notes.extend(resolved.note);
        notes.extend(store.tightened().iter().map(ToString::to_string));
        let instructions = crate::instructions::discover(&settings.paths);
        notes.extend(instructions.summary());
        let approve = Arc::new(Mutex::new(settings.approve));
        Ok(Setup {
            settings,
            store,
            runtime,
            checkpoints,
            kind,
            window: resolved.window,
            takes_images,
            instructions,
            approve,
            answers,
            interactive: false,
            wrap_execution: None,
            notes,
            session_meta: Vec::new(),
        })
    }

    /// The working folder.
    pub fn cwd(&self) -> &std::path::Path {
        &self.settings.cwd
    }

    /// The window's size in tokens, when known.
    pub fn window_tokens(&self) -> Option<u32> {
        self.window.as_ref().map(|w| w.tokens)
    }

    /// The line that says how commands are confined.
    pub fn sandbox_line(&self) -> String {
        match execution(&self.settings, None) {
            Ok((_, note)) => note,
            Err(e) => e.message().to_owned(),
        }
    }
}

/// The durable runtime on the sessions file (`store`, else the default
/// place): every session runs on it.
///
/// Commits are synced to disk only before an effect outside the process
/// (a command or write starting, an approval given, a compaction's
/// summary): a crash of the process loses nothing written, and a power
/// loss can take a session back to the last of those, asking the model
/// again for the turns after it but never running a command twice or
/// asking a person twice. Syncing every commit would cost a sync per turn
/// even for turns that only read.
pub fn open_runtime(store: Option<&std::path::Path>) -> Result<Arc<CheckpointRuntime>, Error> {
    let path = store.map_or_else(SqliteStore::default_path, std::path::Path::to_path_buf);
    let options = CheckpointOptions {
        synchronous: Synchronous::BeforeEffects,
        ..Default::default()
    };
    CheckpointRuntime::open_with(&path, options)
        .map(Arc::new)
        .map_err(|e| Error::usage(format!("cannot open the sessions file: {e}")))
}

/// The session to run in: `settings.session`, the latest with `resume`,
/// else a new one.
pub async fn session_id(settings: &Settings, store: &dyn SessionStore) -> Result<String, Error> {
    if let Some(id) = &settings.session {
        return Ok(id.clone());
    }
    if settings.resume {
        return latest_session(store)
            .await?
            .ok_or_else(|| Error::usage("there is no session to resume yet"));
    }
    Ok(new_session_id())
}

/// The most recent session (a sub-agent's is part of its parent's).
pub async fn latest_session(store: &dyn SessionStore) -> Result<Option<String>, Error> {
    let sessions = store
        .list()
        .await
        .map_err(|e| Error::run(format!("cannot read the sessions: {e}")))?;
    Ok(sessions
        .into_iter()
        .map(|s| s.id)
        .find(|id| zidane::agent::is_conversation(id)))
}

/// A new session's id: the time and this process.
pub fn new_session_id() -> String {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("s-{stamp:x}-{:x}", std::process::id())
}

/// The MCP servers of the settings, in the MCP crate's shape.
pub fn mcp_servers(settings: &Settings) -> Result<Vec<zidane::mcp::McpServerConfig>, Error> {
    if settings.mcp.is_empty() {
        return Ok(Vec::new());
    }
    let servers: serde_json::Map<String, serde_json::Value> = settings
        .mcp
        .iter()
        .map(|(name, value, _)| (name.clone(), value.clone()))
        .collect();
    let text = serde_json::json!({ "mcpServers": servers }).to_string();
    zidane::mcp::parse_mcp_config(&text).map_err(|e| {
        let origins: Vec<String> = settings.mcp.iter().map(|(n, _, o)| format!("`{n}` from {o}")).collect();
        Error::usage(format!("the MCP servers ({}): {e}", origins.join(", ")))
    })
}

/// Where commands run: this machine in the working folder, confined as the
/// settings ask, and the line that says how. An explicit `sandbox` the
/// machine cannot enforce is an error; the default falls back to
/// unconfined commands and says so.
pub fn execution(
    settings: &Settings,
    task_dir: Option<PathBuf>,
) -> Result<(Arc<zidane::tools::ProcessContext>, String), Error> {
    use zidane::tools::{ProcessContext, Sandbox, SandboxMode};
    let cwd = &settings.cwd;
    let mut context = ProcessContext::new(cwd).pass_env(settings.pass_env.clone());
    if let Some(dir) = task_dir {
        context = context.task_dir(dir);
    }
    let mode = match settings.sandbox {
        Some(SandboxFlag::Off) => SandboxMode::Off,
        Some(SandboxFlag::ReadOnly) => SandboxMode::ReadOnly,
        Some(SandboxFlag::WorkspaceWrite) | None => SandboxMode::WorkspaceWrite,
    };
    if mode == SandboxMode::Off && !settings.network {
        return Err(Error::usage("--no-network needs a sandbox (drop `--sandbox off`)"));
    }
    let sandbox = Sandbox {
        mode,
        network: settings.network,
        temp: true,
    };
    let network = if settings.network { "network on" } else { "no network" };
    match (mode, context.clone().sandboxed(sandbox)) {
        (SandboxMode::Off, _) => Ok((
            Arc::new(context),
            "sandbox off: commands may write anywhere this user can".to_owned(),
        )),
        (_, Ok(confined)) => {
            let mut note = match mode {
                SandboxMode::ReadOnly => format!("sandbox read-only: commands and tools write nothing ({network})"),
                _ => format!(
                    "sandbox workspace-write: commands write only in {} and the temporary folder ({network})",
                    cwd.display()
                ),
            };
            // A served session's token and address are the server's alone:
            // a command with them could drive any session.
            if let Some(home) = crate::paths::user_dir() {
                confined.withhold(["serve-token", "serve.json", "serve.sock"].map(|f| home.join(f)));
            }
            for path in &settings.sandbox_read {
                confined.open_path(path);
            }
            note.push_str(&withheld_note(&confined, &settings.sandbox_read));
            Ok((Arc::new(confined), note))
        }
        (_, Err(e)) if settings.sandbox.is_none() && settings.network => Ok((
            Arc::new(context),
            format!("{e}; commands run unconfined (`--sandbox off` says so without this note)"),
        )),
        (_, Err(e)) => Err(Error::usage(e.to_string())),
    }
}

/// What the sandbox keeps from commands, as the end of its note: the
/// credential stores withheld (less those opened on purpose), any of them
/// commands can read all the same (inside a folder they may write), and
/// the files found open to other users and narrowed.
fn withheld_note(context: &zidane::tools::ProcessContext, opened: &[PathBuf]) -> String {
    let mut note = String::from("; credential stores and the sessions file are withheld from commands");
    if !opened.is_empty() {
        let names: Vec<String> = opened.iter().map(|p| p.display().to_string()).collect();
        note.push_str(&format!(" (readable on purpose: {})", names.join(", ")));
    }
    let exposed: Vec<String> = context.exposed().iter().map(|p| p.display().to_string()).collect();
    if !exposed.is_empty() {
        note.push_str(&format!(
            "; inside a folder commands may write, these stay readable to them: {}",
            exposed.join(", ")
        ));
    }
    for tightened in context.tightened() {
        note.push_str(&format!("; {tightened}"));
    }
    note
}

/// The trace exporter the settings or the standard variables ask for.
pub fn tracing_export(settings: &Settings) -> Result<Option<zidane::otel::OtelExporter>, Error> {
    let options = match &settings.otlp {
        Some(endpoint) => {
            let mut options =
                zidane::otel::OtelOptions::from_env().unwrap_or_else(|| zidane::otel::OtelOptions::new(""));
            options.endpoint = endpoint.clone();
            options.traces_endpoint = None;
            Some(options)
        }
        None => zidane::otel::OtelOptions::from_env(),
    };
    let Some(mut options) = options else {
        return Ok(None);
    };
    options.capture_payloads = settings.otlp_payloads;
    zidane::otel::OtelExporter::new(options)
        .map(Some)
        .map_err(|e| Error::usage(format!("--otlp: {e}")))
}
