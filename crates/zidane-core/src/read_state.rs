//! Read-state helpers: what files the tools read this session, for read
//! dedup and read-before-edit checks.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zidane_provider::{ContentBlock, SessionTurn};

use crate::events::ToolStateOp;
use crate::tool::ToolContext;
pub use crate::tool::{ReadStateEntry, ReadStateMap};

/// The prefix of the durable tool-state keys that keep a session's read
/// state (`readState:<key>`): a read is recorded with its call, so a
/// resumed or replayed run, and a later process on the session, knows
/// which files the conversation has read (a step answered from its record
/// does not run the tool that filled the map).
pub const READ_STATE_PREFIX: &str = "readState:";

/// A read as the tool state keeps it: the entry and the call that made it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Kept {
    call_id: String,
    #[serde(flatten)]
    entry: ReadStateEntry,
}

/// Records that `cx`'s call read `key` (normalized, see
/// [`read_state_key`]): in the read-state map at once, and as a write of
/// the call's durable tool state, committed with the call.
pub fn record_read(cx: &ToolContext, key: String, entry: ReadStateEntry) {
    let kept = Kept {
        call_id: cx.call_id().to_owned(),
        entry: entry.clone(),
    };
    if let Ok(value) = serde_json::to_value(&kept) {
        cx.state().set(format!("{READ_STATE_PREFIX}{key}"), value);
    }
    cx.read_state().lock().insert(key, entry);
}

/// Applies the reads among a call's tool-state writes to `map` (a call
/// answered from its record: its body, which filled the map, did not run).
pub fn apply_read_writes(map: &ReadStateMap, ops: &[ToolStateOp]) {
    let mut map = map.lock();
    for op in ops {
        if let ToolStateOp::Set { key, value } = op
            && let Some(key) = key.strip_prefix(READ_STATE_PREFIX)
            && let Ok(kept) = serde_json::from_value::<Kept>(value.clone())
        {
            map.insert(key.to_owned(), kept.entry);
        }
    }
}

/// Fills `map` from a session's committed tool state: every read whose
/// call the conversation `turns` still holds (a read a rewind or a
/// compaction took out of the conversation is not the model's any more).
/// Entries `map` already has are kept.
pub fn hydrate_read_state_from_tool_state(map: &ReadStateMap, state: &BTreeMap<String, Value>, turns: &[SessionTurn]) {
    let mut kept: Vec<(&str, Kept)> = state
        .iter()
        .filter_map(|(key, value)| {
            let key = key.strip_prefix(READ_STATE_PREFIX)?;
            Some((key, serde_json::from_value::<Kept>(value.clone()).ok()?))
        })
        .collect();
    if kept.is_empty() {
        return;
    }
    let calls: HashSet<&str> = turns
        .iter()
        .flat_map(|t| t.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    kept.retain(|(_, k)| calls.contains(k.call_id.as_str()));
    let mut map = map.lock();
    for (key, k) in kept {
        map.entry(key.to_owned()).or_insert(k.entry);
    }
}

/// The key of a file in the read state: its path, normalized (`./a//b` →
/// `a/b`).
pub fn read_state_key(path: &str) -> String {
    path.split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// The read state a tool call should use: the explicit map of its context.
pub fn resolve_read_state_map(cx: &ToolContext) -> ReadStateMap {
    Arc::clone(cx.read_state())
}

/// The entry of `path`, if it was read.
pub fn get_read_state(map: &ReadStateMap, path: &str) -> Option<ReadStateEntry> {
    map.lock().get(&read_state_key(path)).cloned()
}

/// Rebuilds a read state from a session's turns: every successful call of
/// `read_file` with a `path` argument counts as read (its content hash
/// unknown, so a later read always returns the content again).
pub fn hydrate_read_state_from_session(map: &ReadStateMap, turns: &[SessionTurn]) {
    let mut read_ids = Vec::new();
    for turn in turns {
        for block in &turn.content {
            match block {
                ContentBlock::ToolUse { id, name, input } if name == "read_file" => {
                    if let Some(path) = input.get("path").and_then(|p| p.as_str()) {
                        read_ids.push((id.clone(), read_state_key(path), turn.created_at));
                    }
                }
                ContentBlock::ToolResult {
                    tool_use_id,
                    is_error: false,
                    ..
                } => {
                    if let Some(pos) = read_ids.iter().position(|(id, _, _)| id == tool_use_id) {
                        let (_, key, at) = read_ids.remove(pos);
                        map.lock().insert(
                            key,
                            ReadStateEntry {
                                hash: 0,
                                mtime_ms: None,
                                range: None,
                                read_at_ms: at.as_millis(),
                            },
                        );
                    }
                }
                _ => {}
            }
        }
    }
}
