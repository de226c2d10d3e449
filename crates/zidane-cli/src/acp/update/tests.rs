use std::path::Path;

use serde_json::json;
use zidane_app::{Event, ToolResultEvent};

use super::from_event;

#[test]
fn an_edit_s_diagnostics_are_content_of_the_tool_call_update() {
    let report = zidane::lsp::EditReport {
        server: "pyright".into(),
        path: "app.py".into(),
        errors: 1,
        new: 1,
        findings: vec![zidane::lsp::Finding {
            path: "app.py".into(),
            line: 6,
            column: 13,
            severity: "error".into(),
            message: "Type mismatch".into(),
            new: true,
        }],
        ..Default::default()
    };
    let result = |diagnostics| {
        Event::ToolResult(ToolResultEvent {
            id: "c1".into(),
            name: "write_file".into(),
            input: json!({"path": "app.py", "content": "x"}),
            content: zidane::providers::ToolResultContent::Text("Wrote 1 byte to `app.py`.".into()),
            is_error: false,
            child: None,
            diagnostics,
        })
    };
    let updates = from_event(&result(Some(report)), Path::new("/w"));
    let texts: Vec<&str> = updates[0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["content"]["text"].as_str())
        .collect();
    assert!(
        texts.contains(&"✗ 1 error (1 new) (pyright)\napp.py:6:13 error (new) Type mismatch"),
        "{updates:?}"
    );
    assert_eq!(updates[0]["_meta"]["zidane"]["diagnostics"]["errors"], 1);

    let plain = from_event(&result(None), Path::new("/w"));
    assert!(plain[0].get("_meta").is_none());
    assert!(!plain[0]["content"].to_string().contains("pyright"));
}
