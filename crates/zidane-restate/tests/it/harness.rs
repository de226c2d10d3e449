//! A real Restate server, the `zidane-restate` service and a loopback model
//! server, each a process (or task) the tests start, kill and restart.

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};
use tokio::sync::{Notify, mpsc};
use zidane_bench::loopback::read_request;

/// The pinned server `cargo xtask restate-server` installs.
pub fn restate_server_binary() -> PathBuf {
    if let Ok(path) = std::env::var("ZIDANE_RESTATE_SERVER") {
        return PathBuf::from(path);
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/restate/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server");
    assert!(
        path.exists(),
        "{} is missing: these tests run a real Restate server, which `cargo xtask restate-server` installs \
         (or set ZIDANE_RESTATE_SERVER to a restate-server binary)",
        path.display()
    );
    path
}

/// A free loopback port (bound, then released for the process to take).
pub fn free_port() -> u16 {
    free_ports::<1>()[0]
}

/// `N` distinct free loopback ports: all are held until each is chosen, so
/// the kernel cannot hand one out twice (a server given the same port for
/// two listeners never comes up).
pub fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<StdListener> = (0..N).map(|_| StdListener::bind("127.0.0.1:0").unwrap()).collect();
    std::array::from_fn(|i| listeners[i].local_addr().unwrap().port())
}

/// Waits, on real time, for `check` to hold: these tests wait for other
/// processes (a server starting, a retry arriving), which a paused clock
/// cannot speed up. Polls every 50 ms for at most `limit`.
pub async fn until<F, Fut>(what: &str, limit: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + limit;
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// An HTTP/1.1 response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

impl Response {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// One HTTP/1.1 request on a fresh connection; `None` when the connection
/// fails (the server is down).
pub async fn http(method: &str, url: &str, headers: &[(&str, &str)], body: Option<&Value>) -> Option<Response> {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
    let mut stream = TcpStream::connect(host).await.ok()?;
    let payload = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!("{method} {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n");
    if body.is_some() {
        head.push_str("content-type: application/json\r\n");
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", payload.len()));
    stream.write_all(head.as_bytes()).await.ok()?;
    stream.write_all(payload.as_bytes()).await.ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Some(Response { status, body })
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Starts `command` with its output appended to `log`; it dies with the test.
fn spawn_logged(mut command: Command, log: &Path) -> Child {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
    command
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// `kill -9` of a child, waited for.
async fn kill9(child: &mut Option<Child>) {
    if let Some(mut child) = child.take() {
        child.start_kill().unwrap();
        child.wait().await.unwrap();
    }
}

/// A Restate server on free loopback ports, its data in a folder that
/// outlives a restart.
pub struct Restate {
    dir: tempfile::TempDir,
    pub admin: String,
    pub ingress: String,
    ports: (u16, u16, u16),
    child: Option<Child>,
    /// More of the server's settings, as `RESTATE_…` variables.
    env: Vec<(String, String)>,
}

impl Restate {
    pub async fn start() -> Restate {
        Self::start_with(&[]).await
    }

    /// A server with more settings (`RESTATE_…` variables).
    pub async fn start_with(env: &[(&str, &str)]) -> Restate {
        let mut server = Restate {
            dir: tempfile::tempdir().unwrap(),
            admin: String::new(),
            ingress: String::new(),
            ports: free_ports::<3>().into(),
            child: None,
            env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        };
        server.admin = format!("http://127.0.0.1:{}", server.ports.1);
        server.ingress = format!("http://127.0.0.1:{}", server.ports.2);
        server.spawn().await;
        server
    }

    async fn spawn(&mut self) {
        let (fabric, admin, ingress) = self.ports;
        let mut command = Command::new(restate_server_binary());
        command
            .args(["--no-logo", "--base-dir"])
            .arg(self.dir.path().join("data"))
            .env("RESTATE_DISABLE_TELEMETRY", "true")
            .env("RESTATE_NODE_NAME", "n1")
            .env("RESTATE_LISTEN_MODE", "tcp")
            .env("RESTATE_BIND_IP", "127.0.0.1")
            .env("RESTATE_ADVERTISED_HOST", "127.0.0.1")
            .env("RESTATE_BIND_PORT", fabric.to_string())
            .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}"))
            .env("RESTATE_INGRESS__BIND_ADDRESS", format!("127.0.0.1:{ingress}"))
            .env("RESTATE_DEFAULT_NUM_PARTITIONS", "4")
            .env("RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE", "256MB")
            .env("RESTATE_ADMIN__DISABLE_WEB_UI", "true")
            .envs(self.env.iter().cloned());
        self.child = Some(spawn_logged(command, &self.dir.path().join("server.log")));
        let (admin, ingress) = (self.admin.clone(), self.ingress.clone());
        until("the Restate server", Duration::from_secs(60), || {
            let (admin, ingress) = (admin.clone(), ingress.clone());
            async move {
                let up = |r: Option<Response>| r.is_some_and(|r| r.status == 200);
                up(http("GET", &format!("{admin}/health"), &[], None).await)
                    && up(http("GET", &format!("{ingress}/restate/health"), &[], None).await)
            }
        })
        .await;
    }

    /// `kill -9`.
    pub async fn kill(&mut self) {
        kill9(&mut self.child).await;
    }

    /// The server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Starts again on the same data and ports.
    pub async fn restart(&mut self) {
        self.spawn().await;
    }

    /// Registers the service at `uri` (a deployment).
    pub async fn register(&self, uri: &str) {
        let response = self.try_register(uri).await;
        assert!(response.status == 201 || response.status == 200, "{response:?}");
    }

    /// Asks to register the service at `uri`: the admin API's answer.
    pub async fn try_register(&self, uri: &str) -> Response {
        http(
            "POST",
            &format!("{}/deployments", self.admin),
            &[],
            Some(&json!({ "uri": uri, "force": true })),
        )
        .await
        .unwrap()
    }

    /// Sends `handler` of session `key` without waiting: the invocation id.
    pub async fn send(&self, key: &str, handler: &str, body: &Value, headers: &[(&str, &str)]) -> String {
        let response = http(
            "POST",
            &format!("{}/ZidaneAgent/{key}/{handler}/send", self.ingress),
            headers,
            Some(body),
        )
        .await
        .unwrap();
        assert_eq!(response.status, 202, "{response:?}");
        response.json()["invocationId"].as_str().unwrap().to_owned()
    }

    /// Calls `handler` (with `body`, or none) and waits for its answer.
    pub async fn call(&self, key: &str, handler: &str, body: Option<&Value>) -> Response {
        http(
            "POST",
            &format!("{}/ZidaneAgent/{key}/{handler}", self.ingress),
            &[],
            body,
        )
        .await
        .unwrap()
    }

    /// Waits for invocation `id` to end and returns its output (retrying
    /// while the server is restarting).
    pub async fn output(&self, id: &str) -> Value {
        let response = self.ended(id).await;
        assert_eq!(response.status, 200, "{response:?}");
        response.json()
    }

    /// Waits for invocation `id` to end (at most 90 s): the ingress's answer.
    pub async fn ended(&self, id: &str) -> Response {
        let url = format!("{}/restate/invocation/{id}/attach", self.ingress);
        let attach = async {
            loop {
                if let Some(response) = http("GET", &url, &[], None).await {
                    return response;
                }
                // The server is restarting.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        match tokio::time::timeout(Duration::from_secs(90), attach).await {
            Ok(response) => response,
            Err(_) => panic!("invocation {id} did not end within 90 s\n{}", self.log()),
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }
}

/// The `zidane-restate` program, serving on a fixed port that a restart
/// keeps (the deployment Restate registered).
pub struct Service {
    pub uri: String,
    port: u16,
    model: String,
    pub workspace: tempfile::TempDir,
    child: Option<Child>,
    /// The test function of this binary that serves instead of the
    /// program (its agents carry the test's tools and hooks).
    helper: Option<&'static str>,
    /// More flags for the program.
    args: Vec<String>,
}

impl Service {
    pub async fn start(model: &str) -> Service {
        Self::start_with(model, None, &[]).await
    }

    /// The program with more flags.
    pub async fn start_program(model: &str, args: &[&str]) -> Service {
        Self::start_with(model, None, args).await
    }

    /// This test binary, filtered to the test function `helper`, serving
    /// on the service's port with `ZIDANE_RS_BIND`, `ZIDANE_RS_MODEL` and
    /// `ZIDANE_RS_DIR` (the workspace) set.
    pub async fn helper(model: &str, helper: &'static str) -> Service {
        Self::start_with(model, Some(helper), &[]).await
    }

    async fn start_with(model: &str, helper: Option<&'static str>, args: &[&str]) -> Service {
        let mut service = Service {
            uri: String::new(),
            port: free_port(),
            model: model.to_owned(),
            workspace: tempfile::tempdir().unwrap(),
            child: None,
            helper,
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        };
        service.uri = format!("http://127.0.0.1:{}", service.port);
        service.spawn().await;
        service
    }

    async fn spawn(&mut self) {
        let mut command = if let Some(helper) = self.helper {
            let mut command = Command::new(std::env::current_exe().unwrap());
            command
                .args(["--exact", helper, "--nocapture", "--test-threads=1"])
                .env("ZIDANE_RS_BIND", format!("127.0.0.1:{}", self.port))
                .env("ZIDANE_RS_MODEL", &self.model)
                .env("ZIDANE_RS_DIR", self.workspace.path());
            command
        } else {
            self.program()
        };
        command.env("ANTHROPIC_API_KEY", "sk-test").env("RUST_LOG", "warn");
        self.child = Some(spawn_logged(command, &self.workspace.path().join("service.log")));
        let addr = format!("127.0.0.1:{}", self.port);
        until("the service", Duration::from_secs(30), || {
            let addr = addr.clone();
            async move { TcpStream::connect(&addr).await.is_ok() }
        })
        .await;
    }

    /// The `zidane-restate` program on the service's port and workspace.
    fn program(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_zidane-restate"));
        command
            .args([
                "--bind",
                &format!("127.0.0.1:{}", self.port),
                "--base-url",
                &self.model,
                "--workspace",
            ])
            .arg(self.workspace.path())
            .args(&self.args);
        command
    }

    /// `kill -9`.
    pub async fn kill(&mut self) {
        kill9(&mut self.child).await;
    }

    /// The running service's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    pub async fn restart(&mut self) {
        self.spawn().await;
    }

    /// A session's folder.
    pub fn folder(&self, session: &str) -> PathBuf {
        self.workspace.path().join(session)
    }

    /// Lines of a file in a session's folder.
    pub fn lines(&self, session: &str, file: &str) -> usize {
        std::fs::read_to_string(self.folder(session).join(file)).map_or(0, |t| t.lines().count())
    }
}

/// What the model server does with a request.
pub enum Reply {
    /// Answers with this stream.
    Stream(String),
    /// Answers once `Notify` is notified.
    After(Arc<Notify>, String),
    /// Never answers (the connection stays open until the client goes).
    Hang,
    /// Answers with this status and JSON body.
    Status(u16, String),
}

/// A loopback Anthropic-format server: `respond` picks each reply from the
/// request body and the number of requests before it; every body is kept,
/// and each arrival is announced on the returned channel.
pub async fn model(
    respond: impl Fn(&str, usize) -> Reply + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<String>>>, mpsc::UnboundedReceiver<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let bodies: Arc<Mutex<Vec<String>>> = Arc::default();
    let (arrived_tx, arrived) = mpsc::unbounded_channel();
    let respond = Arc::new(respond);
    let seen = Arc::clone(&bodies);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (seen, respond, arrived_tx) = (Arc::clone(&seen), Arc::clone(&respond), arrived_tx.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                loop {
                    let Some((head_end, len)) = read_request(&mut stream, &mut buf).await else {
                        return;
                    };
                    let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
                    buf.drain(..head_end + len);
                    let index = {
                        let mut seen = seen.lock().unwrap();
                        seen.push(body.clone());
                        seen.len() - 1
                    };
                    let reply = respond(&body, index);
                    let _ = arrived_tx.send(index);
                    let (status, kind, payload) = match reply {
                        Reply::Stream(payload) => (200, "text/event-stream", payload),
                        Reply::After(gate, payload) => {
                            gate.notified().await;
                            (200, "text/event-stream", payload)
                        }
                        Reply::Status(status, payload) => (status, "application/json", payload),
                        Reply::Hang => {
                            // Holds the connection until the client closes it.
                            let _ = stream.read(&mut chunk).await;
                            std::future::pending::<()>().await;
                            return;
                        }
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
    (format!("http://{addr}"), bodies, arrived)
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// `stream` reporting `input` tokens read (a context filling up).
pub fn with_input(stream: &str, input: u64) -> String {
    stream.replace("\"input_tokens\":40", &format!("\"input_tokens\":{input}"))
}

/// A stream that calls `name` with no arguments (call id `id`).
pub fn tool_call(id: &str, name: &str) -> String {
    one_block(
        json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
        json!({"type": "input_json_delta", "partial_json": "{}"}),
        "tool_use",
    )
}

/// A one-block stream: `block` started, filled by `delta`, then `stop`.
fn one_block(block: Value, delta: Value, stop: &str) -> String {
    sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 20}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// A stream that calls `shell` with `command` (call id `id`).
pub fn shell_call(id: &str, command: &str) -> String {
    shell_call_with(id, &json!({ "command": command }))
}

/// A `shell` call with `input` as its arguments.
pub fn shell_call_with(id: &str, input: &Value) -> String {
    call_with(id, "shell", input)
}

/// A call of `name` with `input` as its arguments.
pub fn call_with(id: &str, name: &str, input: &Value) -> String {
    let input = input.to_string();
    one_block(
        json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
        json!({"type": "input_json_delta", "partial_json": input}),
        "tool_use",
    )
}

/// A stream that answers `text`.
pub fn answer(text: &str) -> String {
    one_block(
        json!({"type": "text", "text": ""}),
        json!({"type": "text_delta", "text": text}),
        "end_turn",
    )
}

/// How many tool results a request carries.
pub fn results(body: &str) -> usize {
    body.matches("\"tool_result\"").count()
}

/// A loopback TCP proxy that hands its `k`th connection to backend
/// `k % n`: several service replicas registered as one deployment.
pub struct RoundRobin {
    pub uri: String,
    /// Connections each backend was given.
    pub given: Arc<Vec<std::sync::atomic::AtomicUsize>>,
    /// The backend every new connection goes to, when one is pinned.
    pinned: Arc<std::sync::Mutex<Option<usize>>>,
}

impl RoundRobin {
    pub async fn start(backends: Vec<String>) -> RoundRobin {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}", listener.local_addr().unwrap());
        let given: Arc<Vec<std::sync::atomic::AtomicUsize>> = Arc::new(
            backends
                .iter()
                .map(|_| std::sync::atomic::AtomicUsize::new(0))
                .collect(),
        );
        let counts = Arc::clone(&given);
        let pinned: Arc<std::sync::Mutex<Option<usize>>> = Arc::default();
        let pin = Arc::clone(&pinned);
        tokio::spawn(async move {
            let mut next = 0usize;
            while let Ok((mut inbound, _)) = listener.accept().await {
                let which = pin.lock().unwrap().unwrap_or(next % backends.len());
                next += 1;
                counts[which].fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let backend = backends[which].trim_start_matches("http://").to_owned();
                tokio::spawn(async move {
                    let _ = inbound.set_nodelay(true);
                    if let Ok(mut outbound) = TcpStream::connect(&backend).await {
                        let _ = outbound.set_nodelay(true);
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        RoundRobin { uri, given, pinned }
    }

    /// Every new connection goes to backend `which` (`None`: round robin
    /// again).
    pub fn pin(&self, which: Option<usize>) {
        *self.pinned.lock().unwrap() = which;
    }
}

/// Waits (at most `limit`) for the FIFO `fifo` a command makes once it
/// runs, and reads what the command says into it (`started`).
pub async fn started_at(what: &str, fifo: PathBuf, limit: Duration) -> String {
    let path = fifo.clone();
    until(what, limit, || {
        let fifo = path.clone();
        async move { fifo.exists() }
    })
    .await;
    let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo).unwrap());
    read.await.unwrap().trim().to_owned()
}
