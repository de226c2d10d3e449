//! Classified provider errors.

use std::fmt;
use std::time::{Duration, SystemTime};

/// What went wrong, in the terms a caller branches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Too many requests (HTTP 429); retry after the server's delay.
    RateLimited,
    /// The provider is overloaded (HTTP 529, `overloaded_error`).
    Overloaded,
    /// A server-side failure (HTTP 5xx).
    Server,
    /// The connection dropped mid-stream or went silent.
    Transport,
    /// No connection could be made (refused, unknown host, TLS failure):
    /// almost always a wrong base URL or a server that is down, so not
    /// retried.
    Unreachable,
    /// The stream broke its own format (invalid JSON in an event).
    InvalidResponse,
    /// The request is longer than the model's context window.
    ContextExceeded,
    /// The credentials were rejected (HTTP 401 / 403).
    Auth,
    /// The request was refused as malformed (HTTP 400, 404, 422, ...).
    InvalidRequest,
    /// The account's quota or credit is spent.
    Quota,
    /// The caller aborted the request.
    Aborted,
}

impl ErrorKind {
    /// Whether sending the same request again may succeed.
    pub fn is_retryable(self) -> bool {
        match self {
            ErrorKind::RateLimited
            | ErrorKind::Overloaded
            | ErrorKind::Server
            | ErrorKind::Transport
            | ErrorKind::InvalidResponse => true,
            ErrorKind::Unreachable
            | ErrorKind::ContextExceeded
            | ErrorKind::Auth
            | ErrorKind::InvalidRequest
            | ErrorKind::Quota
            | ErrorKind::Aborted => false,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            ErrorKind::RateLimited => "rate limited",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::Server => "server error",
            ErrorKind::Transport => "transport error",
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::InvalidResponse => "invalid response",
            ErrorKind::ContextExceeded => "context window exceeded",
            ErrorKind::Auth => "authentication failed",
            ErrorKind::InvalidRequest => "invalid request",
            ErrorKind::Quota => "quota exhausted",
            ErrorKind::Aborted => "aborted",
        }
    }
}

/// A failed provider request, classified.
///
/// Carries the HTTP status, the provider's request id and the server's
/// retry delay when they were known; the message is the provider's own when
/// it sent one. Never contains the API key. Cloning shares the source error.
#[derive(Clone)]
pub struct ProviderError {
    // Boxed: errors travel in every `Result` of the streaming hot path, and a
    // pointer-sized error keeps those results small.
    inner: Box<Inner>,
}

#[derive(Debug, Clone)]
struct Inner {
    kind: ErrorKind,
    message: String,
    provider: String,
    status: Option<u16>,
    request_id: Option<String>,
    retry_after: Option<Duration>,
    error_type: Option<String>,
    endpoint: Option<String>,
    source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
    silence: Option<Duration>,
}

impl ProviderError {
    /// The same error with every occurrence of `secret` in its message
    /// replaced (a server that echoes the credential back in an error must
    /// not put it on screen, in a log or in the session).
    pub fn redact(mut self, secret: &str) -> Self {
        // A short value would match ordinary text; real keys are long.
        if secret.len() >= 8 && self.inner.message.contains(secret) {
            self.inner.message = self.inner.message.replace(secret, "[redacted]");
        }
        self
    }

    /// A new error of `kind` from `provider`.
    pub fn new(kind: ErrorKind, provider: impl Into<String>, message: impl Into<String>) -> Self {
        ProviderError {
            inner: Box::new(Inner {
                kind,
                message: message.into(),
                provider: provider.into(),
                status: None,
                request_id: None,
                retry_after: None,
                error_type: None,
                endpoint: None,
                source: None,
                silence: None,
            }),
        }
    }

    /// With the HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.inner.status = Some(status);
        self
    }

    /// With the provider's request id.
    pub fn with_request_id(mut self, id: Option<String>) -> Self {
        self.inner.request_id = id;
        self
    }

    /// With the server's retry delay.
    pub fn with_retry_after(mut self, delay: Option<Duration>) -> Self {
        self.inner.retry_after = delay;
        self
    }

    /// With the provider's error type (`overloaded_error`, `rate_limit_exceeded`).
    pub fn with_error_type(mut self, error_type: Option<String>) -> Self {
        self.inner.error_type = error_type;
        self
    }

    /// With the URL the request went to (give it without credentials:
    /// the HTTP providers leave a URL's user name, password and query out).
    pub fn with_endpoint(mut self, url: impl Into<String>) -> Self {
        self.inner.endpoint = Some(url.into());
        self
    }

    /// With how long the provider had sent nothing when the attempt was
    /// given up (an idle timeout).
    pub fn with_silence(mut self, silence: Duration) -> Self {
        self.inner.silence = Some(silence);
        self
    }

    /// How long the provider had sent nothing when the attempt was given
    /// up, when that is why it failed (an idle timeout): the run loop
    /// bounds the silence of a request's attempts together.
    pub fn silence(&self) -> Option<Duration> {
        self.inner.silence
    }

    /// The URL the failed request went to, when it got that far.
    pub fn endpoint(&self) -> Option<&str> {
        self.inner.endpoint.as_deref()
    }

    /// With the underlying cause.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.inner.source = Some(std::sync::Arc::new(source));
        self
    }

    /// The classification.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// Whether sending the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        self.inner.kind.is_retryable()
    }

    /// The HTTP status, when the failure came with one.
    pub fn status(&self) -> Option<u16> {
        self.inner.status
    }

    /// The provider's request id (`request-id`, `x-request-id`), when sent.
    pub fn request_id(&self) -> Option<&str> {
        self.inner.request_id.as_deref()
    }

    /// How long the server asked to wait before retrying.
    pub fn retry_after(&self) -> Option<Duration> {
        self.inner.retry_after
    }

    /// The provider's own error type, when it sent one.
    pub fn error_type(&self) -> Option<&str> {
        self.inner.error_type.as_deref()
    }

    /// The provider's (or this crate's) message.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// Name of the provider that failed.
    pub fn provider(&self) -> &str {
        &self.inner.provider
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.inner.provider, self.inner.kind.as_str())?;
        if let Some(status) = self.inner.status {
            write!(f, " (HTTP {status})")?;
        }
        if !self.inner.message.is_empty() {
            write!(f, ": {}", self.inner.message)?;
        }
        if let Some(url) = &self.inner.endpoint {
            write!(f, " ({url})")?;
        }
        if let Some(id) = &self.inner.request_id {
            write!(f, " [request {id}]")?;
        }
        Ok(())
    }
}

/// Reads as its message with its causes ([`write_report`]), which is what
/// a `main` returning `Result<(), Box<dyn Error>>` prints; `{:#?}` shows
/// the fields.
impl fmt::Debug for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.debug_struct("ProviderError").field("inner", &self.inner).finish()
        } else {
            write_report(self, f)
        }
    }
}

/// Writes `error` as a person reads it: its message, then the causes the
/// message does not already say, one a line, as `anyhow` shows a report.
/// The public error types' `Debug` is this, so that `main` returning
/// `Result<(), Box<dyn Error>>` prints a sentence rather than a struct.
///
/// ```
/// use zidane::providers::{ErrorKind, ProviderError};
/// # mod zidane { pub mod providers { pub use zidane_provider::*; } }
///
/// let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
/// let error = ProviderError::new(ErrorKind::Unreachable, "anthropic", "cannot connect").with_source(refused);
/// assert_eq!(
///     format!("{error:?}"),
///     "anthropic: unreachable: cannot connect\n\nCaused by:\n    connection refused",
/// );
/// ```
pub fn write_report(error: &(dyn std::error::Error + 'static), f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let message = error.to_string();
    f.write_str(&message)?;
    let mut said = message;
    let mut causes = Vec::new();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !text.is_empty() && !said.contains(&text) {
            said.push('\n');
            said.push_str(&text);
            causes.push(text);
        }
        source = cause.source();
    }
    match causes.as_slice() {
        [] => Ok(()),
        [only] => write!(f, "\n\nCaused by:\n    {only}"),
        many => {
            f.write_str("\n\nCaused by:")?;
            for (i, cause) in many.iter().enumerate() {
                write!(f, "\n    {i}: {cause}")?;
            }
            Ok(())
        }
    }
}

impl std::error::Error for ProviderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Classifies an HTTP failure from its status, the provider's error type and
/// message.
pub fn classify_status(status: u16, error_type: Option<&str>, message: &str) -> ErrorKind {
    let error_type = error_type.unwrap_or_default();
    let lower = message.to_ascii_lowercase();
    if is_context_exceeded(error_type, &lower) {
        return ErrorKind::ContextExceeded;
    }
    if error_type == "insufficient_quota"
        || lower.contains("exceeded your current quota")
        || lower.contains("credit balance")
    {
        return ErrorKind::Quota;
    }
    if error_type == "overloaded_error" || status == 529 {
        return ErrorKind::Overloaded;
    }
    match status {
        429 => ErrorKind::RateLimited,
        401 | 403 => ErrorKind::Auth,
        402 => ErrorKind::Quota,
        408 => ErrorKind::Transport,
        500..=599 => ErrorKind::Server,
        // A client error stays one whatever type the body names: Ollama
        // answers an unknown model with a 404 of type `api_error`, which
        // asking again cannot fix.
        400..=499 => match error_type {
            "rate_limit_error" | "rate_limit_exceeded" => ErrorKind::RateLimited,
            "authentication_error" | "permission_error" | "invalid_api_key" => ErrorKind::Auth,
            _ => ErrorKind::InvalidRequest,
        },
        _ => match error_type {
            "rate_limit_error" | "rate_limit_exceeded" => ErrorKind::RateLimited,
            "authentication_error" | "permission_error" | "invalid_api_key" => ErrorKind::Auth,
            "api_error" | "server_error" => ErrorKind::Server,
            _ => ErrorKind::InvalidRequest,
        },
    }
}

/// Classifies an error event that arrived inside a 200 stream.
pub fn classify_stream_error(error_type: Option<&str>, message: &str) -> ErrorKind {
    match error_type.unwrap_or_default() {
        "overloaded_error" => ErrorKind::Overloaded,
        "rate_limit_error" | "rate_limit_exceeded" => ErrorKind::RateLimited,
        "api_error" | "server_error" | "internal_server_error" => ErrorKind::Server,
        "authentication_error" | "permission_error" => ErrorKind::Auth,
        other => {
            let lower = message.to_ascii_lowercase();
            if is_context_exceeded(other, &lower) {
                ErrorKind::ContextExceeded
            } else if other == "invalid_request_error" {
                ErrorKind::InvalidRequest
            } else {
                ErrorKind::Server
            }
        }
    }
}

fn is_context_exceeded(error_type: &str, lower_message: &str) -> bool {
    error_type == "context_length_exceeded"
        || lower_message.contains("prompt is too long")
        || lower_message.contains("maximum context length")
        || lower_message.contains("context window")
        || lower_message.contains("context_length_exceeded")
        || lower_message.contains("too many tokens")
        // llama.cpp's server.
        || error_type == "exceed_context_size_error"
        || lower_message.contains("exceeds the available context size")
}

/// The server's retry delay from its headers: `retry-after-ms` (milliseconds),
/// else `retry-after` (seconds, or an HTTP date measured against `now`).
pub fn retry_after_from_headers(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = retry_after?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The delay of an OpenAI-style "Please try again in 1.5s" (or `20ms`) message.
pub fn retry_after_from_message(message: &str) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    let start = lower.find("try again in ")? + "try again in ".len();
    let rest = &lower[start..];
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let number: f64 = rest[..number_len].parse().ok()?;
    let unit = rest[number_len..].trim_start();
    let secs = if unit.starts_with("ms") {
        number / 1000.0
    } else if unit.starts_with('s') {
        number
    } else if unit.starts_with('m') {
        number * 60.0
    } else {
        return None;
    };
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}
