//! `zidane review` on real git repositories built here (a planted
//! off-by-one, a planted SQL injection, a harmless rename, a binary file,
//! a lockfile and a generated file), against a scripted model that
//! reports findings through `report_finding`.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use zidane_bench::loopback::{answer_sse, call_sse};

use super::acp::{Agent, prompt};
use super::conventions::KEY;
use super::session::Setup;
use super::{server_with, text, zidane};

const PAGER: &str = "def page(items, size):\n    \"\"\"Split items into pages of size.\"\"\"\n    pages = []\n    for i in range(0, len(items), size):\n        pages.append(items[i:i + size])\n    return pages\n\n\ndef last_index(items):\n    return len(items) - 1\n";
const DB: &str = "import sqlite3\n\n\ndef find_user(conn, name):\n    cur = conn.cursor()\n    cur.execute(\"SELECT id, name FROM users WHERE name = ?\", (name,))\n    return cur.fetchone()\n";
const UTIL: &str = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n";

/// The planted off-by-one (line 10 of `pager.py`).
const OFF_BY_ONE: &str = "return len(items)  # index of the last item";
/// The planted SQL injection (line 6 of `db.py`).
const INJECTION: &str = "WHERE name = '";

/// `git ARGS` in `dir`; its standard output.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_owned()
}

fn write(dir: &Path, path: &str, content: impl AsRef<[u8]>) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// The repository: `main` with the clean files; `feature` with three
/// commits (the off-by-one, the injection, a rename with a binary file, a
/// lockfile and a generated file). Returns the commits' ids.
fn repository(dir: &Path) -> [String; 3] {
    git(dir, &["init", "-q", "-b", "main"]);
    write(dir, "pager.py", PAGER);
    write(dir, "db.py", DB);
    write(dir, "util.py", UTIL);
    write(dir, ".gitattributes", "gen/** linguist-generated=true\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "clean"]);
    git(dir, &["checkout", "-qb", "feature"]);
    write(dir, "pager.py", PAGER.replace("return len(items) - 1", OFF_BY_ONE));
    git(dir, &["commit", "-qam", "last index"]);
    let first = git(dir, &["rev-parse", "HEAD"]);
    let injected = DB.replace(
        "\"SELECT id, name FROM users WHERE name = ?\", (name,)",
        "\"SELECT id, name FROM users WHERE name = '\" + name + \"'\"",
    );
    write(dir, "db.py", injected);
    git(dir, &["commit", "-qam", "simpler query"]);
    let second = git(dir, &["rev-parse", "HEAD"]);
    git(dir, &["mv", "util.py", "helpers.py"]);
    write(dir, "logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01");
    write(dir, "package-lock.json", "{\"lockfileVersion\": 3}\n");
    write(dir, "gen/schema.py", "SCHEMA = 1\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "rename util"]);
    let third = git(dir, &["rev-parse", "HEAD"]);
    [first, second, third]
}

/// The calls the scripted reviewer makes for a request body, in order; a
/// call is made per tool result already in the body.
fn calls(body: &str) -> Vec<(&'static str, Value)> {
    let mut calls = Vec::new();
    if body.contains("Focus on: try a write") {
        calls.push(("write_file", json!({ "path": "pwned.txt", "content": "x" })));
    }
    if body.contains(OFF_BY_ONE) {
        // First outside the diff without a reason (refused), then right,
        // then the same place again (merged).
        calls.push((
            "report_finding",
            json!({ "priority": "P1", "category": "correctness", "title": "Off by one", "body": "x",
                    "path": "pager.py", "start_line": 1, "confidence": 0.9 }),
        ));
        calls.push((
            "report_finding",
            json!({ "priority": "P1", "category": "correctness", "title": "last_index is off by one",
                    "body": "len(items) is one past the last index; return len(items) - 1.",
                    "path": "pager.py", "start_line": 10, "end_line": 10, "confidence": 0.95 }),
        ));
        calls.push((
            "report_finding",
            json!({ "priority": "P2", "category": "correctness", "title": "Wrong last index",
                    "body": "An empty list gives 0, not -1.", "path": "pager.py", "start_line": 10,
                    "confidence": 0.6 }),
        ));
    }
    if body.contains(INJECTION) {
        calls.push((
            "report_finding",
            json!({ "priority": "P0", "category": "security", "title": "SQL injection in find_user",
                    "body": "The name is concatenated into the query; pass it as a parameter.",
                    "path": "db.py", "start_line": 6, "confidence": 0.99 }),
        ));
    }
    for n in 1..=3 {
        if body.contains(&format!("+++ b/big_{n}.py")) {
            calls.push((
                "report_finding",
                json!({ "priority": "P2", "category": "maintainability", "title": format!("big_{n} is long"),
                        "body": "Split it.", "path": format!("big_{n}.py"), "start_line": 1, "confidence": 0.5 }),
            ));
        }
    }
    calls
}

/// The scripted reviewer: the next call, else a closing paragraph.
fn reviewer(body: &str) -> String {
    let done = body.matches("\"tool_use_id\"").count();
    match calls(body).get(done) {
        Some((name, input)) => call_sse(&format!("toolu_{done}"), name, input, 400),
        None => answer_sse("Reviewed the change.", 400),
    }
}

struct Repo {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    url: String,
    bodies: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    commits: [String; 3],
}

impl Repo {
    async fn new() -> Repo {
        let (url, bodies) = server_with(None, reviewer).await;
        let work = tempfile::tempdir().unwrap();
        let commits = repository(work.path());
        Repo {
            home: tempfile::tempdir().unwrap(),
            work,
            url,
            bodies,
            commits,
        }
    }

    async fn review(&self, args: &[&str]) -> Output {
        self.bodies.lock().unwrap().clear();
        let mut all = vec!["review", "--base-url", self.url.as_str()];
        all.extend_from_slice(args);
        zidane(self.home.path(), self.work.path(), &[KEY], &all).await
    }

    /// The first request of the last review (the one with the diff).
    fn first_body(&self) -> String {
        self.bodies.lock().unwrap().first().cloned().unwrap()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.work.path().join(name)
    }
}

fn json_of(out: &Output) -> Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_right_diff_reaches_the_model_for_each_mode() {
    let repo = Repo::new().await;
    // The repository's REVIEW.md and the person's instructions reach the
    // prompt too.
    write(repo.work.path(), "REVIEW.md", "Money is always in cents.\n");
    let notes = repo.home.path().join("notes.md");
    std::fs::write(&notes, "Be brief about style.\n").unwrap();
    let out = repo
        .review(&["--commit", &repo.commits[0], "--instructions", notes.to_str().unwrap()])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = repo.first_body();
    assert!(
        body.contains(OFF_BY_ONE) && body.contains("-    return len(items) - 1"),
        "{body}"
    );
    assert!(body.contains("Money is always in cents.") && body.contains("Be brief about style."));
    std::fs::remove_file(repo.path("REVIEW.md")).unwrap();
    assert!(!body.contains(INJECTION) && !body.contains("helpers.py"), "{body}");

    repo.review(&["--base", "main"]).await;
    let body = repo.first_body();
    assert!(body.contains(OFF_BY_ONE) && body.contains(INJECTION), "{body}");
    assert!(
        body.contains("rename from util.py") && body.contains("rename to helpers.py"),
        "{body}"
    );
    assert!(
        !body.contains("lockfileVersion") && !body.contains("SCHEMA = 1"),
        "{body}"
    );

    let range = format!("{}..{}", repo.commits[0], repo.commits[1]);
    repo.review(&[&range]).await;
    let body = repo.first_body();
    assert!(body.contains(INJECTION) && !body.contains(OFF_BY_ONE), "{body}");

    // Staged, unstaged and untracked; nothing committed.
    write(repo.work.path(), "staged.py", "# staged\n");
    git(repo.work.path(), &["add", "staged.py"]);
    write(repo.work.path(), "helpers.py", format!("{UTIL}# unstaged\n"));
    write(repo.work.path(), "notes.py", "UNTRACKED = True\n");
    repo.review(&["--uncommitted"]).await;
    let body = repo.first_body();
    for wanted in ["+# staged", "+# unstaged", "+UNTRACKED = True", "b/notes.py"] {
        assert!(body.contains(wanted), "{wanted} missing: {body}");
    }
    assert!(!body.contains(OFF_BY_ONE) && !body.contains(INJECTION), "{body}");
    // The review offers no tool that writes or runs.
    let tools: Vec<String> = serde_json::from_str::<Value>(&body).unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(tools.contains(&"report_finding".to_owned()), "{tools:?}");
    for writer in ["write_file", "edit", "multi_edit", "shell"] {
        assert!(!tools.contains(&writer.to_owned()), "{tools:?}");
    }

    let bad = repo.review(&["--base", "no-such-branch"]).await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("no-such-branch"), "{}", text(&bad.stderr));
}

/// The SARIF 2.1.0 schema as the `@microsoft/jest-sarif` package ships it
/// (`cargo xtask sarif-schema`).
fn sarif_validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/sarif-schema/node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; `cargo xtask sarif-schema` installs the SARIF schema the tests use",
            path.display()
        )
    });
    // Two patterns of the schema (the `language` of a run and of a tool
    // component) have a stray `]`, a literal in ECMA-262 regular
    // expressions, which the validator's dialect refuses: it is escaped,
    // the same expression.
    let stray = r#"-[a-zA-Z]{2}]?$""#;
    assert_eq!(text.matches(stray).count(), 2);
    let text = text.replace(stray, r#"-[a-zA-Z]{2}\\]?$""#);
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .build(&schema)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn findings_land_in_json_sarif_and_markdown_with_stable_fingerprints() {
    let repo = Repo::new().await;
    let (sarif, markdown) = (repo.path("out.sarif"), repo.path("out.md"));
    let args = [
        "--json",
        "--base",
        "main",
        "--sarif",
        sarif.to_str().unwrap(),
        "--markdown",
        markdown.to_str().unwrap(),
    ];
    let report = json_of(&repo.review(&args).await);
    assert_eq!(report["schema"], "zidane.review/1");
    assert_eq!(report["target"], json!({ "mode": "base", "base": "main" }));
    let findings = report["findings"].as_array().unwrap();
    // The refused call is not a finding; the two at pager.py:10 are one.
    assert_eq!(findings.len(), 2, "{report:#}");
    assert_eq!(findings[0]["priority"], "P0");
    assert_eq!(findings[0]["path"], "db.py");
    assert_eq!(findings[0]["start_line"], 6);
    assert!(findings[0]["excerpt"].as_str().unwrap().contains(INJECTION));
    assert_eq!(findings[1]["priority"], "P1");
    assert_eq!(findings[1]["path"], "pager.py");
    assert_eq!(findings[1]["confidence"], 0.95);
    assert!(
        findings[1]["body"].as_str().unwrap().contains("An empty list"),
        "merged bodies"
    );
    // The refusal told the model why, and it corrected the call.
    let bodies = repo.bodies.lock().unwrap().clone();
    assert!(
        bodies.iter().any(|b| b.contains("outside the diff's hunks")),
        "no repair round"
    );
    let summary = &report["summary"];
    assert_eq!(summary["by_priority"], json!({ "P0": 1, "P1": 1, "P2": 0, "P3": 0 }));
    let reviewed: Vec<&str> = summary["reviewed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(reviewed, ["db.py", "helpers.py", "pager.py"], "{summary:#}");
    assert_eq!(summary["reviewed"][1]["renamed_from"], "util.py");
    let skipped: Vec<(String, String)> = summary["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_owned(),
                s["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let skipped: Vec<(&str, &str)> = skipped.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(
        skipped,
        [
            ("gen/schema.py", "generated"),
            ("logo.png", "binary"),
            ("package-lock.json", "lockfile")
        ]
    );

    let log: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let validator = sarif_validator();
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "not valid SARIF 2.1.0: {errors:?}\n{log:#}");
    let mut broken = log.clone();
    broken["runs"][0]["results"][0]["level"] = json!("fatal");
    assert!(!validator.is_valid(&broken), "the schema checks levels");
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results[0]["ruleId"], "zidane/security");
    assert_eq!(results[0]["level"], "error");
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "db.py"
    );
    assert_eq!(results[0]["locations"][0]["physicalLocation"]["region"]["startLine"], 6);
    assert_eq!(results[1]["ruleId"], "zidane/correctness");
    let rules: Vec<&str> = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"zidane/security") && rules.contains(&"zidane/correctness"));
    let prints = |log: &Value| -> Vec<String> {
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["partialFingerprints"]["zidaneFindingHash/v1"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    let first = prints(&log);
    assert_eq!(first.len(), 2);
    assert_ne!(first[0], first[1]);

    let md = std::fs::read_to_string(&markdown).unwrap();
    assert!(md.contains("### P0 (must fix)") && md.contains("### P1"), "{md}");
    assert!(
        md.contains("SQL injection in find_user") && md.contains("`db.py:6`"),
        "{md}"
    );
    assert!(md.contains(INJECTION) && md.contains("```python"), "{md}");
    assert!(md.contains("`logo.png`: skipped, binary"), "{md}");

    // Again: the same findings have the same fingerprints.
    let again = repo.review(&args).await;
    assert!(again.status.success(), "{}", text(&again.stderr));
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(prints(&log), first);
}

#[tokio::test(flavor = "multi_thread")]
async fn fail_on_sets_the_exit_code_and_the_terminal_groups_by_priority() {
    let repo = Repo::new().await;
    // Only the off-by-one: a P1.
    let out = repo.review(&["--commit", &repo.commits[0], "--fail-on", "P0"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("P1 (should fix before merging): 1"), "{shown}");
    assert!(shown.contains("pager.py:10-10  last_index is off by one"), "{shown}");
    assert!(
        shown.contains(&format!("   10 │ {}", "    return len(items)")),
        "{shown}"
    );
    let out = repo.review(&["--commit", &repo.commits[0], "--fail-on", "p1"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("1 finding(s) at P1 or above"));
    let out = repo.review(&["--commit", &repo.commits[0], "--fail-on", "P9"]).await;
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_during_a_review_is_refused() {
    let repo = Repo::new().await;
    let out = repo
        .review(&["--commit", &repo.commits[1], "--focus", "try a write", "--json"])
        .await;
    let report = json_of(&out);
    assert!(!repo.path("pwned.txt").exists());
    let bodies = repo.bodies.lock().unwrap().clone();
    assert!(
        bodies[1].contains("`write_file` is not available during a review"),
        "{}",
        bodies[1]
    );
    // The review went on and reported the injection.
    assert_eq!(report["findings"][0]["title"], "SQL injection in find_user");
}

/// The tools a request offered, by name.
fn offered(body: &str) -> Vec<String> {
    let request: serde_json::Value = serde_json::from_str(body).unwrap();
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_review_reaches_no_network_unless_allowed() {
    let repo = Repo::new().await;
    json_of(&repo.review(&["--commit", &repo.commits[1], "--json"]).await);
    let first = repo.bodies.lock().unwrap()[0].clone();
    let tools = offered(&first);
    assert!(tools.contains(&"read_file".to_owned()), "{tools:?}");
    assert!(tools.contains(&"report_finding".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"web_fetch".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"shell".to_owned()), "{tools:?}");

    repo.bodies.lock().unwrap().clear();
    json_of(
        &repo
            .review(&["--commit", &repo.commits[1], "--network", "--json"])
            .await,
    );
    let first = repo.bodies.lock().unwrap()[0].clone();
    assert!(offered(&first).contains(&"web_fetch".to_owned()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_diff_larger_than_the_window_is_split_by_file_and_merged() {
    let repo = Repo::new().await;
    for n in 1..=3 {
        let lines: String = (0..120)
            .map(|i| format!("VALUE_{n}_{i} = {i}  # a long generated-looking line\n"))
            .collect();
        write(repo.work.path(), &format!("big_{n}.py"), lines);
    }
    let out = repo
        .review(&["--uncommitted", "--context-window", "8192", "--json"])
        .await;
    let report = json_of(&out);
    assert_eq!(report["summary"]["sub_reviews"], 3, "{report:#}");
    let paths: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["big_1.py", "big_2.py", "big_3.py"]);
    // Each sub-review's first request held one file's diff.
    let bodies = repo.bodies.lock().unwrap().clone();
    let firsts: Vec<&String> = bodies.iter().filter(|b| !b.contains("\"tool_use_id\"")).collect();
    assert_eq!(firsts.len(), 3);
    for body in firsts {
        let held = (1..=3).filter(|n| body.contains(&format!("+++ b/big_{n}.py"))).count();
        assert_eq!(held, 1);
    }
    // A cost limit already reached leaves the later sub-reviews out.
    let out = repo
        .review(&[
            "--uncommitted",
            "--context-window",
            "8192",
            "--json",
            "--max-cost",
            "0.000001",
        ])
        .await;
    let report = json_of(&out);
    let stderr = text(&out.stderr);
    let budget = report["summary"]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["reason"] == "budget")
        .count();
    assert_eq!(budget, 2, "{report:#}\n{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_review_reports_findings_with_locations() {
    let (url, _bodies) = server_with(None, reviewer).await;
    let setup = Setup::with_url(url).await;
    repository(setup.work.path());
    let mut agent = Agent::start(&setup, &[KEY]);
    let session = agent.open(setup.work.path()).await;
    let done = agent
        .call(
            "session/prompt",
            prompt(&session, "/review --base main --focus security"),
        )
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let updates = agent.updates();
    let findings: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"].as_str().unwrap().starts_with("review-"))
        .collect();
    assert_eq!(findings.len(), 2, "{updates:#?}");
    let db = setup.work.path().join("db.py");
    assert_eq!(findings[0]["title"], "P0: SQL injection in find_user");
    assert_eq!(
        findings[0]["locations"],
        json!([{ "path": db.to_string_lossy(), "line": 6 }])
    );
    assert_eq!(findings[1]["locations"][0]["line"], 10);
    let said: String = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(
        said.contains("## zidane review") && said.contains("SQL injection"),
        "{said}"
    );
}

/// The names of the steps in `text`: each `steps.sh NAME`, and the SARIF
/// upload.
fn step_names(text: &str, marker: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            if line.contains("upload-sarif@") || line.contains("::group::Upload SARIF") {
                return Some("upload-sarif".to_owned());
            }
            let at = line.find(marker)? + marker.len();
            let name: String = line[at..].chars().take_while(char::is_ascii_alphabetic).collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// The action's steps, run here by `ci/review/run-local.sh` with the
/// binary under test: the SARIF is valid, the comment is the Markdown, the
/// exit code follows `fail-on`; and the runner's steps are the action's.
#[tokio::test(flavor = "multi_thread")]
async fn the_actions_steps_run_here_and_leave_valid_outputs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let action = std::fs::read_to_string(root.join("action.yml")).unwrap();
    let runner = std::fs::read_to_string(root.join("ci/review/run-local.sh")).unwrap();
    let expected = ["install", "review", "upload-sarif", "comment", "verdict"];
    assert_eq!(step_names(&action, "steps.sh\" "), expected);
    assert_eq!(step_names(&runner, "\"$steps\" "), expected);

    let repo = Repo::new().await;
    let bin = Path::new(env!("CARGO_BIN_EXE_zidane")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let run = |fail_on: &'static str| {
        let path = path.clone();
        let root = root.clone();
        let (url, home, work) = (
            repo.url.clone(),
            repo.home.path().to_owned(),
            repo.work.path().to_owned(),
        );
        async move {
            let mut cmd = tokio::process::Command::new(root.join("ci/review/run-local.sh"));
            cmd.args([
                "--base",
                "main",
                "--fail-on",
                fail_on,
                "--args",
                &format!("--base-url {url}"),
            ])
            .current_dir(work)
            .env("PATH", path)
            .env("ZIDANE_HOME", home)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENROUTER_API_KEY")
            .env(KEY.0, KEY.1);
            cmd.output().await
        }
    };
    let out = run("P0").await.unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let dir = repo.path("zidane-review");
    let log: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("review.sarif")).unwrap()).unwrap();
    assert!(sarif_validator().is_valid(&log));
    assert_eq!(log["runs"][0]["results"].as_array().unwrap().len(), 2);
    let markdown = std::fs::read_to_string(dir.join("review.md")).unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("comment.md")).unwrap(), markdown);
    let gh = std::fs::read_to_string(dir.join("gh-args")).unwrap();
    assert!(gh.starts_with("pr comment 1 --body-file"), "{gh}");
    assert!(
        text(&out.stdout).contains("SARIF 2.1.0, 2 result(s)"),
        "{}",
        text(&out.stdout)
    );

    // Any threshold the findings reach fails it; without one it passes,
    // and the comment is posted either way.
    let out = run("P3").await.unwrap();
    assert_eq!(out.status.code(), Some(3));
    std::fs::remove_file(dir.join("gh-args")).unwrap();
    let out = run("").await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(dir.join("gh-args").exists());
}

/// `/review --commit SHA` in the interactive session: the findings by
/// priority with their places, and the conversation goes on.
#[tokio::test(flavor = "multi_thread")]
async fn the_session_reviews_with_a_slash_command() {
    let (url, _bodies) = server_with(None, reviewer).await;
    let setup = Setup::with_url(url).await;
    let [first, ..] = repository(setup.work.path());
    let mut term = setup.open(&[KEY], &[], (120, 50));
    term.line(&format!("/review --commit {first}"));
    term.wait_for("P1 (should fix before merging): 1");
    let screen = term.wait_for("pager.py:10-10  last_index is off by one");
    assert!(screen.contains("Reviewed 1 file(s) in 1 sub-review(s)"), "{screen}");
    term.quit();
}
