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

impl PolicyVerdict {
    /// The verdict as a durable step records it.
    pub fn to_value(&self) -> Value {
        match self {
            PolicyVerdict::Allow => serde_json::json!({ "allow": true }),
            PolicyVerdict::Deny(reason) => serde_json::json!({ "deny": reason }),
            PolicyVerdict::Rewrite(input) => serde_json::json!({ "rewrite": input }),
        }
    }

    /// A recorded verdict; `None` for a value that is not one.
    pub fn from_value(value: &Value) -> Option<Self> {
        if value.get("allow").and_then(Value::as_bool) == Some(true) {
            return Some(PolicyVerdict::Allow);
        }
        if let Some(reason) = value.get("deny").and_then(Value::as_str) {
            return Some(PolicyVerdict::Deny(reason.to_owned()));
        }
        value.get("rewrite").map(|input| PolicyVerdict::Rewrite(input.clone()))
    }
}

/// Decides each tool call before the gate (the agent's interceptors and
/// approvals). It may take its time: a person may be asked; `signal`
/// aborts with the run.
pub trait ToolCallPolicy: Send + Sync {
    /// Decides `call`.
    fn check<'a>(&'a self, call: &'a ToolCallRequest, signal: &'a AbortSignal) -> BoxFuture<'a, PolicyVerdict>;

    /// Whether the last verdict on `call_id` came from a person (an
    /// approval asked and answered), forgetting it: the loop makes such a
    /// verdict durable at once rather than with the turn's next write, so
    /// a crash never asks the person again. Default: `false`.
    fn asked(&self, call_id: &str) -> bool {
        let _ = call_id;
        false
    }
}
