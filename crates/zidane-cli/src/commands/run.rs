//! `zidane [PROMPT]`: a run. At a terminal (both ends, and neither `-p` nor
//! `--json`) the interactive session opens (in plan mode with `--plan`); otherwise the
//! prompt runs once and prints.

use std::io::{IsTerminal, Read};
use std::sync::Arc;

use zidane::agent::SessionStore;
use zidane_app::{Flags, Given, Setup};

use super::Failure;
use crate::cli::{Output, Served};

/// Runs the prompt `words` (or opens the session), here or at a server.
pub(crate) async fn run(
    words: Vec<String>,
    output: &Output,
    mut flags: Flags,
    given: Given,
    served: &Served,
) -> Result<(), Failure> {
    if let Some(url) = &served.remote {
        return remote(words, output, &flags, served, url).await;
    }
    let tree = match &served.worktree {
        Some(name) => {
            let tree = crate::worktree::Worktree::create(&super::cwd(&flags)?, name).map_err(Failure::usage)?;
            eprintln!("zidane: working in {} (branch {})", tree.path.display(), tree.branch);
            flags.cwd = Some(tree.path.clone());
            Some(tree)
        }
        None => None,
    };
    let settings = super::settings(&flags, &given, true)?;
    let runtime = zidane_app::open_runtime(settings.store.as_deref())?;
    let mut prompt = read_prompt(&words)?;
    // `--goal` alone: the condition is the prompt.
    if prompt.trim().is_empty()
        && !settings.resume
        && let Some(goal) = &settings.goal
    {
        prompt = goal.condition.clone();
    }
    let interactive = interactive(output);
    if prompt.trim().is_empty() && !settings.resume && !interactive {
        return Err(Failure::usage(
            "give a prompt, e.g. `zidane \"list the files here\"` (see --help)",
        ));
    }
    let session = zidane_app::session_id(&settings, runtime.sqlite()).await?;
    if settings.session.is_some() && matches!(runtime.sqlite().load(&session).await, Ok(None)) {
        // A mistyped id would otherwise start an empty session unnoticed.
        let file = runtime
            .sqlite()
            .location()
            .map(|path| format!(" in {}", path.display()))
            .unwrap_or_default();
        eprintln!("zidane: no session `{session}`{file}; starting a new session under that id");
    }
    start(settings, runtime, &session, prompt, output, interactive, tree).await
}

/// Runs `prompt` in `session` with `settings` on `runtime`: the session at
/// a terminal, else once.
pub(crate) async fn start(
    settings: zidane_app::Settings,
    runtime: Arc<zidane::durable::CheckpointRuntime>,
    session: &str,
    prompt: String,
    output: &Output,
    interactive: bool,
    tree: Option<crate::worktree::Worktree>,
) -> Result<(), Failure> {
    let answers = interactive || crate::print::ask::terminal();
    let settings = super::local_model::offer(settings, answers).await?;
    let mut setup = Setup::new(settings, runtime, answers).await?;
    setup.interactive = interactive;
    // The session keeps its worktree: `zidane sessions` shows it and a
    // delete offers to remove it.
    if let Some(tree) = tree {
        setup
            .session_meta
            .push((crate::worktree::KEY.to_owned(), tree.to_meta()));
    }
    super::tell(&setup.notes);
    let setup = Arc::new(setup);
    if interactive {
        return crate::tui::run(setup, session, prompt).await;
    }
    crate::print::one_shot(setup, session, prompt, output).await
}

/// `--remote URL`: a new session at the server, driven from this terminal
/// (from a script: printed as `-p` prints; the run goes on at the server if
/// this process stops).
async fn remote(words: Vec<String>, output: &Output, flags: &Flags, served: &Served, url: &str) -> Result<(), Failure> {
    let target = crate::remote::Target::find(super::local(url), served.token.as_deref()).map_err(Failure::usage)?;
    let prompt = read_prompt(&words)?;
    let cwd = std::fs::canonicalize(super::cwd(flags)?).map_err(|e| Failure::usage(e.to_string()))?;
    // `--session ID`: that served session, else a new one.
    let opening = match &flags.session {
        Some(id) => crate::remote::session::Opening::Attach(id.clone()),
        None => crate::remote::session::Opening::New {
            cwd,
            worktree: served.worktree.clone(),
        },
    };
    if interactive(output) {
        return crate::tui::attach(target, opening, prompt).await;
    }
    if prompt.trim().is_empty() {
        return Err(Failure::usage("give a prompt to start at the server"));
    }
    crate::print::remote_one_shot(target, opening, prompt, output).await
}

/// Whether this run is an interactive session: a terminal on both ends,
/// and neither `-p` nor `--json` (`--plan` opens the session in plan mode).
pub(crate) fn interactive(output: &Output) -> bool {
    !output.print && !output.json && std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// The prompt: the words given, or standard input for `-` (or when no words
/// are given and input is piped).
fn read_prompt(words: &[String]) -> Result<String, Failure> {
    let words = words.join(" ");
    let from_stdin = words == "-" || (words.trim().is_empty() && !std::io::stdin().is_terminal());
    if !from_stdin {
        return Ok(words);
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| Failure::usage(format!("cannot read the prompt from standard input: {e}")))?;
    Ok(text)
}
