//! Real MCP servers over stdio: the npm `server-everything` and
//! `server-filesystem`, the PyPI `mcp-server-time`, and a server built on the
//! PyPI `mcp` package that dies in the middle of a call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use zidane_core::seams::Durability;

use serde_json::{Value, json};
use zidane_core::events::{HOOK_SPECS, McpToolSchema, ToolProgressEvent};
use zidane_core::tool::ToolContext;
use zidane_core::{Tool, ToolOutput};
use zidane_hooks::{DynHandler, HookBus};
use zidane_loop::{LoopConfig, RunLoop, RunOptions};
use zidane_mcp::{McpServerConfig, McpTransportConfig, connect_mcp_servers};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{AbortSignal, ContentBlock, Provider, ToolResultContent};

pub(crate) fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers")
}

pub(crate) fn bin(name: &str) -> String {
    let path = servers_dir().join("node_modules/.bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: the MCP tests run real servers that `cargo xtask mcp-servers` installs into target/mcp-servers \
         (it needs Node with npm and Python 3 with pip; `cargo xtask ci` runs it first)",
        path.display()
    );
    path.display().to_string()
}

fn python(name: &str, args: &[&str]) -> McpServerConfig {
    let py = servers_dir().join("py");
    assert!(
        py.join("mcp").exists(),
        "{} is missing: the MCP tests run real servers that `cargo xtask mcp-servers` installs into target/mcp-servers \
         (it needs Node with npm and Python 3 with pip; `cargo xtask ci` runs it first)",
        py.display()
    );
    let mut config = McpServerConfig::stdio(name, "python3", args.iter().copied());
    if let McpTransportConfig::Stdio { env, .. } = &mut config.transport {
        env.insert("PYTHONPATH".into(), servers_dir().join("py").display().to_string());
    }
    config
}

fn everything() -> McpServerConfig {
    McpServerConfig::stdio("everything", bin("mcp-server-everything"), ["stdio"])
}

fn record(bus: &HookBus) -> Arc<Mutex<Vec<&'static str>>> {
    let log: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    for spec in HOOK_SPECS {
        let log = Arc::clone(&log);
        spec.register(
            bus,
            &DynHandler::sync(move |ev, _| {
                log.lock().unwrap().push(ev.name());
                Ok(())
            }),
        );
    }
    log
}

pub(crate) fn text(out: &ToolOutput) -> String {
    match &out.content {
        ToolResultContent::Text(t) => t.clone(),
        ToolResultContent::Parts(p) => serde_json::to_string(p).unwrap(),
    }
}

pub(crate) async fn call(tool: &Arc<dyn Tool>, input: Value) -> Result<ToolOutput, String> {
    tool.execute(
        input,
        ToolContext::detached(tool.name(), "call-1", AbortSignal::never()),
    )
    .await
    .map_err(|e| e.to_string())
}

pub(crate) fn find(tools: &[Arc<dyn Tool>], name: &str) -> Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in {:?}", tools.iter().map(|t| t.name()).collect::<Vec<_>>()))
}

#[tokio::test]
async fn everything_over_stdio_lists_and_calls() {
    let bus = HookBus::new();
    let log = record(&bus);
    let connection = connect_mcp_servers(&[everything()], &bus).await;
    let hooks: Vec<&str> = log
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|n| *n != "mcp:warn")
        .collect();
    assert!(
        log.lock().unwrap().contains(&"mcp:warn"),
        "the server's stderr arrives as mcp:warn"
    );
    assert_eq!(
        hooks,
        vec![
            "mcp:bootstrap:start",
            "mcp:connect",
            "mcp:tools:list",
            "mcp:tools:filter",
            "mcp:bootstrap:end",
            "mcp:bootstrap:settled"
        ]
    );
    let tools = connection.tools();
    let echo = find(&tools, "mcp_everything_echo");
    assert_eq!(text(&call(&echo, json!({"message": "hi"})).await.unwrap()), "Echo: hi");
    let sum = find(&tools, "mcp_everything_get-sum");
    assert!(text(&call(&sum, json!({"a": 2, "b": 3})).await.unwrap()).contains('5'));
    let image = find(&tools, "mcp_everything_get-tiny-image");
    let out = call(&image, json!({})).await.unwrap();
    assert!(
        matches!(&out.content, ToolResultContent::Parts(parts) if parts.iter().any(|p| matches!(p, ContentBlock::Image { .. })))
    );
    let names: Vec<&str> = log
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|n| n.starts_with("mcp:tool:"))
        .collect();
    assert_eq!(
        &names[..4],
        &[
            "mcp:tool:before",
            "mcp:tool:gate",
            "mcp:tool:transform",
            "mcp:tool:after"
        ]
    );
    connection.close().await;
    assert!(log.lock().unwrap().contains(&"mcp:close"));
}

#[tokio::test]
async fn config_filters_and_the_filter_hook_narrow_the_tools() {
    let bus = HookBus::new();
    bus.on_sync::<zidane_core::events::McpToolsFilter, _>(|ev, _| {
        ev.tools.retain(|t| t.name != "get-sum");
        Ok(())
    });
    let mut config = everything();
    config.enabled_tools = Some(vec!["echo".into(), "get-sum".into(), "get-env".into()]);
    config.disabled_tools = vec!["get-env".into()];
    let connection = connect_mcp_servers(&[config], &bus).await;
    let names: Vec<String> = connection.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, vec!["mcp_everything_echo"]);
    connection.close().await;
}

#[tokio::test]
async fn a_failed_server_never_fails_the_others() {
    let bus = HookBus::new();
    let outcomes: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let o = Arc::clone(&outcomes);
    bus.on_sync::<zidane_core::events::McpBootstrapSettled, _>(move |ev, _| {
        for r in ev.results() {
            o.lock().unwrap().push((
                r.name.clone(),
                matches!(r.outcome, zidane_core::events::McpBootstrapOutcome::Ok { .. }),
            ));
        }
        Ok(())
    });
    let broken = McpServerConfig::stdio("broken", "/nonexistent/mcp-server", Vec::<String>::new());
    let http = McpServerConfig::new(
        "remote",
        McpTransportConfig::StreamableHttp {
            url: "http://127.0.0.1:9/mcp".into(),
            headers: BTreeMap::new(),
        },
    );
    let connection = connect_mcp_servers(&[http, everything(), broken], &bus).await;
    assert_eq!(
        *outcomes.lock().unwrap(),
        vec![
            ("broken".to_owned(), false),
            ("everything".to_owned(), true),
            ("remote".to_owned(), false)
        ],
        "sorted by name"
    );
    assert!(!connection.tools().is_empty());
    connection.close().await;
}

#[tokio::test]
async fn filesystem_server_reads_files_and_reports_error_results() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "remember the milk").unwrap();
    let bus = HookBus::new();
    let config = McpServerConfig::stdio("fs", bin("mcp-server-filesystem"), [root.display().to_string()]);
    let connection = connect_mcp_servers(&[config], &bus).await;
    let tools = connection.tools();
    let read = find(&tools, "mcp_fs_read_text_file");
    // The server's annotations decide what a resumed run may call again.
    assert_eq!(read.durability(), Durability::Safe, "readOnlyHint");
    assert_eq!(find(&tools, "mcp_fs_move_file").durability(), Durability::Unsafe);
    let path = root.join("notes.txt").display().to_string();
    assert_eq!(
        text(&call(&read, json!({"path": path})).await.unwrap()),
        "remember the milk"
    );
    let missing = call(&read, json!({"path": root.join("missing.txt").display().to_string()}))
        .await
        .unwrap();
    assert!(
        missing.is_error,
        "an MCP error result reaches the model as a tool error: {}",
        text(&missing)
    );
    connection.close().await;
}

#[tokio::test]
async fn time_server_answers_and_an_unknown_tool_is_a_json_rpc_error() {
    let bus = HookBus::new();
    let mut config = python("time", &["-m", "mcp_server_time", "--local-timezone", "UTC"]);
    let connection = connect_mcp_servers(std::slice::from_ref(&config), &bus).await;
    let tools = connection.tools();
    let now = find(&tools, "mcp_time_get_current_time");
    let out = call(&now, json!({"timezone": "UTC"})).await.unwrap();
    assert!(text(&out).contains("UTC"), "{}", text(&out));
    connection.close().await;

    // A tool the server does not have, announced through `cached_tools`.
    config.cached_tools = Some(vec![McpToolSchema {
        name: "no_such_tool".into(),
        description: None,
        input_schema: json!({"type": "object"}),
        idempotent: false,
    }]);
    let connection = connect_mcp_servers(&[config], &bus).await;
    let ghost = find(&connection.tools(), "mcp_time_no_such_tool");
    let err = call(&ghost, json!({})).await;
    match err {
        Err(message) => assert!(message.contains("MCP error"), "{message}"),
        Ok(out) => assert!(
            out.is_error,
            "either a JSON-RPC error or an error result: {}",
            text(&out)
        ),
    }
    connection.close().await;
}

#[tokio::test]
async fn a_server_killed_mid_call_is_a_tool_error_and_the_next_call_reconnects() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/die_server.py")
        .display()
        .to_string();
    let bus = HookBus::new();
    let failures: Arc<Mutex<Vec<String>>> = Arc::default();
    let f = Arc::clone(&failures);
    bus.on_sync::<zidane_core::events::McpToolError, _>(move |ev, _| {
        f.lock()
            .unwrap()
            .push(format!("{} {} {} {}", ev.server(), ev.tool(), ev.name(), ev.call_id()));
        Ok(())
    });
    let connection = connect_mcp_servers(&[python("die", &[&script])], &bus).await;
    let tools = connection.tools();
    let die = find(&tools, "mcp_die_die");
    let err = call(&die, json!({})).await.unwrap_err();
    assert!(err.contains("MCP error"), "{err}");
    // `mcp:tool:error` names the server, its tool, our name and the call.
    let failures = failures.lock().unwrap().clone();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].starts_with("die die mcp_die_die "), "{failures:?}");
    let ping = find(&tools, "mcp_die_ping");
    assert_eq!(
        text(&call(&ping, json!({})).await.unwrap()),
        "pong",
        "a new server process answers"
    );
    connection.close().await;
}

#[tokio::test]
async fn an_mcp_tool_through_the_loop_with_progress() {
    let bus = HookBus::new();
    let connection = connect_mcp_servers(&[everything()], &bus).await;
    let provider = ScriptedProvider::new(
        "mock",
        [
            Script::call(
                "c1",
                "mcp_everything_trigger-long-running-operation",
                json!({"duration": 1, "steps": 2}),
            ),
            Script::answer("done"),
        ],
    );
    let mut config = LoopConfig::new(Arc::new(provider.clone()) as Arc<dyn Provider>);
    config.hooks = bus.clone();
    let looped = RunLoop::new(config);
    let log = record(&bus);
    let progress = Arc::new(Mutex::new(0usize));
    let p = Arc::clone(&progress);
    bus.on_sync::<ToolProgressEvent, _>(move |_, _| {
        *p.lock().unwrap() += 1;
        Ok(())
    });
    let mut options = RunOptions::prompt("Run the long operation.");
    options.extra_tools = connection.tools();
    looped.run(options).await.unwrap();
    assert!(
        *progress.lock().unwrap() >= 1,
        "progress notifications became tool:progress"
    );
    let sequence: Vec<&str> = log
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|n| (n.starts_with("tool:") || n.starts_with("mcp:tool")) && *n != "tool:progress")
        .collect();
    assert_eq!(
        sequence,
        vec![
            "tool:gate",
            "tool:dispatched",
            "tool:before",
            "mcp:tool:before",
            "mcp:tool:gate",
            "mcp:tool:transform",
            "mcp:tool:after",
            "tool:transform",
            "tool:after"
        ]
    );
    let second = &provider.requests()[1];
    let result = second.messages.last().unwrap();
    assert!(matches!(
        &result.content()[0],
        ContentBlock::ToolResult { is_error: false, .. }
    ));
    connection.close().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_keeps_the_os_error_as_its_source() {
    let config = McpServerConfig::stdio("ghost", "/nonexistent/zidane-mcp-server", Vec::<String>::new());
    let connection = connect_mcp_servers(&[config], &zidane_hooks::HookBus::new()).await;
    let failures = connection.failures();
    assert_eq!(failures.len(), 1);
    let (name, error) = &failures[0];
    assert_eq!(name, "ghost");
    let Some(zidane_mcp::McpError::Spawn {
        source: Some(source), ..
    }) = error.downcast_ref::<zidane_mcp::McpError>()
    else {
        panic!("expected a spawn failure, got {error}");
    };
    let io = source
        .downcast_ref::<std::io::Error>()
        .expect("the OS error, not a string");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert!(
        error
            .to_string()
            .starts_with("cannot start the server: `/nonexistent/zidane-mcp-server`: ")
    );
}

#[tokio::test]
async fn a_server_that_writes_garbage_on_stdout_fails_at_once_as_a_protocol_error() {
    // It never answers: without the check, the bootstrap would wait out the
    // 30 s bound (`Timeout`).
    let config = McpServerConfig::stdio("noisy", "sh", ["-c", "echo 'Starting noisy server v1.0 ...'; sleep 60"]);
    let connection = connect_mcp_servers(&[config], &zidane_hooks::HookBus::new()).await;
    let failures = connection.failures();
    assert_eq!(failures.len(), 1);
    let error = &failures[0].1;
    assert!(
        matches!(
            error.downcast_ref::<zidane_mcp::McpError>(),
            Some(zidane_mcp::McpError::Protocol { .. })
        ),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "the server wrote something that is not JSON-RPC on its standard output: Starting noisy server v1.0 ..."
    );
}

/// Set (only) in the process `a_stdio_server_inherits_no_credential`
/// starts: the probe runs there, with the credentials in its environment
/// from the start.
const PROBE: &str = "ZIDANE_MCP_ENV_PROBE";

#[tokio::test]
async fn a_stdio_server_inherits_no_credential() {
    if std::env::var_os(PROBE).is_none() {
        // This process's environment is not changed: the probe runs in a
        // child test process that has the variables from its start.
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "servers::a_stdio_server_inherits_no_credential",
                "--nocapture",
            ])
            .env(PROBE, "1")
            .env("ANTHROPIC_API_KEY", "sk-ant-must-not-leak")
            .env("GITHUB_TOKEN", "ghp-must-not-leak")
            .env("DB_PASSWORD", "hunter2-must-not-leak")
            .env("ZIDANE_PLAIN", "plain-passes")
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{shown}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(shown.contains("1 passed"), "the probe ran: {shown}");
        return;
    }
    let mut config = everything();
    config.enabled_tools = Some(vec!["get-env".into()]);
    if let McpTransportConfig::Stdio { env, .. } = &mut config.transport {
        // What the configuration names passes, secret-looking or not.
        env.insert("SERVICE_API_KEY".into(), "configured".into());
    }
    let bus = HookBus::new();
    let connection = connect_mcp_servers(&[config], &bus).await;
    let tool = connection.tools().first().cloned().expect("get-env is offered");
    let out = call(&tool, json!({})).await.unwrap();
    let env = match &out.content {
        ToolResultContent::Text(t) => t.clone(),
        ToolResultContent::Parts(parts) => parts
            .iter()
            .filter_map(|p| match p {
                ContentBlock::Text { text } => Some(text.clone()),
                _ => None,
            })
            .collect(),
    };
    for leaked in ["sk-ant-must-not-leak", "ghp-must-not-leak", "hunter2-must-not-leak"] {
        assert!(!env.contains(leaked), "the server saw {leaked}: {env}");
    }
    assert!(env.contains("plain-passes"), "other variables pass: {env}");
    assert!(env.contains("configured"), "the configured variable passes: {env}");
    connection.close().await;
}
