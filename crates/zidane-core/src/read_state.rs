//! Read-state helpers: what files the tools read this session, for read
//! dedup and read-before-edit checks.

use std::sync::Arc;

use zidane_provider::{ContentBlock, SessionTurn};

use crate::tool::ToolContext;
pub use crate::tool::{ReadStateEntry, ReadStateMap};

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
