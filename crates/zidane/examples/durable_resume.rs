//! A durable run survives `kill -9`: every model call and tool call is a
//! step recorded in a SQLite file, so a fresh process resumes the run where
//! the dead one stopped (a finished model call is not sent again). Records
//! are grouped: they reach the file with the turn, before an `unsafe` call
//! starts, or at most 50 ms after their step; a long tool makes them
//! durable at once with `DurableRuntime::sync`.
//!
//! This example runs itself twice: a child process starts the run and is
//! killed with SIGKILL while its tool call runs; then this process resumes
//! the run from the file. The tool is `safe` (idempotent), so the resume
//! runs the interrupted call again; an `unsafe` one would be reported to
//! the model as interrupted instead.
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo run -p zidane --example durable_resume
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use zidane::agent::{Agent, AgentOptions, AgentRunOptions, Behavior, create_agent};
use zidane::durable::{CheckpointRuntime, DurableOptions, DurableResumeOptions, DurableRuntime};
use zidane::serde_json::json;
use zidane::tools::{FnTool, ToolOutput, ToolSet};

const SESSION: &str = "durable-example";
const STARTED: &str = "the tool call started";

/// The agent, on the checkpoint runtime in `db`. In the process that will
/// be killed, the tool call hangs (it never finishes there).
fn agent(args: &common::Args, db: &Path, hang: bool) -> Result<Agent, Box<dyn std::error::Error>> {
    let runtime = Arc::new(CheckpointRuntime::open(db)?);
    let durable = Arc::clone(&runtime);
    let step = FnTool::new(
        "deploy_step",
        "Runs the next deployment step.",
        json!({"type": "object", "properties": {"step": {"type": "string"}}, "required": ["step"]}),
        move |input, cx| {
            let durable = Arc::clone(&durable);
            async move {
                // A long step: the run's records are written now rather
                // than with the turn (at most 50 ms later), so a crash
                // during the step never sends the finished model call again.
                durable.sync(cx.run_id()).await.map_err(|e| e.to_string())?;
                if hang {
                    println!("{STARTED}");
                    std::io::stdout().flush()?;
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                Ok(ToolOutput::text(format!("step {} done", input["step"])))
            }
        },
    )
    .safe();
    Ok(create_agent(AgentOptions {
        provider: vec![common::provider(args)?],
        model: args.model(),
        system: Some("Run one deployment step with deploy_step, then say it is done.".into()),
        tools: ToolSet::new().with(step),
        // A small model may call the tool forever: six turns at most.
        behavior: Behavior {
            max_turns: Some(6),
            ..Default::default()
        },
        durable: Some(DurableOptions::from(runtime)),
        session_id: Some(SESSION.into()),
        ..Default::default()
    })?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::Args::parse();
    if args.rest.first().map(String::as_str) == Some("--child") {
        let db = args.rest.get(1).ok_or("--child needs the database path")?;
        let agent = agent(&args, Path::new(db), true)?;
        agent.run(AgentRunOptions::prompt("Deploy the new version.")).await?;
        return Ok(());
    }

    let dir = std::env::temp_dir().join(format!("zidane-durable-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("sessions.db");

    // The first process: starts the run, and is killed mid-call.
    let mut child = Command::new(std::env::current_exe()?)
        .args(args.provider_flags())
        .arg("--child")
        .arg(&db)
        .stdout(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let started = BufReader::new(stdout).lines().any(|l| l.is_ok_and(|l| l == STARTED));
    if !started {
        return Err("the child ended before its tool call started".into());
    }
    child.kill()?; // SIGKILL: no cleanup, no goodbye
    child.wait()?;
    println!("killed the first process (pid {}) during its tool call", child.id());

    // A fresh agent on the same file resumes the run.
    let agent = agent(&args, &db, false)?;
    match agent.resume(DurableResumeOptions::default()).await? {
        Some(output) => {
            println!("resumed: {:?} after {} turns", output.stats.status, output.stats.turns);
            println!("{}", output.text);
        }
        None => println!("nothing to resume"),
    }
    agent.destroy().await;
    drop(agent);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
