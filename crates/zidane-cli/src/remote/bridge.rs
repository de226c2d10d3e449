//! `zidane acp --connect URL`: standard input and output bridged to a
//! running server, so a client that speaks ACP only over a process's pipes
//! (most editors) drives served sessions. Each line in is a text frame
//! out; each text frame in is a line out.

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

use super::Target;
use crate::out::Failure;

/// Bridges until either side closes.
pub(crate) async fn run(target: Target) -> Result<(), Failure> {
    let socket = target.connect().await.map_err(Failure::run)?;
    let (mut sink, mut frames) = socket.split();
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    loop {
        tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) if line.trim().is_empty() => {}
                Ok(Some(line)) => {
                    if sink.send(Message::text(line)).await.is_err() {
                        return Err(Failure::run("the server closed the connection"));
                    }
                }
                Ok(None) | Err(_) => {
                    let _ = sink.send(Message::Close(None)).await;
                    return Ok(());
                }
            },
            frame = frames.next() => match frame {
                Some(Ok(Message::Text(text))) => {
                    let line = format!("{}\n", text.as_str());
                    if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                        return Ok(());
                    }
                }
                Some(Ok(Message::Close(_))) | None => return Err(Failure::run("the server closed the connection")),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(Failure::run(format!("the connection to the server broke: {e}"))),
            },
        }
    }
}
