//! A custom tool: `word_count`, written as a [`Tool`] with its own input
//! type, and an agent that offers it.
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo run -p zidane --example custom_tool -- "How many words are in 'the quick brown fox'?"
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;

use zidane::agent::{AgentOptions, AgentRunOptions, Behavior, ToolSet, create_agent};
use zidane::providers::BoxFuture;
use zidane::serde_json::{self, Value, json};
use zidane::tools::{Tool, ToolContext, ToolFailure, ToolOutput};

/// Counts the words of a text.
struct WordCount {
    schema: Value,
}

impl WordCount {
    fn new() -> Self {
        WordCount {
            schema: json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text to count."}},
                "required": ["text"]
            }),
        }
    }
}

impl Tool for WordCount {
    fn name(&self) -> &str {
        "word_count"
    }

    fn description(&self) -> &str {
        "Counts the words of a text (runs of non-whitespace)."
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn execute<'a>(&'a self, input: Value, _cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolFailure>> {
        Box::pin(async move {
            // The loop validated the input against the schema; a bad one
            // never reaches here.
            let text = input["text"].as_str().unwrap_or_default();
            let words = text.split_whitespace().count();
            Ok(ToolOutput::text(serde_json::to_string(&json!({"words": words}))?))
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::Args::parse();
    let agent = create_agent(AgentOptions {
        provider: vec![common::provider(&args)?],
        model: args.model(),
        // A small model may call tools forever: ten turns at most.
        behavior: Behavior {
            max_turns: Some(10),
            ..Default::default()
        },
        system: Some("Count words with the word_count tool, then say the number.".into()),
        tools: ToolSet::new().with(WordCount::new()),
        ..Default::default()
    })?;
    let prompt = args.first_or("How many words are in 'the quick brown fox jumps'?");
    let stats = agent.run(AgentRunOptions::prompt(prompt)).await?;
    println!("{}", common::answer(&agent));
    println!("tool calls: {}, status: {:?}", stats.tool_calls, stats.status);
    Ok(())
}
