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

use std::io::{IsTerminal, Read, Write};
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
            if !message.is_empty() {
                eprintln!("zidane: {message}");
            }
            ExitCode::from(code)
        }
    }
}

/// Ctrl-C, SIGTERM and SIGHUP, listened for from the moment this is made
/// (so a signal that arrives while the run starts is not lost).
struct StopSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            StopSignals {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// The next stop signal (`false` when none can be listened for).
    async fn next(&mut self) -> bool {
        #[cfg(unix)]
        {
            let term = async {
                match self.term.as_mut() {
                    Some(s) => s.recv().await.is_some(),
                    None => std::future::pending().await,
                }
            };
            let hup = async {
                match self.hup.as_mut() {
                    Some(s) => s.recv().await.is_some(),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                r = tokio::signal::ctrl_c() => r.is_ok(),
                r = term => r,
                r = hup => r,
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await.is_ok()
        }
    }
}

/// Writes `text` to standard output; a closed pipe (`zidane … | head`) is a
/// quiet end, not a panic.
fn emit(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure {
            message: String::new(),
            code: 0,
        }),
        Err(e) => Err(Failure::run(format!("cannot write the output: {e}"))),
    }
}

/// The prompt: the words given, or standard input for `-` (or when no words
/// are given and input is piped).
fn read_prompt(args: &Args) -> Result<String, Failure> {
    let words = args.prompt.join(" ");
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

async fn run(args: Args) -> Result<(), Failure> {
    let store = open_store(&args)?;
    if args.list_sessions {
        let sessions = store
            .list()
            .await
            .map_err(|e| Failure::run(format!("cannot read the sessions: {e}")))?;
        let mut listing = String::new();
        if sessions.is_empty() {
            listing.push_str(&format!("No sessions yet ({}).\n", store.path().display()));
        }
        for s in sessions {
            listing.push_str(&format!("{}  {:>3} turns  {}\n", s.id, s.turns, s.title));
        }
        return emit(&listing);
    }
    if let Some(dir) = &args.cwd
        && !dir.is_dir()
    {
        return Err(Failure::usage(format!("--cwd {}: no such folder", dir.display())));
    }
    let prompt = read_prompt(&args)?;
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
    if let Some(n) = args.retries {
        behavior.retry.max_attempts = n;
        behavior.retry.transport_max_attempts = n;
    }
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

    // Ctrl-C (or SIGTERM, SIGHUP) aborts the run cleanly (the session stays
    // consistent); a second one exits at once.
    let interrupted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = Arc::clone(&interrupted);
    let stopping = agent.clone();
    let mut signals = StopSignals::listen();
    tokio::spawn(async move {
        if signals.next().await {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
            eprintln!("\nzidane: interrupting (press Ctrl-C again to quit now)");
            stopping.abort_with("interrupted by the user");
            if signals.next().await {
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
                // One line, so `--json --summary` stays JSON lines.
                emit(&format!("{}\n", serde_json::to_string(&summary).unwrap_or_default()))?;
            }
            if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(Failure::interrupted(format!(
                    "interrupted; the session is saved (continue with `zidane --session {session} …`)"
                )));
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
