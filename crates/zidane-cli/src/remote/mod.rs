//! A client of `zidane serve`: the connection (WebSocket over TCP, TLS or a
//! Unix socket, with the token), JSON-RPC requests and their answers, and
//! what the server sends unasked. `zidane acp --connect` bridges standard
//! input and output to it (`bridge.rs`); `zidane attach` drives a served
//! session from the terminal (`session.rs`).

pub(crate) mod bridge;
mod convert;
pub(crate) mod session;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use futures_util::{SinkExt, StreamExt};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

/// A stream a WebSocket runs on.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

type Socket = tokio_tungstenite::WebSocketStream<Box<dyn Io>>;

/// Where the server is and how to get in.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// `ws://host:port/acp`, `wss://…`, or `unix:/path`.
    pub(crate) url: String,
    /// The token.
    pub(crate) token: String,
    /// Found in `serve.json`: a reconnection reads it again (the server
    /// may have started elsewhere).
    follow: bool,
}

impl Target {
    /// `url` (else the running server's, from `$ZIDANE_HOME/serve.json`)
    /// with `token` (else `$ZIDANE_SERVE_TOKEN`, else the server's file).
    pub(crate) fn find(url: Option<&str>, token: Option<&str>) -> Result<Target, String> {
        let url_given_none = url.is_none();
        let url = match url {
            Some(url) => url.to_owned(),
            None => crate::serve::running_url()
                .ok_or("no server is running here (start one with `zidane serve`, or give its URL)")?,
        };
        let token = match token
            .map(str::to_owned)
            .or_else(|| std::env::var("ZIDANE_SERVE_TOKEN").ok())
        {
            Some(token) => token,
            None => {
                let home = zidane_app::paths::user_dir().ok_or("no home folder to read the server's token from")?;
                std::fs::read_to_string(home.join("serve-token"))
                    .map(|t| t.trim().to_owned())
                    .map_err(|e| {
                        format!("cannot read the server's token ({e}); pass --token or set ZIDANE_SERVE_TOKEN")
                    })?
            }
        };
        Ok(Target {
            url,
            token,
            follow: url_given_none,
        })
    }

    /// This target as it stands now (a followed server's URL read again).
    pub(crate) fn refreshed(&self) -> Target {
        let mut target = self.clone();
        if self.follow
            && let Some(url) = crate::serve::running_url()
        {
            target.url = url;
        }
        target
    }

    /// Opens the WebSocket.
    async fn connect(&self) -> Result<Socket, String> {
        let (io, uri): (Box<dyn Io>, String) = if let Some(path) = self.url.strip_prefix("unix:") {
            #[cfg(unix)]
            {
                let stream = tokio::net::UnixStream::connect(path)
                    .await
                    .map_err(|e| format!("cannot connect to {path}: {e}"))?;
                (Box::new(stream), "ws://localhost/acp".to_owned())
            }
            #[cfg(not(unix))]
            return Err(format!("{path}: Unix sockets need a Unix system"));
        } else {
            let secure = self.url.starts_with("wss://");
            let rest = self
                .url
                .strip_prefix("ws://")
                .or_else(|| self.url.strip_prefix("wss://"))
                .ok_or_else(|| format!("`{}` is not a ws://, wss:// or unix: URL", self.url))?;
            let authority = rest.split('/').next().unwrap_or_default();
            let stream = tokio::net::TcpStream::connect(authority)
                .await
                .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
            let _ = stream.set_nodelay(true);
            if secure {
                (tls(stream, authority).await?, self.url.clone())
            } else {
                (Box::new(stream), self.url.clone())
            }
        };
        let mut request = uri.into_client_request().map_err(|e| format!("`{}`: {e}", self.url))?;
        let bearer = HeaderValue::from_str(&format!("Bearer {}", self.token)).map_err(|e| e.to_string())?;
        request.headers_mut().insert("authorization", bearer);
        let (socket, _) = tokio_tungstenite::client_async_with_config(request, io, Some(crate::serve::ws_config()))
            .await
            .map_err(|e| format!("the server refused the connection: {e}"))?;
        Ok(socket)
    }
}

/// TLS to `authority` with the web's roots (and `$ZIDANE_SERVE_CA`, a PEM
/// file of another authority, for a server's own certificate).
async fn tls(stream: tokio::net::TcpStream, authority: &str) -> Result<Box<dyn Io>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Ok(path) = std::env::var("ZIDANE_SERVE_CA") {
        for cert in CertificateDer::pem_file_iter(&path).map_err(|e| format!("ZIDANE_SERVE_CA: {e}"))? {
            let cert = cert.map_err(|e| format!("ZIDANE_SERVE_CA: {e}"))?;
            roots.add(cert).map_err(|e| format!("ZIDANE_SERVE_CA: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
    let name = ServerName::try_from(host.trim_matches(['[', ']']).to_owned()).map_err(|e| e.to_string())?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let stream = connector
        .connect(name, stream)
        .await
        .map_err(|e| format!("TLS with {authority}: {e}"))?;
    Ok(Box::new(stream))
}

/// The requests sent, by id, waiting for their answer.
type Waiting = Mutex<HashMap<i64, oneshot::Sender<Result<Value, Value>>>>;

/// What the server sends unasked: a notification, or a request of its own
/// (answered with [`Client::respond`]).
#[derive(Debug)]
pub(crate) enum Incoming {
    Notification {
        method: String,
        params: Value,
    },
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// Everything the server sent before this point was received (see
    /// [`Client::barrier`]): told back.
    Barrier(oneshot::Sender<()>),
    /// The connection closed.
    Closed(String),
}

/// How often the client pings the server; a server that sends nothing for
/// three times as long is gone (a machine that vanished), and the
/// connection is closed.
const PING: std::time::Duration = std::time::Duration::from_secs(20);

/// A connection to the server: requests and their answers, and the rest
/// as [`Incoming`] messages.
pub(crate) struct Client {
    outgoing: UnboundedSender<Message>,
    incoming: UnboundedSender<Incoming>,
    pending: Arc<Waiting>,
    /// Set once the connection is gone, before the requests waiting are
    /// failed: a request made later fails at once.
    closed: Arc<AtomicBool>,
    next_id: AtomicI64,
}

impl Client {
    /// Connects to `target`; what the server sends unasked arrives on the
    /// receiver.
    pub(crate) async fn connect(target: &Target) -> Result<(Client, UnboundedReceiver<Incoming>), String> {
        let socket = target.connect().await?;
        let (mut sink, mut frames) = socket.split();
        let (outgoing, mut to_send) = unbounded_channel::<Message>();
        let (incoming, received) = unbounded_channel();
        let pending: Arc<Waiting> = Arc::default();
        let closed = Arc::new(AtomicBool::new(false));
        tokio::spawn(async move {
            let mut ping = tokio::time::interval(PING);
            ping.tick().await;
            loop {
                let message = tokio::select! {
                    message = to_send.recv() => message,
                    _ = ping.tick() => Some(Message::Ping(Vec::new().into())),
                };
                let Some(message) = message else {
                    let _ = sink.close().await;
                    return;
                };
                if sink.send(message).await.is_err() {
                    return;
                }
            }
        });
        let (waiting, told, gone) = (Arc::clone(&pending), incoming.clone(), Arc::clone(&closed));
        tokio::spawn(async move {
            let why = read_frames(&mut frames, &waiting, &told).await;
            gone.store(true, Ordering::SeqCst);
            waiting.lock().clear();
            let _ = told.send(Incoming::Closed(why));
        });
        Ok((
            Client {
                outgoing,
                incoming,
                pending,
                closed,
                next_id: AtomicI64::new(1),
            },
            received,
        ))
    }

    /// Whether the connection is gone.
    pub(crate) fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Sends a request; its result, or its error object.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, Value> {
        let gone = || json!({ "code": -32000, "message": "the connection to the server closed" });
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id, tx);
        // Checked after it waits: a close that came first has already
        // cleared the waiting requests, and would never answer this one.
        if self.closed() {
            self.pending.lock().remove(&id);
            return Err(gone());
        }
        self.send_value(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        rx.await.unwrap_or_else(|_| Err(gone()))
    }

    /// Resolves once every message the server sent before now has been
    /// received and passed on as [`Incoming`] (so a request's notifications
    /// are all in before its answer is acted on).
    pub(crate) async fn barrier(&self) {
        let (tx, rx) = oneshot::channel();
        if self.incoming.send(Incoming::Barrier(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Value) {
        self.send_value(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Answers a request of the server's.
    pub(crate) fn respond(&self, id: Value, result: Value) {
        self.send_value(&json!({ "jsonrpc": "2.0", "id": id, "result": result }));
    }

    /// Sends a message as it is (the bridge's lines).
    pub(crate) fn send_text(&self, text: String) {
        let _ = self.outgoing.send(Message::text(text));
    }

    fn send_value(&self, value: &Value) {
        self.send_text(value.to_string());
    }
}

/// Reads frames until the connection ends (or goes silent): why it ended.
async fn read_frames<S>(frames: &mut S, waiting: &Waiting, incoming: &UnboundedSender<Incoming>) -> String
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        match tokio::time::timeout(PING * 3, frames.next()).await {
            Err(_) => return "the server went silent".to_owned(),
            Ok(Some(Ok(Message::Text(text)))) => dispatch(&text, waiting, incoming),
            Ok(Some(Ok(Message::Close(frame)))) => {
                return frame.map_or_else(
                    || "the server closed the connection".to_owned(),
                    |f| f.reason.to_string(),
                );
            }
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(e))) => return e.to_string(),
            Ok(None) => return "the connection ended".to_owned(),
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // The socket closes with its last user, not with its reader.
        let _ = self.outgoing.send(Message::Close(None));
    }
}

/// One message from the server: an answer to its request, or unasked.
fn dispatch(text: &str, pending: &Waiting, incoming: &UnboundedSender<Incoming>) {
    let Ok(message) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let method = message["method"].as_str().map(str::to_owned);
    match (message.get("id").filter(|id| !id.is_null()), method) {
        (Some(id), Some(method)) => {
            let _ = incoming.send(Incoming::Request {
                id: id.clone(),
                method,
                params: message["params"].clone(),
            });
        }
        (None, Some(method)) => {
            let _ = incoming.send(Incoming::Notification {
                method,
                params: message["params"].clone(),
            });
        }
        (Some(id), None) => {
            let waiting = id.as_i64().and_then(|id| pending.lock().remove(&id));
            if let Some(waiting) = waiting {
                let answer = match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message["result"].clone()),
                };
                let _ = waiting.send(answer);
            }
        }
        (None, None) => {}
    }
}

/// The message of a JSON-RPC error object.
pub(crate) fn error_text(error: &Value) -> String {
    error["message"]
        .as_str()
        .map_or_else(|| error.to_string(), str::to_owned)
}

/// The most recent session the server has of `cwd` (made there, or in a
/// worktree of it).
pub(crate) async fn latest(target: &Target, cwd: &std::path::Path) -> Result<String, String> {
    let (client, _incoming) = Client::connect(target).await?;
    convert::initialize(&client, "zidane attach", false).await?;
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_owned());
    let listed = client
        .request("session/list", json!({ "cwd": cwd }))
        .await
        .map_err(|e| error_text(&e))?;
    // The most recent the server ran (not a local one it would pin).
    listed["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["_meta"]["zidane"]["served"] == true)
        .and_then(|s| s["sessionId"].as_str())
        .map(str::to_owned)
        .ok_or_else(|| {
            format!(
                "the server has no session of {} (name one with --session)",
                cwd.display()
            )
        })
}
