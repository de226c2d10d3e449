use super::*;
use zidane_core::ToolOutput;
use zidane_provider::{ContentBlock, Role, Timestamp, ToolResultContent};

fn key(call: &str) -> Key {
    Key {
        run: "r".into(),
        turn: 1,
        kind: StepKind::ToolCall.as_str().into(),
        name: call.into(),
    }
}

fn result(call: &str, text: &str, is_error: bool) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: call.into(),
        content: ToolResultContent::Text(text.into()),
        is_error,
    }
}

fn turn(role: Role, blocks: Vec<ContentBlock>) -> SessionTurn {
    SessionTurn {
        id: "t".into(),
        role,
        content: blocks.into(),
        created_at: Timestamp::from_millis(7),
        usage: None,
    }
}

/// A results turn refers to the tool steps whose outputs it holds, and
/// reads back as the same turn; a result that is not a step's output as
/// journaled (changed on its way to the model, another call's) stays
/// whole.
#[test]
fn tool_results_are_journaled_once_and_read_back_whole() {
    let (mut driver, _handles) = Driver::new(Start {
        turns: 0,
        tool_state: BTreeMap::new(),
        control_ids: ControlIds::new(),
    });
    driver
        .results
        .push_back((key("a"), ToolOutput::text("first output, long")));
    driver.results.push_back((key("b"), ToolOutput::text("second output")));
    let results = turn(
        Role::User,
        vec![
            result("a", "first output, long", false),
            // Transformed on its way to the model.
            result("b", "second output [trimmed]", false),
            // No step of this run.
            result("c", "third output", true),
        ],
    );

    let journaled = driver.journal_turns(std::slice::from_ref(&results));
    let json = serde_json::to_string(&journaled).unwrap();
    assert!(!json.contains("first output, long"), "{json}");
    assert!(json.contains("\"outputOf\""), "{json}");
    assert!(json.contains("second output [trimmed]"), "{json}");
    assert!(json.contains("third output"), "{json}");

    let read: Vec<JournalTurn> = serde_json::from_str(&json).unwrap();
    let back: Vec<SessionTurn> = read.into_iter().map(|t| driver.whole(t).unwrap()).collect();
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value([&results]).unwrap()
    );

    // A prompt, and results none of which a step holds, stay whole.
    let prompt = turn(Role::User, vec![ContentBlock::text("hello")]);
    let other = turn(Role::User, vec![result("c", "third output", true)]);
    for plain in [prompt, other] {
        let journaled = driver.journal_turns(std::slice::from_ref(&plain));
        assert!(matches!(journaled[..], [JournalTurn::Whole(_)]), "{journaled:?}");
    }

    // A results turn whose step the attempt has not read cannot be
    // rebuilt (and is reported, not stored wrong).
    driver.results.clear();
    let read: Vec<JournalTurn> = serde_json::from_str(&json).unwrap();
    assert!(driver.whole(read.into_iter().next().unwrap()).is_none());
}

/// Values still held (journaled in front of the `Turns` entry, in its
/// batch) are referred to as well: a turn of safe calls writes the
/// model's value, the calls' values and the turns together.
#[test]
fn turns_refer_to_values_held_for_the_same_entry() {
    let (mut driver, _handles) = Driver::new(Start {
        turns: 0,
        tool_state: BTreeMap::new(),
        control_ids: ControlIds::new(),
    });
    let call = ContentBlock::ToolUse {
        id: "a".into(),
        name: "read_file".into(),
        input: serde_json::json!({"path": "notes.txt"}),
    };
    let model = Key {
        kind: StepKind::ModelCall.as_str().into(),
        name: "model".into(),
        ..key("a")
    };
    driver.held.push(Entry::Done {
        key: model.clone(),
        value: Box::new(StepValue::Model(zidane_provider::AssistantMessage {
            id: None,
            model: None,
            content: vec![call.clone()],
            incomplete_tool_calls: Vec::new(),
            finish_reason: zidane_provider::FinishReason::ToolCalls,
            raw_reason: None,
            usage: Default::default(),
        })),
    });
    driver.held.push(Entry::Done {
        key: key("a"),
        value: Box::new(StepValue::Tool(ToolStep {
            outcome: ToolStepOutcome::Output(ToolOutput::text("the notes, at length")),
            state: Vec::new(),
            resume_state: Default::default(),
        })),
    });
    let turns = [
        turn(Role::Assistant, vec![call]),
        turn(Role::User, vec![result("a", "the notes, at length", false)]),
    ];
    let journaled = driver.journal_turns(&turns);
    assert!(
        matches!(&journaled[..], [JournalTurn::Answer(a), JournalTurn::Results(_)] if a.content_of == model),
        "{journaled:?}"
    );
    let json = serde_json::to_string(&journaled).unwrap();
    assert!(!json.contains("the notes, at length"), "{json}");
    assert!(!json.contains("notes.txt"), "{json}");
}
