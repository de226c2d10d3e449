//! `create_agent` and the `Agent`: one `run()` over a provider, tools, hooks
//! and a session; sessions in a store (`zidane_core::session`: memory, or
//! one SQLite file with the `sqlite` feature), durable runs on a checkpoint
//! backend (`zidane_core::durable`), compaction, cache estimates, context
//! accounting, decisions, and where tools run.
//!
//! Architecture invariant: the agent composes the crates below it (loop,
//! providers, telemetry, run summary, MCP) and is the only one that does;
//! nothing below it names it. Turns reach the session through the loop's
//! `TurnSink`, compaction through its `Compactor` seam.

mod agent;
mod approvals;
mod background;
mod binding;
mod cache;
pub mod checkpoints;
mod compact;
mod context;
mod decide;
mod durable;
mod error;
mod extensions;
mod goal;
mod mcp;
mod options;
mod output;
#[cfg(feature = "postgres")]
mod postgres;
mod resume;
mod run_options;
mod skills;
#[cfg(feature = "sqlite")]
mod sqlite;
mod stream;
mod subagents;

pub use agent::{Agent, create_agent, hook_names, new_session_id};
pub use approvals::{
    ApprovalDecision, ApprovalRequest, FnInterceptor, RememberedApproval, ToolCall, ToolCallApprover,
    ToolCallInterceptor, ToolCallVerdict,
};
pub use background::BACKGROUND_TASKS_KEY;
pub use compact::{AutoCompact, CompactOptions, CompactionResult};
pub use context::{ContextBreakdown, ContextCategory, ContextOptions, ContextSegment, SegmentSource};
pub use decide::{
    DEFAULT_DECISION_TIMEOUT, DecideHookContext, DecisionError, DecisionRequest, DecisionResult, Decisions,
};
pub use durable::DurableOptions;
pub use error::{AgentError, BuildError};
#[cfg(feature = "mcp")]
pub use extensions::McpConfigTransform;
pub use extensions::{
    BehaviorTransform, ContextSection, Extension, RunTransform, ToolCatalogTransform, ToolResultMetadataFn,
};
pub use goal::{
    DEFAULT_GOAL_CHECK_TIMEOUT, DEFAULT_GOAL_MAX_CHECKS, DEFAULT_GOAL_MAX_DURATION, DEFAULT_GOAL_MAX_TURNS, GOAL_KEY,
    Goal, GoalBudget, GoalCheck, GoalProgress, GoalStatus, GoalVerdict,
};
pub use options::AgentOptions;
pub use output::RunOutput;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresError, PostgresOptions, PostgresRuntime, PostgresStore};
pub use run_options::{
    AgentCacheChange, AgentCacheImpact, AgentRunOptions, DurableResumeOptions, Prompt, QueuedMessageOptions,
    SuspendOptions,
};
pub use skills::{
    ActiveSkill, SkillDefinition, SkillError, SkillPolicy, SkillProblem, SkillsConfig, load_skill_folders, parse_skill,
};
#[cfg(feature = "sqlite")]
pub use sqlite::{CheckpointOptions, CheckpointRuntime, DEFAULT_GROUP_COMMIT, OpenError, SqliteStore, Synchronous};
pub use stream::{RunEvent, RunStream};
pub use subagents::{
    CHILD_SESSION_MARK, RECORD_SESSION_PREFIX, SpawnConfig, SubagentDefinition, SubagentTools, child_session_id,
    is_conversation, spawning_call_id,
};
