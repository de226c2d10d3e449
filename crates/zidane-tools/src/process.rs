//! The in-process execution context: shell commands and files under one
//! root folder of this machine.

use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use zidane_core::Workspace;
use zidane_core::events::{ExecutionHandle, SharedError};
use zidane_core::execution::ExecutionError;
use zidane_core::execution::{
    BackgroundChunk, BackgroundOptions, BackgroundOwner, BackgroundTask, DirEntry, EntryKind, ExecOptions, ExecOutput,
    ExecutionContext, FileStat,
};
use zidane_provider::BoxFuture;

use crate::background::{Tasks, signal_group};

/// Runs tools in this process, on the machine, inside one root folder: paths
/// resolve under the root and leaving it is refused.
#[derive(Debug, Clone)]
pub struct ProcessContext {
    root: PathBuf,
    /// Secret-looking variables passed to commands anyway, by name.
    pass_env: Vec<String>,
    /// Background tasks (shared by clones of the context).
    tasks: Arc<Tasks>,
    /// How commands are confined.
    sandbox: crate::sandbox::Sandbox,
    /// How commands start when they are confined.
    confiner: Option<Arc<crate::sandbox::Confiner>>,
    /// What commands and the file tools may not read under a sandbox
    /// (shared by clones of the context).
    withheld: Arc<parking_lot::RwLock<crate::sandbox::Withheld>>,
    /// The mark every command of this context carries (see `tree`).
    mark: Arc<str>,
}

use zidane_core::credentials::is_secret_var;

impl ProcessContext {
    /// A context rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ProcessContext {
            root: root.into(),
            pass_env: Vec::new(),
            tasks: Arc::new(Tasks::default()),
            sandbox: crate::sandbox::Sandbox::off(),
            confiner: None,
            withheld: Arc::default(),
            mark: crate::tree::new_mark(None).into(),
        }
    }

    /// The same context confining its commands (and, read-only, its file
    /// writes). Checked at once: a machine that cannot enforce it is a
    /// [`SandboxError`](crate::SandboxError), never a silent no-op.
    ///
    /// Confined commands read everywhere but the credential stores of the
    /// person's home ([`credential_paths`](crate::credential_paths)) and the
    /// `.env` files near the working folder but outside it
    /// ([`env_files_near`](crate::env_files_near)), and the file tools
    /// refuse those too; [`withhold`](Self::withhold) adds paths (the agent
    /// adds its sessions file), [`open_path`](Self::open_path) opens one on
    /// purpose.
    pub fn sandboxed(mut self, sandbox: crate::sandbox::Sandbox) -> Result<Self, crate::sandbox::SandboxError> {
        self.confiner = None;
        if sandbox.mode != crate::sandbox::SandboxMode::Off {
            let tasks = self
                .tasks
                .dir()
                .map_err(|e| crate::sandbox::SandboxError(e.to_string()))?
                .to_path_buf();
            {
                let mut withheld = self.withheld.write();
                if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
                    for path in crate::sandbox::credential_paths(Path::new(&home)) {
                        withheld.add(&path);
                    }
                }
                for path in crate::sandbox::env_files_near(&self.root) {
                    withheld.add(&path);
                }
            }
            let confiner = crate::sandbox::Confiner::start(
                sandbox,
                self.canonical_root(),
                vec![tasks],
                Arc::clone(&self.withheld),
            )?;
            self.confiner = Some(Arc::new(confiner));
        }
        self.sandbox = sandbox;
        Ok(self)
    }

    /// Withholds `paths` (files or folders, existing or not) from confined
    /// commands and the file tools, from the next command on; no effect
    /// without a sandbox. The agent withholds its sessions file this way.
    /// A withheld path inside a folder commands may write (the working
    /// folder, the temporary folder) stays readable to commands, since
    /// Landlock cannot take part of a granted folder back; the file tools
    /// still refuse it, and [`exposed`](Self::exposed) lists it.
    pub fn withhold(&self, paths: impl IntoIterator<Item = impl AsRef<Path>>) {
        let mut withheld = self.withheld.write();
        for path in paths {
            withheld.add(path.as_ref());
        }
    }

    /// Opens a withheld path, and everything beneath it, on purpose: from
    /// the next command on, confined commands and the file tools may read
    /// it (a permission rule or the configuration naming it; opening
    /// `~/.aws` lets `aws` in a command use the person's credentials).
    pub fn open_path(&self, path: impl AsRef<Path>) {
        self.withheld.write().open(path.as_ref());
    }

    /// What confined commands and the file tools may not read (withheld
    /// and not opened), as given (an empty list without a sandbox).
    pub fn withheld(&self) -> Vec<PathBuf> {
        if self.sandbox.mode == crate::sandbox::SandboxMode::Off {
            return Vec::new();
        }
        self.withheld.read().paths()
    }

    /// Withheld paths that commands can read all the same, because they lie
    /// inside a folder commands may write (a sessions file inside the
    /// working folder, the working folder being the home folder): for the
    /// host to tell the person. The file tools refuse them still.
    pub fn exposed(&self) -> Vec<PathBuf> {
        if self.sandbox.mode != crate::sandbox::SandboxMode::WorkspaceWrite {
            return Vec::new();
        }
        let mut writable = vec![self.canonical_root()];
        if self.sandbox.temp {
            writable.push(
                std::env::temp_dir()
                    .canonicalize()
                    .unwrap_or_else(|_| std::env::temp_dir()),
            );
        }
        if let Ok(tasks) = self.tasks.dir() {
            writable.push(tasks.to_path_buf());
        }
        let withheld = self.withheld.read();
        withheld
            .paths()
            .into_iter()
            .filter(|p| {
                let real = p.canonicalize().unwrap_or_else(|_| p.clone());
                writable.iter().any(|w| real.starts_with(w) || p.starts_with(w))
            })
            .collect()
    }

    /// Whether the file tools refuse `path` (an absolute path, taken as it
    /// is: a walk that follows no link) as withheld.
    pub(crate) fn hides(&self, path: &Path) -> bool {
        self.sandbox.mode != crate::sandbox::SandboxMode::Off && self.withheld.read().hides(path)
    }

    /// Whether the file tools refuse `path` as withheld, as it is or where
    /// its links lead.
    fn hides_resolved(&self, path: &Path) -> bool {
        self.hides(path)
            || (self.sandbox.mode != crate::sandbox::SandboxMode::Off
                && path.canonicalize().is_ok_and(|real| self.hides(&real)))
    }

    /// What starts long-lived processes (MCP servers) in this context's
    /// sandbox: the same rules as its commands, plus writes to the package
    /// managers' caches that exist (`~/.npm`, `$XDG_CACHE_HOME` or
    /// `~/.cache`), where `npx` and `uvx` unpack a server. `None` when the
    /// context has no sandbox (a process then starts as a plain child).
    /// Each call starts one confined thread. The environment is the
    /// caller's to set.
    #[allow(clippy::type_complexity)]
    pub fn launcher(
        &self,
    ) -> Result<
        Option<Arc<dyn Fn(tokio::process::Command) -> std::io::Result<tokio::process::Child> + Send + Sync>>,
        crate::sandbox::SandboxError,
    > {
        if self.sandbox.mode == crate::sandbox::SandboxMode::Off {
            return Ok(None);
        }
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .filter(|c| !c.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".cache")));
        let mut also: Vec<PathBuf> = [home.map(|h| h.join(".npm")), cache]
            .into_iter()
            .flatten()
            .filter(|p| p.is_dir())
            .collect();
        if let Ok(tasks) = self.tasks.dir() {
            also.push(tasks.to_path_buf());
        }
        let confiner = Arc::new(crate::sandbox::Confiner::start(
            self.sandbox,
            self.canonical_root(),
            also,
            Arc::clone(&self.withheld),
        )?);
        Ok(Some(Arc::new(move |cmd| confiner.spawn(cmd))))
    }

    /// What making the background tasks' folder narrowed to its owner (a
    /// folder other users could read), for the host to tell the person.
    /// The folder is made when the context is confined or its first task
    /// starts; each is `0700`, each output file `0600`.
    pub fn tightened(&self) -> Vec<zidane_core::private::Tightened> {
        self.tasks.tightened()
    }

    /// How commands are confined.
    pub fn sandbox(&self) -> crate::sandbox::Sandbox {
        self.sandbox
    }

    /// The same context writing background tasks' output under `dir`
    /// (default: a folder of its own in the system's temporary folder).
    /// The file tools may read there, never write.
    pub fn task_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.tasks = Arc::new(Tasks::in_dir(dir.into()));
        self
    }

    /// A `sh -c command` in `cwd`, with credentials filtered out of its
    /// environment, leading a process group of its own, and the mark its
    /// process tree carries (returned).
    pub(crate) fn shell(&self, command: &str, cwd: &Path) -> Result<(tokio::process::Command, String), SharedError> {
        let mut cmd = tokio::process::Command::new("sh");
        let mark = crate::tree::new_mark(Some(&self.mark));
        crate::tree::apply(&mut cmd, &mark);
        cmd.arg("-c").arg(command).current_dir(cwd).stdin(Stdio::null());
        for (name, value) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if is_secret_var(&name, &value.to_string_lossy()) && !self.pass_env.iter().any(|p| *p == name) {
                cmd.env_remove(name.as_ref());
            }
        }
        #[cfg(unix)]
        cmd.process_group(0);
        Ok((cmd, mark))
    }

    /// Starts a command: from the confined thread when there is a sandbox.
    pub(crate) fn start(&self, mut cmd: tokio::process::Command) -> std::io::Result<tokio::process::Child> {
        match &self.confiner {
            Some(confiner) => confiner.spawn(cmd),
            None => cmd.spawn(),
        }
    }

    /// The folder a command runs in: `dir` under the root, or the root.
    fn folder(&self, dir: Option<&str>) -> Result<PathBuf, SharedError> {
        match dir {
            Some(dir) => self.resolve(dir),
            None => Ok(self.root.clone()),
        }
    }

    /// Resolves a path to read: inside the root, or a background task's
    /// output file.
    fn resolve_readable(&self, path: &str) -> Result<PathBuf, SharedError> {
        match self.resolve(path) {
            Ok(p) => Ok(p),
            Err(e) => self.tasks.output_file(path).ok_or(e),
        }
    }

    /// The same context passing these secret-looking variables to commands
    /// (see `zidane_core::credentials::is_secret_var`: by name or by value);
    /// other variables always pass.
    pub fn pass_env(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.pass_env.extend(names.into_iter().map(Into::into));
        self
    }

    /// A context rooted at the current folder.
    pub fn current_dir() -> Self {
        ProcessContext::new(std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The handle this context spawns (its id names the root), without
    /// going through [`ExecutionContext::spawn`]: for hosts and tests that
    /// call tools outside an agent.
    pub fn handle(&self) -> ExecutionHandle {
        ExecutionHandle {
            id: format!("process:{}", self.root.display()),
            kind: "process".into(),
        }
    }

    /// This context with its handle, as a tool call's [`Workspace`].
    pub fn workspace(self: &Arc<Self>) -> Workspace {
        Workspace {
            handle: self.handle(),
            execution: Arc::clone(self) as Arc<dyn ExecutionContext>,
            background: None,
        }
    }

    fn canonical_root(&self) -> PathBuf {
        self.root.canonicalize().unwrap_or_else(|_| self.root.clone())
    }

    /// Resolves `path` (absolute, or relative to the root) to a path inside
    /// the root. Refused: `..` that would leave it, and any symbolic link on
    /// the way that points out of it or points nowhere (a dangling link
    /// would otherwise let a write create a file outside the root).
    pub fn resolve(&self, path: &str) -> Result<PathBuf, SharedError> {
        let root = self.canonical_root();
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
                        return Err(ExecutionError::outside(
                            path,
                            format!("path `{path}` leaves the working folder"),
                        ));
                    }
                }
                Component::CurDir => {}
                other => normal.push(other.as_os_str()),
            }
        }
        if !normal.starts_with(&root) {
            return Err(ExecutionError::outside(
                path,
                format!("path `{path}` is outside the working folder {}", root.display()),
            ));
        }
        // Every component below the root that exists as an entry (a link
        // counts even when its target does not exist) must resolve inside
        // the root.
        let mut prefix = root.clone();
        if let Ok(rest) = normal.strip_prefix(&root) {
            for component in rest.components() {
                prefix.push(component.as_os_str());
                let Ok(meta) = std::fs::symlink_metadata(&prefix) else {
                    break;
                };
                if meta.file_type().is_symlink() {
                    match prefix.canonicalize() {
                        Ok(real) if real.starts_with(&root) => {}
                        Ok(_) => {
                            return Err(ExecutionError::outside(
                                path,
                                format!("path `{path}` resolves outside the working folder"),
                            ));
                        }
                        Err(_) => {
                            return Err(ExecutionError::outside(
                                path,
                                format!("path `{path}` goes through a symbolic link that points nowhere; refused"),
                            ));
                        }
                    }
                }
            }
        }
        if self.hides_resolved(&normal) {
            return Err(ExecutionError::Withheld { path: path.to_owned() }.shared());
        }
        Ok(normal)
    }
}

fn kind_of(meta: &std::fs::Metadata) -> EntryKind {
    if meta.is_file() {
        EntryKind::File
    } else if meta.is_dir() {
        EntryKind::Dir
    } else {
        EntryKind::Other
    }
}

impl ExecutionContext for ProcessContext {
    fn kind(&self) -> &str {
        "process"
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn keep_output<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        name: &'a str,
        text: &'a str,
    ) -> BoxFuture<'a, Option<String>> {
        let kept = self.tasks.keep(name, text).map(|p| p.display().to_string());
        Box::pin(async move { kept })
    }

    fn spawn(&self) -> BoxFuture<'_, Result<ExecutionHandle, SharedError>> {
        let handle = self.handle();
        Box::pin(async move { Ok(handle) })
    }

    fn exec<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        command: &'a str,
        options: ExecOptions,
    ) -> BoxFuture<'a, Result<ExecOutput, SharedError>> {
        Box::pin(async move {
            let cwd = self.folder(options.cwd.as_deref())?;
            let (mut cmd, mark) = self.shell(command, &cwd)?;
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
            let mut child = self
                .start(cmd)
                .map_err(|e| ExecutionError::io("cannot start `sh`".to_owned(), e))?;
            let pid = child.id();
            crate::tree::started(pid);
            // Dropped with this future (the dispatcher dropping an aborted
            // call, a cancelled run, a suspended one), it takes the whole
            // group with it, and what left the group or the session.
            let mut guard = GroupGuard { pid, mark };
            // Output is kept as it streams, bounded: a command that prints
            // gigabytes costs its head and tail, never all of it.
            let bound = options.max_output_bytes.unwrap_or(DEFAULT_OUTPUT_BOUND);
            let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
            let wait = async move {
                let (out, err, status) =
                    tokio::join!(head_and_tail(stdout, bound), head_and_tail(stderr, bound), child.wait());
                status.map(|status| (out, err, status))
            };
            let timeout = options.timeout.unwrap_or(Duration::from_secs(60 * 60 * 24));
            let (output, timed_out, aborted) = tokio::select! {
                out = tokio::time::timeout(timeout, wait) => match out {
                    Ok(out) => (Some(out.map_err(|e| ExecutionError::io("command failed".to_owned(), e))?), false, false),
                    Err(_) => (None, true, false),
                },
                () = options.signal.aborted() => (None, false, true),
            };
            match output {
                Some(out) => {
                    // The command ended on its own; what it left running in the
                    // background is its business until the context is
                    // destroyed (see `docs/ARCHITECTURE.md`).
                    guard.disarm();
                    crate::tree::ended(pid);
                    crate::tree::sweep();
                    let (stdout, stderr, status) = out;
                    Ok(ExecOutput {
                        stdout,
                        stderr,
                        exit_code: status.code(),
                        timed_out: false,
                        aborted: false,
                    })
                }
                None => {
                    // The whole process group goes, not only the shell.
                    drop(guard);
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
            let p = self.resolve_readable(path)?;
            tokio::fs::read(&p)
                .await
                .map_err(|e| ExecutionError::io(format!("cannot read `{path}`"), e))
        })
    }

    fn write_file<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        path: &'a str,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SharedError>> {
        Box::pin(async move {
            if self.sandbox.mode == crate::sandbox::SandboxMode::ReadOnly {
                return Err(ExecutionError::ReadOnly { path: path.to_owned() }.shared());
            }
            let p = self.resolve(path)?;
            if let Some(dir) = p.parent() {
                tokio::fs::create_dir_all(dir)
                    .await
                    .map_err(|e| ExecutionError::io(format!("cannot create the folder of `{path}`"), e))?;
            }
            tokio::fs::write(&p, bytes)
                .await
                .map_err(|e| ExecutionError::io(format!("cannot write `{path}`"), e))
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
                .map_err(|e| ExecutionError::io(format!("cannot list `{path}`"), e))?;
            let mut entries = Vec::new();
            while let Some(entry) = dir
                .next_entry()
                .await
                .map_err(|e| ExecutionError::io(format!("cannot list `{path}`"), e))?
            {
                // Links count as what they point to (`metadata` follows them).
                let meta = tokio::fs::metadata(entry.path()).await.ok();
                entries.push(DirEntry {
                    name: entry.file_name().to_string_lossy().into_owned(),
                    kind: meta.as_ref().map_or(EntryKind::Other, kind_of),
                    size: meta.as_ref().map_or(0, std::fs::Metadata::len),
                });
            }
            entries.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(entries)
        })
    }

    fn stat<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Option<FileStat>, SharedError>> {
        Box::pin(async move {
            let p = self.resolve_readable(path)?;
            match tokio::fs::metadata(&p).await {
                Ok(meta) => Ok(Some(FileStat {
                    kind: kind_of(&meta),
                    size: meta.len(),
                    mtime_ms: meta
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                })),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(ExecutionError::io(format!("cannot look at `{path}`"), e)),
            }
        })
    }

    fn resolve_path(&self, _handle: &ExecutionHandle, path: &str) -> Result<String, SharedError> {
        if self.resolve(path).is_err()
            && let Some(file) = self.tasks.output_file(path)
        {
            return Ok(file.display().to_string());
        }
        let resolved = self.resolve(path)?;
        let root = self.canonical_root();
        let rel = resolved.strip_prefix(&root).unwrap_or(&resolved);
        Ok(rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"))
    }

    fn destroy<'a>(&'a self, _handle: &'a ExecutionHandle) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.tasks.kill_all().await;
            // What commands left running (a server started with `&`, a
            // daemon in a session of its own) ends with the context.
            let mark = Arc::clone(&self.mark);
            let _ = tokio::task::spawn_blocking(move || crate::tree::kill_marked(&mark, false)).await;
        })
    }

    fn exec_background<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        command: &'a str,
        options: BackgroundOptions,
    ) -> BoxFuture<'a, Result<BackgroundTask, SharedError>> {
        Box::pin(async move {
            let cwd = self.folder(options.cwd.as_deref())?;
            let (cmd, mark) = self.shell(command, &cwd)?;
            self.tasks
                .start(cmd, mark, command, &cwd, options.owner, |cmd| self.start(cmd))
        })
    }

    fn list_background<'a>(&'a self, _handle: &'a ExecutionHandle) -> BoxFuture<'a, Vec<BackgroundTask>> {
        Box::pin(async move { self.tasks.list() })
    }

    fn kill_background<'a>(&'a self, _handle: &'a ExecutionHandle, task_id: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move { self.tasks.kill(task_id).await })
    }

    fn read_background<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        task_id: &'a str,
        offset: u64,
        max: usize,
    ) -> BoxFuture<'a, Result<BackgroundChunk, SharedError>> {
        Box::pin(async move { self.tasks.read(task_id, offset, max).await })
    }

    fn attach_background<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        task: &'a BackgroundTask,
        owner: BackgroundOwner,
    ) -> BoxFuture<'a, Option<BackgroundTask>> {
        Box::pin(async move { self.tasks.attach(task, owner) })
    }

    fn claim_background<'a>(
        &'a self,
        _handle: &'a ExecutionHandle,
        task_id: &'a str,
        owner: BackgroundOwner,
    ) -> BoxFuture<'a, Option<BackgroundTask>> {
        Box::pin(async move { self.tasks.claim(task_id, owner) })
    }
}

/// Kills a command's process group, and every process carrying its mark,
/// when dropped, unless disarmed.
struct GroupGuard {
    pid: Option<u32>,
    mark: String,
}

impl GroupGuard {
    fn disarm(&mut self) {
        self.pid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.pid.take() {
            kill_group(pid);
            crate::tree::kill_marked(&self.mark, false);
            crate::tree::ended(Some(pid));
        }
    }
}

fn kill_group(pid: u32) {
    signal_group(pid, false);
}

/// What a command may print to each stream before its middle is cut, when
/// the caller gives no bound.
const DEFAULT_OUTPUT_BOUND: usize = 1 << 20;

/// Reads a stream to its end keeping the first and last `bound / 2` bytes;
/// what was dropped between them is noted in the text.
async fn head_and_tail(stream: Option<impl tokio::io::AsyncRead + Unpin>, bound: usize) -> String {
    use tokio::io::AsyncReadExt;
    let Some(mut stream) = stream else {
        return String::new();
    };
    let half = (bound / 2).max(1);
    let mut head = Vec::new();
    let mut tail = std::collections::VecDeque::new();
    let mut cut = 0usize;
    let mut buf = vec![0u8; 16 << 10];
    loop {
        let n = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &buf[..n];
        if head.len() < half {
            let take = (half - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        tail.extend(chunk);
        if tail.len() > half {
            let excess = tail.len() - half;
            tail.drain(..excess);
            cut += excess;
        }
    }
    let mut text = String::from_utf8_lossy(&head).into_owned();
    if cut > 0 {
        text.push_str(&format!("\n[... {cut} bytes cut ...]\n"));
    }
    text.push_str(&String::from_utf8_lossy(tail.make_contiguous()));
    text
}
