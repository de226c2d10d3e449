//! The stdio transport: the server's process, its standard output filtered
//! line by line before the protocol reads it.
//!
//! A server that writes something other than JSON-RPC on standard output
//! before it answered the handshake (a banner, a log line, a crash trace)
//! fails at once as a protocol error that shows the line, instead of
//! waiting out the connection bound; later stray lines are reported as
//! `mcp:warn` and skipped. The process lives as long as the connection:
//! when the protocol side closes, the process is killed if it is still
//! running.

use parking_lot::Mutex;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, DuplexStream, ReadBuf};
use tokio::sync::oneshot;
use zidane_core::events::{McpWarn, McpWarnInit};
use zidane_hooks::HookBus;

use crate::error::McpError;

/// The first stray line, when the server wrote one before its first message.
pub(crate) type Garbage = Arc<Mutex<Option<String>>>;

/// The protocol's read side: the server's filtered output. Dropping it (the
/// connection closed) ends the process.
pub(crate) struct ServerOutput {
    inner: DuplexStream,
    _closed: oneshot::Sender<()>,
}

impl AsyncRead for ServerOutput {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

/// Starts `cmd` with piped standard streams; returns the protocol's read
/// and write sides, the garbage slot and the server's standard error.
pub(crate) fn spawn(
    mut cmd: tokio::process::Command,
    launcher: Option<&crate::config::Launcher>,
    what: &str,
    name: &str,
    hooks: &HookBus,
) -> Result<
    (
        ServerOutput,
        tokio::process::ChildStdin,
        Garbage,
        Option<tokio::process::ChildStderr>,
    ),
    McpError,
> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = match launcher {
        Some(launch) => launch(cmd),
        None => cmd.spawn(),
    };
    let mut child = child.map_err(|e| McpError::spawn(what.to_owned(), e))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(McpError::spawn_msg(format!("{what}: no standard streams")));
    };
    let stderr = child.stderr.take();
    let (reader, mut writer) = tokio::io::duplex(64 << 10);
    let (closed_tx, mut closed_rx) = oneshot::channel::<()>();
    let garbage: Garbage = Arc::default();
    let slot = Arc::clone(&garbage);
    let (hooks, name) = (hooks.clone(), name.to_owned());
    tokio::spawn(async move {
        // The child is owned here: it goes (killed if still running) when
        // this task ends.
        let _child = child;
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let mut answered = false;
        loop {
            let line = tokio::select! {
                biased;
                _ = &mut closed_rx => return,
                line = lines.next_line() => line,
            };
            let Ok(Some(line)) = line else { return };
            let trimmed = line.trim();
            if trimmed.is_empty() {
                continue;
            }
            if trimmed.starts_with('{') && serde_json::from_str::<serde_json::Value>(trimmed).is_ok() {
                answered = true;
                if writer.write_all(trimmed.as_bytes()).await.is_err() || writer.write_all(b"\n").await.is_err() {
                    return;
                }
                continue;
            }
            let shown: String = trimmed.chars().take(200).collect();
            if !answered {
                *slot.lock() = Some(shown);
                return; // the protocol side sees the end at once
            }
            let mut ev = McpWarn::new(McpWarnInit {
                message: format!("skipped a line on standard output that is not JSON-RPC: {shown}"),
                name: name.clone(),
            });
            hooks.observe(&mut ev).await;
        }
    });
    Ok((
        ServerOutput {
            inner: reader,
            _closed: closed_tx,
        },
        stdin,
        garbage,
        stderr,
    ))
}

/// The handshake's failure, named by the stray line when there was one.
pub(crate) fn explain(error: McpError, garbage: &Garbage) -> McpError {
    match garbage.lock().take() {
        Some(line) => McpError::protocol_msg(format!(
            "the server wrote something that is not JSON-RPC on its standard output: {line}"
        )),
        None => error,
    }
}
