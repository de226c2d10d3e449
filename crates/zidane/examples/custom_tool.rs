//! Custom tools: `word_count`, a typed tool whose arguments arrive as a
//! Rust type (its input schema derived from it), and `shout`, a [`Tool`]
//! written by hand; an agent that offers both.
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo run -p zidane --example custom_tool -- "How many words are in 'the quick brown fox'?"
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;

use schemars::JsonSchema;
use serde::Deserialize;
use zidane::prelude::*;
use zidane::providers::BoxFuture;
use zidane::serde_json::{Value, json};

/// The arguments of `word_count`: what the model fills in.
#[derive(Deserialize, JsonSchema)]
struct WordCountArgs {
    /// The text to count.
    text: String,
}

/// `word_count`: a closure over typed arguments. A call whose input does
/// not fit `WordCountArgs` never reaches it: the model reads a validation
/// error and may try again.
fn word_count() -> FnTool {
    FnTool::typed(
        "word_count",
        "Counts the words of a text (runs of non-whitespace).",
        |args: WordCountArgs, _cx| async move {
            let words = args.text.split_whitespace().count();
            Ok(json!({ "words": words }).to_string())
        },
    )
}

/// `shout`: the [`Tool`] trait, for a tool that keeps state or needs more
/// than a closure.
struct Shout {
    schema: Value,
}

impl Tool for Shout {
    fn name(&self) -> &str {
        "shout"
    }

    fn description(&self) -> &str {
        "Repeats a text in capitals."
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn execute<'a>(&'a self, input: Value, _cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolFailure>> {
        Box::pin(async move {
            // An `Err` reaches the model as `Tool error: …`; the run goes on.
            let text = input["text"].as_str().ok_or("`text` is missing")?;
            Ok(ToolOutput::text(text.to_uppercase()))
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::Args::parse();
    let shout = Shout {
        schema: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    };
    let agent = create_agent(AgentOptions {
        provider: vec![common::provider(&args)?],
        model: args.model(),
        // A small model may call tools forever: ten turns at most.
        behavior: Behavior {
            max_turns: Some(10),
            ..Default::default()
        },
        system: Some("Count words with the word_count tool, then say the number.".into()),
        tools: ToolSet::new().with(word_count()).with(shout),
        ..Default::default()
    })?;
    let prompt = args.first_or("How many words are in 'the quick brown fox jumps'?");
    let output = agent.run(AgentRunOptions::prompt(prompt)).await?;
    println!("{}", output.text);
    println!(
        "tool calls: {}, status: {:?}",
        output.stats.tool_calls, output.stats.status
    );
    Ok(())
}
