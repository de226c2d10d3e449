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

/// How often the server pings a client; one that answers nothing (no
/// frame at all) for three times as long is gone (a closed lid, a lost
/// network), and is dropped.
const PING: Duration = Duration::from_secs(20);

/// Serves one client on `io` (already upgraded) until it goes.
pub(super) async fn run<S>(io: S, hub: Arc<Hub>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let ws = WebSocketStream::from_raw_socket(io, Role::Server, Some(config())).await;
    let (mut sink, mut frames) = ws.split();
    let (out, mut outgoing) = Outbox::bounded(QUEUE);
    let connection = Connection::new(hub, out.clone());
    let mut ping = tokio::time::interval(PING);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut heard = tokio::time::Instant::now();
    loop {
        tokio::select! {
            frame = frames.next() => {
                heard = tokio::time::Instant::now();
                match frame {
                    Some(Ok(Message::Text(text))) => connection.take_text(&text),
                    Some(Ok(Message::Binary(_))) => {
                        let error = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32600, "message": "send JSON-RPC messages as text frames" } });
                        let _ = send(&mut sink, error.to_string()).await;
                    }
                    Some(Ok(Message::Close(_))) | None => break,
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        refuse(&mut sink, &e).await;
                        break;
                    }
                }
            }
            message = outgoing.recv() => match message {
                Some(text) => {
                    if send(&mut sink, text).await.is_err() {
                        break;
                    }
                }
                None => break,
            },
            _ = ping.tick() => {
                if heard.elapsed() > PING * 3 {
                    break;
                }
                if tokio::time::timeout(WRITE_TIMEOUT, sink.send(Message::Ping(Vec::new().into()))).await.is_err() {
                    break;
                }
            }
            () = out.closed() => break,
        }
    }
    out.close();
    connection.gone().await;
}

/// A frame the server will not take: said (the protocol's error), then the
/// connection closed, with 1009 for a message past the cap and 1002 for a
/// broken one.
async fn refuse<S>(sink: &mut S, error: &tokio_tungstenite::tungstenite::Error)
where
    S: futures_util::Sink<Message> + Unpin,
{
    use tokio_tungstenite::tungstenite::Error;
    let reason = error.to_string();
    let message = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32600, "message": reason } });
    let _ = send(sink, message.to_string()).await;
    let code = match error {
        Error::Capacity(_) => CloseCode::Size,
        _ => CloseCode::Protocol,
    };
    let close = CloseFrame {
        code,
        reason: reason.into(),
    };
    let _ = tokio::time::timeout(WRITE_TIMEOUT, sink.send(Message::Close(Some(close)))).await;
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
