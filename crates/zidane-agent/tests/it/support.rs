use std::sync::{Arc, Mutex};

use serde_json::json;
use zidane_agent::{Agent, AgentOptions, create_agent};
use zidane_core::clock::FixedClock;
use zidane_core::events::HOOK_SPECS;
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_hooks::DynHandler;
use zidane_provider::Provider;
use zidane_provider::scripted::{Script, ScriptedProvider};

pub fn provider(scripts: Vec<Script>) -> ScriptedProvider {
    ScriptedProvider::new("mock", scripts)
}

pub fn echo_tools() -> ToolSet {
    ToolSet::new().with(FnTool::new(
        "echo",
        "Echo",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |input, _cx| async move {
            Ok(ToolOutput::text(format!(
                "echo: {}",
                input["text"].as_str().unwrap_or_default()
            )))
        },
    ))
}

pub fn options(provider: &ScriptedProvider) -> AgentOptions {
    AgentOptions {
        provider: vec![Arc::new(provider.clone()) as Arc<dyn Provider>],
        clock: Some(Arc::new(FixedClock::new(1_700_000_000_000))),
        tools: echo_tools(),
        ..Default::default()
    }
}

pub fn agent(provider: &ScriptedProvider) -> Agent {
    create_agent(options(provider)).unwrap()
}

/// Records every hook name the agent's bus emits.
pub fn record(agent: &Agent) -> Arc<Mutex<Vec<&'static str>>> {
    record_where(agent, |_| true)
}

/// Records the names of the hooks `wanted` picks, as the agent's bus
/// emits them.
pub fn record_where(agent: &Agent, wanted: impl Fn(&str) -> bool) -> Arc<Mutex<Vec<&'static str>>> {
    let log: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    for spec in HOOK_SPECS.iter().filter(|s| wanted(s.name())) {
        let log = Arc::clone(&log);
        spec.register(
            agent.hooks(),
            &DynHandler::sync(move |ev, _| {
                log.lock().unwrap().push(ev.name());
                Ok(())
            }),
        );
    }
    log
}

/// A PostgreSQL server for the tests: `ZIDANE_TEST_POSTGRES` when set (a
/// connection string), else one this process starts on a loopback port in
/// a temporary folder (from the `postgresql` package's binaries), stopped
/// and removed when the process ends, however it ends.
#[cfg(all(feature = "postgres", feature = "sqlite"))]
pub fn postgres_url() -> String {
    static SERVER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Ok(url) = std::env::var("ZIDANE_TEST_POSTGRES") {
        return url;
    }
    SERVER.get_or_init(start_postgres).clone()
}

#[cfg(all(feature = "postgres", feature = "sqlite"))]
fn postgres_bin(name: &str) -> std::path::PathBuf {
    let mut versions: Vec<std::path::PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin").join(name)).collect())
        .unwrap_or_default();
    versions.retain(|p| p.exists());
    versions.sort();
    versions.pop().unwrap_or_else(|| name.into())
}

#[cfg(all(feature = "postgres", feature = "sqlite"))]
fn start_postgres() -> String {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    // The server refuses to run as root: it runs as `postgres` then.
    let as_server = |program: &std::path::Path| {
        if root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        }
    };
    let dir = tempfile::Builder::new().prefix("zidane-pg").tempdir().unwrap().keep();
    if root {
        let chowned = Command::new("chown").arg("postgres").arg(&dir).status().unwrap();
        assert!(chowned.success(), "chown of the server's folder");
    }
    let data = dir.join("data");
    let init = as_server(&postgres_bin("initdb"))
        .arg("-D")
        .arg(&data)
        .args(["-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
        .stdout(Stdio::null())
        .output()
        .expect("initdb from the postgresql package");
    assert!(
        init.status.success(),
        "initdb: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // The shell stops the server and removes its folder when this process's
    // end of the pipe closes (the process ended, even by SIGKILL).
    let script = format!(
        "\"$0\" -D '{data}' -p {port} -k '{dir}' -c listen_addresses=127.0.0.1 -c max_connections=300 & pid=$!; \
         read _; kill -INT $pid; wait $pid; rm -rf '{dir}'",
        data = data.display(),
        dir = dir.display(),
    );
    let mut server = as_server(std::path::Path::new("sh"));
    server
        .arg("-c")
        .arg(script)
        .arg(postgres_bin("postgres"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = server.spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut log = String::new();
    let ready = lines.by_ref().map_while(Result::ok).any(|line| {
        log.push_str(&line);
        log.push('\n');
        line.contains("ready to accept connections")
    });
    assert!(ready, "the PostgreSQL server started:\n{log}");
    // The server keeps logging: a full pipe would stop it.
    std::thread::spawn(move || lines.for_each(drop));
    // Held for the process's life: its end stops the server.
    std::mem::forget(child.stdin.take());
    std::mem::forget(child);
    format!("postgresql://postgres@127.0.0.1:{port}/postgres?sslmode=disable")
}

/// A schema of its own for a test, named after its temporary folder.
#[cfg(all(feature = "postgres", feature = "sqlite"))]
pub fn postgres_schema(folder: &std::path::Path) -> String {
    let name: String = folder
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    format!("t_{}", name.to_ascii_lowercase())
}
