//! `zidane`: a coding agent at the command line.
//!
//! A thin dispatcher: the command line is parsed once ([`cli`]), then a
//! sub-command's module runs ([`commands`]) on the program's core
//! (`zidane-app`); the front ends render its events: the one-shot printer
//! ([`print`]), the interactive session ([`tui`]) and the editors' ACP
//! server ([`acp`]).
//!
//! Architecture invariant: the program's logic lives in `zidane-app`; this
//! crate parses, renders and asks.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line program prints

mod acp;
mod brief;
mod cli;
mod commands;
mod logging;
mod out;
mod print;
mod remote;
mod serve;
mod signals;
mod tui;
mod version;
mod worktree;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::out::Failure;

fn main() -> ExitCode {
    let command = cli::Cli::command();
    let matches = command.clone().get_matches_from(cli::argv(std::env::args()));
    let parsed = cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // What a command leaves running (a daemon it forked) is re-parented
    // here and ended with the program; a server, which lives long and
    // whose runs outlive their clients, leaves orphans to the system.
    if !matches!(parsed.command, Some(cli::Command::Serve(_))) {
        let _ = zidane::tools::become_subreaper();
    }
    if let Err(e) = logging::init() {
        eprintln!("zidane: {e}");
        return ExitCode::from(e.exit_code());
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("zidane: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let done = runtime.block_on(commands::dispatch(parsed, &matches, &command));
    zidane::tools::stop_command_processes();
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure { message, code }) => {
            if !message.is_empty() {
                eprintln!("zidane: {message}");
            }
            ExitCode::from(code)
        }
    }
}
