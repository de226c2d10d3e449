//! Confining the commands of the in-process context with Landlock, the
//! Linux security module an unprivileged process uses to restrict itself:
//! each command restricts itself between `fork` and `exec`, so the agent's
//! own process stays as it was, and the restriction holds for everything
//! the command starts.
//!
//! Landlock was chosen over a container tool (bubblewrap): it needs no
//! extra program on the machine, no user namespaces, and no setuid helper;
//! it confines writes by folder, and on kernels from 6.7 TCP connections
//! too. Reads stay open everywhere: a coding agent reads compilers,
//! libraries and caches all over the system.

use std::path::{Path, PathBuf};

/// How far commands are confined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SandboxMode {
    /// Not at all.
    #[default]
    Off,
    /// Writes only inside the working folder, the system's temporary
    /// folder (see [`Sandbox::temp`]) and the background tasks' folder
    /// (and to `/dev/null`).
    WorkspaceWrite,
    /// No writes at all, the working folder included (except `/dev/null`);
    /// the file tools refuse writes too.
    ReadOnly,
}

/// The sandbox of a [`ProcessContext`](crate::ProcessContext).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sandbox {
    /// How far commands are confined.
    pub mode: SandboxMode,
    /// Whether confined commands may open TCP connections and listen
    /// (ignored when `mode` is `Off`).
    pub network: bool,
    /// Whether `WorkspaceWrite` also lets commands write in the system's
    /// temporary folder (`$TMPDIR`, else `/tmp`), where compilers and test
    /// runners keep their scratch files.
    pub temp: bool,
}

impl Default for Sandbox {
    /// No confinement (a bare [`ProcessContext`](crate::ProcessContext)'s;
    /// the `basic` preset asks for [`Sandbox::workspace_write`]).
    fn default() -> Self {
        Sandbox::off()
    }
}

impl Sandbox {
    /// Commands write only in the working folder, the temporary folder
    /// and the background tasks' folder; they may use the network. The
    /// default of the program and of the `basic` preset.
    pub const fn workspace_write() -> Self {
        Sandbox {
            mode: SandboxMode::WorkspaceWrite,
            network: true,
            temp: true,
        }
    }

    /// Commands and the file tools write nothing; commands may use the
    /// network.
    pub const fn read_only() -> Self {
        Sandbox {
            mode: SandboxMode::ReadOnly,
            network: true,
            temp: true,
        }
    }

    /// No confinement: commands may write anywhere the process can.
    pub const fn off() -> Self {
        Sandbox {
            mode: SandboxMode::Off,
            network: true,
            temp: true,
        }
    }

    /// The same sandbox with the network closed to confined commands
    /// (TCP, on Linux 6.7 and later).
    #[must_use]
    pub const fn without_network(mut self) -> Self {
        self.network = false;
        self
    }
}

/// Why commands cannot be confined on this machine.
#[derive(Debug, Clone, thiserror::Error)]
#[error("this machine cannot confine commands: {0}; run without a sandbox")]
pub struct SandboxError(pub String);

type Job = Box<dyn FnOnce() + Send>;

/// A thread confined once, at its start, that starts the context's
/// commands: Landlock confines a thread and everything it starts, so each
/// command inherits the confinement while the agent's other threads keep
/// their freedom.
pub(crate) struct Confiner {
    jobs: parking_lot::Mutex<std::sync::mpsc::Sender<Job>>,
}

impl std::fmt::Debug for Confiner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confiner").finish_non_exhaustive()
    }
}

#[cfg(target_os = "linux")]
impl Sandbox {
    fn restrict(&self, root: &Path, also: &[PathBuf]) -> Result<(), String> {
        use landlock::{
            ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
            path_beneath_rules,
        };
        let fail = |e: landlock::RulesetError| e.to_string();
        // ABI 3 (Linux 6.2) covers every file right, truncation included;
        // ABI 4 (Linux 6.7) adds TCP.
        let fs = ABI::V3;
        let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(fs)).map_err(fail)?;
        if !self.network {
            ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4)).map_err(fail)?;
        }
        let mut writable: Vec<PathBuf> = vec![PathBuf::from("/dev/null")];
        if self.mode == SandboxMode::WorkspaceWrite {
            writable.push(root.to_path_buf());
            if self.temp {
                writable.push(std::env::temp_dir());
            }
            writable.extend(also.iter().cloned());
        }
        let status = ruleset
            .create()
            .map_err(fail)?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(fs)))
            .map_err(fail)?
            .add_rules(path_beneath_rules(&writable, AccessFs::from_all(fs)))
            .map_err(fail)?
            .restrict_self()
            .map_err(fail)?;
        if status.ruleset == RulesetStatus::FullyEnforced {
            Ok(())
        } else {
            Err(
                "Landlock is missing or too old on this kernel (Linux 6.2 is needed, 6.7 to confine the network)"
                    .into(),
            )
        }
    }
}

impl Confiner {
    /// Starts the confined thread for a context rooted at `root` (writable
    /// in workspace-write mode, with the folders of `also`); fails when the kernel would not
    /// enforce every rule. Needs no runtime: each command is started inside
    /// the runtime of the task that asks for it.
    pub(crate) fn start(sandbox: Sandbox, root: PathBuf, also: Vec<PathBuf>) -> Result<Self, SandboxError> {
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (sandbox, root, also);
            Err(SandboxError("the sandbox is built on Linux's Landlock".into()))
        }
        #[cfg(target_os = "linux")]
        {
            let (jobs, queue) = std::sync::mpsc::channel::<Job>();
            let (ready_tx, ready) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("zidane-sandbox".into())
                .spawn(move || {
                    let restricted = sandbox.restrict(&root, &also);
                    let ok = restricted.is_ok();
                    let _ = ready_tx.send(restricted);
                    if ok {
                        for job in queue {
                            job();
                        }
                    }
                })
                .map_err(|e| SandboxError(format!("cannot start the sandbox thread: {e}")))?;
            match ready.recv() {
                Ok(Ok(())) => Ok(Confiner {
                    jobs: parking_lot::Mutex::new(jobs),
                }),
                Ok(Err(why)) => Err(SandboxError(why)),
                Err(_) => Err(SandboxError("the sandbox thread ended".into())),
            }
        }
    }

    /// Starts `cmd` from the confined thread.
    pub(crate) fn spawn(&self, mut cmd: tokio::process::Command) -> std::io::Result<tokio::process::Child> {
        let (tx, rx) = std::sync::mpsc::channel();
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| std::io::Error::other("a confined command is started inside a Tokio runtime"))?;
        let job: Job = Box::new(move || {
            let _entered = runtime.enter();
            let _ = tx.send(cmd.spawn());
        });
        self.jobs
            .lock()
            .send(job)
            .map_err(|_| std::io::Error::other("the sandbox thread is gone"))?;
        rx.recv()
            .map_err(|_| std::io::Error::other("the sandbox thread is gone"))?
    }
}
