//! MCP servers through the agent: connected at warm-up (once), used by runs,
//! closed on destroy.

use std::path::Path;

use serde_json::json;
use zidane_agent::{AgentOptions, AgentRunOptions, create_agent};
use zidane_mcp::McpServerConfig;
use zidane_provider::ContentBlock;
use zidane_provider::scripted::Script;

use crate::support::{options, provider, record};

fn everything() -> McpServerConfig {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers/node_modules/.bin/mcp-server-everything");
    assert!(
        bin.exists(),
        "{} is missing: the MCP tests run real servers that `cargo xtask mcp-servers` installs into target/mcp-servers \
         (it needs Node with npm and Python 3 with pip; `cargo xtask ci` runs it first)",
        bin.display()
    );
    let mut config = McpServerConfig::stdio("everything", bin.display().to_string(), ["stdio"]);
    config.enabled_tools = Some(vec!["echo".into()]);
    config.instructions = Some("Use echo to repeat text.".into());
    config
}

#[tokio::test]
async fn mcp_tools_reach_the_model_and_the_connection_closes_on_destroy() {
    let p = provider(vec![
        Script::call("c1", "mcp_everything_echo", json!({"message": "hello"})),
        Script::answer("ok"),
    ]);
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![everything()],
        ..options(&p)
    })
    .unwrap();
    let log = record(&agent);
    let (a, b) = tokio::join!(agent.warmup(), agent.warmup());
    a.unwrap();
    b.unwrap();
    assert_eq!(
        log.lock()
            .unwrap()
            .iter()
            .filter(|n| **n == "mcp:bootstrap:settled")
            .count(),
        1,
        "one bootstrap for concurrent warm-ups"
    );
    agent.run(AgentRunOptions::prompt("Echo hello.")).await.unwrap();

    let first = &p.requests()[0];
    assert!(first.tools.iter().any(|t| t.name == "mcp_everything_echo"));
    assert!(
        first
            .system
            .as_deref()
            .unwrap_or_default()
            .contains("Use echo to repeat text."),
        "the server's instructions are in the system prompt"
    );
    let result = p.requests()[1].messages.last().unwrap().clone();
    assert!(
        matches!(&result.content()[0], ContentBlock::ToolResult { content, .. } if content == &"Echo: hello".into())
    );
    assert_eq!(agent.mcp_servers().len(), 1);
    assert!(agent.mcp_connection().await.is_some());
    agent.destroy().await;
    assert!(log.lock().unwrap().contains(&"mcp:close"));
    assert!(agent.mcp_connection().await.is_none());
}

#[tokio::test]
async fn the_tool_wrap_sees_the_server_side_name_and_an_eager_connect_is_not_lazy() {
    use std::sync::{Arc, Mutex};
    use zidane_core::events::McpConnect;
    use zidane_mcp::{McpToolMeta, McpToolWrap};

    let p = provider(vec![Script::answer("ok")]);
    let mut config = everything();
    config.name = "my_server".into();
    let seen: Arc<Mutex<Vec<McpToolMeta>>> = Arc::default();
    let s = Arc::clone(&seen);
    let wrap: McpToolWrap = Arc::new(move |tool, meta| {
        s.lock().unwrap().push(meta.clone());
        tool
    });
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![config],
        mcp_tool_wrap: Some(wrap),
        ..options(&p)
    })
    .unwrap();
    let lazy: Arc<Mutex<Vec<bool>>> = Arc::default();
    let l = Arc::clone(&lazy);
    agent.hooks().on_sync::<McpConnect, _>(move |ev, _| {
        l.lock().unwrap().push(ev.lazy());
        Ok(())
    });
    agent.warmup().await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![McpToolMeta {
            server: "my_server".into(),
            tool_name: "echo".into()
        }]
    );
    assert_eq!(
        *lazy.lock().unwrap(),
        vec![false],
        "connected by the bootstrap, not on a call"
    );
    agent.destroy().await;
}

#[tokio::test]
async fn warmup_reports_a_failed_server_and_the_next_warmup_retries_it() {
    use std::os::unix::fs::PermissionsExt;
    use zidane_agent::AgentError;

    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("late-server.sh");
    let everything_bin = match &everything().transport {
        zidane_mcp::McpTransportConfig::Stdio { command, .. } => command.clone(),
        _ => unreachable!(),
    };
    let mut late = McpServerConfig::stdio("late", script.display().to_string(), Vec::<String>::new());
    late.enabled_tools = Some(vec!["echo".into()]);
    let p = provider(vec![Script::answer("ok")]);
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![everything(), late],
        ..options(&p)
    })
    .unwrap();
    let log = record(&agent);

    let err = agent.warmup().await.unwrap_err();
    let AgentError::McpBootstrap { failures } = &err else {
        panic!("expected a bootstrap failure, got {err}");
    };
    assert_eq!(
        failures.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        vec!["late"]
    );
    assert!(
        err.to_string().starts_with("MCP servers failed to connect: late ("),
        "{err}"
    );
    let names: Vec<String> = agent
        .mcp_connection()
        .await
        .unwrap()
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, vec!["mcp_everything_echo"], "the working server stays connected");

    // The server becomes available; the next warm-up connects it, and only it.
    std::fs::write(&script, format!("#!/bin/sh\nexec '{everything_bin}' stdio\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    agent.warmup().await.unwrap();
    let names: Vec<String> = agent
        .mcp_connection()
        .await
        .unwrap()
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, vec!["mcp_everything_echo", "mcp_late_echo"]);
    let starts = log
        .lock()
        .unwrap()
        .iter()
        .filter(|n| **n == "mcp:bootstrap:start")
        .count();
    assert_eq!(starts, 3, "everything once, late twice");
    agent.destroy().await;
}

#[test]
fn eager_outside_a_runtime_starts_its_work_on_the_first_run() {
    let p = provider(vec![Script::answer("ok")]);
    let store = std::sync::Arc::new(zidane_core::session::MemoryStore::new());
    // No runtime runs here: nothing can start yet, and nothing is refused.
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![everything()],
        eager: true,
        session_id: Some("kept".into()),
        store: Some(store.clone()),
        ..options(&p)
    })
    .unwrap();
    assert!(agent.session().is_none(), "not loaded yet");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let log = record(&agent);
        agent.run(AgentRunOptions::prompt("Hi.")).await.unwrap();
        assert!(agent.mcp_connection().await.is_some(), "the servers connected");
        assert_eq!(
            log.lock()
                .unwrap()
                .iter()
                .filter(|n| **n == "mcp:bootstrap:settled")
                .count(),
            1,
            "one bootstrap, shared by the deferred warm-up and the run"
        );
        assert_eq!(agent.session().unwrap().id, "kept");
        agent.destroy().await;
    });
}

#[tokio::test]
async fn warmup_without_mcp_servers_resolves_at_once() {
    let p = provider(vec![]);
    let agent = create_agent(options(&p)).unwrap();
    let log = record(&agent);
    agent.warmup().await.unwrap();
    assert!(agent.handle().await.is_none(), "no execution handle was spawned");
    assert!(
        !log.lock()
            .unwrap()
            .iter()
            .any(|n| n.starts_with("mcp:") || *n == "execution:ready"),
        "{:?}",
        log.lock().unwrap()
    );
}

#[tokio::test]
async fn eager_connects_the_servers_only() {
    use std::sync::Mutex;
    use zidane_hooks::{DynHandler, HookMap};
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let tx = Mutex::new(Some(tx));
    let hooks = HookMap::new().on_named(
        "mcp:bootstrap:settled",
        DynHandler::sync(move |_, _| {
            if let Some(tx) = tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
            Ok(())
        }),
    );
    let p = provider(vec![]);
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![everything()],
        eager: true,
        hooks,
        ..options(&p)
    })
    .unwrap();
    rx.await.expect("the background bootstrap settled");
    // The connection is stored right after it settles; this waits for it.
    assert!(
        agent.mcp_connection().await.is_some(),
        "the servers were connected in the background"
    );
    assert!(
        agent.handle().await.is_none(),
        "eager does not spawn the execution handle"
    );
    agent.destroy().await;
}

/// A server that never answers its handshake times out once; later runs
/// skip it instead of waiting out its bound again, and `warmup` tries it
/// again.
#[tokio::test(start_paused = true)]
async fn a_server_that_timed_out_is_skipped_by_later_runs() {
    let mut silent = McpServerConfig::stdio("silent", "sleep", ["600"]);
    silent.connect_timeout = std::time::Duration::from_secs(10);
    let p = provider(vec![Script::answer("one"), Script::answer("two")]);
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![silent],
        ..options(&p)
    })
    .unwrap();
    let log = record(&agent);
    let tries = || {
        log.lock()
            .unwrap()
            .iter()
            .filter(|n| **n == "mcp:bootstrap:start")
            .count()
    };
    let before = tokio::time::Instant::now();
    agent.run(AgentRunOptions::prompt("First.")).await.unwrap();
    assert_eq!(
        before.elapsed(),
        std::time::Duration::from_secs(5),
        "the first run starts without the server after five seconds, not its bound"
    );
    // The bootstrap goes on until the server's bound.
    tokio::time::sleep(std::time::Duration::from_secs(10)).await;
    assert_eq!(tries(), 1);

    let before = tokio::time::Instant::now();
    agent.run(AgentRunOptions::prompt("Second.")).await.unwrap();
    assert_eq!(
        before.elapsed(),
        std::time::Duration::ZERO,
        "the second run does not wait again"
    );
    assert_eq!(tries(), 1, "and does not try it again");

    assert!(agent.warmup().await.is_err());
    assert_eq!(tries(), 2, "warmup tries it again");
    agent.destroy().await;
}

/// A slow server does not hold the run back: the run starts within five
/// seconds, the person is told once per server still starting
/// (`mcp:warn`), and the tools join the run at the first turn after the
/// servers are ready.
#[tokio::test]
async fn a_slow_server_joins_the_run_at_a_later_turn() {
    use zidane_core::events::{McpBootstrapSettled, McpWarn};
    let mut slow = McpServerConfig::stdio("slow", "sleep", ["600"]);
    // Past the run's five-second wait for its servers.
    slow.connect_timeout = std::time::Duration::from_secs(8);
    let settled = std::sync::Arc::new(tokio::sync::Notify::new());
    let wait = {
        let settled = std::sync::Arc::clone(&settled);
        zidane_core::FnTool::new("wait", "Waits", json!({"type": "object"}), move |_, _| {
            let settled = std::sync::Arc::clone(&settled);
            async move {
                settled.notified().await;
                Ok(zidane_core::ToolOutput::text("waited"))
            }
        })
    };
    let p = provider(vec![Script::call("c1", "wait", json!({})), Script::answer("done")]);
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![everything(), slow],
        tools: zidane_core::ToolSet::new().with(wait),
        ..options(&p)
    })
    .unwrap();
    {
        let settled = std::sync::Arc::clone(&settled);
        agent.hooks().on_sync::<McpBootstrapSettled, _>(move |_, _| {
            settled.notify_one();
            Ok(())
        });
    }
    let warned = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    {
        let warned = std::sync::Arc::clone(&warned);
        agent.hooks().on_sync::<McpWarn, _>(move |ev, _| {
            // The servers' own stderr lines come as `mcp:warn` too.
            if ev.message().contains("is still starting") {
                warned.lock().unwrap().push(ev.name().to_owned());
            }
            Ok(())
        });
    }
    let started = std::time::Instant::now();
    agent.run(AgentRunOptions::prompt("Go.")).await.unwrap();
    let requests = p.requests();
    let tools = |i: usize| -> Vec<String> { requests[i].tools.iter().map(|t| t.name.clone()).collect() };
    assert!(
        !tools(0).contains(&"mcp_everything_echo".to_owned()),
        "the first turn went without waiting for the servers: {:?}",
        tools(0)
    );
    assert!(
        tools(1).contains(&"mcp_everything_echo".to_owned()),
        "the ready server's tools joined the next turn: {:?}",
        tools(1)
    );
    assert_eq!(*warned.lock().unwrap(), ["everything", "slow"], "told once per server");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(8),
        "the slow server's bound passed meanwhile"
    );
    agent.destroy().await;
}

/// An abort while a server is still starting stops the run there, without
/// waiting out the server's bound or sending a request.
#[tokio::test(start_paused = true)]
async fn an_abort_during_the_bootstrap_stops_the_run_at_once() {
    let mut silent = McpServerConfig::stdio("silent", "sleep", ["600"]);
    silent.connect_timeout = std::time::Duration::from_secs(30);
    let p = provider(vec![Script::answer("never")]);
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![silent],
        ..options(&p)
    })
    .unwrap();
    let started = std::sync::Arc::new(tokio::sync::Notify::new());
    let s = std::sync::Arc::clone(&started);
    agent
        .hooks()
        .on_sync::<zidane_core::events::McpBootstrapStart, _>(move |_, _| {
            s.notify_one();
            Ok(())
        });
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.run(AgentRunOptions::prompt("Go.")).await }
    });
    started.notified().await;
    let before = tokio::time::Instant::now();
    agent.abort();
    let stats = run.await.unwrap().unwrap();
    assert!(before.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(stats.status, zidane_core::events::RunStatus::Aborted);
    assert!(p.requests().is_empty());
}

/// A sub-agent calls the parent's MCP tools through the parent's live
/// connection: no second bootstrap, no close when the child ends, and a
/// parent `child:mcp:tool:gate` handler decides the child's call.
#[tokio::test]
async fn a_sub_agent_uses_the_parents_mcp_connection_and_the_parent_gates_it() {
    use std::sync::{Arc, Mutex};
    use zidane_core::events::ChildMcpToolGate;

    // One child at a time: the scripts are played in order.
    let p = provider(vec![
        Script::call("s1", "spawn", json!({"task": "Echo twice."})),
        Script::call("c1", "mcp_everything_echo", json!({"message": "first"})),
        Script::call("c2", "mcp_everything_echo", json!({"message": "second"})),
        Script::answer("echoed"),
        Script::answer("the child echoed"),
    ]);
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![everything()],
        tools: crate::support::echo_tools().with(zidane_tools::spawn()),
        ..options(&p)
    })
    .unwrap();
    let log = record(&agent);
    let gated: Arc<Mutex<Vec<String>>> = Arc::default();
    let g = Arc::clone(&gated);
    agent.hooks().on_sync::<ChildMcpToolGate, _>(move |ev, _| {
        g.lock()
            .unwrap()
            .push(format!("{} {} {}", ev.child_id(), ev.tool(), ev.input()["message"]));
        if ev.input()["message"] == "second" {
            ev.block = true;
            ev.reason = "one echo is enough".into();
        }
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Delegate.")).await.unwrap();
    assert_eq!(*gated.lock().unwrap(), vec!["s1 echo \"first\"", "s1 echo \"second\""]);
    let requests = p.requests();
    // The child has the servers' tools, and reads what they say of them.
    assert!(
        requests[1]
            .system
            .as_deref()
            .unwrap_or_default()
            .contains("Use echo to repeat text."),
        "{:?}",
        requests[1].system
    );
    let results: Vec<ContentBlock> = requests[2..4]
        .iter()
        .map(|r| r.messages.last().unwrap().content()[0].clone())
        .collect();
    assert!(
        matches!(&results[0], ContentBlock::ToolResult { content, is_error: false, .. } if content == &"Echo: first".into()),
        "{results:?}"
    );
    assert!(
        matches!(&results[1], ContentBlock::ToolResult { content, is_error: true, .. } if content == &"Blocked: one echo is enough".into()),
        "{results:?}"
    );
    let names = log.lock().unwrap().clone();
    assert_eq!(names.iter().filter(|n| **n == "mcp:connect").count(), 1, "{names:?}");
    assert!(
        !names.contains(&"mcp:close"),
        "the child closed the parent's connection"
    );
    assert!(agent.mcp_connection().await.is_some());
    agent.destroy().await;
    assert!(log.lock().unwrap().contains(&"mcp:close"));
}

/// Tokens kept in the sessions file survive reopening it, and never show
/// in their debug form.
#[cfg(feature = "sqlite")]
#[test]
fn oauth_tokens_live_in_the_sessions_file() {
    use zidane_mcp::oauth::{OAuthClient, OAuthStore, OAuthTokens};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let tokens = OAuthTokens {
        server_url: "http://h/mcp".into(),
        resource: "http://h/mcp".into(),
        token_endpoint: "http://h/token".into(),
        client: OAuthClient {
            client_id: "c".into(),
            client_secret: Some("client-secret-1".into()),
            auth_method: "client_secret_basic".into(),
        },
        access_token: "access-token-1".into(),
        refresh_token: Some("refresh-token-1".into()),
        expires_at: Some(1),
        scope: Some("mcp:basic".into()),
    };
    {
        let store = zidane_agent::SqliteStore::open(&path).unwrap();
        assert_eq!(store.load("docs").unwrap(), None);
        store.save("docs", &tokens).unwrap();
    }
    let store = zidane_agent::SqliteStore::open(&path).unwrap();
    let back = store.load("docs").unwrap().unwrap();
    assert_eq!(back, tokens);
    let shown = format!("{back:?}");
    assert!(
        !shown.contains("access-token-1") && !shown.contains("refresh-token-1") && !shown.contains("client-secret-1")
    );
    store.remove("docs").unwrap();
    assert_eq!(store.load("docs").unwrap(), None);
}

/// The agent's OAuth store and elicitation handler go to every server that
/// names none of its own; a server's own are kept.
#[test]
fn the_agents_oauth_store_and_elicitation_reach_its_servers() {
    use std::sync::Arc;
    use zidane_mcp::oauth::{MemoryOAuthStore, OAuthStore};
    use zidane_mcp::{ElicitationAnswer, ElicitationHandler, ElicitationRequest};
    let http = |name: &str| {
        McpServerConfig::new(
            name,
            zidane_mcp::McpTransportConfig::StreamableHttp {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: Default::default(),
            },
        )
    };
    let shared: Arc<dyn OAuthStore> = Arc::new(MemoryOAuthStore::default());
    let own: Arc<dyn OAuthStore> = Arc::new(MemoryOAuthStore::default());
    let answer: ElicitationHandler = Arc::new(|_: ElicitationRequest| {
        Box::pin(async { ElicitationAnswer::Decline }) as zidane_provider::BoxFuture<'static, ElicitationAnswer>
    });
    let mut keeps = http("keeps");
    keeps.oauth_store = Some(Arc::clone(&own));
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![http("plain"), keeps],
        mcp_oauth_store: Some(Arc::clone(&shared)),
        mcp_elicitation: Some(Arc::clone(&answer)),
        ..options(&provider(vec![]))
    })
    .unwrap();
    let servers = agent.mcp_servers();
    assert!(Arc::ptr_eq(servers[0].oauth_store.as_ref().unwrap(), &shared));
    assert!(Arc::ptr_eq(servers[1].oauth_store.as_ref().unwrap(), &own));
    assert!(
        servers
            .iter()
            .all(|s| s.elicitation.as_ref().is_some_and(|e| Arc::ptr_eq(e, &answer)))
    );
    // Without a store of its own, an agent keeps tokens in memory.
    let bare = create_agent(AgentOptions {
        mcp_servers: vec![http("plain")],
        ..options(&provider(vec![]))
    })
    .unwrap();
    assert!(bare.mcp_servers()[0].oauth_store.is_some());
    assert!(bare.mcp_servers()[0].elicitation.is_none());
}

fn filesystem(name: &str, root: &Path) -> McpServerConfig {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers/node_modules/.bin/mcp-server-filesystem");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo xtask mcp-servers`",
        bin.display()
    );
    let mut config = McpServerConfig::stdio(name, bin.display().to_string(), [root.display().to_string()]);
    config.enabled_tools = Some(vec!["write_file".into()]);
    config
}

/// Runs one `write_file` call of the filesystem server at `outside` through
/// an agent working in `work` with the basic preset (commands confined by
/// default); the result the model read.
async fn write_through_mcp(work: &Path, server: McpServerConfig, target: &Path) -> String {
    let preset = zidane_tools::basic(zidane_tools::BasicOptions::in_folder(work));
    assert!(preset.confinement.is_confined(), "{:?}", preset.confinement);
    write_with(Some(preset.execution), server, target).await
}

/// [`write_through_mcp`] with the agent's execution context as given
/// (`None`: the agent's default).
async fn write_with(
    execution: Option<std::sync::Arc<dyn zidane_core::ExecutionContext>>,
    server: McpServerConfig,
    target: &Path,
) -> String {
    let name = server.name.clone();
    let p = provider(vec![
        Script::call(
            "w",
            format!("mcp_{name}_write_file"),
            json!({"path": target.display().to_string(), "content": "escaped"}),
        ),
        Script::answer("done"),
    ]);
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![server],
        execution,
        ..options(&p)
    })
    .unwrap();
    agent.warmup().await.unwrap();
    agent.run(AgentRunOptions::prompt("Write.")).await.unwrap();
    agent.destroy().await;
    let request = p.requests().last().cloned().unwrap();
    request
        .messages
        .iter()
        .flat_map(|m| m.content().to_vec())
        .find_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => Some(content.text()),
            _ => None,
        })
        .unwrap()
}

#[tokio::test]
async fn a_stdio_server_runs_in_the_execution_contexts_sandbox() {
    let work = tempfile::tempdir().unwrap();
    // Outside the working folder and the temporary folder.
    let outside = outside_tmp();
    let target = outside.path().join("escaped.txt");
    let refused = write_through_mcp(work.path(), filesystem("fs", outside.path()), &target).await;
    assert!(
        !target.exists(),
        "the confined server wrote outside the folder: {refused}"
    );
    assert!(
        refused.contains("EACCES") || refused.to_lowercase().contains("permission denied"),
        "{refused}"
    );

    // A server configured with `"sandbox": false` may.
    let mut open = filesystem("fsopen", outside.path());
    open.unconfined = true;
    let written = write_through_mcp(work.path(), open, &target).await;
    assert!(target.exists(), "the unconfined server could not write: {written}");
}

/// A library user who gives no execution context gets the program's
/// default: stdio servers start confined (the agent's folder is the current
/// one, the crate's). A context elsewhere than this machine cannot start
/// them, so they are refused with a reason, not started here unconfined.
#[tokio::test]
async fn stdio_servers_are_confined_whatever_the_execution_context() {
    let outside = outside_tmp();
    let target = outside.path().join("escaped.txt");
    let refused = write_with(None, filesystem("fs", outside.path()), &target).await;
    assert!(
        !target.exists(),
        "the default context's server wrote outside: {refused}"
    );
    assert!(
        refused.contains("EACCES") || refused.to_lowercase().contains("permission denied"),
        "{refused}"
    );

    let agent = create_agent(AgentOptions {
        mcp_servers: vec![filesystem("fs", outside.path())],
        execution: Some(std::sync::Arc::new(Elsewhere)),
        ..options(&provider(vec![]))
    })
    .unwrap();
    let failed = agent.warmup().await.unwrap_err().to_string();
    assert!(
        failed.contains("the agent's commands run in the `container` execution context, not on this machine"),
        "{failed}"
    );
}

/// An execution context that is not this machine (a container's, say).
struct Elsewhere;

impl zidane_core::ExecutionContext for Elsewhere {
    fn kind(&self) -> &str {
        "container"
    }
    fn spawn(
        &self,
    ) -> zidane_provider::BoxFuture<'_, Result<zidane_core::events::ExecutionHandle, zidane_core::events::SharedError>>
    {
        Box::pin(async {
            Ok(zidane_core::events::ExecutionHandle {
                id: "c".into(),
                kind: "container".into(),
            })
        })
    }
    fn exec<'a>(
        &'a self,
        _: &'a zidane_core::events::ExecutionHandle,
        _: &'a str,
        _: zidane_core::execution::ExecOptions,
    ) -> zidane_provider::BoxFuture<'a, Result<zidane_core::execution::ExecOutput, zidane_core::events::SharedError>>
    {
        Box::pin(async { Ok(zidane_core::execution::ExecOutput::default()) })
    }
    fn read_file<'a>(
        &'a self,
        _: &'a zidane_core::events::ExecutionHandle,
        _: &'a str,
    ) -> zidane_provider::BoxFuture<'a, Result<Vec<u8>, zidane_core::events::SharedError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn write_file<'a>(
        &'a self,
        _: &'a zidane_core::events::ExecutionHandle,
        _: &'a str,
        _: &'a [u8],
    ) -> zidane_provider::BoxFuture<'a, Result<(), zidane_core::events::SharedError>> {
        Box::pin(async { Ok(()) })
    }
    fn list<'a>(
        &'a self,
        _: &'a zidane_core::events::ExecutionHandle,
        _: &'a str,
    ) -> zidane_provider::BoxFuture<'a, Result<Vec<zidane_core::execution::DirEntry>, zidane_core::events::SharedError>>
    {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn stat<'a>(
        &'a self,
        _: &'a zidane_core::events::ExecutionHandle,
        _: &'a str,
    ) -> zidane_provider::BoxFuture<
        'a,
        Result<Option<zidane_core::execution::FileStat>, zidane_core::events::SharedError>,
    > {
        Box::pin(async { Ok(None) })
    }
    fn destroy<'a>(&'a self, _: &'a zidane_core::events::ExecutionHandle) -> zidane_provider::BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// A folder outside both the working folder and the temporary folder
/// (which `workspace-write` leaves open), and outside the package
/// managers' caches a server may write: under the build's `target/`, or
/// the home folder when the checkout itself sits in the temporary folder.
fn outside_tmp() -> tempfile::TempDir {
    let temp = std::env::temp_dir().canonicalize().unwrap();
    let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let outside = [Some(target), home]
        .into_iter()
        .flatten()
        .filter_map(|dir| dir.canonicalize().ok())
        .find(|dir| !dir.starts_with(&temp))
        .expect("a folder outside the temporary folder");
    tempfile::tempdir_in(outside).unwrap()
}

/// `mcp_connector` owns connecting: the agent hands it its servers (each
/// with the agent's OAuth store filled in) and its bus; one that narrows
/// the servers' tools and delegates to `connect_mcp_servers` keeps every
/// `mcp:*` hook firing, and what it connects is what the model is offered.
#[tokio::test]
async fn a_custom_connector_connects_the_servers_its_way() {
    use std::sync::{Arc, Mutex};
    struct Narrowing(Arc<Mutex<Vec<(String, bool)>>>);
    impl zidane_mcp::McpConnector for Narrowing {
        fn connect<'a>(
            &'a self,
            configs: &'a [McpServerConfig],
            hooks: &'a zidane_hooks::HookBus,
        ) -> zidane_provider::BoxFuture<'a, zidane_mcp::McpConnection> {
            Box::pin(async move {
                let mut narrowed = Vec::new();
                for config in configs {
                    self.0
                        .lock()
                        .unwrap()
                        .push((config.name.clone(), config.oauth_store.is_some()));
                    let mut config = config.clone();
                    config.enabled_tools = Some(vec!["get-sum".into()]);
                    narrowed.push(config);
                }
                zidane_mcp::connect_mcp_servers(&narrowed, hooks).await
            })
        }
    }
    let p = provider(vec![
        Script::call("c1", "mcp_everything_get-sum", json!({"a": 2, "b": 3})),
        Script::answer("ok"),
    ]);
    let asked: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let agent = create_agent(AgentOptions {
        mcp_servers: vec![everything()],
        mcp_connector: Some(Arc::new(Narrowing(Arc::clone(&asked)))),
        ..options(&p)
    })
    .unwrap();
    let log = record(&agent);
    agent.run(AgentRunOptions::prompt("Add.")).await.unwrap();
    assert_eq!(*asked.lock().unwrap(), [("everything".to_owned(), true)]);
    let requests = p.requests();
    let first = &requests[0];
    let offered: Vec<&str> = first
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| n.starts_with("mcp_"))
        .collect();
    assert_eq!(
        offered,
        ["mcp_everything_get-sum"],
        "the connector's choice, not the config's"
    );
    let result = &requests[1].messages[2].content()[0];
    assert!(
        matches!(result, ContentBlock::ToolResult { content, is_error: false, .. } if format!("{content:?}").contains('5')),
        "{result:?}"
    );
    assert!(log.lock().unwrap().contains(&"mcp:bootstrap:settled"));
    agent.destroy().await;
}
