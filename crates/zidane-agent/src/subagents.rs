//! Sub-agents: the agent's [`Spawner`], behind the `spawn` tool.
//!
//! A child is an agent of its own (its own conversation, bus and loop)
//! built from its parent: the same providers, prices and clock, the
//! parent's tools (or a configured subset) including the tools of the
//! parent's live MCP connection, the parent's execution context and live
//! handle (shared: the child never spawns nor destroys them), and the
//! read-state map when `share_read_state` is set. Children take slots from
//! one pool per agent tree; a top-level spawn that finds none free waits
//! (`spawn:queued`), a sub-agent's is refused. Every event the parent
//! listens to in its `child:*` form is bubbled to it while the child runs.

use zidane_core::ToolSet;
use zidane_core::seams::SubagentSummary;
use zidane_hooks::HookMap;
use zidane_loop::ModelRef;
use zidane_provider::ThinkingLevel;

/// How an agent's `spawn` calls run. Inherited by its children (their own
/// spawns obey the same limits, counted from the root).
#[derive(Debug, Clone)]
pub struct SpawnConfig {
    /// Named sub-agents the model may ask for (listed in the `spawn` tool's
    /// description).
    pub agents: Vec<SubagentDefinition>,
    /// How deep children may go (1: children only; 2: children and
    /// grandchildren). A spawn past it is refused with a tool error.
    pub max_depth: u32,
    /// Children running at once in the whole tree.
    pub max_concurrent: u32,
    /// Children share the parent's read-state map (what `read_file` read,
    /// for dedup and read-before-edit); otherwise each has its own.
    pub share_read_state: bool,
    /// System prompt of a child spawned without a named sub-agent (unset:
    /// the parent's).
    pub system: Option<String>,
    /// Hooks installed on every child's own bus, as its agent-lifetime
    /// hooks: a tracer continuing the parent's trace reads the child's
    /// `agent:start` (its `tracing_context` is what `spawn:before`
    /// handlers put there). The parent's `child:*` events need none of
    /// this.
    pub hooks: HookMap,
}

impl Default for SpawnConfig {
    fn default() -> Self {
        SpawnConfig {
            agents: Vec::new(),
            max_depth: 2,
            max_concurrent: 4,
            share_read_state: false,
            system: None,
            hooks: HookMap::default(),
        }
    }
}

/// A named sub-agent.
#[derive(Debug, Clone, Default)]
pub struct SubagentDefinition {
    /// What the model passes as `agent`.
    pub name: String,
    /// What it is for (shown to the model).
    pub description: String,
    /// Its system prompt (unset: [`SpawnConfig::system`], else the parent's).
    pub system: Option<String>,
    /// Its tools, from the parent's.
    pub tools: SubagentTools,
    /// Its model chain (empty: the parent's).
    pub model: Vec<ModelRef>,
    /// Its thinking level (unset: off).
    pub thinking: Option<ThinkingLevel>,
    /// Its turn cap.
    pub max_turns: Option<u32>,
    /// Its cost cap (USD).
    pub max_cost_usd: Option<f64>,
    /// Its token cap.
    pub max_total_tokens: Option<u64>,
    /// Its output token limit per request (unset: the parent's).
    pub max_tokens: Option<u32>,
    /// Its auto-compaction: unset, the parent's settings;
    /// `Some(None)` turns it off; `Some(Some(..))` sets its own.
    pub auto_compact: Option<Option<crate::compact::AutoCompact>>,
}

/// Which of the parent's tools a sub-agent gets.
#[derive(Clone, Default)]
pub enum SubagentTools {
    /// All of them (MCP tools included).
    #[default]
    Inherit,
    /// Only these canonical names.
    Only(Vec<String>),
    /// All but these canonical names.
    Except(Vec<String>),
    /// This set instead.
    Set(ToolSet),
}

impl std::fmt::Debug for SubagentTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubagentTools::Inherit => f.write_str("Inherit"),
            SubagentTools::Only(n) => f.debug_tuple("Only").field(n).finish(),
            SubagentTools::Except(n) => f.debug_tuple("Except").field(n).finish(),
            SubagentTools::Set(s) => f.debug_tuple("Set").field(s).finish(),
        }
    }
}

impl SpawnConfig {
    /// The named sub-agents as the spawn tool lists them.
    pub fn summaries(&self) -> Vec<SubagentSummary> {
        self.agents
            .iter()
            .map(|a| SubagentSummary {
                name: a.name.clone(),
                description: a.description.clone(),
            })
            .collect()
    }

    /// What the `spawn` tool's description gains: the named sub-agents.
    pub(crate) fn listing(&self) -> Option<String> {
        if self.agents.is_empty() {
            return None;
        }
        let mut out = String::from("\n\nNamed sub-agents (pass one as `agent`):");
        for a in &self.agents {
            out.push_str(&format!("\n- {}: {}", a.name, a.description));
        }
        Some(out)
    }
}

/// What separates a durable child's session id from its parent's.
pub const CHILD_SESSION_MARK: &str = "/spawn-";

/// What starts the id of a record a host keeps as a session that is not a
/// conversation (the program's schedules): listings, `--resume` and
/// pruning leave it out.
pub const RECORD_SESSION_PREFIX: &str = "~";

/// Whether session `id` is a conversation a person would list or resume:
/// not a sub-agent's (part of its parent's) and not a host's record.
pub fn is_conversation(id: &str) -> bool {
    !id.contains(CHILD_SESSION_MARK) && !id.starts_with(RECORD_SESSION_PREFIX)
}

/// What separates, in a durable child's session id, the spawning call's id
/// from the spawning run's.
const CHILD_RUN_MARK: char = '@';

/// The session of the child that call `call_id` of run `run_id` spawns
/// from session `parent`: `<parent>/spawn-<call id>@<run id>`. The run is
/// part of it because a call id alone is not unique across runs: a model
/// server may number its calls per process, or per answer, so a later run
/// (another process, another replica) could name an earlier run's child.
/// A resumed run keeps its id, so it finds its own children again.
pub fn child_session_id(parent: &str, call_id: &str, run_id: &str) -> String {
    format!("{parent}{CHILD_SESSION_MARK}{call_id}{CHILD_RUN_MARK}{run_id}")
}

/// The spawning call's id, when `session_id` names a sub-agent's session
/// (what a host showing the child next to its `spawn` call looks up).
pub fn spawning_call_id(session_id: &str) -> Option<&str> {
    let (_, child) = session_id.rsplit_once(CHILD_SESSION_MARK)?;
    Some(child.rsplit_once(CHILD_RUN_MARK).map_or(child, |(call, _)| call))
}
