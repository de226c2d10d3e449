//! What continuing a run a dead process left needs beside the agent (its
//! side is `agent/resume.rs`): whether the stored run matches its records,
//! whether the turns finished, and the turns that heal a run that will not
//! be resumed.

use std::collections::BTreeSet;

use zidane_core::durable::{
    INTERRUPTED_CALL_MESSAGE as HEALED_INTERRUPTED, StepKind, StepRecord, StepValue, ToolStepOutcome,
};
use zidane_provider::{ContentBlock, Role, SessionTurn, ToolResultContent};

use zidane_core::session::SessionRun;

/// Why a run's records no longer fit its saved turns, if they do not.
pub(crate) fn mismatch(run: &SessionRun, records: &[StepRecord], turns: &[SessionTurn]) -> Option<String> {
    let resume_turn = run.loop_turn + 1;
    if turns.last().map(|t| &t.id) != run.last_turn_id.as_ref() {
        return Some("the saved turns no longer end at the run's last saved turn".into());
    }
    // A decision taken after the final answer was saved is of that turn.
    if let Some(r) = records
        .iter()
        .find(|r| r.turn != resume_turn && !(r.kind == StepKind::Decision && r.turn == run.loop_turn))
    {
        return Some(format!(
            "the step records are of turn {}, the saved turns resume at turn {resume_turn}",
            r.turn
        ));
    }
    let answered: BTreeSet<&str> = turns
        .iter()
        .flat_map(|t| t.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
        .collect();
    let last = turns.len().saturating_sub(1);
    if turns[..last]
        .iter()
        .flat_map(|t| t.content.iter())
        .any(|b| matches!(b, ContentBlock::ToolUse { id, .. } if !answered.contains(id.as_str())))
    {
        return Some("the saved turns leave a tool call unanswered before their last turn".into());
    }
    None
}

/// Whether the conversation ends with a final answer (an assistant turn
/// that calls no tool).
pub(crate) fn finished(turns: &[SessionTurn]) -> bool {
    turns.last().is_some_and(|t| {
        t.role == Role::Assistant && !t.content.iter().any(|b| matches!(b, ContentBlock::ToolUse { .. }))
    })
}

/// The turns a dead run's records hold beyond its saved turns: its last
/// assistant turn and, when it called tools, their results (a finished
/// call's recorded result, an unfinished one reported interrupted).
pub(crate) fn recover(
    run: &SessionRun,
    records: &[StepRecord],
    clock: &dyn zidane_core::clock::Clock,
) -> Vec<SessionTurn> {
    let turn = run.loop_turn + 1;
    let Some(message) = records.iter().find_map(|r| match (&r.value, r.kind, r.turn) {
        (StepValue::Model(m), StepKind::ModelCall, t) if t == turn => Some(m),
        _ => None,
    }) else {
        return Vec::new();
    };
    let now = clock.now_ms();
    let assistant = SessionTurn {
        id: clock.id(),
        role: Role::Assistant,
        content: message.content.clone().into(),
        created_at: zidane_provider::Timestamp::from_millis(now),
        usage: Some(message.usage.clone()),
    };
    let results: Vec<ContentBlock> = message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(id),
            _ => None,
        })
        .map(|id| {
            let done = records.iter().find_map(|r| match &r.value {
                StepValue::Tool(t) if r.kind == StepKind::ToolCall && r.turn == turn && &r.name == id => Some(t),
                _ => None,
            });
            let (content, is_error) = match done.map(|t| &t.outcome) {
                Some(ToolStepOutcome::Output(o)) => (o.content.clone(), o.is_error),
                Some(ToolStepOutcome::Failed(m)) => (ToolResultContent::Text(format!("Tool error: {m}")), true),
                None => (ToolResultContent::Text(HEALED_INTERRUPTED.to_owned()), true),
            };
            ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content,
                is_error,
            }
        })
        .collect();
    if results.is_empty() {
        return vec![assistant];
    }
    let user = SessionTurn {
        id: clock.id(),
        role: Role::User,
        content: results.into(),
        created_at: zidane_provider::Timestamp::from_millis(now),
        usage: None,
    };
    vec![assistant, user]
}
