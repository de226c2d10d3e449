//! The package's generated files are in step with the hook vocabulary.

use std::path::Path;

use crate::hookgen;

fn table() -> Vec<hookgen::Hook> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../zidane-core/src/events/hooks.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    hookgen::parse(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// Compares `file` with `fresh`; rewrites it when stale (so a run of the
/// tests after a vocabulary change leaves the package in step) and fails.
fn check(file: &str, fresh: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("npm").join(file);
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    if old != fresh {
        std::fs::write(&path, fresh).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        panic!("npm/{file} was stale and has been rewritten from hooks.txt; run the tests again");
    }
}

#[test]
fn hook_names_and_types_are_generated_from_the_vocabulary() {
    let hooks = table();
    assert_eq!(hooks.len(), 122, "the reference has 122 hooks");
    assert_eq!(
        hooks.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
        zidane::agent::CATALOGUE.iter().map(|h| h.name).collect::<Vec<_>>(),
        "the table and the Rust catalogue list the same hooks in the same order"
    );
    for (hook, info) in hooks.iter().zip(zidane::agent::CATALOGUE) {
        assert_eq!(
            hook.mutable, info.mutable,
            "{}: whether handlers' answers are read back",
            hook.name
        );
    }
    check("hooks.js", &hookgen::js(&hooks));
    check("hooks.d.ts", &hookgen::dts(&hooks));
}

#[test]
fn decision_payloads_are_camel_case_and_writable() {
    let hooks = table();
    let gate = hooks
        .iter()
        .find(|h| h.name == "tool:gate")
        .unwrap_or_else(|| panic!("no tool:gate"));
    let dts = hookgen::dts(&hooks);
    assert!(gate.mutable);
    assert!(dts.contains("'tool:gate': (ctx: { readonly name: string; readonly callId: string; input: any;"));
    assert!(dts.contains("block: boolean"));
    assert!(dts.contains("reason: string"));
    let glue = hookgen::rust(&hooks);
    assert!(glue.contains("if let Some(v) = answer.get(\"block\")"));
    assert!(glue.contains("\"child:tool:gate\" => Some(on::<ChildToolGate>"));
}
