//! The vocabulary every zidane crate speaks about models, and the providers
//! that talk to them.
//!
//! - The message model: [`Message`], [`ContentBlock`], [`SessionTurn`],
//!   [`TurnUsage`], [`StreamOptions`].
//! - The [`Provider`] trait, its [`StreamEvent`]s and the
//!   [`MessageAccumulator`] that folds them into an [`AssistantMessage`].
//! - The wire protocols, usable with any HTTP client: [`anthropic`]
//!   (Messages), [`openai`] (Chat Completions and compatible servers) and
//!   [`responses`] (OpenAI's Responses API), each a [`WireProtocol`] over the
//!   [`sse`] decoder; with the `http` feature, [`HttpProvider`] runs any of
//!   them over the pooled client, and each folder adds its provider
//!   (`anthropic::AnthropicProvider`, `openai::OpenAiProvider`).
//! - Classified errors ([`ProviderError`], [`ErrorKind`]), cancellation
//!   ([`AbortController`], [`AbortSignal`]) and [`Pricing`].
//!
//! Architecture invariant: this crate knows nothing of hooks, tool execution
//! or the run loop. Without its `http` feature it pulls no hyper, rustls or
//! tokio.

mod abort;
pub mod anthropic;
#[cfg(feature = "http")]
mod choose;
mod error;
mod event;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "http")]
mod kind;
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
mod text_tools;
pub mod time;
mod usage;
#[cfg(feature = "http")]
mod window;
mod wire;

pub use abort::{AbortController, AbortSignal, Aborted};
pub use error::{
    ErrorKind, ProviderError, classify_status, classify_stream_error, retry_after_from_headers,
    retry_after_from_message, write_report,
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
pub use text_tools::{TextToolCalls, TextToolMode, is_tool_parse_failure};
pub use time::Timestamp;
pub use usage::{FinishReason, TurnUsage};

pub use wire::{WireDecoder, WireProtocol, WireRequest};

#[cfg(feature = "http")]
pub use anthropic::{AnthropicConfig, AnthropicProvider};
#[cfg(feature = "http")]
pub use choose::{
    ChoiceError, LOCAL_IDLE_TIMEOUT, ProviderChoice, ProviderKind, check_base_url, is_local_url, shown_url,
};
#[cfg(feature = "http")]
pub use http::{
    ApiKey, Auth, Endpoint, HttpClient, HttpProvider, LIVENESS_RECHECK, Liveness, RequestBody, ResponseBody, Timeouts,
};
#[cfg(feature = "http")]
pub use openai::{OpenAiApi, OpenAiConfig, OpenAiProvider};
#[cfg(feature = "http")]
pub use window::{
    DEFAULT_LOCAL_WINDOW, NoticeFn, ResolvedWindow, SlotLiveness, Window, discover_window, known_window,
    resolve_window, slots_busy,
};
