//! What a run gives back: the answer beside the statistics.

use zidane_core::events::AgentStats;

/// The end of a run ([`Agent::run`](crate::Agent::run),
/// [`Agent::resume`](crate::Agent::resume)): the model's final answer and
/// the run's statistics.
///
/// It dereferences to [`AgentStats`], so `output.turns` and
/// `output.completed()` read the statistics directly. It crosses a process
/// boundary as `{ "text", "stats" }` (a server telling a remote client how
/// a run ended).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct RunOutput {
    /// The text of the run's last assistant turn: its text blocks joined.
    /// Empty when the run ended before the model answered (aborted or
    /// suspended before its first turn), and when the last turn held only
    /// tool calls (a run stopped at its turn cap).
    pub text: String,
    /// How the run went: turns, tool calls, tokens, cost and how it ended.
    pub stats: AgentStats,
}

impl RunOutput {
    /// An output of `text` and `stats`.
    pub fn new(text: impl Into<String>, stats: AgentStats) -> Self {
        RunOutput {
            text: text.into(),
            stats,
        }
    }

    /// The statistics, owned.
    pub fn into_stats(self) -> AgentStats {
        self.stats
    }
}

impl std::ops::Deref for RunOutput {
    type Target = AgentStats;

    fn deref(&self) -> &AgentStats {
        &self.stats
    }
}

impl From<RunOutput> for AgentStats {
    fn from(output: RunOutput) -> AgentStats {
        output.stats
    }
}

impl std::fmt::Display for RunOutput {
    /// The answer's text.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}
