//! `spawn`: hands a self-contained task to a sub-agent with a fresh
//! conversation and returns its final answer.
//!
//! The tool only asks; the agent running the call starts the child
//! ([`ToolContext::spawn`]), so the same tool works under any host that
//! provides a spawner, and reports a clear error under one that does not.

use serde_json::json;
use zidane_core::seams::SpawnResult;
use zidane_core::tool::ToolContext;
use zidane_core::{FnTool, ToolOutput};

/// What the model reads about `spawn`.
pub const SPAWN_DESCRIPTION: &str = "Hand a self-contained task to a sub-agent: it starts with a fresh conversation \
     (it sees nothing of this one), works with its own tools, and returns its final answer as this tool's result. \
     Use it for work that can be described completely in a few sentences and whose details you do not need to keep \
     in your own context: a search through many files, an investigation, an independent change. Several spawn \
     calls in one turn run at the same time. Write the task so it stands on its own: the goal, the relevant paths, \
     and what the answer must contain.";

/// The `spawn` tool. Calls run concurrently with each other (up to the
/// agent's slot limit); a resumed run that finds a call pending starts the
/// same child again, which continues from its own records when the run is
/// durable.
pub fn spawn() -> FnTool {
    FnTool::new(
        "spawn",
        SPAWN_DESCRIPTION,
        json!({
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "The complete task for the sub-agent."},
                "agent": {"type": "string", "description": "A named sub-agent to use (see the list below, when there is one)."},
                "description": {"type": "string", "description": "A short label for the task, three to six words."}
            },
            "required": ["task"]
        }),
        |input, cx: ToolContext| async move {
            let text = |key: &str| input[key].as_str().map(str::to_owned).filter(|s| !s.trim().is_empty());
            let task = input["task"].as_str().unwrap_or_default().to_owned();
            match cx.spawn(task, text("agent"), text("description")).await {
                Ok(result) => Ok(ToolOutput::text(render(&result))),
                Err(e) => Ok(ToolOutput::error(e.to_string())),
            }
        },
    )
    .parallel()
    .safe()
}

/// The result the parent's model reads: the answer, then one line of what
/// the child spent.
pub fn render(result: &SpawnResult) -> String {
    let s = &result.stats;
    let who = s.agent_name.as_deref().unwrap_or("sub-agent");
    let mut line = format!(
        "[{who} {}: {} turn{}, {} tool call{}, {} input / {} output tokens",
        s.child_id,
        s.stats.turns,
        if s.stats.turns == 1 { "" } else { "s" },
        s.stats.tool_calls,
        if s.stats.tool_calls == 1 { "" } else { "s" },
        s.stats.totals.input + s.stats.totals.cache_read + s.stats.totals.cache_creation,
        s.stats.totals.output,
    );
    if let Some(cost) = s.stats.totals.cost {
        line.push_str(&format!(", ${cost:.4}"));
    }
    line.push(']');
    let answer = result.answer.trim();
    if answer.is_empty() {
        format!("(the sub-agent gave no answer)\n\n{line}")
    } else {
        format!("{answer}\n\n{line}")
    }
}
