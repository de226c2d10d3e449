//! The agent's part of streaming a run: [`Agent::run_stream`].

use crate::agent::Agent;
use crate::run_options::AgentRunOptions;
use crate::stream::RunStream;

impl Agent {
    /// Runs a prompt as [`run`](Agent::run) does, giving its events as a
    /// stream: text and reasoning deltas, each turn's tool calls, its end,
    /// the tool results, and last the output. The events come from run
    /// hooks added to `options.hooks`; the agent's own hooks fire as usual.
    pub fn run_stream(&self, options: AgentRunOptions) -> RunStream {
        crate::stream::start(self.clone(), options)
    }
}
