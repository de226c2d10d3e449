//! Skills: folders of `SKILL.md` files the model can activate (listed in
//! the system prompt, loaded with the `skill` tool) or a host activates
//! explicitly.
//!
//! Without a folder argument, this writes one skill into a scratch folder.
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo run -p zidane --example skills -- path/to/skills "Write a release note."
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;

use zidane::agent::{AgentOptions, AgentRunOptions, SkillsConfig, create_agent};

const SKILL: &str = "---
name: release-notes
description: How this team writes release notes.
---
Write release notes as three bullet points, most important first, each under twelve words.
";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::Args::parse();
    let folder = match args.rest.first() {
        Some(folder) => std::path::PathBuf::from(folder),
        None => {
            let folder = std::env::temp_dir().join(format!("zidane-skills-example-{}", std::process::id()));
            std::fs::create_dir_all(folder.join("release-notes"))?;
            std::fs::write(folder.join("release-notes/SKILL.md"), SKILL)?;
            folder
        }
    };
    let agent = create_agent(AgentOptions {
        provider: vec![common::provider(&args)?],
        model: args.model(),
        skills: Some(SkillsConfig {
            folders: vec![folder],
            ..Default::default()
        }),
        ..Default::default()
    })?;
    for skill in agent.skills().await {
        println!("skill: {} ({})", skill.name, skill.description);
    }
    for problem in agent.skill_problems() {
        eprintln!("unusable: {problem:?}");
    }
    // The host can activate one itself; the model can with the `skill` tool.
    if let Some(first) = agent.skills().await.first() {
        agent.activate_skill(&first.name).await?;
    }
    let prompt = args
        .rest
        .get(1)
        .cloned()
        .unwrap_or_else(|| "Write the release note for version 2.".into());
    let output = agent.run(AgentRunOptions::prompt(prompt)).await?;
    println!(
        "active: {:?}",
        agent.active_skills().iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    println!("{}", output.text);
    Ok(())
}
