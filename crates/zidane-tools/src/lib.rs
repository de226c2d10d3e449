//! Built-in tools and the `basic` preset: a coding agent's tool set (shell,
//! file reading and writing, exact-match edits, listing, glob, grep, a todo
//! list, sub-agents) and its system prompt, working inside one folder.
//!
//! ```no_run
//! use std::sync::Arc;
//! use zidane_tools::{BasicOptions, basic};
//!
//! let preset = basic(BasicOptions::in_folder("."));
//! // AgentOptions { tools: preset.tools, system: Some(preset.system),
//! //                execution: Some(preset.execution), .. }
//! # let _ = preset;
//! ```
//!
//! Architecture invariant: tools hold no execution context of their own;
//! every file read, write, listing and command goes through the call's
//! [`Workspace`] (the agent's execution context and live handle), so the
//! same tools run in this process ([`ProcessContext`]), a container or a
//! remote sandbox. This crate depends on the contracts only, never on the
//! loop or the agent.

mod background;
mod files;
mod process;
mod reduce;
mod sandbox;
mod search;
mod shell;
mod spawn;
#[cfg(test)]
mod tests;
mod todo;
mod tree;
#[cfg(feature = "web")]
mod web;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use zidane_core::execution::ExecutionContext;
use zidane_core::tool::{ToolContext, ToolFailure};
use zidane_core::{ToolSet, Workspace};

pub use files::{MAX_IMAGE_BYTES, image_media_type};
pub use process::ProcessContext;
pub use sandbox::{Sandbox, SandboxError, SandboxMode, credential_paths, env_files_near};
pub use spawn::{SPAWN_DESCRIPTION, render as render_spawn_result, spawn};
pub use tree::{MARK_VAR, become_subreaper, stop_command_processes};
#[cfg(feature = "web")]
pub use web::{HostFilter, MAX_REDIRECTS, WebFetchOptions, web_fetch};
use zidane_provider::SYSTEM_PROMPT_BOUNDARY;

/// Settings of the [`basic`] preset.
#[derive(Debug, Clone)]
pub struct BasicOptions {
    /// The folder the agent works in.
    pub root: PathBuf,
    /// Refuse to edit or overwrite a file the agent has not read (or that
    /// changed since it read it).
    pub require_read_before_edit: bool,
    /// Default time limit of a shell command.
    pub shell_timeout: Duration,
    /// The budget of one tool result, in bytes: command output keeps its
    /// head and tail (collected bounded as it streams; the middle is cut
    /// with a note), `read_file` stops there and says how to read on.
    pub max_output_bytes: usize,
    /// Environment variables holding credentials (by name, `*_API_KEY`,
    /// `*_TOKEN`, `*_ACCESS_KEY`, `*PASSWORD*`…, or by value, a key's or
    /// token's shape; see `zidane_core::credentials::is_secret_var`) that
    /// commands may see anyway, by name; the others are removed from every
    /// command's environment.
    pub pass_env: Vec<String>,
    /// Where background commands' output files go (default: a folder of
    /// the system's temporary folder).
    pub task_dir: Option<PathBuf>,
    /// Reduce command output by what the command is (test runs, builds,
    /// long listings; see `shell`). Default: on.
    pub reduce_output: bool,
    /// How commands are confined. Default: [`Sandbox::workspace_write`],
    /// as in the program: commands write only in `root`, the temporary
    /// folder and the background tasks' folder (Linux's Landlock, kernel
    /// 6.2 or later). [`Sandbox::off`] turns confinement off. Where the
    /// machine cannot enforce it, [`basic`] falls back to unconfined
    /// commands and says so ([`Preset::confinement`], and a `tracing`
    /// warning); [`try_basic`] refuses instead.
    pub sandbox: Sandbox,
}

impl BasicOptions {
    /// Defaults in `root`.
    pub fn in_folder(root: impl Into<PathBuf>) -> Self {
        BasicOptions {
            root: root.into(),
            require_read_before_edit: true,
            shell_timeout: Duration::from_secs(120),
            max_output_bytes: 30_000,
            pass_env: Vec::new(),
            task_dir: None,
            reduce_output: true,
            sandbox: Sandbox::workspace_write(),
        }
    }
}

/// What a host spreads into its agent options.
#[derive(Clone)]
pub struct Preset {
    /// The tools.
    pub tools: ToolSet,
    /// The system prompt (static half, then the dynamic half after
    /// [`SYSTEM_PROMPT_BOUNDARY`]).
    pub system: String,
    /// Where the tools run: pass it as the agent's execution context.
    pub execution: Arc<dyn ExecutionContext>,
    /// How its commands are confined.
    pub confinement: Confinement,
}

/// How a preset's commands are confined.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Confinement {
    /// As [`BasicOptions::sandbox`] asked, enforced by the kernel.
    Confined(Sandbox),
    /// Not at all: [`BasicOptions::sandbox`] was [`Sandbox::off`].
    Off,
    /// Not at all, though a sandbox was asked for: this machine cannot
    /// enforce it (the error says why).
    Unenforced(SandboxError),
}

impl Confinement {
    /// Whether commands are confined.
    pub fn is_confined(&self) -> bool {
        matches!(self, Confinement::Confined(_))
    }

    /// The sandbox the kernel enforces, when there is one.
    pub fn sandbox(&self) -> Option<Sandbox> {
        match self {
            Confinement::Confined(sandbox) => Some(*sandbox),
            Confinement::Off | Confinement::Unenforced(_) => None,
        }
    }
}

impl std::fmt::Display for Confinement {
    /// The status in a line a person reads (a host prints it at start).
    ///
    /// ```
    /// use zidane::presets::Confinement;
    /// use zidane::tools::{Sandbox, SandboxError};
    /// # mod zidane {
    /// #     pub mod presets { pub use zidane_tools::Confinement; }
    /// #     pub mod tools { pub use zidane_tools::{Sandbox, SandboxError}; }
    /// # }
    ///
    /// assert_eq!(
    ///     Confinement::Confined(Sandbox::workspace_write()).to_string(),
    ///     "commands confined: writes only in the working folder and the temporary folder; network on",
    /// );
    /// assert_eq!(Confinement::Off.to_string(), "commands not confined (sandbox off)");
    /// assert_eq!(
    ///     Confinement::Unenforced(SandboxError("no Landlock".into())).to_string(),
    ///     "commands not confined: this machine cannot confine commands: no Landlock; run without a sandbox",
    /// );
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Confinement::Confined(sandbox) => write!(f, "commands confined: {sandbox}"),
            Confinement::Off => f.write_str("commands not confined (sandbox off)"),
            Confinement::Unenforced(e) => write!(f, "commands not confined: {e}"),
        }
    }
}

impl std::fmt::Debug for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Preset")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

/// Shared by the tools of a preset that have settings.
#[derive(Clone)]
pub(crate) struct Env {
    pub(crate) options: BasicOptions,
    /// The sandbox the kernel enforces on commands, when there is one.
    pub(crate) confined: Option<Sandbox>,
    /// The working folder, as the kernel names it (how a refused path in a
    /// command's output is told apart from one inside).
    pub(crate) root: PathBuf,
}

/// The workspace a call acts through; a tool that touches files or runs
/// commands cannot work without one.
pub(crate) fn workspace(cx: &ToolContext) -> Result<&Workspace, ToolFailure> {
    cx.workspace().ok_or_else(|| {
        fail(format!(
            "`{}` needs an execution context, and this agent has none",
            cx.name()
        ))
    })
}

/// The basic coding preset, its commands confined as
/// [`BasicOptions::sandbox`] asks; where this machine cannot enforce that,
/// unconfined (see [`Preset::confinement`]).
pub fn basic(options: BasicOptions) -> Preset {
    let (context, confinement) = match confine(&options) {
        Ok(confined) => confined,
        Err(e) => {
            warn_unconfined(&e);
            (process_context(&options), Confinement::Unenforced(e))
        }
    };
    assemble(options, Arc::new(context), confinement)
}

/// Says that commands run unconfined: through `tracing` when a subscriber
/// is installed, else once per process on standard error, so that a
/// program that set up no logging still hears it.
#[allow(clippy::print_stderr)] // the one line a program without logging gets, on purpose
fn warn_unconfined(e: &SandboxError) {
    static TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if tracing::dispatcher::has_been_set() {
        tracing::warn!(error = %e, "commands of the basic preset run unconfined");
    } else if !TOLD.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!("warning: commands of the basic preset run unconfined: {e}");
    }
}

/// The basic coding preset, refused where this machine cannot confine its
/// commands as [`BasicOptions::sandbox`] asks.
pub fn try_basic(options: BasicOptions) -> Result<Preset, SandboxError> {
    let (context, confinement) = confine(&options)?;
    Ok(assemble(options, Arc::new(context), confinement))
}

fn process_context(options: &BasicOptions) -> ProcessContext {
    let mut context = ProcessContext::new(options.root.clone()).pass_env(options.pass_env.clone());
    if let Some(dir) = &options.task_dir {
        context = context.task_dir(dir.clone());
    }
    context
}

fn confine(options: &BasicOptions) -> Result<(ProcessContext, Confinement), SandboxError> {
    let context = process_context(options);
    if options.sandbox.mode == SandboxMode::Off {
        return Ok((context, Confinement::Off));
    }
    let confined = context.sandboxed(options.sandbox)?;
    Ok((confined, Confinement::Confined(options.sandbox)))
}

fn assemble(options: BasicOptions, context: Arc<ProcessContext>, confinement: Confinement) -> Preset {
    let env = Env {
        options: options.clone(),
        confined: confinement.sandbox(),
        root: options.root.canonicalize().unwrap_or_else(|_| options.root.clone()),
    };
    let tools = ToolSet::new()
        .with(shell::shell(env.clone()))
        .with(shell::wait_task())
        .with(shell::shell_kill())
        .with(files::read_file(options.max_output_bytes))
        .with(files::write_file(env.clone()))
        .with(files::edit(env.clone()))
        .with(files::multi_edit(env.clone()))
        .with(files::list_files())
        .with(search::glob())
        .with(search::grep())
        .with(todo::todowrite())
        .with(todo::todoread())
        .with(spawn::spawn());
    let system = format!(
        "You are a capable coding agent working in a folder on the user's machine. Use the tools to look before you act: \
         read files before editing them, prefer `edit` and `multi_edit` (exact text replacements) over rewriting whole \
         files, and run commands with `shell` to build, test and inspect. Keep a plan with `todowrite` for work of \
         several steps, and hand self-contained side tasks (a wide search, an investigation) to `spawn`. Be concise in what you tell the user: say what you changed and why, and report failures \
         plainly.{SYSTEM_PROMPT_BOUNDARY}Working folder: {}\nOperating system: {}{}",
        options.root.display(),
        std::env::consts::OS,
        sandbox_rule(env.confined),
    );
    Preset {
        tools,
        system,
        execution: context,
        confinement,
    }
}

/// What the system prompt tells the model of the sandbox its commands run
/// in (nothing when they are not confined).
fn sandbox_rule(confined: Option<Sandbox>) -> String {
    match confined {
        Some(sandbox) if sandbox.mode == SandboxMode::ReadOnly => format!(
            "\nSandbox: commands run confined ({sandbox}): every write fails with \"Permission denied\" or \
             \"Read-only file system\"; say so to the user rather than trying another place."
        ),
        Some(sandbox) => format!(
            "\nSandbox: commands run confined ({sandbox}). A write anywhere else fails with \"Permission denied\" or \
             \"Read-only file system\": write inside the working folder{} instead.",
            if sandbox.temp { " or the temporary folder" } else { "" }
        ),
        None => String::new(),
    }
}

/// Cuts the middle of a long output, keeping its head and tail and saying
/// how much was cut.
pub(crate) fn cap_output(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let half = max / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let cut = tail_start - head_end;
    format!(
        "{}\n[... {cut} bytes cut ...]\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// A tool failure with a message.
pub(crate) fn fail(message: impl Into<String>) -> ToolFailure {
    message.into().into()
}
