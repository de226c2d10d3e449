//! `zidane acp`: the binary driven over standard input and output as an
//! editor would, every message it sends checked against the protocol's
//! official JSON schema; and the official TypeScript client driving it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::conventions::KEY;
use super::session::Setup;
use super::text;

/// The official SDK's install (`cargo xtask acp-client`).
fn sdk() -> PathBuf {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/acp-client/node_modules/@agentclientprotocol/sdk");
    assert!(
        dir.join("schema/v1/schema.json").exists(),
        "{} is missing: `cargo xtask acp-client` installs the official ACP SDK the tests use",
        dir.display()
    );
    dir
}

/// Checks messages against the schema's definitions.
pub(super) struct Schema {
    agent_response: jsonschema::Validator,
    agent_notification: jsonschema::Validator,
    agent_request: jsonschema::Validator,
}

impl Schema {
    pub(super) fn load() -> Schema {
        let text = std::fs::read_to_string(sdk().join("schema/v1/schema.json")).unwrap();
        let schema: Value = serde_json::from_str(&text).unwrap();
        let of = |name: &str| {
            let one = json!({ "$ref": format!("#/$defs/{name}"), "$defs": schema["$defs"].clone() });
            jsonschema::validator_for(&one).unwrap()
        };
        Schema {
            agent_response: of("AgentResponse"),
            agent_notification: of("AgentNotification"),
            agent_request: of("AgentRequest"),
        }
    }

    /// Panics with the schema's complaint when `message` is not valid.
    pub(super) fn check(&self, message: &Value) {
        let validator = match (message.get("method"), message.get("id")) {
            (Some(_), Some(_)) => &self.agent_request,
            (Some(_), None) => &self.agent_notification,
            _ => &self.agent_response,
        };
        let errors: Vec<String> = validator.iter_errors(message).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "not valid ACP: {message}\n{errors:?}");
    }
}

/// `zidane acp` with a client's end of its pipes.
pub(super) struct Agent {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    schema: Schema,
    next: i64,
    /// Every message received.
    seen: Vec<Value>,
    /// How permission requests are answered.
    permission: &'static str,
    /// The editor's buffers, by absolute path: what `fs/read_text_file`
    /// answers and `fs/write_text_file` changes.
    buffers: std::collections::HashMap<String, String>,
    /// The terminals opened: the command's process, then its output and
    /// exit code.
    terminals: Vec<(Option<Child>, String, Option<i32>)>,
    /// The server the bridge reaches, when served.
    server: Option<super::serve::Served>,
}

/// How a scenario reaches the agent.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Transport {
    /// `zidane acp` over its standard input and output.
    Stdio,
    /// `zidane serve`, through `zidane acp --connect`.
    Served,
}

/// A scenario run both ways: a test of each name in a module of the
/// scenario's name.
macro_rules! both_ways {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            use super::Transport;
            #[tokio::test(flavor = "multi_thread")]
            async fn over_stdio() {
                super::$scenario(Transport::Stdio).await;
            }
            #[tokio::test(flavor = "multi_thread")]
            async fn served() {
                super::$scenario(Transport::Served).await;
            }
        }
    )*};
}

both_ways!(
    a_prompt_turn_with_a_permission_and_a_diff,
    a_plan_and_the_modes,
    bad_input_gets_errors_and_the_agent_goes_on,
    cancel_stops_the_turn_and_the_session_goes_on,
    slash_commands_over_acp,
    sessions_listed_closed_and_resumed,
);

impl Agent {
    pub(super) fn start(setup: &Setup, env: &[(&str, &str)]) -> Agent {
        Agent::spawn(setup, env, &["--base-url", &setup.url, "acp"])
    }

    /// The agent `transport` says: `zidane acp`, or a `zidane serve` (with
    /// `env`) reached through `acp --connect`.
    pub(super) async fn through(transport: Transport, setup: &Setup, env: &[(&str, &str)]) -> Agent {
        match transport {
            Transport::Stdio => Agent::start(setup, env),
            Transport::Served => {
                let server = super::serve::Served::start(setup, env, &[]).await;
                let mut agent = Agent::bridge(setup, &server.url, &[]);
                agent.server = Some(server);
                agent
            }
        }
    }

    /// `zidane acp --connect URL`: a stdio client bridged to a server.
    pub(super) fn bridge(setup: &Setup, url: &str, env: &[(&str, &str)]) -> Agent {
        Agent::spawn(setup, env, &["acp", "--connect", url])
    }

    fn spawn(setup: &Setup, env: &[(&str, &str)], args: &[&str]) -> Agent {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane"));
        cmd.env_remove("OPENAI_API_KEY")
            .env_remove("OPENROUTER_API_KEY")
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ZIDANE_HOME", setup.home.path())
            .env("ZIDANE_APPROVE", "ask")
            .args(args)
            .current_dir(setup.work.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Agent {
            child,
            stdin,
            lines,
            schema: Schema::load(),
            next: 1,
            seen: Vec::new(),
            permission: "allow_once",
            buffers: std::collections::HashMap::new(),
            terminals: Vec::new(),
            server: None,
        }
    }

    async fn send(&mut self, message: Value) {
        self.raw(&message.to_string()).await;
    }

    async fn raw(&mut self, line: &str) {
        self.stdin.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next message, checked against the schema; permission requests
    /// are answered as `permission` says.
    async fn next_message(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
            .await
            .expect("no message from zidane acp within 30 s")
            .unwrap()
            .expect("zidane acp closed its output");
        let message: Value = serde_json::from_str(&line).unwrap();
        self.schema.check(&message);
        self.seen.push(message.clone());
        if let Some(result) = self.terminal(&message).await {
            let reply = json!({ "jsonrpc": "2.0", "id": message["id"], "result": result });
            self.send(reply).await;
        }
        if message["method"] == "fs/read_text_file" {
            let path = message["params"]["path"].as_str().unwrap().to_owned();
            let content = self.buffers.get(&path).cloned().unwrap_or_default();
            let reply = json!({ "jsonrpc": "2.0", "id": message["id"], "result": { "content": content } });
            self.send(reply).await;
        }
        if message["method"] == "fs/write_text_file" {
            let params = &message["params"];
            let path = params["path"].as_str().unwrap().to_owned();
            self.buffers
                .insert(path, params["content"].as_str().unwrap().to_owned());
            let reply = json!({ "jsonrpc": "2.0", "id": message["id"], "result": {} });
            self.send(reply).await;
        }
        if message["method"] == "elicitation/create" {
            let reply = json!({ "jsonrpc": "2.0", "id": message["id"], "result": { "action": "accept", "content": { "name": "Ada Lovelace" } } });
            self.send(reply).await;
        }
        if message["method"] == "session/request_permission" {
            let outcome = match self.permission {
                "cancelled" => json!({ "outcome": "cancelled" }),
                option => json!({ "outcome": "selected", "optionId": option }),
            };
            let reply = json!({ "jsonrpc": "2.0", "id": message["id"], "result": { "outcome": outcome } });
            self.send(reply).await;
        }
        message
    }

    /// The client's side of `terminal/*`: the command runs here, as an
    /// editor's terminal would run it.
    async fn terminal(&mut self, message: &Value) -> Option<Value> {
        let params = &message["params"];
        let index = |p: &Value| p["terminalId"].as_str()?.strip_prefix("term-")?.parse::<usize>().ok();
        match message["method"].as_str()? {
            "terminal/create" => {
                let args: Vec<String> = serde_json::from_value(params["args"].clone()).unwrap();
                let child = tokio::process::Command::new(params["command"].as_str().unwrap())
                    .args(&args)
                    .current_dir(params["cwd"].as_str().unwrap())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                self.terminals.push((Some(child), String::new(), None));
                Some(json!({ "terminalId": format!("term-{}", self.terminals.len() - 1) }))
            }
            "terminal/wait_for_exit" => {
                let terminal = &mut self.terminals[index(params)?];
                let out = terminal.0.take()?.wait_with_output().await.unwrap();
                terminal.1 = String::from_utf8_lossy(&out.stdout).into_owned();
                terminal.2 = out.status.code();
                Some(json!({ "exitCode": terminal.2 }))
            }
            "terminal/output" => {
                let terminal = &self.terminals[index(params)?];
                Some(json!({ "output": terminal.1, "truncated": false, "exitStatus": { "exitCode": terminal.2 } }))
            }
            "terminal/kill" | "terminal/release" => Some(json!({})),
            _ => None,
        }
    }

    /// Sends a request; its response (the messages before it are kept in
    /// `seen`).
    pub(super) async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        self.response(id).await
    }

    async fn response(&mut self, id: i64) -> Value {
        loop {
            let message = self.next_message().await;
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
        }
    }

    /// Waits for an update matching `ok`.
    async fn update(&mut self, ok: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.next_message().await;
            if message["method"] == "session/update" && ok(&message["params"]["update"]) {
                return message["params"]["update"].clone();
            }
        }
    }

    pub(super) async fn open(&mut self, cwd: &Path) -> String {
        self.open_with(cwd, json!({})).await
    }

    async fn open_with(&mut self, cwd: &Path, capabilities: Value) -> String {
        let init = self
            .call(
                "initialize",
                json!({ "protocolVersion": 1, "clientCapabilities": capabilities }),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], 1);
        assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);
        let new = self.call("session/new", json!({ "cwd": cwd, "mcpServers": [] })).await;
        new["result"]["sessionId"].as_str().unwrap().to_owned()
    }

    /// The updates received so far, by kind.
    pub(super) fn updates(&self) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"]["update"].clone())
            .collect()
    }
}

pub(super) fn prompt(session: &str, text: &str) -> Value {
    json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] })
}

/// A turn with an edit the client allows: the tool call goes pending, in
/// progress, completed, with a diff; the text streams; the stop reason is
/// `end_turn`; every message is valid ACP.
async fn a_prompt_turn_with_a_permission_and_a_diff(transport: Transport) {
    let setup = Setup::new().await;
    std::fs::write(setup.work.path().join("lib.rs"), "let a = 1;\n").unwrap();
    let mut agent = Agent::through(transport, &setup, &[KEY]).await;
    let session = agent.open(setup.work.path()).await;
    // The edit tool edits what was read.
    agent
        .call(
            "session/prompt",
            prompt(&session, r#"call read_file {"path": "lib.rs"}"#),
        )
        .await;
    agent.seen.clear();
    let edit = json!({"path": "lib.rs", "old_string": "let a = 1;", "new_string": "let a = 2;"});
    agent.permission = "allow_always";
    let done = agent
        .call("session/prompt", prompt(&session, &format!("call edit {edit}")))
        .await;
    assert_eq!(done["result"], json!({ "stopReason": "end_turn" }));
    assert_eq!(
        std::fs::read_to_string(setup.work.path().join("lib.rs")).unwrap(),
        "let a = 2;\n"
    );
    let asked: Vec<&Value> = agent
        .seen
        .iter()
        .filter(|m| m["method"] == "session/request_permission")
        .collect();
    assert_eq!(asked.len(), 1);
    let kinds: Vec<&str> = asked[0]["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once", "reject_always"]);
    let calls: Vec<Value> = agent
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" || u["sessionUpdate"] == "tool_call_update")
        .collect();
    let path = setup.work.path().join("lib.rs").to_string_lossy().into_owned();
    assert_eq!(
        calls,
        [
            json!({"sessionUpdate": "tool_call", "toolCallId": "toolu_5", "title": "Edit lib.rs", "kind": "edit", "status": "pending", "locations": [{"path": path}], "rawInput": edit}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "toolu_5", "status": "in_progress"}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "toolu_5", "status": "completed", "content": [{"type": "diff", "path": path, "oldText": "let a = 1;", "newText": "let a = 2;"}]}),
        ]
    );
    let text: String = agent
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(text, "Tool done.");
    // `always`: the same edit is not asked again.
    let before = agent.seen.len();
    agent
        .call("session/prompt", prompt(&session, &format!("call edit {edit}")))
        .await;
    assert!(
        !agent.seen[before..]
            .iter()
            .any(|m| m["method"] == "session/request_permission")
    );
}

/// `todowrite` becomes a plan; `session/set_mode` reports the mode.
async fn a_plan_and_the_modes(transport: Transport) {
    let setup = Setup::new().await;
    let mut agent = Agent::through(transport, &setup, &[KEY]).await;
    let session = agent.open(setup.work.path()).await;
    let set = agent
        .call("session/set_mode", json!({ "sessionId": session, "modeId": "yolo" }))
        .await;
    assert_eq!(set["result"], json!({}));
    assert!(
        agent
            .updates()
            .contains(&json!({"sessionUpdate": "current_mode_update", "currentModeId": "yolo"}))
    );
    let todos = json!({"todos": [
        {"content": "Read the parser", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress"},
    ]});
    agent
        .call("session/prompt", prompt(&session, &format!("call todowrite {todos}")))
        .await;
    let plan = agent
        .updates()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "plan")
        .unwrap();
    assert_eq!(
        plan,
        json!({"sessionUpdate": "plan", "entries": [
            {"content": "Read the parser", "priority": "medium", "status": "completed"},
            {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
        ]})
    );
    assert!(
        !agent.seen.iter().any(|m| m["method"] == "session/request_permission"),
        "yolo asks nothing"
    );
}

/// Bad input gets the protocol's error shape, and the process keeps
/// serving.
async fn bad_input_gets_errors_and_the_agent_goes_on(transport: Transport) {
    let setup = Setup::new().await;
    let mut agent = Agent::through(transport, &setup, &[KEY]).await;
    agent.raw("{not json").await;
    let parse = agent.next_message().await;
    assert_eq!(parse["error"]["code"], -32700);
    assert_eq!(parse["id"], Value::Null);
    let unknown = agent.call("session/fly", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);
    let wrong = agent.call("session/new", json!({ "cwd": 5, "mcpServers": [] })).await;
    assert_eq!(wrong["error"]["code"], -32602);
    let relative = agent
        .call("session/new", json!({ "cwd": "not/absolute", "mcpServers": [] }))
        .await;
    assert_eq!(relative["error"]["code"], -32602);
    let nobody = agent.call("session/prompt", prompt("no-such-session", "hi")).await;
    assert_eq!(nobody["error"]["code"], -32002);
    let missing = agent
        .call(
            "session/load",
            json!({ "sessionId": "never-made", "cwd": setup.work.path(), "mcpServers": [] }),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32002);
    // Still serving.
    let session = agent.open(setup.work.path()).await;
    let done = agent.call("session/prompt", prompt(&session, "hello")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn");
}

/// A yolo agent with a session whose prompt runs a command that says it
/// started (through a FIFO), then sleeps: the agent, the session and the
/// prompt's request id, once the command runs.
async fn running_command(setup: &Setup, transport: Transport) -> (Agent, String, i64) {
    let gate = super::started_fifo(setup.work.path());
    let mut agent = Agent::through(transport, setup, &[KEY, ("ZIDANE_APPROVE", "yolo")]).await;
    let session = agent.open(setup.work.path()).await;
    let command = json!({"command": format!("echo started > {} && sleep 600", gate.display())});
    let id = agent.next;
    agent.next += 1;
    agent
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": prompt(&session, &format!("call shell {command}"))}))
        .await;
    agent
        .update(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "in_progress")
        .await;
    assert_eq!(tokio::fs::read_to_string(&gate).await.unwrap().trim(), "started");
    (agent, session, id)
}

/// `session/cancel` stops a running command: the turn ends `cancelled`, a
/// second prompt meanwhile is refused, and the next prompt continues the
/// session with the cut-off call answered.
/// (Served, the prompt meanwhile steers the run instead.)
async fn cancel_stops_the_turn_and_the_session_goes_on(transport: Transport) {
    let setup = Setup::new().await;
    let (mut agent, session, id) = running_command(&setup, transport).await;
    let busy = agent.call("session/prompt", prompt(&session, "meanwhile")).await;
    match transport {
        Transport::Stdio => assert_eq!(busy["error"]["code"], -32602, "{busy}"),
        Transport::Served => assert_eq!(busy["result"]["_meta"]["zidane"]["steered"], true, "{busy}"),
    }
    agent
        .send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}))
        .await;
    let stopped = agent.response(id).await;
    assert_eq!(stopped["result"], json!({ "stopReason": "cancelled" }));
    let next = agent.call("session/prompt", prompt(&session, "what now?")).await;
    assert_eq!(next["result"]["stopReason"], "end_turn");
    let last = setup.last_body();
    assert!(last.contains("sleep 600") && last.contains("tool_result"), "{last}");
}

/// `kill -9` of `zidane acp` mid-prompt, then `session/load` in a new
/// process: the conversation is replayed, the interrupted run continues
/// (the cut-off command reported to the model as interrupted, not run
/// again), and the session takes the next prompt.
#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_prompt_then_loaded_in_a_new_process() {
    let setup = Setup::new().await;
    let (mut agent, session, _) = running_command(&setup, Transport::Stdio).await;
    let pid = agent.child.id().unwrap();
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    agent.child.wait().await.unwrap();
    assert_eq!(setup.bodies.lock().unwrap().len(), 1);

    let mut agent = Agent::start(&setup, &[KEY, ("ZIDANE_APPROVE", "yolo")]);
    agent
        .call("initialize", json!({ "protocolVersion": 1, "clientCapabilities": {} }))
        .await;
    let loaded = agent
        .call(
            "session/load",
            json!({ "sessionId": session, "cwd": setup.work.path(), "mcpServers": [] }),
        )
        .await;
    assert!(loaded.get("result").is_some(), "{loaded}");
    let updates = agent.updates();
    assert!(updates.iter().any(|u| {
        u["sessionUpdate"] == "user_message_chunk"
            && u["content"]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("call shell"))
    }));
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "agent_message_chunk" && u["content"]["text"] == "Tool done."),
        "the interrupted run finished during the load: {updates:?}"
    );
    let last = setup.last_body();
    assert!(last.contains("this call was interrupted"), "{last}");
    assert_eq!(
        setup.bodies.lock().unwrap().len(),
        2,
        "the model was asked once more, not twice"
    );
    let next = agent.call("session/prompt", prompt(&session, "and then?")).await;
    assert_eq!(next["result"]["stopReason"], "end_turn");
}

/// A client that goes away mid-turn: the process ends cleanly and the turn
/// stays resumable.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_disconnects_mid_turn() {
    let setup = Setup::new().await;
    let (agent, _, _) = running_command(&setup, Transport::Stdio).await;
    let Agent { mut child, stdin, .. } = agent;
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("zidane acp did not end after its client left")
        .unwrap();
    assert!(status.success());
    let out = super::zidane(setup.home.path(), setup.work.path(), &[], &["--list-sessions"]).await;
    assert!(text(&out.stdout).contains("[interrupted"), "{}", text(&out.stdout));
}

/// The official TypeScript client (`@agentclientprotocol/sdk`, pinned)
/// drives the binary: initialize, a new session, a prompt whose call asks
/// permission (answered allow always), a diff, a plan, a cancel, and the
/// session loaded in a second process.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_client_drives_the_agent() {
    let setup = Setup::new().await;
    std::fs::write(setup.work.path().join("lib.rs"), "let a = 1;\n").unwrap();
    let report = official_client(&setup, &[]).await;
    assert_eq!(report["permission"], "allow_always", "{report}");
    assert_eq!(
        report["stops"],
        json!(["end_turn", "end_turn", "cancelled"]),
        "{report}"
    );
    assert_eq!(report["diff"]["newText"], "let a = 2;", "{report}");
    assert_eq!(report["plan"], 2, "{report}");
    assert!(report["replayed"].as_u64().unwrap() >= 4, "{report}");
    assert_eq!(report["afterLoad"], "end_turn", "{report}");
}

/// `tests/acp/client.mjs` on the official SDK, with `env` (`SERVE_URL`
/// and `SERVE_TOKEN`: over a WebSocket to that server): its report.
pub(super) async fn official_client(setup: &Setup, env: &[(&str, &str)]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.mjs");
    let mut node = tokio::process::Command::new("node");
    node.arg("--experimental-websocket")
        .arg(&script)
        .env("ACP_SDK", sdk().join("dist/v1/stable/acp.js"))
        .env("ZIDANE_BIN", env!("CARGO_BIN_EXE_zidane"))
        .env("ZIDANE_HOME", setup.home.path())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("BASE_URL", &setup.url)
        .env("WORK", setup.work.path());
    for (k, v) in env {
        node.env(k, v);
    }
    let out = tokio::time::timeout(Duration::from_secs(120), node.output())
        .await
        .expect("the client did not finish within 120 s")
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {}", text(&out.stderr));
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

/// Slash commands are advertised and answered: `/model` switches the next
/// turns' model, `/cost` tells the session's tokens, `/lsp` lists the
/// language servers.
async fn slash_commands_over_acp(transport: Transport) {
    let setup = Setup::new().await;
    let mut agent = Agent::through(transport, &setup, &[KEY]).await;
    let session = agent.open(setup.work.path()).await;
    let advertised = agent
        .updates()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "available_commands_update")
        .unwrap();
    let names: Vec<&str> = advertised["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "compact", "model", "context", "cost", "skills", "tasks", "review", "goal", "lsp", "diff", "memory"
        ]
    );
    agent.call("session/prompt", prompt(&session, "hello")).await;
    agent.seen.clear();
    let switched = agent
        .call("session/prompt", prompt(&session, "/model claude-haiku-4-5"))
        .await;
    assert_eq!(switched["result"]["stopReason"], "end_turn");
    let answer: String = agent
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(answer.starts_with("The next turns use claude-haiku-4-5"), "{answer}");
    agent.call("session/prompt", prompt(&session, "again")).await;
    let last: Value = serde_json::from_str(&setup.last_body()).unwrap();
    assert_eq!(last["model"], "claude-haiku-4-5");
    agent.seen.clear();
    agent.call("session/prompt", prompt(&session, "/cost")).await;
    let cost: String = agent
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(cost.starts_with("This session: "), "{cost}");
    agent.seen.clear();
    agent
        .call("session/prompt", prompt(&session, "/memory project always use pnpm"))
        .await;
    let remembered = std::fs::read_to_string(setup.work.path().join("AGENTS.md")).unwrap();
    assert!(remembered.contains("- always use pnpm"), "{remembered}");
    agent.call("session/prompt", prompt(&session, "/diff")).await;
    let diff: String = agent
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(diff.contains("No changes yet.") || diff.contains("```diff"), "{diff}");
    // A Python file: the folder calls for the Python servers.
    std::fs::write(setup.work.path().join("app.py"), "x = 1\n").unwrap();
    agent.seen.clear();
    agent.call("session/prompt", prompt(&session, "/lsp")).await;
    let lsp: String = agent
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(lsp.contains("- pyright: "), "{lsp}");
    assert!(lsp.contains("(python)"), "{lsp}");
    assert!(
        lsp.ends_with("after edits and commands: 0 diagnostics reported, 0 fixed"),
        "{lsp}"
    );
}

/// A client that offers its file system: the agent reads the editor's
/// unsaved buffer, not the disk, and its writes go to the editor.
#[tokio::test(flavor = "multi_thread")]
async fn the_clients_files_are_read_and_written_through_it() {
    let setup = Setup::new().await;
    let file = setup.work.path().join("notes.txt");
    std::fs::write(&file, "on disk\n").unwrap();
    let mut agent = Agent::start(&setup, &[KEY, ("ZIDANE_APPROVE", "yolo")]);
    let key = file.to_string_lossy().into_owned();
    agent.buffers.insert(key.clone(), "unsaved in the editor\n".to_owned());
    let session = agent
        .open_with(
            setup.work.path(),
            json!({ "fs": { "readTextFile": true, "writeTextFile": true } }),
        )
        .await;
    agent
        .call(
            "session/prompt",
            prompt(&session, r#"call read_file {"path": "notes.txt"}"#),
        )
        .await;
    let read = setup.last_body();
    assert!(
        read.contains("unsaved in the editor") && !read.contains("on disk"),
        "{read}"
    );
    agent
        .call(
            "session/prompt",
            prompt(
                &session,
                r#"call write_file {"path": "notes.txt", "content": "from the agent\n"}"#,
            ),
        )
        .await;
    assert_eq!(agent.buffers[&key], "from the agent\n");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "on disk\n",
        "the editor saves, not the agent"
    );
}

/// A client that offers terminals: `shell` runs in one, the tool call
/// embeds it, and the model reads what it printed.
#[tokio::test(flavor = "multi_thread")]
async fn commands_run_in_the_clients_terminal() {
    let setup = Setup::new().await;
    let mut agent = Agent::start(&setup, &[KEY, ("ZIDANE_APPROVE", "yolo")]);
    let session = agent.open_with(setup.work.path(), json!({ "terminal": true })).await;
    let done = agent
        .call(
            "session/prompt",
            prompt(&session, r#"call shell {"command": "echo from the editor terminal"}"#),
        )
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn");
    assert!(agent.seen.iter().any(|m| m["method"] == "terminal/create"));
    let embedded: Vec<Value> = agent
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["content"][0]["type"] == "terminal")
        .collect();
    assert_eq!(embedded.len(), 2, "while it runs and when it ends: {embedded:?}");
    assert_eq!(embedded[1]["status"], "completed", "{embedded:?}");
    let body = setup.last_body();
    assert!(body.contains("from the editor terminal"), "{body}");
}

/// `session/list` gives the folder's sessions; `session/close` ends one
/// and `session/resume` opens it again without replaying it.
async fn sessions_listed_closed_and_resumed(transport: Transport) {
    let setup = Setup::new().await;
    let mut agent = Agent::through(transport, &setup, &[KEY]).await;
    let session = agent.open(setup.work.path()).await;
    agent.call("session/prompt", prompt(&session, "first words")).await;
    let listed = agent.call("session/list", json!({ "cwd": setup.work.path() })).await;
    let sessions = listed["result"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    assert_eq!(sessions[0]["sessionId"], json!(session));
    assert_eq!(sessions[0]["title"], "first words");
    assert!(sessions[0]["updatedAt"].as_str().unwrap().ends_with('Z'));
    let elsewhere = agent.call("session/list", json!({ "cwd": "/nowhere" })).await;
    assert_eq!(elsewhere["result"]["sessions"], json!([]));
    let closed = agent.call("session/close", json!({ "sessionId": session })).await;
    assert_eq!(closed["result"], json!({}));
    let gone = agent.call("session/prompt", prompt(&session, "hello?")).await;
    assert_eq!(gone["error"]["code"], -32002);
    agent.seen.clear();
    let resumed = agent
        .call(
            "session/resume",
            json!({ "sessionId": session, "cwd": setup.work.path(), "mcpServers": [] }),
        )
        .await;
    assert!(resumed.get("result").is_some(), "{resumed}");
    assert!(
        !agent
            .updates()
            .iter()
            .any(|u| u["sessionUpdate"] == "user_message_chunk"),
        "not replayed"
    );
    let next = agent.call("session/prompt", prompt(&session, "second words")).await;
    assert_eq!(next["result"]["stopReason"], "end_turn");
    assert!(setup.last_body().contains("Answer: first words"));
    let deleted = agent.call("session/delete", json!({ "sessionId": session })).await;
    assert_eq!(deleted["result"], json!({}));
    let listed = agent.call("session/list", json!({})).await;
    assert_eq!(listed["result"]["sessions"], json!([]));
    let again = agent
        .call(
            "session/load",
            json!({ "sessionId": session, "cwd": setup.work.path(), "mcpServers": [] }),
        )
        .await;
    assert_eq!(again["error"]["code"], -32002);
}

/// The client's own MCP server (stdio), and its form asked of the client
/// as `elicitation/create`: what the client answers reaches the server.
#[tokio::test(flavor = "multi_thread")]
async fn the_clients_mcp_server_and_its_form() {
    let setup = Setup::new().await;
    let mut agent = Agent::start(&setup, &[KEY, ("ZIDANE_APPROVE", "yolo")]);
    let init = agent
        .call(
            "initialize",
            json!({ "protocolVersion": 1, "clientCapabilities": { "elicitation": { "form": {} } } }),
        )
        .await;
    assert!(init.get("result").is_some());
    let servers = json!([{ "name": "everything", "command": super::conventions::everything(), "args": [], "env": [] }]);
    let new = agent
        .call(
            "session/new",
            json!({ "cwd": setup.work.path(), "mcpServers": servers }),
        )
        .await;
    let session = new["result"]["sessionId"].as_str().unwrap().to_owned();
    let done = agent
        .call(
            "session/prompt",
            prompt(&session, "call mcp_everything_trigger-elicitation-request {}"),
        )
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn");
    let asked: Vec<&Value> = agent
        .seen
        .iter()
        .filter(|m| m["method"] == "elicitation/create")
        .collect();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["params"]["mode"], "form");
    let body = setup.last_body();
    assert!(body.contains("Ada Lovelace"), "{body}");
}
