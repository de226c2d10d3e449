//! Tool-call interceptors and approvals: a chain that may allow, deny,
//! rewrite or ask about each call before the gate, and the host's approver
//! that answers an `ask` (a person, often). Approvals can be remembered for
//! the rest of the session ("always allow this tool / commands starting
//! with this"); they are kept in the session's metadata, so a resumed or
//! later run honours them, and a sub-agent shares its root's.

use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zidane_core::seams::{PolicyVerdict, ToolCallPolicy, ToolCallRequest};
use zidane_provider::{AbortSignal, BoxFuture};

use crate::agent::{Agent, Inner, lock};

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

/// What a tree of agents shares: the remembered approvals live in the
/// root's session (or here, without one).
#[derive(Default)]
pub(crate) struct Approvals {
    root: OnceLock<Weak<Inner>>,
    unsaved: Mutex<Vec<RememberedApproval>>,
}

impl Approvals {
    pub(crate) fn bind_root(&self, root: Weak<Inner>) {
        let _ = self.root.set(root);
    }

    fn root(&self) -> Option<Agent> {
        self.root.get()?.upgrade().map(|inner| Agent { inner })
    }

    fn remembered(&self) -> Vec<RememberedApproval> {
        let from_session = self.root().and_then(|root| {
            lock(&root.inner.session)
                .as_ref()
                .and_then(|s| s.metadata.get(APPROVALS_KEY).cloned())
        });
        let mut all: Vec<RememberedApproval> = from_session
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        all.extend(
            self.unsaved
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .cloned(),
        );
        all
    }

    async fn remember(&self, approval: RememberedApproval) {
        let root = self.root();
        let has_session = root.as_ref().is_some_and(|r| lock(&r.inner.session).is_some());
        if let (Some(root), true) = (root, has_session) {
            let mut all: Vec<RememberedApproval> = lock(&root.inner.session)
                .as_ref()
                .and_then(|s| s.metadata.get(APPROVALS_KEY).cloned())
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default();
            if !all.contains(&approval) {
                all.push(approval.clone());
            }
            let value = serde_json::to_value(&all).unwrap_or(Value::Null);
            if root.set_session_meta(APPROVALS_KEY, value).await.is_ok() {
                return;
            }
            tracing::warn!(target: "zidane", "a remembered approval could not be kept in the session; it holds for this process");
        }
        self.unsaved
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(approval);
    }
}

/// The agent's interceptors and approver, as the loop's policy.
pub(crate) struct Policy {
    pub(crate) interceptors: Vec<Arc<dyn ToolCallInterceptor>>,
    pub(crate) approver: Option<Arc<dyn ToolCallApprover>>,
    pub(crate) approvals: Arc<Approvals>,
    /// The agent the policy decides for (session, depth, parent run).
    pub(crate) agent: Weak<Inner>,
}

impl Policy {
    async fn decide(&self, request: &ToolCallRequest, signal: &AbortSignal) -> PolicyVerdict {
        let agent = self.agent.upgrade();
        let (session_id, parent_run_id, depth) = match &agent {
            Some(inner) => (
                lock(&inner.session).as_ref().map(|s| s.id.clone()),
                inner.looped.config().parent_run_id.clone(),
                inner.lineage.depth,
            ),
            None => (None, None, 0),
        };
        drop(agent);
        let mut call = ToolCall {
            name: request.name.clone(),
            call_id: request.call_id.clone(),
            input: request.input.clone(),
            run_id: request.run_id.clone(),
            session_id,
            parent_run_id,
            depth,
        };
        let mut ask: Option<Option<String>> = None;
        for interceptor in &self.interceptors {
            match interceptor.intercept(&call).await {
                ToolCallVerdict::Allow => {}
                ToolCallVerdict::Deny { reason } => return PolicyVerdict::Deny(reason),
                ToolCallVerdict::Rewrite { input } => call.input = input,
                ToolCallVerdict::Ask { reason } => {
                    if ask.is_none() {
                        ask = Some(reason);
                    }
                }
            }
        }
        if let Some(reason) = ask {
            let covered = self
                .approvals
                .remembered()
                .iter()
                .any(|a| a.covers(&call.name, &call.input));
            if !covered {
                let Some(approver) = &self.approver else {
                    let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
                    return PolicyVerdict::Deny(format!(
                        "`{}` needs approval{why} and there is nobody to approve it",
                        call.name
                    ));
                };
                let decision = tokio::select! {
                    biased;
                    () = signal.aborted() => {
                        return PolicyVerdict::Deny("the run was stopped while the call waited for approval".into());
                    }
                    decision = approver.approve(ApprovalRequest {
                        call: &call,
                        reason: reason.as_deref(),
                        signal,
                    }) => decision,
                };
                match decision {
                    ApprovalDecision::Approve => {}
                    ApprovalDecision::ApproveAlways(remembered) => self.approvals.remember(remembered).await,
                    ApprovalDecision::Decline { reason } => {
                        return PolicyVerdict::Deny(reason.unwrap_or_else(|| "the user declined this call".into()));
                    }
                }
            }
        }
        if call.input == request.input {
            PolicyVerdict::Allow
        } else {
            PolicyVerdict::Rewrite(call.input)
        }
    }
}

impl ToolCallPolicy for Policy {
    fn check<'a>(&'a self, call: &'a ToolCallRequest, signal: &'a AbortSignal) -> BoxFuture<'a, PolicyVerdict> {
        Box::pin(self.decide(call, signal))
    }
}

impl Agent {
    /// The approvals remembered for this agent's session (its root's, for
    /// a sub-agent).
    pub fn remembered_approvals(&self) -> Vec<RememberedApproval> {
        self.inner.lineage.approvals.remembered()
    }
}
