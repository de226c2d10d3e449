//! The PostgreSQL backend shared by two hosts: each host is a process of
//! its own, in a working folder of its own, with a host name of its own,
//! on one database. The one running a session is killed with SIGKILL in
//! the middle of a tool batch and the other resumes the run.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use serde_json::json;
use zidane_agent::{
    AgentError, AgentOptions, AgentRunOptions, DurableOptions, DurableResumeOptions, PostgresOptions, PostgresRuntime,
    create_agent,
};
use zidane_core::durable::CheckpointBackend;
use zidane_core::events::ToolAfter;
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_provider::scripted::Script;
use zidane_provider::{ContentBlock, FinishReason, Provider, Role};

use crate::support::{postgres_schema, postgres_url, provider};

static FIRST_DONE: tokio::sync::Notify = tokio::sync::Notify::const_new();

fn effect(line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open("effects.log")
        .unwrap();
    writeln!(f, "{line}").unwrap();
}

fn say(line: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Each effect is a line in `effects.log` of the host's working folder.
fn tools() -> ToolSet {
    ToolSet::new()
        .with(
            FnTool::new(
                "write_note",
                "Writes a note",
                json!({"type": "object"}),
                |_i, cx| async move {
                    effect(&format!("write:{}", cx.call_id()));
                    Ok(ToolOutput::text(format!("wrote {}", cx.call_id())))
                },
            )
            .parallel(),
        )
        .with(
            FnTool::new("hang", "Runs long", json!({"type": "object"}), |_i, cx| async move {
                effect(&format!("hang:{}", cx.call_id()));
                FIRST_DONE.notified().await;
                say("READY");
                std::future::pending::<()>().await;
                Ok(ToolOutput::text("never"))
            })
            .parallel(),
        )
}

/// Not a test of its own: a host of the tests below, which re-run this
/// binary filtered to this function with `ZIDANE_PG_ROLE` set. Without
/// the variable it returns at once.
#[tokio::test]
async fn postgres_host_helper() {
    let (Ok(role), Ok(host), Ok(schema)) = (
        std::env::var("ZIDANE_PG_ROLE"),
        std::env::var("ZIDANE_PG_HOST"),
        std::env::var("ZIDANE_PG_SCHEMA"),
    ) else {
        return;
    };
    let options = PostgresOptions {
        schema: Some(schema),
        host: Some(host.clone()),
        ..Default::default()
    };
    let rt = Arc::new(PostgresRuntime::connect(&postgres_url(), options).await.unwrap());
    let scripts = match role.as_str() {
        "work" => vec![
            Script::new()
                .tool_call(0, "c1", "write_note", json!({}))
                .tool_call(1, "c2", "hang", json!({}))
                .usage(10, 5)
                .end(FinishReason::ToolCalls),
        ],
        _ => vec![Script::answer(format!("done on {host}"))],
    };
    let p = provider(scripts);
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(p.clone()) as Arc<dyn Provider>],
        tools: tools(),
        session_id: Some("shared".into()),
        durable: Some(DurableOptions::from(rt as Arc<dyn CheckpointBackend>)),
        ..Default::default()
    })
    .unwrap();
    agent.hooks().on_sync::<ToolAfter, _>(|_, _| {
        FIRST_DONE.notify_one();
        Ok(())
    });
    if role == "work" {
        let _ = agent.run(AgentRunOptions::prompt("Work.")).await;
        return;
    }
    match agent.resume(DurableResumeOptions::default()).await {
        Err(AgentError::RunLeaseHeld(held)) => say(&format!("HELD {} {}", held.host, held.pid)),
        Ok(Some(stats)) => say(&format!(
            "RESUMED completed={} requests={}",
            stats.completed(),
            p.requests().len()
        )),
        other => say(&format!("UNEXPECTED {other:?}")),
    }
}

/// Starts a host in `folder` as `role`.
fn host(role: &str, name: &str, folder: &Path, schema: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "postgres::postgres_host_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .current_dir(folder)
        .env("ZIDANE_PG_ROLE", role)
        .env("ZIDANE_PG_HOST", name)
        .env("ZIDANE_PG_SCHEMA", schema)
        .env("ZIDANE_TEST_POSTGRES", postgres_url())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// What a host said first that starts with one of `words` (the test
/// harness may print the test's name before it on the same line).
fn line_of(child: &mut Child, words: &[&str]) -> String {
    let stdout = child.stdout.take().unwrap();
    BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| words.iter().find_map(|w| l.find(w).map(|at| l[at..].to_owned())))
        .unwrap_or_default()
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_run_killed_on_one_host_resumes_on_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let schema = postgres_schema(dir.path());
    let (a, b) = (dir.path().join("host-a"), dir.path().join("host-b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();

    let mut worker = host("work", "host-a", &a, &schema);
    assert_eq!(
        line_of(&mut worker, &["READY"]),
        "READY",
        "host a reached the hanging call"
    );

    // While host a lives, host b is refused, and told who holds the session.
    let mut early = host("resume", "host-b", &b, &schema);
    let refused = line_of(&mut early, &["HELD", "RESUMED", "UNEXPECTED"]);
    early.wait().unwrap();
    assert_eq!(refused, format!("HELD host-a {}", worker.id()));

    worker.kill().unwrap(); // SIGKILL
    worker.wait().unwrap();

    let mut resumer = host("resume", "host-b", &b, &schema);
    let resumed = line_of(&mut resumer, &["HELD", "RESUMED", "UNEXPECTED"]);
    resumer.wait().unwrap();
    assert_eq!(
        resumed, "RESUMED completed=true requests=1",
        "one model request, the answer"
    );

    assert_eq!(lines(&a.join("effects.log")), ["write:c1", "hang:c2"]);
    assert!(
        lines(&b.join("effects.log")).is_empty(),
        "host b ran no call again: c1 had finished, c2 is reported interrupted"
    );

    let options = PostgresOptions {
        schema: Some(schema),
        ..Default::default()
    };
    let rt = PostgresRuntime::connect(&postgres_url(), options).await.unwrap();
    let session = rt.session_store().load("shared").await.unwrap().unwrap();
    let texts: Vec<(Role, String)> = session
        .turns
        .iter()
        .map(|t| {
            let text = t
                .content
                .iter()
                .map(|b| match b {
                    ContentBlock::Text { text } => text.clone(),
                    ContentBlock::ToolUse { id, .. } => format!("call {id}"),
                    ContentBlock::ToolResult {
                        tool_use_id, content, ..
                    } => {
                        let text = content.text();
                        format!("{tool_use_id}: {}", text.split('(').next().unwrap_or_default().trim())
                    }
                    _ => String::new(),
                })
                .collect::<Vec<_>>()
                .join(" | ");
            (t.role, text)
        })
        .collect();
    assert_eq!(
        texts,
        [
            (Role::User, "Work.".to_owned()),
            (Role::Assistant, "call c1 | call c2".to_owned()),
            (
                Role::User,
                "c1: wrote c1 | c2: Tool error: this call was interrupted".to_owned()
            ),
            (Role::Assistant, "done on host-b".to_owned()),
        ]
    );
    let lease = rt.lease("shared").await.unwrap().unwrap();
    assert_eq!(
        (lease.host.as_str(), lease.epoch),
        ("host-b", 2),
        "host b took the session over"
    );
}

#[tokio::test]
async fn a_bad_connection_string_and_an_unreachable_server_are_typed_errors() {
    let options = PostgresOptions::default();
    let bad = PostgresRuntime::connect("postgresql://[::1", options.clone())
        .await
        .unwrap_err();
    assert!(matches!(bad, zidane_agent::PostgresError::Url(_)), "{bad:?}");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gone = PostgresRuntime::connect(&format!("postgresql://postgres@127.0.0.1:{port}/x"), options.clone())
        .await
        .unwrap_err();
    assert!(matches!(gone, zidane_agent::PostgresError::Connect(_)), "{gone:?}");
    let odd = PostgresOptions {
        schema: Some("x; DROP TABLE sessions".into()),
        ..options
    };
    let named = PostgresRuntime::connect(&postgres_url(), odd).await.unwrap_err();
    assert!(matches!(named, zidane_agent::PostgresError::SchemaName(_)), "{named:?}");
}

/// A TCP proxy on loopback to `upstream` that can go silent: it stops
/// forwarding in both directions but keeps every socket open, as a route
/// to a machine that vanished does (nothing arrives, nothing closes).
struct SilentProxy {
    port: u16,
    silent: Arc<std::sync::atomic::AtomicBool>,
}

impl SilentProxy {
    async fn start(upstream: String) -> Self {
        use std::sync::atomic::Ordering;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let silent = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Arc::clone(&silent);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = tokio::net::TcpStream::connect(&upstream).await.unwrap();
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                for (mut from, mut to) in [
                    (
                        Box::new(cr) as Box<dyn tokio::io::AsyncRead + Send + Unpin>,
                        Box::new(sw) as Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
                    ),
                    (Box::new(sr), Box::new(cw)),
                ] {
                    let flag = Arc::clone(&flag);
                    tokio::spawn(async move {
                        let mut buf = vec![0u8; 16 << 10];
                        loop {
                            let Ok(n) = from.read(&mut buf).await else { return };
                            if n == 0 {
                                return;
                            }
                            if flag.load(Ordering::SeqCst) {
                                // Silent: hold both ends open, forward nothing.
                                std::future::pending::<()>().await;
                            }
                            if to.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    });
                }
            }
        });
        SilentProxy { port, silent }
    }

    fn silence(&self) {
        self.silent.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A holder whose connection goes silent (its machine vanished; no close
/// ever reaches the server) gives its session up in bounded time: the
/// server ends its lock connection once it has heard nothing for
/// `lock_idle_timeout`, and the lock goes with it.
#[tokio::test]
async fn a_holder_whose_connection_goes_silent_loses_its_lease_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let schema = postgres_schema(dir.path());
    let url = postgres_url();
    let config: tokio_postgres::Config = url.parse().unwrap();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let proxy = SilentProxy::start(format!("127.0.0.1:{port}")).await;
    let through = url.replace(&format!(":{port}/"), &format!(":{}/", proxy.port));
    assert_ne!(through, url);

    let holder = Arc::new(
        PostgresRuntime::connect(
            &through,
            PostgresOptions {
                schema: Some(schema.clone()),
                host: Some("vanishing".into()),
                heartbeat: std::time::Duration::from_millis(250),
                lock_idle_timeout: std::time::Duration::from_millis(500),
                ..Default::default()
            },
        )
        .await
        .unwrap(),
    );
    assert!(Arc::clone(&holder).acquire("s".into()).await.unwrap());
    let other = Arc::new(
        PostgresRuntime::connect(
            &url,
            PostgresOptions {
                schema: Some(schema),
                host: Some("other".into()),
                acquire_wait: std::time::Duration::from_millis(100),
                ..Default::default()
            },
        )
        .await
        .unwrap(),
    );
    // Alive and heard from: the other host is refused.
    let held = Arc::clone(&other).acquire("s".into()).await.unwrap_err();
    assert!(matches!(held, zidane_core::durable::LeaseError::Held(_)), "{held:?}");

    proxy.silence();
    let silent_at = std::time::Instant::now();
    // The server's timer is real time: the lease frees about half a
    // second after the last heartbeat got through.
    let taken = loop {
        match Arc::clone(&other).acquire("s".into()).await {
            Ok(taken) => break taken,
            Err(zidane_core::durable::LeaseError::Held(_)) if silent_at.elapsed().as_secs() < 20 => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(e) => panic!(
                "the lease stayed with the silent holder ({:?}): {e:?}",
                silent_at.elapsed()
            ),
        }
    };
    assert!(taken);
    assert!(
        silent_at.elapsed() < std::time::Duration::from_secs(10),
        "freed after {:?}",
        silent_at.elapsed()
    );
    let lease = other.lease("s").await.unwrap().unwrap();
    assert_eq!((lease.host.as_str(), lease.epoch), ("other", 2));
}
