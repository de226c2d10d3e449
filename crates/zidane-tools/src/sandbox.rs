//! Confining the commands of the in-process context with Landlock, the
//! Linux security module an unprivileged process uses to restrict itself:
//! each command restricts itself between `fork` and `exec`, so the agent's
//! own process stays as it was, and the restriction holds for everything
//! the command starts.
//!
//! Landlock was chosen over a container tool (bubblewrap): it needs no
//! extra program on the machine, no user namespaces, and no setuid helper;
//! it confines writes by folder, and on kernels from 6.7 TCP connections
//! too. Reads stay open everywhere but where credentials live (SSH and
//! cloud tools' keys, `.env` files beside the project, the agent's
//! sessions): a coding agent reads compilers, libraries and caches all
//! over the system, so everything else is granted, path by path, around
//! those.

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
    /// [`Sandbox::workspace_write`], the `basic` preset's and the
    /// program's default: say [`Sandbox::off`] for no confinement.
    ///
    /// ```
    /// use zidane::tools::{Sandbox, SandboxMode};
    /// # mod zidane { pub mod tools { pub use zidane_tools::*; } }
    ///
    /// assert_eq!(Sandbox::default(), Sandbox::workspace_write());
    /// assert_eq!(Sandbox::default().mode, SandboxMode::WorkspaceWrite);
    /// ```
    fn default() -> Self {
        Sandbox::workspace_write()
    }
}

impl std::fmt::Display for Sandbox {
    /// What confined commands may do, in words a person (or a model)
    /// reads: `writes only in the working folder and the temporary folder;
    /// network on`.
    ///
    /// ```
    /// use zidane::tools::Sandbox;
    /// # mod zidane { pub mod tools { pub use zidane_tools::*; } }
    ///
    /// assert_eq!(
    ///     Sandbox::workspace_write().without_temp().without_network().to_string(),
    ///     "writes only in the working folder; network off",
    /// );
    /// assert_eq!(Sandbox::read_only().to_string(), "no writes; network on");
    /// assert_eq!(Sandbox::off().to_string(), "not confined");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let writes = match self.mode {
            SandboxMode::Off => return f.write_str("not confined"),
            SandboxMode::ReadOnly => "no writes",
            SandboxMode::WorkspaceWrite if self.temp => "writes only in the working folder and the temporary folder",
            SandboxMode::WorkspaceWrite => "writes only in the working folder",
        };
        let network = if self.network { "on" } else { "off" };
        write!(f, "{writes}; network {network}")
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

    /// The same sandbox with the system's temporary folder closed to
    /// writes (under [`SandboxMode::WorkspaceWrite`], commands then write
    /// only in the working folder and the background tasks' folder).
    ///
    /// ```
    /// use zidane::tools::Sandbox;
    /// # mod zidane { pub mod tools { pub use zidane_tools::*; } }
    ///
    /// let strict = Sandbox::workspace_write().without_temp();
    /// assert!(!strict.temp);
    /// assert!(strict.network);
    /// ```
    #[must_use]
    pub const fn without_temp(mut self) -> Self {
        self.temp = false;
        self
    }
}

/// Why commands cannot be confined on this machine.
#[derive(Clone, thiserror::Error)]
#[error("this machine cannot confine commands: {0}; run without a sandbox")]
pub struct SandboxError(pub String);

/// Reads as its message with its causes (`zidane::providers::write_report`),
/// which is what a `main` returning `Result<(), Box<dyn Error>>` prints.
impl std::fmt::Debug for SandboxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        zidane_provider::write_report(self, f)
    }
}

/// What commands and the file tools may not read under a sandbox: the
/// credential stores of the person's home (see [`credential_paths`]),
/// `.env` files near the working folder but outside it, and what the host
/// adds ([`ProcessContext::withhold`](crate::ProcessContext::withhold): the
/// agent adds its sessions file); less what the host opens on purpose
/// ([`ProcessContext::open_path`](crate::ProcessContext::open_path)).
#[derive(Debug, Default)]
pub(crate) struct Withheld {
    paths: Vec<PathBuf>,
    opened: Vec<PathBuf>,
}

impl Withheld {
    /// Adds `path` (and, when it is a link, what it points to).
    pub(crate) fn add(&mut self, path: &Path) {
        for p in [Some(path.to_path_buf()), canonical(path)].into_iter().flatten() {
            if !self.paths.contains(&p) {
                self.paths.push(p);
            }
        }
    }

    /// Opens `path` and what lies beneath it.
    pub(crate) fn open(&mut self, path: &Path) {
        for p in [Some(path.to_path_buf()), canonical(path)].into_iter().flatten() {
            if !self.opened.contains(&p) {
                self.opened.push(p);
            }
        }
    }

    /// The withheld paths, as given.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.paths
            .iter()
            .filter(|p| !self.opened.iter().any(|o| p.starts_with(o)))
            .cloned()
            .collect()
    }

    /// Whether `path` is withheld: at or under a withheld path, and not at
    /// or under a path opened inside it.
    pub(crate) fn hides(&self, path: &Path) -> bool {
        self.paths
            .iter()
            .any(|w| path.starts_with(w) && !self.opened.iter().any(|o| o.starts_with(w) && path.starts_with(o)))
    }

    /// Whether something under `dir` (not `dir` itself) is withheld, or,
    /// under a withheld `dir`, opened again.
    fn mixed(&self, dir: &Path) -> bool {
        let below = |p: &PathBuf| p.starts_with(dir) && p.as_path() != dir;
        if self.hides(dir) {
            self.opened.iter().any(below)
        } else {
            self.paths.iter().any(|w| below(w) && self.hides(w))
        }
    }

    /// What to grant so that `base` and everything beneath it can be read
    /// but the withheld paths: subtrees granted whole, and the folders on
    /// the way to a withheld path, granted only their listing (Landlock
    /// grants by path, and a grant covers everything beneath it, so the
    /// rest is granted rather than the withheld part denied).
    pub(crate) fn grants(&self, base: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let (mut whole, mut listed) = (Vec::new(), Vec::new());
        self.visit(base, &mut whole, &mut listed);
        (whole, listed)
    }

    fn visit(&self, path: &Path, whole: &mut Vec<PathBuf>, listed: &mut Vec<PathBuf>) {
        if !self.mixed(path) {
            if !self.hides(path) {
                whole.push(path.to_path_buf());
            }
            return;
        }
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        if !self.hides(path) {
            listed.push(path.to_path_buf());
        }
        for entry in entries.flatten() {
            // A link is never granted: a grant on it would be a grant on
            // what it points to, withheld or not, and a path through it is
            // judged where it leads.
            if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                continue;
            }
            self.visit(&entry.path(), whole, listed);
        }
    }
}

/// `path` with its longest existing start resolved (links followed), when
/// that differs from `path`: a store that does not exist yet is withheld
/// where it would be.
fn canonical(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut existing = path;
    let real = loop {
        if let Ok(real) = existing.canonicalize() {
            break real;
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    };
    let full = rest.iter().rev().fold(real, |p, part| p.join(part));
    (full != path).then_some(full)
}

/// The credential stores of the person's home folder that commands never
/// read under a sandbox: SSH and GnuPG keys, `~/.netrc` and
/// `~/.git-credentials`, Docker's logins, and the folders of the cloud
/// command-line tools (AWS, Google Cloud, Azure, Kubernetes, Oracle Cloud,
/// DigitalOcean, GitHub's `gh`, Terraform, fly.io, Vault), whether they
/// exist yet or not.
pub fn credential_paths(home: &Path) -> Vec<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|c| !c.is_empty())
        .map_or_else(|| home.join(".config"), PathBuf::from);
    let mut paths: Vec<PathBuf> = [
        ".ssh",
        ".gnupg",
        ".netrc",
        ".git-credentials",
        ".aws",
        ".azure",
        ".kube",
        ".oci",
        ".docker/config.json",
        ".terraform.d/credentials.tfrc.json",
        ".fly",
        ".vault-token",
        ".config/gcloud",
        ".config/gh",
        ".config/doctl",
        ".local/share/keyrings",
        ".password-store",
    ]
    .iter()
    .map(|p| home.join(p))
    .collect();
    for p in ["gcloud", "gh", "doctl"] {
        let p = config.join(p);
        if !paths.contains(&p) {
            paths.push(p);
        }
    }
    paths
}

/// `.env` files outside the working folder `root` that a command there
/// would find first: in the folders above it, and in the folders beside
/// it (the other projects of its parent folder). `.env`, `.env.<name>`
/// and `.envrc`, but not the templates (`.env.example`, `.env.sample`,
/// `.env.template`, `.env.dist`).
pub fn env_files_near(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut look = |dir: &Path| {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let env = name == ".env" || name == ".envrc" || name.starts_with(".env.");
            let template = [".example", ".sample", ".template", ".dist"]
                .iter()
                .any(|t| name.ends_with(t));
            if env && !template && entry.file_type().is_ok_and(|t| !t.is_dir()) {
                found.push(entry.path());
            }
        }
    };
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    for above in root.ancestors().skip(1) {
        look(above);
    }
    if let Some(parent) = root.parent()
        && let Ok(siblings) = std::fs::read_dir(parent)
    {
        for sibling in siblings.flatten() {
            let path = sibling.path();
            if path != root && sibling.file_type().is_ok_and(|t| t.is_dir()) {
                look(&path);
            }
        }
    }
    found
}

/// How commands of a context are confined: each is started from a thread
/// of its own that restricts itself first (Landlock confines a thread and
/// everything it starts), with the rules as they stand at that moment, so
/// the agent's other threads keep their freedom and a path withheld or
/// opened later applies from the next command on.
pub(crate) struct Confiner {
    sandbox: Sandbox,
    root: PathBuf,
    also: Vec<PathBuf>,
    withheld: std::sync::Arc<parking_lot::RwLock<Withheld>>,
}

impl std::fmt::Debug for Confiner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confiner").finish_non_exhaustive()
    }
}

#[cfg(target_os = "linux")]
impl Sandbox {
    fn restrict(&self, root: &Path, also: &[PathBuf], withheld: &Withheld) -> Result<(), String> {
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
        let (readable, listed) = withheld.grants(Path::new("/"));
        let status = ruleset
            .create()
            .map_err(fail)?
            .add_rules(path_beneath_rules(&readable, AccessFs::from_read(fs)))
            .map_err(fail)?
            .add_rules(path_beneath_rules(&listed, AccessFs::ReadDir))
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
    /// The confinement of a context rooted at `root` (writable in
    /// workspace-write mode, with the folders of `also`), reading all but
    /// what `withheld` holds; fails when the kernel would not enforce every
    /// rule. Needs no runtime: each command is started inside the runtime
    /// of the task that asks for it.
    pub(crate) fn start(
        sandbox: Sandbox,
        root: PathBuf,
        also: Vec<PathBuf>,
        withheld: std::sync::Arc<parking_lot::RwLock<Withheld>>,
    ) -> Result<Self, SandboxError> {
        let confiner = Confiner {
            sandbox,
            root,
            also,
            withheld,
        };
        #[cfg(not(target_os = "linux"))]
        {
            let _ = confiner;
            Err(SandboxError("the sandbox is built on Linux's Landlock".into()))
        }
        #[cfg(target_os = "linux")]
        {
            // A thread that only restricts itself tells whether this
            // machine enforces the rules.
            confiner.on_confined_thread(|| ()).map_err(SandboxError)?;
            Ok(confiner)
        }
    }

    /// Runs `job` on a new thread once it is confined.
    #[cfg(target_os = "linux")]
    fn on_confined_thread<T: Send + 'static>(&self, job: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
        let (sandbox, root, also) = (self.sandbox, self.root.clone(), self.also.clone());
        let withheld = std::sync::Arc::clone(&self.withheld);
        std::thread::Builder::new()
            .name("zidane-sandbox".into())
            .spawn(move || {
                let restricted = sandbox.restrict(&root, &also, &withheld.read());
                restricted.map(|()| job())
            })
            .map_err(|e| format!("cannot start the sandbox thread: {e}"))?
            .join()
            .map_err(|_| "the sandbox thread ended".to_owned())?
    }

    /// Starts `cmd` confined.
    pub(crate) fn spawn(&self, mut cmd: tokio::process::Command) -> std::io::Result<tokio::process::Child> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| std::io::Error::other("a confined command is started inside a Tokio runtime"))?;
        #[cfg(target_os = "linux")]
        {
            self.on_confined_thread(move || {
                let _entered = runtime.enter();
                cmd.spawn()
            })
            .map_err(std::io::Error::other)?
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (runtime, &mut cmd);
            Err(std::io::Error::other("the sandbox is built on Linux's Landlock"))
        }
    }
}
