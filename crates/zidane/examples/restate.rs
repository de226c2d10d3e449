//! An agent served on Restate: the `ZidaneAgent` Virtual Object, keyed by
//! session id, journals every model call and tool call of a run in its
//! invocation, so a crashed service process (or a crashed Restate server)
//! resumes the run where it stopped.
//!
//! Start a Restate server, run this, register it, and start a run:
//!
//! ```sh
//! ANTHROPIC_API_KEY=... cargo run -p zidane --features restate --example restate -- 127.0.0.1:9080
//! restate deployments register http://127.0.0.1:9080
//! curl localhost:8080/ZidaneAgent/my-session/run --json '{"prompt": "Say hello."}'
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;

use std::sync::Arc;

use zidane::agent::AgentOptions;
use zidane::restate::{ZidaneAgent, serve};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::Args::parse();
    let bind = args.first_or("127.0.0.1:9080");
    let provider = common::provider(&args)?;
    let model = args.model();
    // Each session's agent: the object calls this with the session id.
    let object = ZidaneAgent::new(move |_session| {
        Ok(AgentOptions {
            provider: vec![Arc::clone(&provider)],
            model: model.clone(),
            system: Some("You are a helpful assistant.".into()),
            ..Default::default()
        })
    });
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    println!("serving ZidaneAgent on http://{}", listener.local_addr()?);
    serve(object, listener, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    Ok(())
}
