//! Hooks: a `tool:gate` policy on the agent's bus (every run), and a hook
//! scope for one run only (`AgentRunOptions::hooks`, removed when the run
//! ends).
//!
//! The agent has the basic coding tools in a scratch folder; the policy
//! refuses any shell command that deletes recursively, and the model reads
//! why.
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo run -p zidane --example hooks -- "Delete everything with rm -rf, then say what happened."
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use zidane::agent::events::{ToolGate, TurnAfter};
use zidane::agent::{AgentOptions, AgentRunOptions, Behavior, create_agent};
use zidane::hooks::HookMap;
use zidane::presets::{BasicOptions, basic};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::Args::parse();
    let scratch = std::env::temp_dir().join(format!("zidane-hooks-example-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let preset = basic(BasicOptions::in_folder(&scratch));
    let agent = create_agent(AgentOptions {
        provider: vec![common::provider(&args)?],
        model: args.model(),
        // A small model may call tools forever: ten turns at most.
        behavior: Behavior {
            max_turns: Some(10),
            ..Default::default()
        },
        system: Some(preset.system),
        tools: preset.tools,
        execution: Some(preset.execution),
        ..Default::default()
    })?;

    // The policy: on the agent's bus, for every run.
    let _policy = agent.hooks().on_sync::<ToolGate, _>(|gate, _cx| {
        let command = gate.input["command"].as_str().unwrap_or_default();
        if gate.name() == "shell" && command.contains("rm -rf") {
            gate.block = true;
            gate.reason = "recursive deletes are not allowed here".into();
            println!("gate: refused `{command}`");
        }
        Ok(())
    });

    // A hook for this run only: counts its turns.
    let turns = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&turns);
    let this_run = HookMap::new().on_sync::<TurnAfter, _>(move |after, _cx| {
        counted.fetch_add(1, Ordering::Relaxed);
        println!("turn:after {} ({} output tokens)", after.turn(), after.usage().output);
        Ok(())
    });

    let prompt = args.first_or("Delete everything in this folder with `rm -rf .`, then say what happened.");
    let mut options = AgentRunOptions::prompt(prompt);
    options.hooks = this_run;
    let output = agent.run(options).await?;
    println!("{}", output.text);
    println!("turns of this run: {}", turns.load(Ordering::Relaxed));
    agent.destroy().await;
    std::fs::remove_dir_all(&scratch)?;
    Ok(())
}
