//! The `zidane` binary end to end, against a loopback model server.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use zidane_bench::loopback::{answer_sse, call_sse, read_request, sse as anthropic_sse};

mod acp;
mod checkpoints;
mod comforts;
mod conventions;
mod credentials;
mod faults;
mod frontends;
mod goals;
mod hooks;
mod lsp;
mod review;
mod schedules;
mod serve;
mod session;
mod small_window;
mod subagents;
mod web;
mod window;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Wire {
    Anthropic,
    OpenAi,
}

/// A two-turn scripted run: write a file, then say done.
fn reply(wire: Wire, body: &str) -> String {
    let after_tool = body.contains("tool_result") || body.contains("\"role\":\"tool\"");
    match (wire, after_tool) {
        (Wire::Anthropic, false) => anthropic_sse(&[
            ("message_start", json!({"type": "message_start", "message": {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 120, "output_tokens": 1}}})),
            ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
            ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Writing the file."}})),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
            ("content_block_start", json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}})),
            ("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"hello.txt\", \"content\": \"Hello from zidane\"}"}})),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
            ("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}})),
            ("message_stop", json!({"type": "message_stop"})),
        ]),
        (Wire::Anthropic, true) => anthropic_sse(&[
            ("message_start", json!({"type": "message_start", "message": {"id": "m2", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 200, "cache_read_input_tokens": 100, "output_tokens": 1}}})),
            ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
            ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done: hello.txt is written."}})),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
            ("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 12}})),
            ("message_stop", json!({"type": "message_stop"})),
        ]),
        (Wire::OpenAi, false) => [
            json!({"id": "c1", "model": "gpt-4.1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Writing the file."}}]}),
            json!({"id": "c1", "model": "gpt-4.1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\": \"hello.txt\", "}}]}}]}),
            json!({"id": "c1", "model": "gpt-4.1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"content\": \"Hello from zidane\"}"}}]}}]}),
            json!({"id": "c1", "model": "gpt-4.1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"id": "c1", "model": "gpt-4.1", "choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30}}),
        ]
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .chain(std::iter::once("data: [DONE]\n\n".to_owned()))
        .collect(),
        (Wire::OpenAi, true) => [
            json!({"id": "c2", "model": "gpt-4.1", "choices": [{"index": 0, "delta": {"content": "Done: hello.txt is written."}}]}),
            json!({"id": "c2", "model": "gpt-4.1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            json!({"id": "c2", "model": "gpt-4.1", "choices": [], "usage": {"prompt_tokens": 200, "completion_tokens": 12, "prompt_tokens_details": {"cached_tokens": 100}}}),
        ]
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .chain(std::iter::once("data: [DONE]\n\n".to_owned()))
        .collect(),
    }
}

/// Serves scripted replies (or a fixed status and body) and records bodies.
async fn server(wire: Wire, fixed: Option<(u16, String)>) -> (String, Arc<Mutex<Vec<String>>>) {
    server_with(fixed, move |body| reply(wire, body)).await
}

/// Like [`server`], with the replies made by `respond` from each body.
async fn server_with(
    fixed: Option<(u16, String)>,
    respond: impl Fn(&str) -> String + Send + Sync + Copy + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let bodies: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&bodies);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let seen = Arc::clone(&seen);
            let fixed = fixed.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some((head_end, len)) = read_request(&mut stream, &mut buf).await {
                    let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
                    buf.drain(..head_end + len);
                    seen.lock().unwrap().push(body.clone());
                    let (status, kind, payload) = match &fixed {
                        Some((status, payload)) => (*status, "application/json", payload.clone()),
                        None => (200, "text/event-stream", respond(&body)),
                    };
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{payload}",
                        payload.len()
                    );
                    if stream.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), bodies)
}

async fn zidane(home: &Path, work: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane"));
    for var in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENROUTER_API_KEY",
        "ZIDANE_RETRIES",
        "ZIDANE_IDLE_TIMEOUT",
    ] {
        cmd.env_remove(var);
    }
    // Tests answer no questions unless they say so (`ZIDANE_APPROVE=ask`).
    // No model server on this machine is looked for.
    cmd.env("ZIDANE_HOME", home)
        .env("ZIDANE_APPROVE", "yolo")
        .env("ZIDANE_LOCAL_MODEL_PORTS", "off")
        .current_dir(work)
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().await.unwrap()
}

/// A FIFO the scripted command writes `started` to once it runs.
fn started_fifo(work: &Path) -> std::path::PathBuf {
    let fifo = work.join("started.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    fifo
}

/// Waits until the command wrote to `fifo`, then kills the program with
/// `SIGKILL`.
async fn kill_once_started(child: &mut tokio::process::Child, fifo: &Path) {
    let started = tokio::fs::read_to_string(fifo).await.unwrap();
    assert_eq!(started.trim(), "started");
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

/// `zidane` started in the background (its output discarded), for tests
/// that kill it or run a second one beside it.
fn spawn_zidane(home: &Path, work: &Path, args: &[&str]) -> tokio::process::Child {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane"));
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("OPENROUTER_API_KEY")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ZIDANE_APPROVE", "yolo")
        .env("ZIDANE_HOME", home)
        .current_dir(work)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    cmd.spawn().unwrap()
}

/// `zidane ARGS` in a pseudo-terminal (`script` gives it one and forwards
/// `input`), asking before commands.
async fn in_terminal(home: &Path, work: &Path, env: &[(&str, &str)], args: &str, input: &[u8]) -> Output {
    let bin = env!("CARGO_BIN_EXE_zidane");
    let mut cmd = tokio::process::Command::new("script");
    // `-p`: the one-shot mode (a terminal otherwise opens the session).
    cmd.args(["-qec", &format!("{bin} -p {args}"), "/dev/null"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENROUTER_API_KEY")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ZIDANE_APPROVE", "ask")
        .env("ZIDANE_HOME", home)
        .current_dir(work)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).await.unwrap();
    let out = child.wait_with_output().await.unwrap();
    drop(stdin);
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

async fn two_turn_run(wire: Wire) {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server(wire, None).await;
    let (env, base): (Vec<(&str, &str)>, String) = match wire {
        Wire::Anthropic => (vec![("ANTHROPIC_API_KEY", "sk-test")], url.clone()),
        Wire::OpenAi => (vec![("OPENAI_API_KEY", "sk-test")], format!("{url}/v1")),
    };
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--base-url", &base, "Write hello.txt."],
    )
    .await;
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(work.path().join("hello.txt")).unwrap(),
        "Hello from zidane"
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Writing the file.")
            && stdout.contains("● write_file(hello.txt)")
            && stdout.contains("Done: hello.txt is written."),
        "{stdout}"
    );
    // Every wire format carries an output cap.
    let first: Value = serde_json::from_str(&bodies.lock().unwrap()[0]).unwrap();
    let cap = if wire == Wire::Anthropic {
        &first["max_tokens"]
    } else {
        &first["max_completion_tokens"]
    };
    assert_eq!(cap, &json!(8192), "{first}");
    let stderr = text(&out.stderr);
    // Input excludes cache reads: OpenAI's prompt tokens include them.
    let input = if wire == Wire::Anthropic { 320 } else { 220 };
    assert!(
        stderr.contains(&format!(
            "─ 2 turns · {input} in / 42 out tokens (cache read 100, write 0)"
        )),
        "{stderr}"
    );

    let listed = zidane(home.path(), work.path(), &[], &["--list-sessions"]).await;
    assert!(listed.status.success());
    let listing = text(&listed.stdout);
    assert!(listing.contains("4 messages  Write hello.txt."), "{listing}");

    let resumed = zidane(
        home.path(),
        work.path(),
        &env,
        &["--base-url", &base, "--resume", "--json", "Anything else?"],
    )
    .await;
    assert!(resumed.status.success(), "stderr: {}", text(&resumed.stderr));
    let last_request = bodies.lock().unwrap().last().cloned().unwrap();
    assert!(
        last_request.contains("Hello from zidane") && last_request.contains("Anything else?"),
        "the resumed run sent the history"
    );
    let events: Vec<Value> = text(&resumed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.first().unwrap()["type"], json!("text"));
    assert_eq!(events.last().unwrap()["type"], json!("done"));
    let relisted = text(&zidane(home.path(), work.path(), &[], &["--list-sessions"]).await.stdout);
    assert!(relisted.contains("6 messages"), "{relisted}");
}

#[tokio::test]
async fn anthropic_two_turn_tool_run_with_resume() {
    two_turn_run(Wire::Anthropic).await;
}

#[tokio::test]
async fn openai_two_turn_tool_run_with_resume() {
    two_turn_run(Wire::OpenAi).await;
}

#[tokio::test]
async fn errors_a_person_can_act_on() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();

    let none = zidane(home.path(), work.path(), &[], &["hello"]).await;
    assert_eq!(none.status.code(), Some(2));
    assert!(
        text(&none.stderr).contains("no provider is configured: set ANTHROPIC_API_KEY"),
        "{}",
        text(&none.stderr)
    );

    let (url, _) = server(
        Wire::Anthropic,
        Some((
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#.into(),
        )),
    )
    .await;
    let bad_key = zidane(
        home.path(),
        work.path(),
        &[("ANTHROPIC_API_KEY", "sk-wrong")],
        &["--base-url", &url, "hello"],
    )
    .await;
    assert_eq!(bad_key.status.code(), Some(1));
    let stderr = text(&bad_key.stderr);
    assert!(
        stderr.contains("the API key was rejected (HTTP 401): invalid x-api-key"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked") && !stderr.contains("sk-wrong"));

    let (url, _) = server(
        Wire::Anthropic,
        Some((
            404,
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}"#.into(),
        )),
    )
    .await;
    let unknown = zidane(
        home.path(),
        work.path(),
        &[("ANTHROPIC_API_KEY", "sk")],
        &["--base-url", &url, "--model", "claude-nope", "hello"],
    )
    .await;
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        text(&unknown.stderr).contains("the model is unknown or unavailable (`claude-nope`): model: claude-nope"),
        "{}",
        text(&unknown.stderr)
    );

    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let unreachable = zidane(
        home.path(),
        work.path(),
        &[("ANTHROPIC_API_KEY", "sk")],
        &["--base-url", &closed, "hello"],
    )
    .await;
    assert_eq!(unreachable.status.code(), Some(1));
    assert!(
        text(&unreachable.stderr).contains(&format!("cannot reach {closed}: could not connect")),
        "{}",
        text(&unreachable.stderr)
    );

    let missing = zidane(
        home.path(),
        work.path(),
        &[],
        &["--provider", "openai-compatible", "hello"],
    )
    .await;
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("needs --base-url"));
}

/// The model runs `env`; commands never see the provider key or other
/// credentials, unless a variable is passed by name.
#[tokio::test]
async fn commands_never_see_credentials_unless_passed() {
    fn respond(body: &str) -> String {
        if body.contains("tool_result") {
            return anthropic_sse(&[
                (
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "m2", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Listed."}}),
                ),
                ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
                (
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
                ),
                ("message_stop", json!({"type": "message_stop"})),
            ]);
        }
        anthropic_sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_env", "name": "shell", "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"env\"}"}}),
            ),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ])
    }
    let env = [
        ("ANTHROPIC_API_KEY", "sk-ant-never-shown"),
        ("MY_SERVICE_TOKEN", "tok-passed-by-name"),
        ("DB_PASSWORD", "hunter2-never-shown"),
        ("ZIDANE_TEST_VISIBLE", "plain-value-42"),
    ];
    for passed in [false, true] {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let (url, bodies) = server_with(None, respond).await;
        let mut args = vec!["--base-url", url.as_str()];
        if passed {
            args.extend(["--pass-env", "MY_SERVICE_TOKEN"]);
        }
        args.push("List the environment.");
        let out = zidane(home.path(), work.path(), &env, &args).await;
        assert!(out.status.success(), "stderr: {}", text(&out.stderr));
        let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(
            shown.contains("⎿ ok: exit code: 0 · "),
            "a command's line shows what it printed: {shown}"
        );
        let sent = bodies.lock().unwrap().last().cloned().unwrap();
        assert!(
            sent.contains("tool_result") && sent.contains("plain-value-42"),
            "{sent}"
        );
        assert!(!sent.contains("sk-ant-never-shown") && !sent.contains("hunter2-never-shown"));
        assert_eq!(sent.contains("tok-passed-by-name"), passed, "passed: {passed}");
    }
}

#[tokio::test]
async fn bad_flags_are_refused_before_anything_runs() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let key = [("ANTHROPIC_API_KEY", "sk")];
    for (args, says) in [
        (
            vec!["--max-cost", "NaN", "hi"],
            "`NaN` is not a positive amount of dollars",
        ),
        (
            vec!["--max-cost", "inf", "hi"],
            "`inf` is not a positive amount of dollars",
        ),
        (vec!["--max-cost=-1", "hi"], "`-1` is not a positive amount of dollars"),
        (vec!["--session", "", "hi"], "a session id cannot be empty"),
        (
            vec!["--cwd", "/nonexistent/zidane-folder", "hi"],
            "--cwd /nonexistent/zidane-folder: no such folder",
        ),
    ] {
        let out = zidane(home.path(), work.path(), &key, &args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(says), "{args:?}: {}", text(&out.stderr));
    }
}

#[tokio::test]
async fn the_prompt_can_come_from_standard_input() {
    use tokio::io::AsyncWriteExt as _;
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server(Wire::Anthropic, None).await;
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane"));
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("OPENROUTER_API_KEY")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ZIDANE_APPROVE", "yolo")
        .env("ZIDANE_HOME", home.path())
        .current_dir(work.path())
        .args(["--base-url", &url, "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"Write hello.txt from a pipe.").await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert!(bodies.lock().unwrap()[0].contains("Write hello.txt from a pipe."));
}

#[test]
fn a_closed_output_pipe_is_a_quiet_end() {
    let home = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zidane"))
        .env("ZIDANE_HOME", home.path())
        .arg("--list-sessions")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// SIGTERM stops a run like Ctrl-C does, and an interrupted run exits 130,
/// not 0, so `zidane … && next` does not go on.
#[tokio::test]
async fn sigterm_interrupts_the_run_with_exit_code_130() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let asked = Arc::new(tokio::sync::Notify::new());
    let notify = Arc::clone(&asked);
    tokio::spawn(async move {
        // Accept, read the request, never answer.
        while let Ok((mut stream, _)) = listener.accept().await {
            let notify = Arc::clone(&notify);
            tokio::spawn(async move {
                let mut buf = [0u8; 65536];
                while let Ok(n) = stream.read(&mut buf).await {
                    if n == 0 {
                        return;
                    }
                    notify.notify_one();
                }
            });
        }
    });
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane"));
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("OPENROUTER_API_KEY")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ZIDANE_APPROVE", "yolo")
        .env("ZIDANE_HOME", home.path())
        .current_dir(work.path())
        .args(["--base-url", &url, "Think for a long time."])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id().unwrap();
    asked.notified().await;
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().await.unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted; the session is saved"), "{stderr}");
    // The signal suspended the run: it waits for `--resume`.
    let listed = zidane(home.path(), work.path(), &[], &["--list-sessions"]).await;
    assert!(
        text(&listed.stdout).contains("[interrupted: `zidane --resume"),
        "{}",
        text(&listed.stdout)
    );
}

#[tokio::test]
async fn retries_and_the_idle_timeout_can_be_set() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server(
        Wire::Anthropic,
        Some((
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"boom"}}"#.into(),
        )),
    )
    .await;
    let out = zidane(
        home.path(),
        work.path(),
        &[("ANTHROPIC_API_KEY", "sk"), ("ZIDANE_RETRIES", "1")],
        &["--base-url", &url, "hello"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(bodies.lock().unwrap().len(), 1, "one attempt, no retry");
    let zero = zidane(
        home.path(),
        work.path(),
        &[("ANTHROPIC_API_KEY", "sk")],
        &["--idle-timeout", "0", "hi"],
    )
    .await;
    assert_eq!(zero.status.code(), Some(2));
}

/// The model calls `shell` with `command` first, then answers once it sees
/// the call's result.
fn shell_then_done(body: &str, command: &str) -> String {
    if body.contains("tool_result") {
        return anthropic_sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "m2", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 50, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Finished after the interruption."}}),
            ),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 8}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ]);
    }
    let input = json!({ "command": command }).to_string();
    anthropic_sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_sleep", "name": "shell", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// `kill -9` during a long command, then `zidane --resume`: the call is
/// reported interrupted to the model (not run again), the run finishes,
/// and the session holds every turn once.
#[tokio::test]
async fn a_killed_program_continues_with_resume() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fifo = started_fifo(work.path());
    let (url, bodies) = server_with(None, |body| {
        shell_then_done(body, "echo started > started.fifo; echo ran >> effects.log; sleep 30")
    })
    .await;
    let mut child = spawn_zidane(
        home.path(),
        work.path(),
        &["--base-url", &url, "--session", "work", "Run the long job."],
    );
    // The command is running once it writes to the FIFO.
    kill_once_started(&mut child, &fifo).await;
    assert_eq!(bodies.lock().unwrap().len(), 1);

    let env = [("ANTHROPIC_API_KEY", "sk-test")];
    let listed = zidane(home.path(), work.path(), &env, &["--list-sessions"]).await;
    assert!(
        text(&listed.stdout).contains("[interrupted: `zidane --resume --session work`]"),
        "{}",
        text(&listed.stdout)
    );

    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--base-url", &url, "--resume", "--session", "work"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(
        bodies.len(),
        2,
        "one request after the resume: the recorded calling turn is not asked again"
    );
    let sent: Value = serde_json::from_str(&bodies[1]).unwrap();
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "prompt, the calling turn, its result");
    let result = &messages[2]["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_sleep");
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"].to_string().contains("interrupted"),
        "the call is reported interrupted: {result}"
    );
    let effects = std::fs::read_to_string(work.path().join("effects.log")).unwrap();
    assert_eq!(effects.lines().count(), 1, "the command ran once, before the kill");

    let listed = zidane(home.path(), work.path(), &env, &["--list-sessions"]).await;
    let listing = text(&listed.stdout);
    assert!(listing.contains("work") && listing.contains("4 messages"), "{listing}");
    assert!(!listing.contains("interrupted"), "{listing}");
}

/// A second `zidane` on a session another live one is running is refused
/// with exit code 2, naming the process.
#[tokio::test]
async fn a_session_in_use_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fifo = started_fifo(work.path());
    let (url, _bodies) = server_with(None, |body| {
        shell_then_done(body, "echo started > started.fifo; sleep 30")
    })
    .await;
    let mut first = spawn_zidane(
        home.path(),
        work.path(),
        &["--base-url", &url, "--session", "busy", "Run the long job."],
    );
    let pid = first.id().unwrap();
    tokio::fs::read_to_string(&fifo).await.unwrap();
    let env = [("ANTHROPIC_API_KEY", "sk-test")];
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--base-url", &url, "--session", "busy", "Me too."],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("is in use by process {pid}")), "{stderr}");
    first.start_kill().unwrap();
    first.wait().await.unwrap();
}

/// A bad `--base-url` is named as such, and a password in one is never shown.
#[tokio::test]
async fn base_urls_are_checked_and_their_passwords_hidden() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let env = [("ANTHROPIC_API_KEY", "sk-test"), ("ZIDANE_RETRIES", "1")];
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--base-url", "localhost:8080", "hello"],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--base-url `localhost:8080` is not a valid URL"),
        "{stderr}"
    );

    // A port nothing listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://me:hunter2@127.0.0.1:{port}");
    let out = zidane(home.path(), work.path(), &env, &["--base-url", &url, "hello"]).await;
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(!all.contains("hunter2"), "{all}");
    assert!(all.contains(&format!("me:***@127.0.0.1:{port}")), "{all}");
}

/// `RUST_LOG` turns diagnostics on (on standard error); the key never
/// appears in them, even from a server that echoes it.
#[tokio::test]
async fn traces_are_on_with_rust_log_and_carry_no_secret() {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let (url, _bodies) = server_with(None, |body| {
        if CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            return anthropic_sse(&[
                ("message_start", json!({"type": "message_start", "message": {"id": "m0", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 5, "output_tokens": 1}}})),
                ("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "overloaded for key sk-ant-traced-0123456789"}})),
            ]);
        }
        reply(Wire::Anthropic, body)
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let env = [
        ("ANTHROPIC_API_KEY", "sk-ant-traced-0123456789"),
        ("RUST_LOG", "trace"),
        ("ZIDANE_RETRIES", "3"),
    ];
    let out = zidane(home.path(), work.path(), &env, &["--base-url", &url, "Write the file."]).await;
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("retrying in"), "the retry is traced: {all}");
    assert!(!all.contains("sk-ant-traced-0123456789"), "{all}");

    // With ZIDANE_LOG_FILE the lines go to the file instead.
    CALLS.store(0, std::sync::atomic::Ordering::SeqCst);
    let file = home.path().join("zidane.log");
    let file_env = [
        ("ANTHROPIC_API_KEY", "sk-ant-traced-0123456789"),
        ("RUST_LOG", "zidane=debug"),
        ("ZIDANE_RETRIES", "3"),
        ("ZIDANE_LOG_FILE", file.to_str().unwrap()),
    ];
    let out = zidane(
        home.path(),
        work.path(),
        &file_env,
        &["--base-url", &url, "Write the file."],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("DEBUG"),
        "no trace line on screen: {}",
        text(&out.stderr)
    );
    let logged = std::fs::read_to_string(&file).unwrap();
    assert!(logged.contains("DEBUG") && logged.contains("retrying in"), "{logged}");
    assert!(!logged.contains("sk-ant-traced-0123456789"), "{logged}");
}

/// Text streamed before a failed attempt is marked as discarded on screen.
#[tokio::test]
async fn text_of_a_failed_attempt_is_marked_discarded() {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let (url, _bodies) = server_with(None, |body| {
        if CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            return anthropic_sse(&[
                ("message_start", json!({"type": "message_start", "message": {"id": "m0", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 5, "output_tokens": 1}}})),
                ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
                ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Half an answ"}})),
                ("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
            ]);
        }
        reply(Wire::Anthropic, body)
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let env = [("ANTHROPIC_API_KEY", "sk-test"), ("ZIDANE_RETRIES", "3")];
    let out = zidane(home.path(), work.path(), &env, &["--base-url", &url, "Write the file."]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("the text above was discarded"), "{stderr}");
}

/// A `SKILL.md` folder dropped into `.zidane/skills/` is offered, loaded by
/// the model and listed; a broken one is named and skipped.
#[tokio::test]
async fn a_skill_in_the_project_folder_is_offered_and_loaded() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let skill = work.path().join(".zidane/skills/greet");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: greet\ndescription: Greet people the house way\n---\nAlways say hello in Slovenian: Živijo!\n",
    )
    .unwrap();
    let broken = work.path().join(".zidane/skills/broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("SKILL.md"), "no front matter here\n").unwrap();

    let env = [("ANTHROPIC_API_KEY", "sk-test")];
    let listed = zidane(home.path(), work.path(), &env, &["--list-skills"]).await;
    assert!(
        text(&listed.stdout).starts_with("greet  Greet people the house way  ("),
        "{}",
        text(&listed.stdout)
    );
    assert!(
        text(&listed.stderr).contains("broken/SKILL.md: no front matter"),
        "{}",
        text(&listed.stderr)
    );
    // A folder given with --skills comes first.
    let extra = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(extra.path().join("deploy")).unwrap();
    std::fs::write(
        extra.path().join("deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ship it\n---\nRun make deploy.\n",
    )
    .unwrap();
    let dir = extra.path().display().to_string();
    let listed = zidane(home.path(), work.path(), &env, &["--list-skills", "--skills", &dir]).await;
    let names: Vec<String> = text(&listed.stdout)
        .lines()
        .map(|l| l.split("  ").next().unwrap().to_owned())
        .collect();
    assert_eq!(names, vec!["deploy", "greet"]);

    let (url, bodies) = server_with(None, |body| {
        if body.contains("tool_result") {
            return reply(Wire::Anthropic, body);
        }
        anthropic_sse(&[
            ("message_start", json!({"type": "message_start", "message": {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 40, "output_tokens": 1}}})),
            ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_skill", "name": "skill", "input": {}}})),
            ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"name\": \"greet\"}"}})),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
            ("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}})),
            ("message_stop", json!({"type": "message_stop"})),
        ])
    })
    .await;
    let out = zidane(home.path(), work.path(), &env, &["--base-url", &url, "Greet the team."]).await;
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("✦ skill `greet` is active"), "{shown}");
    assert!(shown.contains("skipped a skill"), "{shown}");
    let bodies = bodies.lock().unwrap().clone();
    assert!(
        bodies[0].contains("- greet: Greet people the house way"),
        "the catalog is in the system prompt"
    );
    assert!(
        bodies[1].contains("Always say hello in Slovenian"),
        "the instructions reached the model"
    );
}

const CHILD_TASK: &str = "Count the lines of notes.txt.";

/// The parent hands a task to a sub-agent, which runs `command` and
/// answers; the parent then says it is done.
fn parent_and_child(body: &str, command: &str) -> String {
    let child = body.contains(&format!("\"text\":\"{CHILD_TASK}\""));
    match (child, body.contains("tool_result")) {
        (false, false) => call_sse(
            "toolu_spawn",
            "spawn",
            &json!({"task": CHILD_TASK, "description": "count lines"}),
            100,
        ),
        (false, true) => answer_sse("All done.", 150),
        (true, false) => call_sse("toolu_wc", "shell", &json!({"command": command}), 30),
        (true, true) => answer_sse("notes.txt has 3 lines.", 40),
    }
}

/// `zidane` splits the task: the sub-agent's tool call and answer are shown
/// indented under the spawn call, and the tally counts its tokens.
#[tokio::test]
async fn the_program_hands_a_task_to_a_sub_agent() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "a\nb\nc\n").unwrap();
    let (url, bodies) = server_with(None, |body| parent_and_child(body, "wc -l < notes.txt")).await;
    let env = [("ANTHROPIC_API_KEY", "sk-test")];
    let out = zidane(home.path(), work.path(), &env, &["--base-url", &url, "Split the work."]).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let expected = [
        "● spawn(count lines)",
        "  ↳ [pawn] ● shell(wc -l < notes.txt)",
        "  ↳ [pawn]   ⎿ ok: exit code: 0 · 3",
        "  ↳ [pawn] │ notes.txt has 3 lines.",
        "  ⎿ ok: notes.txt has 3 lines.",
        "All done.",
    ];
    let mut at = 0;
    for line in expected {
        let found = stdout[at..]
            .find(line)
            .unwrap_or_else(|| panic!("`{line}` missing after {at} in:\n{stdout}"));
        at += found + line.len();
    }
    // 100 + 150 for the parent, 30 + 40 for the child.
    assert!(
        stderr.contains("─ 2 turns · 1 sub-agent · 320 in / 30 out tokens"),
        "{stderr}"
    );
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 4);
    let last: Value = serde_json::from_str(&bodies[3]).unwrap();
    let result = &last["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_spawn");
    assert_eq!(
        result["content"],
        "notes.txt has 3 lines.\n\n[sub-agent toolu_spawn: 2 turns, 1 tool call, 70 input / 15 output tokens, $0.0004]"
    );
    // The child's session is the parent's business, not a session to list.
    let listed = zidane(home.path(), work.path(), &env, &["--list-sessions"]).await;
    assert_eq!(text(&listed.stdout).lines().count(), 1, "{}", text(&listed.stdout));
}

/// `kill -9` while a sub-agent's command runs, then `zidane --resume`: the
/// parent's spawn call starts the same child again, which continues from
/// its own records (its first model turn is not requested again, its
/// command is reported interrupted instead of running twice), and the
/// parent gets the child's answer.
#[tokio::test]
async fn a_program_killed_inside_a_sub_agent_resumes_the_sub_agent() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fifo = started_fifo(work.path());
    let (url, bodies) = server_with(None, |body| {
        parent_and_child(body, "echo started > started.fifo; echo ran >> effects.log; sleep 30")
    })
    .await;
    let mut child = spawn_zidane(
        home.path(),
        work.path(),
        &["--base-url", &url, "--session", "work", "Split the work."],
    );
    kill_once_started(&mut child, &fifo).await;
    assert_eq!(bodies.lock().unwrap().len(), 2, "the parent's turn and the child's");

    let env = [("ANTHROPIC_API_KEY", "sk-test")];
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--base-url", &url, "--resume", "--session", "work"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(
        bodies.len(),
        4,
        "after the resume: the child's second turn and the parent's, nothing asked again"
    );
    let child_turn: Value = serde_json::from_str(&bodies[2]).unwrap();
    let messages = child_turn["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "the child's task, its calling turn, its result");
    let result = &messages[2]["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_wc");
    assert_eq!(result["is_error"], true);
    assert!(result["content"].to_string().contains("interrupted"), "{result}");
    let parent_turn: Value = serde_json::from_str(&bodies[3]).unwrap();
    let result = &parent_turn["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_spawn");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .starts_with("notes.txt has 3 lines."),
        "{result}"
    );
    let effects = std::fs::read_to_string(work.path().join("effects.log")).unwrap();
    assert_eq!(effects.lines().count(), 1, "the command ran once, before the kill");
}

/// The program starts a web server in the background, fetches a page from
/// it while it runs, and stops it.
#[tokio::test]
async fn the_program_runs_a_server_in_the_background_and_stops_it() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("index.html"), "hello from the server\n").unwrap();
    let (url, bodies) = server_with(None, |body| {
        if body.contains("toolu_kill") {
            return answer_sse("The server answered and is stopped.", 50);
        }
        if body.contains("toolu_fetch") {
            return call_sse("toolu_kill", "shell_kill", &json!({"task_id": "t1"}), 40);
        }
        if body.contains("toolu_serve") {
            // Where the server's output goes, from the start result.
            let output = body
                .split("Its output goes to ")
                .nth(1)
                .and_then(|rest| rest.split(". You will").next())
                .unwrap()
                .to_owned();
            let fetch = format!(
                "for i in $(seq 100); do grep -q 'port' {output} && break; sleep 0.05; done; \
                 port=$(sed -n 's/.* port \\([0-9]*\\) .*/\\1/p' {output} | head -1); \
                 python3 -c \"import sys, urllib.request; print(urllib.request.urlopen('http://127.0.0.1:' + sys.argv[1] + '/index.html').read().decode())\" $port"
            );
            return call_sse("toolu_fetch", "shell", &json!({"command": fetch}), 30);
        }
        call_sse(
            "toolu_serve",
            "shell",
            &json!({"command": "python3 -u -m http.server 0 --bind 127.0.0.1", "run_in_background": true}),
            20,
        )
    })
    .await;
    let env = [("ANTHROPIC_API_KEY", "sk-test")];
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--base-url", &url, "Serve the folder and check it."],
    )
    .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("⚙ task t1 started (pid "), "{stdout}");
    assert!(stdout.contains("● shell_kill("), "{stdout}");
    assert!(stdout.contains("⚙ task t1 was stopped after "), "{stdout}");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 4);
    assert!(
        bodies[2].contains("hello from the server"),
        "the page came back: {}",
        bodies[2]
    );
    // The server is gone, and its output is beside the sessions.
    let tasks = home.path().join("tasks");
    let log = walk_find(&tasks, "t1.log").expect("the output file");
    assert!(std::fs::read_to_string(log).unwrap().contains("Serving HTTP"));
}

fn walk_find(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = walk_find(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

/// The program confines commands by default: it says so at start, a
/// command writing outside the working folder fails and leaves nothing
/// there, one writing inside succeeds; `--sandbox off` lifts it.
#[tokio::test]
async fn commands_write_only_inside_the_working_folder() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // The program's temporary folder (writable) is its own; the folder
    // outside is another one.
    let outside = tempfile::tempdir().unwrap();
    let own_tmp = home.path().join("tmp");
    std::fs::create_dir_all(&own_tmp).unwrap();
    let own_tmp = own_tmp.display().to_string();
    let target = outside.path().join("escaped.txt");
    let command = format!("echo in > inside.txt; echo out > {}", target.display());
    let (url, bodies) = server_with(None, |body| {
        if body.contains("tool_result") {
            answer_sse("Done.", 20)
        } else {
            call_sse(
                "toolu_write",
                "shell",
                &json!({"command": COMMAND.lock().unwrap().clone()}),
                10,
            )
        }
    })
    .await;
    *COMMAND.lock().unwrap() = command;
    let env = [("ANTHROPIC_API_KEY", "sk-test"), ("TMPDIR", own_tmp.as_str())];
    let out = zidane(home.path(), work.path(), &env, &["--base-url", &url, "escape-test"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("zidane: sandbox workspace-write: commands write only in "),
        "{stderr}"
    );
    assert!(work.path().join("inside.txt").exists());
    assert!(!target.exists(), "a confined command wrote outside the working folder");
    let result = bodies.lock().unwrap()[1].clone();
    assert!(result.contains("Permission denied"), "{result}");

    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--base-url", &url, "--sandbox", "off", "escape-test"],
    )
    .await;
    assert!(
        text(&out.stderr).contains("zidane: sandbox off"),
        "{}",
        text(&out.stderr)
    );
    assert!(target.exists(), "without the sandbox the command writes where it likes");
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--sandbox", "off", "--no-network", "hi"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--no-network needs a sandbox"),
        "{}",
        text(&out.stderr)
    );
}

static COMMAND: Mutex<String> = Mutex::new(String::new());

/// The model's four commands, one per turn, then an answer.
fn four_commands(body: &str) -> String {
    let commands = [
        "echo one > one.txt",
        "echo two > two.txt",
        "touch three.txt",
        "touch four.txt",
    ];
    let done = body.matches("\"tool_result\"").count();
    match commands.get(done) {
        Some(command) => call_sse(&format!("toolu_{done}"), "shell", &json!({"command": command}), 10),
        None => answer_sse("Done.", 10),
    }
}

/// Under a terminal the program asks before each command: yes runs it, no
/// refuses it (the model is told), always runs it and what starts the same
/// way for the rest of the session.
#[tokio::test]
async fn the_program_asks_before_it_runs_a_command() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server_with(None, four_commands).await;
    let out = in_terminal(
        home.path(),
        work.path(),
        &[],
        &format!("--base-url {url} 'Make some files.'"),
        b"y\nn\na\n",
    )
    .await;
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}{}", text(&out.stderr));
    assert!(
        shown.contains("⚠ zidane wants to run:\r\n  $ echo one > one.txt"),
        "{shown}"
    );
    assert!(shown.contains("[a]lways (commands starting with `touch`)"), "{shown}");
    assert_eq!(
        shown.matches("allow? [y]es").count(),
        3,
        "the fourth was covered: {shown}"
    );
    assert!(work.path().join("one.txt").exists());
    assert!(!work.path().join("two.txt").exists(), "a declined command ran");
    assert!(work.path().join("three.txt").exists());
    assert!(work.path().join("four.txt").exists());
    let bodies = bodies.lock().unwrap().clone();
    assert!(
        bodies[2].contains("Blocked: the user declined this call"),
        "the model is told: {}",
        bodies[2]
    );
}

/// Without a terminal nothing is run silently: the call is refused, and
/// the model (and the person reading the output) learn how to allow it.
#[tokio::test]
async fn without_a_terminal_a_command_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server_with(None, four_commands).await;
    let env = [("ANTHROPIC_API_KEY", "sk-test"), ("ZIDANE_APPROVE", "ask")];
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--base-url", &url, "Make some files."],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!work.path().join("one.txt").exists());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("blocked: this needs the user's approval and there is no terminal to ask on"),
        "{stdout}"
    );
    assert!(bodies.lock().unwrap()[1].contains("--approve yolo"));
}

/// A recorded server-side fallback reaches the person as a provider note.
#[tokio::test]
async fn a_provider_fallback_is_shown_to_the_person() {
    const RECORDED: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/anthropic/fallback_response.sse"
    );
    let (url, _bodies) = server_with(None, |_| std::fs::read_to_string(RECORDED).unwrap()).await;
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let env = [("ANTHROPIC_API_KEY", "sk-test")];
    let out = zidane(home.path(), work.path(), &env, &["--base-url", &url, "Hello?"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "ⓘ provider (fallback): the server handed the turn from claude-opus-4-7 to claude-sonnet-4-5 after a refusal"
        ),
        "{stderr}"
    );
    assert!(text(&out.stdout).contains("Hello there!"));
}

/// `--otlp`: the run and its sub-agent reach the collector as one trace,
/// the child's agent span under the parent's spawn call; with
/// `--otlp-payloads` the prompt rides along, without it nothing does.
#[tokio::test]
async fn traces_of_a_run_and_its_sub_agent_reach_the_collector() {
    for payloads in [false, true] {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("notes.txt"), "a\nb\nc\n").unwrap();
        let (url, bodies) = server_with(None, |body| {
            if body.contains("resourceSpans") {
                return "{}".into();
            }
            parent_and_child(body, "wc -l < notes.txt")
        })
        .await;
        let env = [("ANTHROPIC_API_KEY", "sk-test")];
        let mut args = vec!["--base-url", &url, "--otlp", &url];
        if payloads {
            args.push("--otlp-payloads");
        }
        args.push("Split the work.");
        let out = zidane(home.path(), work.path(), &env, &args).await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(!text(&out.stderr).contains('⚠'), "{}", text(&out.stderr));
        let exports: Vec<Value> = bodies
            .lock()
            .unwrap()
            .iter()
            .filter(|b| b.contains("resourceSpans"))
            .map(|b| serde_json::from_str(b).unwrap())
            .collect();
        let spans: Vec<&Value> = exports
            .iter()
            .flat_map(|e| e["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap())
            .collect();
        let find = |name: &str| -> Vec<&Value> { spans.iter().copied().filter(|s| s["name"] == name).collect() };
        let agents = find("invoke_agent zidane");
        assert_eq!(agents.len(), 2, "the parent and its child: {spans:#?}");
        let spawn = find("execute_tool spawn");
        assert_eq!(spawn.len(), 1);
        let (root, child) = if agents[0].get("parentSpanId").is_none() {
            (agents[0], agents[1])
        } else {
            (agents[1], agents[0])
        };
        assert_eq!(spawn[0]["parentSpanId"], root["spanId"]);
        assert_eq!(
            child["parentSpanId"], spawn[0]["spanId"],
            "the child hangs under the spawn call"
        );
        assert!(spans.iter().all(|s| s["traceId"] == root["traceId"]), "one trace");
        assert_eq!(find("execute_tool shell").len(), 1);
        assert_eq!(find("chat claude-sonnet-4-5").len(), 4);
        let all = serde_json::to_string(&exports).unwrap();
        assert_eq!(all.contains("Split the work."), payloads, "{all}");
    }
}

/// An event of OpenAI's Responses stream, as `data:` with its type.
fn responses_sse(events: &[Value]) -> String {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut e = e.clone();
            e["sequence_number"] = i.into();
            format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap())
        })
        .collect()
}

/// `--provider openai-responses`: a reasoning model reads a file through a
/// tool and answers; its reasoning item goes back with the tool result.
#[tokio::test]
async fn the_responses_api_runs_a_tool_and_keeps_its_reasoning() {
    let (url, bodies) = server_with(None, |body| {
        let usage = json!({"input_tokens": 50, "input_tokens_details": {"cached_tokens": 20}, "output_tokens": 9});
        if !body.contains("function_call_output") {
            let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Read it first."}], "encrypted_content": "enc-1"});
            let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file", "arguments": ""});
            return responses_sse(&[
                json!({"type": "response.created", "response": {"id": "resp_1", "model": "gpt-5"}}),
                json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
                json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "item_id": "rs_1", "summary_index": 0, "delta": "Read it first."}),
                json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning}),
                json!({"type": "response.output_item.added", "output_index": 1, "item": call}),
                json!({"type": "response.function_call_arguments.delta", "output_index": 1, "item_id": "fc_1", "delta": "{\"path\":\"notes.txt\"}"}),
                json!({"type": "response.output_item.done", "output_index": 1, "item": call}),
                json!({"type": "response.completed", "response": {"id": "resp_1", "model": "gpt-5", "status": "completed", "usage": usage}}),
            ]);
        }
        responses_sse(&[
            json!({"type": "response.created", "response": {"id": "resp_2", "model": "gpt-5"}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
            json!({"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1", "content_index": 0, "delta": "The notes say hello."}),
            json!({"type": "response.completed", "response": {"id": "resp_2", "model": "gpt-5", "status": "completed", "usage": usage}}),
        ])
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let env = [("OPENAI_API_KEY", "sk-test")];
    let args = [
        "--provider",
        "openai-responses",
        "--base-url",
        &url,
        "--thinking",
        "low",
        "What do the notes say?",
    ];
    let out = zidane(home.path(), work.path(), &env, &args).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("The notes say hello."), "{stdout}");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2);
    let second: Value = serde_json::from_str(&bodies[1]).unwrap();
    assert_eq!(second["store"], false);
    assert_eq!(second["reasoning"]["effort"], "low");
    let input = second["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["message", "reasoning", "function_call", "function_call_output"]);
    assert_eq!(input[1]["encrypted_content"], "enc-1");
    assert!(input[3]["output"].as_str().unwrap().contains("hello"), "{}", input[3]);
}

/// `zidane mcp login`: an unknown server is named, and a server that cannot
/// be reached fails the login with a message and a non-zero exit.
#[tokio::test]
async fn mcp_login_names_what_went_wrong() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = work.path().join("servers.json");
    std::fs::write(
        &config,
        format!(r#"{{"mcpServers": {{"docs": {{"url": "http://127.0.0.1:{port}/mcp", "auth": "oauth"}}}}}}"#),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let out = zidane(
        home.path(),
        work.path(),
        &[],
        &["--mcp", config, "mcp", "login", "nope"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no MCP server `nope` in the configuration"),
        "{}",
        text(&out.stderr)
    );
    let out = zidane(
        home.path(),
        work.path(),
        &[],
        &["--mcp", config, "mcp", "login", "docs"],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("the login to `docs` failed"), "{stderr}");
}

/// `--session ID` on an id the sessions file does not hold says it starts
/// a new session (a mistyped id is seen at once); on a known id it says
/// nothing of the kind.
#[tokio::test]
async fn a_session_id_never_seen_is_said_to_start_a_new_session() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, _bodies) = server_with(None, |_| answer_sse("Hello.", 10)).await;
    let env = [("ANTHROPIC_API_KEY", "sk-test")];
    let args = ["--base-url", url.as_str(), "-p", "--session", "fresh", "Hi."];
    let first = zidane(home.path(), work.path(), &env, &args).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let said = text(&first.stderr);
    assert!(
        said.contains("zidane: no session `fresh` in ") && said.contains("; starting a new session under that id"),
        "{said}"
    );
    let again = zidane(home.path(), work.path(), &env, &args).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert!(!text(&again.stderr).contains("no session"), "{}", text(&again.stderr));
}
