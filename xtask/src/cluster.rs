//! `cargo xtask restate-cluster`: three Restate servers on loopback with
//! replication 2, two `zidane-restate` replicas behind one deployment URL (a
//! round-robin proxy, with Restate opening one connection per stream so
//! invocations spread over both), several sessions running tool-calling
//! runs at once, a `steer` to each while it runs, and `kill -9` of the node
//! that leads the most partitions. Every run must complete, every steer must
//! be delivered and reach the model, and no finished step may run again;
//! the report counts runs, steps, repeated model requests and repeated
//! commands, and the time to complete.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Result, restate_binary, root};

const SESSIONS: usize = 8;
/// Sessions of the reduced run `cargo xtask ci` does.
const QUICK_SESSIONS: usize = 3;
/// Tool calls per run (each a `shell` command), then an answer.
const CALLS: usize = 6;
/// How long the model takes to answer, so runs are in flight at the kill.
const MODEL_DELAY: Duration = Duration::from_millis(150);

fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

/// One HTTP/1.1 exchange; `None` when the connection fails.
fn http(method: &str, url: &str, body: Option<&Value>) -> Option<(u16, String)> {
    let rest = url.strip_prefix("http://")?;
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
    let mut stream = TcpStream::connect(host).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(120))).ok()?;
    let payload = body.map(Value::to_string).unwrap_or_default();
    let content_type = if body.is_some() {
        "content-type: application/json\r\n"
    } else {
        ""
    };
    let request = format!(
        "{method} {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n{content_type}content-length: {}\r\n\r\n{payload}",
        payload.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        let mut out = String::new();
        let mut rest = body;
        while let Some((size, tail)) = rest.split_once("\r\n") {
            let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
                break;
            };
            if n == 0 || tail.len() < n {
                break;
            }
            out.push_str(&tail[..n]);
            rest = tail[n..].trim_start_matches("\r\n");
        }
        out
    } else {
        body.to_owned()
    };
    Some((status, body))
}

fn wait_for(what: &str, limit: Duration, mut check: impl FnMut() -> bool) -> Result {
    let deadline = Instant::now() + limit;
    while !check() {
        if Instant::now() > deadline {
            return Err(format!("restate-cluster: timed out waiting for {what}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

struct Node {
    name: String,
    fabric: u16,
    admin: u16,
    ingress: u16,
    child: Option<Child>,
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn start_node(dir: &Path, index: usize, fabric: &[u16], first: bool) -> Result<Node> {
    let mut node = Node {
        name: format!("n{}", index + 1),
        fabric: fabric[index],
        admin: free_port()?,
        ingress: free_port()?,
        child: None,
    };
    let addresses: Vec<String> = fabric.iter().map(|p| format!("\"http://127.0.0.1:{p}\"")).collect();
    let log = std::fs::File::create(dir.join(format!("{}.log", node.name))).map_err(|e| e.to_string())?;
    let err = log.try_clone().map_err(|e| e.to_string())?;
    let child = Command::new(restate_binary("restate-server"))
        .args(["--no-logo", "--base-dir"])
        .arg(dir.join(&node.name))
        .env("RESTATE_DISABLE_TELEMETRY", "true")
        .env("RESTATE_NODE_NAME", &node.name)
        .env("RESTATE_CLUSTER_NAME", "zidane-cluster-check")
        .env("RESTATE_DEFAULT_REPLICATION", "2")
        .env("RESTATE_AUTO_PROVISION", if first { "true" } else { "false" })
        .env(
            "RESTATE_METADATA_CLIENT__ADDRESSES",
            format!("[{}]", addresses.join(",")),
        )
        .env("RESTATE_LISTEN_MODE", "tcp")
        .env("RESTATE_BIND_IP", "127.0.0.1")
        .env(
            "RESTATE_ADVERTISED_ADDRESS",
            format!("http://127.0.0.1:{}", node.fabric),
        )
        .env("RESTATE_BIND_PORT", node.fabric.to_string())
        .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{}", node.admin))
        .env("RESTATE_INGRESS__BIND_ADDRESS", format!("127.0.0.1:{}", node.ingress))
        .env("RESTATE_DEFAULT_NUM_PARTITIONS", PARTITIONS.to_string())
        .env("RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE", "256MB")
        .env("RESTATE_ADMIN__DISABLE_WEB_UI", "true")
        // One stream per connection: the proxy then spreads invocations
        // over the replicas.
        .env("RESTATE_WORKER__INVOKER__HTTP2_STREAMS_PER_CONNECTION_LIMIT", "1")
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("could not start restate-server: {e}"))?;
    node.child = Some(child);
    Ok(node)
}

/// The model: every request gets a `shell` call until the run has made
/// `CALLS` of them, then an answer. Requests are counted by (session, how
/// many results they carry), so a repeated one shows.
struct Model {
    requests: Mutex<BTreeMap<(String, usize), usize>>,
    /// Sessions whose steer message a request carried.
    steered: Mutex<std::collections::BTreeSet<String>>,
    /// Requests whose newest tool result reports an interrupted call, by
    /// session.
    interrupted: Mutex<BTreeMap<String, usize>>,
}

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or_default()))
        .collect()
}

fn reply(session: &str, results: usize) -> String {
    let start = json!({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 40, "output_tokens": 1}}});
    if results < CALLS {
        let command = format!("echo {session}:{results} >> effects.log");
        let input = json!({ "command": command }).to_string();
        sse(&[
            start,
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": format!("toolu_{results}"), "name": "shell", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
            json!({"type": "message_stop"}),
        ])
    } else {
        sse(&[
            start,
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": format!("{session} done")}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
            json!({"type": "message_stop"}),
        ])
    }
}

fn serve_model(model: Arc<Model>) -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let model = Arc::clone(&model);
            std::thread::spawn(move || {
                let _ = answer_connection(stream, &model);
            });
        }
    });
    Ok(port)
}

fn answer_connection(stream: TcpStream, model: &Model) -> std::io::Result<()> {
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body)?;
        let body = String::from_utf8_lossy(&body);
        let results = body.matches("\"tool_result\"").count();
        let session = body
            .split("Session ")
            .nth(1)
            .and_then(|rest| rest.split('.').next())
            .unwrap_or("?")
            .to_owned();
        if body
            .rsplit("\"tool_result\"")
            .next()
            .is_some_and(|last| results > 0 && last.contains("was interrupted"))
        {
            *model
                .interrupted
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry(session.clone())
                .or_default() += 1;
        }
        if body.contains(&format!("Steer {session}.")) {
            model
                .steered
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(session.clone());
        }
        *model
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry((session.clone(), results))
            .or_default() += 1;
        std::thread::sleep(MODEL_DELAY);
        let payload = reply(&session, results);
        write!(
            writer,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{payload}",
            payload.len()
        )?;
    }
}

/// Service replicas behind the deployment URL.
const REPLICAS: usize = 2;

/// A service replica, killed with the check.
struct Replica(Child);

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback TCP proxy handing its `k`th connection to backend `k % n`:
/// its port, and the connections each backend was given.
fn round_robin(backends: Vec<u16>) -> Result<(u16, Arc<Vec<std::sync::atomic::AtomicUsize>>)> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let given: Arc<Vec<std::sync::atomic::AtomicUsize>> = Arc::new(
        backends
            .iter()
            .map(|_| std::sync::atomic::AtomicUsize::new(0))
            .collect(),
    );
    let counts = Arc::clone(&given);
    std::thread::spawn(move || {
        for (k, inbound) in listener.incoming().flatten().enumerate() {
            let which = k % backends.len();
            counts[which].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Ok(outbound) = TcpStream::connect(("127.0.0.1", backends[which])) else {
                continue;
            };
            let _ = inbound.set_nodelay(true);
            let _ = outbound.set_nodelay(true);
            for (mut from, mut to) in [
                (inbound.try_clone(), outbound.try_clone()),
                (outbound.try_clone(), inbound.try_clone()),
            ]
            .into_iter()
            .filter_map(|(a, b)| Some((a.ok()?, b.ok()?)))
            {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Write);
                });
            }
        }
    });
    Ok((port, given))
}

/// Partitions the cluster runs (`RESTATE_DEFAULT_NUM_PARTITIONS`).
const PARTITIONS: usize = 4;

/// Partitions led by each node, from `restatectl partitions list`.
fn leaders(fabric: u16) -> Result<BTreeMap<String, usize>> {
    let out = Command::new(restate_binary("restatectl"))
        .args(["-s", &format!("http://127.0.0.1:{fabric}"), "partitions", "list"])
        .output()
        .map_err(|e| format!("could not run restatectl: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut leads: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == "Leader" {
            let node = fields[1].split(':').next().unwrap_or_default().to_ascii_lowercase();
            *leads.entry(node).or_default() += 1;
        }
    }
    Ok(leads)
}

/// The node leading the most partitions, once every partition has a leader.
fn busiest_leader(fabric: u16) -> Result<String> {
    let mut leads = BTreeMap::new();
    wait_for("every partition to have a leader", Duration::from_secs(90), || {
        leads = leaders(fabric).unwrap_or_default();
        leads.values().sum::<usize>() >= PARTITIONS
    })?;
    println!("restate-cluster: partitions led {leads:?}");
    leads
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|(node, _)| node)
        .ok_or_else(|| "restate-cluster: no partition leader".to_owned())
}

/// The check; `quick`: the reduced run of `cargo xtask ci` (three sessions,
/// the debug build the tests made).
pub(crate) fn run(quick: bool) -> Result {
    let sessions = if quick { QUICK_SESSIONS } else { SESSIONS };
    if !restate_binary("restate-server").exists() {
        crate::restate_server()?;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let profile = if quick { "debug" } else { "release" };
    if quick {
        crate::run(&cargo, &["build", "-p", "zidane-restate"], &[])?;
    } else {
        crate::run(&cargo, &["build", "--release", "-p", "zidane-restate"], &[])?;
    }
    let dir: PathBuf = root().join("target/restate-cluster");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let (mut nodes, fabric) = start_cluster(&dir)?;
    let model = Arc::new(Model {
        requests: Mutex::default(),
        steered: Mutex::default(),
        interrupted: Mutex::default(),
    });
    let model_port = serve_model(Arc::clone(&model))?;
    let workspace = dir.join("sessions");
    std::fs::create_dir_all(&workspace).map_err(|e| e.to_string())?;
    let service = Service::start(&dir, profile, model_port, &workspace)?;
    service.register(&format!("http://127.0.0.1:{}", nodes[0].admin))?;

    let victim = busiest_leader(fabric[0])?;
    let survivor = nodes
        .iter()
        .find(|n| n.name != victim)
        .map(|n| n.ingress)
        .ok_or("restate-cluster: no surviving node")?;
    let started = Instant::now();
    let ids = send_runs(survivor, sessions)?;
    // Mid-run (each run waits for its first answer): a steer to each
    // session, through whichever replica the proxy picks; each must reach
    // the run.
    std::thread::sleep(MODEL_DELAY);
    let undelivered = steer_all(survivor, &ids);
    // About a third of the model calls are answered.
    std::thread::sleep(MODEL_DELAY * (CALLS as u32 / 2 - 1));
    let answered_before: usize = model
        .requests
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .values()
        .sum();
    if let Some(node) = nodes.iter_mut().find(|n| n.name == victim)
        && let Some(mut child) = node.child.take()
    {
        let _ = child.kill();
        let _ = child.wait();
    }
    let killed_at = started.elapsed();
    println!(
        "restate-cluster: kill -9 of {victim} (the busiest partition leader) after {} ms, {answered_before} model requests in",
        killed_at.as_millis()
    );

    let mut failures = Vec::new();
    for (session, id) in &ids {
        let url = format!("http://127.0.0.1:{survivor}/restate/invocation/{id}/attach");
        match http("GET", &url, None) {
            Some((200, body)) if body.contains(&format!("{session} done")) => {}
            other => failures.push(format!("{session}: {other:?}")),
        }
    }
    let elapsed = started.elapsed();
    let given = service.stop();
    let steered = model
        .steered
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    for (session, _) in &ids {
        if !steered.contains(session) {
            failures.push(format!("{session}: its steer never reached the model"));
        }
    }
    println!(
        "restate-cluster: steers delivered {} of {}, seen by the model {} of {}; connections per replica {given:?}",
        ids.len() - undelivered.len(),
        ids.len(),
        steered.len(),
        ids.len()
    );
    let outcome = Outcome {
        ids: &ids,
        workspace: &workspace,
        model: &model,
        sessions,
        elapsed,
        killed_at,
    };
    outcome.judge(undelivered, failures)
}

/// Three nodes with replication 2, up: the nodes and their fabric ports.
fn start_cluster(dir: &Path) -> Result<(Vec<Node>, [u16; 3])> {
    let fabric = [free_port()?, free_port()?, free_port()?];
    let mut nodes = Vec::new();
    for i in 0..3 {
        nodes.push(start_node(dir, i, &fabric, i == 0)?);
    }
    for node in &nodes {
        let admin = format!("http://127.0.0.1:{}/health", node.admin);
        let ingress = format!("http://127.0.0.1:{}/restate/health", node.ingress);
        wait_for(&format!("{} to be up", node.name), Duration::from_secs(90), || {
            http("GET", &admin, None).is_some_and(|(s, _)| s == 200)
                && http("GET", &ingress, None).is_some_and(|(s, _)| s == 200)
        })?;
    }
    println!("restate-cluster: three nodes up, replication 2");
    Ok((nodes, fabric))
}

/// The service's replicas behind one round-robin proxy.
struct Service {
    replicas: Vec<Replica>,
    proxy_port: u16,
    given: Arc<Vec<std::sync::atomic::AtomicUsize>>,
}

impl Service {
    fn start(dir: &Path, profile: &str, model_port: u16, workspace: &Path) -> Result<Service> {
        let mut replicas = Vec::new();
        let mut replica_ports = Vec::new();
        for r in 0..REPLICAS {
            let port = free_port()?;
            let log = std::fs::File::create(dir.join(format!("service-{r}.log"))).map_err(|e| e.to_string())?;
            let child = Command::new(root().join("target").join(profile).join("zidane-restate"))
                .args(["--bind", &format!("127.0.0.1:{port}")])
                .args(["--base-url", &format!("http://127.0.0.1:{model_port}")])
                .arg("--workspace")
                .arg(workspace)
                .env("ANTHROPIC_API_KEY", "sk-cluster-check")
                .stdout(Stdio::null())
                .stderr(Stdio::from(log))
                .spawn()
                .map_err(|e| format!("could not start zidane-restate: {e}"))?;
            replicas.push(Replica(child));
            wait_for("a service replica", Duration::from_secs(30), || {
                TcpStream::connect(("127.0.0.1", port)).is_ok()
            })?;
            replica_ports.push(port);
        }
        let (proxy_port, given) = round_robin(replica_ports)?;
        Ok(Service {
            replicas,
            proxy_port,
            given,
        })
    }

    /// Registers the proxy's URL with the cluster's admin API.
    fn register(&self, admin: &str) -> Result {
        let registered = http(
            "POST",
            &format!("{admin}/deployments"),
            Some(&json!({"uri": format!("http://127.0.0.1:{}", self.proxy_port)})),
        );
        if !registered.as_ref().is_some_and(|(s, _)| *s == 201 || *s == 200) {
            return Err(format!(
                "restate-cluster: registering the service failed: {registered:?}"
            ));
        }
        println!("restate-cluster: {REPLICAS} service replicas behind one deployment URL");
        Ok(())
    }

    /// Stops the replicas: the connections each was given.
    fn stop(self) -> Vec<usize> {
        drop(self.replicas);
        self.given
            .iter()
            .map(|n| n.load(std::sync::atomic::Ordering::Relaxed))
            .collect()
    }
}

/// A run sent to each session: the sessions and their invocation ids.
fn send_runs(survivor: u16, sessions: usize) -> Result<Vec<(String, String)>> {
    let mut ids = Vec::new();
    for s in 0..sessions {
        let session = format!("s{s}");
        let url = format!("http://127.0.0.1:{survivor}/ZidaneAgent/{session}/run/send");
        let prompt = json!({"prompt": format!("Session {session}. Run the commands.")});
        let (status, body) = http("POST", &url, Some(&prompt)).ok_or("restate-cluster: the ingress did not answer")?;
        if status != 202 {
            return Err(format!("restate-cluster: sending a run failed: {status} {body}"));
        }
        let id: Value = serde_json::from_str(&body).map_err(|e| e.to_string())?;
        ids.push((session, id["invocationId"].as_str().unwrap_or_default().to_owned()));
    }
    Ok(ids)
}

/// A steer to each session: the ones not delivered.
fn steer_all(survivor: u16, ids: &[(String, String)]) -> Vec<String> {
    let mut undelivered = Vec::new();
    for (session, _) in ids {
        let url = format!("http://127.0.0.1:{survivor}/ZidaneAgent/{session}/steer");
        let steer = json!({"text": format!("Steer {session}.")});
        let asked = Instant::now();
        match http("POST", &url, Some(&steer)) {
            Some((200, body)) if body.contains("\"delivered\":true") => {}
            other => undelivered.push(format!("{session}: {other:?} after {} ms", asked.elapsed().as_millis())),
        }
    }
    undelivered
}

/// What the runs did, to judge.
struct Outcome<'a> {
    ids: &'a [(String, String)],
    workspace: &'a Path,
    model: &'a Model,
    sessions: usize,
    elapsed: Duration,
    killed_at: Duration,
}

impl Outcome<'_> {
    /// The steps counted and said; an error when a run failed, a command
    /// ran twice or a model call was asked more than twice.
    fn judge(&self, undelivered: Vec<String>, mut failures: Vec<String>) -> Result {
        let requests = self
            .model
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let total: usize = requests.values().sum();
        let repeated_requests: usize = requests.values().map(|n| n - 1).sum();
        let sessions_with_repeats = requests.iter().filter(|(_, n)| **n > 1).count();
        let interrupted = self
            .model
            .interrupted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let mut commands = 0;
        let mut repeated_commands = 0;
        for (session, _) in self.ids {
            let log = std::fs::read_to_string(self.workspace.join(session).join("effects.log")).unwrap_or_default();
            let mut seen = BTreeMap::<&str, usize>::new();
            for line in log.lines() {
                *seen.entry(line).or_default() += 1;
            }
            commands += seen.len();
            repeated_commands += seen.values().map(|n| n - 1).sum::<usize>();
            // A command cut off by the kill is reported to the model as
            // interrupted, never run again: it may not have run at all.
            let cut_off = interrupted.get(session).copied().unwrap_or(0);
            if seen.len() > CALLS || seen.len() + cut_off < CALLS {
                failures.push(format!(
                    "{session}: {} distinct commands, expected {CALLS} ({cut_off} reported interrupted)",
                    seen.len()
                ));
            }
        }
        let ids = self.ids.len();
        println!(
            "restate-cluster: {ids} runs, {} completed",
            ids - failures.len().min(ids)
        );
        println!(
            "restate-cluster: steps: {total} model requests for {} model calls ({repeated_requests} asked again, in {sessions_with_repeats} runs), {commands} commands ({repeated_commands} run again)",
            self.sessions * (CALLS + 1)
        );
        println!(
            "restate-cluster: commands reported interrupted to the model: {}",
            interrupted.values().sum::<usize>()
        );
        println!(
            "restate-cluster: all runs ended {} ms after they were sent ({} ms after the kill)",
            self.elapsed.as_millis(),
            (self.elapsed - self.killed_at).as_millis()
        );
        if !undelivered.is_empty() || !failures.is_empty() {
            return Err(format!(
                "restate-cluster: steers not delivered:\n  {}\nruns failed:\n  {}",
                undelivered.join("\n  "),
                failures.join("\n  ")
            ));
        }
        if repeated_commands > 0 {
            return Err("restate-cluster: a finished command ran again".to_owned());
        }
        // A model call in flight at the kill may be asked again, once per run.
        if requests.values().any(|n| *n > 2) {
            return Err("restate-cluster: a model call was asked more than twice".to_owned());
        }
        Ok(())
    }
}
