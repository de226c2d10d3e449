//! One running language server: its process, the requests in flight, and
//! the diagnostics it published.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use lsp_types::{ServerCapabilities, Uri};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin};
use tokio::sync::{oneshot, watch};

use crate::config::ServerConfig;
use crate::error::LspError;
use crate::framing;

/// Starts a server's process (the agent's sandbox gives one that confines
/// it as its commands are; unset, a plain child).
pub type Launcher = Arc<dyn Fn(tokio::process::Command) -> std::io::Result<Child> + Send + Sync>;

/// The silence after a start that says the server is ready.
const START_QUIET: Duration = Duration::from_millis(600);

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, (i64, String)>>>>>;

/// What a server published for one document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Published {
    /// How many times it published for the document.
    pub(crate) count: u64,
    /// The document version it said the list is for, when it says.
    pub(crate) version: Option<i32>,
    /// The list.
    pub(crate) diagnostics: Vec<lsp_types::Diagnostic>,
}

/// A started, initialized server.
pub(crate) struct Client {
    name: String,
    /// Shared with the reader, which answers the server's requests.
    stdin: Arc<tokio::sync::Mutex<ChildStdin>>,
    pending: Pending,
    next_id: AtomicI64,
    alive: Arc<AtomicBool>,
    child: Mutex<Option<Child>>,
    pub(crate) published: Arc<Mutex<HashMap<String, Published>>>,
    /// Ticks on every message (and when the server exits).
    pub(crate) changes: watch::Receiver<u64>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) pid: Option<u32>,
}

impl Client {
    /// Starts `config`'s program for `root` and runs `initialize`, each
    /// request bounded by `timeout`.
    pub(crate) async fn start(
        config: &ServerConfig,
        program: &Path,
        root: &Path,
        launcher: Option<&Launcher>,
        timeout: Duration,
    ) -> Result<Client, LspError> {
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(&config.args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        // A server runs as the agent's commands do: without the variables
        // that hold credentials.
        for (name, value) in std::env::vars_os() {
            if let (Some(n), Some(v)) = (name.to_str(), value.to_str())
                && zidane_core::credentials::is_secret_var(n, v)
            {
                cmd.env_remove(&name);
            }
        }
        let spawned = match launcher {
            Some(launch) => launch(cmd),
            None => cmd.spawn(),
        };
        let mut child = spawned.map_err(|source| LspError::Spawn {
            command: config.command.clone(),
            source,
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(LspError::Protocol("the server's pipes were not opened".into()));
        };
        let pid = child.id();
        let stdin = Arc::new(tokio::sync::Mutex::new(stdin));
        let pending: Pending = Arc::default();
        let published: Arc<Mutex<HashMap<String, Published>>> = Arc::default();
        let alive = Arc::new(AtomicBool::new(true));
        let (tick, changes) = watch::channel(0u64);
        tokio::spawn(read_loop(
            tokio::io::BufReader::new(stdout),
            Arc::clone(&stdin),
            Arc::clone(&pending),
            Arc::clone(&published),
            Arc::clone(&alive),
            tick,
        ));
        let mut client = Client {
            name: config.name.clone(),
            stdin,
            pending,
            next_id: AtomicI64::new(1),
            alive,
            child: Mutex::new(Some(child)),
            published,
            changes,
            capabilities: ServerCapabilities::default(),
            pid,
        };
        let init = client.request_raw("initialize", initialize_params(root), timeout).await;
        let init = match init {
            Ok(v) => v,
            Err(e) => {
                client.kill();
                return Err(e);
            }
        };
        let result: lsp_types::InitializeResult = serde_json::from_value(init)
            .map_err(|e| LspError::Protocol(format!("an initialize result that does not parse: {e}")))?;
        client.capabilities = result.capabilities;
        client.notify_raw("initialized", json!({})).await?;
        // Some servers (pyright) read their settings and enumerate the
        // folder only once told the settings changed.
        client
            .notify_raw("workspace/didChangeConfiguration", json!({"settings": {}}))
            .await?;
        client.quiet_after_start(timeout).await;
        Ok(client)
    }

    /// Waits (at most a tenth of `timeout`) for the server to stop talking
    /// after its start: servers read their settings and list the folder's
    /// files then, and a question asked meanwhile sees an empty project.
    async fn quiet_after_start(&self, timeout: Duration) {
        let deadline = tokio::time::Instant::now() + timeout / 10;
        let mut changes = self.changes.clone();
        loop {
            let spell = tokio::time::Instant::now() + START_QUIET;
            match tokio::time::timeout_at(spell.min(deadline), changes.changed()).await {
                Ok(Ok(())) if tokio::time::Instant::now() < deadline => {}
                _ => return,
            }
        }
    }

    /// Whether the process still answers (its output is open).
    pub(crate) fn is_alive(&self) -> bool {
        if !self.alive.load(Ordering::SeqCst) {
            return false;
        }
        // An ended process may not have closed its output for the reader
        // yet.
        let exited = self
            .child
            .lock()
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(Some(_))));
        if exited {
            self.alive.store(false, Ordering::SeqCst);
        }
        !exited
    }

    /// Sends a request and waits at most `timeout` for its answer.
    pub(crate) async fn request_raw(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, LspError> {
        if !self.is_alive() {
            return Err(LspError::Exited(self.name.clone()));
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id, tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(e) = self.write(&message).await {
            self.pending.lock().remove(&id);
            return Err(e);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err((code, message)))) => Err(LspError::Rpc {
                method: method.to_owned(),
                code,
                message,
            }),
            Ok(Err(_)) => Err(LspError::Exited(self.name.clone())),
            Err(_) => {
                self.pending.lock().remove(&id);
                // Tell the server the answer is no longer wanted.
                let _ = self.notify_raw("$/cancelRequest", json!({"id": id})).await;
                Err(LspError::Timeout {
                    method: method.to_owned(),
                    after: timeout,
                })
            }
        }
    }

    /// A typed request.
    pub(crate) async fn request<R: lsp_types::request::Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result, LspError> {
        let params = serde_json::to_value(params).map_err(|e| LspError::Protocol(e.to_string()))?;
        let value = self.request_raw(R::METHOD, params, timeout).await?;
        serde_json::from_value(value)
            .map_err(|e| LspError::Protocol(format!("an answer to {} that does not parse: {e}", R::METHOD)))
    }

    /// Sends a notification.
    pub(crate) async fn notify_raw(&self, method: &str, params: Value) -> Result<(), LspError> {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    /// A typed notification.
    pub(crate) async fn notify<N: lsp_types::notification::Notification>(
        &self,
        params: N::Params,
    ) -> Result<(), LspError> {
        let params = serde_json::to_value(params).map_err(|e| LspError::Protocol(e.to_string()))?;
        self.notify_raw(N::METHOD, params).await
    }

    async fn write(&self, message: &Value) -> Result<(), LspError> {
        tracing::trace!(
            "to the language server: {}",
            message
                .get("method")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("(answer)")
        );
        let bytes = framing::encode(message);
        let mut stdin = self.stdin.lock().await;
        let written = async {
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        };
        written.await.map_err(|e| {
            self.alive.store(false, Ordering::SeqCst);
            LspError::Io(e)
        })
    }

    /// What the server last published for `uri`.
    pub(crate) fn published(&self, uri: &Uri) -> Published {
        self.published.lock().get(uri.as_str()).cloned().unwrap_or_default()
    }

    /// `shutdown` and `exit`, each bounded; a server that does not go is
    /// killed.
    pub(crate) async fn shutdown(&self, timeout: Duration) {
        if self.is_alive() {
            let _ = self.request_raw("shutdown", Value::Null, timeout).await;
            let _ = self.notify_raw("exit", Value::Null).await;
        }
        let child = self.child.lock().take();
        if let Some(mut child) = child
            && tokio::time::timeout(timeout, child.wait()).await.is_err()
        {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
        self.alive.store(false, Ordering::SeqCst);
    }

    /// Kills the process at once.
    pub(crate) fn kill(&self) {
        if let Some(mut child) = self.child.lock().take() {
            let _ = child.start_kill();
        }
        self.alive.store(false, Ordering::SeqCst);
    }
}

/// Reads the server's messages until its output closes: answers go to
/// their requests, diagnostics into `published`, the server's own requests
/// get a neutral answer.
async fn read_loop(
    mut reader: tokio::io::BufReader<tokio::process::ChildStdout>,
    stdin: Arc<tokio::sync::Mutex<ChildStdin>>,
    pending: Pending,
    published: Arc<Mutex<HashMap<String, Published>>>,
    alive: Arc<AtomicBool>,
    tick: watch::Sender<u64>,
) {
    loop {
        let message = match framing::read(&mut reader).await {
            Ok(Some(m)) => m,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!(error = %e, "language server output unreadable; the server is dropped");
                break;
            }
        };
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|id| !id.is_null());
        tracing::trace!(
            "from the language server: {} {}",
            method.unwrap_or("(answer)"),
            message
                .get("params")
                .and_then(|p| p.get("version"))
                .map(ToString::to_string)
                .unwrap_or_default()
        );
        tick.send_modify(|n| *n += 1);
        match (method, id) {
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else { continue };
                let Some(tx) = pending.lock().remove(&id) else { continue };
                let answer = match message.get("error") {
                    Some(error) => Err((
                        error.get("code").and_then(Value::as_i64).unwrap_or(0),
                        error.get("message").and_then(Value::as_str).unwrap_or("").to_owned(),
                    )),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = tx.send(answer);
            }
            (Some(method), Some(id)) => {
                let reply = server_request_answer(method, message.get("params"), id.clone());
                let bytes = framing::encode(&reply);
                let mut out = stdin.lock().await;
                if out.write_all(&bytes).await.is_err() || out.flush().await.is_err() {
                    break;
                }
            }
            (Some("textDocument/publishDiagnostics"), None) => {
                let Some(params) = message.get("params").cloned() else {
                    continue;
                };
                let Ok(params) = serde_json::from_value::<lsp_types::PublishDiagnosticsParams>(params) else {
                    continue;
                };
                {
                    let mut map = published.lock();
                    let entry = map.entry(params.uri.as_str().to_owned()).or_default();
                    entry.count += 1;
                    entry.version = params.version;
                    entry.diagnostics = params.diagnostics;
                }
                // Waiters woke at the message's arrival; the list is
                // there only now.
                tick.send_modify(|n| *n += 1);
            }
            _ => {}
        }
    }
    alive.store(false, Ordering::SeqCst);
    // Whoever waits for an answer learns the server is gone.
    pending.lock().clear();
    tick.send_modify(|n| *n += 1);
}

/// The answer to a request the server sends the client.
fn server_request_answer(method: &str, params: Option<&Value>, id: Value) -> Value {
    let result = match method {
        // One null setting per item asked: the server's defaults.
        "workspace/configuration" => {
            let n = params
                .and_then(|p| p.get("items"))
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            Value::Array(vec![Value::Null; n])
        }
        "client/registerCapability"
        | "client/unregisterCapability"
        | "window/workDoneProgress/create"
        | "workspace/diagnostic/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/codeLens/refresh" => Value::Null,
        "window/showMessageRequest" => Value::Null,
        "workspace/workspaceFolders" => Value::Null,
        _ => {
            return json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("{method} is not supported")}});
        }
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// `initialize`'s parameters: the folder, and what this client takes.
fn initialize_params(root: &Path) -> Value {
    let uri = crate::uri::from_path(root);
    let name = root.file_name().and_then(|n| n.to_str()).unwrap_or("workspace");
    json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "zidane"},
        "rootUri": uri.as_str(),
        "rootPath": root.display().to_string(),
        "workspaceFolders": [{"uri": uri.as_str(), "name": name}],
        "capabilities": {
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "symbol": {"dynamicRegistration": false}
            },
            "textDocument": {
                "synchronization": {"dynamicRegistration": false, "didSave": true},
                "publishDiagnostics": {"relatedInformation": false, "versionSupport": true},
                "diagnostic": {"dynamicRegistration": false, "relatedDocumentSupport": false},
                "definition": {"linkSupport": false},
                "references": {},
                "hover": {"contentFormat": ["plaintext", "markdown"]},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true}
            },
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": true}
        }
    })
}
