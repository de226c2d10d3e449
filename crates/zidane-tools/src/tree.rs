//! Everything a command started, found again when the command, its
//! context or the program ends, even what left the command's process group
//! or session (`setsid`, a daemon that forks twice).
//!
//! Each command carries a mark in its environment (`ZIDANE_PROCESS_TREE`:
//! this process, its context, the command), which whatever it starts
//! inherits; a stop reads `/proc/<pid>/environ` of the user's processes and
//! kills the marked ones. A process that clears its environment escapes
//! the mark, but not the subreaper: with [`become_subreaper`], an orphan
//! of a command is re-parented to this process instead of `init`, and
//! [`stop_command_processes`] ends it with the rest. Linux only; elsewhere
//! these find nothing.

use std::collections::HashSet;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::Mutex;

/// The environment variable holding the marks of a command's process tree
/// (`:`-separated: a command started by a command of another zidane
/// process carries both).
pub const MARK_VAR: &str = "ZIDANE_PROCESS_TREE";

static NEXT: AtomicU64 = AtomicU64::new(0);
static SUBREAPER: AtomicBool = AtomicBool::new(false);
/// Orphans re-parented to this process, seen alive: reaped once they end.
static ADOPTED: Mutex<Option<HashSet<u32>>> = Mutex::new(None);
/// The processes this process started itself (commands' shells): Tokio
/// waits for these, never the reaper.
static LEADERS: Mutex<Option<HashSet<u32>>> = Mutex::new(None);

/// This process's mark: its pid and a nonce, so that a pid reused by a
/// later process is another mark.
fn process_mark() -> &'static str {
    static MARK: OnceLock<String> = OnceLock::new();
    MARK.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        format!("{}.{nanos:x}", std::process::id())
    })
}

/// A new mark below this process's: a context's, or under `parent` a
/// command's.
pub(crate) fn new_mark(parent: Option<&str>) -> String {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    match parent {
        Some(parent) => format!("{parent}/{n}"),
        None => format!("{}/{n}", process_mark()),
    }
}

/// Puts `mark` in `cmd`'s environment, after the marks this process
/// inherited.
pub(crate) fn apply(cmd: &mut tokio::process::Command, mark: &str) {
    let value = match std::env::var(MARK_VAR) {
        Ok(inherited) if !inherited.is_empty() => format!("{inherited}:{mark}"),
        _ => mark.to_owned(),
    };
    cmd.env(MARK_VAR, value);
}

/// Remembers `pid` as a process Tokio waits for.
pub(crate) fn started(pid: Option<u32>) {
    if let Some(pid) = pid {
        LEADERS.lock().get_or_insert_with(HashSet::new).insert(pid);
    }
}

/// Forgets `pid` once Tokio has waited for it.
pub(crate) fn ended(pid: Option<u32>) {
    if let (Some(pid), Some(leaders)) = (pid, LEADERS.lock().as_mut()) {
        leaders.remove(&pid);
    }
}

/// Makes this process the reaper of what its commands leave behind
/// (`prctl(PR_SET_CHILD_SUBREAPER)`): a process whose parent ends is
/// re-parented here rather than to `init`, so [`stop_command_processes`]
/// finds it even when it cleared its environment, and what ends is
/// reaped. The `zidane` program calls it first thing; a library user
/// whose process runs other children of its own may leave it out (marked
/// processes are found either way).
pub fn become_subreaper() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
        SUBREAPER.store(true, Ordering::SeqCst);
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "a child subreaper needs Linux",
    ))
}

/// Stops every process a command of this process started that still runs
/// (marked, or, with [`become_subreaper`], an orphan re-parented here):
/// for the program's exit, whatever path it takes (a second Ctrl-C
/// included). Returns how many it killed.
pub fn stop_command_processes() -> usize {
    kill_marked(process_mark(), SUBREAPER.load(Ordering::SeqCst))
}

/// Kills the processes marked `mark` or below it (and, with `orphans`, the
/// children this process did not start itself), until none is left, and
/// reaps the ones re-parented here. Returns how many it killed.
pub(crate) fn kill_marked(mark: &str, orphans: bool) -> usize {
    #[cfg(target_os = "linux")]
    {
        let mut killed = 0;
        // A process may fork while the scan runs: scan again until a scan
        // finds nothing (bounded).
        for _ in 0..8 {
            let found = scan(mark, orphans);
            if found.is_empty() {
                break;
            }
            for pid in &found {
                if let Some(p) = i32::try_from(*pid).ok().and_then(rustix::process::Pid::from_raw) {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
                    killed += 1;
                }
            }
            reap(&found);
        }
        reap_adopted();
        killed
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (mark, orphans);
        0
    }
}

/// Notes the orphans of this process's commands re-parented here, and
/// reaps those that ended: after a command ends, with a subreaper.
pub(crate) fn sweep() {
    #[cfg(target_os = "linux")]
    if SUBREAPER.load(Ordering::SeqCst) {
        let me = std::process::id();
        let leaders = LEADERS.lock().clone().unwrap_or_default();
        let children: Vec<u32> = processes()
            .filter(|p| p.ppid == me && !leaders.contains(&p.pid) && p.marks(process_mark()))
            .map(|p| p.pid)
            .collect();
        ADOPTED.lock().get_or_insert_with(HashSet::new).extend(children);
        reap_adopted();
    }
}

#[cfg(target_os = "linux")]
struct Proc {
    pid: u32,
    ppid: u32,
    environ: Vec<u8>,
}

#[cfg(target_os = "linux")]
impl Proc {
    /// Whether its environment carries `mark` or a mark below it.
    fn marks(&self, mark: &str) -> bool {
        self.environ.split(|b| *b == 0).any(|var| {
            var.strip_prefix(MARK_VAR.as_bytes())
                .and_then(|rest| rest.strip_prefix(b"="))
                .is_some_and(|value| {
                    value.split(|b| *b == b':').any(|m| {
                        m == mark.as_bytes() || (m.starts_with(mark.as_bytes()) && m.get(mark.len()) == Some(&b'/'))
                    })
                })
        })
    }
}

/// The processes this one may look at, with their parent and environment.
#[cfg(target_os = "linux")]
fn processes() -> impl Iterator<Item = Proc> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(move |pid| *pid != me)
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (_, rest) = stat.rsplit_once(')')?;
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            let ppid = fields.next()?.parse().ok()?;
            if state.starts_with(['Z', 'X']) {
                return Some(Proc {
                    pid,
                    ppid,
                    environ: Vec::new(),
                });
            }
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            Some(Proc { pid, ppid, environ })
        })
}

/// The live processes to kill: marked, or orphans re-parented here.
#[cfg(target_os = "linux")]
fn scan(mark: &str, orphans: bool) -> Vec<u32> {
    let me = std::process::id();
    let leaders = LEADERS.lock().clone().unwrap_or_default();
    processes()
        .filter(|p| !p.environ.is_empty())
        .filter(|p| p.marks(mark) || (orphans && p.ppid == me && !leaders.contains(&p.pid)))
        .map(|p| {
            if p.ppid == me && !leaders.contains(&p.pid) {
                ADOPTED.lock().get_or_insert_with(HashSet::new).insert(p.pid);
            }
            p.pid
        })
        .collect()
}

/// Waits for the killed processes that are this process's adopted
/// children (Tokio waits for the ones it started).
#[cfg(target_os = "linux")]
fn reap(killed: &[u32]) {
    let adopted: Vec<u32> = {
        let guard = ADOPTED.lock();
        let Some(set) = guard.as_ref() else { return };
        killed.iter().copied().filter(|p| set.contains(p)).collect()
    };
    for pid in adopted {
        if let Some(p) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
            // SIGKILL was sent: the wait is short.
            let _ = rustix::process::waitpid(Some(p), rustix::process::WaitOptions::empty());
        }
        if let Some(set) = ADOPTED.lock().as_mut() {
            set.remove(&pid);
        }
    }
}

/// Reaps the adopted orphans that have ended.
#[cfg(target_os = "linux")]
fn reap_adopted() {
    let pids: Vec<u32> = ADOPTED
        .lock()
        .as_ref()
        .map(|s| s.iter().copied().collect())
        .unwrap_or_default();
    for pid in pids {
        let Some(p) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
            continue;
        };
        match rustix::process::waitpid(Some(p), rustix::process::WaitOptions::NOHANG) {
            Ok(None) => {}
            // Reaped, or not ours (any more).
            Ok(Some(_)) | Err(_) => {
                if let Some(set) = ADOPTED.lock().as_mut() {
                    set.remove(&pid);
                }
            }
        }
    }
}
