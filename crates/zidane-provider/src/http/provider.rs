//! The HTTP provider: any [`WireProtocol`] over the pooled client.

use http::{HeaderName, HeaderValue, Request};

use crate::abort::AbortSignal;
use crate::error::{ErrorKind, ProviderError};
use crate::http::{ApiKey, HttpClient, RequestBody, SseBody, event_stream, expect_event_stream, request_id};
use crate::options::StreamOptions;
use crate::provider::{EventStream, Provider, ProviderMeta};
use crate::wire::{WireProtocol, WireRequest};

/// How a provider authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// No credentials (local servers).
    None,
    /// An API key in the protocol's key header (Anthropic's `x-api-key`);
    /// a protocol without one sends it as a bearer token.
    ApiKeyHeader(ApiKey),
    /// `Authorization: Bearer <token>`.
    Bearer(ApiKey),
}

impl Auth {
    /// The credential, to keep out of error messages.
    pub(crate) fn secret(&self) -> Option<String> {
        match self {
            Auth::None => None,
            Auth::ApiKeyHeader(key) | Auth::Bearer(key) => Some(key.expose().to_owned()),
        }
    }
}

/// Where a provider's requests go, and as whom.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The provider's name (unique among an agent's providers).
    pub name: String,
    /// Credentials.
    pub auth: Auth,
    /// The API root the protocol's paths go under.
    pub base_url: String,
    /// Model used when a request names none.
    pub default_model: String,
    /// Context window of the default model.
    pub context_window: u32,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
}

/// The path of `url` (after the scheme and the host), without its
/// trailing slashes.
fn url_path(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let path = url[after_scheme..].find('/').map_or("", |i| &url[after_scheme + i..]);
    path.trim_end_matches('/')
}

/// A server's root given either way (`http://host:8080` or
/// `http://host:8080/v1`), as the root without `/v1`.
pub(crate) fn root_without_v1(url: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    if url_path(trimmed).ends_with("/v1") {
        trimmed[..trimmed.len() - 3].to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// A server's root given either way, as the `/v1` root: a bare host
/// (`http://host:8080`) gets `/v1`; any other path is kept as given
/// (`https://openrouter.ai/api/v1`).
pub(crate) fn root_with_v1(url: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    if url_path(trimmed).is_empty() {
        format!("{trimmed}/v1")
    } else {
        trimmed.to_owned()
    }
}

/// A provider speaking `W` over HTTP: requests built by the protocol,
/// credentials and configured headers added, the answer's event stream
/// decoded by the protocol's decoder.
#[derive(Debug, Clone)]
pub struct HttpProvider<W> {
    endpoint: Endpoint,
    meta: ProviderMeta,
    client: HttpClient,
    wire: W,
}

impl<W: WireProtocol> HttpProvider<W> {
    /// A provider at `endpoint` speaking `wire` through `client`'s pool.
    pub fn new(endpoint: Endpoint, wire: W, client: HttpClient) -> Self {
        let meta = ProviderMeta::new(
            endpoint.default_model.clone(),
            endpoint.context_window,
            wire.capabilities(),
        );
        HttpProvider {
            endpoint,
            meta,
            client,
            wire,
        }
    }

    /// The protocol.
    pub fn wire(&self) -> &W {
        &self.wire
    }

    /// The connection pool.
    pub fn client(&self) -> &HttpClient {
        &self.client
    }

    /// `options` with the default model when it names none; an error
    /// naming `with_model` when neither names one (a server would be asked
    /// for the model `""`).
    pub(crate) fn with_default_model<'a>(
        &self,
        options: &'a StreamOptions,
    ) -> Result<std::borrow::Cow<'a, StreamOptions>, ProviderError> {
        if !options.model.trim().is_empty() {
            return Ok(std::borrow::Cow::Borrowed(options));
        }
        if self.endpoint.default_model.trim().is_empty() {
            return Err(ProviderError::new(
                ErrorKind::InvalidRequest,
                &self.endpoint.name,
                "no model to ask for: name one with the config's `with_model` (or in the request)",
            ));
        }
        let mut owned = options.clone();
        owned.model = self.endpoint.default_model.clone();
        Ok(std::borrow::Cow::Owned(owned))
    }

    /// The HTTP request of `wire`: the protocol's path and headers, the
    /// credentials, the configured headers (one a header cannot carry is an
    /// error naming it), and the body.
    pub(crate) fn request(&self, wire: WireRequest) -> Result<Request<RequestBody>, ProviderError> {
        let name = &self.endpoint.name;
        let url = format!("{}{}", self.endpoint.base_url.trim_end_matches('/'), wire.path);
        let mut builder = Request::post(url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream");
        for (key, value) in wire.headers {
            // An invalid value fails the request when it is built, below.
            builder = builder.header(key, value.as_ref());
        }
        builder = match (&self.endpoint.auth, self.wire.key_header()) {
            (Auth::None, _) => builder,
            (Auth::ApiKeyHeader(key), Some(header)) => builder.header(header, secret(name, key)?),
            (Auth::ApiKeyHeader(key) | Auth::Bearer(key), _) => builder.header("authorization", bearer(name, key)?),
        };
        for (key, value) in &self.endpoint.headers {
            let (Ok(key), Ok(value)) = (
                HeaderName::try_from(key.as_str()),
                HeaderValue::try_from(value.as_str()),
            ) else {
                return Err(ProviderError::new(
                    ErrorKind::InvalidRequest,
                    name,
                    format!("the configured header `{key}` cannot be sent (a header name or value it cannot hold)"),
                ));
            };
            builder = builder.header(key, value);
        }
        builder.body(RequestBody::chunks(wire.body)).map_err(|e| {
            ProviderError::new(ErrorKind::InvalidRequest, name, "could not build the request").with_source(e)
        })
    }

    /// Sends a request whose answer is one body (not a stream).
    pub(crate) async fn send_for_body(&self, request: Request<RequestBody>) -> Result<bytes::Bytes, ProviderError> {
        self.client
            .send_for_body(&self.endpoint.name, request, &AbortSignal::never())
            .await
            .map_err(|e| redact(e, self.endpoint.auth.secret().as_deref()))
    }
}

impl<W: WireProtocol> Provider for HttpProvider<W> {
    fn name(&self) -> &str {
        &self.endpoint.name
    }

    fn meta(&self) -> &ProviderMeta {
        &self.meta
    }

    fn stream(&self, options: &StreamOptions, signal: AbortSignal) -> EventStream {
        let request = self
            .with_default_model(options)
            .and_then(|options| self.request(self.wire.request(&options)));
        let client = self.client.clone();
        let name = self.endpoint.name.clone();
        let secret = self.endpoint.auth.secret();
        let decoder = self.wire.decoder(&name);
        event_stream(async move {
            let response = client
                .send(&name, request?, &signal)
                .await
                .map_err(|e| redact(e, secret.as_deref()))?;
            expect_event_stream(&name, response.headers())?;
            let id = request_id(response.headers());
            Ok(
                SseBody::new(response.into_body(), decoder, client.timeouts().idle, signal, name, id)
                    .with_liveness(client.liveness().cloned())
                    .with_secret(secret),
            )
        })
    }
}

fn secret(provider: &str, key: &ApiKey) -> Result<HeaderValue, ProviderError> {
    let mut value = HeaderValue::from_str(key.expose()).map_err(|_| {
        ProviderError::new(
            ErrorKind::Auth,
            provider,
            "the API key contains characters a header cannot carry",
        )
    })?;
    value.set_sensitive(true);
    Ok(value)
}

fn bearer(provider: &str, token: &ApiKey) -> Result<HeaderValue, ProviderError> {
    secret(provider, &ApiKey::new(format!("Bearer {}", token.expose())))
}

fn redact(e: ProviderError, secret: Option<&str>) -> ProviderError {
    match secret {
        Some(secret) => e.redact(secret),
        None => e,
    }
}
