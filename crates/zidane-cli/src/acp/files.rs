//! The ACP client's files: when the client offers `fs.readTextFile` /
//! `fs.writeTextFile`, the agent's file tools read and write through it
//! (the editor's unsaved buffers are what the agent reads; its edits land
//! in open buffers). An execution context around the local one: the rest —
//! commands, listings, background tasks — stays on this machine, sandboxed.

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use serde_json::json;
use zidane::providers::BoxFuture;
use zidane::tools::{
    BackgroundChunk, BackgroundOptions, BackgroundOwner, BackgroundTask, DirEntry, ExecOptions, ExecOutput,
    ExecutionContext, ExecutionError, ExecutionHandle, FileStat,
};

use super::Server;

type SharedError = zidane::agent::events::SharedError;

/// Files through the client, the rest through `inner`.
pub(super) struct ClientFiles {
    pub(super) inner: Arc<dyn ExecutionContext>,
    pub(super) cwd: PathBuf,
    pub(super) server: Weak<Server>,
    pub(super) session: String,
    pub(super) read: bool,
    pub(super) write: bool,
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
        self.inner.exec(handle, command, options)
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
