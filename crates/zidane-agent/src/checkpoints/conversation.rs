//! The conversation side of a rewind and a fork: truncating a session to a
//! checkpoint (its later turns kept in a branch), and a new session from
//! another's checkpoint.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{CheckpointError, Checkpoints, RewindReport, now_ms};
use zidane_core::session::{SessionRunStatus, SessionStore};

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
pub async fn rewind_conversation(
    store: &dyn SessionStore,
    session: &str,
    turn_index: u32,
) -> Result<Option<String>, CheckpointError> {
    let loaded = store
        .load(session)
        .await
        .map_err(CheckpointError::Store)?
        .ok_or_else(|| CheckpointError::NoSuchSession(session.to_owned()))?;
    let keep = turn_index as usize;
    if loaded.turns.len() <= keep {
        return Ok(None);
    }
    let now = now_ms();
    let branch = format!("{session}~{now:x}");
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
    for mut run in loaded.runs.into_iter().filter(|r| r.first_turn as usize >= keep) {
        if run.resumable || run.status == SessionRunStatus::Running {
            run.resumable = false;
            if run.status == SessionRunStatus::Running || run.status == SessionRunStatus::Suspended {
                run.status = SessionRunStatus::Aborted;
            }
            store.save_run(session, &run).await.map_err(CheckpointError::Store)?;
        }
    }
    store
        .set_meta(session, "rewoundBranch", &json!(branch))
        .await
        .map_err(CheckpointError::Store)?;
    Ok(Some(branch))
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
    let loaded = store
        .load(source)
        .await
        .map_err(CheckpointError::Store)?
        .ok_or_else(|| CheckpointError::NoSuchSession(source.to_owned()))?;
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
    let files = match (restore_files, index) {
        (true, Some(i)) => {
            let mut plan = checkpoints.plan_rewind(source, i).await?;
            if !plan.conflicts.is_empty() && !force {
                return Err(CheckpointError::Conflicts(plan.conflicts));
            }
            plan.session = new_id.to_owned();
            Some(checkpoints.apply_rewind(plan, keep as u32, force).await?)
        }
        _ => None,
    };
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
