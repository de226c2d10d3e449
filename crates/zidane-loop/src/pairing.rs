//! The pre-send pairing pass: every `tool_use` answered by exactly one
//! `tool_result` in the next message, no result without its call, no id twice.

use std::collections::BTreeSet;

use zidane_provider::{ContentBlock, Message, Role, ToolResultContent};

use zidane_core::events::PairingRepairKind;

/// What the model receives for a call whose run was aborted (or whose
/// process died) before it produced a result.
pub const INTERRUPT_MESSAGE_FOR_TOOL_USE: &str = "[Request interrupted by user for tool use]";

/// What the model receives for a call cancelled on its own.
pub const TOOL_USE_CANCELLED_MESSAGE: &str = "The user cancelled this tool call.";

/// One repair the pass made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// What was wrong.
    pub kind: PairingRepairKind,
    /// The id concerned.
    pub tool_use_id: String,
    /// Index of the message repaired.
    pub message_index: usize,
}

/// Repairs `messages` in place and reports each repair. Idempotent: a second
/// pass over its output repairs nothing.
pub fn ensure_tool_result_pairing(messages: &mut Vec<Message>) -> Vec<Repair> {
    let mut repairs = Vec::new();
    let mut seen_uses: BTreeSet<String> = BTreeSet::new();
    let mut i = 0;
    while i < messages.len() {
        match messages[i].role() {
            Role::Assistant => {
                repair_calls(messages, i, &mut seen_uses, &mut repairs);
            }
            Role::User => {
                repair_results(messages, i, &mut repairs);
                if messages[i].content().is_empty() {
                    messages.remove(i);
                    continue;
                }
            }
        }
        i += 1;
    }
    repairs
}

/// An assistant message at `i`: a call id seen before is dropped (the
/// first is kept), and a call without a result gets one saying it was
/// interrupted, first in the next user message (made when missing).
fn repair_calls(messages: &mut Vec<Message>, i: usize, seen_uses: &mut BTreeSet<String>, repairs: &mut Vec<Repair>) {
    let dupes: Vec<String> = messages[i]
        .content()
        .iter()
        .filter_map(tool_use_id)
        .filter(|id| !seen_uses.insert((*id).to_owned()))
        .map(str::to_owned)
        .collect();
    if !dupes.is_empty() {
        drop_duplicate_uses(&mut messages[i], &dupes);
        for id in dupes {
            repairs.push(Repair {
                kind: PairingRepairKind::DuplicateId,
                tool_use_id: id,
                message_index: i,
            });
        }
    }
    let calls: Vec<String> = messages[i]
        .content()
        .iter()
        .filter_map(tool_use_id)
        .map(str::to_owned)
        .collect();
    if calls.is_empty() {
        return;
    }
    let next_is_user = messages.get(i + 1).is_some_and(|m| m.role() == Role::User);
    if !next_is_user {
        messages.insert(i + 1, Message::new(Role::User, Vec::new()));
    }
    let answered: BTreeSet<String> = messages[i + 1]
        .content()
        .iter()
        .filter_map(tool_result_id)
        .map(str::to_owned)
        .collect();
    let missing: Vec<&String> = calls.iter().filter(|id| !answered.contains(*id)).collect();
    if missing.is_empty() {
        return;
    }
    // Results go first in the user message, in call order.
    let mut content = messages[i + 1].content().to_vec();
    let at = content
        .iter()
        .take_while(|b| matches!(b, ContentBlock::ToolResult { .. }))
        .count();
    for (k, id) in missing.iter().enumerate() {
        content.insert(
            at + k,
            ContentBlock::ToolResult {
                tool_use_id: (*id).clone(),
                content: ToolResultContent::Text(INTERRUPT_MESSAGE_FOR_TOOL_USE.to_owned()),
                is_error: true,
            },
        );
        repairs.push(Repair {
            kind: PairingRepairKind::OrphanToolUse,
            tool_use_id: (*id).clone(),
            message_index: i,
        });
    }
    *messages[i + 1].content_mut() = content;
}

/// A user message at `i`: results that answer no call of the assistant
/// message before it, and second results of one call, are dropped.
fn repair_results(messages: &mut [Message], i: usize, repairs: &mut Vec<Repair>) {
    let expected: BTreeSet<String> = i
        .checked_sub(1)
        .and_then(|p| messages.get(p))
        .filter(|m| m.role() == Role::Assistant)
        .map(|m| m.content().iter().filter_map(tool_use_id).map(str::to_owned).collect())
        .unwrap_or_default();
    let mut answered = BTreeSet::new();
    let mut dropped = Vec::new();
    for block in messages[i].content() {
        if let Some(id) = tool_result_id(block)
            && (!expected.contains(id) || !answered.insert(id.to_owned()))
        {
            let kind = if expected.contains(id) {
                PairingRepairKind::DuplicateId
            } else {
                PairingRepairKind::OrphanToolResult
            };
            dropped.push((kind, id.to_owned()));
        }
    }
    if dropped.is_empty() {
        return;
    }
    let mut kept = BTreeSet::new();
    messages[i].content_mut().retain(|b| match tool_result_id(b) {
        Some(id) => expected.contains(id) && kept.insert(id.to_owned()),
        None => true,
    });
    for (kind, id) in dropped {
        repairs.push(Repair {
            kind,
            tool_use_id: id,
            message_index: i,
        });
    }
}

fn tool_use_id(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::ToolUse { id, .. } => Some(id),
        _ => None,
    }
}

fn tool_result_id(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id),
        _ => None,
    }
}

fn drop_duplicate_uses(message: &mut Message, dupes: &[String]) {
    let mut kept = BTreeSet::new();
    message.content_mut().retain(|b| match tool_use_id(b) {
        Some(id) if dupes.iter().any(|d| d == id) => kept.insert(id.to_owned()),
        _ => true,
    });
}

/// Whether a request may be sent: it must end with a user message.
pub fn ends_with_user_message(messages: &[Message]) -> bool {
    messages.last().is_some_and(|m| m.role() == Role::User)
}
