//! Folder checkpoints as operations a front end drives: which session a
//! folder's checkpoints belong to, a rewind planned and then applied (the
//! front end shows the plan and asks), a fork, deleting and pruning
//! sessions, and what a prompt changed.

use std::path::Path;
use std::sync::Arc;

use zidane::agent::{SessionStore, SqliteStore};
use zidane::checkpoints::{
    Checkpoint, CheckpointError, CheckpointStore, Checkpoints, CheckpointsConfig, ForkOutcome, RewindReport,
    fork_session_leased, rewind_conversation_leased,
};
use zidane::durable::{CheckpointBackend, CheckpointRuntime};

use crate::Error;
use crate::event::CheckpointNote;

/// What a rewind takes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Restore {
    /// The files the later prompts changed.
    Files,
    /// The conversation's later turns.
    Conversation,
    /// Both.
    Both,
}

/// The checkpoints of `cwd`, kept in the sessions file (at most `max` per
/// session).
pub fn open(cwd: &Path, store: &SqliteStore, max: Option<u32>) -> Arc<Checkpoints> {
    let mut config = CheckpointsConfig::new(cwd);
    if let Some(n) = max {
        config.max_checkpoints = n as usize;
    }
    // The sessions file (and background output beside it) is never part of
    // the folder's checkpoints, even when it lives inside the folder.
    if let Some(dir) = store.path().parent().filter(|d| !d.as_os_str().is_empty()) {
        config
            .exclude
            .push(std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()));
    }
    Arc::new(Checkpoints::new(
        Arc::new(store.clone()) as Arc<dyn CheckpointStore>,
        config,
    ))
}

fn failed(e: impl std::fmt::Display) -> Error {
    Error::run(e.to_string())
}

/// `session`, else the most recent session with checkpoints of this folder.
pub async fn folder_session(
    session: Option<&str>,
    store: &SqliteStore,
    checkpoints: &Checkpoints,
) -> Result<String, Error> {
    if let Some(id) = session {
        return Ok(id.to_owned());
    }
    let root = checkpoints.root().to_string_lossy().into_owned();
    let sessions = store
        .list()
        .await
        .map_err(|e| Error::run(format!("cannot read the sessions: {e}")))?;
    for s in sessions.into_iter().filter(|s| zidane::agent::is_conversation(&s.id)) {
        let snapshots = checkpoints.store().snapshots(&s.id).await.map_err(failed)?;
        if snapshots.iter().any(|snap| snap.root == root) {
            return Ok(s.id);
        }
    }
    Err(Error::usage(format!(
        "no session has checkpoints of {} yet (name one with --session)",
        checkpoints.root().display()
    )))
}

/// A session's checkpoints.
pub async fn list(checkpoints: &Checkpoints, session: &str) -> Result<Vec<Checkpoint>, Error> {
    checkpoints.list(session).await.map_err(failed)
}

/// What a rewind would do, for a front end to show before it is applied.
#[derive(Debug)]
pub struct RewindPlan {
    /// The session.
    pub session: String,
    /// The checkpoint rewound to (before its prompt).
    pub index: usize,
    /// That checkpoint.
    pub target: Checkpoint,
    /// A rewind a crash cut off, being finished.
    pub finishing: bool,
    /// The files' part (`None`: the files stay).
    pub files: Option<zidane::checkpoints::RewindPlan>,
    /// Whether the conversation goes back too.
    pub conversation: bool,
    /// The turns kept.
    pub keep: u32,
    /// The turns now.
    pub turns_now: u32,
}

impl RewindPlan {
    /// Whether the conversation loses turns.
    pub fn drops_turns(&self) -> bool {
        self.conversation && self.keep < self.turns_now
    }

    /// Whether nothing would change.
    pub fn is_empty(&self) -> bool {
        self.files
            .as_ref()
            .is_none_or(|p| p.is_empty() && p.conflicts.is_empty())
            && !self.drops_turns()
    }

    /// Files changed since the agent left them (left alone unless forced).
    pub fn conflicts(&self) -> &[zidane::checkpoints::Conflict] {
        self.files.as_ref().map_or(&[], |p| p.conflicts.as_slice())
    }
}

/// What a rewind did.
#[derive(Debug)]
pub struct Rewound {
    /// The files restored and removed.
    pub report: Option<RewindReport>,
    /// The session holding the whole conversation from before the rewind.
    pub branch: Option<String>,
    /// Notes for the person.
    pub notes: Vec<String>,
}

/// Which checkpoint an undo (`index` none: the last, or the end of a
/// rewind a crash cut off) or a rewind goes back to; `Ok(None)` when the
/// session has none.
pub fn rewind_target(list: &[Checkpoint], index: Option<usize>) -> (usize, bool) {
    match index {
        None => match list.last() {
            Some(last) if !last.finished && last.rewind_to.is_some() => (last.rewind_to.unwrap_or(list.len()), true),
            _ => (list.len(), false),
        },
        Some(given) => (given, false),
    }
}

/// Plans a rewind of `session` to checkpoint `index` (from
/// [`rewind_target`]), taking back what `restore` says.
pub async fn plan_rewind(
    store: &SqliteStore,
    checkpoints: &Checkpoints,
    session: &str,
    list: &[Checkpoint],
    (index, finishing): (usize, bool),
    restore: Restore,
) -> Result<RewindPlan, Error> {
    let Some(target) = index.checked_sub(1).and_then(|i| list.get(i)) else {
        return Err(Error::usage(format!(
            "session {session} has no checkpoint {index} (it has {})",
            list.len()
        )));
    };
    let files = matches!(restore, Restore::Files | Restore::Both);
    let conversation = matches!(restore, Restore::Conversation | Restore::Both);
    let loaded = store.load(session).await.map_err(failed)?;
    let turns_now = loaded.as_ref().map_or(0, |s| s.turns.len() as u32);
    let files = if files {
        Some(checkpoints.plan_rewind(session, index).await.map_err(failed)?)
    } else {
        None
    };
    Ok(RewindPlan {
        session: session.to_owned(),
        index,
        target: target.clone(),
        finishing,
        files,
        conversation,
        keep: target.turn_index.min(turns_now),
        turns_now,
    })
}

/// Applies `plan` (`force`: restoring the other files when some changed
/// since the agent left them).
pub async fn apply_rewind(
    runtime: &Arc<CheckpointRuntime>,
    checkpoints: &Checkpoints,
    plan: RewindPlan,
    force: bool,
) -> Result<Rewound, Error> {
    let drops = plan.drops_turns();
    if !force && !plan.conflicts().is_empty() {
        let error = CheckpointError::Conflicts(plan.conflicts().to_vec());
        return Err(Error::run(format!("{error} (--force restores the others)")));
    }
    let report = match plan.files {
        Some(files) => Some(
            checkpoints
                .apply_rewind(files, plan.turns_now, force)
                .await
                .map_err(failed)?,
        ),
        None => None,
    };
    let branch = if drops {
        // Through the session's lease: a process running it meanwhile
        // keeps it (and the rewind is refused) until it ends.
        let backend: Arc<dyn CheckpointBackend> = Arc::clone(runtime) as _;
        rewind_conversation_leased(&backend, &plan.session, plan.keep)
            .await
            .map_err(failed)?
    } else {
        None
    };
    Ok(Rewound {
        report,
        branch,
        notes: checkpoints.take_notes(),
    })
}

/// `SESSION[:N]`: the session and the checkpoint.
pub fn fork_spec(spec: &str) -> Result<(&str, Option<usize>), Error> {
    match spec.rsplit_once(':') {
        Some((source, n)) if !source.is_empty() && !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
            let n: usize = n
                .parse()
                .map_err(|_| Error::usage(format!("--fork {spec}: `{n}` is not a checkpoint number")))?;
            Ok((source, Some(n)))
        }
        _ => Ok((spec, None)),
    }
}

/// A new session `new_id` from `source`'s checkpoint `index` (all of it
/// without one), the folder restored too `with_files`.
pub async fn fork(
    runtime: &Arc<CheckpointRuntime>,
    checkpoints: &Checkpoints,
    (source, index): (&str, Option<usize>),
    new_id: &str,
    with_files: bool,
    force: bool,
) -> Result<ForkOutcome, Error> {
    if with_files && index.is_none() {
        return Err(Error::usage("--with-files needs a checkpoint: --fork SESSION:N"));
    }
    let backend: Arc<dyn CheckpointBackend> = Arc::clone(runtime) as _;
    fork_session_leased(&backend, checkpoints, source, index, new_id, with_files, force)
        .await
        .map_err(|e| match e {
            CheckpointError::NoSuchSession(_) | CheckpointError::NoSuchCheckpoint { .. } => Error::usage(e.to_string()),
            e => failed(e),
        })
}

/// Deletes session `id`, its turns, checkpoints and background output;
/// the checkpoint bytes freed.
pub async fn delete(store: &SqliteStore, id: &str) -> Result<u64, Error> {
    let before = store.storage_bytes().await.map_err(failed)?;
    if !store.delete_session(id).await.map_err(failed)? {
        return Err(Error::usage(format!("no session `{id}`")));
    }
    remove_task_output(store, id);
    let after = store.storage_bytes().await.map_err(failed)?;
    Ok(before.saturating_sub(after))
}

/// Background output kept for a session.
pub fn remove_task_output(store: &SqliteStore, id: &str) {
    if let Some(dir) = store.path().parent() {
        let _ = std::fs::remove_dir_all(dir.join("tasks").join(id));
    }
}

/// The sessions unchanged for `age`.
pub async fn older_than(store: &SqliteStore, age: std::time::Duration) -> Result<Vec<String>, Error> {
    let before_ms = crate::now_ms().saturating_sub(age.as_millis() as u64);
    store.sessions_older_than(before_ms).await.map_err(failed)
}

/// What pruning freed and left.
#[derive(Debug, Clone, Copy)]
pub struct Pruned {
    /// Checkpoint bytes freed.
    pub freed: u64,
    /// Checkpoint bytes left.
    pub left: u64,
}

/// Deletes `sessions` and the checkpoint contents only they used.
pub async fn prune(store: &SqliteStore, sessions: &[String]) -> Result<Pruned, Error> {
    let before = store.storage_bytes().await.map_err(failed)?;
    for id in sessions {
        store.delete_session(id).await.map_err(failed)?;
        remove_task_output(store, id);
    }
    let report = store.prune().await.map_err(failed)?;
    let after = store.storage_bytes().await.map_err(failed)?;
    Ok(Pruned {
        freed: before.saturating_sub(after).max(report.bytes),
        left: after,
    })
}

/// What the prompt that started at `since_ms` changed, and the
/// checkpoints' notes.
pub(crate) async fn after_run(session: &str, checkpoints: &Checkpoints, since_ms: u64) -> CheckpointNote {
    let mut notes = checkpoints.take_notes();
    let checkpoint = match checkpoints.latest(session).await {
        Ok(latest) => latest.filter(|cp| cp.created_at.as_millis() >= since_ms),
        Err(e) => {
            notes.push(format!("cannot read the checkpoints: {e}"));
            None
        }
    };
    CheckpointNote {
        session: session.to_owned(),
        checkpoint,
        notes,
    }
}
