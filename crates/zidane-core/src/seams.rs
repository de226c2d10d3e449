//! The seams of the loop under their former path: each now lives in a
//! module named for what it holds ([`durable`](crate::durable),
//! [`spawn`](crate::spawn), [`policy`](crate::policy), [`sink`](crate::sink),
//! [`compact`](crate::compact)). Kept for one release; new code names those.

pub use crate::compact::{CompactCheck, Compactor};
pub use crate::durable::{
    Durability, DurableMode, DurableRuntime, MemoryRuntime, StaleEpochError, Step, StepError, StepKey, StepKind,
    StepValue, ToolStep, ToolStepOutcome,
};
pub use crate::policy::{PolicyVerdict, ToolCallPolicy, ToolCallRequest};
pub use crate::sink::{ArtifactRecord, TurnMark, TurnSink};
pub use crate::spawn::{
    ChildLedger, SpawnBudget, SpawnError, SpawnRequest, SpawnResult, Spawner, Spawning, SubagentSummary,
};
