//! The core of the `zidane` program: everything a front end (the terminal
//! session, the one-shot printer, an editor over ACP, a server) shares, and
//! nothing that knows a terminal.
//!
//! - Settings: a run's [`Flags`] as given, resolved over the layered
//!   configuration and trust into [`Settings`] ([`config::load`]).
//! - The folder's [`Setup`]: the sessions file and its durable runtime, the
//!   checkpoints, the provider's kind and window, the instruction files.
//! - A [`Conversation`]: one session's agent with its permission rules,
//!   command hooks, custom commands, attachments, plan mode and approvals,
//!   the one prompt pipeline ([`Conversation::submit`]), and one stream of
//!   UI-neutral [`Event`]s out.
//! - Operations that are not conversations: checkpoints ([`checkpoints`]),
//!   the built-in slash commands' table ([`slash`]).
//!
//! Architecture invariant: nothing here prints or reads a terminal; what a
//! person sees leaves as an [`Event`] or a returned value, and what a
//! person answers comes back through a [`Question`]'s reply.

pub mod ask;
pub mod attach;
pub mod checkpoints;
pub mod command_hooks;
pub mod commands;
pub mod compact;
pub mod config;
mod conversation;
mod deferred;
pub mod diff;
mod error;
mod event;
mod feed;
pub mod init;
pub mod instructions;
pub mod local_model;
pub mod memory;
mod modes;
pub mod paths;
mod permissions;
pub mod plan;
pub mod review;
mod savings;
pub mod schedule;
mod settings;
mod setup;
pub mod slash;
mod window;

pub use crate::config::{TrustAnswer, TrustQuestion};
pub use crate::conversation::{
    CompactOutcome, ContextReport, Conversation, CostReport, FOLDER_KEY, GoalAction, ModelCost, ModelSwitch,
    SkillState, Submission,
};
pub use crate::conversation::{GOAL_USAGE, describe_goal, goal_of};
pub use crate::conversation::{NO_LANGUAGE_SERVER, diagnostics_tally, language_server_lines};
pub use crate::error::Error;
pub use crate::event::{Answer, Ask, Form, Question};
pub use crate::event::{
    CheckpointNote, ChildRef, Event, Events, McpState, Outcome, Retry, RunEnd, TaskEnd, ToolCallEvent, ToolResultEvent,
    TurnFigures,
};
pub use crate::settings::{Approve, Flags, Given, Notifications, SandboxFlag, Settings, StatusLine, Theme, Thinking};
pub use crate::setup::{
    ExecutionWrap, Setup, ShellCalls, execution, latest_session, mcp_servers, new_session_id, open_runtime, session_id,
};

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
