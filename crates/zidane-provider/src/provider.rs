//! The provider trait every model backend implements.

use std::future::Future;
use std::pin::Pin;

use futures_core::Stream;

use crate::abort::AbortSignal;
use crate::error::ProviderError;
use crate::event::StreamEvent;
use crate::options::StreamOptions;

/// The events of one streamed response, ending with [`StreamEvent::End`] or
/// an error.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

/// A boxed `Send` future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a provider can do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Extended thinking with signed reasoning blocks.
    pub thinking: bool,
    /// Prompt caching with explicit breakpoints.
    pub cache_control: bool,
    /// Image input.
    pub images: bool,
    /// Document (PDF) input.
    pub documents: bool,
    /// Exact token counting.
    pub count_tokens: bool,
    /// Answers typed decision requests (a JSON answer to a schema), so
    /// `Decisions::Auto` may pick it.
    pub decisions: bool,
}

/// Static facts about a provider.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderMeta {
    /// Model used when a request names none.
    pub default_model: String,
    /// Context window of the default model, in tokens.
    pub context_window: u32,
    /// What the provider supports.
    pub capabilities: Capabilities,
}

impl ProviderMeta {
    /// Meta for `default_model` with a context window and capabilities.
    pub fn new(default_model: impl Into<String>, context_window: u32, capabilities: Capabilities) -> Self {
        ProviderMeta {
            default_model: default_model.into(),
            context_window,
            capabilities,
        }
    }
}

/// A model backend: streams one response per request.
pub trait Provider: Send + Sync {
    /// The provider's name, unique among the providers of one agent.
    fn name(&self) -> &str;

    /// Static facts: default model, context window, capabilities.
    fn meta(&self) -> &ProviderMeta;

    /// Starts one request. Aborting `signal` ends the stream with an
    /// [`crate::ErrorKind::Aborted`] error.
    fn stream(&self, options: &StreamOptions, signal: AbortSignal) -> EventStream;

    /// Counts the input tokens `options` would send, when the provider has an
    /// endpoint for it.
    fn count_tokens<'a>(&'a self, _options: &'a StreamOptions) -> Option<BoxFuture<'a, Result<u64, ProviderError>>> {
        None
    }
}

/// Sends one request and folds its whole stream into the assistant message.
///
/// The first error (transport, provider, abort) ends the call; events
/// received before it are dropped.
pub async fn complete(
    provider: &dyn Provider,
    options: &StreamOptions,
    signal: AbortSignal,
) -> Result<crate::event::AssistantMessage, ProviderError> {
    let mut stream = provider.stream(options, signal);
    let mut acc = crate::event::MessageAccumulator::new();
    while let Some(event) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
        acc.push(&event?);
    }
    Ok(acc.finish())
}
