//! The HTTP providers: Anthropic Messages and OpenAI Chat Completions (with
//! presets for OpenAI, OpenRouter, Cerebras and any compatible server).

use http::{HeaderName, HeaderValue, Request};
use serde::Deserialize;

use crate::abort::AbortSignal;
use crate::error::{ErrorKind, ProviderError};
use crate::http::{ApiKey, HttpClient, RequestBody, SseBody, Timeouts, event_stream, expect_event_stream, request_id};
use crate::openai::{Dialect, MaxTokensField};
use crate::options::StreamOptions;
use crate::provider::{BoxFuture, Capabilities, EventStream, Provider, ProviderMeta};
use crate::{anthropic, openai, responses};

/// How a provider authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// No credentials (local servers).
    None,
    /// `x-api-key: <key>` (Anthropic's API keys).
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

/// Settings of an [`AnthropicProvider`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AnthropicConfig {
    /// The provider's name (unique among an agent's providers).
    pub name: String,
    /// Credentials.
    pub auth: Auth,
    /// The API root without `/v1`, as the official SDK takes it
    /// (`https://api.anthropic.com`); `/v1/messages` is appended.
    pub base_url: String,
    /// Model used when a request names none.
    pub default_model: String,
    /// Context window of the default model.
    pub context_window: u32,
    /// Extra `anthropic-beta` flags sent with every request.
    pub betas: Vec<String>,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
    /// Transport timeouts.
    pub timeouts: Timeouts,
}

impl AnthropicConfig {
    /// The public API with an API key.
    pub fn new(api_key: impl Into<ApiKey>) -> Self {
        AnthropicConfig {
            name: "anthropic".into(),
            auth: Auth::ApiKeyHeader(api_key.into()),
            base_url: "https://api.anthropic.com".into(),
            default_model: "claude-sonnet-4-5".into(),
            context_window: 200_000,
            betas: Vec::new(),
            headers: Vec::new(),
            timeouts: Timeouts::default(),
        }
    }

    /// The public API with the key from `ANTHROPIC_API_KEY` (or a bearer
    /// token from `ANTHROPIC_AUTH_TOKEN`), and `ANTHROPIC_BASE_URL` when set.
    pub fn from_env() -> Result<Self, ProviderError> {
        let mut config = if let Some(key) = env("ANTHROPIC_API_KEY") {
            AnthropicConfig::new(key)
        } else if let Some(token) = env("ANTHROPIC_AUTH_TOKEN") {
            AnthropicConfig {
                auth: Auth::Bearer(token.into()),
                ..AnthropicConfig::new("")
            }
        } else {
            return Err(ProviderError::new(
                ErrorKind::Auth,
                "anthropic",
                "no credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)",
            ));
        };
        if let Some(base) = env("ANTHROPIC_BASE_URL") {
            config.base_url = base;
        }
        Ok(config)
    }

    /// An Anthropic-compatible server at `base_url` (the root without
    /// `/v1`) that needs no credentials: a local server or a gateway that
    /// authenticates on its own.
    pub fn keyless(base_url: impl Into<String>) -> Self {
        AnthropicConfig {
            auth: Auth::None,
            ..AnthropicConfig::new("").with_base_url(base_url)
        }
    }

    /// With another API root (a proxy, a gateway, a compatible server).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// With other credentials.
    pub fn with_auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    /// With another default model.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.default_model = model.into();
        self
    }

    /// With another provider name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// With other timeouts.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The Anthropic Messages API (`POST /v1/messages`, streamed).
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    config: AnthropicConfig,
    meta: ProviderMeta,
    client: HttpClient,
}

impl AnthropicProvider {
    /// A provider with its own connection pool.
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let client = HttpClient::new(config.timeouts)?;
        Ok(Self::with_client(config, client))
    }

    /// A provider sharing `client`'s connection pool.
    pub fn with_client(config: AnthropicConfig, client: HttpClient) -> Self {
        let meta = ProviderMeta::new(
            config.default_model.clone(),
            config.context_window,
            Capabilities {
                thinking: true,
                cache_control: true,
                images: true,
                documents: true,
                count_tokens: true,
                decisions: true,
            },
        );
        AnthropicProvider { config, meta, client }
    }

    fn request(&self, path: &str, body: RequestBody, betas: &[&str]) -> Result<Request<RequestBody>, ProviderError> {
        let url = format!("{}{path}", self.config.base_url.trim_end_matches('/'));
        let mut builder = Request::post(url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .header("anthropic-version", anthropic::API_VERSION);
        builder = match &self.config.auth {
            Auth::None => builder,
            Auth::ApiKeyHeader(key) => builder.header("x-api-key", secret(&self.config.name, key)?),
            Auth::Bearer(token) => builder.header("authorization", bearer(&self.config.name, token)?),
        };
        let all_betas: Vec<&str> = self
            .config
            .betas
            .iter()
            .map(String::as_str)
            .chain(betas.iter().copied())
            .collect();
        if !all_betas.is_empty() {
            builder = builder.header("anthropic-beta", all_betas.join(","));
        }
        for (k, v) in &self.config.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        builder.body(body).map_err(|e| {
            ProviderError::new(
                ErrorKind::InvalidRequest,
                &self.config.name,
                "could not build the request",
            )
            .with_source(e)
        })
    }

    fn with_default_model<'a>(&self, options: &'a StreamOptions) -> std::borrow::Cow<'a, StreamOptions> {
        if options.model.is_empty() {
            let mut owned = options.clone();
            owned.model = self.config.default_model.clone();
            std::borrow::Cow::Owned(owned)
        } else {
            std::borrow::Cow::Borrowed(options)
        }
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

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn meta(&self) -> &ProviderMeta {
        &self.meta
    }

    fn stream(&self, options: &StreamOptions, signal: AbortSignal) -> EventStream {
        let options = self.with_default_model(options);
        let wire = anthropic::request_parts(&options);
        let request = self.request("/v1/messages", RequestBody::chunks(wire.chunks), &wire.betas);
        let client = self.client.clone();
        let name = self.config.name.clone();
        let secret = self.config.auth.secret();
        event_stream(async move {
            let response = client
                .send(&name, request?, &signal)
                .await
                .map_err(|e| redact(e, secret.as_deref()))?;
            expect_event_stream(&name, response.headers())?;
            let id = request_id(response.headers());
            let decoder = anthropic::Decoder::new(&name);
            Ok(
                SseBody::new(response.into_body(), decoder, client.timeouts().idle, signal, name, id)
                    .with_secret(secret),
            )
        })
    }

    fn count_tokens<'a>(&'a self, options: &'a StreamOptions) -> Option<BoxFuture<'a, Result<u64, ProviderError>>> {
        Some(Box::pin(async move {
            let options = self.with_default_model(options);
            let body = anthropic::count_tokens_body(&options);
            let request = self.request(
                "/v1/messages/count_tokens",
                body.into(),
                &anthropic::request_body(&options).betas,
            )?;
            let bytes = self
                .client
                .send_for_body(&self.config.name, request, &AbortSignal::never())
                .await
                .map_err(|e| redact(e, self.config.auth.secret().as_deref()))?;
            #[derive(Deserialize)]
            struct Count {
                input_tokens: u64,
            }
            serde_json::from_slice::<Count>(&bytes)
                .map(|c| c.input_tokens)
                .map_err(|e| {
                    ProviderError::new(
                        ErrorKind::InvalidResponse,
                        &self.config.name,
                        format!("count_tokens answer: {e}"),
                    )
                })
        }))
    }
}

/// Settings of an [`OpenAiProvider`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// The provider's name (unique among an agent's providers).
    pub name: String,
    /// Credentials (a bearer token, or none for local servers).
    pub auth: Auth,
    /// The API root including `/v1`, as the official SDK takes it
    /// (`https://api.openai.com/v1`); `/chat/completions` is appended.
    pub base_url: String,
    /// Model used when a request names none.
    pub default_model: String,
    /// Context window of the default model.
    pub context_window: u32,
    /// Wire choices of the server.
    pub dialect: Dialect,
    /// Which of OpenAI's APIs the requests use.
    pub api: OpenAiApi,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
    /// Transport timeouts.
    pub timeouts: Timeouts,
}

impl OpenAiConfig {
    /// OpenAI's API.
    pub fn openai(api_key: impl Into<ApiKey>) -> Self {
        OpenAiConfig {
            name: "openai".into(),
            auth: Auth::Bearer(api_key.into()),
            base_url: "https://api.openai.com/v1".into(),
            default_model: "gpt-4.1".into(),
            context_window: 1_000_000,
            dialect: Dialect {
                max_tokens_field: MaxTokensField::MaxCompletionTokens,
                reasoning_effort: true,
            },
            api: OpenAiApi::ChatCompletions,
            headers: Vec::new(),
            timeouts: Timeouts::default(),
        }
    }

    /// OpenAI's Responses API (`POST {base}/responses`): reasoning items
    /// kept across turns with their encrypted content.
    pub fn openai_responses(api_key: impl Into<ApiKey>) -> Self {
        OpenAiConfig {
            name: "openai-responses".into(),
            api: OpenAiApi::Responses,
            ..OpenAiConfig::openai(api_key)
        }
    }

    /// OpenRouter.
    pub fn openrouter(api_key: impl Into<ApiKey>) -> Self {
        OpenAiConfig {
            name: "openrouter".into(),
            base_url: "https://openrouter.ai/api/v1".into(),
            default_model: "anthropic/claude-sonnet-4.5".into(),
            context_window: 200_000,
            dialect: Dialect {
                max_tokens_field: MaxTokensField::MaxTokens,
                reasoning_effort: true,
            },
            ..OpenAiConfig::openai(api_key)
        }
    }

    /// Cerebras.
    pub fn cerebras(api_key: impl Into<ApiKey>) -> Self {
        OpenAiConfig {
            name: "cerebras".into(),
            base_url: "https://api.cerebras.ai/v1".into(),
            default_model: "llama-3.3-70b".into(),
            context_window: 128_000,
            dialect: Dialect {
                max_tokens_field: MaxTokensField::MaxCompletionTokens,
                reasoning_effort: false,
            },
            ..OpenAiConfig::openai(api_key)
        }
    }

    /// Any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio) at
    /// `base_url` (including `/v1`), with an optional key.
    pub fn compatible(base_url: impl Into<String>, api_key: Option<ApiKey>) -> Self {
        OpenAiConfig {
            name: "openai-compatible".into(),
            auth: api_key.map_or(Auth::None, Auth::Bearer),
            base_url: base_url.into(),
            default_model: String::new(),
            context_window: 32_768,
            dialect: Dialect {
                max_tokens_field: MaxTokensField::MaxTokens,
                reasoning_effort: false,
            },
            api: OpenAiApi::ChatCompletions,
            headers: Vec::new(),
            timeouts: Timeouts::default(),
        }
    }

    /// With another API root.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// With another default model.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.default_model = model.into();
        self
    }

    /// With another provider name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// With other timeouts.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }
}

/// Which of OpenAI's APIs a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenAiApi {
    /// `POST {base}/chat/completions`: OpenAI and every compatible server.
    #[default]
    ChatCompletions,
    /// `POST {base}/responses`: OpenAI's Responses API.
    Responses,
}

/// The OpenAI Chat Completions API and compatible servers
/// (`POST {base}/chat/completions`, streamed), or OpenAI's Responses API
/// (`POST {base}/responses`) with [`OpenAiApi::Responses`].
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    config: OpenAiConfig,
    meta: ProviderMeta,
    client: HttpClient,
}

impl OpenAiProvider {
    /// A provider with its own connection pool.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let client = HttpClient::new(config.timeouts)?;
        Ok(Self::with_client(config, client))
    }

    /// A provider sharing `client`'s connection pool.
    pub fn with_client(config: OpenAiConfig, client: HttpClient) -> Self {
        let meta = ProviderMeta::new(
            config.default_model.clone(),
            config.context_window,
            Capabilities {
                thinking: false,
                cache_control: false,
                images: true,
                documents: true,
                count_tokens: false,
                decisions: true,
            },
        );
        OpenAiProvider { config, meta, client }
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn meta(&self) -> &ProviderMeta {
        &self.meta
    }

    fn stream(&self, options: &StreamOptions, signal: AbortSignal) -> EventStream {
        let options = if options.model.is_empty() {
            let mut owned = options.clone();
            owned.model = self.config.default_model.clone();
            std::borrow::Cow::Owned(owned)
        } else {
            std::borrow::Cow::Borrowed(options)
        };
        let (body, path) = match self.config.api {
            OpenAiApi::ChatCompletions => (
                RequestBody::chunks(openai::request_parts(&options, self.config.dialect)),
                "chat/completions",
            ),
            OpenAiApi::Responses => (responses::request_body(&options).into(), "responses"),
        };
        let name = self.config.name.clone();
        let url = format!("{}/{path}", self.config.base_url.trim_end_matches('/'));
        let mut builder = Request::post(url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream");
        let mut built = Ok(());
        match &self.config.auth {
            Auth::None => {}
            Auth::ApiKeyHeader(key) | Auth::Bearer(key) => match bearer(&name, key) {
                Ok(value) => builder = builder.header("authorization", value),
                Err(e) => built = Err(e),
            },
        }
        for (k, v) in &self.config.headers {
            if let (Ok(k), Ok(v)) = (HeaderName::try_from(k.as_str()), HeaderValue::try_from(v.as_str())) {
                builder = builder.header(k, v);
            }
        }
        let request = built.and_then(|()| {
            builder.body(body).map_err(|e| {
                ProviderError::new(ErrorKind::InvalidRequest, &name, "could not build the request").with_source(e)
            })
        });
        let client = self.client.clone();
        let secret = self.config.auth.secret();
        match self.config.api {
            OpenAiApi::ChatCompletions => {
                event_stream(open_stream(client, name, request, signal, secret, |n: &str| {
                    openai::Decoder::new(n)
                }))
            }
            OpenAiApi::Responses => event_stream(open_stream(client, name, request, signal, secret, |n: &str| {
                responses::Decoder::new(n)
            })),
        }
    }
}

/// Sends an OpenAI-format request and wraps the event stream in `decoder`.
async fn open_stream<D: crate::http::WireDecoder>(
    client: HttpClient,
    name: String,
    request: Result<Request<RequestBody>, ProviderError>,
    signal: AbortSignal,
    secret: Option<String>,
    decoder: fn(&str) -> D,
) -> Result<SseBody<hyper::body::Incoming, D>, ProviderError> {
    let response = client
        .send(&name, request?, &signal)
        .await
        .map_err(|e| redact(e, secret.as_deref()))?;
    expect_event_stream(&name, response.headers())?;
    let id = request_id(response.headers());
    let wire = decoder(&name);
    Ok(SseBody::new(response.into_body(), wire, client.timeouts().idle, signal, name, id).with_secret(secret))
}

fn redact(e: ProviderError, secret: Option<&str>) -> ProviderError {
    match secret {
        Some(secret) => e.redact(secret),
        None => e,
    }
}
