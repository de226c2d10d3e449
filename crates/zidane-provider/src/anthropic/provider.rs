//! The Anthropic provider: the Messages protocol over HTTP, with
//! `count_tokens`.

use serde::Deserialize;

use super::Messages;
use crate::error::{ErrorKind, ProviderError};
use crate::http::{ApiKey, Auth, Endpoint, HttpClient, HttpProvider, Timeouts};
use crate::options::StreamOptions;
use crate::provider::{BoxFuture, EventStream, Provider, ProviderMeta};

/// Settings of an [`AnthropicProvider`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AnthropicConfig {
    /// The provider's name (unique among an agent's providers).
    pub name: String,
    /// Credentials.
    pub auth: Auth,
    /// The server's root, as the official SDK takes it
    /// (`https://api.anthropic.com`); `/v1/messages` is appended. A root
    /// given with `/v1` (as [`OpenAiConfig`](crate::OpenAiConfig) takes
    /// it) is accepted: the `/v1` is not doubled.
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

    /// An Anthropic-compatible server at `base_url` (its root, with or
    /// without `/v1`) that needs no credentials: a local server or a
    /// gateway that authenticates on its own.
    ///
    /// ```
    /// use zidane::providers::anthropic::AnthropicConfig;
    /// # mod zidane { pub mod providers { pub mod anthropic { pub use zidane_provider::anthropic::*; } } }
    ///
    /// // Both send to `http://localhost:8080/v1/messages`.
    /// let root = AnthropicConfig::keyless("http://localhost:8080");
    /// let v1 = AnthropicConfig::keyless("http://localhost:8080/v1");
    /// # let _ = (root, v1);
    /// ```
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

    /// With an API key (Anthropic's `x-api-key` header).
    pub fn with_api_key(mut self, api_key: impl Into<ApiKey>) -> Self {
        self.auth = Auth::ApiKeyHeader(api_key.into());
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

impl AnthropicConfig {
    fn endpoint(&self) -> Endpoint {
        Endpoint {
            name: self.name.clone(),
            auth: self.auth.clone(),
            base_url: crate::http::root_without_v1(&self.base_url),
            default_model: self.default_model.clone(),
            context_window: self.context_window,
            headers: self.headers.clone(),
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The Anthropic Messages API (`POST /v1/messages`, streamed).
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    http: HttpProvider<Messages>,
}

impl AnthropicProvider {
    /// A provider with its own connection pool.
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let client = HttpClient::new(config.timeouts)?;
        Ok(Self::with_client(config, client))
    }

    /// A provider sharing `client`'s connection pool.
    pub fn with_client(config: AnthropicConfig, client: HttpClient) -> Self {
        let wire = Messages {
            betas: config.betas.clone(),
        };
        AnthropicProvider {
            http: HttpProvider::new(config.endpoint(), wire, client),
        }
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        self.http.name()
    }

    fn meta(&self) -> &ProviderMeta {
        self.http.meta()
    }

    fn stream(&self, options: &StreamOptions, signal: crate::abort::AbortSignal) -> EventStream {
        self.http.stream(options, signal)
    }

    fn count_tokens<'a>(&'a self, options: &'a StreamOptions) -> Option<BoxFuture<'a, Result<u64, ProviderError>>> {
        Some(Box::pin(async move {
            let options = self.http.with_default_model(options)?;
            let wire = self.http.wire().count_tokens_request(&options);
            let bytes = self.http.send_for_body(self.http.request(wire)?).await?;
            #[derive(Deserialize)]
            struct Count {
                input_tokens: u64,
            }
            serde_json::from_slice::<Count>(&bytes)
                .map(|c| c.input_tokens)
                .map_err(|e| {
                    ProviderError::new(
                        ErrorKind::InvalidResponse,
                        self.http.name(),
                        format!("count_tokens answer: {e}"),
                    )
                })
        }))
    }
}
