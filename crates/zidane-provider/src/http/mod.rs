//! HTTP transport: one pooled hyper client over rustls (ring provider,
//! bundled web roots), and the streamed response turned into provider events.

mod conn;
mod provider;

pub use conn::ResponseBody;
pub use provider::{Auth, Endpoint, HttpProvider};
pub(crate) use provider::{root_with_v1, root_without_v1};

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures_core::Stream;
use http::{HeaderMap, Request, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use serde::Deserialize;

use crate::abort::AbortSignal;
use crate::error::{ErrorKind, ProviderError, classify_status, retry_after_from_headers, retry_after_from_message};
use crate::event::StreamEvent;
use crate::provider::{BoxFuture, EventStream};
use crate::sse::{SseDecoder, SseEvent};
use crate::wire::WireDecoder;

/// An API key or bearer token. Never shown by `Debug` or `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        ApiKey(secret.into())
    }

    /// The secret, for building the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl From<String> for ApiKey {
    fn from(s: String) -> Self {
        ApiKey(s)
    }
}

impl From<&str> for ApiKey {
    fn from(s: &str) -> Self {
        ApiKey(s.to_owned())
    }
}

/// Timeouts of the HTTP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the TCP (and TLS) connection.
    pub connect: Duration,
    /// Longest silence allowed: before the response headers, and between two
    /// reads of the streamed body.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(120),
        }
    }
}

type Connector = HttpsConnector<HttpConnector>;

/// Asked when a request has been silent for the idle timeout: whether the
/// server says it is still working (llama.cpp's `/slots` reports a slot
/// processing while it reads a long prompt or holds back a tool call). While
/// it says yes, the silence is not a failure; it is asked again every
/// [`LIVENESS_RECHECK`] (or the idle timeout, if shorter).
pub trait Liveness: fmt::Debug + Send + Sync {
    /// Whether the server is still working. An unreachable or silent server
    /// answers `false`.
    fn working(&self) -> BoxFuture<'static, bool>;
}

/// How long a silence the server vouched for lasts before it is asked again.
pub const LIVENESS_RECHECK: Duration = Duration::from_secs(15);

/// A request body sent as the pieces it is made of, in order: a body built
/// from shared handles (a transcript's memoized messages) goes out through
/// vectored writes, never joined into one buffer.
#[derive(Debug, Default)]
pub struct RequestBody {
    chunks: VecDeque<Bytes>,
    remaining: u64,
}

impl RequestBody {
    /// A body of `chunks`, sent one after the other (empty ones are left out).
    pub fn chunks(chunks: impl IntoIterator<Item = Bytes>) -> Self {
        let chunks: VecDeque<Bytes> = chunks.into_iter().filter(|c| !c.is_empty()).collect();
        let remaining = chunks.iter().map(|c| c.len() as u64).sum();
        RequestBody { chunks, remaining }
    }

    /// The body's length in bytes.
    pub fn len(&self) -> u64 {
        self.remaining
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }
}

impl From<Bytes> for RequestBody {
    fn from(bytes: Bytes) -> Self {
        RequestBody::chunks([bytes])
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let chunk = self.chunks.pop_front();
        if let Some(chunk) = &chunk {
            self.remaining -= chunk.len() as u64;
        }
        Poll::Ready(chunk.map(|c| Ok(http_body::Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.remaining)
    }
}

/// A pooled HTTP/1.1 + HTTP/2 client. Cheap to clone; clones share the
/// connection pool, so keep-alive connections (and their TLS sessions) are
/// reused across turns. An HTTP/1 connection is driven by the task that
/// reads its response ([`ResponseBody`]); no task runs beside it.
#[derive(Clone)]
pub struct HttpClient {
    pool: Arc<conn::Pool>,
    timeouts: Timeouts,
    liveness: Option<Arc<dyn Liveness>>,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("timeouts", &self.timeouts)
            .field("liveness", &self.liveness)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A client with the given timeouts. Must be called inside a tokio
    /// runtime only when requests are made; building it needs none.
    pub fn new(timeouts: Timeouts) -> Result<Self, ProviderError> {
        Self::with_roots(timeouts, Vec::new())
    }

    /// A client that also trusts the certificates of `pem` (a private
    /// certificate authority, or a proxy that inspects TLS) beside the
    /// bundled web roots. A `pem` without a certificate, or one that is not
    /// a certificate, is an error.
    pub fn with_extra_roots(timeouts: Timeouts, pem: &[u8]) -> Result<Self, ProviderError> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let bad = |why: String| ProviderError::new(ErrorKind::InvalidRequest, "http", why);
        let certs = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(format!("the extra roots are not PEM certificates: {e}")))?;
        if certs.is_empty() {
            return Err(bad("the extra roots hold no certificate".into()));
        }
        Self::with_roots(timeouts, certs)
    }

    fn with_roots(
        timeouts: Timeouts,
        extra: Vec<rustls::pki_types::CertificateDer<'static>>,
    ) -> Result<Self, ProviderError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        for cert in extra {
            roots.add(cert).map_err(|e| {
                ProviderError::new(
                    ErrorKind::InvalidRequest,
                    "http",
                    "an extra root is not a usable certificate",
                )
                .with_source(e)
            })?;
        }
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ProviderError::new(ErrorKind::Transport, "http", "TLS configuration").with_source(e))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(timeouts.connect));
        http.set_nodelay(true);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(http);
        Ok(HttpClient {
            pool: conn::Pool::new(connector),
            timeouts,
            liveness: None,
        })
    }

    /// The same client (sharing its pool), asking `liveness` before a
    /// silence past the idle timeout fails a request.
    pub fn with_liveness(mut self, liveness: Arc<dyn Liveness>) -> Self {
        self.liveness = Some(liveness);
        self
    }

    /// The server's liveness check, if one is set.
    pub fn liveness(&self) -> Option<&Arc<dyn Liveness>> {
        self.liveness.as_ref()
    }

    /// The timeouts in force.
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// Sends `request` and waits for the response headers (bounded by the
    /// idle timeout and `signal`). Non-2xx responses become classified errors.
    pub async fn send(
        &self,
        provider: &str,
        request: Request<RequestBody>,
        signal: &AbortSignal,
    ) -> Result<http::Response<ResponseBody>, ProviderError> {
        let url = request.uri().clone();
        let response = self.send_raw(provider, request, signal).await?;
        if response.status().is_success() {
            return Ok(response);
        }
        Err(error_response(provider, response, self.timeouts.idle, signal)
            .await
            .with_endpoint(public_url(&url)))
    }

    /// Sends `request` and waits for the response headers (bounded by the
    /// idle timeout and `signal`), whatever their status: for protocols that
    /// give non-2xx answers their own meaning.
    pub async fn send_raw(
        &self,
        provider: &str,
        request: Request<RequestBody>,
        signal: &AbortSignal,
    ) -> Result<http::Response<ResponseBody>, ProviderError> {
        let url = request.uri().clone();
        let sent_at = tokio::time::Instant::now();
        let mut pending = std::pin::pin!(self.pool.send(request));
        let mut wait = self.timeouts.idle;
        let response = loop {
            let silent = tokio::select! {
                biased;
                () = signal.aborted() => return Err(aborted(provider, signal)),
                r = &mut pending => break Ok(r),
                () = tokio::time::sleep(wait) => true,
            };
            // A queued or long prompt: wait on while the server says it works.
            let working = match (&self.liveness, silent) {
                (Some(liveness), true) => tokio::select! {
                    biased;
                    () = signal.aborted() => return Err(aborted(provider, signal)),
                    w = liveness.working() => w,
                },
                _ => false,
            };
            if !working {
                break Err(());
            }
            wait = LIVENESS_RECHECK.min(self.timeouts.idle);
        };
        let response = match response {
            Err(()) => {
                return Err(ProviderError::new(
                    ErrorKind::Transport,
                    provider,
                    format!("the server sent no response within {}s", self.timeouts.idle.as_secs()),
                )
                .with_silence(sent_at.elapsed())
                .with_endpoint(public_url(&url)));
            }
            Ok(Err(conn::SendError::Connect(e))) => {
                return Err(
                    ProviderError::new(ErrorKind::Unreachable, provider, "could not connect")
                        .with_endpoint(public_url(&url))
                        .with_source(conn::ConnectError(e)),
                );
            }
            Ok(Err(conn::SendError::Request(e))) => {
                return Err(ProviderError::new(ErrorKind::Transport, provider, "request failed")
                    .with_endpoint(public_url(&url))
                    .with_source(e));
            }
            Ok(Ok(response)) => response,
        };
        Ok(response)
    }

    /// Sends `request` and reads the whole (JSON) body.
    pub async fn send_for_body(
        &self,
        provider: &str,
        request: Request<RequestBody>,
        signal: &AbortSignal,
    ) -> Result<Bytes, ProviderError> {
        let response = self.send(provider, request, signal).await?;
        let request_id = request_id(response.headers());
        read_body(response.into_body(), self.timeouts.idle, 16 << 20)
            .await
            .map_err(|e| e.into_error(provider).with_request_id(request_id))
    }
}

/// `url` without its user information, query or fragment: what an error
/// may show.
fn public_url(url: &http::Uri) -> String {
    let scheme = url.scheme_str().unwrap_or("http");
    let host = url.host().unwrap_or_default();
    let port = url.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
    format!("{scheme}://{host}{port}{}", url.path())
}

fn aborted(provider: &str, signal: &AbortSignal) -> ProviderError {
    ProviderError::new(
        ErrorKind::Aborted,
        provider,
        signal.reason().unwrap_or_else(|| "request aborted".to_owned()),
    )
}

/// The provider's request id header.
/// A successful answer to a streaming request must be an event stream. A
/// server that answers with something else (an HTML page, a JSON document:
/// a wrong base URL, a proxy) is refused at once and not retried: asking
/// again gets the same answer. An answer without a content type is read.
pub(crate) fn expect_event_stream(provider: &str, headers: &HeaderMap) -> Result<(), ProviderError> {
    let Some(kind) = headers.get(http::header::CONTENT_TYPE) else {
        return Ok(());
    };
    let kind = kind.to_str().unwrap_or_default();
    if kind.trim().to_ascii_lowercase().starts_with("text/event-stream") {
        return Ok(());
    }
    Err(ProviderError::new(
        ErrorKind::InvalidRequest,
        provider,
        format!(
            "the server answered with `{kind}`, not an event stream: is the base URL the API root of a compatible server?"
        ),
    )
    .with_request_id(request_id(headers)))
}

pub(crate) fn request_id(headers: &HeaderMap) -> Option<String> {
    ["request-id", "x-request-id"]
        .iter()
        .find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()).map(str::to_owned))
}

enum ReadError {
    Timeout,
    Body(hyper::Error),
    TooLarge,
}

impl ReadError {
    fn into_error(self, provider: &str) -> ProviderError {
        match self {
            ReadError::Timeout => ProviderError::new(ErrorKind::Transport, provider, "response body stalled"),
            ReadError::Body(e) => {
                ProviderError::new(ErrorKind::Transport, provider, "response body broke off").with_source(e)
            }
            ReadError::TooLarge => ProviderError::new(ErrorKind::InvalidResponse, provider, "response body too large"),
        }
    }
}

async fn read_body(body: ResponseBody, idle: Duration, limit: usize) -> Result<Bytes, ReadError> {
    match tokio::time::timeout(idle, Limited::new(body, limit).collect()).await {
        Err(_) => Err(ReadError::Timeout),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) => match e.downcast::<hyper::Error>() {
            Ok(e) => Err(ReadError::Body(*e)),
            Err(_) => Err(ReadError::TooLarge),
        },
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    error: Option<ErrorDetail>,
    message: Option<String>,
}

#[derive(Deserialize)]
struct ErrorDetail {
    #[serde(rename = "type")]
    ty: Option<String>,
    message: Option<String>,
    code: Option<serde_json::Value>,
}

/// Builds the classified error of a non-2xx response from its status,
/// headers and (JSON or text) body.
async fn error_response(
    provider: &str,
    response: http::Response<ResponseBody>,
    idle: Duration,
    signal: &AbortSignal,
) -> ProviderError {
    let status = response.status();
    let headers = response.headers().clone();
    let body = tokio::select! {
        biased;
        () = signal.aborted() => return aborted(provider, signal),
        b = read_body(response.into_body(), idle, 1 << 20) => b.unwrap_or_default(),
    };
    error_from_parts(provider, status, &headers, &body, SystemTime::now())
}

/// Classifies an error response already read.
pub fn error_from_parts(
    provider: &str,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    now: SystemTime,
) -> ProviderError {
    let (error_type, message) = match serde_json::from_slice::<ErrorBody>(body) {
        Ok(ErrorBody {
            error: Some(detail), ..
        }) => {
            let ty = detail
                .ty
                .or_else(|| detail.code.as_ref().and_then(|c| c.as_str()).map(str::to_owned));
            (ty, detail.message.unwrap_or_default())
        }
        Ok(ErrorBody {
            message: Some(message), ..
        }) => (None, message),
        _ => (
            None,
            String::from_utf8_lossy(&body[..body.len().min(2048)]).trim().to_owned(),
        ),
    };
    let kind = classify_status(status.as_u16(), error_type.as_deref(), &message);
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let retry_after = retry_after_from_headers(header("retry-after-ms"), header("retry-after"), now)
        .or_else(|| retry_after_from_message(&message));
    let message = if message.is_empty() {
        status.canonical_reason().unwrap_or("request failed").to_owned()
    } else {
        message
    };
    ProviderError::new(kind, provider, message)
        .with_status(status.as_u16())
        .with_request_id(request_id(headers))
        .with_retry_after(retry_after)
        .with_error_type(error_type)
}

/// The largest line or event of a stream (the longest real events, a whole
/// tool input, are a few MiB).
pub(crate) const MAX_EVENT_BYTES: usize = 32 << 20;

/// A streamed response body decoded into provider events: SSE framing, the
/// wire decoder, the idle timeout and the abort signal.
pub(crate) struct SseBody<B, D> {
    body: B,
    sse: SseDecoder,
    wire: D,
    frames: Vec<SseEvent>,
    events: Vec<StreamEvent>,
    ready: VecDeque<StreamEvent>,
    idle: Pin<Box<tokio::time::Sleep>>,
    idle_timeout: Duration,
    /// Asked when the idle timer fires; the question in flight.
    liveness: Option<Arc<dyn Liveness>>,
    asking: Option<BoxFuture<'static, bool>>,
    /// How long the silence has lasted when the idle timer fires.
    silent_for: Duration,
    signal: AbortSignal,
    /// The waker the signal already holds: polls with the same waker check
    /// the flag alone instead of registering again.
    abort_waker: Option<Waker>,
    provider: String,
    request_id: Option<String>,
    /// An error to report once the events decoded before it are delivered.
    pending_error: Option<ProviderError>,
    /// The credential, kept out of error messages (an error event that
    /// echoes it).
    secret: Option<String>,
    done: bool,
}

impl<B, D> SseBody<B, D>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: std::error::Error + Send + Sync + 'static,
    D: WireDecoder,
{
    pub(crate) fn new(
        body: B,
        wire: D,
        idle_timeout: Duration,
        signal: AbortSignal,
        provider: String,
        request_id: Option<String>,
    ) -> Self {
        SseBody {
            body,
            sse: SseDecoder::new(),
            wire,
            frames: Vec::new(),
            events: Vec::new(),
            ready: VecDeque::new(),
            idle: Box::pin(tokio::time::sleep(idle_timeout)),
            idle_timeout,
            liveness: None,
            asking: None,
            silent_for: idle_timeout,
            signal,
            abort_waker: None,
            provider,
            request_id,
            pending_error: None,
            secret: None,
            done: false,
        }
    }

    /// The same stream, asking `liveness` before a silence fails it.
    pub(crate) fn with_liveness(mut self, liveness: Option<Arc<dyn Liveness>>) -> Self {
        self.liveness = liveness;
        self
    }

    /// Whether a silence that reached the idle timer is over (`Ready(true)`:
    /// fail), or the server vouched for it and the timer runs again.
    fn silence_ends(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        loop {
            if self.asking.is_none() {
                if self.idle.as_mut().poll(cx).is_pending() {
                    return Poll::Ready(false);
                }
                let Some(liveness) = &self.liveness else {
                    return Poll::Ready(true);
                };
                self.asking = Some(liveness.working());
            }
            let Some(asking) = self.asking.as_mut() else {
                return Poll::Ready(true);
            };
            match asking.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(false) => {
                    self.asking = None;
                    return Poll::Ready(true);
                }
                Poll::Ready(true) => {
                    self.asking = None;
                    let again = LIVENESS_RECHECK.min(self.idle_timeout);
                    self.silent_for += again;
                    self.idle.as_mut().reset(tokio::time::Instant::now() + again);
                }
            }
        }
    }

    /// The same stream, with `secret` masked in its errors.
    pub(crate) fn with_secret(mut self, secret: Option<String>) -> Self {
        self.secret = secret;
        self
    }

    fn fail(&mut self, error: ProviderError) -> Poll<Option<Result<StreamEvent, ProviderError>>> {
        self.done = true;
        let error = match &self.secret {
            Some(secret) => error.redact(secret),
            None => error,
        };
        let error = if error.request_id().is_none() {
            error.with_request_id(self.request_id.clone())
        } else {
            error
        };
        Poll::Ready(Some(Err(error)))
    }

    /// Decodes the SSE frames gathered so far into ready events; a decoding
    /// error stops the stream after the events decoded before it.
    fn drain_frames(&mut self) {
        for frame in self.frames.drain(..) {
            if let Err(e) = self.wire.decode(&frame, &mut self.events) {
                self.pending_error = Some(e);
                break;
            }
        }
        self.frames.clear();
        self.ready.extend(self.events.drain(..));
    }
}

impl<B, D> Stream for SseBody<B, D>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: std::error::Error + Send + Sync + 'static,
    D: WireDecoder + Unpin,
{
    type Item = Result<StreamEvent, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(event) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            if let Some(error) = this.pending_error.take() {
                return this.fail(error);
            }
            if this.done {
                return Poll::Ready(None);
            }
            let registered = this.abort_waker.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
            let aborted_now = if registered {
                this.signal.is_aborted()
            } else {
                let ready = this.signal.poll_aborted(cx).is_ready();
                this.abort_waker = Some(cx.waker().clone());
                ready
            };
            if aborted_now {
                let error = aborted(&this.provider, &this.signal);
                return this.fail(error);
            }
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    let deadline = tokio::time::Instant::now() + this.idle_timeout;
                    this.idle.as_mut().reset(deadline);
                    this.asking = None;
                    this.silent_for = this.idle_timeout;
                    if let Ok(data) = frame.into_data() {
                        this.sse.feed_bytes(data, &mut this.frames);
                        this.drain_frames();
                        // One line or event past the bound is refused, not
                        // buffered whole.
                        if this.sse.pending_bytes() > MAX_EVENT_BYTES {
                            let error = ProviderError::new(
                                ErrorKind::InvalidResponse,
                                &this.provider,
                                format!(
                                    "an event of the stream is larger than {} MiB: refused",
                                    MAX_EVENT_BYTES >> 20
                                ),
                            );
                            return this.fail(error);
                        }
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    let error =
                        ProviderError::new(ErrorKind::Transport, &this.provider, "connection dropped mid-stream")
                            .with_source(e);
                    return this.fail(error);
                }
                Poll::Ready(None) => {
                    let earlier_error = this.pending_error.is_some();
                    this.sse.finish(&mut this.frames);
                    this.drain_frames();
                    if !earlier_error {
                        if this.wire.finish(&mut this.events) {
                            this.done = true;
                        } else {
                            // A body that ends before the wire format's end
                            // (possibly inside an event, whose JSON then
                            // fails) was cut short: a transport failure.
                            let incomplete = ProviderError::new(
                                ErrorKind::Transport,
                                &this.provider,
                                "stream ended before the response was complete",
                            );
                            this.pending_error = Some(match this.pending_error.take() {
                                Some(cause) => incomplete.with_source(cause),
                                None => incomplete,
                            });
                        }
                        this.ready.extend(this.events.drain(..));
                    }
                }
                Poll::Pending => {
                    if let Poll::Ready(true) = this.silence_ends(cx) {
                        let error = ProviderError::new(
                            ErrorKind::Transport,
                            &this.provider,
                            format!("the model sent nothing for {}s", this.silent_for.as_secs_f64()),
                        )
                        .with_silence(this.silent_for);
                        return this.fail(error);
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

/// Starts a request lazily on first poll, then streams its body.
pub(crate) fn event_stream<D, F>(start: F) -> EventStream
where
    D: WireDecoder + Unpin,
    F: Future<Output = Result<SseBody<ResponseBody, D>, ProviderError>> + Send + 'static,
{
    Box::pin(Lazy::Starting(Box::pin(start)))
}

type Starting<D> = Pin<Box<dyn Future<Output = Result<SseBody<ResponseBody, D>, ProviderError>> + Send>>;

enum Lazy<D> {
    Starting(Starting<D>),
    // Boxed so the enum stays small while the request is being sent.
    Streaming(Box<SseBody<ResponseBody, D>>),
    Done,
}

impl<D: WireDecoder + Unpin> Stream for Lazy<D> {
    type Item = Result<StreamEvent, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match &mut *self {
                Lazy::Starting(start) => match start.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(body)) => *self = Lazy::Streaming(Box::new(body)),
                    Poll::Ready(Err(e)) => {
                        *self = Lazy::Done;
                        return Poll::Ready(Some(Err(e)));
                    }
                },
                Lazy::Streaming(body) => return Pin::new(&mut **body).poll_next(cx),
                Lazy::Done => return Poll::Ready(None),
            }
        }
    }
}

#[cfg(test)]
mod tests;
