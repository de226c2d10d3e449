//! Folder checkpoints at the command line: `zidane checkpoints`, `undo`,
//! `rewind [N]`, `fork SESSION[:N]`.

use std::sync::Arc;

use serde_json::json;
use zidane::checkpoints::{Checkpoint, RestoreAction, RewindReport};
use zidane::durable::CheckpointRuntime;
use zidane_app::checkpoints::{Restore, RewindPlan};
use zidane_app::{Flags, Given};

use super::{Failure, emit};
use crate::cli::{Legacy, Output, RewindArgs};
use crate::print::ask;

fn when(ms: u64) -> String {
    let secs = zidane_app::now_ms().saturating_sub(ms) / 1000;
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

/// The sessions file, the folder's checkpoints and the session they act
/// on (`runtime`: the one the running program holds the session with).
async fn open(flags: &Flags, runtime: Option<Arc<CheckpointRuntime>>) -> Result<Opened, Failure> {
    let cwd = super::cwd(flags)?;
    let runtime = match runtime {
        Some(runtime) => runtime,
        None => zidane_app::open_runtime(flags.store.as_deref())?,
    };
    let store = runtime.sqlite().clone();
    let checkpoints = zidane_app::checkpoints::open(&cwd, &store, flags.max_checkpoints);
    let session = zidane_app::checkpoints::folder_session(flags.session.as_deref(), &store, &checkpoints).await?;
    Ok(Opened {
        runtime,
        store,
        checkpoints,
        session,
    })
}

/// What [`open`] opens.
struct Opened {
    runtime: Arc<CheckpointRuntime>,
    store: zidane::agent::SqliteStore,
    checkpoints: Arc<zidane::checkpoints::Checkpoints>,
    session: String,
}

/// `zidane checkpoints`.
pub(crate) async fn list(flags: &Flags, _given: &Given, json: bool) -> Result<(), Failure> {
    let Opened {
        checkpoints, session, ..
    } = open(flags, None).await?;
    let list = zidane_app::checkpoints::list(&checkpoints, &session).await?;
    let mut text = String::new();
    if json {
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
            "Checkpoints of session {session} (`zidane rewind N` goes back to before N):\n"
        ));
    }
    for cp in &list {
        text.push_str(&describe(cp));
    }
    emit(&text)
}

fn show_plan(plan: &zidane::checkpoints::RewindPlan) -> String {
    let mut text = String::new();
    for step in &plan.steps {
        let what = match step.action {
            RestoreAction::Write { .. } => "restore",
            RestoreAction::Remove | RestoreAction::RemoveDir => "remove",
            RestoreAction::CreateDir { .. } => "recreate",
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

/// What a rewind would do, as the person reads it before it is applied.
pub(crate) fn show_rewind(plan: &RewindPlan) -> String {
    let mut text = format!(
        "Rewind to checkpoint {} (before \"{}\", {}):\n",
        plan.index,
        short(&plan.target.label, 60),
        when(plan.target.created_at.as_millis())
    );
    if let Some(files) = &plan.files {
        text.push_str(&show_plan(files));
        if files.is_empty() && files.conflicts.is_empty() {
            text.push_str("  no file to change\n");
        }
    }
    if plan.drops_turns() {
        text.push_str(&format!(
            "  conversation: back to {} of {} turns (the whole conversation is kept in a branch session)\n",
            plan.keep, plan.turns_now
        ));
    }
    text
}

/// Which checkpoint: the one given, else a pick on the terminal.
fn pick(list: &[Checkpoint], given: usize, asks: bool) -> Result<usize, Failure> {
    if given != 0 {
        return Ok(given);
    }
    if !asks {
        return Err(Failure::usage(
            "rewind needs a checkpoint number without a terminal (see `zidane checkpoints`)",
        ));
    }
    for cp in list {
        eprint!("{}", describe(cp));
    }
    ask::number(&format!("Rewind to which checkpoint (1-{})? ", list.len()), list.len())
        .ok_or_else(|| Failure::usage("no checkpoint picked; nothing changed"))
}

/// `zidane undo` (`index` none: the last checkpoint) and `zidane rewind
/// [N]` (0: pick one).
pub(crate) async fn rewind(
    flags: Flags,
    _given: &Given,
    index: Option<usize>,
    args: &RewindArgs,
    legacy: &Legacy,
    json: bool,
    runtime: Option<Arc<CheckpointRuntime>>,
) -> Result<(), Failure> {
    let flags = args.place.over(flags);
    let asks = !(args.yes || legacy.yes) && ask::terminal();
    let Opened {
        runtime,
        store,
        checkpoints,
        session,
    } = open(&flags, runtime).await?;
    let list = zidane_app::checkpoints::list(&checkpoints, &session).await?;
    if list.is_empty() {
        return Err(Failure::usage(format!("session {session} has no checkpoints")));
    }
    let target = match index {
        None => zidane_app::checkpoints::rewind_target(&list, None),
        Some(given) => (pick(&list, given, asks)?, false),
    };
    if target.1 && !json {
        eprintln!(
            "zidane: the rewind to checkpoint {} was cut off; finishing it",
            target.0
        );
    }
    let restore =
        args.restore
            .or(legacy.restore)
            .unwrap_or(if index.is_none() { Restore::Files } else { Restore::Both });
    let plan = zidane_app::checkpoints::plan_rewind(&store, &checkpoints, &session, &list, target, restore).await?;
    if !json {
        eprint!("{}", show_rewind(&plan));
    }
    let index = plan.index;
    if plan.is_empty() {
        if json {
            emit(&format!(
                "{}\n",
                json!({"type": "rewind", "session": session, "checkpoint": index, "changed": false})
            ))?;
        } else {
            eprintln!("zidane: nothing to take back");
        }
        return Ok(());
    }
    let force = confirm(&plan, args.force || legacy.force, asks, json)?;
    let conversation = plan.conversation;
    let keep = plan.keep;
    let done = zidane_app::checkpoints::apply_rewind(&runtime, &checkpoints, plan, force).await?;
    if json {
        let line = json!({
            "type": "rewind",
            "session": session,
            "checkpoint": index,
            "changed": true,
            "files": done.report,
            "turnsKept": conversation.then_some(keep),
            "branch": done.branch,
        });
        return emit(&format!("{line}\n"));
    }
    let mut text = String::from("zidane: rewound");
    if let Some(report) = &done.report {
        text.push_str(&format!(": {}", show_report(report)));
    }
    if let Some(branch) = &done.branch {
        text.push_str(&format!("; the conversation before the rewind is session {branch}"));
    }
    eprintln!("{text}");
    super::tell(&done.notes);
    Ok(())
}

/// Whether to go ahead, and whether to force: a conflict (files changed
/// since the agent left them) asks to restore the others, else the
/// rewind asks to go ahead; without a person to ask, a conflict is an
/// error unless `force`.
fn confirm(plan: &RewindPlan, force: bool, asks: bool, json: bool) -> Result<bool, Failure> {
    if !plan.conflicts().is_empty() && !force {
        if asks && ask::yes("Some files changed since the agent left them. Restore the others?") {
            return Ok(true);
        }
        let error = zidane::checkpoints::CheckpointError::Conflicts(plan.conflicts().to_vec());
        if json {
            emit(&format!(
                "{}\n",
                json!({"type": "error", "session": plan.session, "message": error.to_string(), "conflicts": plan.conflicts()})
            ))?;
        }
        return Err(Failure::run(format!("{error} (--force restores the others)")));
    }
    if asks && !ask::yes("Go ahead?") {
        return Err(Failure::usage("nothing changed"));
    }
    Ok(force)
}

/// What `zidane fork` was given.
pub(crate) struct Fork {
    pub(crate) spec: String,
    pub(crate) with_files: bool,
    pub(crate) force: bool,
    pub(crate) new_id: Option<String>,
}

/// `zidane fork SESSION[:N] [PROMPT]`: a new session; a prompt given runs
/// in it.
pub(crate) async fn fork(
    flags: Flags,
    given: Given,
    fork: Fork,
    words: Vec<String>,
    output: &Output,
) -> Result<(), Failure> {
    let settings = super::settings(&flags, &given, true)?;
    let runtime = zidane_app::open_runtime(settings.store.as_deref())?;
    let store = runtime.sqlite().clone();
    let checkpoints = zidane_app::checkpoints::open(&settings.cwd, &store, settings.max_checkpoints);
    let new_id = match (&fork.new_id, &settings.session) {
        (Some(id), _) | (None, Some(id)) => id.clone(),
        (None, None) => zidane_app::new_session_id(),
    };
    let spec = zidane_app::checkpoints::fork_spec(&fork.spec)?;
    let outcome =
        zidane_app::checkpoints::fork(&runtime, &checkpoints, spec, &new_id, fork.with_files, fork.force).await?;
    if output.json {
        let mut value = serde_json::to_value(&outcome).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.insert("type".into(), json!("fork"));
        }
        emit(&format!("{value}\n"))?;
    } else {
        let at = spec.1.map_or_else(String::new, |n| format!(" at checkpoint {n}"));
        let mut text = format!(
            "zidane: forked session {}{at} into {} ({} turns)",
            spec.0, outcome.session, outcome.turns
        );
        if let Some(files) = &outcome.files {
            text.push_str(&format!("; files: {}", show_report(files)));
        }
        eprintln!("{text}");
    }
    let prompt = words.join(" ");
    if prompt.trim().is_empty() {
        return Ok(());
    }
    let interactive = super::run::interactive(output);
    super::run::start(settings, runtime, &outcome.session, prompt, output, interactive, None).await
}
