use serde_json::json;

use super::*;

fn src(text: &str) -> Vec<(PathBuf, String)> {
    vec![(PathBuf::from("src/lib.rs"), text.to_owned())]
}

fn members() -> BTreeSet<String> {
    ["zidane-core", "zidane-loop", "zidane"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

#[test]
fn the_edge_table_is_read_from_the_document() {
    let doc = "intro\n<!-- crate-graph:start -->\n| crate | may depend on |\n|---|---|\n| `a` | nothing |\n| `b` | `a`, `c` |\n<!-- crate-graph:end -->\n";
    let table = edge_table(doc).unwrap();
    assert_eq!(table["a"], BTreeSet::new());
    assert_eq!(table["b"], ["a", "c"].iter().map(|s| (*s).to_owned()).collect());
    assert!(edge_table("no markers").is_err());
}

#[test]
fn an_edge_outside_the_table_fails() {
    let table = edge_table("<!-- crate-graph:start -->\n| `b` | `a` |\n<!-- crate-graph:end -->").unwrap();
    assert!(check_edges("b", &["a".into()], &table).is_empty());
    assert_eq!(
        check_edges("b", &["c".into()], &table),
        vec!["b -> c: edge not allowed by the crate graph"]
    );
    assert_eq!(check_edges("z", &[], &table).len(), 1, "a crate outside the table");
}

#[test]
fn a_declared_edge_the_code_never_names_fails() {
    let edges = vec!["zidane-core".to_owned(), "zidane-loop".to_owned()];
    let problems = check_edges_used("zidane-agent", &edges, &src("use zidane_core::Tool;\n"));
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0].starts_with("zidane-agent -> zidane-loop: declared but not used"),
        "{problems:?}"
    );
}

#[test]
fn a_reexport_of_another_workspace_crate_fails_outside_the_facade() {
    let code = "pub use zidane_core::events::CacheBreakInfo;\npub(crate) use zidane_core::Tool;\npub use self::x::Y;\n";
    let problems = check_no_reexports("zidane-loop", &members(), &src(code));
    assert_eq!(
        problems,
        vec!["src/lib.rs:1: `zidane-loop` re-exports `zidane-core`; only the facade re-exports other crates"]
    );
    assert!(check_no_reexports("zidane-core", &members(), &src("pub use crate::events;\n")).is_empty());
}

#[test]
fn a_dependency_versioned_in_a_member_fails() {
    let manifest = "[package]\nname = \"x\"\nversion = \"1\"\n\n[dependencies]\nserde.workspace = true\ntokio = { workspace = true, features = [\"rt\"] }\nregex = \"1\"\n\n[target.'cfg(unix)'.dependencies]\nrustix = { version = \"1\" }\n\n[features]\nhttp = [\"dep:x\"]\n";
    let problems = check_workspace_deps("x", manifest);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("`regex`") && problems[1].contains("`rustix`"));
}

#[test]
fn the_provider_without_http_must_not_pull_the_http_stack() {
    assert!(check_provider_without_http("zidane-provider v0.1.0\nbytes v1.0\nserde v1.0\n").is_empty());
    assert_eq!(
        check_provider_without_http("zidane-provider v0.1.0\ntokio v1.0\n"),
        vec!["zidane-provider without `http` pulls `tokio`"]
    );
}

#[test]
fn mcp_must_be_optional_and_on_by_default_in_the_facade() {
    let good = json!({"name": "zidane", "dependencies": [{"name": "zidane-mcp", "kind": null, "optional": true}],
        "features": {"default": ["http", "mcp"], "mcp": ["dep:zidane-mcp"]}});
    assert!(check_mcp_feature(&good).is_empty());
    let required = json!({"name": "zidane-agent", "dependencies": [{"name": "zidane-mcp", "kind": null, "optional": false}],
        "features": {}});
    assert_eq!(check_mcp_feature(&required).len(), 2);
    let off = json!({"name": "zidane", "dependencies": [], "features": {"default": [], "mcp": ["dep:zidane-mcp"]}});
    assert_eq!(
        check_mcp_feature(&off),
        vec!["zidane: `mcp` must be a default feature of the facade"]
    );
}

#[test]
fn long_functions_and_import_cycles_are_named() {
    let long = format!("fn long() {{\n{}}}\n", "    f();\n".repeat(5));
    let sources = vec![
        (PathBuf::from("src/a.rs"), format!("use crate::b::B;\n{long}")),
        (
            PathBuf::from("src/b.rs"),
            "use crate::a::long;\npub struct B;".to_owned(),
        ),
        (PathBuf::from("src/tests.rs"), long.clone()),
    ];
    let length = check_function_length("k", Path::new("src"), &sources, 4);
    assert_eq!(length, vec!["k: `long` (a.rs:2) is 7 lines; split it (the limit is 4)"]);
    let cycles = check_import_cycles("k", Path::new("src"), &sources);
    assert_eq!(cycles, vec!["k: 2 files import each other in a cycle: a, b"]);
}

#[test]
fn crates_and_features_must_be_documented() {
    let members: BTreeSet<String> = ["a".to_owned(), "b".to_owned()].into();
    assert_eq!(
        check_readme_crates(&members, "| `a` | the a crate |"),
        vec!["b: no row in the README's crate table"]
    );
    let facade = serde_json::json!({"features": {"default": ["x"], "x": [], "y": []}});
    let problems = check_features_documented(&facade, "- `x`: …", "//! `x` and `y`");
    assert_eq!(
        problems,
        vec!["feature `y` of the facade is not in the README's feature list"]
    );
}

#[test]
fn every_feature_of_every_crate_is_built_alone() {
    let metadata = serde_json::json!({"packages": [
        {"name": "a", "features": {"default": ["x"], "x": [], "y": ["x"]}},
        {"name": "b", "features": {}},
    ]});
    assert_eq!(
        feature_builds(&metadata),
        vec![
            ("a".to_owned(), None),
            ("a".to_owned(), Some("x".to_owned())),
            ("a".to_owned(), Some("y".to_owned())),
        ]
    );
}

#[test]
fn lints_and_placeholders() {
    assert!(has_workspace_lints("[lints]\nworkspace = true\n"));
    assert!(!has_workspace_lints("[lints.rust]\nunsafe_code = \"forbid\"\n"));
    assert_eq!(
        check_placeholders(&src("fn a() { todo!() }\n// todo!() in a comment\n")).len(),
        1
    );
}

#[test]
fn long_files_are_named_and_generated_ones_are_not() {
    let long = "fn a() {}\n".repeat(6);
    let sources = vec![
        (PathBuf::from("src/big.rs"), long.clone()),
        (
            PathBuf::from("src/generated.rs"),
            format!("// Generated from `x` by `y`; do not edit.\n{long}"),
        ),
        (PathBuf::from("src/small.rs"), "fn a() {}\n".to_owned()),
    ];
    assert_eq!(
        check_file_length("k", Path::new("src"), &sources, 5),
        vec!["k: big.rs is 6 lines; split it (the limit is 5)"]
    );
}

#[test]
fn inline_test_modules_are_named_and_test_files_are_not() {
    let sources = vec![
        (
            PathBuf::from("src/a.rs"),
            "fn a() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n".to_owned(),
        ),
        (
            PathBuf::from("src/b.rs"),
            "fn b() {}\n\n#[cfg(test)]\nmod tests;\n".to_owned(),
        ),
        (
            PathBuf::from("src/c.rs"),
            "// #[cfg(test)] mod tests { in a comment }\nconst S: &str = \"#[cfg(test)] mod x {\";\n".to_owned(),
        ),
    ];
    assert_eq!(
        check_inline_tests("k", Path::new("src"), &sources),
        vec!["k: a.rs:3 writes `mod tests` inline; move it to a `tests.rs` beside the module"]
    );
}

#[test]
fn the_node_addon_keeps_every_workspace_lint_but_unsafe_code() {
    let workspace = "[workspace.lints.rust]\nunsafe_code = \"forbid\"\nmissing_docs = \"warn\"\n\n[workspace.lints.clippy]\nunwrap_used = \"warn\"\n";
    let complete = "[lints.rust]\nmissing_docs = \"warn\"\n\n[lints.clippy]\nunwrap_used = \"warn\"\n";
    assert!(check_addon_lints("zidane-node", complete, workspace).is_empty());
    let lacking = "[lints.rust]\nmissing_docs = \"warn\"\n";
    assert_eq!(
        check_addon_lints("zidane-node", lacking, workspace),
        vec!["zidane-node: `[lints.clippy]` lacks the workspace's `unwrap_used=\"warn\"`".to_owned()]
    );
}
