//! The README's first program, as pasted: a prompt and its answer. It
//! reads `ANTHROPIC_API_KEY` (and `ANTHROPIC_BASE_URL`, for a gateway).
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo run -p zidane --example hello
//! ```

#![allow(clippy::print_stdout)]

use zidane::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let provider = AnthropicProvider::new(AnthropicConfig::from_env()?)?;
    let agent = create_agent(AgentOptions::new(provider).system("You are brief."))?;
    let output = agent.run(AgentRunOptions::prompt("Say hello in five words.")).await?;
    println!("{}", output.text);
    println!(
        "model turns: {}, output tokens: {}",
        output.stats.turns, output.stats.totals.output
    );
    Ok(())
}
