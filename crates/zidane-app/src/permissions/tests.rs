use serde_json::json;
use zidane::agent::{ToolCall, ToolCallVerdict};

use super::{Permissions, Rule};
use crate::config::{RuleKind, RuleText};
use crate::settings::Approve;

fn rules(list: &[(RuleKind, &str)]) -> Vec<RuleText> {
    list.iter()
        .map(|(kind, rule)| RuleText {
            kind: *kind,
            rule: (*rule).to_owned(),
            origin: "config.toml:3".into(),
        })
        .collect()
}

fn call(name: &str, input: serde_json::Value) -> ToolCall {
    ToolCall {
        name: name.into(),
        call_id: "c1".into(),
        input,
        run_id: "r1".into(),
        session_id: None,
        parent_run_id: None,
        depth: 0,
    }
}

/// What each call gets: `allow`, `ask`, or `deny: <reason>`.
fn verdict(p: &Permissions, name: &str, input: serde_json::Value) -> String {
    match p.decide(&call(name, input)) {
        ToolCallVerdict::Allow => "allow".into(),
        ToolCallVerdict::Ask { reason: None } => "ask".into(),
        ToolCallVerdict::Ask { reason: Some(r) } => format!("ask: {r}"),
        ToolCallVerdict::Deny { reason } => format!("deny: {reason}"),
        ToolCallVerdict::Rewrite { .. } => "rewrite".into(),
    }
}

#[test]
fn the_rule_table_case_by_case() {
    use RuleKind::{Allow, Ask, Deny};
    let p = Permissions::new(
        &rules(&[
            (Allow, "shell(cargo test:*)"),
            (Allow, "shell(git status)"),
            (Allow, "shell(echo *)"),
            (Allow, "write_file(src/**)"),
            (Allow, "edit(**/*.rs)"),
            (Allow, "mcp__github__*"),
            (Allow, "web_fetch(domain:docs.rs)"),
            (Ask, "shell(git push:*)"),
            (Deny, "shell(rm -rf:*)"),
            (Deny, "read_file(.env)"),
            (Deny, "Bash(curl:*)"),
        ]),
        Approve::Ask,
        std::path::Path::new("/work/p"),
    )
    .unwrap();
    let shell = |c: &str| verdict(&p, "shell", json!({ "command": c }));
    let denied_rm = "deny: denied by the permission rule `shell(rm -rf:*)` (config.toml:3)";
    let cases: Vec<(&str, String, &str)> = vec![
        ("cargo test", shell("cargo test"), "allow"),
        ("cargo test -p x", shell("cargo   test -p x"), "allow"),
        ("cargo testing", shell("cargo testing"), "ask"),
        ("git status", shell("git status"), "allow"),
        ("git status -s (exact only)", shell("git status -s"), "ask"),
        ("both parts allowed", shell("cargo test && git status"), "allow"),
        ("one part not allowed", shell("cargo test; ls"), "ask"),
        ("cargo test && rm -rf /", shell("cargo test && rm -rf /"), denied_rm),
        ("piped", shell("echo hi | rm -rf /"), denied_rm),
        ("command substitution", shell("echo $(whoami)"), "ask"),
        ("backticks", shell("echo `whoami`"), "ask"),
        ("rm inside a substitution", shell("echo $(rm -rf /)"), denied_rm),
        ("process substitution", shell("echo <(ls)"), "ask"),
        ("redirect inside", shell("echo hi > out.txt"), "allow"),
        ("redirect to /dev/null", shell("echo hi 2>&1 > /dev/null"), "allow"),
        ("redirect outside", shell("echo hi > /etc/passwd"), "ask"),
        ("redirect up and out", shell("echo hi >> ../x"), "ask"),
        ("operators in quotes", shell("echo 'a && rm -rf /'"), "allow"),
        (
            "ask rule",
            shell("git push origin main"),
            "ask: the permission rule `shell(git push:*)` (config.toml:3) asks",
        ),
        (
            "Claude Code name",
            shell("curl example.com"),
            "deny: denied by the permission rule `Bash(curl:*)` (config.toml:3)",
        ),
        (
            "write in src",
            verdict(&p, "write_file", json!({"path": "src/a/b.txt"})),
            "allow",
        ),
        (
            "write outside src",
            verdict(&p, "write_file", json!({"path": "docs/a.md"})),
            "ask",
        ),
        (
            "absolute path in the folder",
            verdict(&p, "write_file", json!({"path": "/work/p/src/x"})),
            "allow",
        ),
        (
            "edit a .rs file",
            verdict(&p, "edit", json!({"path": "main.rs"})),
            "allow",
        ),
        (
            "multi_edit is an edit",
            verdict(&p, "multi_edit", json!({"path": "a/b.rs"})),
            "allow",
        ),
        (
            "edit another file",
            verdict(&p, "edit", json!({"path": "a.toml"})),
            "ask",
        ),
        (
            "read .env",
            verdict(&p, "read_file", json!({"path": ".env"})),
            "deny: denied by the permission rule `read_file(.env)` (config.toml:3)",
        ),
        (
            "read a nested .env",
            verdict(&p, "read_file", json!({"path": "sub/.env"})),
            "deny: denied by the permission rule `read_file(.env)` (config.toml:3)",
        ),
        (
            "read another file",
            verdict(&p, "read_file", json!({"path": "README.md"})),
            "allow",
        ),
        (
            "an MCP server's tool",
            verdict(&p, "mcp_github_create_issue", json!({})),
            "allow",
        ),
        ("another server's tool", verdict(&p, "mcp_gitlab_x", json!({})), "ask"),
        (
            "web_fetch on the domain",
            verdict(&p, "web_fetch", json!({"url": "https://docs.rs/tokio"})),
            "allow",
        ),
        (
            "web_fetch on a sub-domain",
            verdict(&p, "web_fetch", json!({"url": "https://x.docs.rs/"})),
            "allow",
        ),
        (
            "web_fetch elsewhere",
            verdict(&p, "web_fetch", json!({"url": "https://evil-docs.rs/"})),
            "ask",
        ),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(_, got, want)| got != want)
        .map(|(what, got, want)| format!("{what}: got `{got}`, want `{want}`"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_mode_decides_what_no_rule_covers_and_deny_holds_under_yolo() {
    let rules = rules(&[
        (RuleKind::Deny, "shell(rm:*)"),
        (RuleKind::Ask, "write_file(secrets/**)"),
    ]);
    let cwd = std::path::Path::new("/w");
    let yolo = Permissions::new(&rules, Approve::Yolo, cwd).unwrap();
    assert_eq!(verdict(&yolo, "shell", json!({"command": "ls"})), "allow");
    assert!(verdict(&yolo, "shell", json!({"command": "rm x"})).starts_with("deny: "));
    assert!(verdict(&yolo, "write_file", json!({"path": "secrets/k"})).starts_with("ask: "));
    let auto = Permissions::new(&[], Approve::AutoEdit, cwd).unwrap();
    assert_eq!(verdict(&auto, "write_file", json!({"path": "a"})), "allow");
    assert_eq!(verdict(&auto, "shell", json!({"command": "ls"})), "ask");
    let ask = Permissions::new(&[], Approve::Ask, cwd).unwrap();
    assert_eq!(verdict(&ask, "edit", json!({"path": "a"})), "ask");
    assert_eq!(verdict(&ask, "read_file", json!({"path": "a"})), "allow");
}

#[test]
fn bad_rules_say_what_is_wrong() {
    let err = |r: &str| Rule::parse(r, "").unwrap_err();
    assert_eq!(err("shell(cargo"), "`shell(cargo`: the specifier must end with `)`");
    assert_eq!(err("shell()"), "`shell()`: the specifier is empty");
    assert_eq!(
        err("web_fetch(docs.rs)"),
        "`web_fetch(docs.rs)`: web_fetch rules take `domain:HOST`"
    );
    assert!(err("rm -rf").contains("is not a rule"));
}
