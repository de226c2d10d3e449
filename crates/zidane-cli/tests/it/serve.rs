//! `zidane serve`: the real server, reached by real clients over real
//! sockets — WebSocket clients written here (every message checked against
//! ACP's schema), the official TypeScript client, the `acp --connect`
//! bridge, `zidane attach` in a pseudo-terminal — and a real `kill -9`.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::acp::{Schema, prompt};
use super::session::{Setup, Term};
use super::text;

/// How long a wait for the server may take before the test fails (a bound
/// on a condition, not a sleep).
const PATIENCE: Duration = Duration::from_secs(30);

/// `zidane serve` on a loopback port of its own, in the setup's home.
pub(super) struct Served {
    child: tokio::process::Child,
    /// `ws://127.0.0.1:PORT/acp`.
    pub(super) url: String,
    pub(super) token: String,
    /// What it wrote to standard error, and a bell rung at each line.
    log: Arc<(Mutex<Vec<String>>, tokio::sync::Notify)>,
}

impl Served {
    /// Starts the server with `env` and `extra` flags, once it listens.
    pub(super) async fn start(setup: &Setup, env: &[(&str, &str)], extra: &[&str]) -> Served {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane"));
        for var in [
            "OPENAI_API_KEY",
            "OPENROUTER_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("ANTHROPIC_API_KEY", "sk-test")
            .env("ZIDANE_HOME", setup.home.path())
            .env("ZIDANE_APPROVE", "ask")
            .args(["--base-url", &setup.url, "serve"])
            .args(extra)
            .current_dir(setup.work.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Arc::new((Mutex::new(Vec::new()), tokio::sync::Notify::new()));
        let url = loop {
            let line = tokio::time::timeout(PATIENCE, lines.next_line())
                .await
                .expect("zidane serve did not say where it listens within 30 s")
                .unwrap()
                .unwrap_or_else(|| panic!("zidane serve ended: {:?}", log.0.lock().unwrap()));
            log.0.lock().unwrap().push(line.clone());
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        let keep = Arc::clone(&log);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                keep.0.lock().unwrap().push(line);
                keep.1.notify_waiters();
            }
        });
        let token = std::fs::read_to_string(setup.home.path().join("serve-token"))
            .unwrap()
            .trim()
            .to_owned();
        Served { child, url, token, log }
    }

    /// `kill -9` of the server.
    pub(super) async fn kill9(&mut self) {
        let pid = self.child.id().unwrap();
        let killed = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        self.child.wait().await.unwrap();
    }

    /// Waits until the server's log has a line containing `needle`.
    pub(super) async fn logged(&self, needle: &str) -> String {
        let (lines, bell) = &*self.log;
        tokio::time::timeout(PATIENCE, async {
            loop {
                let rung = bell.notified();
                if let Some(line) = lines.lock().unwrap().iter().find(|l| l.contains(needle)) {
                    return line.clone();
                }
                rung.await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("the server never said `{needle}`: {:?}", lines.lock().unwrap()))
    }

    /// `host:port`.
    fn authority(&self) -> String {
        self.url.trim_start_matches("ws://").trim_end_matches("/acp").to_owned()
    }
}

/// A WebSocket client of the server, as an editor's would be.
pub(super) struct Ws {
    socket: WebSocketStream<TcpStream>,
    schema: Schema,
    next: i64,
    /// Every message received.
    pub(super) seen: Vec<Value>,
    /// How permission requests are answered (`None`: the test answers).
    pub(super) permission: Option<&'static str>,
}

impl Ws {
    /// Connects to `url` with `headers`; the handshake's error when the
    /// server refuses.
    pub(super) async fn connect(url: &str, headers: &[(&str, &str)]) -> Result<Ws, String> {
        let authority = url.trim_start_matches("ws://").split('/').next().unwrap().to_owned();
        let stream = TcpStream::connect(&authority).await.map_err(|e| e.to_string())?;
        let mut request = url.into_client_request().unwrap();
        for (name, value) in headers {
            request.headers_mut().insert(
                tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        let config = WebSocketConfig::default().max_message_size(None).max_frame_size(None);
        let (socket, _) = tokio_tungstenite::client_async_with_config(request, stream, Some(config))
            .await
            .map_err(|e| e.to_string())?;
        Ok(Ws {
            socket,
            schema: Schema::load(),
            next: 1,
            seen: Vec::new(),
            permission: Some("allow_once"),
        })
    }

    /// Connects with the token and initializes as `name`.
    pub(super) async fn open(server: &Served, name: &str) -> Ws {
        let bearer = format!("Bearer {}", server.token);
        let mut ws = Ws::connect(&server.url, &[("authorization", &bearer)]).await.unwrap();
        let init = ws
            .call(
                "initialize",
                json!({ "protocolVersion": 1, "clientCapabilities": {}, "clientInfo": { "name": name, "version": "1" } }),
            )
            .await;
        assert_eq!(init["result"]["_meta"]["zidane"]["served"], true, "{init}");
        ws
    }

    pub(super) async fn send(&mut self, message: Value) {
        self.socket.send(Message::text(message.to_string())).await.unwrap();
    }

    /// The next message, checked against the schema; permission requests
    /// answered as `permission` says.
    pub(super) async fn next_message(&mut self) -> Value {
        loop {
            let frame = tokio::time::timeout(PATIENCE, self.socket.next())
                .await
                .expect("no message from the server within 30 s")
                .expect("the server closed the connection")
                .unwrap();
            let Message::Text(text) = frame else { continue };
            let message: Value = serde_json::from_str(&text).unwrap();
            if message["method"] != "$/cancel_request" {
                self.schema.check(&message);
            }
            self.seen.push(message.clone());
            if message["method"] == "session/request_permission"
                && let Some(option) = self.permission
            {
                self.answer(&message, option).await;
            }
            return message;
        }
    }

    /// Answers a permission request with `option`.
    pub(super) async fn answer(&mut self, request: &Value, option: &str) {
        let result = json!({ "outcome": { "outcome": "selected", "optionId": option } });
        self.send(json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }))
            .await;
    }

    /// Sends a request without waiting: its id.
    pub(super) async fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next;
        self.next += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        id
    }

    /// The response to request `id`.
    pub(super) async fn response(&mut self, id: i64) -> Value {
        if let Some(done) = self
            .seen
            .iter()
            .find(|m| m["id"] == json!(id) && m.get("method").is_none())
        {
            return done.clone();
        }
        self.until(|m| m["id"] == json!(id) && m.get("method").is_none()).await
    }

    pub(super) async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params).await;
        self.response(id).await
    }

    /// The first message (seen already, or next) matching `ok`.
    pub(super) async fn until(&mut self, ok: impl Fn(&Value) -> bool) -> Value {
        if let Some(seen) = self.seen.iter().find(|m| ok(m)) {
            return seen.clone();
        }
        loop {
            let message = self.next_message().await;
            if ok(&message) {
                return message;
            }
        }
    }

    /// The first update matching `ok`.
    pub(super) async fn update(&mut self, ok: impl Fn(&Value) -> bool) -> Value {
        let message = self
            .until(|m| m["method"] == "session/update" && ok(&m["params"]["update"]))
            .await;
        message["params"]["update"].clone()
    }

    /// A new session in `cwd` (`meta`: its `_meta`).
    pub(super) async fn new_session(&mut self, cwd: &Path, meta: Value) -> Value {
        let opened = self
            .call("session/new", json!({ "cwd": cwd, "mcpServers": [], "_meta": meta }))
            .await;
        assert!(opened.get("result").is_some(), "{opened}");
        opened["result"].clone()
    }

    /// Loads (attaches to) `session`.
    pub(super) async fn load(&mut self, session: &str, cwd: &Path) {
        let loaded = self
            .call(
                "session/load",
                json!({ "sessionId": session, "cwd": cwd, "mcpServers": [] }),
            )
            .await;
        assert!(loaded.get("result").is_some(), "{loaded}");
    }

    /// The updates received so far.
    pub(super) fn updates(&self) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"]["update"].clone())
            .collect()
    }

    /// The agent's text received so far.
    fn said(&self) -> String {
        self.updates()
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

fn is_text(update: &Value, text: &str) -> bool {
    update["sessionUpdate"] == "agent_message_chunk"
        && update["content"]["text"].as_str().is_some_and(|t| t.contains(text))
}

/// A client starts a command and goes away; the run goes on. Another
/// client attaches mid-turn: it is shown the conversation and the turn so
/// far, its prompt steers the run (the first client's name on the first
/// prompt), and it sees the rest of the turn live.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_outlives_its_client_and_an_attach_sees_the_rest() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let gate = super::started_fifo(work);
    let release = work.join("release.fifo");
    mkfifo(&release);
    let mut laptop = Ws::open(&server, "laptop").await;
    let session = laptop.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let command = json!({"command": format!("echo started > {} && cat {}", gate.display(), release.display())});
    laptop
        .request("session/prompt", prompt(&session, &format!("call shell {command}")))
        .await;
    assert_eq!(tokio::fs::read_to_string(&gate).await.unwrap().trim(), "started");
    drop(laptop);

    let mut desktop = Ws::open(&server, "desktop").await;
    let listed = desktop.call("session/list", json!({ "cwd": work })).await;
    assert_eq!(listed["result"]["sessions"][0]["sessionId"], json!(session), "{listed}");
    assert_eq!(
        listed["result"]["sessions"][0]["_meta"]["zidane"]["state"], "running",
        "{listed}"
    );
    desktop.load(&session, work).await;
    let shown = desktop.updates();
    assert!(
        shown.iter().any(|u| u["sessionUpdate"] == "user_message_chunk"
            && u["content"]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("call shell"))),
        "the prompt replayed: {shown:?}"
    );
    assert!(
        shown
            .iter()
            .any(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "in_progress"),
        "the turn so far replayed: {shown:?}"
    );
    let steer = desktop.call("session/prompt", prompt(&session, "also say hi")).await;
    assert_eq!(steer["result"]["_meta"]["zidane"]["steered"], true, "{steer}");
    let status = desktop.call("_zidane/status", json!({ "sessionId": session })).await;
    assert_eq!(status["result"]["queued"][0]["text"], "also say hi", "{status}");
    tokio::fs::write(&release, "go\n").await.unwrap();
    // The model's next request carries the steer after the command's result.
    desktop.update(|u| is_text(u, "Answer: also say hi")).await;
    let body = setup.last_body();
    assert!(body.contains("exit code: 0") && body.contains("also say hi"), "{body}");
    // A prompt as the run ends: a steer if the run takes it, else the
    // next run; answered either way.
    desktop.request("session/prompt", prompt(&session, "and then?")).await;
    desktop.update(|u| is_text(u, "Answer: and then?")).await;
    drop(server);
}

/// Two clients on one session: each sees what the other typed (with the
/// typist's name), the permission request goes to both, the second one
/// answers, and the first is told its request was withdrawn.
#[tokio::test(flavor = "multi_thread")]
async fn two_clients_one_approval_answered_by_the_second() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let server = Served::start(&setup, &[], &[]).await;
    let mut alice = Ws::open(&server, "alice").await;
    alice.permission = None;
    let session = alice.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut bob = Ws::open(&server, "bob").await;
    bob.permission = None;
    bob.load(&session, work).await;

    let write = json!({"path": "shared.txt", "content": "written once"});
    let running = alice
        .request("session/prompt", prompt(&session, &format!("call write_file {write}")))
        .await;
    let echoed = bob.update(|u| u["sessionUpdate"] == "user_message_chunk").await;
    assert_eq!(echoed["_meta"]["zidane"]["client"], "alice", "{echoed}");
    let to_alice = alice.until(|m| m["method"] == "session/request_permission").await;
    let to_bob = bob.until(|m| m["method"] == "session/request_permission").await;
    assert_eq!(to_alice["params"]["toolCall"], to_bob["params"]["toolCall"]);
    bob.answer(&to_bob, "allow_once").await;
    let withdrawn = alice.until(|m| m["method"] == "$/cancel_request").await;
    assert_eq!(withdrawn["params"]["requestId"], to_alice["id"], "{withdrawn}");
    assert_eq!(withdrawn["params"]["_meta"]["zidane"]["answeredBy"], "bob");
    let done = alice.response(running).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(
        std::fs::read_to_string(work.join("shared.txt")).unwrap(),
        "written once"
    );
    // Alice answering late changes nothing: the file stays written, and
    // the turn ends once.
    alice.answer(&to_alice, "reject_once").await;
    bob.update(|u| is_text(u, "Tool done.")).await;
    assert_eq!(
        std::fs::read_to_string(work.join("shared.txt")).unwrap(),
        "written once"
    );
    assert!(
        !bob.seen.iter().any(|m| m["method"] == "$/cancel_request"),
        "the one who answered is not told"
    );
}

/// `kill -9` of the server while a command runs; the server started again
/// lists the session and continues its run: the model is asked once more
/// (the cut-off command reported, not run again), and a client attaching
/// sees the end.
#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_command_then_the_run_continues_at_the_next_start() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let mut server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let gate = super::started_fifo(work);
    let mut client = Ws::open(&server, "laptop").await;
    let session = client.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let command = json!({"command": format!("echo ran >> runs.txt && echo started > {} && sleep 120", gate.display())});
    client
        .request("session/prompt", prompt(&session, &format!("call shell {command}")))
        .await;
    assert_eq!(tokio::fs::read_to_string(&gate).await.unwrap().trim(), "started");
    server.kill9().await;
    drop(client);
    assert_eq!(setup.bodies.lock().unwrap().len(), 1);

    let server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    server
        .logged(&format!("continuing 1 interrupted run(s): {session}"))
        .await;
    let mut client = Ws::open(&server, "desktop").await;
    let listed = client.call("session/list", json!({})).await;
    assert_eq!(listed["result"]["sessions"][0]["sessionId"], json!(session), "{listed}");
    client.load(&session, work).await;
    client.update(|u| is_text(u, "Tool done.")).await;
    let last = setup.last_body();
    assert!(last.contains("this call was interrupted"), "{last}");
    assert_eq!(
        setup.bodies.lock().unwrap().len(),
        2,
        "the model was asked once more, not twice"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("runs.txt")).unwrap(),
        "ran\n",
        "not run again"
    );
    let next = client.call("session/prompt", prompt(&session, "and now?")).await;
    assert_eq!(next["result"]["stopReason"], "end_turn", "{next}");
}

/// `zidane attach` in a pseudo-terminal: the question another client's
/// prompt raised is asked on its screen and answered there, a prompt typed
/// there runs, `/lsp` shows the served session's language servers, and
/// Ctrl-\ detaches with the session going on.
#[tokio::test(flavor = "multi_thread")]
async fn attach_in_a_terminal_answers_an_approval_and_detaches() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let server = Served::start(&setup, &[], &[]).await;
    let mut script = Ws::open(&server, "script").await;
    script.permission = None;
    let session = script.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let write = json!({"path": "from-attach.txt", "content": "approved in the terminal"});
    let running = script
        .request("session/prompt", prompt(&session, &format!("call write_file {write}")))
        .await;
    script.until(|m| m["method"] == "session/request_permission").await;

    let mut term = Term::start(
        setup.home.path(),
        work,
        &[("USER", "ada")],
        &["attach", "--session", &session],
        (100, 30),
    );
    term.wait_for("[y]");
    term.type_keys("y");
    term.wait_for("Tool done.");
    let done = script.response(running).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let withdrawn = script.until(|m| m["method"] == "$/cancel_request").await;
    assert_eq!(withdrawn["params"]["_meta"]["zidane"]["answeredBy"], "ada@terminal");
    assert_eq!(
        std::fs::read_to_string(work.join("from-attach.txt")).unwrap(),
        "approved in the terminal"
    );
    term.idle();
    term.line("hello from the terminal");
    term.wait_for("Answer: hello from the terminal");
    let echoed = script.update(|u| u["sessionUpdate"] == "user_message_chunk").await;
    assert_eq!(echoed["_meta"]["zidane"]["client"], "ada@terminal");
    // The served session's language servers: a Python file makes the
    // folder call for the Python ones (found on this machine or not).
    std::fs::write(work.join("app.py"), "x = 1\n").unwrap();
    term.line("/lsp");
    term.wait_for("(python)");
    term.type_keys("\x1c");
    let out = term.finish();
    assert!(out.contains(&format!("detached from session {session}")), "{out}");
    // The terminal left; the session stays, with the script attached.
    tokio::time::timeout(PATIENCE, async {
        loop {
            let status = script.call("_zidane/status", json!({ "sessionId": session })).await;
            if status["result"]["clients"] == 1 && status["result"]["running"] == false {
                return;
            }
        }
    })
    .await
    .expect("the terminal never left the session");
}

/// `zidane attach` (the server found from `serve.json`) outlives a
/// `kill -9` of the server: its status line says it is disconnected and
/// retrying, it reconnects once the server is back on its port, and the
/// session answers again.
#[tokio::test(flavor = "multi_thread")]
async fn attach_reconnects_after_the_server_is_killed() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let mut server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let mut script = Ws::open(&server, "script").await;
    let session = script.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = script
        .call("session/prompt", prompt(&session, "before the crash"))
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    drop(script);

    let mut term = Term::start(
        setup.home.path(),
        work,
        &[],
        &["attach", "--session", &session],
        (140, 30),
    );
    term.wait_for("Answer: before the crash");
    term.wait_for(&format!("attached {}", server.url));
    server.kill9().await;
    term.wait_for("disconnected");
    let again = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    assert_eq!(again.url, server.url, "the server takes its port again");
    term.wait_for("reconnected to");
    term.idle();
    term.line("after the crash");
    term.wait_for("Answer: after the crash");
    term.type_keys("\x1c");
    let out = term.finish();
    assert!(out.contains("detached from session"), "{out}");
}

/// A folder whose project files need trust: a client that shows forms is
/// asked (a form tied to its `session/new`), and its yes is remembered for
/// the folder (the project's command offered); a client without forms
/// gets the files left out and a note saying so.
#[tokio::test(flavor = "multi_thread")]
async fn the_folders_trust_is_asked_of_the_client() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    super::conventions::write(&work.join(".zidane/commands/hello.md"), "Say hello.");
    let server = Served::start(&setup, &[], &[]).await;

    let mut plain = Ws::open(&server, "plain").await;
    let opened = plain.new_session(work, json!({})).await;
    let session = opened["sessionId"].as_str().unwrap().to_owned();
    assert!(
        plain.said().contains("ignoring .zidane/commands"),
        "{:?}",
        plain.updates()
    );
    let offered = plain
        .update(|u| u["sessionUpdate"] == "available_commands_update")
        .await;
    assert!(!offered.to_string().contains("\"hello\""), "{offered}");
    plain.call("session/close", json!({ "sessionId": session })).await;

    let bearer = format!("Bearer {}", server.token);
    let mut editor = Ws::connect(&server.url, &[("authorization", &bearer)]).await.unwrap();
    let capabilities = json!({ "elicitation": { "form": {} } });
    editor
        .call(
            "initialize",
            json!({ "protocolVersion": 1, "clientCapabilities": capabilities }),
        )
        .await;
    let opening = editor
        .request("session/new", json!({ "cwd": work, "mcpServers": [] }))
        .await;
    let asked = editor.until(|m| m["method"] == "elicitation/create").await;
    assert_eq!(asked["params"]["requestId"], json!(opening), "{asked}");
    assert!(
        asked["params"]["message"]
            .as_str()
            .unwrap()
            .contains(".zidane/commands"),
        "{asked}"
    );
    let yes = json!({ "action": "accept", "content": { "trust": true } });
    editor
        .send(json!({ "jsonrpc": "2.0", "id": asked["id"], "result": yes }))
        .await;
    let opened = editor.response(opening).await;
    assert!(opened.get("result").is_some(), "{opened}");
    let offered = editor
        .update(|u| u["sessionUpdate"] == "available_commands_update")
        .await;
    assert!(offered.to_string().contains("\"hello\""), "{offered}");
    let config = std::fs::read_to_string(setup.home.path().join("config.toml")).unwrap();
    assert!(config.contains("trust = true"), "{config}");
}

/// `zidane --remote local` in a terminal, in a folder that needs trust:
/// the server's question is asked on the terminal before the screen is
/// taken, and the answer holds for the session.
#[tokio::test(flavor = "multi_thread")]
async fn remote_in_a_terminal_asks_the_trust_question_first() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    super::conventions::write(&work.join(".zidane/commands/hello.md"), "Say hello.");
    let _server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let mut term = Term::start(setup.home.path(), work, &[], &["--remote", "local"], (120, 30));
    term.wait_for("Trust this folder and use them?");
    term.line("y");
    term.idle();
    term.line("/hello");
    term.wait_for("Answer: Say hello.");
    term.type_keys("\x1c");
    let out = term.finish();
    assert!(out.contains("detached from session"), "{out}");
}

/// Connections are refused before any method runs without the token, with
/// a wrong one, from another origin, or naming another host; bad frames
/// get the protocol's errors; a 100 MB frame and a client that never reads
/// are dropped; the server goes on serving.
#[tokio::test(flavor = "multi_thread")]
async fn refusals_and_bad_input_leave_the_server_serving() {
    let setup = Setup::new().await;
    let server = Served::start(&setup, &[], &[]).await;
    let bearer = format!("Bearer {}", server.token);
    let refused = |e: Result<Ws, String>| match e {
        Ok(_) => panic!("the connection was accepted"),
        Err(e) => e,
    };
    assert!(refused(Ws::connect(&server.url, &[]).await).contains("401"));
    assert!(refused(Ws::connect(&server.url, &[("authorization", "Bearer wrong")]).await).contains("401"));
    let foreign = [("authorization", bearer.as_str()), ("origin", "http://evil.example")];
    assert!(refused(Ws::connect(&server.url, &foreign).await).contains("403"));
    let rebinding = [("authorization", bearer.as_str()), ("host", "evil.example")];
    assert!(refused(Ws::connect(&server.url, &rebinding).await).contains("403"));
    let own = format!("http://{}", server.authority());
    assert!(
        Ws::connect(&server.url, &[("authorization", &bearer), ("origin", &own)])
            .await
            .is_ok()
    );
    // A browser's way: the token as a subprotocol.
    let browser = format!("zidane.v1, zidane.token.{}", server.token);
    assert!(
        Ws::connect(&server.url, &[("sec-websocket-protocol", &browser)])
            .await
            .is_ok()
    );

    let mut client = Ws::open(&server, "tester").await;
    client.socket.send(Message::text("{not json")).await.unwrap();
    let parse = client.next_message().await;
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    let unknown = client.call("session/fly", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");

    // 100 MB in one frame: refused, the connection closed.
    let mut huge = Ws::open(&server, "huge").await;
    let sent = huge.socket.send(Message::text("x".repeat(100 << 20))).await;
    if sent.is_ok() {
        // Read to the close: the protocol's error, then code 1009.
        let (said, code) = tokio::time::timeout(PATIENCE, async {
            let mut said = String::new();
            loop {
                match huge.socket.next().await {
                    Some(Ok(Message::Text(text))) => said.push_str(&text),
                    Some(Ok(Message::Close(frame))) => return (said, frame.map(|f| u16::from(f.code))),
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => return (said, None),
                }
            }
        })
        .await
        .expect("the server kept a 100 MB frame's connection open");
        assert!(said.contains("-32600"), "{said}");
        assert_eq!(code, Some(1009), "{said}");
    }

    // A client that never reads: its answers pile up until it is dropped.
    let mut deaf = Ws::open(&server, "deaf").await;
    let request =
        json!({ "jsonrpc": "2.0", "id": 1, "method": "session/fly", "params": { "padding": "p".repeat(4096) } })
            .to_string();
    let mut dropped = false;
    for _ in 0..200_000 {
        let sending = tokio::time::timeout(PATIENCE, deaf.socket.send(Message::text(request.clone()))).await;
        match sending {
            Ok(Ok(())) => {}
            // The server closed the connection.
            Ok(Err(_)) => {
                dropped = true;
                break;
            }
            Err(_) => panic!("the server stopped reading a client that never reads, rather than dropping it"),
        }
    }
    assert!(dropped, "a client that never reads was kept");

    let mut after = Ws::open(&server, "after").await;
    let session = after.new_session(setup.work.path(), json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = after.call("session/prompt", prompt(&session, "still there?")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
}

/// `git init` with one committed file.
fn repository(dir: &Path) {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("shared.txt"), "original\n").unwrap();
    git(&["add", "shared.txt"]);
    git(&["commit", "-q", "-m", "first"]);
}

/// Two sessions, each in a worktree of its own, change the same file
/// without touching each other's copy or the checkout; the list shows each
/// branch and its changes; deleting a session keeps a worktree with
/// uncommitted work unless told to remove it. `--worktree` locally makes
/// one too.
#[tokio::test(flavor = "multi_thread")]
async fn worktree_sessions_change_the_same_file_apart() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    repository(work);
    let server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let mut client = Ws::open(&server, "tester").await;
    let mut sessions = Vec::new();
    for name in ["one", "two"] {
        let opened = client
            .new_session(work, json!({ "zidane": { "worktree": name } }))
            .await;
        let tree = &opened["_meta"]["zidane"]["worktree"];
        assert_eq!(tree["branch"], format!("zidane/{name}"), "{opened}");
        let session = opened["sessionId"].as_str().unwrap().to_owned();
        client
            .call(
                "session/prompt",
                prompt(&session, r#"call read_file {"path": "shared.txt"}"#),
            )
            .await;
        let write = json!({"path": "shared.txt", "content": format!("from {name}\n")});
        let done = client
            .call("session/prompt", prompt(&session, &format!("call write_file {write}")))
            .await;
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
        sessions.push(session);
    }
    for name in ["one", "two"] {
        let copy = work.join(".zidane/worktrees").join(name).join("shared.txt");
        assert_eq!(std::fs::read_to_string(copy).unwrap(), format!("from {name}\n"));
    }
    assert_eq!(std::fs::read_to_string(work.join("shared.txt")).unwrap(), "original\n");
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(work)
        .output()
        .unwrap();
    assert_eq!(text(&status.stdout), "", "the checkout is untouched");

    let listed = client.call("session/list", json!({ "cwd": work })).await;
    let trees: Vec<(String, bool)> = listed["result"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let tree = &s["_meta"]["zidane"]["worktree"];
            (tree["branch"].as_str().unwrap().to_owned(), tree["changed"] == true)
        })
        .collect();
    assert!(trees.contains(&("zidane/one".into(), true)), "{listed}");
    assert!(trees.contains(&("zidane/two".into(), true)), "{listed}");

    let kept = client.call("session/delete", json!({ "sessionId": sessions[0] })).await;
    assert!(
        kept["result"]["_meta"]["zidane"]["worktreeKept"].as_str().is_some(),
        "{kept}"
    );
    assert!(work.join(".zidane/worktrees/one/shared.txt").exists());
    let forced = client
        .call(
            "session/delete",
            json!({ "sessionId": sessions[1], "_meta": { "zidane": { "removeWorktree": "force" } } }),
        )
        .await;
    assert_eq!(forced["result"], json!({}), "{forced}");
    assert!(!work.join(".zidane/worktrees/two").exists());

    let write = json!({"path": "three.txt", "content": "from three\n"});
    let local = super::zidane(
        setup.home.path(),
        work,
        &[super::conventions::KEY],
        &[
            "--base-url",
            &setup.url,
            "-p",
            "--worktree",
            "three",
            "--session",
            "local-three",
            &format!("call write_file {write}"),
        ],
    )
    .await;
    assert!(local.status.success(), "{}", text(&local.stderr));
    assert_eq!(
        std::fs::read_to_string(work.join(".zidane/worktrees/three/three.txt")).unwrap(),
        "from three\n"
    );
    assert!(!work.join("three.txt").exists());

    // Deleting a local session: its worktree goes only when it is clean.
    let clean = super::zidane(
        setup.home.path(),
        work,
        &[super::conventions::KEY],
        &[
            "--base-url",
            &setup.url,
            "-p",
            "--worktree",
            "four",
            "--session",
            "local-four",
            "hello",
        ],
    )
    .await;
    assert!(clean.status.success(), "{}", text(&clean.stderr));
    for (session, fate) in [("local-three", "kept"), ("local-four", "removed")] {
        let deleted = super::zidane(
            setup.home.path(),
            work,
            &[],
            &["sessions", "delete", session, "--yes", "--json"],
        )
        .await;
        let line: Value = serde_json::from_str(text(&deleted.stdout).trim()).unwrap();
        assert_eq!(line["worktree"], fate, "{line}");
    }
    assert!(work.join(".zidane/worktrees/three/three.txt").exists());
    assert!(!work.join(".zidane/worktrees/four").exists());
}

/// A Unix socket only its owner can open, the token's and the state
/// file's modes, and `acp --connect` bridging a stdio client to it.
#[tokio::test(flavor = "multi_thread")]
async fn a_unix_socket_and_the_bridge() {
    use std::os::unix::fs::PermissionsExt;
    let setup = Setup::new().await;
    let socket = setup.home.path().join("serve.sock");
    let server = Served::start(
        &setup,
        &[("ZIDANE_APPROVE", "yolo")],
        &["--socket", socket.to_str().unwrap()],
    )
    .await;
    assert_eq!(server.url, format!("unix:{}", socket.display()));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600);
    assert_eq!(mode(&setup.home.path().join("serve-token")), 0o600);
    let state = std::fs::read_to_string(setup.home.path().join("serve.json")).unwrap();
    assert!(!state.contains(&server.token), "{state}");
    let printed = super::zidane(setup.home.path(), setup.work.path(), &[], &["serve", "--print-token"]).await;
    assert_eq!(text(&printed.stdout).trim(), server.token);

    let mut agent = super::acp::Agent::bridge(&setup, &server.url, &[]);
    let session = agent.open(setup.work.path()).await;
    let done = agent
        .call("session/prompt", prompt(&session, "through the socket"))
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(setup.last_body().contains("through the socket"));
}

/// A non-loopback address needs TLS or `--insecure-no-tls` (said loudly);
/// with TLS, the bridge connects over `wss://` trusting the server's
/// authority.
#[tokio::test(flavor = "multi_thread")]
async fn beyond_loopback_takes_tls_or_says_it_is_in_clear() {
    let setup = Setup::new().await;
    let refused = super::zidane(
        setup.home.path(),
        setup.work.path(),
        &[],
        &["serve", "--listen", "0.0.0.0:0"],
    )
    .await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("--insecure-no-tls"),
        "{}",
        text(&refused.stderr)
    );
    let clear = Served::start(&setup, &[], &["--listen", "0.0.0.0:0", "--insecure-no-tls"]).await;
    clear.logged("WARNING: listening on 0.0.0.0:").await;
    drop(clear);

    let dir = tempfile::tempdir().unwrap();
    let (cert, key, ca) = certificates(dir.path());
    let server = Served::start(
        &setup,
        &[("ZIDANE_APPROVE", "yolo")],
        &["--listen", "127.0.0.1:0", "--tls-cert", &cert, "--tls-key", &key],
    )
    .await;
    assert!(server.url.starts_with("wss://127.0.0.1:"), "{}", server.url);
    let mut agent = super::acp::Agent::bridge(&setup, &server.url, &[("ZIDANE_SERVE_CA", &ca)]);
    let session = agent.open(setup.work.path()).await;
    let done = agent.call("session/prompt", prompt(&session, "over tls")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
}

/// An authority and a certificate for 127.0.0.1 it signed (openssl):
/// the certificate, key and authority files.
fn certificates(dir: &Path) -> (String, String, String) {
    let openssl = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl makes the test's certificates");
        assert!(out.status.success(), "openssl {args:?}: {}", text(&out.stderr));
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test authority",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        "-out",
        "server.pem",
    ]);
    let at = |name: &str| dir.join(name).to_string_lossy().into_owned();
    (at("server.pem"), at("server.key"), at("ca.pem"))
}

/// `zidane --remote URL -p "…"` from a script: a new session at the
/// server, its answer printed as `-p` prints, the session left there.
#[tokio::test(flavor = "multi_thread")]
async fn remote_print_runs_a_prompt_at_the_server() {
    let setup = Setup::new().await;
    let server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let out = super::zidane(
        setup.home.path(),
        setup.work.path(),
        &[],
        &["--remote", &server.url, "-p", "from a script"],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Answer: from a script"),
        "{}",
        text(&out.stdout)
    );
    let stderr = text(&out.stderr);
    let id = stderr
        .split("zidane: session ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{stderr}"))
        .to_owned();
    let mut client = Ws::open(&server, "check").await;
    let listed = client.call("session/list", json!({})).await;
    assert_eq!(listed["result"]["sessions"][0]["sessionId"], json!(id), "{listed}");
    client.load(&id, setup.work.path()).await;
    assert!(client.said().contains("Answer: from a script"));
}

/// The official TypeScript client, over a WebSocket with the token as a
/// subprotocol (a browser's way): the same scenario it runs over standard
/// input and output, the second connection attaching to the session.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_client_over_a_websocket() {
    let setup = Setup::new().await;
    std::fs::write(setup.work.path().join("lib.rs"), "let a = 1;\n").unwrap();
    let server = Served::start(&setup, &[], &[]).await;
    let report =
        super::acp::official_client(&setup, &[("SERVE_URL", &server.url), ("SERVE_TOKEN", &server.token)]).await;
    assert_eq!(report["permission"], "allow_always", "{report}");
    assert_eq!(
        report["stops"],
        json!(["end_turn", "end_turn", "cancelled"]),
        "{report}"
    );
    assert_eq!(report["diff"]["newText"], "let a = 2;", "{report}");
    assert!(report["replayed"].as_u64().unwrap() >= 4, "{report}");
    assert_eq!(report["afterLoad"], "end_turn", "{report}");
}

/// A question left unanswered by the clients that saw it — a terminal
/// that detached while it showed it, a client that went — waits for the
/// next client, which answers it.
#[tokio::test(flavor = "multi_thread")]
async fn a_question_waits_for_the_next_client() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let server = Served::start(&setup, &[], &[]).await;
    let mut first = Ws::open(&server, "first").await;
    first.permission = None;
    let session = first.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let write = json!({"path": "waited.txt", "content": "answered later"});
    first
        .request("session/prompt", prompt(&session, &format!("call write_file {write}")))
        .await;
    first.until(|m| m["method"] == "session/request_permission").await;
    drop(first);
    let mut term = Term::start(
        setup.home.path(),
        work,
        &[],
        &["attach", "--session", &session],
        (120, 30),
    );
    term.wait_for("[y]");
    term.type_keys("\x1c");
    term.finish();
    let mut next = Ws::open(&server, "next").await;
    next.permission = None;
    next.load(&session, work).await;
    let asked = next.until(|m| m["method"] == "session/request_permission").await;
    next.answer(&asked, "allow_once").await;
    next.update(|u| is_text(u, "Tool done.")).await;
    assert_eq!(
        std::fs::read_to_string(work.join("waited.txt")).unwrap(),
        "answered later"
    );
}

/// `zidane --remote URL -p` from a script (no terminal) answers no
/// question: the approval waits for a person attached, whose answer lets
/// the script's run finish.
#[tokio::test(flavor = "multi_thread")]
async fn a_script_leaves_the_questions_to_a_person() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let server = Served::start(&setup, &[], &[]).await;
    let write = json!({"path": "by-script.txt", "content": "approved by a person"});
    let mut script = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane"))
        .env_remove("OPENAI_API_KEY")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ZIDANE_HOME", setup.home.path())
        .args(["--remote", &server.url, "-p", &format!("call write_file {write}")])
        .current_dir(work)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut said = BufReader::new(script.stderr.take().unwrap()).lines();
    let id = loop {
        let line = tokio::time::timeout(PATIENCE, said.next_line())
            .await
            .expect("the script said nothing")
            .unwrap()
            .expect("the script ended before naming its session");
        if let Some(rest) = line.strip_prefix("zidane: session ") {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    let mut person = Ws::open(&server, "person").await;
    person.permission = None;
    person.load(&id, work).await;
    let asked = person.until(|m| m["method"] == "session/request_permission").await;
    person.answer(&asked, "allow_once").await;
    let out = tokio::time::timeout(PATIENCE, script.wait_with_output())
        .await
        .expect("the script's run did not end")
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("Tool done."), "{}", text(&out.stdout));
    assert_eq!(
        std::fs::read_to_string(work.join("by-script.txt")).unwrap(),
        "approved by a person"
    );
}

/// An attached terminal stops, with Esc, a run another client started.
#[tokio::test(flavor = "multi_thread")]
async fn esc_in_an_attached_terminal_stops_another_clients_run() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let gate = super::started_fifo(work);
    let mut script = Ws::open(&server, "script").await;
    let session = script.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let command = json!({"command": format!("echo started > {} && sleep 120", gate.display())});
    let running = script
        .request("session/prompt", prompt(&session, &format!("call shell {command}")))
        .await;
    assert_eq!(tokio::fs::read_to_string(&gate).await.unwrap().trim(), "started");
    let mut term = Term::start(
        setup.home.path(),
        work,
        &[],
        &["attach", "--session", &session],
        (120, 30),
    );
    term.wait_for("Esc to interrupt");
    term.type_keys("\x1b");
    let stopped = script.response(running).await;
    assert_eq!(stopped["result"]["stopReason"], "cancelled", "{stopped}");
    term.idle();
    term.type_keys("\x1c");
    term.finish();
}

/// Two clients loading at once a session the server does not hold share
/// one conversation: each sees what the other types.
#[tokio::test(flavor = "multi_thread")]
async fn two_loads_at_once_share_one_session() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let mut server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let mut first = Ws::open(&server, "first").await;
    let session = first.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    first.call("session/prompt", prompt(&session, "hello")).await;
    server.kill9().await;
    drop(first);
    let server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let (mut bee, mut sea) = (Ws::open(&server, "bee").await, Ws::open(&server, "sea").await);
    let params = json!({ "sessionId": session, "cwd": work, "mcpServers": [] });
    let (for_bee, for_sea) = (
        bee.request("session/load", params.clone()).await,
        sea.request("session/load", params).await,
    );
    assert!(bee.response(for_bee).await.get("result").is_some());
    assert!(sea.response(for_sea).await.get("result").is_some());
    let done = bee.call("session/prompt", prompt(&session, "from bee")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let echoed = sea
        .update(|u| u["sessionUpdate"] == "user_message_chunk" && u["_meta"]["zidane"]["client"] == "bee")
        .await;
    assert_eq!(echoed["content"]["text"], "from bee");
    drop(server);
}

/// A terminal attached while the server is killed mid-command sees, once
/// it reconnects, what happened meanwhile: the run the server continued.
#[tokio::test(flavor = "multi_thread")]
async fn attach_shows_what_happened_while_it_was_disconnected() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let mut server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let gate = super::started_fifo(work);
    let mut script = Ws::open(&server, "script").await;
    let session = script.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let command = json!({"command": format!("echo started > {} && sleep 120", gate.display())});
    script
        .request("session/prompt", prompt(&session, &format!("call shell {command}")))
        .await;
    assert_eq!(tokio::fs::read_to_string(&gate).await.unwrap().trim(), "started");
    let mut term = Term::start(
        setup.home.path(),
        work,
        &[],
        &["attach", "--session", &session],
        (140, 30),
    );
    term.wait_for("Esc to interrupt");
    server.kill9().await;
    drop(script);
    term.wait_for("disconnected");
    let _again = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    term.wait_for("reconnected to");
    term.wait_for("Tool done.");
    term.type_keys("\x1c");
    term.finish();
}

/// The model's answer held mid-stream after many chunks: a client that
/// attaches then is shown the whole turn so far (more updates than a
/// connection queues), then the rest live.
#[tokio::test(flavor = "multi_thread")]
async fn attaching_mid_turn_to_a_long_stream_shows_all_of_it() {
    let (url, release) = held_stream_model(6_000).await;
    let setup = Setup::with_url(url).await;
    let work = setup.work.path();
    let server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    let mut first = Ws::open(&server, "first").await;
    let session = first.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    first.request("session/prompt", prompt(&session, "write a lot")).await;
    // Every chunk before the hold has reached the first client.
    let mut chunks = 0;
    while chunks < 6_000 {
        let message = first.next_message().await;
        if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            chunks += 1;
        }
    }
    let mut late = Ws::open(&server, "late").await;
    late.load(&session, work).await;
    let shown = late
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .count();
    assert_eq!(shown, 6_000, "the turn so far, whole");
    let _ = release.send(());
    late.update(|u| is_text(u, "the end")).await;
}

/// A model whose first answer streams `chunks` text chunks, then holds
/// until released, then ends; later requests get a short answer.
async fn held_stream_model(chunks: usize) -> (String, tokio::sync::oneshot::Sender<()>) {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut released = Some(released);
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = Vec::new();
            if zidane_bench::loopback::read_request(&mut stream, &mut buf)
                .await
                .is_none()
            {
                continue;
            }
            let Some(held) = released.take() else {
                let body = zidane_bench::loopback::answer_sse("Done.", 20);
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
                continue;
            };
            let start = json!({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 20, "output_tokens": 1}}});
            let block =
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}});
            let mut first = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\nevent: message_start\ndata: {start}\n\nevent: content_block_start\ndata: {block}\n\n"
            );
            for _ in 0..chunks {
                let delta =
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "w "}});
                first.push_str(&format!("event: content_block_delta\ndata: {delta}\n\n"));
            }
            let _ = stream.write_all(first.as_bytes()).await;
            let _ = stream.flush().await;
            let _ = held.await;
            let rest = [
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "the end"}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
                json!({"type": "message_stop"}),
            ];
            let rest: String = rest
                .iter()
                .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
                .collect();
            let _ = stream.write_all(rest.as_bytes()).await;
        }
    });
    (url, release)
}
