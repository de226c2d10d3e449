//! Wire-layer costs: decoding Anthropic streams (SSE framing + JSON +
//! accumulation), and building request N+1 from a transcript whose earlier
//! messages kept their serialized bytes.
//!
//! `cargo bench -p zidane-provider --bench wire` (or `cargo xtask bench`).
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;

use serde_json::json;
use zidane_bench::{measure, report};
use zidane_provider::sse::SseDecoder;
use zidane_provider::{
    ContentBlock, Message, MessageAccumulator, Role, StreamOptions, ToolResultContent, ToolSpec, anthropic,
};

/// A long Anthropic stream: thinking, many text deltas, a tool call.
fn anthropic_stream() -> Vec<u8> {
    let mut s = String::new();
    let mut event = |name: &str, data: serde_json::Value| {
        s.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "usage": {"input_tokens": 1200, "cache_read_input_tokens": 50000, "cache_creation_input_tokens": 300, "output_tokens": 1}}}),
    );
    event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
    );
    for i in 0..500 {
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": format!("considering option {i} of the plan, weighing its costs ")}}),
        );
    }
    event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCkYIBRgCKkAx".repeat(20)}}),
    );
    event("content_block_stop", json!({"type": "content_block_stop", "index": 0}));
    event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
    );
    for i in 0..4000 {
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": format!("word{i} and \"quoted\" text\n")}}),
        );
        if i % 500 == 0 {
            event("ping", json!({"type": "ping"}));
        }
    }
    event("content_block_stop", json!({"type": "content_block_stop", "index": 1}));
    event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}}),
    );
    let args =
        json!({"path": "src/main.rs", "content": "fn main() {\n    println!(\"hello\");\n}\n".repeat(40)}).to_string();
    for piece in args.as_bytes().chunks(64) {
        let piece = String::from_utf8_lossy(piece).into_owned();
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": piece}}),
        );
    }
    event("content_block_stop", json!({"type": "content_block_stop", "index": 2}));
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9000}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    s.into_bytes()
}

fn decode(bytes: &[u8], chunk: usize) -> usize {
    let mut sse = SseDecoder::new();
    let mut decoder = anthropic::Decoder::new("anthropic");
    let mut acc = MessageAccumulator::new();
    let mut frames = Vec::new();
    let mut events = Vec::new();
    for piece in bytes.chunks(chunk) {
        sse.feed(piece, &mut frames);
        for frame in frames.drain(..) {
            decoder.decode(&frame, &mut events).unwrap();
        }
        for event in events.drain(..) {
            acc.push(&event);
        }
    }
    sse.finish(&mut frames);
    acc.finish().content.len()
}

fn transcript(turns: usize) -> Vec<Message> {
    let mut messages = Vec::with_capacity(turns);
    for i in 0..turns {
        let message = match i % 4 {
            0 => Message::user(
                format!("Please look at file {i} and explain what the function `handle_{i}` does. ").repeat(4),
            ),
            1 => Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::text(format!("I will read file {i} first.")),
                    ContentBlock::ToolUse {
                        id: format!("toolu_{i}"),
                        name: "read_file".into(),
                        input: json!({"path": format!("src/f{i}.rs")}),
                    },
                ],
            ),
            2 => Message::new(
                Role::User,
                vec![ContentBlock::ToolResult {
                    tool_use_id: format!("toolu_{}", i - 1),
                    content: ToolResultContent::Text(
                        format!("fn handle_{i}() {{\n    // \"body\" line\n}}\n").repeat(12),
                    ),
                    is_error: false,
                }],
            ),
            _ => Message::assistant(
                format!("The function `handle_{i}` returns early when the input is empty. ").repeat(3),
            ),
        };
        messages.push(message);
    }
    messages
}

fn main() {
    let stream = anthropic_stream();
    let mb = stream.len() as f64 / 1e6;
    for chunk in [1024, 16 * 1024] {
        let sample = measure(
            &format!("decode anthropic stream ({:.2} MB, {chunk} B reads)", mb),
            5,
            || {
                black_box(decode(black_box(&stream), chunk));
            },
        );
        if let Some(s) = sample {
            report("  throughput", format!("{:.0} MB/s", mb / (s.median_ns / 1e9)));
        }
    }

    let tools: Vec<ToolSpec> = (0..8)
        .map(|i| ToolSpec {
            name: format!("tool_{i}"),
            description: "does a thing".repeat(10),
            input_schema: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        })
        .collect();
    for n in [10, 100, 1000] {
        let mut options = StreamOptions::new("claude-sonnet-4-5", transcript(n));
        options.system = Some("You are a careful coding agent. ".repeat(40));
        options.tools = tools.clone();
        let body_len = anthropic::request_body(&options).body.len();
        let warm = measure(
            &format!("build request, {n} messages, memoized ({} KB)", body_len / 1024),
            200,
            || {
                black_box(anthropic::request_body(black_box(&options)));
            },
        );
        let cold = measure(
            &format!("build request, {n} messages, serialized from scratch"),
            50,
            || {
                // Fresh messages carry no memo: every one is serialized again.
                let mut fresh = options.clone();
                fresh.messages = fresh
                    .messages
                    .iter()
                    .map(|m| Message::new(m.role(), m.content().to_vec()))
                    .collect();
                black_box(anthropic::request_body(&fresh));
            },
        );
        let reference = vec![7u8; body_len];
        let copy = measure(&format!("copy {} KB (the floor)", body_len / 1024), 200, || {
            black_box(black_box(&reference).to_vec());
        });
        if let (Some(w), Some(c), Some(f)) = (warm, cold, copy) {
            report(
                &format!("  {n} messages"),
                format!(
                    "memoized {:.1}x faster than from scratch; {:.1}x a plain copy",
                    c.median_ns / w.median_ns,
                    w.median_ns / f.median_ns
                ),
            );
        }
    }
}
