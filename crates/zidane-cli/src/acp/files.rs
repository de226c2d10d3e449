//! The ACP client's files and terminals: when the client offers
//! `fs.readTextFile` / `fs.writeTextFile`, the agent's file tools read and
//! write through it (the editor's unsaved buffers are what the agent reads;
//! its edits land in open buffers); when it offers `terminal`, `shell` runs
//! in the client's terminal (`terminal/create`, `wait_for_exit`, `output`,
//! `kill`, `release`), embedded in the tool call. An execution context
//! around the local one: the rest — listings, searches, background tasks —
//! stays on this machine, sandboxed.

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use serde_json::json;
use zidane::providers::BoxFuture;
use zidane::tools::{
    BackgroundChunk, BackgroundOptions, BackgroundOwner, BackgroundTask, DirEntry, ExecOptions, ExecOutput,
    ExecutionContext, ExecutionError, ExecutionHandle, FileStat,
};

use super::Connection;

type SharedError = zidane::agent::events::SharedError;

/// Files through the client, the rest through `inner`.
pub(super) struct ClientFiles {
    pub(super) inner: Arc<dyn ExecutionContext>,
    pub(super) cwd: PathBuf,
    pub(super) server: Weak<Connection>,
    pub(super) session: String,
    pub(super) read: bool,
    pub(super) write: bool,
    pub(super) terminal: bool,
    /// The `shell` calls about to run: the command and the call's id (what
    /// a terminal is embedded in).
    pub(super) calls: zidane_app::ShellCalls,
    /// The terminal each call ran in, for its last update.
    pub(super) terminals: Arc<parking_lot::Mutex<std::collections::HashMap<String, String>>>,
}

/// Files the client's text interface cannot carry: read and written here.
fn binary(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [
        ".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf", ".zip", ".gz", ".tar", ".wasm",
    ]
    .iter()
    .any(|ext| lower.ends_with(ext))
}

impl ClientFiles {
    /// The absolute path of `path` inside the working folder (refused when
    /// it leaves it).
    fn absolute(&self, handle: &ExecutionHandle, path: &str) -> Result<String, SharedError> {
        let key = self.inner.resolve_path(handle, path)?;
        Ok(self.cwd.join(key).to_string_lossy().into_owned())
    }

    fn failed(path: &str, what: &str) -> SharedError {
        Arc::new(ExecutionError::Io {
            message: format!("cannot write `{path}`"),
            source: std::io::Error::other(what.to_owned()),
        })
    }
}

impl ClientFiles {
    /// Runs `command` in a terminal of the client, embedded in its call,
    /// bounded by the call's timeout and abort.
    async fn in_terminal(
        &self,
        server: &Connection,
        handle: &ExecutionHandle,
        command: &str,
        options: ExecOptions,
    ) -> Result<ExecOutput, SharedError> {
        let cwd = match &options.cwd {
            Some(dir) => self.absolute(handle, dir)?,
            None => self.cwd.to_string_lossy().into_owned(),
        };
        let params = json!({
            "sessionId": self.session,
            "command": "sh",
            "args": ["-c", command],
            "cwd": cwd,
            "outputByteLimit": options.max_output_bytes,
        });
        let Some(id) = server
            .request("terminal/create", params)
            .await
            .and_then(|r| r["terminalId"].as_str().map(str::to_owned))
        else {
            return Err(Self::failed(command, "the editor did not open a terminal"));
        };
        let call = self.calls.take(command);
        if let Some(call) = &call {
            self.terminals.lock().insert(call.clone(), id.clone());
            server.notify(
                &self.session,
                json!({
                    "sessionUpdate": "tool_call_update", "toolCallId": call,
                    "content": [{ "type": "terminal", "terminalId": id }],
                }),
            );
        }
        let terminal = json!({ "sessionId": self.session, "terminalId": id });
        let timeout = options.timeout.unwrap_or(std::time::Duration::MAX);
        let (mut timed_out, mut aborted) = (false, false);
        tokio::select! {
            _ = server.request("terminal/wait_for_exit", terminal.clone()) => {}
            () = tokio::time::sleep(timeout) => timed_out = true,
            () = options.signal.aborted() => aborted = true,
        }
        if timed_out || aborted {
            server.request("terminal/kill", terminal.clone()).await;
        }
        let output = server
            .request("terminal/output", terminal.clone())
            .await
            .unwrap_or_default();
        server.request("terminal/release", terminal).await;
        let status = &output["exitStatus"];
        Ok(ExecOutput {
            stdout: output["output"].as_str().unwrap_or_default().to_owned(),
            stderr: String::new(),
            exit_code: status["exitCode"].as_i64().and_then(|c| i32::try_from(c).ok()),
            timed_out,
            aborted,
        })
    }
}

impl ExecutionContext for ClientFiles {
    fn kind(&self) -> &str {
        self.inner.kind()
    }
    fn spawn(&self) -> BoxFuture<'_, Result<ExecutionHandle, SharedError>> {
        self.inner.spawn()
    }
    fn exec<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        command: &'a str,
        options: ExecOptions,
    ) -> BoxFuture<'a, Result<ExecOutput, SharedError>> {
        Box::pin(async move {
            match self.server.upgrade() {
                Some(server) if self.terminal => self.in_terminal(&server, handle, command, options).await,
                _ => self.inner.exec(handle, command, options).await,
            }
        })
    }
    fn read_file<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, SharedError>> {
        Box::pin(async move {
            let server = self.server.upgrade();
            let (Some(server), true, false) = (server, self.read, binary(path)) else {
                return self.inner.read_file(handle, path).await;
            };
            // A file the editor does not have is read here (its error is
            // the model's to read).
            if self.inner.stat(handle, path).await?.is_none() {
                return self.inner.read_file(handle, path).await;
            }
            let absolute = self.absolute(handle, path)?;
            let params = json!({ "sessionId": self.session, "path": absolute });
            match server.request("fs/read_text_file", params).await {
                Some(result) if result["content"].is_string() => {
                    Ok(result["content"].as_str().unwrap_or_default().as_bytes().to_vec())
                }
                _ => self.inner.read_file(handle, path).await,
            }
        })
    }
    fn write_file<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SharedError>> {
        Box::pin(async move {
            let server = self.server.upgrade();
            let text = std::str::from_utf8(bytes).ok();
            let (Some(server), true, Some(text)) = (server, self.write, text) else {
                return self.inner.write_file(handle, path, bytes).await;
            };
            if binary(path) {
                return self.inner.write_file(handle, path, bytes).await;
            }
            let absolute = self.absolute(handle, path)?;
            let params = json!({ "sessionId": self.session, "path": absolute, "content": text });
            match server.request("fs/write_text_file", params).await {
                Some(_) => Ok(()),
                None => Err(Self::failed(path, "the editor did not write the file")),
            }
        })
    }
    fn list<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<DirEntry>, SharedError>> {
        self.inner.list(handle, path)
    }
    fn stat<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Option<FileStat>, SharedError>> {
        self.inner.stat(handle, path)
    }
    fn resolve_path(&self, handle: &ExecutionHandle, path: &str) -> Result<String, SharedError> {
        self.inner.resolve_path(handle, path)
    }
    fn destroy<'a>(&'a self, handle: &'a ExecutionHandle) -> BoxFuture<'a, ()> {
        self.inner.destroy(handle)
    }
    fn keep_output<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        name: &'a str,
        text: &'a str,
    ) -> BoxFuture<'a, Option<String>> {
        self.inner.keep_output(handle, name, text)
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        self.inner.as_any()
    }
    fn exec_background<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        command: &'a str,
        options: BackgroundOptions,
    ) -> BoxFuture<'a, Result<BackgroundTask, SharedError>> {
        self.inner.exec_background(handle, command, options)
    }
    fn list_background<'a>(&'a self, handle: &'a ExecutionHandle) -> BoxFuture<'a, Vec<BackgroundTask>> {
        self.inner.list_background(handle)
    }
    fn kill_background<'a>(&'a self, handle: &'a ExecutionHandle, task_id: &'a str) -> BoxFuture<'a, bool> {
        self.inner.kill_background(handle, task_id)
    }
    fn read_background<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        task_id: &'a str,
        offset: u64,
        max: usize,
    ) -> BoxFuture<'a, Result<BackgroundChunk, SharedError>> {
        self.inner.read_background(handle, task_id, offset, max)
    }
    fn attach_background<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        task: &'a BackgroundTask,
        owner: BackgroundOwner,
    ) -> BoxFuture<'a, Option<BackgroundTask>> {
        self.inner.attach_background(handle, task, owner)
    }
    fn claim_background<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        task_id: &'a str,
        owner: BackgroundOwner,
    ) -> BoxFuture<'a, Option<BackgroundTask>> {
        self.inner.claim_background(handle, task_id, owner)
    }
}

/// Where a session's tools run when the client offers its files or
/// terminals: through it (`None` when it offers neither).
pub(super) fn wrap(
    client: &Arc<Connection>,
    session: &str,
    cwd: &std::path::Path,
    terminals: &Arc<parking_lot::Mutex<std::collections::HashMap<String, String>>>,
) -> Option<zidane_app::ExecutionWrap> {
    let capabilities = client.client.lock().clone();
    let (read, write, terminal) = (
        capabilities["fs"]["readTextFile"] == true,
        capabilities["fs"]["writeTextFile"] == true,
        capabilities["terminal"] == true,
    );
    if !(read || write || terminal) {
        return None;
    }
    let server = Arc::downgrade(client);
    let (session, cwd, terminals) = (session.to_owned(), cwd.to_owned(), Arc::clone(terminals));
    Some(Arc::new(move |inner, calls| {
        Arc::new(ClientFiles {
            inner,
            cwd: cwd.clone(),
            server: server.clone(),
            session: session.clone(),
            read,
            write,
            terminal,
            calls,
            terminals: Arc::clone(&terminals),
        }) as Arc<dyn ExecutionContext>
    }))
}
