//! Where tools run: the execution-context interface. The in-process
//! implementation lives in `zidane-tools`; containers and remote sandboxes
//! implement the same trait.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use zidane_provider::{AbortSignal, BoxFuture};

use crate::events::{ExecutionHandle, SharedError, TaskExitInfo};

/// How a command ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecOutput {
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
    /// Exit code; `None` when a signal ended the process.
    pub exit_code: Option<i32>,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// Killed by the abort signal.
    pub aborted: bool,
}

/// Options of one command.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Kill the command after this long.
    pub timeout: Option<Duration>,
    /// Kill the command when this aborts.
    pub signal: AbortSignal,
    /// Working folder, relative to the root.
    pub cwd: Option<String>,
    /// Bytes of each of standard output and standard error kept: the first
    /// and last halves, the middle cut with a note (`None`: the context's
    /// own bound).
    pub max_output_bytes: Option<usize>,
}

/// What a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// Anything else: a FIFO, a socket, a device. File tools refuse these
    /// (reading a FIFO would block forever).
    Other,
}

/// A folder entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// Name within its folder.
    pub name: String,
    /// What it is (a link counts as what it points to).
    pub kind: EntryKind,
    /// Size in bytes (files).
    pub size: u64,
}

impl DirEntry {
    /// Whether it is a folder.
    pub fn is_dir(&self) -> bool {
        self.kind == EntryKind::Dir
    }
}

/// What [`ExecutionContext::stat`] reports of an existing path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    /// What it is.
    pub kind: EntryKind,
    /// Size in bytes.
    pub size: u64,
    /// Last modification (epoch ms), when the context knows it.
    pub mtime_ms: Option<u64>,
}

/// A background task as its execution context knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundTask {
    /// Its id, unique within the context.
    pub task_id: String,
    /// The command line.
    pub command: String,
    /// The folder it runs in.
    pub cwd: String,
    /// The file its standard output and standard error go to, as a path the
    /// context's `read_file` accepts.
    pub output_path: String,
    /// The process id of the command's shell (the leader of its process
    /// group on POSIX).
    pub pid: u32,
    /// When it started (epoch ms).
    pub started_at: u64,
    /// Who owns it (the agent its exits are reported to).
    pub owner: String,
    /// Bytes written to the output file so far.
    pub bytes_written: u64,
    /// How it ended; `None` while it runs.
    pub exit: Option<TaskExitInfo>,
}

impl BackgroundTask {
    /// Whether it still runs.
    pub fn is_running(&self) -> bool {
        self.exit.is_none()
    }
}

/// Hears about the background tasks of one owner. A context calls
/// `started` once a task runs and `exited` exactly once when it ends
/// (naturally, killed, or torn down with its handle).
pub trait BackgroundSink: Send + Sync {
    /// A task started.
    fn started(&self, task: &BackgroundTask);
    /// A task ended.
    fn exited(&self, task: &BackgroundTask, exit: &TaskExitInfo);
    /// The model has seen how `task_id` ended (it waited for it or killed
    /// it itself): its exit needs no notification. Called by tools.
    fn acknowledge(&self, task_id: &str) {
        let _ = task_id;
    }
}

/// Who a background task belongs to: the owner's name and where its
/// start and exit are reported.
#[derive(Clone)]
pub struct BackgroundOwner {
    /// The owner's name (an agent's id).
    pub owner: String,
    /// Where the task's start and exit go.
    pub sink: Arc<dyn BackgroundSink>,
}

impl fmt::Debug for BackgroundOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackgroundOwner")
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

/// Options of one background command.
#[derive(Debug, Clone, Default)]
pub struct BackgroundOptions {
    /// Working folder, relative to the root.
    pub cwd: Option<String>,
    /// Who owns the task; `None`: nobody is told of it (it can still be
    /// listed, read and killed).
    pub owner: Option<BackgroundOwner>,
}

/// New output of a background task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackgroundChunk {
    /// The bytes from the offset asked for (at most the bound asked for).
    pub bytes: Vec<u8>,
    /// Bytes written to the output file so far.
    pub total: u64,
}

/// Where tools run: spawns a handle, runs commands and touches files through
/// it. Paths are the model's: relative to the context's working folder (or
/// absolute, when the context allows it); a context refuses the paths it
/// will not touch with an error the model can read. `zidane-tools` has the
/// in-process implementation; containers and remote sandboxes implement the
/// same interface.
pub trait ExecutionContext: Send + Sync {
    /// The kind of context (`process`, `docker`, ...).
    fn kind(&self) -> &str;
    /// Creates the handle the agent's tools run in.
    fn spawn(&self) -> BoxFuture<'_, Result<ExecutionHandle, SharedError>>;
    /// Runs a shell command.
    fn exec<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        command: &'a str,
        options: ExecOptions,
    ) -> BoxFuture<'a, Result<ExecOutput, SharedError>>;
    /// Reads a file.
    fn read_file<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, SharedError>>;
    /// Writes a file (creating folders).
    fn write_file<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SharedError>>;
    /// Lists a folder, sorted by name.
    fn list<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<DirEntry>, SharedError>>;
    /// What `path` is, or `None` when nothing is there.
    fn stat<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Option<FileStat>, SharedError>>;
    /// The name this context gives `path`: relative to its working folder,
    /// `/`-separated, without `.` or `..` (the key of the read state). The
    /// default resolves `.` and `..` lexically and refuses a path that climbs
    /// above the folder.
    fn resolve_path(&self, _handle: &ExecutionHandle, path: &str) -> Result<String, SharedError> {
        normalize_path(path)
            .ok_or_else(|| ExecutionError::outside(path, format!("path `{path}` leaves the working folder")))
    }
    /// Releases the handle. A context with background tasks kills the
    /// handle's tasks first (each reported `killed`).
    fn destroy<'a>(&'a self, handle: &'a ExecutionHandle) -> BoxFuture<'a, ()>;

    /// Keeps the whole output of a command whose result the model gets
    /// reduced (`name` is a file name), where the model can read it with
    /// `read_file`; the path to give it. The default keeps nothing
    /// (`None`).
    fn keep_output<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        _name: &'a str,
        _text: &'a str,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }

    /// The context itself, for a host that knows its concrete type (the
    /// agent starts its MCP servers inside an in-process context's
    /// sandbox). The default: `None`.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// Starts `command` in the background: its output streams to a file,
    /// it runs until it ends or is killed, and `options.owner` hears of its
    /// start and exit. The default refuses: the context cannot.
    fn exec_background<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        command: &'a str,
        options: BackgroundOptions,
    ) -> BoxFuture<'a, Result<BackgroundTask, SharedError>> {
        let _ = (handle, command, options);
        let kind = self.kind().to_owned();
        Box::pin(async move {
            Err(ExecutionError::Unsupported {
                kind,
                what: "run background tasks",
            }
            .shared())
        })
    }

    /// The handle's background tasks, running and ended, oldest first.
    fn list_background<'a>(&'a self, handle: &'a ExecutionHandle) -> BoxFuture<'a, Vec<BackgroundTask>> {
        let _ = handle;
        Box::pin(async { Vec::new() })
    }

    /// Kills a task's whole process tree and waits for its exit (reported
    /// `killed`). `false`: no such task. Killing an ended task is a no-op
    /// that returns `true`.
    fn kill_background<'a>(&'a self, handle: &'a ExecutionHandle, task_id: &'a str) -> BoxFuture<'a, bool> {
        let _ = (handle, task_id);
        Box::pin(async { false })
    }

    /// Up to `max` bytes of a task's output from `offset`. The default
    /// reads the output file through [`read_file`](Self::read_file).
    fn read_background<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        task_id: &'a str,
        offset: u64,
        max: usize,
    ) -> BoxFuture<'a, Result<BackgroundChunk, SharedError>> {
        Box::pin(async move {
            let tasks = self.list_background(handle).await;
            let Some(task) = tasks.iter().find(|t| t.task_id == task_id) else {
                return Err(ExecutionError::NoTask {
                    task_id: task_id.to_owned(),
                }
                .shared());
            };
            let bytes = self.read_file(handle, &task.output_path).await?;
            let total = bytes.len() as u64;
            let from = usize::try_from(offset.min(total))
                .unwrap_or(usize::MAX)
                .min(bytes.len());
            let to = from.saturating_add(max).min(bytes.len());
            Ok(BackgroundChunk {
                bytes: bytes[from..to].to_vec(),
                total,
            })
        })
    }

    /// Takes back a task an earlier process started on this machine (a
    /// resumed session), from its record: when its process still runs, it
    /// is this context's again, reported to `owner` (its exit code is not
    /// observable: it ends with `exit_code` -1 unless killed here).
    /// `None`: it no longer runs, or the context cannot tell.
    fn attach_background<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        task: &'a BackgroundTask,
        owner: BackgroundOwner,
    ) -> BoxFuture<'a, Option<BackgroundTask>> {
        let _ = (handle, task, owner);
        Box::pin(async { None })
    }

    /// Hands a task to another owner (an agent adopting a host-owned
    /// handle's tasks, a parent taking over its sub-agent's): its exit is
    /// reported to `owner` from now on. `None`: no such task.
    fn claim_background<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        task_id: &'a str,
        owner: BackgroundOwner,
    ) -> BoxFuture<'a, Option<BackgroundTask>> {
        let _ = (handle, task_id, owner);
        Box::pin(async { None })
    }
}

/// Why an execution context refused or failed an operation: a caller (a
/// tool, a host) can tell a refused path from a failed read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutionError {
    /// The path leaves the working folder (by `..`, an absolute path or a
    /// symbolic link), or goes through a link that points nowhere.
    #[error("{message}")]
    OutsideRoot {
        /// The path as given.
        path: String,
        /// What was wrong with it.
        message: String,
    },
    /// A file-system or process operation failed.
    #[error("{message}: {source}")]
    Io {
        /// What could not be done (`cannot read `a.txt``).
        message: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The path holds credentials (an SSH key, a cloud tool's logins, the
    /// agent's sessions): the sandbox withholds it from commands and tools.
    #[error("refused: `{path}` holds credentials, which commands and tools may not read here")]
    Withheld {
        /// The path as given.
        path: String,
    },
    /// A write in a read-only sandbox.
    #[error("cannot write `{path}`: the sandbox is read-only")]
    ReadOnly {
        /// The path.
        path: String,
    },
    /// No background task has this id.
    #[error("there is no background task `{task_id}`")]
    NoTask {
        /// The id asked for.
        task_id: String,
    },
    /// The context cannot do this at all.
    #[error("the `{kind}` execution context cannot {what}")]
    Unsupported {
        /// The context's kind.
        kind: String,
        /// What it cannot do.
        what: &'static str,
    },
    /// Another failure.
    #[error("{0}")]
    Other(String),
}

impl ExecutionError {
    /// `path` refused: `message` says why.
    pub fn outside(path: &str, message: String) -> SharedError {
        std::sync::Arc::new(ExecutionError::OutsideRoot {
            path: path.to_owned(),
            message,
        })
    }

    /// An operation that failed with `source`; `message` says which.
    pub fn io(message: String, source: std::io::Error) -> SharedError {
        std::sync::Arc::new(ExecutionError::Io { message, source })
    }

    /// This as the shared error the context's methods return.
    pub fn shared(self) -> SharedError {
        std::sync::Arc::new(self)
    }
}

/// `path` with `.` and empty components dropped and `..` applied; `None`
/// when a `..` would climb above the start. An absolute path stays absolute.
pub fn normalize_path(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    Some(if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    })
}

/// The live pair a tool call acts through: the agent's execution context
/// and the handle it spawned (or was given). Every method forwards to the
/// context with the handle.
#[derive(Clone)]
pub struct Workspace {
    /// Where tools run.
    pub execution: Arc<dyn ExecutionContext>,
    /// The live handle.
    pub handle: ExecutionHandle,
    /// Who owns the background tasks calls start (the agent running them).
    pub background: Option<BackgroundOwner>,
}

impl fmt::Debug for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workspace")
            .field("kind", &self.execution.kind())
            .field("handle", &self.handle)
            .finish()
    }
}

impl Workspace {
    /// Runs a shell command.
    pub async fn exec(&self, command: &str, options: ExecOptions) -> Result<ExecOutput, SharedError> {
        self.execution.exec(&self.handle, command, options).await
    }

    /// Reads a file.
    pub async fn read_file(&self, path: &str) -> Result<Vec<u8>, SharedError> {
        self.execution.read_file(&self.handle, path).await
    }

    /// Writes a file (creating folders).
    pub async fn write_file(&self, path: &str, bytes: &[u8]) -> Result<(), SharedError> {
        self.execution.write_file(&self.handle, path, bytes).await
    }

    /// Lists a folder.
    pub async fn list(&self, path: &str) -> Result<Vec<DirEntry>, SharedError> {
        self.execution.list(&self.handle, path).await
    }

    /// What `path` is, or `None`.
    pub async fn stat(&self, path: &str) -> Result<Option<FileStat>, SharedError> {
        self.execution.stat(&self.handle, path).await
    }

    /// The context's name for `path` (see [`ExecutionContext::resolve_path`]).
    pub fn resolve_path(&self, path: &str) -> Result<String, SharedError> {
        self.execution.resolve_path(&self.handle, path)
    }

    /// Keeps a command's whole output (see [`ExecutionContext::keep_output`]).
    pub async fn keep_output(&self, name: &str, text: &str) -> Option<String> {
        self.execution.keep_output(&self.handle, name, text).await
    }

    /// Starts a background command owned by this workspace's owner.
    pub async fn exec_background(&self, command: &str, cwd: Option<String>) -> Result<BackgroundTask, SharedError> {
        let options = BackgroundOptions {
            cwd,
            owner: self.background.clone(),
        };
        self.execution.exec_background(&self.handle, command, options).await
    }

    /// The handle's background tasks.
    pub async fn list_background(&self) -> Vec<BackgroundTask> {
        self.execution.list_background(&self.handle).await
    }

    /// Kills a background task (see [`ExecutionContext::kill_background`]).
    pub async fn kill_background(&self, task_id: &str) -> bool {
        self.execution.kill_background(&self.handle, task_id).await
    }

    /// New output of a background task.
    pub async fn read_background(
        &self,
        task_id: &str,
        offset: u64,
        max: usize,
    ) -> Result<BackgroundChunk, SharedError> {
        self.execution.read_background(&self.handle, task_id, offset, max).await
    }

    /// Tells the owner the model has seen how `task_id` ended.
    pub fn acknowledge_background(&self, task_id: &str) {
        if let Some(owner) = &self.background {
            owner.sink.acknowledge(task_id);
        }
    }
}

/// Whether an environment variable's name says it holds a credential
/// (see [`crate::credentials::is_secret_name`]); [`crate::credentials::is_secret_var`]
/// also reads the value. Commands the model runs, and the MCP servers an
/// agent starts, never see these unless passed by name: a command's output
/// goes to the provider and into the session, and `env` would hand them the
/// keys.
pub fn is_secret_env(name: &str) -> bool {
    crate::credentials::is_secret_name(name)
}
