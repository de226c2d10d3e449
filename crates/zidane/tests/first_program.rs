//! The README's first program, run as a person runs it: its answer, and
//! what its `main` prints when the key is missing, the server refuses the
//! connection or answers 401 (the `Debug` of the error `?` returned,
//! which reads as a sentence with its causes).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::process::Output;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use zidane_bench::loopback::{answer_sse, scripted_server};

const README: &str = include_str!("../../../README.md");
const HELLO: &str = include_str!("../examples/hello.rs");

/// The README's first `rust` block.
fn first_readme_program() -> &'static str {
    let start = README.find("```rust").expect("a rust block");
    let body = &README[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    &body[..body.find("```").unwrap()]
}

#[test]
fn the_readme_opens_with_the_hello_example_in_the_short_form() {
    // The example is the README's program, after its header.
    let program = HELLO
        .split_once("#![allow(clippy::print_stdout)]\n\n")
        .expect("the example's header")
        .1;
    assert_eq!(first_readme_program(), program);
    assert!(program.contains("AgentOptions::new(provider)"), "{program}");
    assert!(!program.contains("..Default::default()"), "{program}");
}

async fn hello(env: &[(&str, &str)]) -> Output {
    let mut command = tokio::process::Command::new(zidane_bench::examples::path("hello"));
    command
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("RUST_LOG");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().await.unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_program_answers_and_counts_model_turns() {
    let url = scripted_server(|_path, _body| answer_sse("Hello there, nice to meet.", 12))
        .await
        .unwrap();
    let out = hello(&[("ANTHROPIC_API_KEY", "sk-test"), ("ANTHROPIC_BASE_URL", &url)]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("Hello there, nice to meet.\nmodel turns: 1, output tokens: "),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_key_prints_a_sentence() {
    let out = hello(&[]).await;
    assert!(!out.status.success());
    assert_eq!(
        stderr(&out),
        "Error: anthropic: authentication failed: no credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_prints_the_servers_reason() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0u8; 65536];
            let _ = socket.read(&mut buf).await;
            let body = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
            let reply = format!(
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nrequest-id: req_1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(reply.as_bytes()).await.unwrap();
        }
    });
    let out = hello(&[("ANTHROPIC_API_KEY", "sk-wrong"), ("ANTHROPIC_BASE_URL", &url)]).await;
    assert!(!out.status.success());
    assert_eq!(
        stderr(&out),
        format!(
            "Error: anthropic: authentication failed (HTTP 401): invalid x-api-key ({url}/v1/messages) [request req_1]\n"
        )
    );
}

/// A server that is not there: the run retries (on tokio's paused clock
/// here) and then fails; `main` would print this, the cause on its line.
#[tokio::test(start_paused = true)]
async fn a_refused_connection_prints_the_cause() {
    use zidane::prelude::*;
    let port = {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let provider = AnthropicProvider::new(AnthropicConfig::new("sk-test").with_base_url(&url)).unwrap();
    let agent = create_agent(AgentOptions::new(provider).system("You are brief.")).unwrap();
    let error = agent
        .run(AgentRunOptions::prompt("Say hello in five words."))
        .await
        .unwrap_err();
    let from_main: Box<dyn std::error::Error> = error.into();
    let printed = format!("Error: {from_main:?}");
    assert_eq!(
        printed,
        format!(
            "Error: anthropic: unreachable: could not connect ({url}/v1/messages)\n\nCaused by:\n    0: tcp connect error\n    1: Connection refused (os error 111)"
        )
    );
}
