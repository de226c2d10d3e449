//! Every recorded stream replayed through the real decoders and accumulator.

use serde_json::json;
use zidane_provider::{ContentBlock, FinishReason};

use crate::support::{Wire, fixture, fixture_files, replay};

#[test]
fn every_anthropic_recording_accumulates_to_its_snapshot() {
    let files = fixture_files("anthropic");
    assert_eq!(files.len(), 10);
    for name in files {
        let message = replay(Wire::Anthropic, &fixture(&format!("anthropic/{name}"))).unwrap();
        insta::assert_json_snapshot!(format!("anthropic__{name}"), message);
    }
}

#[test]
fn every_openai_recording_accumulates_to_its_snapshot() {
    let files = fixture_files("openai-chat");
    assert_eq!(files.len(), 12);
    for name in files {
        let message = replay(Wire::OpenAi, &fixture(&format!("openai-chat/{name}"))).unwrap();
        insta::assert_json_snapshot!(format!("openai__{name}"), message);
    }
}

#[test]
fn cut_off_tool_json_is_never_dispatchable() {
    let message = replay(
        Wire::Anthropic,
        &fixture("anthropic/incomplete_partial_json_response.sse"),
    )
    .unwrap();
    assert_eq!(message.finish_reason, FinishReason::Length);
    assert_eq!(message.tool_calls().count(), 0);
    assert_eq!(message.incomplete_tool_calls.len(), 1);
    let call = &message.incomplete_tool_calls[0];
    assert_eq!(
        (call.id.as_str(), call.name.as_str()),
        ("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file")
    );
    assert!(call.partial_json.starts_with("{\"filename\": \"taxes.txt\""));
    assert_eq!(message.usage.output, 124);
}

#[test]
fn anthropic_tool_use_and_thinking_come_out_whole() {
    let message = replay(Wire::Anthropic, &fixture("anthropic/tool_use_response.sse")).unwrap();
    assert_eq!(message.finish_reason, FinishReason::ToolCalls);
    let calls: Vec<_> = message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert!(calls[0].2.is_object());

    let message = replay(Wire::Anthropic, &fixture("anthropic/stream-a-refusal.sse")).unwrap();
    assert_eq!(message.finish_reason, FinishReason::Refusal);
    let ContentBlock::Thinking { thinking, signature } = &message.content[0] else {
        panic!("thinking first: {:?}", message.content)
    };
    assert!(!thinking.is_empty());
    assert!(signature.as_deref().is_some_and(|s| !s.is_empty()));

    let message = replay(Wire::Anthropic, &fixture("anthropic/stream-a-toolrefusal.sse")).unwrap();
    assert!(
        matches!(&message.content[0], ContentBlock::ServerToolUse { name, input, .. }
        if name == "web_search" && input.get("query").is_some())
    );
    assert!(
        matches!(&message.content[1], ContentBlock::ServerToolResult { kind, .. } if kind == "web_search_tool_result")
    );
}

#[test]
fn unknown_anthropic_blocks_are_kept_with_their_deltas_applied() {
    let message = replay(Wire::Anthropic, &fixture("anthropic/compaction_response.sse")).unwrap();
    let ContentBlock::Unknown(block) = &message.content[0] else {
        panic!("{:?}", message.content)
    };
    assert_eq!(block["type"], json!("compaction"));
    assert_eq!(block["content"], json!("Earlier conversation summarized."));
    assert_eq!(message.text(), "Hello there!");
}

#[test]
fn openai_parallel_tool_calls_are_assembled_by_index() {
    let message = replay(Wire::OpenAi, &fixture("openai-chat/f82268f2fefd.sse")).unwrap();
    assert_eq!(message.finish_reason, FinishReason::ToolCalls);
    let calls: Vec<_> = message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0].0, calls[1].0);
    assert!(calls.iter().all(|c| c.2.is_object()));

    let message = replay(Wire::OpenAi, &fixture("openai-chat/4cc50a6135d2.sse")).unwrap();
    assert_eq!(message.finish_reason, FinishReason::Length);
    let message = replay(Wire::OpenAi, &fixture("openai-chat/173417d55340.sse")).unwrap();
    assert_eq!(message.finish_reason, FinishReason::Refusal);
}

/// The API's report of what it changed in the input (the beta
/// `input_transformations`, on `message_start`'s message and again on the
/// final `message_delta`) becomes one event each, the entries as sent;
/// the message itself is unchanged.
#[test]
fn anthropic_input_transformations_are_reported_as_sent() {
    let entry =
        json!({"type": "thinking_dropped", "path": "messages.1.content.0", "reason": "prefix_binding_mismatch"});
    let stream = format!(
        "event: message_start\ndata: {}\n\nevent: content_block_start\ndata: {}\n\nevent: content_block_delta\ndata: {}\n\n\
         event: content_block_stop\ndata: {}\n\nevent: message_delta\ndata: {}\n\nevent: message_stop\ndata: {}\n\n",
        json!({"type": "message_start", "message": {"id": "m", "model": "claude", "usage": {"input_tokens": 5, "output_tokens": 1}, "input_transformations": [entry]}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}, "input_transformations": []}),
        json!({"type": "message_stop"}),
    );
    let events = crate::support::stream_events(Wire::Anthropic, stream.as_bytes()).unwrap();
    let reported: Vec<&zidane_provider::StreamEvent> = events
        .iter()
        .filter(|e| matches!(e, zidane_provider::StreamEvent::InputTransformations(_)))
        .collect();
    assert_eq!(
        reported,
        vec![&zidane_provider::StreamEvent::InputTransformations(vec![entry])]
    );
    let message = replay(Wire::Anthropic, stream.as_bytes()).unwrap();
    assert_eq!(message.text(), "hi");
}

/// The recorded streams' provider reports beside the message: a refusal's
/// details, a server-side fallback and its credit, an OpenAI refusal.
#[test]
fn provider_diagnostics_come_from_the_documented_fields() {
    let diagnostics = |wire, name: &str| -> Vec<(String, String)> {
        crate::support::stream_events(wire, &fixture(name))
            .unwrap()
            .into_iter()
            .filter_map(|e| match e {
                zidane_provider::StreamEvent::Diagnostic(d) => Some((d.kind, d.message)),
                _ => None,
            })
            .collect()
    };
    let pairs = |items: &[(&str, &str)]| -> Vec<(String, String)> {
        items.iter().map(|(k, m)| (k.to_string(), m.to_string())).collect()
    };
    assert_eq!(
        diagnostics(Wire::Anthropic, "anthropic/refusal_response.sse"),
        pairs(&[("refusal", "This request was refused due to policy. (category: cyber)")])
    );
    assert_eq!(
        diagnostics(Wire::Anthropic, "anthropic/stream-a-refusal.sse"),
        pairs(&[("refusal", "the model refused")])
    );
    assert_eq!(
        diagnostics(Wire::Anthropic, "anthropic/fallback_response.sse"),
        pairs(&[(
            "fallback",
            "the server handed the turn from claude-opus-4-7 to claude-sonnet-4-5 after a refusal"
        )])
    );
    assert_eq!(
        diagnostics(Wire::Anthropic, "anthropic/fallback_credit_response.sse"),
        pairs(&[("fallback-credit", "fallback credit redeemed")])
    );
    assert_eq!(
        diagnostics(Wire::OpenAi, "openai-chat/173417d55340.sse"),
        pairs(&[("refusal", "I'm sorry, I can't assist with that request.")])
    );
    assert!(diagnostics(Wire::Anthropic, "anthropic/basic_response.sse").is_empty());
    assert!(diagnostics(Wire::OpenAi, "openai-chat/e2aad469b71d.sse").is_empty());
}
