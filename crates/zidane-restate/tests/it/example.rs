//! The facade's `restate` example (`crates/zidane/examples/restate.rs`)
//! serves an agent a real Restate server registers and runs.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::net::TcpStream;
use tokio::process::Command;

use crate::ONE_AT_A_TIME;
use crate::harness::{Reply, Restate, answer, free_port, model, until};

/// An example of the facade, built on first use.
fn example(name: &str) -> std::path::PathBuf {
    zidane_bench::examples::path(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_restate_example_serves_an_agent_the_server_runs() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, _) = model(|_, _| Reply::Stream(answer("Hello from the example."))).await;
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut service = Command::new(example("restate"))
        .args([addr.as_str(), "--base-url", &url])
        .env("ANTHROPIC_API_KEY", "sk-test")
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    until("the example", Duration::from_secs(30), || {
        let addr = addr.clone();
        async move { TcpStream::connect(&addr).await.is_ok() }
    })
    .await;
    let restate = Restate::start().await;
    restate.register(&format!("http://{addr}")).await;

    let response = restate
        .call("example", "run", Some(&json!({"prompt": "Say hello."})))
        .await
        .json();
    assert_eq!(response["text"], "Hello from the example.", "{response}");
    assert_eq!(bodies.lock().unwrap().len(), 1);
    service.kill().await.unwrap();
}
