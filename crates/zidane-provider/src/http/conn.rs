//! Connections and their keep-alive pool.
//!
//! An HTTP/1 connection has no task of its own: the task that waits for the
//! response and then reads its body drives the connection in the same polls
//! ([`ResponseBody`]). A streamed answer then costs one task wake per read
//! of the socket, where a connection task would wake itself and then wake
//! the reader for every chunk. A body read to its end hands the connection
//! back to the pool; one dropped earlier closes it.
//!
//! An HTTP/2 connection (a TLS server that offers `h2`) multiplexes requests,
//! so it keeps a task of its own and is shared by every request to its host.

use std::collections::HashMap;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::uri::{Authority, Scheme};
use http::{HeaderValue, Request, Response, Uri};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper::rt::Executor;
use hyper_util::client::legacy::connect::Connection as _;
use hyper_util::rt::TokioExecutor;
use parking_lot::Mutex;
use tower_service::Service;

use super::{Connector, RequestBody};

type Io = <Connector as Service<Uri>>::Response;
type H1 = http1::Connection<Io, RequestBody>;

/// How long an unused connection is kept for the next request.
const IDLE_FOR: Duration = Duration::from_secs(90);

/// Most unused HTTP/1 connections kept per host.
const IDLE_PER_HOST: usize = 256;

/// Why a request got no response.
#[derive(Debug)]
pub(crate) enum SendError {
    /// No connection could be made.
    Connect(Box<dyn std::error::Error + Send + Sync>),
    /// The connection failed before the response headers.
    Request(hyper::Error),
}

/// A connector's failure, as an error of its own (the connector gives a
/// boxed one).
#[derive(Debug)]
pub(crate) struct ConnectError(pub(crate) Box<dyn std::error::Error + Send + Sync>);

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    scheme: Scheme,
    authority: Authority,
}

impl Key {
    fn of(uri: &Uri) -> Option<Key> {
        Some(Key {
            scheme: uri.scheme()?.clone(),
            authority: uri.authority()?.clone(),
        })
    }
}

struct IdleH1 {
    sender: http1::SendRequest<RequestBody>,
    conn: H1,
    since: Instant,
}

/// The connector and the unused connections, shared by a client's clones.
pub(crate) struct Pool {
    connector: Connector,
    h1: Mutex<HashMap<Key, Vec<IdleH1>>>,
    h2: Mutex<HashMap<Key, http2::SendRequest<RequestBody>>>,
}

impl Pool {
    pub(crate) fn new(connector: Connector) -> Arc<Pool> {
        Arc::new(Pool {
            connector,
            h1: Mutex::default(),
            h2: Mutex::default(),
        })
    }

    /// Sends `request` on a pooled connection to its host, or a new one,
    /// and returns the response once its headers are in.
    pub(crate) async fn send(
        self: &Arc<Self>,
        mut request: Request<RequestBody>,
    ) -> Result<Response<ResponseBody>, SendError> {
        let key = Key::of(request.uri()).ok_or_else(|| SendError::Connect("the URL names no host".into()))?;
        if let Some(sender) = self.shared_h2(&key) {
            return send_h2(sender, request).await;
        }
        let uri = request.uri().clone();
        let host_added = prepare_h1(&mut request);
        if let Some((sender, conn)) = self.checkout_h1(&key) {
            match self.drive_h1(key.clone(), sender, conn, request).await {
                Ok(response) => return Ok(response),
                // The server closed the connection before the request was
                // written: send it again on a new one.
                Err(Failed {
                    message: Some(again), ..
                }) => request = again,
                Err(Failed { error, .. }) => return Err(SendError::Request(error)),
            }
        }
        let io = self.connect(uri.clone()).await?;
        if io.connected().is_negotiated_h2() {
            // HTTP/2 takes the absolute form and names the host itself.
            *request.uri_mut() = uri;
            if host_added {
                request.headers_mut().remove(http::header::HOST);
            }
            let (sender, conn) = http2::handshake(TokioExecutor::new(), io)
                .await
                .map_err(SendError::Request)?;
            TokioExecutor::new().execute(async move {
                let _ = conn.await;
            });
            self.h2.lock().insert(key, sender.clone());
            return send_h2(sender, request).await;
        }
        let (sender, conn) = http1::handshake(io).await.map_err(SendError::Request)?;
        self.drive_h1(key, sender, conn, request)
            .await
            .map_err(|failed| SendError::Request(failed.error))
    }

    async fn connect(&self, uri: Uri) -> Result<Io, SendError> {
        let mut connector = self.connector.clone();
        poll_fn(|cx| connector.poll_ready(cx))
            .await
            .map_err(SendError::Connect)?;
        connector.call(uri).await.map_err(SendError::Connect)
    }

    fn shared_h2(&self, key: &Key) -> Option<http2::SendRequest<RequestBody>> {
        let mut shared = self.h2.lock();
        match shared.get(key) {
            Some(sender) if !sender.is_closed() => Some(sender.clone()),
            Some(_) => {
                shared.remove(key);
                None
            }
            None => None,
        }
    }

    /// The most recently used connection to `key` that is still open.
    fn checkout_h1(&self, key: &Key) -> Option<(http1::SendRequest<RequestBody>, H1)> {
        loop {
            let mut idle = self.h1.lock().get_mut(key)?.pop()?;
            if idle.since.elapsed() > IDLE_FOR {
                continue;
            }
            // A connection the server closed while it idled ends at this
            // poll; an open one has nothing to do and stays as it is.
            let mut cx = Context::from_waker(Waker::noop());
            if Pin::new(&mut idle.conn).poll(&mut cx).is_ready() || !idle.sender.is_ready() {
                continue;
            }
            return Some((idle.sender, idle.conn));
        }
    }

    fn checkin_h1(&self, key: Key, sender: http1::SendRequest<RequestBody>, conn: H1) {
        let mut pool = self.h1.lock();
        let idle = pool.entry(key).or_default();
        idle.retain(|c| c.since.elapsed() <= IDLE_FOR);
        if idle.len() < IDLE_PER_HOST {
            idle.push(IdleH1 {
                sender,
                conn,
                since: Instant::now(),
            });
        }
    }

    /// Writes `request` and reads the response headers, driving `conn`.
    async fn drive_h1(
        self: &Arc<Self>,
        key: Key,
        mut sender: http1::SendRequest<RequestBody>,
        conn: H1,
        request: Request<RequestBody>,
    ) -> Result<Response<ResponseBody>, Failed> {
        let mut sending = std::pin::pin!(sender.try_send_request(request));
        let mut conn = Some(conn);
        let response = poll_fn(|cx| {
            if let Poll::Ready(r) = sending.as_mut().poll(cx) {
                return Poll::Ready(r);
            }
            if let Some(c) = conn.as_mut()
                && Pin::new(c).poll(cx).is_ready()
            {
                // Closed or failed: the request's answer says which.
                conn = None;
            }
            sending.as_mut().poll(cx)
        })
        .await
        .map_err(|mut e| Failed {
            message: e.take_message(),
            error: e.into_error(),
        })?;
        let (parts, body) = response.into_parts();
        let driver = conn.map(|conn| {
            let inline = Arc::new(Inline::default());
            Driver {
                sender,
                conn,
                pool: Arc::downgrade(self),
                key,
                waker: Waker::from(Arc::clone(&inline)),
                inline,
            }
        });
        Ok(Response::from_parts(parts, ResponseBody { body, driver }))
    }
}

struct Failed {
    error: hyper::Error,
    message: Option<Request<RequestBody>>,
}

async fn send_h2(
    mut sender: http2::SendRequest<RequestBody>,
    request: Request<RequestBody>,
) -> Result<Response<ResponseBody>, SendError> {
    sender.ready().await.map_err(SendError::Request)?;
    let response = sender.send_request(request).await.map_err(SendError::Request)?;
    Ok(response.map(|body| ResponseBody { body, driver: None }))
}

/// What an HTTP/1 request needs: a `Host` header and the origin form.
/// Whether the `Host` header was added.
fn prepare_h1(request: &mut Request<RequestBody>) -> bool {
    let uri = request.uri().clone();
    let mut added = false;
    if let (Some(authority), false) = (uri.authority(), request.headers().contains_key(http::header::HOST)) {
        let default_port = if uri.scheme_str() == Some("https") { 443 } else { 80 };
        let host = match authority.port_u16() {
            Some(port) if port != default_port => format!("{}:{port}", authority.host()),
            _ => authority.host().to_owned(),
        };
        if let Ok(value) = HeaderValue::from_str(&host) {
            request.headers_mut().insert(http::header::HOST, value);
            added = true;
        }
    }
    if uri.scheme().is_some() {
        let origin = match uri.path_and_query() {
            Some(p) if p.as_str() != "/" => Uri::from(p.clone()),
            _ => Uri::from_static("/"),
        };
        *request.uri_mut() = origin;
    }
    added
}

/// The HTTP/1 connection a response body reads from.
struct Driver {
    sender: http1::SendRequest<RequestBody>,
    conn: H1,
    pool: Weak<Pool>,
    key: Key,
    /// The waker the connection and the body are polled with.
    inline: Arc<Inline>,
    waker: Waker,
}

/// The waker of a body and its connection. The two wake each other through
/// hyper's body channel as they pass each chunk; inside the reader's poll
/// those wakes are noted and answered by polling again, not by scheduling
/// the task once more. Outside it (the socket turns readable) they wake the
/// reader's task.
#[derive(Default)]
struct Inline {
    task: Mutex<Option<Waker>>,
    polling: AtomicBool,
    woken: AtomicBool,
}

impl Inline {
    fn enter(&self, task: &Waker) {
        let mut held = self.task.lock();
        if !held.as_ref().is_some_and(|w| w.will_wake(task)) {
            *held = Some(task.clone());
        }
        drop(held);
        self.woken.store(false, Ordering::Relaxed);
        self.polling.store(true, Ordering::SeqCst);
    }

    /// Whether something woke the pair since the last look.
    fn woken(&self) -> bool {
        self.woken.swap(false, Ordering::SeqCst)
    }

    /// Leaves the poll; a wake that came too late to be answered in it
    /// schedules the task.
    fn leave(&self, task: &Waker) {
        self.polling.store(false, Ordering::SeqCst);
        if self.woken() {
            task.wake_by_ref();
        }
    }
}

impl std::task::Wake for Inline {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.polling.load(Ordering::SeqCst) {
            self.woken.store(true, Ordering::SeqCst);
            // Left in the meantime: the reader may not look again.
            if self.polling.load(Ordering::SeqCst) {
                return;
            }
        }
        if let Some(task) = self.task.lock().as_ref() {
            task.wake_by_ref();
        }
    }
}

/// The body of a response. On HTTP/1 it drives its connection while it is
/// read, and gives the connection back to the pool once read to the end.
pub struct ResponseBody {
    body: Incoming,
    driver: Option<Driver>,
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseBody")
            .field("drives_its_connection", &self.driver.is_some())
            .finish_non_exhaustive()
    }
}

impl ResponseBody {
    /// The body is read: keep its connection for the next request when the
    /// connection can take one.
    fn release(&mut self) {
        let Some(mut driver) = self.driver.take() else {
            return;
        };
        let mut cx = Context::from_waker(Waker::noop());
        if Pin::new(&mut driver.conn).poll(&mut cx).is_ready() || !driver.sender.is_ready() {
            return;
        }
        if let Some(pool) = driver.pool.upgrade() {
            pool.checkin_h1(driver.key, driver.sender, driver.conn);
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        let Some(driver) = this.driver.as_mut() else {
            return Pin::new(&mut this.body).poll_frame(cx);
        };
        driver.inline.enter(cx.waker());
        let mut inner = Context::from_waker(&driver.waker);
        let mut frame = Poll::Pending;
        let mut closed = false;
        let mut again = false;
        // A few rounds at most: the connection reads the socket and hands
        // the body what came, the body asks for more.
        for _ in 0..4 {
            frame = Pin::new(&mut this.body).poll_frame(&mut inner);
            if frame.is_ready() {
                break;
            }
            if Pin::new(&mut driver.conn).poll(&mut inner).is_ready() {
                closed = true;
            }
            frame = Pin::new(&mut this.body).poll_frame(&mut inner);
            again = driver.inline.woken();
            if frame.is_ready() || closed || !again {
                break;
            }
        }
        driver.inline.leave(cx.waker());
        if again && frame.is_pending() && !closed {
            // Still moving after the last round: come back.
            cx.waker().wake_by_ref();
        }
        if closed {
            this.driver = None;
            if frame.is_pending() {
                frame = Pin::new(&mut this.body).poll_frame(cx);
            }
        }
        if let Poll::Ready(None) = frame {
            this.release();
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
