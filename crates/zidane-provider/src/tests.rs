use serde_json::json;

use crate::{
    ContentBlock, Message, Role, SessionTurn, StreamOptions, ToolResultContent, TurnUsage,
};

#[test]
fn unknown_blocks_survive_a_round_trip() {
    let raw = json!({"type": "compaction", "content": "summary", "extra": [1, 2]});
    let block: ContentBlock = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(block, ContentBlock::Unknown(raw.clone()));
    assert_eq!(serde_json::to_value(&block).unwrap(), raw);
}

#[test]
fn known_blocks_use_the_wire_tags() {
    let blocks = vec![
        ContentBlock::text("hi"),
        ContentBlock::ToolUse {
            id: "t1".into(),
            name: "shell".into(),
            input: json!({"cmd": "ls"}),
        },
        ContentBlock::ToolResult {
            tool_use_id: "t1".into(),
            content: ToolResultContent::Text("a\nb".into()),
            is_error: true,
        },
        ContentBlock::Thinking {
            thinking: "hmm".into(),
            signature: Some("sig".into()),
        },
    ];
    let value = serde_json::to_value(&blocks).unwrap();
    assert_eq!(
        value,
        json!([
            {"type": "text", "text": "hi"},
            {"type": "tool_use", "id": "t1", "name": "shell", "input": {"cmd": "ls"}},
            {"type": "tool_result", "tool_use_id": "t1", "content": "a\nb", "is_error": true},
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        ])
    );
    let back: Vec<ContentBlock> = serde_json::from_value(value).unwrap();
    assert_eq!(back, blocks);
}

#[test]
fn session_turns_serialize_in_camel_case() {
    let turn = SessionTurn {
        id: "turn-1".into(),
        role: Role::Assistant,
        content: Message::assistant("ok").into_content(),
        created_at: 1_700_000_000_000,
        usage: Some(TurnUsage {
            input: 10,
            output: 2,
            cache_read: 5,
            ..Default::default()
        }),
    };
    let value = serde_json::to_value(&turn).unwrap();
    assert_eq!(value["createdAt"], json!(1_700_000_000_000u64));
    assert_eq!(value["usage"]["cacheRead"], json!(5));
    assert_eq!(serde_json::from_value::<SessionTurn>(value).unwrap(), turn);
}

#[test]
fn system_halves_split_at_the_boundary() {
    let mut opts = StreamOptions::new("m", vec![]);
    assert_eq!(opts.system_halves(), None);
    opts.system = Some("static".into());
    assert_eq!(opts.system_halves(), Some(("static", None)));
    opts.system = Some(format!("a{}b", crate::SYSTEM_PROMPT_BOUNDARY));
    assert_eq!(opts.system_halves(), Some(("a", Some("b"))));
}
