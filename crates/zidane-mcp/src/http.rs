//! The streamable HTTP transport: rmcp's session state machine driven over
//! zidane-provider's pooled hyper + rustls client, so an agent has one HTTP
//! stack for its model and its MCP servers.

use parking_lot::Mutex;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Limited};

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};
use zidane_provider::{AbortSignal, ErrorKind, HttpClient, ProviderError, RequestBody, ResponseBody, Timeouts};

use crate::error::McpError;
use crate::oauth::OAuthFlow;
use crate::oauth::{Challenge, OAuthError, OAuthTokens};

const SESSION_ID: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";
/// Headers the transport sets itself; configured headers may not replace them.
const RESERVED: [&str; 5] = [
    "accept",
    "content-type",
    SESSION_ID,
    LAST_EVENT_ID,
    "mcp-protocol-version",
];

type Error = StreamableHttpError<ProviderError>;

/// Shows the URL of a login the connection needs (a step-up) and returns
/// once it is shown.
pub(crate) type Opener = Arc<dyn Fn(String) -> futures::future::BoxFuture<'static, ()> + Send + Sync>;
/// Told of a refresh, with the new expiry.
pub(crate) type RefreshNote = Arc<dyn Fn(Option<u64>) + Send + Sync>;

/// OAuth on a live connection: the access token on every request, a
/// refresh on a 401, a new login with more scope on a 403
/// `insufficient_scope` (when someone can show its URL), at most
/// [`STEP_UPS`] of those per connection.
pub(crate) struct OAuthSession {
    pub(crate) flow: OAuthFlow,
    pub(crate) tokens: tokio::sync::Mutex<Option<OAuthTokens>>,
    pub(crate) open: Option<Opener>,
    pub(crate) on_refresh: Option<RefreshNote>,
    logins: AtomicU32,
}

/// Interactive logins one connection may start by itself.
const STEP_UPS: u32 = 2;

impl fmt::Debug for OAuthSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthSession")
            .field("flow", &self.flow)
            .finish_non_exhaustive()
    }
}

fn auth_error(e: OAuthError) -> Error {
    StreamableHttpError::Client(ProviderError::new(ErrorKind::Auth, "mcp", e.to_string()))
}

impl OAuthSession {
    pub(crate) fn new(flow: OAuthFlow, open: Option<Opener>, on_refresh: Option<RefreshNote>) -> Self {
        OAuthSession {
            flow,
            tokens: tokio::sync::Mutex::new(None),
            open,
            on_refresh,
            logins: AtomicU32::new(0),
        }
    }

    /// The bearer token to send, refreshed first when it expired.
    async fn token(&self) -> Result<Option<String>, Error> {
        let mut tokens = self.tokens.lock().await;
        if tokens.is_none() {
            *tokens = self.flow.stored().map_err(auth_error)?;
        }
        if let Some(current) = tokens.as_ref()
            && current.expired(now_ms())
            && current.refresh_token.is_some()
        {
            let fresh = self.flow.refresh(current).await.map_err(auth_error)?;
            if let Some(note) = &self.on_refresh {
                note(fresh.expires_at);
            }
            *tokens = Some(fresh);
        }
        Ok(tokens.as_ref().map(|t| t.access_token.clone()))
    }

    /// After a refused request: whether sending it again may succeed.
    async fn recover(&self, status: StatusCode, headers: &HeaderMap) -> Result<bool, Error> {
        let challenge = headers
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(Challenge::parse)
            .unwrap_or_default();
        if status == StatusCode::UNAUTHORIZED {
            let mut tokens = self.tokens.lock().await;
            if let Some(current) = tokens.clone()
                && current.refresh_token.is_some()
                && let Ok(fresh) = self.flow.refresh(&current).await
            {
                if let Some(note) = &self.on_refresh {
                    note(fresh.expires_at);
                }
                *tokens = Some(fresh);
                return Ok(true);
            }
            drop(tokens);
            return self.login(&challenge, None).await;
        }
        if status == StatusCode::FORBIDDEN && challenge.error.as_deref() == Some("insufficient_scope") {
            // Ask for what was granted and what the server now wants.
            let granted = self.tokens.lock().await.as_ref().and_then(|t| t.scope.clone());
            let mut scopes: Vec<String> = granted
                .iter()
                .chain(challenge.scope.iter())
                .flat_map(|s| s.split_whitespace().map(str::to_owned))
                .collect();
            scopes.dedup();
            let mut seen = std::collections::HashSet::new();
            scopes.retain(|s| seen.insert(s.clone()));
            let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
            return self.login(&challenge, scope).await;
        }
        Ok(false)
    }

    async fn login(&self, challenge: &Challenge, scope: Option<String>) -> Result<bool, Error> {
        let Some(open) = &self.open else {
            return Ok(false);
        };
        if self.logins.fetch_add(1, Ordering::SeqCst) >= STEP_UPS {
            return Ok(false);
        }
        let pending = self.flow.begin(challenge, scope).await.map_err(auth_error)?;
        open(pending.url().to_owned()).await;
        let tokens = pending.finish().await.map_err(auth_error)?;
        *self.tokens.lock().await = Some(tokens);
        Ok(true)
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A [`StreamableHttpClient`] over [`HttpClient`]. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct McpHttpClient {
    http: HttpClient,
    /// Longest wait for a whole JSON answer (a tool call answered in one
    /// body is silent until it finishes).
    body_timeout: Duration,
    /// The last `WWW-Authenticate` challenge of a 401, for the bootstrap to
    /// report.
    challenge: LastChallenge,
    /// OAuth, for a server logged in to.
    oauth: Option<Arc<OAuthSession>>,
}

pub(crate) type LastChallenge = Arc<Mutex<Option<String>>>;

impl McpHttpClient {
    pub(crate) fn new(connect: Duration, call: Duration) -> Result<Self, McpError> {
        Ok(McpHttpClient {
            http: http_client(connect, call)?,
            body_timeout: call,
            challenge: LastChallenge::default(),
            oauth: None,
        })
    }

    async fn send(&self, request: Request<RequestBody>) -> Result<http::Response<ResponseBody>, Error> {
        self.http
            .send_raw("mcp", request, &AbortSignal::never())
            .await
            .map_err(StreamableHttpError::Client)
    }

    /// Sends the request `make` builds for a bearer token: the configured
    /// one, or with OAuth the session's, sent again once after a refresh
    /// or a step-up login.
    async fn send_authed(
        &self,
        configured: Option<String>,
        make: impl Fn(Option<String>) -> Result<Request<RequestBody>, Error>,
    ) -> Result<http::Response<ResponseBody>, Error> {
        let Some(session) = &self.oauth else {
            return self.send(make(configured)?).await;
        };
        let token = session.token().await?;
        let response = self.send(make(token)?).await?;
        let status = response.status();
        if status.is_success() || !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            return Ok(response);
        }
        let mut response = response;
        while session.recover(response.status(), response.headers()).await? {
            let token = session.token().await?;
            response = self.send(make(token)?).await?;
            if !matches!(response.status(), StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
                break;
            }
        }
        Ok(response)
    }

    async fn read(&self, body: ResponseBody, limit: usize) -> Result<Bytes, Error> {
        match tokio::time::timeout(self.body_timeout, Limited::new(body, limit).collect()).await {
            Err(_) => Err(StreamableHttpError::Client(ProviderError::new(
                ErrorKind::Transport,
                "mcp",
                "response body stalled",
            ))),
            Ok(Ok(collected)) => Ok(collected.to_bytes()),
            Ok(Err(e)) => match e.downcast::<hyper::Error>() {
                Ok(e) => Err(StreamableHttpError::Io(io::Error::other(e))),
                Err(_) => Err(StreamableHttpError::ResponseBodyTooLarge { max_size: limit }),
            },
        }
    }
}

/// An HTTP client for one server: a silent answer may last as long as a call.
pub(crate) fn http_client(connect: Duration, call: Duration) -> Result<HttpClient, McpError> {
    HttpClient::new(Timeouts {
        connect,
        idle: call.max(Duration::from_secs(1)),
    })
    .map_err(|e| McpError::spawn("cannot build the HTTP client", e))
}

/// The transport for `url` with `headers` on every request, and where it
/// leaves an authorization challenge.
pub(crate) fn transport(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    connect: Duration,
    call: Duration,
    oauth: Option<Arc<OAuthSession>>,
    challenge: LastChallenge,
) -> Result<(StreamableHttpClientTransport<McpHttpClient>, LastChallenge), McpError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    for (name, value) in headers {
        let bad = |what: &str| McpError::spawn_msg(format!("header `{name}`: {what}"));
        // A bearer token configured as a header goes where rmcp expects it.
        if name.eq_ignore_ascii_case("authorization") {
            let token = value.strip_prefix("Bearer ").unwrap_or(value);
            config.auth_header = Some(token.to_owned());
            continue;
        }
        let header = HeaderName::try_from(name.as_str()).map_err(|_| bad("not a valid header name"))?;
        if RESERVED.contains(&header.as_str()) {
            return Err(bad("set by the transport itself"));
        }
        let value = HeaderValue::try_from(value.as_str()).map_err(|_| bad("not a valid header value"))?;
        config.custom_headers.insert(header, value);
    }
    let mut client = McpHttpClient::new(connect, call)?;
    client.oauth = oauth;
    client.challenge = challenge;
    let challenge = Arc::clone(&client.challenge);
    Ok((StreamableHttpClientTransport::with_client(client, config), challenge))
}

fn request(
    method: Method,
    uri: &str,
    session_id: Option<&str>,
    auth: Option<String>,
    custom: HashMap<HeaderName, HeaderValue>,
) -> http::request::Builder {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(session_id) = session_id {
        builder = builder.header(SESSION_ID, session_id);
    }
    if let Some(token) = auth {
        builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
    }
    for (name, value) in custom {
        builder = builder.header(name, value);
    }
    builder
}

fn build(builder: http::request::Builder, body: Bytes) -> Result<Request<RequestBody>, Error> {
    builder
        .body(RequestBody::from(body))
        .map_err(|e| StreamableHttpError::Client(ProviderError::new(ErrorKind::InvalidRequest, "mcp", e.to_string())))
}

fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
}

impl McpHttpClient {
    fn auth_failure(&self, status: StatusCode, headers: &HeaderMap) -> Option<Error> {
        if status != StatusCode::UNAUTHORIZED {
            return None;
        }
        let challenge = headers.get(WWW_AUTHENTICATE)?.to_str().ok()?.to_owned();
        *self.challenge.lock() = Some(challenge.clone());
        Some(StreamableHttpError::AuthRequired(AuthRequiredError::new(challenge)))
    }
}

/// The body as a stream of SSE events, failing an event larger than `limit`
/// before it is buffered whole.
fn sse(body: ResponseBody, limit: usize) -> BoxStream<'static, Result<Sse, sse_stream::Error>> {
    let frames = body.into_data_stream();
    let bounded = frames.scan(EventBound::new(limit), |bound, chunk| {
        let item = match chunk {
            Ok(bytes) => bound.feed(&bytes).map(|()| bytes),
            Err(e) => Err(io::Error::other(e)),
        };
        std::future::ready(Some(item))
    });
    SseStream::from_bytes_stream(bounded).boxed()
}

/// Counts the bytes of the event being received; an empty line ends it.
struct EventBound {
    limit: usize,
    event: usize,
    line: usize,
    after_cr: bool,
}

impl EventBound {
    fn new(limit: usize) -> Self {
        EventBound {
            limit,
            event: 0,
            line: 0,
            after_cr: false,
        }
    }

    fn feed(&mut self, bytes: &[u8]) -> io::Result<()> {
        for &b in bytes {
            let lf_after_cr = b == b'\n' && self.after_cr;
            self.after_cr = b == b'\r';
            if lf_after_cr {
                continue;
            }
            if b == b'\n' || b == b'\r' {
                if self.line == 0 {
                    self.event = 0;
                }
                self.line = 0;
                continue;
            }
            self.line += 1;
            self.event += 1;
            if self.event > self.limit {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("an SSE event exceeded {} bytes", self.limit),
                ));
            }
        }
        Ok(())
    }
}

// rmcp calls the `*_with_response_limits` / `*_with_max_sse_event_size`
// methods; the plain ones apply the default limits.
impl StreamableHttpClient for McpHttpClient {
    type Error = ProviderError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let body = Bytes::from(serde_json::to_vec(&message)?);
        let had_session = session_id.is_some();
        let response = self
            .send_authed(auth_header, |auth| {
                let builder = request(Method::POST, &uri, session_id.as_deref(), auth, custom_headers.clone())
                    .header(CONTENT_TYPE, JSON)
                    .header(ACCEPT, format!("{EVENT_STREAM}, {JSON}"));
                build(builder, body.clone())
            })
            .await?;
        let (parts, body) = response.into_parts();
        let status = parts.status;
        if let Some(e) = self.auth_failure(status, &parts.headers) {
            return Err(e);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && had_session {
            return Err(StreamableHttpError::SessionExpired);
        }
        let new_session = parts
            .headers
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let media = media_type(&parts.headers);
        let no_answer_due = !matches!(message, ClientJsonRpcMessage::Request(_));
        if !status.is_success() {
            let text = self.read(body, limits.max_json_response_size).await.unwrap_or_default();
            // A JSON-RPC error sent with an HTTP error status is still an answer.
            if media.as_deref() == Some(JSON)
                && let Ok(answer @ ServerJsonRpcMessage::Error(_)) = serde_json::from_slice(&text)
            {
                return Ok(StreamableHttpPostResponse::Json(answer, new_session));
            }
            let shown = &text[..text.len().min(limits.max_error_response_size)];
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(shown)
            ))));
        }
        let empty = parts.headers.get(CONTENT_LENGTH).is_some_and(|v| v.as_bytes() == b"0");
        if empty && no_answer_due {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        match media.as_deref() {
            Some(EVENT_STREAM) => Ok(StreamableHttpPostResponse::Sse(
                sse(body, limits.max_sse_event_size),
                new_session,
            )),
            Some(JSON) => {
                let text = self.read(body, limits.max_json_response_size).await?;
                match serde_json::from_slice(&text) {
                    Ok(answer) => Ok(StreamableHttpPostResponse::Json(answer, new_session)),
                    Err(_) if no_answer_due => Ok(StreamableHttpPostResponse::Accepted),
                    Err(e) => Err(e.into()),
                }
            }
            _ if no_answer_due => Ok(StreamableHttpPostResponse::Accepted),
            _ => Err(StreamableHttpError::UnexpectedContentType(media)),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let response = self
            .send_authed(auth_header, |auth| {
                let builder = request(Method::DELETE, &uri, Some(&session_id), auth, custom_headers.clone());
                build(builder, Bytes::new())
            })
            .await?;
        let status = response.status();
        if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
            "ending the session returned HTTP {status}"
        ))))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, sse_stream::Error>>, Error> {
        let limit = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get_stream_with_max_sse_event_size(uri, session_id, last_event_id, auth_header, custom_headers, limit)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, sse_stream::Error>>, Error> {
        let response = self
            .send_authed(auth_header, |auth| {
                let mut builder = request(Method::GET, &uri, session_id.as_deref(), auth, custom_headers.clone())
                    .header(ACCEPT, format!("{EVENT_STREAM}, {JSON}"));
                if let Some(id) = &last_event_id {
                    builder = builder.header(LAST_EVENT_ID, id.as_str());
                }
                build(builder, Bytes::new())
            })
            .await?;
        let (parts, body) = response.into_parts();
        if parts.status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(e) = self.auth_failure(parts.status, &parts.headers) {
            return Err(e);
        }
        if !parts.status.is_success() {
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
                "opening the event stream returned HTTP {}",
                parts.status
            ))));
        }
        match media_type(&parts.headers).as_deref() {
            Some(EVENT_STREAM | JSON) => Ok(sse(body, max_sse_event_size)),
            other => Err(StreamableHttpError::UnexpectedContentType(other.map(str::to_owned))),
        }
    }
}

#[cfg(test)]
mod tests;
