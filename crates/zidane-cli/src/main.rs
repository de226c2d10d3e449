//! `zidane`: a coding agent at the command line.
//!
//! Runs an agent with the basic preset in the current folder: the answer
//! streams as it arrives, each tool call is shown with its outcome, and the
//! session is saved (resumable with `--resume`).
//!
//! Architecture invariant: the program uses only the `zidane` facade.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line program prints

mod output;
mod setup;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use zidane::agent::{
    AgentOptions, AgentRunOptions, RunSummaryCollectorOptions, SessionStore, create_agent, create_run_summary_collector,
};

use crate::output::{Printer, describe_failure};
use crate::setup::{Args, Failure, mcp_servers, open_store, provider, session_id};

fn main() -> ExitCode {
    let args = Args::parse();
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
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure { message, code }) => {
            eprintln!("zidane: {message}");
            ExitCode::from(code)
        }
    }
}

async fn run(args: Args) -> Result<(), Failure> {
    let store = open_store(&args)?;
    if args.list_sessions {
        let sessions = store
            .list()
            .await
            .map_err(|e| Failure::run(format!("cannot read the sessions: {e}")))?;
        if sessions.is_empty() {
            println!("No sessions yet ({}).", store.path().display());
        }
        for s in sessions {
            println!("{}  {:>3} turns  {}", s.id, s.turns, s.title);
        }
        return Ok(());
    }
    let prompt = args.prompt.join(" ");
    if prompt.trim().is_empty() {
        return Err(Failure::usage(
            "give a prompt, e.g. `zidane \"list the files here\"` (see --help)",
        ));
    }
    let mcp = mcp_servers(&args)?;
    let provider = provider(&args)?;
    let session = session_id(&args, store.as_ref()).await?;
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| Failure::usage(format!("cannot read the current folder: {e}")))?,
    };
    let mut preset_options = zidane::presets::BasicOptions::in_folder(&cwd);
    preset_options.pass_env = args.pass_env.clone();
    let preset = zidane::presets::basic(preset_options);
    let mut system = preset.system.clone();
    if let Some(extra) = &args.system {
        system.push_str("\n\n");
        system.push_str(extra);
    }
    let mut behavior = zidane::agent::Behavior::default();
    if let Some(max) = args.max_turns {
        behavior.max_turns = Some(max);
    }
    behavior.max_cost_usd = args.max_cost;
    let agent = create_agent(AgentOptions {
        provider: vec![provider],
        name: Some("zidane".into()),
        system: Some(system),
        model: args.model.iter().map(|m| m.as_str().into()).collect(),
        tools: preset.tools.clone(),
        behavior,
        execution: Some(Arc::clone(&preset.execution)),
        store: Some(store.clone() as Arc<dyn SessionStore>),
        session_id: Some(session.clone()),
        mcp_servers: mcp,
        ..Default::default()
    })
    .map_err(|e| Failure::usage(e.to_string()))?;

    let printer = Printer::new(args.json, std::io::stderr().is_terminal() && !args.json);
    let _printing = printer.install(agent.hooks());
    let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
    let _collecting = collector.install(agent.hooks());

    // Ctrl-C aborts the run cleanly (the session stays consistent); a second
    // one exits at once.
    let interrupted = agent.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\nzidane: interrupting (press Ctrl-C again to quit now)");
            interrupted.abort_with("interrupted by the user");
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });

    let mut options = AgentRunOptions::prompt(prompt);
    options.thinking = args.thinking.into();
    let outcome = agent.run(options).await;
    let summary = collector.latest();
    match outcome {
        Ok(stats) => {
            printer.finish(&stats, &session);
            if args.summary
                && let Some(summary) = summary
            {
                println!("{}", serde_json::to_string_pretty(&summary).unwrap_or_default());
            }
            Ok(())
        }
        Err(error) => {
            let message = describe_failure(&error, &args);
            printer.failed(&message, &session);
            Err(Failure::run(message))
        }
    }
}
