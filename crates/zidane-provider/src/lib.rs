//! The vocabulary every zidane crate speaks about models: messages and their
//! content blocks, session turns, per-turn usage and the options of one
//! streamed request.
//!
//! Architecture invariant: this crate knows nothing of hooks, tool execution
//! or the run loop. Without its HTTP features it pulls no hyper, rustls or
//! tokio; the model types here depend on serde alone.

mod message;
mod options;
#[cfg(test)]
mod tests;
mod usage;

pub use message::{
    ContentBlock, DocumentSource, ImageSource, Message, Role, SessionTurn, ToolResultContent,
};
pub use options::{
    CacheTtl, SYSTEM_PROMPT_BOUNDARY, StreamOptions, ThinkingLevel, ToolChoice, ToolSpec,
};
pub use usage::{FinishReason, TurnUsage};
