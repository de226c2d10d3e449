//! Folder checkpoints at the command line: `--list-checkpoints`, `--undo`,
//! `--rewind`, `--fork`, `--delete-session`, `--prune-older-than`, and the
//! line after a run that says what the prompt changed.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use zidane::agent::{SessionStore, SqliteStore};
use zidane::checkpoints::{
    Checkpoint, CheckpointError, CheckpointStore, Checkpoints, CheckpointsConfig, RestoreAction, RewindPlan,
    RewindReport, fork_session, rewind_conversation,
};

use crate::emit;
use crate::setup::{Args, Failure, Restore};

/// The checkpoints of `cwd`, kept in the sessions file.
pub(crate) fn open(args: &Args, cwd: &Path, store: &SqliteStore) -> Arc<Checkpoints> {
    let mut config = CheckpointsConfig::new(cwd);
    if let Some(n) = args.max_checkpoints {
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

fn failed(e: impl std::fmt::Display) -> Failure {
    Failure::run(e.to_string())
}

/// `--session`, else the most recent session with checkpoints of this
/// folder.
async fn folder_session(args: &Args, store: &SqliteStore, checkpoints: &Checkpoints) -> Result<String, Failure> {
    if let Some(id) = &args.session {
        return Ok(id.clone());
    }
    let root = checkpoints.root().to_string_lossy().into_owned();
    let sessions = store
        .list()
        .await
        .map_err(|e| Failure::run(format!("cannot read the sessions: {e}")))?;
    for s in sessions
        .into_iter()
        .filter(|s| !s.id.contains(zidane::agent::CHILD_SESSION_MARK))
    {
        let snapshots = checkpoints.store().snapshots(&s.id).await.map_err(failed)?;
        if snapshots.iter().any(|snap| snap.root == root) {
            return Ok(s.id);
        }
    }
    Err(Failure::usage(format!(
        "no session has checkpoints of {} yet (name one with --session)",
        checkpoints.root().display()
    )))
}

fn when(ms: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let secs = now.saturating_sub(ms) / 1000;
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86_400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

fn short(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let cut: String = line.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// One checkpoint as a line of text, then its paths.
fn describe(cp: &Checkpoint) -> String {
    let kind = match cp.kind {
        zidane::checkpoints::SnapshotKind::Rewind => "rewind",
        _ => "prompt",
    };
    let c = &cp.changes;
    let mut text = format!(
        "{:>3}  {:<8} {kind:<6}  turn {:<3}  +{} ~{} -{}  {}\n",
        cp.index,
        when(cp.created_at.as_millis()),
        cp.turn_index,
        c.created.len(),
        c.modified.len(),
        c.deleted.len(),
        short(&cp.label, 60)
    );
    for (mark, paths) in [("+", &c.created), ("~", &c.modified), ("-", &c.deleted)] {
        for path in paths {
            text.push_str(&format!("       {mark} {path}\n"));
        }
    }
    for left in &cp.not_covered {
        text.push_str(&format!("       ! {} (not covered)\n", left.path));
    }
    text
}

/// `--list-checkpoints`.
pub(crate) async fn list(args: &Args, store: &SqliteStore, checkpoints: &Checkpoints) -> Result<(), Failure> {
    let session = folder_session(args, store, checkpoints).await?;
    let list = checkpoints.list(&session).await.map_err(failed)?;
    let mut text = String::new();
    if args.json {
        for cp in &list {
            let mut value = serde_json::to_value(cp).unwrap_or_default();
            if let Some(map) = value.as_object_mut() {
                map.insert("type".into(), json!("checkpoint"));
                map.insert("session".into(), json!(session));
            }
            text.push_str(&format!("{value}\n"));
        }
        return emit(&text);
    }
    if list.is_empty() {
        text.push_str(&format!("Session {session} has no checkpoints.\n"));
    } else {
        text.push_str(&format!(
            "Checkpoints of session {session} (`zidane --rewind N` goes back to before N):\n"
        ));
    }
    for cp in &list {
        text.push_str(&describe(cp));
    }
    emit(&text)
}

/// Whether a person is there to answer.
fn interactive(args: &Args) -> bool {
    !args.yes && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks a yes/no question on the terminal (no is the default).
fn ask(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim(), "y" | "Y" | "yes")
}

/// Which checkpoint: the one given, else a pick on the terminal.
fn pick(args: &Args, list: &[Checkpoint], given: usize) -> Result<usize, Failure> {
    if given != 0 {
        return Ok(given);
    }
    if !interactive(args) {
        return Err(Failure::usage(
            "--rewind needs a checkpoint number without a terminal (see --list-checkpoints)",
        ));
    }
    for cp in list {
        eprint!("{}", describe(cp));
    }
    eprint!("Rewind to which checkpoint (1-{})? ", list.len());
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    line.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=list.len()).contains(n))
        .ok_or_else(|| Failure::usage("no checkpoint picked; nothing changed"))
}

fn show_plan(plan: &RewindPlan) -> String {
    let mut text = String::new();
    for step in &plan.steps {
        let what = match step.action {
            RestoreAction::Write { .. } => "restore",
            RestoreAction::Remove => "remove",
            RestoreAction::CreateDir { .. } => "recreate",
            RestoreAction::RemoveDir => "remove",
        };
        let slash = if matches!(step.action, RestoreAction::CreateDir { .. } | RestoreAction::RemoveDir) {
            "/"
        } else {
            ""
        };
        text.push_str(&format!("  {what:<8} {}{slash}\n", step.path));
    }
    for c in &plan.conflicts {
        text.push_str(&format!("  conflict {} ({}): left alone\n", c.path, c.reason));
    }
    for path in &plan.not_covered {
        text.push_str(&format!("  skipped  {path} (not covered by the checkpoints)\n"));
    }
    text
}

fn show_report(report: &RewindReport) -> String {
    let mut text = format!("{} restored, {} removed", report.restored.len(), report.removed.len());
    if !report.kept.is_empty() {
        text.push_str(&format!(
            ", {} left alone ({})",
            report.kept.len(),
            report
                .kept
                .iter()
                .map(|c| c.path.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    text
}

/// `--undo` (`index` none: the last checkpoint) and `--rewind [N]`.
pub(crate) async fn rewind(
    args: &Args,
    store: &SqliteStore,
    checkpoints: &Checkpoints,
    index: Option<usize>,
) -> Result<(), Failure> {
    let session = folder_session(args, store, checkpoints).await?;
    let list = checkpoints.list(&session).await.map_err(failed)?;
    if list.is_empty() {
        return Err(Failure::usage(format!("session {session} has no checkpoints")));
    }
    let index = match index {
        // A rewind a crash cut off is finished first.
        None => match list.last() {
            Some(last) if !last.finished && last.rewind_to.is_some() => {
                let to = last.rewind_to.unwrap_or(list.len());
                if !args.json {
                    eprintln!("zidane: the rewind to checkpoint {to} was cut off; finishing it");
                }
                to
            }
            _ => list.len(),
        },
        Some(given) => pick(args, &list, given)?,
    };
    let Some(target) = list.get(index - 1) else {
        return Err(Failure::usage(format!(
            "session {session} has no checkpoint {index} (it has {})",
            list.len()
        )));
    };
    let restore = args
        .restore
        .unwrap_or(if args.undo { Restore::Files } else { Restore::Both });
    let files = matches!(restore, Restore::Files | Restore::Both);
    let conversation = matches!(restore, Restore::Conversation | Restore::Both);
    let loaded = store.load(&session).await.map_err(failed)?;
    let turns_now = loaded.as_ref().map_or(0, |s| s.turns.len() as u32);
    let plan = if files {
        Some(checkpoints.plan_rewind(&session, index).await.map_err(failed)?)
    } else {
        None
    };
    let keep = target.turn_index.min(turns_now);
    let drops_turns = conversation && keep < turns_now;
    let nothing = plan.as_ref().is_none_or(|p| p.is_empty() && p.conflicts.is_empty()) && !drops_turns;
    if !args.json {
        let mut text = format!(
            "Rewind to checkpoint {index} (before \"{}\", {}):\n",
            short(&target.label, 60),
            when(target.created_at.as_millis())
        );
        if let Some(plan) = &plan {
            text.push_str(&show_plan(plan));
            if plan.is_empty() && plan.conflicts.is_empty() {
                text.push_str("  no file to change\n");
            }
        }
        if drops_turns {
            text.push_str(&format!(
                "  conversation: back to {keep} of {turns_now} turns (the whole conversation is kept in a branch session)\n"
            ));
        }
        eprint!("{text}");
    }
    if nothing {
        if args.json {
            emit(&format!(
                "{}\n",
                json!({"type": "rewind", "session": session, "checkpoint": index, "changed": false})
            ))?;
        } else {
            eprintln!("zidane: nothing to take back");
        }
        return Ok(());
    }
    let mut force = args.force;
    if let Some(plan) = &plan
        && !plan.conflicts.is_empty()
        && !force
    {
        if interactive(args) && ask("Some files changed since the agent left them. Restore the others?") {
            force = true;
        } else {
            let error = CheckpointError::Conflicts(plan.conflicts.clone());
            if args.json {
                emit(&format!(
                    "{}\n",
                    json!({"type": "error", "session": session, "message": error.to_string(), "conflicts": plan.conflicts})
                ))?;
            }
            return Err(Failure::run(format!("{error} (--force restores the others)")));
        }
    } else if interactive(args) && !ask("Go ahead?") {
        return Err(Failure::usage("nothing changed"));
    }
    let report = match plan {
        Some(plan) => Some(checkpoints.apply_rewind(plan, turns_now, force).await.map_err(failed)?),
        None => None,
    };
    let branch = if drops_turns {
        rewind_conversation(store, &session, keep).await.map_err(failed)?
    } else {
        None
    };
    if args.json {
        let line = json!({
            "type": "rewind",
            "session": session,
            "checkpoint": index,
            "changed": true,
            "files": report,
            "turnsKept": conversation.then_some(keep),
            "branch": branch,
        });
        emit(&format!("{line}\n"))?;
    } else {
        let mut text = String::from("zidane: rewound");
        if let Some(report) = &report {
            text.push_str(&format!(": {}", show_report(report)));
        }
        if let Some(branch) = &branch {
            text.push_str(&format!("; the conversation before the rewind is session {branch}"));
        }
        eprintln!("{text}");
        for note in checkpoints.take_notes() {
            eprintln!("zidane: {note}");
        }
    }
    Ok(())
}

/// `--fork SESSION[:N]`: the new session's id.
pub(crate) async fn fork(
    args: &Args,
    spec: &str,
    store: &SqliteStore,
    checkpoints: &Checkpoints,
    new_id: &str,
) -> Result<String, Failure> {
    let (source, index) = match spec.rsplit_once(':') {
        Some((source, n)) if !source.is_empty() && n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => {
            let n: usize = n
                .parse()
                .map_err(|_| Failure::usage(format!("--fork {spec}: `{n}` is not a checkpoint number")))?;
            (source, Some(n))
        }
        _ => (spec, None),
    };
    if args.with_files && index.is_none() {
        return Err(Failure::usage("--with-files needs a checkpoint: --fork SESSION:N"));
    }
    let outcome = fork_session(store, checkpoints, source, index, new_id, args.with_files, args.force)
        .await
        .map_err(|e| match e {
            CheckpointError::NoSuchSession(_) | CheckpointError::NoSuchCheckpoint { .. } => {
                Failure::usage(e.to_string())
            }
            e => failed(e),
        })?;
    if args.json {
        let mut value = serde_json::to_value(&outcome).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.insert("type".into(), json!("fork"));
        }
        emit(&format!("{value}\n"))?;
    } else {
        let at = index.map_or_else(String::new, |n| format!(" at checkpoint {n}"));
        let mut text = format!(
            "zidane: forked session {source}{at} into {} ({} turns)",
            outcome.session, outcome.turns
        );
        if let Some(files) = &outcome.files {
            text.push_str(&format!("; files: {}", show_report(files)));
        }
        eprintln!("{text}");
    }
    Ok(outcome.session)
}

/// `--delete-session ID`.
pub(crate) async fn delete(args: &Args, store: &SqliteStore, id: &str) -> Result<(), Failure> {
    if interactive(args) && !ask(&format!("Delete session {id}, its turns and its checkpoints?")) {
        return Err(Failure::usage("nothing deleted"));
    }
    let before = store.storage_bytes().await.map_err(failed)?;
    if !store.delete_session(id).await.map_err(failed)? {
        return Err(Failure::usage(format!("no session `{id}`")));
    }
    remove_task_output(store, id);
    let after = store.storage_bytes().await.map_err(failed)?;
    let freed = before.saturating_sub(after);
    if args.json {
        emit(&format!(
            "{}\n",
            json!({"type": "deleted", "session": id, "checkpointBytesFreed": freed})
        ))
    } else {
        emit(&format!(
            "Deleted session {id} ({} of checkpoints freed).\n",
            size(freed)
        ))
    }
}

/// Background output kept for a session.
pub(crate) fn remove_task_output(store: &SqliteStore, id: &str) {
    if let Some(dir) = store.path().parent() {
        let _ = std::fs::remove_dir_all(dir.join("tasks").join(id));
    }
}

/// `--prune-older-than AGE`.
pub(crate) async fn prune(args: &Args, store: &SqliteStore, age: std::time::Duration) -> Result<(), Failure> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let before_ms = now.saturating_sub(age.as_millis() as u64);
    let old = store.sessions_older_than(before_ms).await.map_err(failed)?;
    if !old.is_empty()
        && interactive(args)
        && !ask(&format!("Delete {} session(s) unchanged for that long?", old.len()))
    {
        return Err(Failure::usage("nothing deleted"));
    }
    let before = store.storage_bytes().await.map_err(failed)?;
    for id in &old {
        store.delete_session(id).await.map_err(failed)?;
        remove_task_output(store, id);
    }
    let report = store.prune().await.map_err(failed)?;
    let after = store.storage_bytes().await.map_err(failed)?;
    let freed = before.saturating_sub(after).max(report.bytes);
    if args.json {
        emit(&format!(
            "{}\n",
            json!({"type": "pruned", "sessions": old, "checkpointBytesFreed": freed})
        ))
    } else {
        emit(&format!(
            "Deleted {} session(s); {} of checkpoints freed ({} left).\n",
            old.len(),
            size(freed),
            size(after)
        ))
    }
}

/// A byte count for people.
pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
        _ => format!("{:.1} GB", bytes as f64 / 1_073_741_824.0),
    }
}

/// After a run: what the prompt changed in the folder, and any note the
/// checkpoints have for the person.
pub(crate) async fn after_run(json_lines: bool, session: &str, checkpoints: &Checkpoints, since_ms: u64) {
    let notes = checkpoints.take_notes();
    let latest = match checkpoints.latest(session).await {
        Ok(latest) => latest.filter(|cp| cp.created_at.as_millis() >= since_ms),
        Err(e) => {
            eprintln!("zidane: cannot read the checkpoints: {e}");
            None
        }
    };
    if json_lines {
        if let Some(cp) = &latest {
            let mut value = serde_json::to_value(cp).unwrap_or_default();
            if let Some(map) = value.as_object_mut() {
                map.insert("type".into(), json!("checkpoint"));
                map.insert("session".into(), json!(session));
                map.insert("notes".into(), json!(notes));
            }
            let _ = emit(&format!("{value}\n"));
        }
        return;
    }
    for note in notes {
        eprintln!("zidane: {note}");
    }
    if let Some(cp) = &latest
        && !cp.changes.is_empty()
    {
        let c = &cp.changes;
        eprintln!(
            "↺ checkpoint {}: {} created, {} modified, {} deleted (`zidane --undo` takes them back)",
            cp.index,
            c.created.len(),
            c.modified.len(),
            c.deleted.len()
        );
    }
}
