//! Where tools run: the execution-context interface. The in-process
//! implementation lives in `zidane-tools`; containers and remote sandboxes
//! implement the same trait.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use zidane_provider::{AbortSignal, BoxFuture};

use crate::events::{ExecutionHandle, MessageError, SharedError};

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
        normalize_path(path).ok_or_else(|| fail(format!("path `{path}` leaves the working folder")))
    }
    /// Releases the handle.
    fn destroy<'a>(&'a self, handle: &'a ExecutionHandle) -> BoxFuture<'a, ()>;
}

fn fail(message: String) -> SharedError {
    std::sync::Arc::new(MessageError(message))
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
}
