//! Per-turn telemetry cost on a growing transcript: snapshot + diff of the
//! request at turn 10 and at turn 200. Message hashes are memoized, so the
//! cost tracks the new messages, not the transcript.
//!
//! `cargo bench -p zidane-cache-telemetry` (or `cargo xtask bench`).
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;

use serde_json::json;
use zidane_bench::{measure, report};
use zidane_cache_telemetry::{diff_cache_dimensions, snapshot_cache_dimensions};
use zidane_provider::{
    ContentBlock, Message, Role, SYSTEM_PROMPT_BOUNDARY, StreamOptions, ToolResultContent, ToolSpec,
};

fn turn_messages(i: usize) -> [Message; 2] {
    [
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::text(format!("Reading file {i} to check the handler.")),
                ContentBlock::ToolUse {
                    id: format!("toolu_{i}"),
                    name: "read_file".into(),
                    input: json!({"path": format!("src/f{i}.rs")}),
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: format!("toolu_{i}"),
                content: ToolResultContent::Text(format!("fn handler_{i}() {{}}\n").repeat(40)),
                is_error: false,
            }],
        ),
    ]
}

fn main() {
    let mut options = StreamOptions::new("claude-sonnet-4-5", vec![Message::user("Review the code.")]);
    options.system = Some(format!(
        "{}{SYSTEM_PROMPT_BOUNDARY}Notes.",
        "You are a careful reviewer. ".repeat(40)
    ));
    options.tools = (0..8)
        .map(|i| ToolSpec {
            name: format!("tool_{i}"),
            description: "does a thing".into(),
            input_schema: json!({"type": "object"}),
        })
        .collect();
    let mut previous = snapshot_cache_dimensions(&options, None);
    let mut at = Vec::new();
    for turn in 1..=200 {
        options.messages.extend(turn_messages(turn));
        if turn == 10 || turn == 200 {
            let label = format!("snapshot + diff at turn {turn} ({} messages)", options.messages.len());
            // The first snapshot of a turn hashes its two new messages; the
            // measured ones see every message memoized, as the next turn will.
            let sample = measure(&label, 2_000, || {
                let snap = snapshot_cache_dimensions(black_box(&options), None);
                black_box(diff_cache_dimensions(&previous, &snap));
            });
            at.push(sample);
        }
        previous = snapshot_cache_dimensions(&options, None);
    }
    let new_pair = measure("hashing one new turn (2 messages, first time)", 2_000, || {
        let fresh = turn_messages(7);
        black_box(zidane_cache_telemetry::hash_messages(&fresh));
    });
    if let (Some(Some(t10)), Some(Some(t200)), Some(pair)) = (at.first(), at.get(1), new_pair) {
        report(
            "  per-turn cost, turn 200 / turn 10",
            format!(
                "{:.2} µs / {:.2} µs ({:.2}x), + {:.2} µs to hash the turn's new messages",
                t200.median_ns / 1e3,
                t10.median_ns / 1e3,
                t200.median_ns / t10.median_ns,
                pair.median_ns / 1e3
            ),
        );
    }
}
