//! Every example of this crate, run as a person would (its own process,
//! its flags), against a scripted model on loopback. `cargo xtask ci`
//! builds the examples first; a plain `cargo test` builds them on first use.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use serde_json::json;
use zidane_bench::loopback::{answer_sse, call_sse, scripted_server};

fn example(name: &str) -> PathBuf {
    zidane_bench::examples::path(name)
}

/// A scripted model: `respond` picks each reply from the request body;
/// every body is kept.
async fn model(respond: impl Fn(&str) -> String + Send + Sync + 'static) -> (String, Arc<Mutex<Vec<String>>>) {
    let bodies: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&bodies);
    let url = scripted_server(move |_path, body| {
        seen.lock().unwrap().push(body.to_owned());
        respond(body)
    })
    .await
    .unwrap();
    (url, bodies)
}

async fn run(name: &str, url: &str, args: &[&str], cwd: &Path) -> String {
    let out: Output = tokio::process::Command::new(example(name))
        .args(["--base-url", url])
        .args(args)
        .current_dir(cwd)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env_remove("OPENAI_API_KEY")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn answered(body: &str) -> bool {
    body.contains("tool_result")
}

#[tokio::test(flavor = "multi_thread")]
async fn quickstart_runs_the_preset_collects_a_summary_and_compacts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello").unwrap();
    let (url, bodies) = model(|body| {
        if body.contains("Summarize the conversation") {
            answer_sse("The files were listed.", 300)
        } else if answered(body) {
            answer_sse("One file: notes.txt.", 200)
        } else {
            call_sse("toolu_1", "list_files", &json!({"path": "."}), 100)
        }
    })
    .await;
    let out = run("quickstart", &url, &[], dir.path()).await;
    assert!(out.contains("One file: notes.txt."), "{out}");
    assert!(out.contains("status: Completed, turns: 2"), "{out}");
    assert!(out.contains("output tokens: "), "{out}");
    assert!(out.contains("switching models would re-read "), "{out}");
    assert!(out.contains("compacted: "), "{out}");
    // The tool ran in the folder: its listing reached the model.
    assert!(
        bodies
            .lock()
            .unwrap()
            .iter()
            .any(|b| answered(b) && b.contains("notes.txt"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn custom_tool_is_offered_and_called() {
    let dir = tempfile::tempdir().unwrap();
    let (url, bodies) = model(|body| {
        if answered(body) {
            answer_sse("Five words.", 50)
        } else {
            call_sse(
                "toolu_1",
                "word_count",
                &json!({"text": "the quick brown fox jumps"}),
                50,
            )
        }
    })
    .await;
    let out = run("custom_tool", &url, &[], dir.path()).await;
    assert!(out.contains("Five words.\ntool calls: 1, status: Completed"), "{out}");
    let bodies = bodies.lock().unwrap();
    assert!(bodies[0].contains("\"word_count\""), "the tool is offered");
    assert!(bodies[1].contains(r#"{\"words\":5}"#), "{}", bodies[1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn hooks_gate_a_command_and_count_this_runs_calls() {
    let dir = tempfile::tempdir().unwrap();
    let (url, bodies) = model(|body| {
        if answered(body) {
            answer_sse("The delete was refused.", 50)
        } else {
            call_sse("toolu_1", "shell", &json!({"command": "rm -rf ."}), 50)
        }
    })
    .await;
    let out = run("hooks", &url, &[], dir.path()).await;
    assert!(out.contains("gate: refused `rm -rf .`"), "{out}");
    assert!(out.contains("turns of this run: 2"), "{out}");
    assert!(bodies.lock().unwrap()[1].contains("recursive deletes are not allowed here"));
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_servers_come_from_a_configuration_file() {
    let dir = tempfile::tempdir().unwrap();
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers/node_modules/.bin/mcp-server-filesystem");
    assert!(
        server.exists(),
        "{} is missing: `cargo xtask mcp-servers` installs it (`cargo xtask ci` runs it first)",
        server.display()
    );
    let config = json!({"mcpServers": {"files": {"command": server, "args": [dir.path()]}}});
    std::fs::write(dir.path().join(".mcp.json"), config.to_string()).unwrap();
    let (url, bodies) = model(|_| answer_sse("I can read files.", 50)).await;
    let out = run("mcp_servers", &url, &[".mcp.json", "What can you do?"], dir.path()).await;
    assert!(out.contains("servers: files"), "{out}");
    assert!(out.contains("tool: mcp_files_read_text_file"), "{out}");
    assert!(out.contains("I can read files."), "{out}");
    assert!(
        bodies.lock().unwrap()[0].contains("mcp_files_list_directory"),
        "the server's tools reach the model"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn durable_resume_survives_a_kill_of_the_first_process() {
    let dir = tempfile::tempdir().unwrap();
    let (url, bodies) = model(|body| {
        if answered(body) {
            answer_sse("Deployed.", 50)
        } else {
            call_sse("toolu_1", "deploy_step", &json!({"step": "migrate"}), 50)
        }
    })
    .await;
    let out = run("durable_resume", &url, &[], dir.path()).await;
    assert!(out.contains("killed the first process"), "{out}");
    assert!(out.contains("resumed: Completed"), "{out}");
    assert!(out.contains("Deployed."), "{out}");
    // The model call the dead process finished was not sent again.
    assert_eq!(bodies.lock().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn subagents_run_a_named_child() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _) = model(|body| {
        if body.contains("You answer questions in two sentences.") {
            answer_sse("It checks that references never outlive their data.", 50)
        } else if answered(body) {
            answer_sse("The researcher says it checks references.", 50)
        } else {
            call_sse(
                "toolu_1",
                "spawn",
                &json!({"agent": "researcher", "task": "What does the borrow checker do?"}),
                50,
            )
        }
    })
    .await;
    let out = run("subagents", &url, &[], dir.path()).await;
    assert!(out.contains("spawn:before"), "{out}");
    assert!(out.contains("(researcher)"), "{out}");
    assert!(out.contains("The researcher says it checks references."), "{out}");
    assert!(out.contains("children: 1"), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn skills_are_listed_activated_and_reach_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let (url, bodies) = model(|_| answer_sse("- Faster runs", 50)).await;
    let out = run("skills", &url, &[], dir.path()).await;
    assert!(out.contains("skill: release-notes"), "{out}");
    assert!(out.contains(r#"active: ["release-notes"]"#), "{out}");
    assert!(
        bodies.lock().unwrap()[0].contains("three bullet points"),
        "the active skill's instructions reach the model"
    );
}
