//! `zidane sessions list | delete ID | prune AGE`.

use serde_json::json;
use zidane::agent::SessionStore;
use zidane_app::Flags;

use super::{Failure, emit};
use crate::cli::SessionsAction;
use crate::print::ask;

/// Runs `action` on the sessions file `flags` name.
pub(crate) async fn run(flags: &Flags, action: SessionsAction, json: bool) -> Result<(), Failure> {
    let runtime = zidane_app::open_runtime(flags.store.as_deref())?;
    let store = runtime.sqlite();
    match action {
        SessionsAction::List => list(store).await,
        SessionsAction::Delete { id, yes } => {
            if !yes && ask::terminal() && !ask::yes(&format!("Delete session {id}, its turns and its checkpoints?")) {
                return Err(Failure::usage("nothing deleted"));
            }
            let tree = match store.load(&id).await {
                Ok(Some(stored)) => crate::worktree::Worktree::of_session(&stored.metadata),
                _ => None,
            };
            let freed = zidane_app::checkpoints::delete(store, &id).await?;
            let worktree = tree.map(|tree| remove_worktree(&tree, json));
            if json {
                emit(&format!(
                    "{}\n",
                    json!({"type": "deleted", "session": id, "checkpointBytesFreed": freed, "worktree": worktree})
                ))
            } else {
                emit(&format!(
                    "Deleted session {id} ({} of checkpoints freed).\n",
                    size(freed)
                ))
            }
        }
        SessionsAction::Prune { age, yes } => {
            let old = zidane_app::checkpoints::older_than(store, age).await?;
            if !old.is_empty()
                && !yes
                && ask::terminal()
                && !ask::yes(&format!("Delete {} session(s) unchanged for that long?", old.len()))
            {
                return Err(Failure::usage("nothing deleted"));
            }
            let pruned = zidane_app::checkpoints::prune(store, &old).await?;
            if json {
                emit(&format!(
                    "{}\n",
                    json!({"type": "pruned", "sessions": old, "checkpointBytesFreed": pruned.freed})
                ))
            } else {
                emit(&format!(
                    "Deleted {} session(s); {} of checkpoints freed ({} left).\n",
                    old.len(),
                    size(pruned.freed),
                    size(pruned.left)
                ))
            }
        }
    }
}

/// A deleted session's worktree: removed when it holds no uncommitted
/// work; with some, removed only when the person says so at a terminal,
/// else kept and named. What became of it (`removed`, `kept`).
fn remove_worktree(tree: &crate::worktree::Worktree, json: bool) -> &'static str {
    let Err(why) = tree.remove(false) else {
        if !json {
            eprintln!(
                "zidane: removed its worktree {} (no uncommitted changes)",
                tree.path.display()
            );
        }
        return "removed";
    };
    let asked = !json
        && ask::terminal()
        && ask::yes(&format!(
            "Its worktree {} has uncommitted changes. Remove it and lose them?",
            tree.path.display()
        ));
    if asked {
        match tree.remove(true) {
            Ok(()) => return "removed",
            Err(e) => eprintln!("zidane: {e}"),
        }
    } else {
        eprintln!("zidane: {why}");
    }
    "kept"
}

/// One line per session; an interrupted one is marked.
async fn list(store: &zidane::agent::SqliteStore) -> Result<(), Failure> {
    let sessions = store
        .list()
        .await
        .map_err(|e| Failure::run(format!("cannot read the sessions: {e}")))?;
    let mut listing = String::new();
    if sessions.is_empty() {
        listing.push_str(&format!("No sessions yet ({}).\n", store.path().display()));
    }
    // A sub-agent's session is part of its parent's.
    for s in sessions.into_iter().filter(|s| zidane::agent::is_conversation(&s.id)) {
        listing.push_str(&format!("{}  {:>3} messages  {}", s.id, s.messages, s.title));
        if s.interrupted {
            listing.push_str(&format!("  [interrupted: `zidane --resume --session {}`]", s.id));
        }
        listing.push('\n');
    }
    emit(&listing)?;
    // On standard error: standard output stays one line per session.
    if let Ok(bytes) = zidane::checkpoints::CheckpointStore::storage_bytes(store).await
        && bytes > 0
    {
        eprintln!("Checkpoints take {} in {}.", size(bytes), store.path().display());
    }
    Ok(())
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
