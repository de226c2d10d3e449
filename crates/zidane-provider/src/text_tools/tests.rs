/// The prompt's example names the first offered tool with its required
/// arguments: a small model copied the placeholder name `TOOL` as it was.
#[test]
fn the_prompt_shows_a_real_call() {
    let mut options = crate::StreamOptions::new("m", Vec::new());
    options.tools = vec![crate::ToolSpec {
        name: "shell".into(),
        description: "Runs a command.".into(),
        input_schema: serde_json::json!({
            "type": "object",
            "properties": {"command": {"type": "string"}, "timeout_secs": {"type": "integer"}},
            "required": ["command", "timeout_secs"]
        }),
    }];
    let prompt = super::tools_prompt(&options);
    assert!(
        prompt.contains(
            "For example:\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\":\"…\",\"timeout_secs\":1}}\n</tool_call>\n"
        ),
        "{prompt}"
    );
    assert!(!prompt.contains("\"TOOL\""));
}

#[test]
fn calls_in_tags_alone_or_fenced_and_text_that_is_not_a_call() {
    let names: Vec<String> = ["write_file", "glob", "x"].map(String::from).to_vec();
    let parse_calls = |text: &str| super::parse_calls(text, &names);
    let (text, calls) = parse_calls(
        "I will write it.\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"b\"}}\n</tool_call>",
    );
    assert_eq!(text.trim(), "I will write it.");
    assert_eq!(
        calls,
        [("write_file".to_owned(), "{\"path\":\"a\",\"content\":\"b\"}".to_owned())]
    );
    let (text, calls) =
        parse_calls("```json\n{\"name\": \"glob\", \"arguments\": \"{\\\"pattern\\\": \\\"*.rs\\\"}\"}\n```");
    assert_eq!(text, "");
    assert_eq!(calls, [("glob".to_owned(), "{\"pattern\": \"*.rs\"}".to_owned())]);
    let (_, calls) = parse_calls("<tool_call>{\"name\": \"x\", \"arguments\": {'a': 1,},}</tool_call>");
    assert_eq!(calls, [("x".to_owned(), "{'a': 1,}".to_owned())]);
    for ordinary in [
        "The answer is 42.",
        "Use {\"name\": \"x\"} as a template.",
        "{\"name\": \"Ada\", \"age\": 36, \"city\": \"London\"}",
        "```json\n{\"items\": [1, 2]}\n```",
        "{\"name\": \"Ada\"}",
        "<tool_call>{\"name\": \"rm_everything\", \"arguments\": {}}</tool_call>",
    ] {
        let (text, calls) = parse_calls(ordinary);
        assert!(calls.is_empty(), "{ordinary}");
        assert_eq!(text, ordinary);
    }
}
