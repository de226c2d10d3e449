//! The conversation side of a rewind and a fork: truncating a session to a
//! checkpoint (its later turns kept in a branch), and a new session from
//! another's checkpoint.

use serde::{Deserialize, Serialize};
use serde_json::json;

use std::sync::Arc;

use super::{CheckpointError, Checkpoints, RewindReport, now_ms};
use zidane_core::durable::{CheckpointBackend, LeaseError, SessionWrite};
use zidane_core::session::{Session, SessionRun, SessionRunStatus, SessionStore};

/// What a rewind takes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RewindOptions {
    /// The files: every path the later prompts changed goes back.
    pub code: bool,
    /// The conversation: the session keeps the turns before the
    /// checkpoint's prompt (the later ones stay stored, in a branch).
    pub conversation: bool,
    /// Go on past conflicts (files changed since the agent left them are
    /// left alone and listed); without it a conflict changes nothing.
    pub force: bool,
}

impl Default for RewindOptions {
    fn default() -> Self {
        RewindOptions {
            code: true,
            conversation: true,
            force: false,
        }
    }
}

/// What a rewind did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindOutcome {
    /// The checkpoint rewound to, from 1.
    pub checkpoint: usize,
    /// What happened to the files (when they were rewound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<RewindReport>,
    /// The turns the session keeps (when the conversation was rewound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_kept: Option<u32>,
    /// The session that keeps the whole conversation as it was before the
    /// rewind (none when no turn was dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
}

/// What a fork made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkOutcome {
    /// The new session.
    pub session: String,
    /// The session it came from.
    pub from: String,
    /// The checkpoint it was forked at (none: the whole conversation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<usize>,
    /// The turns it starts with.
    pub turns: u32,
    /// The folder restored to the checkpoint, when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<RewindReport>,
}

/// Truncates `session` to its first `turn_index` turns. The conversation as
/// it was is first copied whole into a new session (the branch, returned),
/// so no turn is lost; runs that started past the cut can no longer be
/// resumed. `None` when there was nothing to cut.
///
/// The writes go one after another to a store without leases; a durable
/// session's go through [`rewind_conversation_leased`] (what
/// `Agent::rewind` does).
pub async fn rewind_conversation(
    store: &dyn SessionStore,
    session: &str,
    turn_index: u32,
) -> Result<Option<String>, CheckpointError> {
    let loaded = load(store, session).await?;
    let keep = turn_index as usize;
    if loaded.turns.len() <= keep {
        return Ok(None);
    }
    let now = now_ms();
    let branch = branch_name(session, now);
    store.create(&branch, now).await.map_err(CheckpointError::Store)?;
    store
        .append_turns(&branch, &loaded.turns, now)
        .await
        .map_err(CheckpointError::Store)?;
    store
        .set_meta(&branch, "branchOf", &json!({"session": session, "turns": keep}))
        .await
        .map_err(CheckpointError::Store)?;
    store
        .replace_turns(session, &loaded.turns[..keep], now)
        .await
        .map_err(CheckpointError::Store)?;
    for run in ended_by_cut(&loaded, keep) {
        store.save_run(session, &run).await.map_err(CheckpointError::Store)?;
    }
    store
        .set_meta(session, "rewoundBranch", &json!(branch))
        .await
        .map_err(CheckpointError::Store)?;
    Ok(Some(branch))
}

/// [`rewind_conversation`] on a durable session: under the session's lease
/// (taken for the rewind when this process did not hold it, and given back
/// after; refused with [`CheckpointError::InUse`] while another live
/// process holds it), and in one transaction fenced on it, so a crash
/// leaves the session as it was or wholly rewound, and a process that lost
/// the lease meanwhile writes nothing.
pub async fn rewind_conversation_leased(
    backend: &Arc<dyn CheckpointBackend>,
    session: &str,
    turn_index: u32,
) -> Result<Option<String>, CheckpointError> {
    let lease = Lease::take(backend, session).await?;
    let outcome = async {
        let loaded = load(backend.session_store().as_ref(), session).await?;
        let keep = turn_index as usize;
        if loaded.turns.len() <= keep {
            return Ok(None);
        }
        let branch = branch_name(session, now_ms());
        let mut writes = vec![
            SessionWrite::Create { id: branch.clone() },
            SessionWrite::AppendTurns {
                id: branch.clone(),
                turns: loaded.turns.clone(),
            },
            SessionWrite::SetMeta {
                id: branch.clone(),
                key: "branchOf".into(),
                value: json!({"session": session, "turns": keep}),
            },
            SessionWrite::Truncate {
                id: session.to_owned(),
                keep,
            },
        ];
        writes.extend(
            ended_by_cut(&loaded, keep)
                .into_iter()
                .map(|run| SessionWrite::SaveRun {
                    id: session.to_owned(),
                    run,
                }),
        );
        writes.push(SessionWrite::SetMeta {
            id: session.to_owned(),
            key: "rewoundBranch".into(),
            value: json!(branch),
        });
        backend
            .write_session(session, writes)
            .await
            .map_err(CheckpointError::Store)?;
        Ok(Some(branch))
    }
    .await;
    lease.give_back(backend);
    outcome
}

/// The session, or [`CheckpointError::NoSuchSession`].
async fn load(store: &dyn SessionStore, session: &str) -> Result<Session, CheckpointError> {
    store
        .load(session)
        .await
        .map_err(CheckpointError::Store)?
        .ok_or_else(|| CheckpointError::NoSuchSession(session.to_owned()))
}

/// The session that keeps a rewound conversation whole.
fn branch_name(session: &str, now: u64) -> String {
    format!("{session}~{now:x}")
}

/// The runs a cut at `keep` ends: those that started past it and could
/// still be resumed (a running or suspended one ends as aborted).
fn ended_by_cut(loaded: &Session, keep: usize) -> Vec<SessionRun> {
    loaded
        .runs
        .iter()
        .filter(|r| r.first_turn as usize >= keep)
        .filter(|r| r.resumable || r.status == SessionRunStatus::Running)
        .cloned()
        .map(|mut run| {
            run.resumable = false;
            if run.status == SessionRunStatus::Running || run.status == SessionRunStatus::Suspended {
                run.status = SessionRunStatus::Aborted;
            }
            run
        })
        .collect()
}

/// A session's lease for one write outside a run: taken when this process
/// did not hold it (and then given back), kept when it did.
struct Lease {
    session: String,
    taken: bool,
}

impl Lease {
    async fn take(backend: &Arc<dyn CheckpointBackend>, session: &str) -> Result<Lease, CheckpointError> {
        match Arc::clone(backend).acquire(session.to_owned()).await {
            Ok(taken) => Ok(Lease {
                session: session.to_owned(),
                taken,
            }),
            Err(LeaseError::Held(held)) => Err(CheckpointError::InUse(held)),
            Err(LeaseError::Store(e)) => Err(CheckpointError::Store(e)),
        }
    }

    fn give_back(self, backend: &Arc<dyn CheckpointBackend>) {
        if self.taken {
            backend.release(&self.session);
        }
    }
}

/// [`fork_session`] on a durable store: the new session is written in one
/// transaction under its own lease (so a crash never leaves half of it),
/// and with `restore_files` under the source's lease too, since the folder
/// it rewinds is the one the source's holder works in (refused with
/// [`CheckpointError::InUse`] while another live process holds either).
pub async fn fork_session_leased(
    backend: &Arc<dyn CheckpointBackend>,
    checkpoints: &Checkpoints,
    source: &str,
    index: Option<usize>,
    new_id: &str,
    restore_files: bool,
    force: bool,
) -> Result<ForkOutcome, CheckpointError> {
    let source_lease = match restore_files && index.is_some() {
        true => Some(Lease::take(backend, source).await?),
        false => None,
    };
    let lease = match Lease::take(backend, new_id).await {
        Ok(lease) => lease,
        Err(e) => {
            if let Some(l) = source_lease {
                l.give_back(backend);
            }
            return Err(e);
        }
    };
    let outcome = async {
        let store = backend.session_store();
        let (loaded, keep) = fork_point(store.as_ref(), checkpoints, source, index, new_id).await?;
        let files = fork_files(checkpoints, source, index, new_id, keep, restore_files, force).await?;
        let writes = vec![
            SessionWrite::Create { id: new_id.to_owned() },
            SessionWrite::AppendTurns {
                id: new_id.to_owned(),
                turns: loaded.turns[..keep].to_vec(),
            },
            SessionWrite::SetMeta {
                id: new_id.to_owned(),
                key: "forkedFrom".into(),
                value: json!({"session": source, "checkpoint": index}),
            },
        ];
        backend
            .write_session(new_id, writes)
            .await
            .map_err(CheckpointError::Store)?;
        Ok(ForkOutcome {
            session: new_id.to_owned(),
            from: source.to_owned(),
            checkpoint: index,
            turns: keep as u32,
            files,
        })
    }
    .await;
    lease.give_back(backend);
    if let Some(l) = source_lease {
        l.give_back(backend);
    }
    outcome
}

/// What a fork starts from: the source, and how many of its turns the new
/// session takes. Refused when `new_id` exists.
async fn fork_point(
    store: &dyn SessionStore,
    checkpoints: &Checkpoints,
    source: &str,
    index: Option<usize>,
    new_id: &str,
) -> Result<(Session, usize), CheckpointError> {
    let loaded = load(store, source).await?;
    if store.load(new_id).await.map_err(CheckpointError::Store)?.is_some() {
        return Err(CheckpointError::SessionExists(new_id.to_owned()));
    }
    let keep = match index {
        Some(i) => {
            let list = checkpoints.list(source).await?;
            let found = list.get(i.wrapping_sub(1)).ok_or(CheckpointError::NoSuchCheckpoint {
                session: source.to_owned(),
                index: i,
                count: list.len(),
            })?;
            (found.turn_index as usize).min(loaded.turns.len())
        }
        None => loaded.turns.len(),
    };
    Ok((loaded, keep))
}

/// With `restore_files` and a checkpoint, the folder rewound to it,
/// recorded as the new session's first checkpoint.
async fn fork_files(
    checkpoints: &Checkpoints,
    source: &str,
    index: Option<usize>,
    new_id: &str,
    keep: usize,
    restore_files: bool,
    force: bool,
) -> Result<Option<RewindReport>, CheckpointError> {
    let (true, Some(i)) = (restore_files, index) else {
        return Ok(None);
    };
    let mut plan = checkpoints.plan_rewind(source, i).await?;
    if !plan.conflicts.is_empty() && !force {
        return Err(CheckpointError::Conflicts(plan.conflicts));
    }
    plan.session = new_id.to_owned();
    Ok(Some(checkpoints.apply_rewind(plan, keep as u32, force).await?))
}

/// A new session `new_id` from `source`: its turns up to checkpoint `index`
/// (all of them without one), and with `restore_files` the folder rewound
/// to that checkpoint (recorded as the new session's first checkpoint, so
/// it can be taken back).
pub async fn fork_session(
    store: &dyn SessionStore,
    checkpoints: &Checkpoints,
    source: &str,
    index: Option<usize>,
    new_id: &str,
    restore_files: bool,
    force: bool,
) -> Result<ForkOutcome, CheckpointError> {
    let (loaded, keep) = fork_point(store, checkpoints, source, index, new_id).await?;
    let files = fork_files(checkpoints, source, index, new_id, keep, restore_files, force).await?;
    let now = now_ms();
    store.create(new_id, now).await.map_err(CheckpointError::Store)?;
    store
        .append_turns(new_id, &loaded.turns[..keep], now)
        .await
        .map_err(CheckpointError::Store)?;
    store
        .set_meta(new_id, "forkedFrom", &json!({"session": source, "checkpoint": index}))
        .await
        .map_err(CheckpointError::Store)?;
    Ok(ForkOutcome {
        session: new_id.to_owned(),
        from: source.to_owned(),
        checkpoint: index,
        turns: keep as u32,
        files,
    })
}
