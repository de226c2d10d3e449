use super::*;

#[test]
fn the_reference_examples_are_found_and_retargeted() {
    let path = root().join("../shared/spec/zidane-agent-reference.md");
    let reference = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let examples = reference_examples(&reference);
    assert_eq!(examples.len(), 3, "{examples:#?}");
    assert!(examples[0].contains("createAgent({ ...basic, provider: anthropic() })"));
    assert!(examples[1].contains("system: 'You are a helpful assistant.'"));
    assert!(examples[2].contains("createRunSummaryCollector({"));
    for example in &examples {
        assert!(!example.contains("from 'zidane"), "{example}");
        assert!(example.contains("from '@zidane-rs/agent'"), "{example}");
        assert!(!example.contains("~~~"), "{example}");
    }
}

#[test]
fn the_readme_quick_start_is_found() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap_or_else(|e| panic!("README.md: {e}"));
    let block = readme_quick_start(&readme).unwrap_or_else(|| panic!("no quick start"));
    assert!(block.starts_with("import { createAgent"), "{block}");
    assert!(block.contains("await agent.destroy()"), "{block}");
}
