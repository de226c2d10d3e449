//! One WebSocket client: its text frames in as ACP messages, the
//! connection's messages out as text frames. Frames are capped; a client
//! that stops reading is dropped (its queue and a write that does not
//! finish are bounded), never the server's memory.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};

use crate::acp::{Connection, Hub, Outbox};

/// The largest message a client may send (an image or a long prompt fits).
pub(crate) const MAX_MESSAGE: usize = 16 << 20;

/// Messages queued for a client before it counts as not reading.
const QUEUE: usize = 4096;

/// How long a write may wait on a client that does not read.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// The WebSocket configuration of both ends.
pub(crate) fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

/// Serves one client on `io` (already upgraded) until it goes.
pub(super) async fn run<S>(io: S, hub: Arc<Hub>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let ws = WebSocketStream::from_raw_socket(io, Role::Server, Some(config())).await;
    let (mut sink, mut frames) = ws.split();
    let (out, mut outgoing) = Outbox::bounded(QUEUE);
    let connection = Connection::new(hub, out.clone());
    loop {
        tokio::select! {
            frame = frames.next() => match frame {
                Some(Ok(Message::Text(text))) => connection.take_text(&text),
                Some(Ok(Message::Binary(_))) => {
                    let error = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32600, "message": "send JSON-RPC messages as text frames" } });
                    let _ = send(&mut sink, error.to_string()).await;
                }
                Some(Ok(Message::Close(_))) | None => break,
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    // A frame past the cap, or a broken stream: said, then closed.
                    let reason = e.to_string();
                    let error = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32600, "message": reason } });
                    let _ = send(&mut sink, error.to_string()).await;
                    let close = CloseFrame { code: CloseCode::Size, reason: reason.into() };
                    let _ = tokio::time::timeout(WRITE_TIMEOUT, sink.send(Message::Close(Some(close)))).await;
                    break;
                }
            },
            message = outgoing.recv() => match message {
                Some(message) => {
                    if send(&mut sink, message.to_string()).await.is_err() {
                        break;
                    }
                }
                None => break,
            },
            () = out.closed() => break,
        }
    }
    connection.gone().await;
}

/// Writes one text frame, bounded in time.
async fn send<S>(sink: &mut S, text: String) -> Result<(), ()>
where
    S: futures_util::Sink<Message> + Unpin,
{
    match tokio::time::timeout(WRITE_TIMEOUT, sink.send(Message::text(text))).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(()),
    }
}
