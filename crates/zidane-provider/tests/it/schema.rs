//! Our OpenAI request bodies, and the recorded chunks, against the schemas of
//! OpenAI's own OpenAPI document.

use std::sync::OnceLock;

use serde_json::{Value, json};
use zidane_provider::openai::Dialect;
use zidane_provider::sse::SseEvent;
use zidane_provider::{
    ContentBlock, DocumentSource, ImageSource, Message, Role, StreamOptions, ThinkingLevel, ToolChoice,
    ToolResultContent, ToolSpec, openai,
};

use crate::support::{fixture, fixture_files, sse_events};

/// The OpenAPI document's components, with OpenAPI 3.0's `nullable: true`
/// rewritten as `anyOf [schema, null]` so a JSON Schema 2020-12 validator
/// accepts real traffic.
pub(crate) fn components() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/spec/openai-openapi-chat-responses.json"
        );
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{}", crate::support::missing_shared(std::path::Path::new(path), &e)));
        let mut doc: Value = serde_json::from_str(&text).unwrap();
        translate_nullable(&mut doc);
        doc["components"].clone()
    })
}

fn translate_nullable(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                translate_nullable(child);
            }
            if map.remove("nullable") == Some(Value::Bool(true)) {
                let inner = Value::Object(std::mem::take(map));
                map.insert("anyOf".into(), json!([inner, {"type": "null"}]));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(translate_nullable),
        _ => {}
    }
}

pub(crate) fn validator(schema: &str) -> jsonschema::Validator {
    validator_in(components(), schema)
}

/// A validator of `schema` among `components`.
pub(crate) fn validator_in(components: &Value, schema: &str) -> jsonschema::Validator {
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("#/components/schemas/{schema}"),
        "components": components,
    });
    jsonschema::draft202012::new(&root).unwrap_or_else(|e| panic!("schema {schema}: {e}"))
}

pub(crate) fn assert_valid(validator: &jsonschema::Validator, instance: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match the schema:\n{}\n{instance:#}",
        errors.join("\n")
    );
}

/// A user message with text, an image by URL, an inline image and a PDF:
/// every kind of prompt part the request formats map.
pub(crate) fn mixed_media_prompt() -> Message {
    Message::new(
        Role::User,
        vec![
            ContentBlock::text("Compare these."),
            ContentBlock::Image {
                source: ImageSource::Url {
                    url: "https://example.com/a.png".into(),
                },
            },
            ContentBlock::Image {
                source: ImageSource::Base64 {
                    media_type: "image/png".into(),
                    data: "iVBORw0KGgo=".into(),
                },
            },
            ContentBlock::Document {
                source: DocumentSource::Base64 {
                    media_type: "application/pdf".into(),
                    data: "JVBERi0=".into(),
                },
                title: Some("report.pdf".into()),
            },
        ],
    )
}

#[test]
fn request_bodies_match_create_chat_completion_request() {
    let validator = validator("CreateChatCompletionRequest");
    let tool = ToolSpec {
        name: "get_weather".into(),
        description: "Weather for a city".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    };
    let conversation = vec![
        mixed_media_prompt(),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    thinking: "hmm".into(),
                    signature: None,
                },
                ContentBlock::ToolUse {
                    id: "call_a".into(),
                    name: "get_weather".into(),
                    input: json!({"city": "Oslo"}),
                },
                ContentBlock::ToolUse {
                    id: "call_b".into(),
                    name: "get_weather".into(),
                    input: json!({"city": "Rome"}),
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::ToolResult {
                    tool_use_id: "call_a".into(),
                    content: ToolResultContent::Parts(vec![ContentBlock::text("3C, the map:"), png()]),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "call_b".into(),
                    content: ToolResultContent::Parts(vec![ContentBlock::text("timeout")]),
                    is_error: true,
                },
                ContentBlock::text("Which is warmer?"),
            ],
        ),
    ];
    let mut variants = Vec::new();
    let mut base = StreamOptions::new("gpt-4o", conversation);
    base.system = Some("Be brief.".into());
    base.tools = vec![tool];
    variants.push(base.clone());
    let mut v = base.clone();
    v.tool_choice = Some(ToolChoice::Tool {
        name: "get_weather".into(),
    });
    v.max_tokens = Some(256);
    v.temperature = Some(0.5);
    variants.push(v);
    let mut v = base.clone();
    v.model = "o4-mini".into();
    v.thinking = ThinkingLevel::High;
    v.tool_choice = Some(ToolChoice::Any);
    variants.push(v);
    let mut v = StreamOptions::new("gpt-4o", vec![Message::user("Give me JSON.")]);
    v.response_schema = Some(json!({"type": "object", "properties": {"answer": {"type": "string"}}}));
    v.tool_choice = Some(ToolChoice::None);
    variants.push(v);

    for (i, options) in variants.iter().enumerate() {
        let dialect = Dialect {
            reasoning_effort: true,
            ..Dialect::default()
        };
        let body: Value = serde_json::from_slice(&openai::request_body(options, dialect)).unwrap();
        assert_valid(&validator, &body, &format!("request variant {i}"));
    }
    // A `tool` message is text only: the image a tool returned follows the
    // results in a user message.
    let body: Value = serde_json::from_slice(&openai::request_body(&variants[0], Dialect::default())).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let tail: Vec<&Value> = messages.iter().skip(3).collect();
    assert_eq!(
        tail,
        [
            &json!({"role": "tool", "tool_call_id": "call_a", "content": "3C, the map:"}),
            &json!({"role": "tool", "tool_call_id": "call_b", "content": "timeout"}),
            &json!({"role": "user", "content": [
                {"type": "text", "text": "The images the tool results above returned:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "text", "text": "Which is warmer?"},
            ]}),
        ]
    );
}

/// A small inline PNG.
pub(crate) fn png() -> ContentBlock {
    ContentBlock::Image {
        source: ImageSource::Base64 {
            media_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        },
    }
}

#[test]
fn recorded_chunks_match_create_chat_completion_stream_response() {
    let validator = validator("CreateChatCompletionStreamResponse");
    let mut checked = 0;
    for name in fixture_files("openai-chat") {
        let events: Vec<SseEvent> = sse_events(&fixture(&format!("openai-chat/{name}")), &[]);
        for event in events.iter().filter(|e| e.data.as_ref() != b"[DONE]") {
            let chunk: Value = serde_json::from_slice(&event.data).unwrap();
            assert_valid(&validator, &chunk, &format!("a chunk of {name}"));
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} chunks checked");
}

#[test]
fn the_validator_rejects_a_wrong_body() {
    let validator = validator("CreateChatCompletionRequest");
    assert!(!validator.is_valid(&json!({"model": "gpt-4o", "messages": [{"role": "wizard", "content": "hi"}]})));
    assert!(!validator.is_valid(&json!({"messages": []})));
}
