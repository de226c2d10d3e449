use serde_json::json;
use zidane::providers::{SYSTEM_PROMPT_BOUNDARY, ToolSpec};

use super::{COMPACT_SYSTEM, is_small, system, tools};

#[test]
fn the_compact_form_is_for_windows_under_16k() {
    assert!(is_small(Some(8_192)));
    assert!(is_small(Some(15_999)));
    assert!(!is_small(Some(16_000)));
    assert!(!is_small(Some(200_000)));
    assert!(!is_small(None));
}

#[test]
fn the_system_prompt_keeps_what_follows_its_boundary() {
    let full = format!("A long lead.{SYSTEM_PROMPT_BOUNDARY}Working folder: /w");
    assert_eq!(
        system(&full),
        format!("{COMPACT_SYSTEM}{SYSTEM_PROMPT_BOUNDARY}Working folder: /w")
    );
}

fn spec(name: &str, description: &str, schema: &serde_json::Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: schema.clone(),
    }
}

#[test]
fn built_in_tools_shrink_and_others_stay() {
    let schema = json!({"type": "object", "properties": {
        "path": {"type": "string", "description": "The file."},
        "edits": {"type": "array", "items": {"type": "object", "properties": {"old_string": {"type": "string", "description": "x"}}}}
    }});
    let mut specs = vec![
        spec("multi_edit", "A long description of several edits.", &schema),
        spec("mcp__db__query", "Query the database.", &schema),
    ];
    tools(&mut specs);
    assert_eq!(
        specs[0].description,
        "Several `edit` replacements in one file, all or none."
    );
    assert_eq!(
        specs[0].input_schema,
        json!({"type": "object", "properties": {
            "path": {"type": "string"},
            "edits": {"type": "array", "items": {"type": "object", "properties": {"old_string": {"type": "string"}}}}
        }})
    );
    assert_eq!(specs[1].description, "Query the database.");
    assert_eq!(specs[1].input_schema, schema);
}

#[test]
fn rarely_used_parameters_are_not_shown() {
    let schema = json!({"type": "object", "properties": {
        "command": {"type": "string", "description": "The command line."},
        "cwd": {"type": "string"},
        "raw": {"type": "boolean"}
    }, "required": ["command"]});
    let mut specs = vec![spec("shell", "Run a command.", &schema)];
    tools(&mut specs);
    assert_eq!(
        specs[0].input_schema,
        json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]})
    );
}
