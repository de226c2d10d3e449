//! Tokens sent per request for a fixed session against the loopback model,
//! with the context economy off (raw command output, every tool schema)
//! and on (reduced output, deferred tools): `cargo bench -p zidane-cli
//! --bench context_economy`. Tokens are estimated at four bytes a token.
//!
//! The session: a failing `cargo test` run (a recorded one) three times,
//! with a file read between, and the MCP `server-everything` attached when
//! `cargo xtask mcp-servers` has installed it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::json;
use zidane_bench::loopback::{answer_sse, call_sse, scripted_server};

const SCRIPT: [(&str, &str); 5] = [
    (
        "shell",
        r#"{"command": "cat run.txt; cargo test --offline 2>/dev/null; exit 101"}"#,
    ),
    ("read_file", r#"{"path": "src.txt"}"#),
    (
        "shell",
        r#"{"command": "cat run.txt; cargo test --offline 2>/dev/null; exit 101"}"#,
    ),
    ("read_file", r#"{"path": "src.txt", "offset": 10}"#),
    (
        "shell",
        r#"{"command": "cat run.txt; cargo test --offline 2>/dev/null; exit 101"}"#,
    ),
];

async fn server() -> (String, Arc<Mutex<Vec<usize>>>) {
    let sizes: Arc<Mutex<Vec<usize>>> = Arc::default();
    let seen = Arc::clone(&sizes);
    let url = scripted_server(move |_, body| {
        seen.lock().unwrap().push(body.len());
        let n = body.matches("\"type\":\"tool_result\"").count();
        let tokens = (body.len() / 4) as u64;
        match SCRIPT.get(n) {
            Some((name, input)) => call_sse(
                &format!("toolu_{n}"),
                name,
                &serde_json::from_str(input).unwrap(),
                tokens,
            ),
            None => answer_sse("The two failing tests need fixes.", tokens),
        }
    })
    .await
    .unwrap();
    (url, sizes)
}

async fn session(economy: bool, everything: Option<&Path>) -> Vec<usize> {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../zidane-tools/tests/fixtures/output");
    std::fs::copy(fixtures.join("cargo-test.txt"), work.path().join("run.txt")).unwrap();
    let source: String = (1..=60).map(|i| format!("let value_{i} = compute({i});\n")).collect();
    std::fs::write(work.path().join("src.txt"), source).unwrap();
    if !economy {
        std::fs::write(
            home.path().join("config.toml"),
            "reduce_output = false\ndefer_tools_above = 1.0\n",
        )
        .unwrap();
    }
    let (url, sizes) = server().await;
    let mut args = vec![
        "--context-window".to_owned(),
        "16384".to_owned(),
        "--base-url".to_owned(),
        url,
    ];
    if let Some(bin) = everything {
        let config = work.path().join("mcp.json");
        std::fs::write(
            &config,
            json!({"mcpServers": {"everything": {"command": bin}}}).to_string(),
        )
        .unwrap();
        args.extend(["--mcp".to_owned(), config.display().to_string()]);
    }
    args.push("Run the tests and find what fails.".to_owned());
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane"))
        .args(&args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENROUTER_API_KEY")
        .env("ANTHROPIC_API_KEY", "sk-bench")
        .env("ZIDANE_APPROVE", "yolo")
        .env("ZIDANE_HOME", home.path())
        .current_dir(work.path())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sizes = sizes.lock().unwrap().clone();
    sizes.into_iter().map(|bytes| bytes.div_ceil(4)).collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let everything = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/mcp-servers/node_modules/.bin/mcp-server-everything");
    let everything = everything.exists().then_some(everything);
    let before = session(false, everything.as_deref()).await;
    let after = session(true, everything.as_deref()).await;
    println!(
        "context economy: tokens sent per request (estimated; MCP server-everything {})",
        if everything.is_some() {
            "attached"
        } else {
            "not installed: run `cargo xtask mcp-servers`"
        }
    );
    println!("{:>8} {:>10} {:>10}", "request", "before", "after");
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        println!("{:>8} {b:>10} {a:>10}", i + 1);
    }
    let (b, a): (usize, usize) = (before.iter().sum(), after.iter().sum());
    let fewer = 100.0 - 100.0 * a as f64 / b as f64;
    println!("{:>8} {b:>10} {a:>10}  ({fewer:.0} % fewer)", "total");
}
