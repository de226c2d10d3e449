//! Where tools run: the execution-context interface and the in-process
//! context (shell commands and files under one root folder).

use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use zidane_loop::events::{ExecutionHandle, MessageError, SharedError};
use zidane_provider::{AbortSignal, BoxFuture};

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
}

/// A folder entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// Name within its folder.
    pub name: String,
    /// Whether it is a folder.
    pub is_dir: bool,
    /// Size in bytes (files).
    pub size: u64,
}

/// Where tools run: spawns a handle, runs commands and touches files through
/// it. The in-process [`ProcessContext`] is the default; containers and
/// remote sandboxes implement the same interface.
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
    /// Lists a folder.
    fn list<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<DirEntry>, SharedError>>;
    /// Releases the handle.
    fn destroy<'a>(&'a self, handle: &'a ExecutionHandle) -> BoxFuture<'a, ()>;
}

fn fail(message: impl Into<String>) -> SharedError {
    Arc::new(MessageError(message.into()))
}

/// Runs tools in this process, on the machine, inside one root folder: paths
/// resolve under the root and leaving it is refused.
#[derive(Debug, Clone)]
pub struct ProcessContext {
    root: PathBuf,
}

impl ProcessContext {
    /// A context rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ProcessContext { root: root.into() }
    }

    /// A context rooted at the current folder.
    pub fn current_dir() -> Self {
        ProcessContext::new(std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `path` (absolute, or relative to the root) to a path inside
    /// the root; `..` that would leave it, or a symbolic link pointing out of
    /// it, is refused.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, SharedError> {
        let root = self.root.canonicalize().unwrap_or_else(|_| self.root.clone());
        let requested = Path::new(path);
        let joined = if requested.is_absolute() {
            requested.to_path_buf()
        } else {
            root.join(requested)
        };
        let mut normal = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    if !normal.pop() {
                        return Err(fail(format!("path `{path}` leaves the working folder")));
                    }
                }
                Component::CurDir => {}
                other => normal.push(other.as_os_str()),
            }
        }
        if !normal.starts_with(&root) {
            return Err(fail(format!(
                "path `{path}` is outside the working folder {}",
                root.display()
            )));
        }
        // Follow links for the part that exists.
        let mut existing = normal.clone();
        while !existing.exists() && existing.pop() {}
        if let Ok(real) = existing.canonicalize()
            && !real.starts_with(&root)
        {
            return Err(fail(format!("path `{path}` resolves outside the working folder")));
        }
        Ok(normal)
    }
}

impl ExecutionContext for ProcessContext {
    fn kind(&self) -> &str {
        "process"
    }

    fn spawn(&self) -> BoxFuture<'_, Result<ExecutionHandle, SharedError>> {
        let id = format!("process:{}", self.root.display());
        Box::pin(async move {
            Ok(ExecutionHandle {
                id,
                kind: "process".into(),
            })
        })
    }

    fn exec<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        command: &'a str,
        options: ExecOptions,
    ) -> BoxFuture<'a, Result<ExecOutput, SharedError>> {
        Box::pin(async move {
            let cwd = match &options.cwd {
                Some(dir) => self.resolve(dir)?,
                None => self.root.clone(),
            };
            let mut cmd = tokio::process::Command::new("sh");
            cmd.arg("-c")
                .arg(command)
                .current_dir(&cwd)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd.kill_on_drop(true);
            #[cfg(unix)]
            cmd.process_group(0);
            let child = cmd.spawn().map_err(|e| fail(format!("cannot start `sh`: {e}")))?;
            let pid = child.id();
            let wait = child.wait_with_output();
            let timeout = options.timeout.unwrap_or(Duration::from_secs(60 * 60 * 24));
            let (output, timed_out, aborted) = tokio::select! {
                out = tokio::time::timeout(timeout, wait) => match out {
                    Ok(out) => (Some(out.map_err(|e| fail(format!("command failed: {e}")))?), false, false),
                    Err(_) => (None, true, false),
                },
                () = options.signal.aborted() => (None, false, true),
            };
            match output {
                Some(out) => Ok(ExecOutput {
                    stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                    exit_code: out.status.code(),
                    timed_out: false,
                    aborted: false,
                }),
                None => {
                    // The whole process group goes, not only the shell.
                    if let Some(pid) = pid {
                        kill_group(pid);
                    }
                    Ok(ExecOutput {
                        timed_out,
                        aborted,
                        exit_code: None,
                        ..Default::default()
                    })
                }
            }
        })
    }

    fn read_file<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, SharedError>> {
        Box::pin(async move {
            let p = self.resolve(path)?;
            tokio::fs::read(&p)
                .await
                .map_err(|e| fail(format!("cannot read `{path}`: {e}")))
        })
    }

    fn write_file<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        path: &'a str,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SharedError>> {
        Box::pin(async move {
            let p = self.resolve(path)?;
            if let Some(dir) = p.parent() {
                tokio::fs::create_dir_all(dir)
                    .await
                    .map_err(|e| fail(format!("cannot create the folder of `{path}`: {e}")))?;
            }
            tokio::fs::write(&p, bytes)
                .await
                .map_err(|e| fail(format!("cannot write `{path}`: {e}")))
        })
    }

    fn list<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<DirEntry>, SharedError>> {
        Box::pin(async move {
            let p = self.resolve(path)?;
            let mut dir = tokio::fs::read_dir(&p)
                .await
                .map_err(|e| fail(format!("cannot list `{path}`: {e}")))?;
            let mut entries = Vec::new();
            while let Some(entry) = dir
                .next_entry()
                .await
                .map_err(|e| fail(format!("cannot list `{path}`: {e}")))?
            {
                let meta = entry.metadata().await.ok();
                entries.push(DirEntry {
                    name: entry.file_name().to_string_lossy().into_owned(),
                    is_dir: meta.as_ref().is_some_and(std::fs::Metadata::is_dir),
                    size: meta.as_ref().map_or(0, std::fs::Metadata::len),
                });
            }
            entries.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(entries)
        })
    }

    fn destroy<'a>(&'a self, _handle: &'a ExecutionHandle) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

fn kill_group(pid: u32) {
    // The command runs as the leader of its own group, so its group id is
    // its pid; a pid that does not fit is no process of ours.
    #[cfg(unix)]
    if let Some(group) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}
