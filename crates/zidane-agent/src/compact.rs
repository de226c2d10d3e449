//! Compaction: older turns replaced by a summary from the provider, with the
//! most recently read files and any `compact:restore` additions re-attached.

use zidane_core::events::{CompactEnd, CompactReason, CompactStatus, SharedError};
use zidane_provider::{ContentBlock, Role, SessionTurn, ToolResultContent};

use zidane_core::events::CompactEndInit;

/// Auto-compaction settings.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoCompact {
    /// Compact when a request's input reaches this share of the context window.
    pub threshold: f64,
    /// Turns kept verbatim after the summary.
    pub keep_turns: usize,
    /// Consecutive failures after which auto-compaction stops (circuit breaker).
    pub max_failures: u32,
    /// The context window (default: the provider's).
    pub context_window: Option<u32>,
    /// Files re-attached after the summary, most recently read first.
    pub restore_files: usize,
}

impl Default for AutoCompact {
    fn default() -> Self {
        AutoCompact {
            threshold: 0.8,
            keep_turns: 4,
            max_failures: 3,
            context_window: None,
            restore_files: 5,
        }
    }
}

/// Options of [`Agent::compact`](crate::Agent::compact).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactOptions {
    /// Turns kept verbatim after the summary (default: auto-compaction's
    /// `keep_turns`, else 4).
    pub keep_turns: Option<usize>,
    /// What the summary should keep in view above all (a manual
    /// compaction's "focus"; an addition of the Rust API).
    pub focus: Option<String>,
}

/// What a compaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionResult {
    /// Whether the history was replaced.
    pub compacted: bool,
    /// Turns replaced by the summary.
    pub replaced: u32,
    /// Synthetic calls re-attached after the summary.
    pub restored: u32,
    /// The summary text.
    pub summary: Option<String>,
    /// Estimated tokens of the compacted history.
    pub effective_tokens: u64,
}

/// The instruction that asks for the summary.
pub(crate) const SUMMARY_INSTRUCTION: &str = "Summarize the conversation so far so that it can continue from the summary alone: the goal, decisions made, what was done and found (files, commands, results), what remains, and any constraint the user gave. Be complete but concise. Reply with the summary only.";

/// Whether the history may be cut before `turn`: anywhere but before a
/// tool-results turn, which must stay with the calls it answers.
pub(crate) fn is_clean_boundary(turn: &SessionTurn) -> bool {
    !(turn.role == Role::User
        && turn
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolResult { .. })))
}

/// A compaction's `compact:end` when it did not finish: aborted (no
/// error) or failed.
pub(crate) fn unfinished(reason: CompactReason, error: Option<SharedError>) -> CompactEnd {
    CompactEnd::new(CompactEndInit {
        reason,
        status: if error.is_some() {
            CompactStatus::Error
        } else {
            CompactStatus::Aborted
        },
        replaced: 0,
        dropped: 0,
        restored: 0,
        effective_tokens: None,
        error,
    })
}

/// The turns that replace the compacted ones: the summary, then the
/// restored calls with their results.
pub(crate) fn summary_turns(
    clock: &dyn zidane_core::clock::Clock,
    summary: &str,
    calls: &[zidane_core::events::RestoredCall],
) -> Vec<SessionTurn> {
    let now = clock.now_ms();
    let mut replacement = vec![SessionTurn {
        id: clock.id(),
        role: Role::User,
        content: vec![ContentBlock::text(format!(
            "This session continues an earlier conversation, summarized here:\n\n{summary}"
        ))]
        .into(),
        created_at: zidane_provider::Timestamp::from_millis(now),
        usage: None,
    }];
    if !calls.is_empty() {
        let ids: Vec<String> = calls.iter().map(|_| format!("restore_{}", clock.id())).collect();
        replacement.push(SessionTurn {
            id: clock.id(),
            role: Role::Assistant,
            content: calls
                .iter()
                .zip(&ids)
                .map(|(c, id)| ContentBlock::ToolUse {
                    id: id.clone(),
                    name: c.name.clone(),
                    input: c.input.clone(),
                })
                .collect(),
            created_at: zidane_provider::Timestamp::from_millis(now),
            usage: None,
        });
        replacement.push(SessionTurn {
            id: clock.id(),
            role: Role::User,
            content: calls
                .iter()
                .zip(&ids)
                .map(|(c, id)| ContentBlock::ToolResult {
                    tool_use_id: id.clone(),
                    content: ToolResultContent::Text(c.output.clone()),
                    is_error: false,
                })
                .collect(),
            created_at: zidane_provider::Timestamp::from_millis(now),
            usage: None,
        });
    }
    replacement
}

/// Results shorter than this are kept when pruning.
const STUB_ABOVE: usize = 300;

/// `turns` with the tool results of `turns[..upto]` longer than a stub
/// replaced by one line saying what was called and how much was left out
/// (a result that says where its whole output is keeps that line); the
/// turns and how many results were pruned.
pub(crate) fn prune_results(turns: &[SessionTurn], upto: usize) -> (Vec<SessionTurn>, u32) {
    let names: std::collections::HashMap<&str, &str> = turns
        .iter()
        .flat_map(|t| t.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, .. } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let mut pruned = 0;
    let out = turns
        .iter()
        .enumerate()
        .map(|(i, turn)| {
            if i >= upto {
                return turn.clone();
            }
            let mut count = 0;
            let blocks: Vec<ContentBlock> = turn
                .content
                .iter()
                .map(|block| match block {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } => {
                        let text = match content {
                            ToolResultContent::Text(t) => t.clone(),
                            ToolResultContent::Parts(parts) => serde_json::to_string(parts).unwrap_or_default(),
                        };
                        if text.len() <= STUB_ABOVE {
                            return block.clone();
                        }
                        count += 1;
                        let name = names.get(tool_use_id.as_str()).copied().unwrap_or("a tool");
                        let kept = text
                            .lines()
                            .rev()
                            .find(|l| l.contains("full output: "))
                            .map(|l| format!(" {}", l.trim()))
                            .unwrap_or_default();
                        ContentBlock::ToolResult {
                            tool_use_id: tool_use_id.clone(),
                            content: ToolResultContent::Text(format!(
                                "[an earlier result of `{name}` ({} bytes) was left out to save context; call again if it is needed]{kept}",
                                text.len()
                            )),
                            is_error: *is_error,
                        }
                    }
                    other => other.clone(),
                })
                .collect();
            if count == 0 {
                return turn.clone();
            }
            pruned += count;
            SessionTurn {
                content: blocks.into(),
                ..turn.clone()
            }
        })
        .collect();
    (out, pruned)
}
