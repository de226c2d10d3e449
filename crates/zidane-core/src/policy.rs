//! The tool-call policy the loop asks before the gate (the agent's
//! interceptors and approvals).

use serde_json::Value;
use zidane_provider::{AbortSignal, BoxFuture};

/// A tool call about to go through the gate, as a [`ToolCallPolicy`] sees
/// it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    /// The canonical tool name.
    pub name: String,
    /// The call id.
    pub call_id: String,
    /// The input the model gave.
    pub input: Value,
    /// The run.
    pub run_id: String,
}

/// What a [`ToolCallPolicy`] decides.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyVerdict {
    /// The call goes on to the gate.
    Allow,
    /// The call is refused; the model reads `Blocked: <reason>`.
    Deny(String),
    /// The call goes on with this input instead.
    Rewrite(Value),
}

/// Decides each tool call before the gate (the agent's interceptors and
/// approvals). It may take its time: a person may be asked; `signal`
/// aborts with the run.
pub trait ToolCallPolicy: Send + Sync {
    /// Decides `call`.
    fn check<'a>(&'a self, call: &'a ToolCallRequest, signal: &'a AbortSignal) -> BoxFuture<'a, PolicyVerdict>;
}
