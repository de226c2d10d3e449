//! The sub-commands, one module each, and what they share: how the
//! program ends ([`Failure`]), writing to standard output ([`emit`]), and
//! loading the settings of the folder.

pub(crate) mod checkpoints;
mod config;
mod listings;
mod local_model;
mod mcp;
pub(crate) mod review;
pub(crate) mod run;
mod schedule;
mod sessions;

use std::path::PathBuf;

use clap::ArgMatches;
use zidane_app::config::Asking;
use zidane_app::{Flags, Given, Settings};

use crate::cli::{Cli, Command, Legacy, McpAction, SessionsAction};
pub(crate) use crate::out::{Failure, emit, tell};

/// The working folder `flags` name (else the current one).
pub(crate) fn cwd(flags: &Flags) -> Result<PathBuf, Failure> {
    match &flags.cwd {
        Some(dir) if !dir.is_dir() => Err(Failure::usage(format!("--cwd {}: no such folder", dir.display()))),
        Some(dir) => Ok(dir.clone()),
        None => std::env::current_dir().map_err(|e| Failure::usage(format!("cannot read the current folder: {e}"))),
    }
}

/// The settings of `flags` in their folder; `ask` puts the trust question
/// on the terminal (a run), else project files wait (a listing).
pub(crate) fn settings(flags: &Flags, given: &Given, ask: bool) -> Result<Settings, Failure> {
    let cwd = cwd(flags)?;
    let question = crate::print::ask::trust;
    let asking = if ask { Asking::Through(&question) } else { Asking::Never };
    Ok(zidane_app::config::load(flags, given, &cwd, asking)?)
}

/// Runs what the command line asks for.
pub(crate) async fn dispatch(cli: Cli, matches: &ArgMatches, command: &clap::Command) -> Result<(), Failure> {
    let given = Given::from_matches(matches, command);
    let Cli {
        prompt,
        output,
        flags,
        served,
        legacy,
        command: sub,
    } = cli;
    let sub = match sub {
        Some(sub) => Some(sub),
        None => legacy_command(&legacy, &prompt),
    };
    // What a sub-command's own options say, over what came before its name.
    let sub_given = || -> Given {
        match (
            matches.subcommand(),
            matches.subcommand_name().and_then(|n| command.find_subcommand(n)),
        ) {
            (Some((_, sub_matches)), Some(sub_command)) => Given::from_matches(sub_matches, sub_command),
            _ => Given::default(),
        }
    };
    match sub {
        None => run::run(prompt, &output, flags, given, &served).await,
        Some(Command::Acp(args)) => match args.connect {
            Some(url) => {
                let target = crate::remote::Target::find(local(&url), args.token.as_deref()).map_err(Failure::usage)?;
                crate::remote::bridge::run(target).await
            }
            None => {
                let later = sub_given();
                crate::acp::serve(flags.merged(args.flags, &later), given.merged(later)).await
            }
        },
        Some(Command::Attach(args)) => attach(args, &flags).await,
        Some(Command::Serve(args)) => {
            let later = sub_given();
            let flags = flags.merged(args.flags.clone(), &later);
            crate::serve::run(args, flags, given.merged(later)).await
        }
        Some(Command::Config(args)) => {
            let later = sub_given();
            config::show(&flags.merged(args.flags, &later), &given.merged(later))
        }
        Some(Command::Context(args)) => {
            let later = sub_given();
            config::context(flags.merged(args.flags, &later), given.merged(later)).await
        }
        Some(Command::Mcp {
            action: McpAction::Login { server },
        }) => mcp::login(&flags, &given, &server).await,
        Some(Command::Sessions { action, place }) => {
            let flags = place.over(flags);
            sessions::run(&flags, action.unwrap_or(SessionsAction::List), output.json).await
        }
        Some(Command::Checkpoints { place }) => checkpoints::list(&place.over(flags), &given, output.json).await,
        Some(Command::Undo(args)) => checkpoints::rewind(flags, &given, None, &args, &legacy, output.json, None).await,
        Some(Command::Rewind { n, args }) => {
            checkpoints::rewind(flags, &given, Some(n.unwrap_or(0)), &args, &legacy, output.json, None).await
        }
        Some(Command::Fork {
            spec,
            prompt: words,
            with_files,
            force,
            new_id,
            place,
        }) => {
            let fork = checkpoints::Fork {
                spec,
                with_files: with_files || legacy.with_files,
                force: force || legacy.force,
                new_id,
            };
            let words = if words.is_empty() { prompt } else { words };
            checkpoints::fork(place.over(flags), given, fork, words, &output).await
        }
        Some(Command::Skills { place }) => listings::skills(&place.over(flags), &given),
        Some(Command::Commands { place }) => listings::commands(&place.over(flags), &given),
        Some(Command::Review(args)) => {
            let later = sub_given();
            let flags = flags.merged(args.flags.clone(), &later);
            review::run(args, flags, given.merged(later), output.json).await
        }
        Some(Command::Schedule { action, store }) => {
            let store = store.or(flags.store);
            schedule::run(store.as_deref(), action, output.json).await
        }
        Some(Command::Update) => emit(&crate::version::update_text()),
    }
}

/// `local` (this user's server) as no URL.
pub(crate) fn local(url: &str) -> Option<&str> {
    (url != "local").then_some(url)
}

/// `zidane attach`: a served session (the most recent in this folder when
/// none is named) in this terminal.
async fn attach(args: crate::cli::AttachArgs, flags: &Flags) -> Result<(), Failure> {
    let target = crate::remote::Target::find(args.url.as_deref().and_then(local), args.token.as_deref())
        .map_err(Failure::usage)?;
    let id = match args.session.or_else(|| flags.session.clone()) {
        Some(id) => id,
        None => crate::remote::latest(&target, &cwd(flags)?)
            .await
            .map_err(Failure::usage)?,
    };
    crate::tui::attach(target, crate::remote::session::Opening::Attach(id), String::new()).await
}

/// `/undo` and `/rewind [N]` of the interactive session (`Some(0)`: the
/// list to pick from).
/// The session's own `runtime` holds its lease: the rewind goes through it.
pub(crate) async fn checkpoints_from_session(
    flags: Flags,
    index: Option<usize>,
    runtime: std::sync::Arc<zidane::durable::CheckpointRuntime>,
) -> Result<(), Failure> {
    let given = Given::default();
    if index == Some(0) {
        return checkpoints::list(&flags, &given, false).await;
    }
    let args = crate::cli::RewindArgs::default();
    checkpoints::rewind(flags, &given, index, &args, &Legacy::default(), false, Some(runtime)).await
}

/// The sub-command an old operation flag stands for.
fn legacy_command(legacy: &Legacy, prompt: &[String]) -> Option<Command> {
    use crate::cli::{Place, RewindArgs};
    let rewind_args = || RewindArgs {
        place: Place::default(),
        restore: legacy.restore,
        force: legacy.force,
        yes: legacy.yes,
    };
    if legacy.list_sessions {
        return Some(Command::Sessions {
            action: Some(SessionsAction::List),
            place: Place::default(),
        });
    }
    if let Some(id) = &legacy.delete_session {
        return Some(Command::Sessions {
            action: Some(SessionsAction::Delete {
                id: id.clone(),
                yes: legacy.yes,
            }),
            place: Place::default(),
        });
    }
    if let Some(age) = legacy.prune_older_than {
        return Some(Command::Sessions {
            action: Some(SessionsAction::Prune { age, yes: legacy.yes }),
            place: Place::default(),
        });
    }
    if legacy.list_skills {
        return Some(Command::Skills {
            place: Place::default(),
        });
    }
    if legacy.list_commands {
        return Some(Command::Commands {
            place: Place::default(),
        });
    }
    if legacy.list_checkpoints {
        return Some(Command::Checkpoints {
            place: Place::default(),
        });
    }
    if legacy.undo {
        return Some(Command::Undo(rewind_args()));
    }
    if let Some(n) = legacy.rewind {
        return Some(Command::Rewind {
            n: (n != 0).then_some(n),
            args: rewind_args(),
        });
    }
    legacy.fork.as_ref().map(|spec| Command::Fork {
        spec: spec.clone(),
        prompt: prompt.to_vec(),
        with_files: legacy.with_files,
        force: legacy.force,
        new_id: None,
        place: Place::default(),
    })
}
