//! The OpenAI Responses API: request bodies against `CreateResponse`, and
//! event sequences shaped like the API reference's, each event checked
//! against `ResponseStreamEvent`, decoded into the message.

use serde_json::{Value, json};
use zidane_provider::sse::SseEvent;
use zidane_provider::{
    ContentBlock, FinishReason, Message, MessageAccumulator, Role, StreamEvent, StreamOptions, ThinkingLevel,
    ToolChoice, ToolResultContent, ToolSpec, responses,
};

use std::sync::OnceLock;

use crate::schema::{assert_valid, components, mixed_media_prompt, png, validator_in};

/// A validator of the Responses schemas. Their `oneOf`s are unions whose
/// variants overlap (a user message with a content list is both an
/// `EasyInputMessage` and an `InputMessage`), so they are read as `anyOf`.
fn validator(schema: &str) -> jsonschema::Validator {
    static LENIENT: OnceLock<Value> = OnceLock::new();
    let components = LENIENT.get_or_init(|| {
        let mut c = components().clone();
        one_of_as_any_of(&mut c);
        c
    });
    validator_in(components, schema)
}

fn one_of_as_any_of(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(variants) = map.remove("oneOf") {
                map.insert("anyOf".into(), variants);
            }
            map.values_mut().for_each(one_of_as_any_of);
        }
        Value::Array(items) => items.iter_mut().for_each(one_of_as_any_of),
        _ => {}
    }
}

/// A `Response` object as the API sends it in `response.completed`.
fn response(status: &str, output: Value, usage: Value, incomplete: Value) -> Value {
    let mut response = json!({
        "id": "resp_1", "object": "response", "created_at": 1740855869, "status": status,
        "error": null, "incomplete_details": incomplete, "instructions": null,
        "model": "gpt-5-2025-08-07", "tools": [], "output": output, "parallel_tool_calls": true,
        "metadata": {}, "tool_choice": "auto", "temperature": 1, "top_p": 1,
    });
    if !usage.is_null() {
        response["usage"] = usage;
    }
    response
}

fn usage(input: u64, cached: u64, output: u64) -> Value {
    json!({
        "input_tokens": input, "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
        "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": input + output,
    })
}

/// Decodes `events` (each first checked against the schema) into the
/// message and the raw stream events.
fn decode(events: &[Value]) -> (zidane_provider::AssistantMessage, Vec<StreamEvent>, bool) {
    let schema = validator("ResponseStreamEvent");
    let mut decoder = responses::Decoder::new("openai-responses");
    let mut out = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let mut event = event.clone();
        event["sequence_number"] = i.into();
        assert_valid(&schema, &event, &format!("event {i}"));
        let sse = SseEvent {
            event: Some(event["type"].as_str().unwrap().to_owned().into()),
            data: event.to_string().into(),
            id: None,
            retry: None,
        };
        decoder.decode(&sse, &mut out).unwrap();
    }
    let mut acc = MessageAccumulator::new();
    for e in &out {
        acc.push(e);
    }
    (acc.finish(), out, decoder.is_ended())
}

fn reasoning_item(done: bool) -> Value {
    json!({
        "type": "reasoning", "id": "rs_1", "status": if done { "completed" } else { "in_progress" },
        "summary": if done { json!([{"type": "summary_text", "text": "Need the weather first."}]) } else { json!([]) },
        "encrypted_content": if done { json!("gAAAAB-opaque") } else { Value::Null },
    })
}

fn call_item(done: bool) -> Value {
    json!({
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
        "arguments": if done { r#"{"city":"Oslo"}"# } else { "" },
        "status": if done { "completed" } else { "in_progress" },
    })
}

/// Reasoning, then a function call: the summary streams as thinking, the
/// finished reasoning item is kept whole (encrypted content included), the
/// call's arguments arrive in fragments, and the usage splits cached input.
fn reasoning_then_call() -> Vec<Value> {
    let created = response("in_progress", json!([]), Value::Null, Value::Null);
    let done = response(
        "completed",
        json!([reasoning_item(true), call_item(true)]),
        usage(1200, 1000, 40),
        Value::Null,
    );
    vec![
        json!({"type": "response.created", "response": created}),
        json!({"type": "response.in_progress", "response": created}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning_item(false)}),
        json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "Need the weather"}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": " first."}),
        json!({"type": "response.reasoning_summary_text.done", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "text": "Need the weather first."}),
        json!({"type": "response.reasoning_summary_part.done", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": "Need the weather first."}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning_item(true)}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": call_item(false)}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "{\"city\":"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "\"Oslo\"}"}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 1, "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": call_item(true)}),
        json!({"type": "response.completed", "response": done}),
    ]
}

#[test]
fn reasoning_and_a_function_call_decode_into_a_replayable_message() {
    let (message, events, ended) = decode(&reasoning_then_call());
    assert!(ended);
    assert_eq!(message.id.as_deref(), Some("resp_1"));
    assert_eq!(message.model.as_deref(), Some("gpt-5-2025-08-07"));
    assert_eq!(message.finish_reason, FinishReason::ToolCalls);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ThinkingDelta { text, .. } if text == "Need the weather"))
    );
    assert_eq!(
        message.content,
        vec![
            ContentBlock::Unknown(json!({
                "type": "reasoning", "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Need the weather first."}],
                "encrypted_content": "gAAAAB-opaque",
            })),
            ContentBlock::ToolUse {
                id: "call_1".into(),
                name: "get_weather".into(),
                input: json!({"city": "Oslo"}),
            },
        ]
    );
    assert_eq!(
        (message.usage.input, message.usage.cache_read, message.usage.output),
        (200, 1000, 40)
    );

    // The next request carries the reasoning item back before its call.
    let conversation = vec![
        Message::new(Role::User, vec![ContentBlock::text("Weather in Oslo?")]),
        message.to_message(),
        Message::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: "call_1".into(),
                content: "3C".into(),
                is_error: false,
            }],
        ),
    ];
    let mut options = StreamOptions::new("gpt-5", conversation);
    options.thinking = ThinkingLevel::Medium;
    let body: Value = serde_json::from_slice(&responses::request_body(&options)).unwrap();
    assert_valid(&validator("CreateResponse"), &body, "the follow-up request");
    let input = body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["message", "reasoning", "function_call", "function_call_output"]);
    assert_eq!(input[1]["encrypted_content"], "gAAAAB-opaque");
    assert_eq!(input[2]["call_id"], "call_1");
    assert_eq!(input[2]["arguments"], r#"{"city":"Oslo"}"#);
    assert_eq!(input[3]["output"], "3C");
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["reasoning"], json!({"effort": "medium", "summary": "auto"}));
    assert_eq!(body["store"], false);

    // Another provider never sees OpenAI's reasoning item.
    let anthropic: Value = serde_json::from_slice(&zidane_provider::anthropic::request_body(&options).body).unwrap();
    assert!(!anthropic.to_string().contains("gAAAAB-opaque"));
}

#[test]
fn a_text_answer_a_cut_answer_and_failures() {
    let created = response("in_progress", json!([]), Value::Null, Value::Null);
    let message_item = |text: &str, status: &str| {
        json!({"type": "message", "id": "msg_1", "role": "assistant", "status": status,
               "content": if text.is_empty() { json!([]) } else { json!([{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]) }})
    };
    let text_events = |end: Value| {
        vec![
            json!({"type": "response.created", "response": created}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": message_item("", "in_progress")}),
            json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Hello", "logprobs": []}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": " there.", "logprobs": []}),
            json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "Hello there.", "logprobs": []}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": message_item("Hello there.", "completed")}),
            end,
        ]
    };
    let done = response(
        "completed",
        json!([message_item("Hello there.", "completed")]),
        usage(30, 0, 4),
        Value::Null,
    );
    let (message, _, _) = decode(&text_events(json!({"type": "response.completed", "response": done})));
    assert_eq!(message.text(), "Hello there.");
    assert_eq!(message.finish_reason, FinishReason::Stop);
    assert_eq!((message.usage.input, message.usage.output), (30, 4));

    let cut = response(
        "incomplete",
        json!([message_item("Hello there.", "incomplete")]),
        usage(30, 0, 4),
        json!({"reason": "max_output_tokens"}),
    );
    let (message, _, ended) = decode(&text_events(json!({"type": "response.incomplete", "response": cut})));
    assert!(ended);
    assert_eq!(message.finish_reason, FinishReason::Length);
    assert_eq!(message.raw_reason.as_deref(), Some("max_output_tokens"));

    let mut failed = response("failed", json!([]), Value::Null, Value::Null);
    failed["error"] = json!({"code": "server_error", "message": "The model failed to generate a response."});
    let mut decoder = responses::Decoder::new("openai-responses");
    let sse = |v: Value| SseEvent {
        event: None,
        data: v.to_string().into(),
        id: None,
        retry: None,
    };
    let err = decoder
        .decode(
            &sse(json!({"type": "response.failed", "response": failed})),
            &mut Vec::new(),
        )
        .unwrap_err();
    assert_eq!(err.message(), "The model failed to generate a response.");
    assert!(err.is_retryable(), "a server error is worth another attempt");
    let err = decoder
        .decode(
            &sse(json!({"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": null})),
            &mut Vec::new(),
        )
        .unwrap_err();
    assert_eq!(err.message(), "Slow down");
    assert!(!decoder.is_ended());
}

#[test]
fn request_bodies_match_create_response() {
    let schema = validator("CreateResponse");
    let conversation = vec![
        mixed_media_prompt(),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    thinking: "another provider's reasoning".into(),
                    signature: Some("sig".into()),
                },
                ContentBlock::text("Looking."),
                ContentBlock::ToolUse {
                    id: "call_a".into(),
                    name: "get_weather".into(),
                    input: json!({"city": "Oslo"}),
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::ToolResult {
                    tool_use_id: "call_a".into(),
                    content: ToolResultContent::Parts(vec![ContentBlock::text("timeout, the map:"), png()]),
                    is_error: true,
                },
                ContentBlock::text("Which is warmer?"),
            ],
        ),
    ];
    let mut base = StreamOptions::new("gpt-5", conversation);
    base.system = Some("Be brief.".into());
    base.tools = vec![ToolSpec {
        name: "get_weather".into(),
        description: "Weather for a city".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    }];
    let mut variants = vec![base.clone()];
    for choice in [
        ToolChoice::Auto,
        ToolChoice::Any,
        ToolChoice::None,
        ToolChoice::Tool {
            name: "get_weather".into(),
        },
    ] {
        let mut v = base.clone();
        v.tool_choice = Some(choice);
        variants.push(v);
    }
    let mut v = base.clone();
    v.max_tokens = Some(256);
    v.temperature = Some(0.5);
    v.thinking = ThinkingLevel::High;
    v.response_schema = Some(
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false}),
    );
    variants.push(v);
    for (i, options) in variants.iter().enumerate() {
        let body: Value = serde_json::from_slice(&responses::request_body(options)).unwrap();
        assert_valid(&schema, &body, &format!("variant {i}"));
        assert!(!body.to_string().contains("another provider's reasoning"));
    }
    let body: Value = serde_json::from_slice(&responses::request_body(&variants[5])).unwrap();
    // A tool's image travels in its output, as input items.
    let output = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .unwrap();
    assert_eq!(
        output["output"],
        json!([
            {"type": "input_text", "text": "timeout, the map:"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"},
        ])
    );
    assert_eq!(body["max_output_tokens"], 256);
    assert_eq!(body["instructions"], "Be brief.");
    assert_eq!(body["text"]["format"]["type"], "json_schema");
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[0]["content"][1]["image_url"], "https://example.com/a.png");
    assert_eq!(
        input[0]["content"][2]["image_url"],
        "data:image/png;base64,iVBORw0KGgo="
    );
    assert_eq!(input[0]["content"][3]["filename"], "report.pdf");
    assert_eq!(
        input[1],
        json!({"type": "message", "role": "assistant", "content": "Looking."})
    );
}
