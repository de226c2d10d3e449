//! Background tasks of the in-process context: commands that run on their
//! own with their output streamed to a file, each the leader of its own
//! process group so a kill takes its whole tree.

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zidane_core::events::{SharedError, TaskExitInfo, TaskStatus};
use zidane_core::execution::ExecutionError;
use zidane_core::execution::{BackgroundChunk, BackgroundOwner, BackgroundTask};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// How long a killed task has to end after `SIGTERM` before `SIGKILL`.
const KILL_GRACE: Duration = Duration::from_secs(2);

struct Entry {
    task: BackgroundTask,
    /// The mark its process tree carries.
    mark: Option<String>,
    owner: Option<BackgroundOwner>,
    /// A kill was asked for: the exit is reported `killed`.
    killing: bool,
    /// Flips to `true` when the task has ended.
    done: tokio::sync::watch::Receiver<bool>,
}

/// The registry of one context's background tasks.
#[derive(Default)]
pub(crate) struct Tasks {
    next: AtomicU64,
    entries: Mutex<Vec<Entry>>,
    /// Whole outputs of commands the model got reduced.
    kept: Mutex<Vec<PathBuf>>,
    /// Where output files go (made on the first task).
    dir: OnceLock<PathBuf>,
    /// The folder asked for, if any.
    wanted: Option<PathBuf>,
    /// What making the folder narrowed to its owner.
    tightened: Mutex<Vec<zidane_core::private::Tightened>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("dir", &self.dir.get())
            .finish_non_exhaustive()
    }
}

/// A distinct default folder per registry of this process.
static REGISTRIES: AtomicU64 = AtomicU64::new(0);

/// Whether `pid` runs `sh -c command` (not a zombie, not another program
/// that took the pid over).
fn runs(pid: u32, command: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let alive = stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']));
    alive
        && std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|line| line.split(|b| *b == 0).any(|arg| arg == command.as_bytes()))
}

/// The name of the signal that ended a process, when it has a common one.
fn signal_name(signal: i32) -> String {
    match signal {
        1 => "SIGHUP".into(),
        2 => "SIGINT".into(),
        3 => "SIGQUIT".into(),
        6 => "SIGABRT".into(),
        9 => "SIGKILL".into(),
        11 => "SIGSEGV".into(),
        13 => "SIGPIPE".into(),
        14 => "SIGALRM".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

impl Tasks {
    pub(crate) fn in_dir(dir: PathBuf) -> Self {
        Tasks {
            wanted: Some(dir),
            ..Default::default()
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock()
    }

    pub(crate) fn dir(&self) -> Result<&Path, SharedError> {
        if let Some(dir) = self.dir.get() {
            return Ok(dir);
        }
        let dir = self.wanted.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!(
                "zidane-tasks-{}-{}",
                std::process::id(),
                REGISTRIES.fetch_add(1, Ordering::Relaxed)
            ))
        });
        // Commands' output is the owner's alone: the folder is `0700`, and
        // one left open to others is narrowed (and said so).
        let narrowed = zidane_core::private::private_dir(&dir)
            .map_err(|e| ExecutionError::io(format!("cannot make the task folder {}", dir.display()), e))?;
        self.tightened.lock().extend(narrowed);
        let dir = dir.canonicalize().unwrap_or(dir);
        Ok(self.dir.get_or_init(|| dir))
    }

    /// What making the folder narrowed to its owner.
    pub(crate) fn tightened(&self) -> Vec<zidane_core::private::Tightened> {
        self.tightened.lock().clone()
    }

    /// The output file `path` names, when it is one of this registry's.
    pub(crate) fn output_file(&self, path: &str) -> Option<PathBuf> {
        let dir = self.dir.get()?;
        let wanted = Path::new(path);
        if let Some(kept) = self.kept.lock().iter().find(|p| p.as_path() == wanted) {
            return Some(kept.clone());
        }
        self.lock()
            .iter()
            .map(|e| PathBuf::from(&e.task.output_path))
            .find(|p| p == wanted && p.starts_with(dir))
    }

    /// Writes a command's whole output as `name` in the task folder, where
    /// the file tools may read it.
    pub(crate) fn keep(&self, name: &str, text: &str) -> Option<PathBuf> {
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = self.dir().ok()?.join(clean);
        std::io::Write::write_all(
            &mut zidane_core::private::private_options()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .ok()?,
            text.as_bytes(),
        )
        .ok()?;
        self.kept.lock().push(path.clone());
        Some(path)
    }

    /// Starts `cmd` (already set up: shell, folder, environment, group)
    /// with its output going to a new file.
    pub(crate) fn start(
        self: &Arc<Self>,
        mut cmd: tokio::process::Command,
        mark: String,
        command: &str,
        cwd: &Path,
        owner: Option<BackgroundOwner>,
        spawn: impl FnOnce(tokio::process::Command) -> std::io::Result<tokio::process::Child>,
    ) -> Result<BackgroundTask, SharedError> {
        let id = format!("t{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let path = self.dir()?.join(format!("{id}.log"));
        let file = zidane_core::private::private_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| ExecutionError::io(format!("cannot create the output file {}", path.display()), e))?;
        let err = file
            .try_clone()
            .map_err(|e| ExecutionError::io("cannot share the output file".to_owned(), e))?;
        cmd.stdout(file).stderr(err);
        let mut child = spawn(cmd).map_err(|e| ExecutionError::io("cannot start `sh`".to_owned(), e))?;
        crate::tree::started(child.id());
        let pid = child.id().unwrap_or_default();
        let task = BackgroundTask {
            task_id: id.clone(),
            command: command.to_owned(),
            cwd: cwd.display().to_string(),
            output_path: path.display().to_string(),
            pid,
            started_at: now_ms(),
            owner: owner.as_ref().map(|o| o.owner.clone()).unwrap_or_default(),
            bytes_written: 0,
            exit: None,
        };
        let (done_tx, done) = tokio::sync::watch::channel(false);
        self.lock().push(Entry {
            task: task.clone(),
            mark: Some(mark),
            owner: owner.clone(),
            killing: false,
            done,
        });
        if let Some(owner) = &owner {
            owner.sink.started(&task);
        }
        let started = std::time::Instant::now();
        let tasks = Arc::clone(self);
        tokio::spawn(async move {
            let status = child.wait().await;
            crate::tree::ended(Some(pid));
            let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let (code, signal) = match &status {
                Ok(status) => {
                    #[cfg(unix)]
                    let signal = std::os::unix::process::ExitStatusExt::signal(status);
                    #[cfg(not(unix))]
                    let signal: Option<i32> = None;
                    (status.code(), signal)
                }
                Err(_) => (None, None),
            };
            let exit_code = code.unwrap_or_else(|| 128 + signal.unwrap_or(0));
            tasks.settle(&id, exit_code, signal.map(signal_name), duration_ms);
            let _ = done_tx.send(true);
        });
        Ok(task)
    }

    /// Records how a task ended and tells its owner (once: the waiter of
    /// the task is the only caller).
    fn settle(&self, id: &str, exit_code: i32, signal: Option<String>, duration_ms: u64) {
        let settled = {
            let mut entries = self.lock();
            entries.iter_mut().find(|e| e.task.task_id == id).map(|e| {
                let exit = TaskExitInfo {
                    task_id: id.to_owned(),
                    command: e.task.command.clone(),
                    exit_code,
                    signal,
                    status: if e.killing {
                        TaskStatus::Killed
                    } else {
                        TaskStatus::Exited
                    },
                    duration: std::time::Duration::from_millis(duration_ms),
                    output_path: e.task.output_path.clone(),
                };
                e.task.exit = Some(exit.clone());
                e.task.bytes_written = std::fs::metadata(&e.task.output_path).map_or(0, |m| m.len());
                (e.task.clone(), exit, e.owner.clone())
            })
        };
        if let Some((task, exit, Some(owner))) = settled {
            owner.sink.exited(&task, &exit);
        }
    }

    /// Every task, with the output written so far.
    pub(crate) fn list(&self) -> Vec<BackgroundTask> {
        self.lock()
            .iter()
            .map(|e| {
                let mut task = e.task.clone();
                if task.is_running() {
                    task.bytes_written = std::fs::metadata(&task.output_path).map_or(0, |m| m.len());
                }
                task
            })
            .collect()
    }

    /// Kills a task's process group (`SIGTERM`, then `SIGKILL` after a
    /// grace) and waits for its exit.
    pub(crate) async fn kill(&self, task_id: &str) -> bool {
        let (pid, mark, mut done) = {
            let mut entries = self.lock();
            let Some(entry) = entries.iter_mut().find(|e| e.task.task_id == task_id) else {
                return false;
            };
            if !entry.task.is_running() {
                return true;
            }
            entry.killing = true;
            (entry.task.pid, entry.mark.clone(), entry.done.clone())
        };
        signal_group(pid, true);
        let ended = tokio::time::timeout(KILL_GRACE, done.wait_for(|d| *d)).await.is_ok();
        if !ended {
            signal_group(pid, false);
            let _ = done.wait_for(|d| *d).await;
        } else {
            // What the shell left behind in its group goes too.
            signal_group(pid, false);
        }
        // And what left the group or the session.
        if let Some(mark) = mark {
            let _ = tokio::task::spawn_blocking(move || crate::tree::kill_marked(&mark, false)).await;
        }
        true
    }

    /// Kills every running task (a handle torn down).
    pub(crate) async fn kill_all(&self) {
        let running: Vec<String> = self
            .lock()
            .iter()
            .filter(|e| e.task.is_running())
            .map(|e| e.task.task_id.clone())
            .collect();
        for id in running {
            self.kill(&id).await;
        }
    }

    /// Up to `max` bytes of a task's output from `offset`.
    pub(crate) async fn read(&self, task_id: &str, offset: u64, max: usize) -> Result<BackgroundChunk, SharedError> {
        use tokio::io::{AsyncReadExt, AsyncSeekExt};
        let path = self
            .lock()
            .iter()
            .find(|e| e.task.task_id == task_id)
            .map(|e| e.task.output_path.clone())
            .ok_or_else(|| {
                ExecutionError::NoTask {
                    task_id: task_id.to_owned(),
                }
                .shared()
            })?;
        let mut file = tokio::fs::File::open(&path)
            .await
            .map_err(|e| ExecutionError::io(format!("cannot read the output of `{task_id}`"), e))?;
        let total = file.metadata().await.map_or(0, |m| m.len());
        let from = offset.min(total);
        file.seek(std::io::SeekFrom::Start(from))
            .await
            .map_err(|e| ExecutionError::io(format!("cannot read the output of `{task_id}`"), e))?;
        let want = usize::try_from(total - from).unwrap_or(usize::MAX).min(max);
        let mut bytes = vec![0u8; want];
        let mut filled = 0;
        while filled < want {
            match file.read(&mut bytes[filled..]).await {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) => return Err(ExecutionError::io(format!("cannot read the output of `{task_id}`"), e)),
            }
        }
        bytes.truncate(filled);
        Ok(BackgroundChunk { bytes, total })
    }

    /// Takes back a task an earlier process started, when its shell still
    /// runs (the same command line, so a reused pid is not mistaken for
    /// it); a poll notices its end.
    pub(crate) fn attach(
        self: &Arc<Self>,
        recorded: &BackgroundTask,
        owner: BackgroundOwner,
    ) -> Option<BackgroundTask> {
        if !runs(recorded.pid, &recorded.command) {
            return None;
        }
        let mut task = recorded.clone();
        task.owner = owner.owner.clone();
        task.exit = None;
        let (done_tx, done) = tokio::sync::watch::channel(false);
        {
            let mut entries = self.lock();
            if entries.iter().any(|e| e.task.task_id == task.task_id) {
                return None;
            }
            // New tasks take ids after the ones taken back.
            if let Some(n) = task.task_id.strip_prefix('t').and_then(|n| n.parse::<u64>().ok()) {
                self.next.fetch_max(n, Ordering::Relaxed);
            }
            entries.push(Entry {
                task: task.clone(),
                // Another process's mark: its group is what a kill reaches.
                mark: None,
                owner: Some(owner),
                killing: false,
                done,
            });
        }
        let tasks = Arc::clone(self);
        let (id, pid, command) = (task.task_id.clone(), task.pid, task.command.clone());
        tokio::spawn(async move {
            while runs(pid, &command) {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            let started_at = tasks
                .lock()
                .iter()
                .find(|e| e.task.task_id == id)
                .map_or(0, |e| e.task.started_at);
            // Not this process's child: its exit code cannot be read.
            tasks.settle(&id, -1, None, now_ms().saturating_sub(started_at));
            let _ = done_tx.send(true);
        });
        Some(task)
    }

    /// Hands a task to `owner`.
    pub(crate) fn claim(&self, task_id: &str, owner: BackgroundOwner) -> Option<BackgroundTask> {
        let mut entries = self.lock();
        let entry = entries.iter_mut().find(|e| e.task.task_id == task_id)?;
        entry.task.owner = owner.owner.clone();
        entry.owner = Some(owner);
        Some(entry.task.clone())
    }
}

/// Signals a command's whole process group: `SIGTERM` when `gently`, else
/// `SIGKILL`.
pub(crate) fn signal_group(pid: u32, gently: bool) {
    // The command runs as the leader of its own group, so its group id is
    // its pid; a pid that does not fit is no process of ours.
    #[cfg(unix)]
    if let Some(group) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        let signal = if gently {
            rustix::process::Signal::TERM
        } else {
            rustix::process::Signal::KILL
        };
        let _ = rustix::process::kill_process_group(group, signal);
    }
    #[cfg(not(unix))]
    let _ = (pid, gently);
}
