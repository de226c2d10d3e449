//! Sub-agents: the `spawn` tool starts a child agent for a task (a named
//! definition or a general one); its answer is the tool's result and its
//! usage joins the parent's.
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo run -p zidane --example subagents -- "Ask the researcher what Rust's borrow checker does."
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;

use zidane::agent::events::{SpawnBefore, SpawnComplete};
use zidane::agent::{AgentOptions, AgentRunOptions, Behavior, SpawnConfig, SubagentDefinition, create_agent};
use zidane::presets::spawn;
use zidane::tools::ToolSet;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::Args::parse();
    let researcher = SubagentDefinition {
        name: "researcher".into(),
        description: "Answers a question in two sentences.".into(),
        system: Some("You answer questions in two sentences.".into()),
        max_turns: Some(4),
        ..Default::default()
    };
    let agent = create_agent(AgentOptions {
        provider: vec![common::provider(&args)?],
        model: args.model(),
        // A small model may call tools forever: ten turns at most.
        behavior: Behavior {
            max_turns: Some(10),
            ..Default::default()
        },
        system: Some("Delegate questions to the researcher with the spawn tool, then report its answer.".into()),
        tools: ToolSet::new().with(spawn()),
        spawn: SpawnConfig {
            agents: vec![researcher],
            ..Default::default()
        },
        ..Default::default()
    })?;
    let _before = agent.hooks().on_sync::<SpawnBefore, _>(|ev, _cx| {
        println!(
            "spawn:before {} ({})",
            ev.child_id(),
            ev.agent_name().unwrap_or("general")
        );
        Ok(())
    });
    let _complete = agent.hooks().on_sync::<SpawnComplete, _>(|ev, _cx| {
        println!("spawn:complete after {} turns", ev.stats().stats.turns);
        Ok(())
    });
    let prompt = args.first_or("Ask the researcher what Rust's borrow checker does.");
    let output = agent.run(AgentRunOptions::prompt(prompt)).await?;
    println!("{}", output.text);
    println!("children: {}", output.stats.children.len());
    Ok(())
}
