//! The spec's quick start: an agent with the basic coding preset, one run
//! with a run-summary collector installed, what a model change would cost
//! the prompt cache, and a manual compaction.
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo run -p zidane --example quickstart -- "Name the files in this directory."
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;

use zidane::agent::{
    AgentCacheChange, AgentOptions, AgentRunOptions, Behavior, CompactOptions, RunSummaryCollectorOptions,
    create_agent, create_run_summary_collector,
};
use zidane::presets::{BasicOptions, basic};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::Args::parse();
    let preset = basic(BasicOptions::in_folder(std::env::current_dir()?));
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
    let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
    let installed = collector.install(agent.hooks());

    let prompt = args.first_or("Name the files in this directory.");
    let output = agent.run(AgentRunOptions::prompt(prompt)).await?;
    drop(installed); // uninstalls the collector
    println!("{}", output.text);
    println!("status: {:?}, turns: {}", output.stats.status, output.stats.turns);
    if let Some(summary) = collector.latest() {
        println!("output tokens: {}", summary.totals.tokens.output);
    }

    let change = AgentCacheChange {
        model: Some("claude-opus-4-1".into()),
        ..Default::default()
    };
    let impact = agent.cache_impact(&change);
    println!(
        "switching models would re-read {} tokens; the cache expires at {:?}",
        impact.tokens,
        agent.cache_expires_at()
    );

    // A small model may return no summary: the compaction then fails, and
    // the conversation stays as it was.
    match agent
        .compact(CompactOptions {
            keep_turns: Some(2),
            ..Default::default()
        })
        .await
    {
        Ok(result) => println!("compacted: {}", result.compacted),
        Err(e) => println!("compaction failed: {e}"),
    }
    agent.destroy().await;
    Ok(())
}
