//! The messages the objects take and answer, and the names they share.

use serde::{Deserialize, Serialize};
use zidane_core::events::AgentStats;

use crate::journal::Control;

/// What `run` takes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRequest {
    /// The prompt.
    pub prompt: String,
    /// A system prompt for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// A turn cap for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// A goal the run works toward: it goes on past the model's answer
    /// until the goal's check passes or its budget is spent (`{"condition":
    /// "…", "check": {"kind": "command", "command": "…"}}`). Its progress is
    /// kept in the session: a later run with the same condition continues
    /// what it spent, and a replay takes each finished check's verdict from
    /// the journal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<zidane_agent::Goal>,
}

/// What `run` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResponse {
    /// The final assistant turn's text.
    pub text: String,
    /// The run's statistics.
    pub stats: AgentStats,
    /// Journal entries this attempt read back, and wrote.
    pub journal: JournalCounts,
    /// The session's goal and what it spent, when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<zidane_agent::GoalProgress>,
}

/// How much of an attempt came from the journal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalCounts {
    /// Entries read back from earlier attempts.
    pub replayed: u64,
    /// Entries this attempt wrote.
    pub written: u64,
}

/// A message for the run in flight (`steer`, `followUp`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageRequest {
    /// The message.
    pub text: String,
    /// An id of the client's choosing: a message sent again with the same
    /// id (a retry) is answered as the first was, and taken once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// `abort`'s input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortRequest {
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// An id of the client's choosing (see [`MessageRequest::id`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// `cancelTool`'s input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelToolRequest {
    /// The call.
    pub call_id: String,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// An id of the client's choosing (see [`MessageRequest::id`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// Whether a message reached a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// `true`: the session's run in flight took the message, wherever it
    /// runs: a turn of it reads a steer or a follow-up (unless the run is
    /// stopped first), an abort or a suspend stops it, a cancel reaches
    /// the call. `false`: it did not (no run is in flight, the run already
    /// decided to end, no such call), or it has not answered yet (then
    /// `pending`).
    pub delivered: bool,
    /// The run did not answer within ten seconds (it may be between two
    /// attempts): it may still take the message. Sent again with the same
    /// id, the message is answered as the run took it, never taken twice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
}

impl Delivery {
    pub(crate) fn answered(delivered: bool) -> Self {
        Delivery {
            delivered,
            pending: false,
        }
    }
}

/// The K/V key of the run invocation in flight, for the control handlers.
pub const RUN_INVOCATION_KEY: &str = "run-invocation";

/// The name the inbox object is registered under.
pub const INBOX_NAME: &str = "ZidaneInbox";

/// What the inbox takes: a control message for a run invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InboxMessage {
    /// The run's invocation id.
    pub invocation: String,
    /// The message.
    pub control: Control,
    /// The client's id for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}
