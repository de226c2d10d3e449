//! MCP servers from a configuration file (the `.mcp.json` shape:
//! `{"mcpServers": {"name": {"command": ..., "args": [...]}}}`): their tools
//! join the agent's, namespaced by server.
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo run -p zidane --example mcp_servers -- .mcp.json "What time is it in Paris?"
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;

use zidane::agent::{AgentOptions, AgentRunOptions, create_agent};
use zidane::mcp::parse_mcp_config;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::Args::parse();
    let path = args.first_or(".mcp.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let servers = parse_mcp_config(&text).map_err(|e| format!("{path}: {e}"))?;
    println!(
        "servers: {}",
        servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
    );
    let agent = create_agent(AgentOptions {
        provider: vec![common::provider(&args)?],
        model: args.model(),
        mcp_servers: servers,
        ..Default::default()
    })?;
    // Connects every server now (a run would too): a server that fails is
    // reported, the others stay usable.
    if let Err(e) = agent.warmup().await {
        eprintln!("warm-up: {e}");
    }
    if let Some(connection) = agent.mcp_connection().await {
        for tool in connection.tools() {
            println!("tool: {}", tool.name());
        }
    }
    let prompt = args
        .rest
        .get(1)
        .cloned()
        .unwrap_or_else(|| "List the tools you have.".into());
    let output = agent.run(AgentRunOptions::prompt(prompt)).await?;
    println!("{}", output.text);
    agent.destroy().await;
    Ok(())
}
