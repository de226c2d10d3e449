//! The agent's tool-call policy: its interceptors and approver, and the
//! approvals a tree of agents remembers.

use crate::agent::{Agent, Inner};
use crate::approvals::{
    APPROVALS_KEY, ApprovalDecision, ApprovalRequest, RememberedApproval, ToolCall, ToolCallApprover,
    ToolCallInterceptor, ToolCallVerdict,
};
use parking_lot::Mutex;
use serde_json::Value;
use std::sync::{Arc, OnceLock, Weak};
use zidane_core::seams::{PolicyVerdict, ToolCallPolicy, ToolCallRequest};
use zidane_provider::{AbortSignal, BoxFuture};

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
            root.inner
                .session
                .state()
                .as_ref()
                .and_then(|s| s.metadata.get(APPROVALS_KEY).cloned())
        });
        let mut all: Vec<RememberedApproval> = from_session
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        all.extend(self.unsaved.lock().iter().cloned());
        all
    }

    async fn remember(&self, approval: RememberedApproval) {
        let root = self.root();
        let has_session = root.as_ref().is_some_and(|r| r.inner.session.state().is_some());
        if let (Some(root), true) = (root, has_session) {
            let mut all: Vec<RememberedApproval> = root
                .inner
                .session
                .state()
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
        self.unsaved.lock().push(approval);
    }
}

/// The agent's interceptors and approver, as the loop's policy.
pub(crate) struct Policy {
    pub(crate) interceptors: Vec<Arc<dyn ToolCallInterceptor>>,
    pub(crate) approver: Option<Arc<dyn ToolCallApprover>>,
    pub(crate) approvals: Arc<Approvals>,
    /// The agent the policy decides for (session, depth, parent run).
    pub(crate) agent: Weak<Inner>,
    /// Calls whose verdict a person gave, not yet reported by `asked`.
    pub(crate) asked: parking_lot::Mutex<std::collections::HashSet<String>>,
}

impl Policy {
    async fn decide(&self, request: &ToolCallRequest, signal: &AbortSignal) -> PolicyVerdict {
        let agent = self.agent.upgrade();
        let (session_id, parent_run_id, depth) = match &agent {
            Some(inner) => (
                inner.session.state().as_ref().map(|s| s.id.clone()),
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
                self.asked.lock().insert(call.call_id.clone());
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

    fn asked(&self, call_id: &str) -> bool {
        self.asked.lock().remove(call_id)
    }
}

impl Agent {
    /// The approvals remembered for this agent's session (its root's, for
    /// a sub-agent).
    pub fn remembered_approvals(&self) -> Vec<RememberedApproval> {
        self.inner.lineage.approvals.remembered()
    }
}
