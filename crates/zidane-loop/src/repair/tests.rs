use serde_json::json;

use super::*;

#[test]
fn each_repair_and_what_it_says() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            r#"{"path": "a.rs", "limit": 3,}"#,
            json!({"path": "a.rs", "limit": 3}),
            vec!["removed trailing commas"],
        ),
        (
            r#"{'path': 'a.rs'}"#,
            json!({"path": "a.rs"}),
            vec!["read single-quoted strings"],
        ),
        (
            r#"{path: "a.rs"}"#,
            json!({"path": "a.rs"}),
            vec!["quoted unquoted keys"],
        ),
        (
            r#"{"all": True, "x": None, "s": "True story"}"#,
            json!({"all": true, "x": null, "s": "True story"}),
            vec!["read Python's True / False / None as true / false / null"],
        ),
        (
            "```json\n{\"path\": \"a.rs\"}\n```",
            json!({"path": "a.rs"}),
            vec!["removed the Markdown code fence around the arguments"],
        ),
        (
            r#""{\"path\": \"a.rs\"}""#,
            json!({"path": "a.rs"}),
            vec!["read the arguments from the JSON string that held them"],
        ),
        (
            "```\n{path: 'a.rs', replace_all: False,}\n```",
            json!({"path": "a.rs", "replace_all": false}),
            vec![
                "removed the Markdown code fence around the arguments",
                "read Python's True / False / None as true / false / null",
                "removed trailing commas",
                "read single-quoted strings",
                "quoted unquoted keys",
            ],
        ),
    ];
    for (text, input, notes) in cases {
        assert_eq!(
            repair(text),
            Some(Repaired {
                input,
                notes: notes.into_iter().map(str::to_owned).collect()
            }),
            "{text}"
        );
    }
}

#[test]
fn what_cannot_be_repaired_unambiguously_is_not() {
    for text in [
        r#"{"path": "a.rs" "limit": 3}"#,
        r#"{"path": "a.rs""#,
        "[1, 2]",
        "path=a.rs",
        r#"{"ok": true}"#,
    ] {
        assert_eq!(repair(text), None, "{text}");
    }
    assert_eq!(
        example(
            &json!({"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["path", "limit"]})
        ),
        json!({"path": "…", "limit": 1})
    );
}
