//! Request bodies: insta snapshots of the wire shapes, memoized message
//! bytes, and OpenAI bodies validated against OpenAI's own schema.

use serde_json::{Value, json};
use zidane_provider::openai::{Dialect, MaxTokensField};
use zidane_provider::{
    CacheTtl, ContentBlock, ImageSource, Message, Role, SYSTEM_PROMPT_BOUNDARY, StreamOptions, ThinkingLevel,
    ToolChoice, ToolResultContent, ToolSpec, anthropic, openai,
};

fn body_json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("request bodies are JSON")
}

fn shell_tool() -> ToolSpec {
    ToolSpec {
        name: "shell".into(),
        description: "Run a shell command".into(),
        input_schema: json!({"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}),
    }
}

fn tool_round_trip() -> Vec<Message> {
    vec![
        Message::user("List the files."),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::text("Running ls."),
                ContentBlock::ToolUse {
                    id: "call_1".into(),
                    name: "shell".into(),
                    input: json!({"cmd": "ls"}),
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: "call_1".into(),
                content: ToolResultContent::Text("exit 1: permission denied".into()),
                is_error: true,
            }],
        ),
    ]
}

fn cases() -> Vec<(&'static str, StreamOptions)> {
    let mut plain = StreamOptions::new("claude-sonnet-4-5", vec![Message::user("Say hello.")]);
    plain.max_tokens = Some(1024);

    let mut tools = StreamOptions::new("claude-sonnet-4-5", tool_round_trip());
    tools.system = Some("You are terse.".into());
    tools.tools = vec![shell_tool()];
    tools.tool_choice = Some(ToolChoice::Auto);

    let mut thinking = StreamOptions::new(
        "claude-sonnet-4-5",
        vec![
            Message::user("What is 2+2?"),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::Thinking {
                        thinking: "Simple sum.".into(),
                        signature: Some("EqQBCkYIBRgCKkA".into()),
                    },
                    ContentBlock::RedactedThinking {
                        data: "EmwKAhgB".into(),
                    },
                    ContentBlock::text("4"),
                ],
            ),
            Message::user("And 3+3?"),
        ],
    );
    thinking.thinking = ThinkingLevel::Medium;
    thinking.temperature = Some(0.2);

    let mut cache = StreamOptions::new("claude-sonnet-4-5", tool_round_trip());
    cache.system = Some(format!("Static rules.{SYSTEM_PROMPT_BOUNDARY}Today is Monday."));
    cache.tools = vec![shell_tool()];
    cache.cache_ttl = Some(CacheTtl::OneHour);

    let image = StreamOptions::new(
        "claude-sonnet-4-5",
        vec![Message::new(
            Role::User,
            vec![
                ContentBlock::Image {
                    source: ImageSource::Base64 {
                        media_type: "image/png".into(),
                        data: "iVBORw0KGgo=".into(),
                    },
                },
                ContentBlock::Image {
                    source: ImageSource::Url {
                        url: "https://example.com/cat.jpg".into(),
                    },
                },
                ContentBlock::text("What is in these images?"),
            ],
        )],
    );

    let tool_error = StreamOptions::new("claude-sonnet-4-5", tool_round_trip());

    vec![
        ("plain", plain),
        ("tools", tools),
        ("thinking", thinking),
        ("cache_breakpoints", cache),
        ("images", image),
        ("tool_error", tool_error),
    ]
}

#[test]
fn anthropic_request_bodies() {
    for (name, options) in cases() {
        let request = anthropic::request_body(&options);
        insta::assert_json_snapshot!(
            format!("anthropic_{name}"),
            json!({
                "betas": request.betas,
                "body": body_json(&request.body),
            })
        );
    }
}

#[test]
fn anthropic_cache_breakpoints_are_placed_and_bounded() {
    for (name, options) in cases() {
        let body = String::from_utf8(anthropic::request_body(&options).body.to_vec()).unwrap();
        let breakpoints = body.matches("cache_control").count();
        assert!(breakpoints <= 4, "{name}: {breakpoints} breakpoints");
        assert!(
            !body.contains(SYSTEM_PROMPT_BOUNDARY),
            "{name}: the boundary marker never reaches the wire"
        );
    }
    let (_, cache) = cases().remove(3);
    let body = body_json(&anthropic::request_body(&cache).body);
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    assert_eq!(body["system"][1], json!({"type": "text", "text": "Today is Monday."}));
    assert_eq!(
        body["messages"][2]["content"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    assert!(
        body["tools"][0].get("cache_control").is_none(),
        "the system breakpoint already covers the tools"
    );
}

#[test]
fn message_bytes_are_memoized_until_a_message_changes() {
    let (_, mut options) = cases().remove(1);
    let first = anthropic::request_body(&options).body;
    let again = anthropic::request_body(&options).body;
    assert_eq!(first, again, "identical options give identical bytes");

    // Appending a turn leaves the earlier messages' bytes in place.
    options.messages.push(Message::assistant("Done."));
    options.messages.push(Message::user("Thanks."));
    let grown = anthropic::request_body(&options).body;
    let grown = body_json(&grown);
    assert_eq!(grown["messages"].as_array().unwrap().len(), 5);

    // Editing a message through `content_mut` is seen on the next build.
    options.messages[0].content_mut()[0] = ContentBlock::text("List the hidden files.");
    let edited = body_json(&anthropic::request_body(&options).body);
    assert_eq!(
        edited["messages"][0]["content"][0]["text"],
        json!("List the hidden files.")
    );
    let edited = body_json(&openai::request_body(&options, Dialect::default()));
    assert_eq!(edited["messages"][1]["content"], json!("List the hidden files."));
}

#[test]
fn openai_request_bodies() {
    let dialect = Dialect {
        max_tokens_field: MaxTokensField::MaxCompletionTokens,
        reasoning_effort: true,
        prompt_progress: false,
    };
    for (name, mut options) in cases() {
        options.model = "gpt-4o".into();
        let body = body_json(&openai::request_body(&options, dialect));
        insta::assert_json_snapshot!(format!("openai_{name}"), body);
    }
    let (_, mut plain) = cases().remove(0);
    plain.model = "llama3".into();
    let compat = body_json(&openai::request_body(&plain, Dialect::default().with_max_tokens()));
    assert_eq!(compat["max_tokens"], json!(1024));
    assert!(compat.get("max_completion_tokens").is_none());
}

trait WithMaxTokens {
    fn with_max_tokens(self) -> Self;
}

impl WithMaxTokens for Dialect {
    fn with_max_tokens(mut self) -> Self {
        self.max_tokens_field = MaxTokensField::MaxTokens;
        self
    }
}

/// A reference nobody resolved is sent as a line of text in both formats,
/// never as a block the API does not know.
#[test]
fn an_unresolved_content_ref_goes_out_as_text() {
    let message = Message::new(
        Role::User,
        vec![
            ContentBlock::text("What is in it?"),
            ContentBlock::ContentRef {
                reference: "blob://7".into(),
                kind: "image".into(),
                media_type: Some("image/png".into()),
            },
        ],
    );
    let options = StreamOptions::new("m", vec![message]);
    let anthropic = body_json(&anthropic::request_body(&options).body);
    let block = &anthropic["messages"][0]["content"][1];
    assert_eq!(
        (&block["type"], &block["text"]),
        (&json!("text"), &json!("[image `blob://7` is not available]"))
    );
    let openai = body_json(&openai::request_body(&options, Dialect::default()));
    assert!(
        openai["messages"][0]["content"]
            .to_string()
            .contains("[image `blob://7` is not available]"),
        "{openai}"
    );
}
