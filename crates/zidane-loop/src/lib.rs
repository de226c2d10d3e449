//! The agent run loop of zidane: turns, the tool pipeline, retries and
//! fallback, context-overflow recovery, budgets and guards.
//!
//! Architecture invariant: the hook vocabulary, the `Tool` trait and the
//! seams this loop calls are contracts of `zidane-core`; the loop emits only
//! loop events itself. It never connects MCP servers or builds agents;
//! spawning goes through a trait that `zidane-agent` implements.

pub mod behavior;
mod dispatch;
mod error;
pub mod pairing;
mod repair;
mod run;
pub mod validate;

pub use behavior::{Behavior, BehaviorOverride, RepeatGuard, RepeatMode, RetryPolicy, ToolBudget};
pub use error::{BudgetCap, RunError, RunErrorKind};
pub use run::{
    BehaviorTransform, LateTools, LoopConfig, ModelRef, ResumeFrom, RunLoop, RunOptions, SystemAddition, ToolTransform,
};
