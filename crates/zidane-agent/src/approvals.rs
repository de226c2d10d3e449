//! Tool-call interceptors and approvals: a chain that may allow, deny,
//! rewrite or ask about each call before the gate, and the host's approver
//! that answers an `ask` (a person, often). Approvals can be remembered for
//! the rest of the session ("always allow this tool / commands starting
//! with this"); they are kept in the session's metadata, so a resumed or
//! later run honours them, and a sub-agent shares its root's.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zidane_provider::{AbortSignal, BoxFuture};

/// A tool call as interceptors and approvers see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The canonical tool name.
    pub name: String,
    /// The call id.
    pub call_id: String,
    /// The input (as rewritten by the interceptors before, in the chain).
    pub input: Value,
    /// The run.
    pub run_id: String,
    /// The session of the agent making the call, if any.
    pub session_id: Option<String>,
    /// The spawning run, for a sub-agent's call.
    pub parent_run_id: Option<String>,
    /// The agent's depth (0 for the root).
    pub depth: u32,
}

/// What an interceptor says about a call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCallVerdict {
    /// Nothing against it.
    Allow,
    /// Refused; the model reads `Blocked: <reason>`. Ends the chain.
    Deny {
        /// Why.
        reason: String,
    },
    /// Go on with this input (the next interceptors see it).
    Rewrite {
        /// The new input.
        input: Value,
    },
    /// Needs the approver's yes (unless an approval remembered for the
    /// session covers it). Without an approver, the call is refused.
    Ask {
        /// Why it needs approval (shown to the person).
        reason: Option<String>,
    },
}

/// Looks at each tool call before the gate.
pub trait ToolCallInterceptor: Send + Sync {
    /// The verdict on `call`.
    fn intercept<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, ToolCallVerdict>;
}

/// An interceptor made of a function.
pub struct FnInterceptor<F>(pub F);

impl<F> ToolCallInterceptor for FnInterceptor<F>
where
    F: Fn(&ToolCall) -> ToolCallVerdict + Send + Sync,
{
    fn intercept<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, ToolCallVerdict> {
        let verdict = (self.0)(call);
        Box::pin(async move { verdict })
    }
}

/// What an approver is asked.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalRequest<'a> {
    /// The call (with the interceptors' rewrites).
    pub call: &'a ToolCall,
    /// Why an interceptor asked.
    pub reason: Option<&'a str>,
    /// Aborts when the run does: stop waiting then.
    pub signal: &'a AbortSignal,
}

/// An approval kept for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "camelCase")]
pub enum RememberedApproval {
    /// Every call of this tool.
    Tool(String),
    /// `shell` commands that are this prefix or start with it and a space,
    /// and hold no shell operator (`;`, `&`, `|`, `` ` ``, `$(`, `>`, `<`,
    /// a newline): `cargo test` covers `cargo test -p x`, never
    /// `cargo test; rm -rf ~`.
    CommandPrefix(String),
}

impl RememberedApproval {
    /// Whether this covers a call of `name` with `input`.
    pub fn covers(&self, name: &str, input: &Value) -> bool {
        match self {
            RememberedApproval::Tool(tool) => tool == name,
            RememberedApproval::CommandPrefix(prefix) => {
                let Some(command) = input.get("command").and_then(Value::as_str) else {
                    return false;
                };
                let command = command.trim();
                name == "shell"
                    && !prefix.trim().is_empty()
                    && !command.contains([';', '&', '|', '`', '>', '<', '\n'])
                    && !command.contains("$(")
                    && (command == prefix || command.starts_with(&format!("{prefix} ")))
            }
        }
    }
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run it, this once.
    Approve,
    /// Run it, and what this names for the rest of the session.
    ApproveAlways(RememberedApproval),
    /// Do not run it.
    Decline {
        /// Why (the model reads it); default: the user declined.
        reason: Option<String>,
    },
}

/// Answers an interceptor's `ask` (the spec's `approveToolCall`).
pub trait ToolCallApprover: Send + Sync {
    /// The decision on one call; may wait for a person.
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision>;
}

/// Where a session keeps its remembered approvals.
pub(crate) const APPROVALS_KEY: &str = "approvals.remembered";
