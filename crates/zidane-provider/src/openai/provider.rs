//! The OpenAI provider: Chat Completions (OpenAI and every compatible
//! server) or the Responses API, over HTTP.

use super::{ChatCompletions, Dialect, MaxTokensField};
use crate::abort::AbortSignal;
use crate::error::ProviderError;
use crate::http::{ApiKey, Auth, Endpoint, HttpClient, HttpProvider, Timeouts};
use crate::options::StreamOptions;
use crate::provider::{EventStream, Provider, ProviderMeta};
use crate::responses::Responses;

/// Settings of an [`OpenAiProvider`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// The provider's name (unique among an agent's providers).
    pub name: String,
    /// Credentials (a bearer token, or none for local servers).
    pub auth: Auth,
    /// The API root including `/v1`, as the official SDK takes it
    /// (`https://api.openai.com/v1`); `/chat/completions` is appended. A
    /// bare server root (`http://localhost:11434`, as
    /// [`AnthropicConfig`](crate::AnthropicConfig) takes it) gets `/v1`;
    /// any other path is kept (`https://openrouter.ai/api/v1`).
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
                prompt_progress: false,
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
                prompt_progress: false,
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
                prompt_progress: false,
            },
            ..OpenAiConfig::openai(api_key)
        }
    }

    /// Any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio) at
    /// `base_url` (its root, with or without `/v1`), with an optional key.
    ///
    /// Such a server has no default model: name it with
    /// [`with_model`](Self::with_model) (or in each request); a request
    /// with no model fails before it is sent, with an error that says so.
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
                prompt_progress: false,
            },
            api: OpenAiApi::ChatCompletions,
            headers: Vec::new(),
            timeouts: Timeouts::default(),
        }
    }

    /// An OpenAI-compatible server at `base_url` that needs no
    /// credentials, serving `model`: the same as
    /// `compatible(base_url, None).with_model(model)`, and the shape of
    /// [`AnthropicConfig::keyless`](crate::AnthropicConfig::keyless). Add a
    /// key with [`with_api_key`](Self::with_api_key).
    pub fn keyless(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig::compatible(base_url, None).with_model(model)
    }

    /// With an API key (sent as a bearer token).
    pub fn with_api_key(mut self, api_key: impl Into<ApiKey>) -> Self {
        self.auth = Auth::Bearer(api_key.into());
        self
    }

    /// With other credentials.
    pub fn with_auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
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
    http: Api,
}

#[derive(Debug, Clone)]
enum Api {
    Chat(HttpProvider<ChatCompletions>),
    Responses(HttpProvider<Responses>),
}

impl OpenAiProvider {
    /// A provider with its own connection pool.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let client = HttpClient::new(config.timeouts)?;
        Ok(Self::with_client(config, client))
    }

    /// A provider sharing `client`'s connection pool.
    pub fn with_client(config: OpenAiConfig, client: HttpClient) -> Self {
        let endpoint = Endpoint {
            name: config.name,
            auth: config.auth,
            base_url: crate::http::root_with_v1(&config.base_url),
            default_model: config.default_model,
            context_window: config.context_window,
            headers: config.headers,
        };
        let http = match config.api {
            OpenAiApi::ChatCompletions => Api::Chat(HttpProvider::new(
                endpoint,
                ChatCompletions {
                    dialect: config.dialect,
                },
                client,
            )),
            OpenAiApi::Responses => Api::Responses(HttpProvider::new(endpoint, Responses, client)),
        };
        OpenAiProvider { http }
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        match &self.http {
            Api::Chat(p) => p.name(),
            Api::Responses(p) => p.name(),
        }
    }

    fn meta(&self) -> &ProviderMeta {
        match &self.http {
            Api::Chat(p) => p.meta(),
            Api::Responses(p) => p.meta(),
        }
    }

    fn stream(&self, options: &StreamOptions, signal: AbortSignal) -> EventStream {
        match &self.http {
            Api::Chat(p) => p.stream(options, signal),
            Api::Responses(p) => p.stream(options, signal),
        }
    }
}
