//! The vocabulary every zidane crate speaks about models, and the providers
//! that talk to them.
//!
//! - The message model: [`Message`], [`ContentBlock`], [`SessionTurn`],
//!   [`TurnUsage`], [`StreamOptions`].
//! - The [`Provider`] trait, its [`StreamEvent`]s and the
//!   [`MessageAccumulator`] that folds them into an [`AssistantMessage`].
//! - The wire formats, usable with any HTTP client: [`anthropic`] (Messages)
//!   and [`openai`] (Chat Completions and compatible servers), over the
//!   [`sse`] decoder.
//! - Classified errors ([`ProviderError`], [`ErrorKind`]), cancellation
//!   ([`AbortController`], [`AbortSignal`]) and [`Pricing`].
//!
//! Architecture invariant: this crate knows nothing of hooks, tool execution
//! or the run loop. Without its `http` feature it pulls no hyper, rustls or
//! tokio.

mod abort;
pub mod anthropic;
#[cfg(feature = "http")]
mod clients;
mod error;
mod event;
#[cfg(feature = "http")]
pub mod http;
mod message;
pub mod openai;
mod options;
mod pricing;
mod provider;
pub mod responses;
#[cfg(feature = "test-util")]
pub mod scripted;
pub mod sse;
#[cfg(test)]
mod tests;
mod usage;

pub use abort::{AbortController, AbortSignal, Aborted};
pub use error::{
    ErrorKind, ProviderError, classify_status, classify_stream_error, retry_after_from_headers,
    retry_after_from_message,
};
pub use event::{
    AssistantMessage, IncompleteToolCall, MessageAccumulator, ProviderDiagnostic, StreamEvent, UsageReport,
};
pub use message::{
    Content, ContentBlock, DocumentSource, ImageSource, Message, Role, SessionTurn, ToolResultContent,
    unresolved_ref_text,
};
pub use options::{CacheTtl, SYSTEM_PROMPT_BOUNDARY, StreamOptions, ThinkingLevel, ToolChoice, ToolSpec};
pub use pricing::{ModelPrice, Pricing};
pub use provider::{BoxFuture, Capabilities, EventStream, Provider, ProviderMeta, complete};
pub use usage::{FinishReason, TurnUsage};

#[cfg(feature = "http")]
pub use clients::{AnthropicConfig, AnthropicProvider, Auth, OpenAiApi, OpenAiConfig, OpenAiProvider};
#[cfg(feature = "http")]
pub use http::{ApiKey, HttpClient, RequestBody, Timeouts};
