// Generated from `hooks.txt` and `fields.txt` by `cargo test -p zidane-core` (events::sourcegen); do not edit.

/// `agent:abort`: The run was aborted; once per aborted run, whatever path the abort took.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentAbort {
    reason: Option<String>,
    run_id: Option<String>,
}

/// The read-only fields of [`AgentAbort`], named, for [`AgentAbort::new`].
#[derive(Debug, Clone)]
pub struct AgentAbortInit {
    /// Why, in words.
    pub reason: Option<String>,
    /// Id of the run.
    pub run_id: Option<String>,
}

impl AgentAbort {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: AgentAbortInit) -> Self {
        let AgentAbortInit { reason, run_id } = init;
        AgentAbort {
            reason,
            run_id,
        }
    }

    /// Why, in words.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Id of the run.
    pub fn run_id(&self) -> Option<&str> {
        self.run_id.as_deref()
    }
}

impl HookEvent for AgentAbort {
    const NAME: &'static str = "agent:abort";
}

/// `agent:done`: The run finished, on every exit path, with cumulative statistics.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentDone {
    stats: AgentStats,
}

/// The read-only fields of [`AgentDone`], named, for [`AgentDone::new`].
#[derive(Debug, Clone)]
pub struct AgentDoneInit {
    /// The statistics.
    pub stats: AgentStats,
}

impl AgentDone {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: AgentDoneInit) -> Self {
        let AgentDoneInit { stats } = init;
        AgentDone {
            stats,
        }
    }

    /// The statistics.
    pub fn stats(&self) -> &AgentStats {
        &self.stats
    }
}

impl HookEvent for AgentDone {
    const NAME: &'static str = "agent:done";
}

/// `agent:start`: A run started; before its first turn.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentStart {
    agent_name: Option<String>,
    depth: u32,
    parent_run_id: Option<String>,
    provider_name: Option<String>,
    run_id: String,
    started_at: u64,
    tracing_context: BTreeMap<String, String>,
}

/// The read-only fields of [`AgentStart`], named, for [`AgentStart::new`].
#[derive(Debug, Clone)]
pub struct AgentStartInit {
    /// Display name of the agent, when it has one.
    pub agent_name: Option<String>,
    /// Depth below the root agent (1 for a direct child).
    pub depth: u32,
    /// Run id of the parent run.
    pub parent_run_id: Option<String>,
    /// Name of the primary provider.
    pub provider_name: Option<String>,
    /// Id of the run.
    pub run_id: String,
    /// Start time, epoch milliseconds.
    pub started_at: u64,
    /// Trace carrier propagated from the parent (e.g. `traceparent`).
    pub tracing_context: BTreeMap<String, String>,
}

impl AgentStart {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: AgentStartInit) -> Self {
        let AgentStartInit { agent_name, depth, parent_run_id, provider_name, run_id, started_at, tracing_context } = init;
        AgentStart {
            agent_name,
            depth,
            parent_run_id,
            provider_name,
            run_id,
            started_at,
            tracing_context,
        }
    }

    /// Display name of the agent, when it has one.
    pub fn agent_name(&self) -> Option<&str> {
        self.agent_name.as_deref()
    }

    /// Depth below the root agent (1 for a direct child).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Run id of the parent run.
    pub fn parent_run_id(&self) -> Option<&str> {
        self.parent_run_id.as_deref()
    }

    /// Name of the primary provider.
    pub fn provider_name(&self) -> Option<&str> {
        self.provider_name.as_deref()
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Start time, epoch milliseconds.
    pub fn started_at(&self) -> u64 {
        self.started_at
    }

    /// Trace carrier propagated from the parent (e.g. `traceparent`).
    pub fn tracing_context(&self) -> &BTreeMap<String, String> {
        &self.tracing_context
    }
}

impl HookEvent for AgentStart {
    const NAME: &'static str = "agent:start";
}

/// `artifact:recorded`: The session stored an artifact a tool result declared.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ArtifactRecorded {
    artifact: SessionArtifact,
    call_id: String,
    name: String,
    run_id: String,
    turn_id: String,
}

/// The read-only fields of [`ArtifactRecorded`], named, for [`ArtifactRecorded::new`].
#[derive(Debug, Clone)]
pub struct ArtifactRecordedInit {
    /// The recorded artifact.
    pub artifact: SessionArtifact,
    /// Id of the tool call.
    pub call_id: String,
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
}

impl ArtifactRecorded {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ArtifactRecordedInit) -> Self {
        let ArtifactRecordedInit { artifact, call_id, name, run_id, turn_id } = init;
        ArtifactRecorded {
            artifact,
            call_id,
            name,
            run_id,
            turn_id,
        }
    }

    /// The recorded artifact.
    pub fn artifact(&self) -> &SessionArtifact {
        &self.artifact
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for ArtifactRecorded {
    const NAME: &'static str = "artifact:recorded";
}

/// `background:adopt`: A running background task was handed over to this agent.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BackgroundAdopt {
    command: String,
    cwd: String,
    output_path: String,
    pid: u32,
    started_at: u64,
    task_id: String,
}

/// The read-only fields of [`BackgroundAdopt`], named, for [`BackgroundAdopt::new`].
#[derive(Debug, Clone)]
pub struct BackgroundAdoptInit {
    /// The command line.
    pub command: String,
    /// Working directory.
    pub cwd: String,
    /// File receiving the task's output.
    pub output_path: String,
    /// OS process id.
    pub pid: u32,
    /// Start time, epoch milliseconds.
    pub started_at: u64,
    /// Background task id.
    pub task_id: String,
}

impl BackgroundAdopt {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: BackgroundAdoptInit) -> Self {
        let BackgroundAdoptInit { command, cwd, output_path, pid, started_at, task_id } = init;
        BackgroundAdopt {
            command,
            cwd,
            output_path,
            pid,
            started_at,
            task_id,
        }
    }

    /// The command line.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Working directory.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// File receiving the task's output.
    pub fn output_path(&self) -> &str {
        &self.output_path
    }

    /// OS process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Start time, epoch milliseconds.
    pub fn started_at(&self) -> u64 {
        self.started_at
    }

    /// Background task id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }
}

impl HookEvent for BackgroundAdopt {
    const NAME: &'static str = "background:adopt";
}

/// `background:exit`: A background task's process ended; once per task.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BackgroundExit {
    command: String,
    duration_ms: u64,
    exit_code: i32,
    output_path: String,
    signal: Option<String>,
    status: TaskStatus,
    task_id: String,
}

/// The read-only fields of [`BackgroundExit`], named, for [`BackgroundExit::new`].
#[derive(Debug, Clone)]
pub struct BackgroundExitInit {
    /// The command line.
    pub command: String,
    /// Elapsed milliseconds.
    pub duration_ms: u64,
    /// Exit code.
    pub exit_code: i32,
    /// File receiving the task's output.
    pub output_path: String,
    /// Signal that ended the process, when one did.
    pub signal: Option<String>,
    /// How it ended.
    pub status: TaskStatus,
    /// Background task id.
    pub task_id: String,
}

impl BackgroundExit {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: BackgroundExitInit) -> Self {
        let BackgroundExitInit { command, duration_ms, exit_code, output_path, signal, status, task_id } = init;
        BackgroundExit {
            command,
            duration_ms,
            exit_code,
            output_path,
            signal,
            status,
            task_id,
        }
    }

    /// The command line.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Elapsed milliseconds.
    pub fn duration_ms(&self) -> u64 {
        self.duration_ms
    }

    /// Exit code.
    pub fn exit_code(&self) -> i32 {
        self.exit_code
    }

    /// File receiving the task's output.
    pub fn output_path(&self) -> &str {
        &self.output_path
    }

    /// Signal that ended the process, when one did.
    pub fn signal(&self) -> Option<&str> {
        self.signal.as_deref()
    }

    /// How it ended.
    pub fn status(&self) -> TaskStatus {
        self.status
    }

    /// Background task id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }
}

impl HookEvent for BackgroundExit {
    const NAME: &'static str = "background:exit";
}

/// `background:reassign`: A background task moved from one execution handle to another.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BackgroundReassign {
    child_id: Option<String>,
    command: String,
    from_handle_id: String,
    output_path: String,
    pid: u32,
    started_at: u64,
    task_id: String,
    to_handle_id: String,
}

/// The read-only fields of [`BackgroundReassign`], named, for [`BackgroundReassign::new`].
#[derive(Debug, Clone)]
pub struct BackgroundReassignInit {
    /// Id of the sub-agent concerned.
    pub child_id: Option<String>,
    /// The command line.
    pub command: String,
    /// The owner the task moves from (the sub-agent's; owners are per agent, on a handle they may share).
    pub from_handle_id: String,
    /// File receiving the task's output.
    pub output_path: String,
    /// OS process id.
    pub pid: u32,
    /// Start time, epoch milliseconds.
    pub started_at: u64,
    /// Background task id.
    pub task_id: String,
    /// The owner the task moves to (the agent taking it over).
    pub to_handle_id: String,
}

impl BackgroundReassign {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: BackgroundReassignInit) -> Self {
        let BackgroundReassignInit { child_id, command, from_handle_id, output_path, pid, started_at, task_id, to_handle_id } = init;
        BackgroundReassign {
            child_id,
            command,
            from_handle_id,
            output_path,
            pid,
            started_at,
            task_id,
            to_handle_id,
        }
    }

    /// Id of the sub-agent concerned.
    pub fn child_id(&self) -> Option<&str> {
        self.child_id.as_deref()
    }

    /// The command line.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The owner the task moves from (the sub-agent's; owners are per agent, on a handle they may share).
    pub fn from_handle_id(&self) -> &str {
        &self.from_handle_id
    }

    /// File receiving the task's output.
    pub fn output_path(&self) -> &str {
        &self.output_path
    }

    /// OS process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Start time, epoch milliseconds.
    pub fn started_at(&self) -> u64 {
        self.started_at
    }

    /// Background task id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The owner the task moves to (the agent taking it over).
    pub fn to_handle_id(&self) -> &str {
        &self.to_handle_id
    }
}

impl HookEvent for BackgroundReassign {
    const NAME: &'static str = "background:reassign";
}

/// `background:reconcile`: Background exits about to be shown to the model; handlers may edit the list.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct BackgroundReconcile {
    /// Exits to deliver; handlers may reorder, filter or replace them.
    pub exits: Vec<TaskExitInfo>,
}

impl BackgroundReconcile {
    /// A new event; writable fields start at their defaults.
    pub fn new() -> Self {
        Self::default()
    }
}

impl HookEvent for BackgroundReconcile {
    const NAME: &'static str = "background:reconcile";
}

/// `background:stall`: A background task produced no output for the watchdog's window.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BackgroundStall {
    bytes_written: u64,
    command: String,
    output_path: String,
    stalled_for_ms: u64,
    task_id: String,
}

/// The read-only fields of [`BackgroundStall`], named, for [`BackgroundStall::new`].
#[derive(Debug, Clone)]
pub struct BackgroundStallInit {
    /// Bytes the task has written so far.
    pub bytes_written: u64,
    /// The command line.
    pub command: String,
    /// File receiving the task's output.
    pub output_path: String,
    /// Milliseconds without output.
    pub stalled_for_ms: u64,
    /// Background task id.
    pub task_id: String,
}

impl BackgroundStall {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: BackgroundStallInit) -> Self {
        let BackgroundStallInit { bytes_written, command, output_path, stalled_for_ms, task_id } = init;
        BackgroundStall {
            bytes_written,
            command,
            output_path,
            stalled_for_ms,
            task_id,
        }
    }

    /// Bytes the task has written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// The command line.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// File receiving the task's output.
    pub fn output_path(&self) -> &str {
        &self.output_path
    }

    /// Milliseconds without output.
    pub fn stalled_for_ms(&self) -> u64 {
        self.stalled_for_ms
    }

    /// Background task id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }
}

impl HookEvent for BackgroundStall {
    const NAME: &'static str = "background:stall";
}

/// `background:start`: A background task was spawned.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BackgroundStart {
    command: String,
    cwd: String,
    output_path: String,
    pid: u32,
    started_at: u64,
    task_id: String,
}

/// The read-only fields of [`BackgroundStart`], named, for [`BackgroundStart::new`].
#[derive(Debug, Clone)]
pub struct BackgroundStartInit {
    /// The command line.
    pub command: String,
    /// Working directory.
    pub cwd: String,
    /// File receiving the task's output.
    pub output_path: String,
    /// OS process id.
    pub pid: u32,
    /// Start time, epoch milliseconds.
    pub started_at: u64,
    /// Background task id.
    pub task_id: String,
}

impl BackgroundStart {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: BackgroundStartInit) -> Self {
        let BackgroundStartInit { command, cwd, output_path, pid, started_at, task_id } = init;
        BackgroundStart {
            command,
            cwd,
            output_path,
            pid,
            started_at,
            task_id,
        }
    }

    /// The command line.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Working directory.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// File receiving the task's output.
    pub fn output_path(&self) -> &str {
        &self.output_path
    }

    /// OS process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Start time, epoch milliseconds.
    pub fn started_at(&self) -> u64 {
        self.started_at
    }

    /// Background task id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }
}

impl HookEvent for BackgroundStart {
    const NAME: &'static str = "background:start";
}

/// `budget:exceeded`: A turn's tool output exceeded the byte budget.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BudgetExceeded {
    budget: u64,
    bytes: u64,
    turn: u32,
    turn_id: String,
}

/// The read-only fields of [`BudgetExceeded`], named, for [`BudgetExceeded::new`].
#[derive(Debug, Clone)]
pub struct BudgetExceededInit {
    /// The configured budget.
    pub budget: u64,
    /// Bytes measured against the budget.
    pub bytes: u64,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
}

impl BudgetExceeded {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: BudgetExceededInit) -> Self {
        let BudgetExceededInit { budget, bytes, turn, turn_id } = init;
        BudgetExceeded {
            budget,
            bytes,
            turn,
            turn_id,
        }
    }

    /// The configured budget.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Bytes measured against the budget.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for BudgetExceeded {
    const NAME: &'static str = "budget:exceeded";
}

/// `cache:break`: A turn read back materially less cached prefix than the previous one established.
///
/// Emitted by `zidane-cache-telemetry`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CacheBreak {
    info: CacheBreakInfo,
}

/// The read-only fields of [`CacheBreak`], named, for [`CacheBreak::new`].
#[derive(Debug, Clone)]
pub struct CacheBreakInit {
    /// The structured payload.
    pub info: CacheBreakInfo,
}

impl CacheBreak {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: CacheBreakInit) -> Self {
        let CacheBreakInit { info } = init;
        CacheBreak {
            info,
        }
    }

    /// The structured payload.
    pub fn info(&self) -> &CacheBreakInfo {
        &self.info
    }
}

impl HookEvent for CacheBreak {
    const NAME: &'static str = "cache:break";
}

/// `cache:drift`: The outgoing request differs from the previous turn's in a cache-relevant way.
///
/// Emitted by `zidane-cache-telemetry`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CacheDrift {
    info: CacheDriftInfo,
}

/// The read-only fields of [`CacheDrift`], named, for [`CacheDrift::new`].
#[derive(Debug, Clone)]
pub struct CacheDriftInit {
    /// The structured payload.
    pub info: CacheDriftInfo,
}

impl CacheDrift {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: CacheDriftInit) -> Self {
        let CacheDriftInit { info } = init;
        CacheDrift {
            info,
        }
    }

    /// The structured payload.
    pub fn info(&self) -> &CacheDriftInfo {
        &self.info
    }
}

impl HookEvent for CacheDrift {
    const NAME: &'static str = "cache:drift";
}

/// `child:spawn:before`: A sub-agent's sub-agent is about to start (seen from an ancestor).
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChildSpawnBefore {
    spawn: SpawnHookContext,
    parent_child_id: Option<String>,
    depth: u32,
}

/// The read-only fields of [`ChildSpawnBefore`], named, for [`ChildSpawnBefore::new`].
#[derive(Debug, Clone)]
pub struct ChildSpawnBeforeInit {
    /// The spawned agent's identity and context.
    pub spawn: SpawnHookContext,
    /// Id of the sub-agent that spawned this one.
    pub parent_child_id: Option<String>,
    /// Depth below the root agent (1 for a direct child).
    pub depth: u32,
}

impl ChildSpawnBefore {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ChildSpawnBeforeInit) -> Self {
        let ChildSpawnBeforeInit { spawn, parent_child_id, depth } = init;
        ChildSpawnBefore {
            spawn,
            parent_child_id,
            depth,
        }
    }

    /// The spawned agent's identity and context.
    pub fn spawn(&self) -> &SpawnHookContext {
        &self.spawn
    }

    /// Id of the sub-agent that spawned this one.
    pub fn parent_child_id(&self) -> Option<&str> {
        self.parent_child_id.as_deref()
    }

    /// Depth below the root agent (1 for a direct child).
    pub fn depth(&self) -> u32 {
        self.depth
    }
}

impl HookEvent for ChildSpawnBefore {
    const NAME: &'static str = "child:spawn:before";
}

/// `child:spawn:complete`: A sub-agent's sub-agent finished (seen from an ancestor).
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChildSpawnComplete {
    stats: ChildRunStats,
    parent_child_id: Option<String>,
    depth: u32,
}

/// The read-only fields of [`ChildSpawnComplete`], named, for [`ChildSpawnComplete::new`].
#[derive(Debug, Clone)]
pub struct ChildSpawnCompleteInit {
    /// The statistics.
    pub stats: ChildRunStats,
    /// Id of the sub-agent that spawned this one.
    pub parent_child_id: Option<String>,
    /// Depth below the root agent (1 for a direct child).
    pub depth: u32,
}

impl ChildSpawnComplete {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ChildSpawnCompleteInit) -> Self {
        let ChildSpawnCompleteInit { stats, parent_child_id, depth } = init;
        ChildSpawnComplete {
            stats,
            parent_child_id,
            depth,
        }
    }

    /// The statistics.
    pub fn stats(&self) -> &ChildRunStats {
        &self.stats
    }

    /// Id of the sub-agent that spawned this one.
    pub fn parent_child_id(&self) -> Option<&str> {
        self.parent_child_id.as_deref()
    }

    /// Depth below the root agent (1 for a direct child).
    pub fn depth(&self) -> u32 {
        self.depth
    }
}

impl HookEvent for ChildSpawnComplete {
    const NAME: &'static str = "child:spawn:complete";
}

/// `child:spawn:error`: A sub-agent's sub-agent failed (seen from an ancestor).
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChildSpawnError {
    spawn: SpawnHookContext,
    parent_child_id: Option<String>,
    depth: u32,
    error: SharedError,
}

/// The read-only fields of [`ChildSpawnError`], named, for [`ChildSpawnError::new`].
#[derive(Debug, Clone)]
pub struct ChildSpawnErrorInit {
    /// The spawned agent's identity and context.
    pub spawn: SpawnHookContext,
    /// Id of the sub-agent that spawned this one.
    pub parent_child_id: Option<String>,
    /// Depth below the root agent (1 for a direct child).
    pub depth: u32,
    /// The error.
    pub error: SharedError,
}

impl ChildSpawnError {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ChildSpawnErrorInit) -> Self {
        let ChildSpawnErrorInit { spawn, parent_child_id, depth, error } = init;
        ChildSpawnError {
            spawn,
            parent_child_id,
            depth,
            error,
        }
    }

    /// The spawned agent's identity and context.
    pub fn spawn(&self) -> &SpawnHookContext {
        &self.spawn
    }

    /// Id of the sub-agent that spawned this one.
    pub fn parent_child_id(&self) -> Option<&str> {
        self.parent_child_id.as_deref()
    }

    /// Depth below the root agent (1 for a direct child).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The error.
    pub fn error(&self) -> &SharedError {
        &self.error
    }
}

impl HookEvent for ChildSpawnError {
    const NAME: &'static str = "child:spawn:error";
}

/// `compact:end`: A compaction finished, successfully or not; exactly once per `compact:start`.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompactEnd {
    reason: CompactReason,
    status: CompactStatus,
    replaced: u32,
    dropped: u32,
    restored: u32,
    effective_tokens: Option<u64>,
    error: Option<SharedError>,
}

/// The read-only fields of [`CompactEnd`], named, for [`CompactEnd::new`].
#[derive(Debug, Clone)]
pub struct CompactEndInit {
    /// Why, in words.
    pub reason: CompactReason,
    /// How it ended.
    pub status: CompactStatus,
    /// Turns replaced by the summary.
    pub replaced: u32,
    /// Turns dropped.
    pub dropped: u32,
    /// Synthetic calls re-attached after the summary.
    pub restored: u32,
    /// Estimated context tokens after the compaction.
    pub effective_tokens: Option<u64>,
    /// The error.
    pub error: Option<SharedError>,
}

impl CompactEnd {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: CompactEndInit) -> Self {
        let CompactEndInit { reason, status, replaced, dropped, restored, effective_tokens, error } = init;
        CompactEnd {
            reason,
            status,
            replaced,
            dropped,
            restored,
            effective_tokens,
            error,
        }
    }

    /// Why, in words.
    pub fn reason(&self) -> CompactReason {
        self.reason
    }

    /// How it ended.
    pub fn status(&self) -> CompactStatus {
        self.status
    }

    /// Turns replaced by the summary.
    pub fn replaced(&self) -> u32 {
        self.replaced
    }

    /// Turns dropped.
    pub fn dropped(&self) -> u32 {
        self.dropped
    }

    /// Synthetic calls re-attached after the summary.
    pub fn restored(&self) -> u32 {
        self.restored
    }

    /// Estimated context tokens after the compaction.
    pub fn effective_tokens(&self) -> Option<u64> {
        self.effective_tokens
    }

    /// The error.
    pub fn error(&self) -> &Option<SharedError> {
        &self.error
    }
}

impl HookEvent for CompactEnd {
    const NAME: &'static str = "compact:end";
}

/// `compact:progress`: The compaction summary is streaming; a rough output-token estimate.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompactProgress {
    reason: CompactReason,
    est_output_tokens: u64,
}

/// The read-only fields of [`CompactProgress`], named, for [`CompactProgress::new`].
#[derive(Debug, Clone)]
pub struct CompactProgressInit {
    /// Why, in words.
    pub reason: CompactReason,
    /// Estimated output tokens so far (characters / 4).
    pub est_output_tokens: u64,
}

impl CompactProgress {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: CompactProgressInit) -> Self {
        let CompactProgressInit { reason, est_output_tokens } = init;
        CompactProgress {
            reason,
            est_output_tokens,
        }
    }

    /// Why, in words.
    pub fn reason(&self) -> CompactReason {
        self.reason
    }

    /// Estimated output tokens so far (characters / 4).
    pub fn est_output_tokens(&self) -> u64 {
        self.est_output_tokens
    }
}

impl HookEvent for CompactProgress {
    const NAME: &'static str = "compact:progress";
}

/// `compact:restore`: A compaction is building the turns it keeps after the summary; handlers may add calls.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompactRestore {
    session_id: Option<String>,
    session: Option<crate::session::Session>,
    added: Vec<RestoredCall>,
}

/// The read-only fields of [`CompactRestore`], named, for [`CompactRestore::new`].
#[derive(Debug, Clone)]
pub struct CompactRestoreInit {
    /// Id of the session.
    pub session_id: Option<String>,
    /// The session as it stands (its turns, runs and metadata), when the agent keeps one.
    pub session: Option<crate::session::Session>,
}

impl CompactRestore {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: CompactRestoreInit) -> Self {
        let CompactRestoreInit { session_id, session } = init;
        CompactRestore {
            session_id,
            session,
            added: Default::default(),
        }
    }

    /// Id of the session.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The session as it stands (its turns, runs and metadata), when the agent keeps one.
    pub fn session(&self) -> &Option<crate::session::Session> {
        &self.session
    }
}

impl HookEvent for CompactRestore {
    const NAME: &'static str = "compact:restore";
}

/// `compact:start`: A compaction is about to summarize older turns.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompactStart {
    reason: CompactReason,
    turns: u32,
    estimated_tokens: u64,
}

/// The read-only fields of [`CompactStart`], named, for [`CompactStart::new`].
#[derive(Debug, Clone)]
pub struct CompactStartInit {
    /// Why, in words.
    pub reason: CompactReason,
    /// Turns concerned.
    pub turns: u32,
    /// Estimated tokens of the history being compacted.
    pub estimated_tokens: u64,
}

impl CompactStart {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: CompactStartInit) -> Self {
        let CompactStartInit { reason, turns, estimated_tokens } = init;
        CompactStart {
            reason,
            turns,
            estimated_tokens,
        }
    }

    /// Why, in words.
    pub fn reason(&self) -> CompactReason {
        self.reason
    }

    /// Turns concerned.
    pub fn turns(&self) -> u32 {
        self.turns
    }

    /// Estimated tokens of the history being compacted.
    pub fn estimated_tokens(&self) -> u64 {
        self.estimated_tokens
    }
}

impl HookEvent for CompactStart {
    const NAME: &'static str = "compact:start";
}

/// `content-ref:resolve`: A block refers to persisted bytes; handlers supply them for the wire.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ContentRefResolve {
    block: ContentRefBlock,
    child_id: Option<String>,
    depth: Option<u32>,
    /// The data, when supplied.
    pub data: Option<String>,
}

/// The read-only fields of [`ContentRefResolve`], named, for [`ContentRefResolve::new`].
#[derive(Debug, Clone)]
pub struct ContentRefResolveInit {
    /// Set to refuse the call; wins over `result`.
    pub block: ContentRefBlock,
    /// Id of the sub-agent concerned.
    pub child_id: Option<String>,
    /// Depth below the root agent (1 for a direct child).
    pub depth: Option<u32>,
}

impl ContentRefResolve {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ContentRefResolveInit) -> Self {
        let ContentRefResolveInit { block, child_id, depth } = init;
        ContentRefResolve {
            block,
            child_id,
            depth,
            data: Default::default(),
        }
    }

    /// Set to refuse the call; wins over `result`.
    pub fn block(&self) -> &ContentRefBlock {
        &self.block
    }

    /// Id of the sub-agent concerned.
    pub fn child_id(&self) -> Option<&str> {
        self.child_id.as_deref()
    }

    /// Depth below the root agent (1 for a direct child).
    pub fn depth(&self) -> Option<u32> {
        self.depth
    }
}

impl HookEvent for ContentRefResolve {
    const NAME: &'static str = "content-ref:resolve";
}

/// `context:overflow`: The provider said the context is too long; an emergency elision follows.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ContextOverflow {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    attempt: u32,
    err: SharedError,
}

/// The read-only fields of [`ContextOverflow`], named, for [`ContextOverflow::new`].
#[derive(Debug, Clone)]
pub struct ContextOverflowInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// 1-based attempt or pass number.
    pub attempt: u32,
    /// The error as the provider layer raised it.
    pub err: SharedError,
}

impl ContextOverflow {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ContextOverflowInit) -> Self {
        let ContextOverflowInit { run_id, turn, turn_id, model, attempt, err } = init;
        ContextOverflow {
            run_id,
            turn,
            turn_id,
            model,
            attempt,
            err,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// 1-based attempt or pass number.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The error as the provider layer raised it.
    pub fn err(&self) -> &SharedError {
        &self.err
    }
}

impl HookEvent for ContextOverflow {
    const NAME: &'static str = "context:overflow";
}

/// `context:transform`: The messages of the next request; handlers may rewrite them.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ContextTransform {
    /// The conversation of the request.
    pub messages: Vec<Message>,
}

impl ContextTransform {
    /// A new event; writable fields start at their defaults.
    pub fn new() -> Self {
        Self::default()
    }
}

impl HookEvent for ContextTransform {
    const NAME: &'static str = "context:transform";
}

/// `decision:end`: A decision finished, successfully or not.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DecisionEnd {
    kind: String,
    ok: bool,
    reason: Option<String>,
    answers: Option<Value>,
    usage: Option<TurnUsage>,
    duration_ms: u64,
}

/// The read-only fields of [`DecisionEnd`], named, for [`DecisionEnd::new`].
#[derive(Debug, Clone)]
pub struct DecisionEndInit {
    /// What kind of entry this is.
    pub kind: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Why, in words.
    pub reason: Option<String>,
    /// The decision's answers, on success.
    pub answers: Option<Value>,
    /// Token usage of the turn.
    pub usage: Option<TurnUsage>,
    /// Elapsed milliseconds.
    pub duration_ms: u64,
}

impl DecisionEnd {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: DecisionEndInit) -> Self {
        let DecisionEndInit { kind, ok, reason, answers, usage, duration_ms } = init;
        DecisionEnd {
            kind,
            ok,
            reason,
            answers,
            usage,
            duration_ms,
        }
    }

    /// What kind of entry this is.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Whether it succeeded.
    pub fn ok(&self) -> bool {
        self.ok
    }

    /// Why, in words.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The decision's answers, on success.
    pub fn answers(&self) -> &Option<Value> {
        &self.answers
    }

    /// Token usage of the turn.
    pub fn usage(&self) -> &Option<TurnUsage> {
        &self.usage
    }

    /// Elapsed milliseconds.
    pub fn duration_ms(&self) -> u64 {
        self.duration_ms
    }
}

impl HookEvent for DecisionEnd {
    const NAME: &'static str = "decision:end";
}

/// `decision:start`: A decision request started.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DecisionStart {
    kind: String,
    provider: Option<String>,
    model: Option<String>,
    request: Value,
}

/// The read-only fields of [`DecisionStart`], named, for [`DecisionStart::new`].
#[derive(Debug, Clone)]
pub struct DecisionStartInit {
    /// What kind of entry this is.
    pub kind: String,
    /// Provider name.
    pub provider: Option<String>,
    /// Model id of the request.
    pub model: Option<String>,
    /// The decision request.
    pub request: Value,
}

impl DecisionStart {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: DecisionStartInit) -> Self {
        let DecisionStartInit { kind, provider, model, request } = init;
        DecisionStart {
            kind,
            provider,
            model,
            request,
        }
    }

    /// What kind of entry this is.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Provider name.
    pub fn provider(&self) -> Option<&str> {
        self.provider.as_deref()
    }

    /// Model id of the request.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The decision request.
    pub fn request(&self) -> &Value {
        &self.request
    }
}

impl HookEvent for DecisionStart {
    const NAME: &'static str = "decision:start";
}

/// `execution:ready`: The execution handle was bound for the first time; once per agent.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExecutionReady {
    handle: ExecutionHandle,
    spawned: bool,
}

/// The read-only fields of [`ExecutionReady`], named, for [`ExecutionReady::new`].
#[derive(Debug, Clone)]
pub struct ExecutionReadyInit {
    /// The bound handle.
    pub handle: ExecutionHandle,
    /// Whether the agent created the handle (else the host injected it).
    pub spawned: bool,
}

impl ExecutionReady {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ExecutionReadyInit) -> Self {
        let ExecutionReadyInit { handle, spawned } = init;
        ExecutionReady {
            handle,
            spawned,
        }
    }

    /// The bound handle.
    pub fn handle(&self) -> &ExecutionHandle {
        &self.handle
    }

    /// Whether the agent created the handle (else the host injected it).
    pub fn spawned(&self) -> bool {
        self.spawned
    }
}

impl HookEvent for ExecutionReady {
    const NAME: &'static str = "execution:ready";
}

/// `history:repair`: Reasoning state the provider rejected was scrubbed from history.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HistoryRepair {
    turn_ids: Vec<String>,
    reason: String,
    run_id: String,
}

/// The read-only fields of [`HistoryRepair`], named, for [`HistoryRepair::new`].
#[derive(Debug, Clone)]
pub struct HistoryRepairInit {
    /// Ids of the repaired turns.
    pub turn_ids: Vec<String>,
    /// Why, in words.
    pub reason: String,
    /// Id of the run.
    pub run_id: String,
}

impl HistoryRepair {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: HistoryRepairInit) -> Self {
        let HistoryRepairInit { turn_ids, reason, run_id } = init;
        HistoryRepair {
            turn_ids,
            reason,
            run_id,
        }
    }

    /// Ids of the repaired turns.
    pub fn turn_ids(&self) -> &Vec<String> {
        &self.turn_ids
    }

    /// Why, in words.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }
}

impl HookEvent for HistoryRepair {
    const NAME: &'static str = "history:repair";
}

/// `mcp:auth:error`: An interactive MCP login failed.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpAuthError {
    name: String,
    error: SharedError,
}

/// The read-only fields of [`McpAuthError`], named, for [`McpAuthError::new`].
#[derive(Debug, Clone)]
pub struct McpAuthErrorInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// The error.
    pub error: SharedError,
}

impl McpAuthError {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpAuthErrorInit) -> Self {
        let McpAuthErrorInit { name, error } = init;
        McpAuthError {
            name,
            error,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The error.
    pub fn error(&self) -> &SharedError {
        &self.error
    }
}

impl HookEvent for McpAuthError {
    const NAME: &'static str = "mcp:auth:error";
}

/// `mcp:auth:required`: An MCP server needs a login before it can bootstrap.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpAuthRequired {
    name: String,
    reason: McpAuthReason,
    transport: McpTransport,
}

/// The read-only fields of [`McpAuthRequired`], named, for [`McpAuthRequired::new`].
#[derive(Debug, Clone)]
pub struct McpAuthRequiredInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Why, in words.
    pub reason: McpAuthReason,
    /// MCP transport.
    pub transport: McpTransport,
}

impl McpAuthRequired {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpAuthRequiredInit) -> Self {
        let McpAuthRequiredInit { name, reason, transport } = init;
        McpAuthRequired {
            name,
            reason,
            transport,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Why, in words.
    pub fn reason(&self) -> McpAuthReason {
        self.reason
    }

    /// MCP transport.
    pub fn transport(&self) -> McpTransport {
        self.transport
    }
}

impl HookEvent for McpAuthRequired {
    const NAME: &'static str = "mcp:auth:required";
}

/// `mcp:auth:success`: An interactive MCP login succeeded and tokens were stored.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpAuthSuccess {
    name: String,
}

/// The read-only fields of [`McpAuthSuccess`], named, for [`McpAuthSuccess::new`].
#[derive(Debug, Clone)]
pub struct McpAuthSuccessInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
}

impl McpAuthSuccess {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpAuthSuccessInit) -> Self {
        let McpAuthSuccessInit { name } = init;
        McpAuthSuccess {
            name,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl HookEvent for McpAuthSuccess {
    const NAME: &'static str = "mcp:auth:success";
}

/// `mcp:auth:url`: An interactive MCP login wants the user to open a URL.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpAuthUrl {
    name: String,
    url: String,
}

/// The read-only fields of [`McpAuthUrl`], named, for [`McpAuthUrl::new`].
#[derive(Debug, Clone)]
pub struct McpAuthUrlInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// The URL.
    pub url: String,
}

impl McpAuthUrl {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpAuthUrlInit) -> Self {
        let McpAuthUrlInit { name, url } = init;
        McpAuthUrl {
            name,
            url,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl HookEvent for McpAuthUrl {
    const NAME: &'static str = "mcp:auth:url";
}

/// `mcp:bootstrap:end`: One MCP server's bootstrap attempt ended.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpBootstrapEnd {
    name: String,
    transport: McpTransport,
    duration_ms: u64,
    outcome: McpBootstrapOutcome,
}

/// The read-only fields of [`McpBootstrapEnd`], named, for [`McpBootstrapEnd::new`].
#[derive(Debug, Clone)]
pub struct McpBootstrapEndInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// MCP transport.
    pub transport: McpTransport,
    /// Elapsed milliseconds.
    pub duration_ms: u64,
    /// The path the call took or the result of the attempt.
    pub outcome: McpBootstrapOutcome,
}

impl McpBootstrapEnd {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpBootstrapEndInit) -> Self {
        let McpBootstrapEndInit { name, transport, duration_ms, outcome } = init;
        McpBootstrapEnd {
            name,
            transport,
            duration_ms,
            outcome,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// MCP transport.
    pub fn transport(&self) -> McpTransport {
        self.transport
    }

    /// Elapsed milliseconds.
    pub fn duration_ms(&self) -> u64 {
        self.duration_ms
    }

    /// The path the call took or the result of the attempt.
    pub fn outcome(&self) -> &McpBootstrapOutcome {
        &self.outcome
    }
}

impl HookEvent for McpBootstrapEnd {
    const NAME: &'static str = "mcp:bootstrap:end";
}

/// `mcp:bootstrap:settled`: Every server of a bootstrap batch has settled; results sorted by name.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpBootstrapSettled {
    results: Vec<McpBootstrapResult>,
}

/// The read-only fields of [`McpBootstrapSettled`], named, for [`McpBootstrapSettled::new`].
#[derive(Debug, Clone)]
pub struct McpBootstrapSettledInit {
    /// The results, in order.
    pub results: Vec<McpBootstrapResult>,
}

impl McpBootstrapSettled {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpBootstrapSettledInit) -> Self {
        let McpBootstrapSettledInit { results } = init;
        McpBootstrapSettled {
            results,
        }
    }

    /// The results, in order.
    pub fn results(&self) -> &Vec<McpBootstrapResult> {
        &self.results
    }
}

impl HookEvent for McpBootstrapSettled {
    const NAME: &'static str = "mcp:bootstrap:settled";
}

/// `mcp:bootstrap:start`: One MCP server's bootstrap attempt starts.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpBootstrapStart {
    name: String,
    transport: McpTransport,
}

/// The read-only fields of [`McpBootstrapStart`], named, for [`McpBootstrapStart::new`].
#[derive(Debug, Clone)]
pub struct McpBootstrapStartInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// MCP transport.
    pub transport: McpTransport,
}

impl McpBootstrapStart {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpBootstrapStartInit) -> Self {
        let McpBootstrapStartInit { name, transport } = init;
        McpBootstrapStart {
            name,
            transport,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// MCP transport.
    pub fn transport(&self) -> McpTransport {
        self.transport
    }
}

impl HookEvent for McpBootstrapStart {
    const NAME: &'static str = "mcp:bootstrap:start";
}

/// `mcp:close`: An MCP connection was closed.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpClose {
    name: String,
}

/// The read-only fields of [`McpClose`], named, for [`McpClose::new`].
#[derive(Debug, Clone)]
pub struct McpCloseInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
}

impl McpClose {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpCloseInit) -> Self {
        let McpCloseInit { name } = init;
        McpClose {
            name,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl HookEvent for McpClose {
    const NAME: &'static str = "mcp:close";
}

/// `mcp:connect`: An MCP client finished its handshake.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpConnect {
    lazy: bool,
    name: String,
    tools: Vec<String>,
    transport: McpTransport,
}

/// The read-only fields of [`McpConnect`], named, for [`McpConnect::new`].
#[derive(Debug, Clone)]
pub struct McpConnectInit {
    /// Whether registration happened without connecting.
    pub lazy: bool,
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// The tools.
    pub tools: Vec<String>,
    /// MCP transport.
    pub transport: McpTransport,
}

impl McpConnect {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpConnectInit) -> Self {
        let McpConnectInit { lazy, name, tools, transport } = init;
        McpConnect {
            lazy,
            name,
            tools,
            transport,
        }
    }

    /// Whether registration happened without connecting.
    pub fn lazy(&self) -> bool {
        self.lazy
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tools.
    pub fn tools(&self) -> &Vec<String> {
        &self.tools
    }

    /// MCP transport.
    pub fn transport(&self) -> McpTransport {
        self.transport
    }
}

impl HookEvent for McpConnect {
    const NAME: &'static str = "mcp:connect";
}

/// `mcp:error`: An MCP server failed to connect or failed fatally.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpError {
    name: String,
    error: SharedError,
}

/// The read-only fields of [`McpError`], named, for [`McpError::new`].
#[derive(Debug, Clone)]
pub struct McpErrorInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// The error.
    pub error: SharedError,
}

impl McpError {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpErrorInit) -> Self {
        let McpErrorInit { name, error } = init;
        McpError {
            name,
            error,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The error.
    pub fn error(&self) -> &SharedError {
        &self.error
    }
}

impl HookEvent for McpError {
    const NAME: &'static str = "mcp:error";
}

/// `mcp:tool:after`: An MCP tool call returned.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpToolAfter {
    server: String,
    tool: String,
    name: String,
    call_id: String,
    input: Value,
    output_bytes: usize,
    result: ToolResultContent,
}

/// The read-only fields of [`McpToolAfter`], named, for [`McpToolAfter::new`].
#[derive(Debug, Clone)]
pub struct McpToolAfterInit {
    /// MCP server name.
    pub server: String,
    /// Canonical tool name.
    pub tool: String,
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Size of the output before any handler rewrote it.
    pub output_bytes: usize,
    /// The result the model sees.
    pub result: ToolResultContent,
}

impl McpToolAfter {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpToolAfterInit) -> Self {
        let McpToolAfterInit { server, tool, name, call_id, input, output_bytes, result } = init;
        McpToolAfter {
            server,
            tool,
            name,
            call_id,
            input,
            output_bytes,
            result,
        }
    }

    /// MCP server name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Canonical tool name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Size of the output before any handler rewrote it.
    pub fn output_bytes(&self) -> usize {
        self.output_bytes
    }

    /// The result the model sees.
    pub fn result(&self) -> &ToolResultContent {
        &self.result
    }
}

impl HookEvent for McpToolAfter {
    const NAME: &'static str = "mcp:tool:after";
}

/// `mcp:tool:before`: An MCP tool call is about to be sent.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpToolBefore {
    server: String,
    tool: String,
    name: String,
    call_id: String,
    input: Value,
}

/// The read-only fields of [`McpToolBefore`], named, for [`McpToolBefore::new`].
#[derive(Debug, Clone)]
pub struct McpToolBeforeInit {
    /// MCP server name.
    pub server: String,
    /// Canonical tool name.
    pub tool: String,
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
}

impl McpToolBefore {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpToolBeforeInit) -> Self {
        let McpToolBeforeInit { server, tool, name, call_id, input } = init;
        McpToolBefore {
            server,
            tool,
            name,
            call_id,
            input,
        }
    }

    /// MCP server name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Canonical tool name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }
}

impl HookEvent for McpToolBefore {
    const NAME: &'static str = "mcp:tool:before";
}

/// `mcp:tool:error`: An MCP tool call failed.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpToolError {
    server: String,
    tool: String,
    name: String,
    call_id: String,
    input: Value,
    error: SharedError,
}

/// The read-only fields of [`McpToolError`], named, for [`McpToolError::new`].
#[derive(Debug, Clone)]
pub struct McpToolErrorInit {
    /// MCP server name.
    pub server: String,
    /// Canonical tool name.
    pub tool: String,
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// The error.
    pub error: SharedError,
}

impl McpToolError {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpToolErrorInit) -> Self {
        let McpToolErrorInit { server, tool, name, call_id, input, error } = init;
        McpToolError {
            server,
            tool,
            name,
            call_id,
            input,
            error,
        }
    }

    /// MCP server name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Canonical tool name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// The error.
    pub fn error(&self) -> &SharedError {
        &self.error
    }
}

impl HookEvent for McpToolError {
    const NAME: &'static str = "mcp:tool:error";
}

/// `mcp:tool:gate`: Decide an MCP tool call inside the MCP wrapper: refuse it or substitute a result.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpToolGate {
    server: String,
    tool: String,
    name: String,
    call_id: String,
    input: Value,
    /// Set to refuse the call; wins over `result`.
    pub block: bool,
    /// Why, in words.
    pub reason: String,
    /// The result the model sees.
    pub result: Option<ToolResultContent>,
}

/// The read-only fields of [`McpToolGate`], named, for [`McpToolGate::new`].
#[derive(Debug, Clone)]
pub struct McpToolGateInit {
    /// MCP server name.
    pub server: String,
    /// Canonical tool name.
    pub tool: String,
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
}

impl McpToolGate {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpToolGateInit) -> Self {
        let McpToolGateInit { server, tool, name, call_id, input } = init;
        McpToolGate {
            server,
            tool,
            name,
            call_id,
            input,
            block: Default::default(),
            reason: Default::default(),
            result: Default::default(),
        }
    }

    /// MCP server name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Canonical tool name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }
}

impl HookEvent for McpToolGate {
    const NAME: &'static str = "mcp:tool:gate";
}

/// `mcp:tool:transform`: An MCP tool result before it is returned; handlers may rewrite it.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpToolTransform {
    server: String,
    tool: String,
    name: String,
    call_id: String,
    input: Value,
    output_bytes: usize,
    /// The result the model sees.
    pub result: ToolResultContent,
}

/// The read-only fields of [`McpToolTransform`], named, for [`McpToolTransform::new`].
#[derive(Debug, Clone)]
pub struct McpToolTransformInit {
    /// MCP server name.
    pub server: String,
    /// Canonical tool name.
    pub tool: String,
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Size of the output before any handler rewrote it.
    pub output_bytes: usize,
}

impl McpToolTransform {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpToolTransformInit) -> Self {
        let McpToolTransformInit { server, tool, name, call_id, input, output_bytes } = init;
        McpToolTransform {
            server,
            tool,
            name,
            call_id,
            input,
            output_bytes,
            result: Default::default(),
        }
    }

    /// MCP server name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Canonical tool name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Size of the output before any handler rewrote it.
    pub fn output_bytes(&self) -> usize {
        self.output_bytes
    }
}

impl HookEvent for McpToolTransform {
    const NAME: &'static str = "mcp:tool:transform";
}

/// `mcp:tools:filter`: A server's tools after the config filters; handlers may narrow the list.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpToolsFilter {
    server: String,
    /// The tools.
    pub tools: Vec<McpToolSchema>,
    transport: McpTransport,
}

/// The read-only fields of [`McpToolsFilter`], named, for [`McpToolsFilter::new`].
#[derive(Debug, Clone)]
pub struct McpToolsFilterInit {
    /// MCP server name.
    pub server: String,
    /// MCP transport.
    pub transport: McpTransport,
}

impl McpToolsFilter {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpToolsFilterInit) -> Self {
        let McpToolsFilterInit { server, transport } = init;
        McpToolsFilter {
            server,
            tools: Default::default(),
            transport,
        }
    }

    /// MCP server name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// MCP transport.
    pub fn transport(&self) -> McpTransport {
        self.transport
    }
}

impl HookEvent for McpToolsFilter {
    const NAME: &'static str = "mcp:tools:filter";
}

/// `mcp:tools:list`: The raw tool list a server advertised.
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpToolsList {
    name: String,
    tools: Vec<McpToolSchema>,
    transport: McpTransport,
}

/// The read-only fields of [`McpToolsList`], named, for [`McpToolsList::new`].
#[derive(Debug, Clone)]
pub struct McpToolsListInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// The tools.
    pub tools: Vec<McpToolSchema>,
    /// MCP transport.
    pub transport: McpTransport,
}

impl McpToolsList {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpToolsListInit) -> Self {
        let McpToolsListInit { name, tools, transport } = init;
        McpToolsList {
            name,
            tools,
            transport,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tools.
    pub fn tools(&self) -> &Vec<McpToolSchema> {
        &self.tools
    }

    /// MCP transport.
    pub fn transport(&self) -> McpTransport {
        self.transport
    }
}

impl HookEvent for McpToolsList {
    const NAME: &'static str = "mcp:tools:list";
}

/// `mcp:warn`: A diagnostic line from an MCP server (its stderr, a soft failure).
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpWarn {
    message: String,
    name: String,
}

/// The read-only fields of [`McpWarn`], named, for [`McpWarn::new`].
#[derive(Debug, Clone)]
pub struct McpWarnInit {
    /// The message or turn concerned.
    pub message: String,
    /// Name of the tool, server or item concerned.
    pub name: String,
}

impl McpWarn {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: McpWarnInit) -> Self {
        let McpWarnInit { message, name } = init;
        McpWarn {
            message,
            name,
        }
    }

    /// The message or turn concerned.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl HookEvent for McpWarn {
    const NAME: &'static str = "mcp:warn";
}

/// `model:fallback`: The run moved to the next provider and model of its fallback chain.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ModelFallback {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    discarded_thinking: bool,
    err: SharedError,
    from: ModelTarget,
    target_index: u32,
    to: ModelTarget,
}

/// The read-only fields of [`ModelFallback`], named, for [`ModelFallback::new`].
#[derive(Debug, Clone)]
pub struct ModelFallbackInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// Whether the failed attempt had streamed reasoning that is now discarded.
    pub discarded_thinking: bool,
    /// The error as the provider layer raised it.
    pub err: SharedError,
    /// The exhausted target.
    pub from: ModelTarget,
    /// Index of the new target in the fallback chain.
    pub target_index: u32,
    /// The newly active target.
    pub to: ModelTarget,
}

impl ModelFallback {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ModelFallbackInit) -> Self {
        let ModelFallbackInit { run_id, turn, turn_id, model, discarded_thinking, err, from, target_index, to } = init;
        ModelFallback {
            run_id,
            turn,
            turn_id,
            model,
            discarded_thinking,
            err,
            from,
            target_index,
            to,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Whether the failed attempt had streamed reasoning that is now discarded.
    pub fn discarded_thinking(&self) -> bool {
        self.discarded_thinking
    }

    /// The error as the provider layer raised it.
    pub fn err(&self) -> &SharedError {
        &self.err
    }

    /// The exhausted target.
    pub fn from(&self) -> &ModelTarget {
        &self.from
    }

    /// Index of the new target in the fallback chain.
    pub fn target_index(&self) -> u32 {
        self.target_index
    }

    /// The newly active target.
    pub fn to(&self) -> &ModelTarget {
        &self.to
    }
}

impl HookEvent for ModelFallback {
    const NAME: &'static str = "model:fallback";
}

/// `oauth:refresh`: OAuth credentials were refreshed during a run (an MCP server's tokens: `provider` is `mcp:<server>`).
///
/// Emitted by `zidane-mcp`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OAuthRefresh {
    provider: String,
    expires_at: Option<u64>,
}

/// The read-only fields of [`OAuthRefresh`], named, for [`OAuthRefresh::new`].
#[derive(Debug, Clone)]
pub struct OAuthRefreshInit {
    /// Provider name.
    pub provider: String,
    /// When the new credentials expire, epoch milliseconds.
    pub expires_at: Option<u64>,
}

impl OAuthRefresh {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: OAuthRefreshInit) -> Self {
        let OAuthRefreshInit { provider, expires_at } = init;
        OAuthRefresh {
            provider,
            expires_at,
        }
    }

    /// Provider name.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// When the new credentials expire, epoch milliseconds.
    pub fn expires_at(&self) -> Option<u64> {
        self.expires_at
    }
}

impl HookEvent for OAuthRefresh {
    const NAME: &'static str = "oauth:refresh";
}

/// `output`: The structured output of a run, validated against its schema.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Output {
    output: Value,
    schema: Value,
}

/// The read-only fields of [`Output`], named, for [`Output::new`].
#[derive(Debug, Clone)]
pub struct OutputInit {
    /// The produced value.
    pub output: Value,
    /// The JSON schema involved.
    pub schema: Value,
}

impl Output {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: OutputInit) -> Self {
        let OutputInit { output, schema } = init;
        Output {
            output,
            schema,
        }
    }

    /// The produced value.
    pub fn output(&self) -> &Value {
        &self.output
    }

    /// The JSON schema involved.
    pub fn schema(&self) -> &Value {
        &self.schema
    }
}

impl HookEvent for Output {
    const NAME: &'static str = "output";
}

/// `pairing:repair`: The pre-send pairing pass repaired the history.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PairingRepair {
    kind: PairingRepairKind,
    tool_use_id: String,
    message_index: usize,
    turn_id: Option<String>,
}

/// The read-only fields of [`PairingRepair`], named, for [`PairingRepair::new`].
#[derive(Debug, Clone)]
pub struct PairingRepairInit {
    /// What kind of entry this is.
    pub kind: PairingRepairKind,
    /// Id of the tool-use block.
    pub tool_use_id: String,
    /// Index of the message concerned.
    pub message_index: usize,
    /// Id of the turn.
    pub turn_id: Option<String>,
}

impl PairingRepair {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: PairingRepairInit) -> Self {
        let PairingRepairInit { kind, tool_use_id, message_index, turn_id } = init;
        PairingRepair {
            kind,
            tool_use_id,
            message_index,
            turn_id,
        }
    }

    /// What kind of entry this is.
    pub fn kind(&self) -> PairingRepairKind {
        self.kind
    }

    /// Id of the tool-use block.
    pub fn tool_use_id(&self) -> &str {
        &self.tool_use_id
    }

    /// Index of the message concerned.
    pub fn message_index(&self) -> usize {
        self.message_index
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref()
    }
}

impl HookEvent for PairingRepair {
    const NAME: &'static str = "pairing:repair";
}

/// `provider:diagnostic`: The provider reported a diagnostic for a turn.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProviderDiagnostic {
    kind: String,
    message: String,
    data: Value,
    run_id: String,
    turn_id: String,
}

/// The read-only fields of [`ProviderDiagnostic`], named, for [`ProviderDiagnostic::new`].
#[derive(Debug, Clone)]
pub struct ProviderDiagnosticInit {
    /// What kind of entry this is.
    pub kind: String,
    /// The message or turn concerned.
    pub message: String,
    /// The data, when supplied.
    pub data: Value,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
}

impl ProviderDiagnostic {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ProviderDiagnosticInit) -> Self {
        let ProviderDiagnosticInit { kind, message, data, run_id, turn_id } = init;
        ProviderDiagnostic {
            kind,
            message,
            data,
            run_id,
            turn_id,
        }
    }

    /// What kind of entry this is.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The message or turn concerned.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The data, when supplied.
    pub fn data(&self) -> &Value {
        &self.data
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for ProviderDiagnostic {
    const NAME: &'static str = "provider:diagnostic";
}

/// `provider:input-transformations`: The provider dropped replayed reasoning blocks before sampling.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProviderInputTransformations {
    transformations: Vec<Value>,
    run_id: String,
    turn_id: String,
}

/// The read-only fields of [`ProviderInputTransformations`], named, for [`ProviderInputTransformations::new`].
#[derive(Debug, Clone)]
pub struct ProviderInputTransformationsInit {
    /// What the provider reported, as sent.
    pub transformations: Vec<Value>,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
}

impl ProviderInputTransformations {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ProviderInputTransformationsInit) -> Self {
        let ProviderInputTransformationsInit { transformations, run_id, turn_id } = init;
        ProviderInputTransformations {
            transformations,
            run_id,
            turn_id,
        }
    }

    /// What the provider reported, as sent.
    pub fn transformations(&self) -> &Vec<Value> {
        &self.transformations
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for ProviderInputTransformations {
    const NAME: &'static str = "provider:input-transformations";
}

/// `repeat-guard:exceeded`: The repeat guard escalated on a tool.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RepeatGuardExceeded {
    action: GuardAction,
    count: u32,
    threshold: u32,
    tool: String,
    turn_id: String,
}

/// The read-only fields of [`RepeatGuardExceeded`], named, for [`RepeatGuardExceeded::new`].
#[derive(Debug, Clone)]
pub struct RepeatGuardExceededInit {
    /// What the guard did about the call.
    pub action: GuardAction,
    /// How many, as counted by the emitter.
    pub count: u32,
    /// The configured threshold.
    pub threshold: u32,
    /// Canonical tool name.
    pub tool: String,
    /// Id of the turn.
    pub turn_id: String,
}

impl RepeatGuardExceeded {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: RepeatGuardExceededInit) -> Self {
        let RepeatGuardExceededInit { action, count, threshold, tool, turn_id } = init;
        RepeatGuardExceeded {
            action,
            count,
            threshold,
            tool,
            turn_id,
        }
    }

    /// What the guard did about the call.
    pub fn action(&self) -> GuardAction {
        self.action
    }

    /// How many, as counted by the emitter.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The configured threshold.
    pub fn threshold(&self) -> u32 {
        self.threshold
    }

    /// Canonical tool name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for RepeatGuardExceeded {
    const NAME: &'static str = "repeat-guard:exceeded";
}

/// `replay:done`: A durable replay caught up with its journal and went live.
///
/// Emitted by `observability and durable-runtime adapters`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ReplayDone {
}

impl ReplayDone {
    /// A new event; writable fields start at their defaults.
    pub fn new() -> Self {
        Self::default()
    }
}

impl HookEvent for ReplayDone {
    const NAME: &'static str = "replay:done";
}

/// `resume:mismatch`: A resume was refused because the step records no longer match the saved turns.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ResumeMismatch {
    reason: String,
    resume_turn: u32,
    run_id: String,
    session_id: String,
    stored_turns: Vec<u32>,
}

/// The read-only fields of [`ResumeMismatch`], named, for [`ResumeMismatch::new`].
#[derive(Debug, Clone)]
pub struct ResumeMismatchInit {
    /// Why, in words.
    pub reason: String,
    /// Turn the saved turns resume at.
    pub resume_turn: u32,
    /// Id of the run.
    pub run_id: String,
    /// Id of the session.
    pub session_id: String,
    /// Turns the step records belong to.
    pub stored_turns: Vec<u32>,
}

impl ResumeMismatch {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ResumeMismatchInit) -> Self {
        let ResumeMismatchInit { reason, resume_turn, run_id, session_id, stored_turns } = init;
        ResumeMismatch {
            reason,
            resume_turn,
            run_id,
            session_id,
            stored_turns,
        }
    }

    /// Why, in words.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Turn the saved turns resume at.
    pub fn resume_turn(&self) -> u32 {
        self.resume_turn
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the session.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Turns the step records belong to.
    pub fn stored_turns(&self) -> &Vec<u32> {
        &self.stored_turns
    }
}

impl HookEvent for ResumeMismatch {
    const NAME: &'static str = "resume:mismatch";
}

/// `run:beforeEnd`: The model gave a final answer and nothing is queued; a handler may keep the run going.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunBeforeEnd {
    run_id: String,
    session_id: Option<String>,
    session: Option<crate::session::Session>,
    turn: u32,
    follow_up: Option<String>,
}

/// The read-only fields of [`RunBeforeEnd`], named, for [`RunBeforeEnd::new`].
#[derive(Debug, Clone)]
pub struct RunBeforeEndInit {
    /// Id of the run.
    pub run_id: String,
    /// Id of the session.
    pub session_id: Option<String>,
    /// The session as it stands (its turns, runs and metadata), when the agent keeps one.
    pub session: Option<crate::session::Session>,
    /// Turn index within the run.
    pub turn: u32,
}

impl RunBeforeEnd {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: RunBeforeEndInit) -> Self {
        let RunBeforeEndInit { run_id, session_id, session, turn } = init;
        RunBeforeEnd {
            run_id,
            session_id,
            session,
            turn,
            follow_up: Default::default(),
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the session.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The session as it stands (its turns, runs and metadata), when the agent keeps one.
    pub fn session(&self) -> &Option<crate::session::Session> {
        &self.session
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }
}

impl HookEvent for RunBeforeEnd {
    const NAME: &'static str = "run:beforeEnd";
}

/// `session:end`: A run on a session ended.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionEnd {
    session_id: String,
    session: Option<crate::session::Session>,
    run_id: String,
    status: SessionEndStatus,
    turn_range: (u32, u32),
}

/// The read-only fields of [`SessionEnd`], named, for [`SessionEnd::new`].
#[derive(Debug, Clone)]
pub struct SessionEndInit {
    /// Id of the session.
    pub session_id: String,
    /// The session as it stands (its turns, runs and metadata), when the agent keeps one.
    pub session: Option<crate::session::Session>,
    /// Id of the run.
    pub run_id: String,
    /// How it ended.
    pub status: SessionEndStatus,
    /// First and last turn index the run produced.
    pub turn_range: (u32, u32),
}

impl SessionEnd {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SessionEndInit) -> Self {
        let SessionEndInit { session_id, session, run_id, status, turn_range } = init;
        SessionEnd {
            session_id,
            session,
            run_id,
            status,
            turn_range,
        }
    }

    /// Id of the session.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The session as it stands (its turns, runs and metadata), when the agent keeps one.
    pub fn session(&self) -> &Option<crate::session::Session> {
        &self.session
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// How it ended.
    pub fn status(&self) -> SessionEndStatus {
        self.status
    }

    /// First and last turn index the run produced.
    pub fn turn_range(&self) -> (u32, u32) {
        self.turn_range
    }
}

impl HookEvent for SessionEnd {
    const NAME: &'static str = "session:end";
}

/// `session:meta`: A session metadata key was set.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionMeta {
    session_id: String,
    key: String,
    value: Value,
}

/// The read-only fields of [`SessionMeta`], named, for [`SessionMeta::new`].
#[derive(Debug, Clone)]
pub struct SessionMetaInit {
    /// Id of the session.
    pub session_id: String,
    /// The key.
    pub key: String,
    /// The value.
    pub value: Value,
}

impl SessionMeta {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SessionMetaInit) -> Self {
        let SessionMetaInit { session_id, key, value } = init;
        SessionMeta {
            session_id,
            key,
            value,
        }
    }

    /// Id of the session.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The value.
    pub fn value(&self) -> &Value {
        &self.value
    }
}

impl HookEvent for SessionMeta {
    const NAME: &'static str = "session:meta";
}

/// `session:save`: The session was saved.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionSave {
    session_id: String,
}

/// The read-only fields of [`SessionSave`], named, for [`SessionSave::new`].
#[derive(Debug, Clone)]
pub struct SessionSaveInit {
    /// Id of the session.
    pub session_id: String,
}

impl SessionSave {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SessionSaveInit) -> Self {
        let SessionSaveInit { session_id } = init;
        SessionSave {
            session_id,
        }
    }

    /// Id of the session.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }
}

impl HookEvent for SessionSave {
    const NAME: &'static str = "session:save";
}

/// `session:start`: A run started on a session.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionStart {
    session_id: String,
    prompt: String,
    run_id: String,
}

/// The read-only fields of [`SessionStart`], named, for [`SessionStart::new`].
#[derive(Debug, Clone)]
pub struct SessionStartInit {
    /// Id of the session.
    pub session_id: String,
    /// The prompt or its label.
    pub prompt: String,
    /// Id of the run.
    pub run_id: String,
}

impl SessionStart {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SessionStartInit) -> Self {
        let SessionStartInit { session_id, prompt, run_id } = init;
        SessionStart {
            session_id,
            prompt,
            run_id,
        }
    }

    /// Id of the session.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The prompt or its label.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }
}

impl HookEvent for SessionStart {
    const NAME: &'static str = "session:start";
}

/// `session:turns`: New turns were flushed to the session.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionTurns {
    session_id: String,
    count: usize,
    turns: Vec<SessionTurn>,
}

/// The read-only fields of [`SessionTurns`], named, for [`SessionTurns::new`].
#[derive(Debug, Clone)]
pub struct SessionTurnsInit {
    /// Id of the session.
    pub session_id: String,
    /// How many, as counted by the emitter.
    pub count: usize,
    /// Turns concerned.
    pub turns: Vec<SessionTurn>,
}

impl SessionTurns {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SessionTurnsInit) -> Self {
        let SessionTurnsInit { session_id, count, turns } = init;
        SessionTurns {
            session_id,
            count,
            turns,
        }
    }

    /// Id of the session.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// How many, as counted by the emitter.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Turns concerned.
    pub fn turns(&self) -> &Vec<SessionTurn> {
        &self.turns
    }
}

impl HookEvent for SessionTurns {
    const NAME: &'static str = "session:turns";
}

/// `skills:activate`: A skill was activated.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SkillsActivate {
    skill: SkillConfig,
    via: ActivationVia,
}

/// The read-only fields of [`SkillsActivate`], named, for [`SkillsActivate::new`].
#[derive(Debug, Clone)]
pub struct SkillsActivateInit {
    /// The skill.
    pub skill: SkillConfig,
    /// What triggered it.
    pub via: ActivationVia,
}

impl SkillsActivate {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SkillsActivateInit) -> Self {
        let SkillsActivateInit { skill, via } = init;
        SkillsActivate {
            skill,
            via,
        }
    }

    /// The skill.
    pub fn skill(&self) -> &SkillConfig {
        &self.skill
    }

    /// What triggered it.
    pub fn via(&self) -> ActivationVia {
        self.via
    }
}

impl HookEvent for SkillsActivate {
    const NAME: &'static str = "skills:activate";
}

/// `skills:catalog`: The rendered skills catalog and the skills it lists.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SkillsCatalog {
    catalog: String,
    skills: Vec<SkillConfig>,
}

/// The read-only fields of [`SkillsCatalog`], named, for [`SkillsCatalog::new`].
#[derive(Debug, Clone)]
pub struct SkillsCatalogInit {
    /// The rendered catalog text.
    pub catalog: String,
    /// The skills.
    pub skills: Vec<SkillConfig>,
}

impl SkillsCatalog {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SkillsCatalogInit) -> Self {
        let SkillsCatalogInit { catalog, skills } = init;
        SkillsCatalog {
            catalog,
            skills,
        }
    }

    /// The rendered catalog text.
    pub fn catalog(&self) -> &str {
        &self.catalog
    }

    /// The skills.
    pub fn skills(&self) -> &Vec<SkillConfig> {
        &self.skills
    }
}

impl HookEvent for SkillsCatalog {
    const NAME: &'static str = "skills:catalog";
}

/// `skills:deactivate`: A skill was deactivated.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SkillsDeactivate {
    reason: DeactivationReason,
    skill: SkillConfig,
}

/// The read-only fields of [`SkillsDeactivate`], named, for [`SkillsDeactivate::new`].
#[derive(Debug, Clone)]
pub struct SkillsDeactivateInit {
    /// Why, in words.
    pub reason: DeactivationReason,
    /// The skill.
    pub skill: SkillConfig,
}

impl SkillsDeactivate {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SkillsDeactivateInit) -> Self {
        let SkillsDeactivateInit { reason, skill } = init;
        SkillsDeactivate {
            reason,
            skill,
        }
    }

    /// Why, in words.
    pub fn reason(&self) -> DeactivationReason {
        self.reason
    }

    /// The skill.
    pub fn skill(&self) -> &SkillConfig {
        &self.skill
    }
}

impl HookEvent for SkillsDeactivate {
    const NAME: &'static str = "skills:deactivate";
}

/// `skills:resolve`: Skills were resolved.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SkillsResolve {
    skills: Vec<SkillConfig>,
}

/// The read-only fields of [`SkillsResolve`], named, for [`SkillsResolve::new`].
#[derive(Debug, Clone)]
pub struct SkillsResolveInit {
    /// The skills.
    pub skills: Vec<SkillConfig>,
}

impl SkillsResolve {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SkillsResolveInit) -> Self {
        let SkillsResolveInit { skills } = init;
        SkillsResolve {
            skills,
        }
    }

    /// The skills.
    pub fn skills(&self) -> &Vec<SkillConfig> {
        &self.skills
    }
}

impl HookEvent for SkillsResolve {
    const NAME: &'static str = "skills:resolve";
}

/// `spawn:before`: A sub-agent is about to start; tracers may inject their context.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SpawnBefore {
    child_id: String,
    agent_name: Option<String>,
    prompt: String,
    depth: u32,
    parent_run_id: Option<String>,
    /// Trace carrier propagated from the parent (e.g. `traceparent`).
    pub tracing_context: BTreeMap<String, String>,
}

/// The read-only fields of [`SpawnBefore`], named, for [`SpawnBefore::new`].
#[derive(Debug, Clone)]
pub struct SpawnBeforeInit {
    /// Id of the sub-agent concerned.
    pub child_id: String,
    /// Display name of the agent, when it has one.
    pub agent_name: Option<String>,
    /// The prompt or its label.
    pub prompt: String,
    /// Depth below the root agent (1 for a direct child).
    pub depth: u32,
    /// Run id of the parent run.
    pub parent_run_id: Option<String>,
}

impl SpawnBefore {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SpawnBeforeInit) -> Self {
        let SpawnBeforeInit { child_id, agent_name, prompt, depth, parent_run_id } = init;
        SpawnBefore {
            child_id,
            agent_name,
            prompt,
            depth,
            parent_run_id,
            tracing_context: Default::default(),
        }
    }

    /// Id of the sub-agent concerned.
    pub fn child_id(&self) -> &str {
        &self.child_id
    }

    /// Display name of the agent, when it has one.
    pub fn agent_name(&self) -> Option<&str> {
        self.agent_name.as_deref()
    }

    /// The prompt or its label.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// Depth below the root agent (1 for a direct child).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Run id of the parent run.
    pub fn parent_run_id(&self) -> Option<&str> {
        self.parent_run_id.as_deref()
    }
}

impl HookEvent for SpawnBefore {
    const NAME: &'static str = "spawn:before";
}

/// `spawn:complete`: A sub-agent finished.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SpawnComplete {
    stats: ChildRunStats,
}

/// The read-only fields of [`SpawnComplete`], named, for [`SpawnComplete::new`].
#[derive(Debug, Clone)]
pub struct SpawnCompleteInit {
    /// The statistics.
    pub stats: ChildRunStats,
}

impl SpawnComplete {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SpawnCompleteInit) -> Self {
        let SpawnCompleteInit { stats } = init;
        SpawnComplete {
            stats,
        }
    }

    /// The statistics.
    pub fn stats(&self) -> &ChildRunStats {
        &self.stats
    }
}

impl HookEvent for SpawnComplete {
    const NAME: &'static str = "spawn:complete";
}

/// `spawn:error`: A sub-agent failed.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SpawnError {
    spawn: SpawnHookContext,
    error: SharedError,
}

/// The read-only fields of [`SpawnError`], named, for [`SpawnError::new`].
#[derive(Debug, Clone)]
pub struct SpawnErrorInit {
    /// The spawned agent's identity and context.
    pub spawn: SpawnHookContext,
    /// The error.
    pub error: SharedError,
}

impl SpawnError {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SpawnErrorInit) -> Self {
        let SpawnErrorInit { spawn, error } = init;
        SpawnError {
            spawn,
            error,
        }
    }

    /// The spawned agent's identity and context.
    pub fn spawn(&self) -> &SpawnHookContext {
        &self.spawn
    }

    /// The error.
    pub fn error(&self) -> &SharedError {
        &self.error
    }
}

impl HookEvent for SpawnError {
    const NAME: &'static str = "spawn:error";
}

/// `spawn:queued`: A top-level spawn waits for a free slot.
///
/// Emitted by `zidane-agent`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SpawnQueued {
    child_id: String,
    agent_name: Option<String>,
    running: u32,
    limit: u32,
}

/// The read-only fields of [`SpawnQueued`], named, for [`SpawnQueued::new`].
#[derive(Debug, Clone)]
pub struct SpawnQueuedInit {
    /// Id of the sub-agent concerned.
    pub child_id: String,
    /// Display name of the agent, when it has one.
    pub agent_name: Option<String>,
    /// Children currently running.
    pub running: u32,
    /// The configured limit.
    pub limit: u32,
}

impl SpawnQueued {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SpawnQueuedInit) -> Self {
        let SpawnQueuedInit { child_id, agent_name, running, limit } = init;
        SpawnQueued {
            child_id,
            agent_name,
            running,
            limit,
        }
    }

    /// Id of the sub-agent concerned.
    pub fn child_id(&self) -> &str {
        &self.child_id
    }

    /// Display name of the agent, when it has one.
    pub fn agent_name(&self) -> Option<&str> {
        self.agent_name.as_deref()
    }

    /// Children currently running.
    pub fn running(&self) -> u32 {
        self.running
    }

    /// The configured limit.
    pub fn limit(&self) -> u32 {
        self.limit
    }
}

impl HookEvent for SpawnQueued {
    const NAME: &'static str = "spawn:queued";
}

/// `steer:inject`: A queued message joined the conversation as a user turn.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SteerInject {
    content: Vec<ContentBlock>,
    id: Option<String>,
    text: String,
}

/// The read-only fields of [`SteerInject`], named, for [`SteerInject::new`].
#[derive(Debug, Clone)]
pub struct SteerInjectInit {
    /// The content, as received.
    pub content: Vec<ContentBlock>,
    /// Id given by the caller or the provider.
    pub id: Option<String>,
    /// The text accumulated so far.
    pub text: String,
}

impl SteerInject {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SteerInjectInit) -> Self {
        let SteerInjectInit { content, id, text } = init;
        SteerInject {
            content,
            id,
            text,
        }
    }

    /// The content, as received.
    pub fn content(&self) -> &Vec<ContentBlock> {
        &self.content
    }

    /// Id given by the caller or the provider.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The text accumulated so far.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl HookEvent for SteerInject {
    const NAME: &'static str = "steer:inject";
}

/// `stream:end`: The turn's text stream ended.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamEnd {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    text: String,
}

/// The read-only fields of [`StreamEnd`], named, for [`StreamEnd::new`].
#[derive(Debug, Clone)]
pub struct StreamEndInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// The text accumulated so far.
    pub text: String,
}

impl StreamEnd {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: StreamEndInit) -> Self {
        let StreamEndInit { run_id, turn, turn_id, model, text } = init;
        StreamEnd {
            run_id,
            turn,
            turn_id,
            model,
            text,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The text accumulated so far.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl HookEvent for StreamEnd {
    const NAME: &'static str = "stream:end";
}

/// `stream:error`: The provider's stream failed before its end.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamError {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    err: SharedError,
    status_code: Option<u16>,
    request_id: Option<String>,
}

/// The read-only fields of [`StreamError`], named, for [`StreamError::new`].
#[derive(Debug, Clone)]
pub struct StreamErrorInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// The error as the provider layer raised it.
    pub err: SharedError,
    /// HTTP status, when known.
    pub status_code: Option<u16>,
    /// The provider's request id, when known.
    pub request_id: Option<String>,
}

impl StreamError {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: StreamErrorInit) -> Self {
        let StreamErrorInit { run_id, turn, turn_id, model, err, status_code, request_id } = init;
        StreamError {
            run_id,
            turn,
            turn_id,
            model,
            err,
            status_code,
            request_id,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The error as the provider layer raised it.
    pub fn err(&self) -> &SharedError {
        &self.err
    }

    /// HTTP status, when known.
    pub fn status_code(&self) -> Option<u16> {
        self.status_code
    }

    /// The provider's request id, when known.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }
}

impl HookEvent for StreamError {
    const NAME: &'static str = "stream:error";
}

/// `stream:progress`: Tokens streamed so far and a running cost estimate (throttled).
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamProgress {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    tokens: u64,
    provider_counted: bool,
    cost_usd: Option<f64>,
}

/// The read-only fields of [`StreamProgress`], named, for [`StreamProgress::new`].
#[derive(Debug, Clone)]
pub struct StreamProgressInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// Tokens so far.
    pub tokens: u64,
    /// Whether the provider counted the tokens (else characters / 4).
    pub provider_counted: bool,
    /// Running cost estimate in USD, when the model is priced.
    pub cost_usd: Option<f64>,
}

impl StreamProgress {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: StreamProgressInit) -> Self {
        let StreamProgressInit { run_id, turn, turn_id, model, tokens, provider_counted, cost_usd } = init;
        StreamProgress {
            run_id,
            turn,
            turn_id,
            model,
            tokens,
            provider_counted,
            cost_usd,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Tokens so far.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// Whether the provider counted the tokens (else characters / 4).
    pub fn provider_counted(&self) -> bool {
        self.provider_counted
    }

    /// Running cost estimate in USD, when the model is priced.
    pub fn cost_usd(&self) -> Option<f64> {
        self.cost_usd
    }
}

impl HookEvent for StreamProgress {
    const NAME: &'static str = "stream:progress";
}

/// `stream:retry`: A retryable provider error; the loop sleeps, then tries again.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamRetry {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    attempt: u32,
    delay_ms: u64,
    discarded_text: bool,
    discarded_thinking: bool,
    err: SharedError,
    max_attempts: u32,
    next_attempt: u32,
    request_id: Option<String>,
    status_code: Option<u16>,
}

/// The read-only fields of [`StreamRetry`], named, for [`StreamRetry::new`].
#[derive(Debug, Clone)]
pub struct StreamRetryInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// 1-based attempt or pass number.
    pub attempt: u32,
    /// Milliseconds the loop waits before the next attempt.
    pub delay_ms: u64,
    /// Whether the failed attempt had streamed text that is now discarded.
    pub discarded_text: bool,
    /// Whether the failed attempt had streamed reasoning that is now discarded.
    pub discarded_thinking: bool,
    /// The error as the provider layer raised it.
    pub err: SharedError,
    /// Attempts the retry budget allows.
    pub max_attempts: u32,
    /// The attempt that runs after the wait.
    pub next_attempt: u32,
    /// The provider's request id, when known.
    pub request_id: Option<String>,
    /// HTTP status, when known.
    pub status_code: Option<u16>,
}

impl StreamRetry {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: StreamRetryInit) -> Self {
        let StreamRetryInit { run_id, turn, turn_id, model, attempt, delay_ms, discarded_text, discarded_thinking, err, max_attempts, next_attempt, request_id, status_code } = init;
        StreamRetry {
            run_id,
            turn,
            turn_id,
            model,
            attempt,
            delay_ms,
            discarded_text,
            discarded_thinking,
            err,
            max_attempts,
            next_attempt,
            request_id,
            status_code,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// 1-based attempt or pass number.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Milliseconds the loop waits before the next attempt.
    pub fn delay_ms(&self) -> u64 {
        self.delay_ms
    }

    /// Whether the failed attempt had streamed text that is now discarded.
    pub fn discarded_text(&self) -> bool {
        self.discarded_text
    }

    /// Whether the failed attempt had streamed reasoning that is now discarded.
    pub fn discarded_thinking(&self) -> bool {
        self.discarded_thinking
    }

    /// The error as the provider layer raised it.
    pub fn err(&self) -> &SharedError {
        &self.err
    }

    /// Attempts the retry budget allows.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The attempt that runs after the wait.
    pub fn next_attempt(&self) -> u32 {
        self.next_attempt
    }

    /// The provider's request id, when known.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// HTTP status, when known.
    pub fn status_code(&self) -> Option<u16> {
        self.status_code
    }
}

impl HookEvent for StreamRetry {
    const NAME: &'static str = "stream:retry";
}

/// `stream:server_tool_result`: A server-side tool result block closed.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamServerToolResult {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    content: Value,
    tool_name: String,
    tool_use_id: String,
}

/// The read-only fields of [`StreamServerToolResult`], named, for [`StreamServerToolResult::new`].
#[derive(Debug, Clone)]
pub struct StreamServerToolResultInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// The content, as received.
    pub content: Value,
    /// Name of the tool.
    pub tool_name: String,
    /// Id of the tool-use block.
    pub tool_use_id: String,
}

impl StreamServerToolResult {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: StreamServerToolResultInit) -> Self {
        let StreamServerToolResultInit { run_id, turn, turn_id, model, content, tool_name, tool_use_id } = init;
        StreamServerToolResult {
            run_id,
            turn,
            turn_id,
            model,
            content,
            tool_name,
            tool_use_id,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The content, as received.
    pub fn content(&self) -> &Value {
        &self.content
    }

    /// Name of the tool.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// Id of the tool-use block.
    pub fn tool_use_id(&self) -> &str {
        &self.tool_use_id
    }
}

impl HookEvent for StreamServerToolResult {
    const NAME: &'static str = "stream:server_tool_result";
}

/// `stream:server_tool_use`: A server-side tool call block closed.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamServerToolUse {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    id: String,
    input: Value,
    name: String,
}

/// The read-only fields of [`StreamServerToolUse`], named, for [`StreamServerToolUse::new`].
#[derive(Debug, Clone)]
pub struct StreamServerToolUseInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// Id given by the caller or the provider.
    pub id: String,
    /// The call's arguments.
    pub input: Value,
    /// Name of the tool, server or item concerned.
    pub name: String,
}

impl StreamServerToolUse {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: StreamServerToolUseInit) -> Self {
        let StreamServerToolUseInit { run_id, turn, turn_id, model, id, input, name } = init;
        StreamServerToolUse {
            run_id,
            turn,
            turn_id,
            model,
            id,
            input,
            name,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Id given by the caller or the provider.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl HookEvent for StreamServerToolUse {
    const NAME: &'static str = "stream:server_tool_use";
}

/// `stream:start`: The request is about to leave for the provider.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamStart {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    started_at: u64,
}

/// The read-only fields of [`StreamStart`], named, for [`StreamStart::new`].
#[derive(Debug, Clone)]
pub struct StreamStartInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// Start time, epoch milliseconds.
    pub started_at: u64,
}

impl StreamStart {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: StreamStartInit) -> Self {
        let StreamStartInit { run_id, turn, turn_id, model, started_at } = init;
        StreamStart {
            run_id,
            turn,
            turn_id,
            model,
            started_at,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Start time, epoch milliseconds.
    pub fn started_at(&self) -> u64 {
        self.started_at
    }
}

impl HookEvent for StreamStart {
    const NAME: &'static str = "stream:start";
}

/// `stream:text`: A text delta.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamText {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    delta: String,
    text: StreamedText,
}

/// The read-only fields of [`StreamText`], named, for [`StreamText::new`].
#[derive(Debug, Clone)]
pub struct StreamTextInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// The new chunk.
    pub delta: String,
    /// The text accumulated so far.
    pub text: StreamedText,
}

impl StreamText {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: StreamTextInit) -> Self {
        let StreamTextInit { run_id, turn, turn_id, model, delta, text } = init;
        StreamText {
            run_id,
            turn,
            turn_id,
            model,
            delta,
            text,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The new chunk.
    pub fn delta(&self) -> &str {
        &self.delta
    }

    /// The text accumulated so far.
    pub fn text(&self) -> &StreamedText {
        &self.text
    }
}

impl HookEvent for StreamText {
    const NAME: &'static str = "stream:text";
}

/// `stream:thinking`: A thinking delta.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamThinking {
    run_id: String,
    turn: u32,
    turn_id: String,
    model: String,
    delta: String,
    thinking: StreamedText,
}

/// The read-only fields of [`StreamThinking`], named, for [`StreamThinking::new`].
#[derive(Debug, Clone)]
pub struct StreamThinkingInit {
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Model id of the request.
    pub model: String,
    /// The new chunk.
    pub delta: String,
    /// The reasoning accumulated so far.
    pub thinking: StreamedText,
}

impl StreamThinking {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: StreamThinkingInit) -> Self {
        let StreamThinkingInit { run_id, turn, turn_id, model, delta, thinking } = init;
        StreamThinking {
            run_id,
            turn,
            turn_id,
            model,
            delta,
            thinking,
        }
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Model id of the request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The new chunk.
    pub fn delta(&self) -> &str {
        &self.delta
    }

    /// The reasoning accumulated so far.
    pub fn thinking(&self) -> &StreamedText {
        &self.thinking
    }
}

impl HookEvent for StreamThinking {
    const NAME: &'static str = "stream:thinking";
}

/// `system:before`: The run-level system prompt, once per run when one was given.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SystemBefore {
    system: String,
}

/// The read-only fields of [`SystemBefore`], named, for [`SystemBefore::new`].
#[derive(Debug, Clone)]
pub struct SystemBeforeInit {
    /// The system prompt.
    pub system: String,
}

impl SystemBefore {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SystemBeforeInit) -> Self {
        let SystemBeforeInit { system } = init;
        SystemBefore {
            system,
        }
    }

    /// The system prompt.
    pub fn system(&self) -> &str {
        &self.system
    }
}

impl HookEvent for SystemBefore {
    const NAME: &'static str = "system:before";
}

/// `system:transform`: The system prompt of the next request; handlers may rewrite it (keep it byte-stable).
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SystemTransform {
    messages: Vec<Message>,
    session_id: Option<String>,
    session: Option<crate::session::Session>,
    /// The system prompt.
    pub system: String,
    turn: u32,
    turn_id: String,
}

/// The read-only fields of [`SystemTransform`], named, for [`SystemTransform::new`].
#[derive(Debug, Clone)]
pub struct SystemTransformInit {
    /// The conversation of the request.
    pub messages: Vec<Message>,
    /// Id of the session.
    pub session_id: Option<String>,
    /// The session as it stands (its turns, runs and metadata), when the agent keeps one.
    pub session: Option<crate::session::Session>,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
}

impl SystemTransform {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: SystemTransformInit) -> Self {
        let SystemTransformInit { messages, session_id, session, turn, turn_id } = init;
        SystemTransform {
            messages,
            session_id,
            session,
            system: Default::default(),
            turn,
            turn_id,
        }
    }

    /// The conversation of the request.
    pub fn messages(&self) -> &Vec<Message> {
        &self.messages
    }

    /// Id of the session.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The session as it stands (its turns, runs and metadata), when the agent keeps one.
    pub fn session(&self) -> &Option<crate::session::Session> {
        &self.session
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for SystemTransform {
    const NAME: &'static str = "system:transform";
}

/// `tool-batch:resumed`: A durable run resumes a tool batch a dead process left unfinished.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolBatchResumed {
    done: Vec<String>,
    resuming: Vec<String>,
    run_id: String,
    turn: u32,
    turn_id: String,
}

/// The read-only fields of [`ToolBatchResumed`], named, for [`ToolBatchResumed::new`].
#[derive(Debug, Clone)]
pub struct ToolBatchResumedInit {
    /// Ids of calls rebuilt from their step records.
    pub done: Vec<String>,
    /// Ids of calls that run again or are reported interrupted.
    pub resuming: Vec<String>,
    /// Id of the run.
    pub run_id: String,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
}

impl ToolBatchResumed {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolBatchResumedInit) -> Self {
        let ToolBatchResumedInit { done, resuming, run_id, turn, turn_id } = init;
        ToolBatchResumed {
            done,
            resuming,
            run_id,
            turn,
            turn_id,
        }
    }

    /// Ids of calls rebuilt from their step records.
    pub fn done(&self) -> &Vec<String> {
        &self.done
    }

    /// Ids of calls that run again or are reported interrupted.
    pub fn resuming(&self) -> &Vec<String> {
        &self.resuming
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for ToolBatchResumed {
    const NAME: &'static str = "tool-batch:resumed";
}

/// `tool-budget:exceeded`: A per-tool call budget was exceeded.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolBudgetExceeded {
    count: u32,
    max: u32,
    mode: BudgetMode,
    tool: String,
    turn_id: String,
}

/// The read-only fields of [`ToolBudgetExceeded`], named, for [`ToolBudgetExceeded::new`].
#[derive(Debug, Clone)]
pub struct ToolBudgetExceededInit {
    /// How many, as counted by the emitter.
    pub count: u32,
    /// The configured maximum.
    pub max: u32,
    /// How the budget reacted.
    pub mode: BudgetMode,
    /// Canonical tool name.
    pub tool: String,
    /// Id of the turn.
    pub turn_id: String,
}

impl ToolBudgetExceeded {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolBudgetExceededInit) -> Self {
        let ToolBudgetExceededInit { count, max, mode, tool, turn_id } = init;
        ToolBudgetExceeded {
            count,
            max,
            mode,
            tool,
            turn_id,
        }
    }

    /// How many, as counted by the emitter.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The configured maximum.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// How the budget reacted.
    pub fn mode(&self) -> BudgetMode {
        self.mode
    }

    /// Canonical tool name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for ToolBudgetExceeded {
    const NAME: &'static str = "tool-budget:exceeded";
}

/// `tool-results:after`: The tool-results turn joined the conversation.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolResultsAfter {
    message: SessionTurn,
    results: Vec<ToolResult>,
    turn: u32,
    turn_id: String,
}

/// The read-only fields of [`ToolResultsAfter`], named, for [`ToolResultsAfter::new`].
#[derive(Debug, Clone)]
pub struct ToolResultsAfterInit {
    /// The message or turn concerned.
    pub message: SessionTurn,
    /// The results, in order.
    pub results: Vec<ToolResult>,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
}

impl ToolResultsAfter {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolResultsAfterInit) -> Self {
        let ToolResultsAfterInit { message, results, turn, turn_id } = init;
        ToolResultsAfter {
            message,
            results,
            turn,
            turn_id,
        }
    }

    /// The message or turn concerned.
    pub fn message(&self) -> &SessionTurn {
        &self.message
    }

    /// The results, in order.
    pub fn results(&self) -> &Vec<ToolResult> {
        &self.results
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for ToolResultsAfter {
    const NAME: &'static str = "tool-results:after";
}

/// `tool-state:commit-failed`: A settled call's durable tool state could not be committed.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolStateCommitFailed {
    call_id: String,
    error: SharedError,
    /// Set when a handler reported the failure itself (suppresses the default log line).
    pub handled: bool,
    ops: Vec<ToolStateOp>,
    run_id: String,
    tool_name: String,
}

/// The read-only fields of [`ToolStateCommitFailed`], named, for [`ToolStateCommitFailed::new`].
#[derive(Debug, Clone)]
pub struct ToolStateCommitFailedInit {
    /// Id of the tool call.
    pub call_id: String,
    /// The error.
    pub error: SharedError,
    /// Staged writes that did not land, in order.
    pub ops: Vec<ToolStateOp>,
    /// Id of the run.
    pub run_id: String,
    /// Name of the tool.
    pub tool_name: String,
}

impl ToolStateCommitFailed {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolStateCommitFailedInit) -> Self {
        let ToolStateCommitFailedInit { call_id, error, ops, run_id, tool_name } = init;
        ToolStateCommitFailed {
            call_id,
            error,
            handled: Default::default(),
            ops,
            run_id,
            tool_name,
        }
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The error.
    pub fn error(&self) -> &SharedError {
        &self.error
    }

    /// Staged writes that did not land, in order.
    pub fn ops(&self) -> &Vec<ToolStateOp> {
        &self.ops
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Name of the tool.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }
}

impl HookEvent for ToolStateCommitFailed {
    const NAME: &'static str = "tool-state:commit-failed";
}

/// `tool:after`: A tool result (executed or substituted by a gate) after transforms.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolAfter {
    name: String,
    call_id: String,
    input: Value,
    run_id: String,
    turn_id: String,
    coercions: Vec<String>,
    is_error: bool,
    outcome: Option<ToolOutcome>,
    output_bytes: usize,
    result: ToolResultContent,
    run_tool_counts: ToolCounts,
}

/// The read-only fields of [`ToolAfter`], named, for [`ToolAfter::new`].
#[derive(Debug, Clone)]
pub struct ToolAfterInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
    /// Input fields that validation coerced into shape.
    pub coercions: Vec<String>,
    /// Whether the result reports a failure.
    pub is_error: bool,
    /// The path the call took or the result of the attempt.
    pub outcome: Option<ToolOutcome>,
    /// Size of the output before any handler rewrote it.
    pub output_bytes: usize,
    /// The result the model sees.
    pub result: ToolResultContent,
    /// Calls dispatched so far in the run, before this one.
    pub run_tool_counts: ToolCounts,
}

impl ToolAfter {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolAfterInit) -> Self {
        let ToolAfterInit { name, call_id, input, run_id, turn_id, coercions, is_error, outcome, output_bytes, result, run_tool_counts } = init;
        ToolAfter {
            name,
            call_id,
            input,
            run_id,
            turn_id,
            coercions,
            is_error,
            outcome,
            output_bytes,
            result,
            run_tool_counts,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Input fields that validation coerced into shape.
    pub fn coercions(&self) -> &Vec<String> {
        &self.coercions
    }

    /// Whether the result reports a failure.
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// The path the call took or the result of the attempt.
    pub fn outcome(&self) -> Option<ToolOutcome> {
        self.outcome
    }

    /// Size of the output before any handler rewrote it.
    pub fn output_bytes(&self) -> usize {
        self.output_bytes
    }

    /// The result the model sees.
    pub fn result(&self) -> &ToolResultContent {
        &self.result
    }

    /// Calls dispatched so far in the run, before this one.
    pub fn run_tool_counts(&self) -> &ToolCounts {
        &self.run_tool_counts
    }
}

impl HookEvent for ToolAfter {
    const NAME: &'static str = "tool:after";
}

/// `tool:before`: A tool body is about to run; handlers may rewrite its input.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolBefore {
    name: String,
    call_id: String,
    /// The call's arguments.
    pub input: Value,
    run_id: String,
    turn_id: String,
    coercions: Vec<String>,
    prior_content: Option<String>,
    run_tool_counts: ToolCounts,
    unknown: bool,
}

/// The read-only fields of [`ToolBefore`], named, for [`ToolBefore::new`].
#[derive(Debug, Clone)]
pub struct ToolBeforeInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
    /// Input fields that validation coerced into shape.
    pub coercions: Vec<String>,
    /// The previous content of the target, when the tool reports it.
    pub prior_content: Option<String>,
    /// Calls dispatched so far in the run, before this one.
    pub run_tool_counts: ToolCounts,
    /// Whether the tool name is unknown (the call will not run).
    pub unknown: bool,
}

impl ToolBefore {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolBeforeInit) -> Self {
        let ToolBeforeInit { name, call_id, run_id, turn_id, coercions, prior_content, run_tool_counts, unknown } = init;
        ToolBefore {
            name,
            call_id,
            input: Default::default(),
            run_id,
            turn_id,
            coercions,
            prior_content,
            run_tool_counts,
            unknown,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Input fields that validation coerced into shape.
    pub fn coercions(&self) -> &Vec<String> {
        &self.coercions
    }

    /// The previous content of the target, when the tool reports it.
    pub fn prior_content(&self) -> Option<&str> {
        self.prior_content.as_deref()
    }

    /// Calls dispatched so far in the run, before this one.
    pub fn run_tool_counts(&self) -> &ToolCounts {
        &self.run_tool_counts
    }

    /// Whether the tool name is unknown (the call will not run).
    pub fn unknown(&self) -> bool {
        self.unknown
    }
}

impl HookEvent for ToolBefore {
    const NAME: &'static str = "tool:before";
}

/// `tool:cancelled`: One in-flight call was cancelled.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolCancelled {
    name: String,
    call_id: String,
    input: Value,
    run_id: String,
    turn_id: String,
    reason: String,
    run_tool_counts: ToolCounts,
}

/// The read-only fields of [`ToolCancelled`], named, for [`ToolCancelled::new`].
#[derive(Debug, Clone)]
pub struct ToolCancelledInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
    /// Why, in words.
    pub reason: String,
    /// Calls dispatched so far in the run, before this one.
    pub run_tool_counts: ToolCounts,
}

impl ToolCancelled {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolCancelledInit) -> Self {
        let ToolCancelledInit { name, call_id, input, run_id, turn_id, reason, run_tool_counts } = init;
        ToolCancelled {
            name,
            call_id,
            input,
            run_id,
            turn_id,
            reason,
            run_tool_counts,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Why, in words.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Calls dispatched so far in the run, before this one.
    pub fn run_tool_counts(&self) -> &ToolCounts {
        &self.run_tool_counts
    }
}

impl HookEvent for ToolCancelled {
    const NAME: &'static str = "tool:cancelled";
}

/// `tool:dispatched`: A call was dispatched, with the path it took; once per call.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolDispatched {
    name: String,
    call_id: String,
    input: Value,
    run_id: String,
    turn_id: String,
    outcome: ToolOutcome,
    reason: Option<String>,
    run_tool_counts: ToolCounts,
}

/// The read-only fields of [`ToolDispatched`], named, for [`ToolDispatched::new`].
#[derive(Debug, Clone)]
pub struct ToolDispatchedInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
    /// The path the call took or the result of the attempt.
    pub outcome: ToolOutcome,
    /// Why, in words.
    pub reason: Option<String>,
    /// Calls dispatched so far in the run, before this one.
    pub run_tool_counts: ToolCounts,
}

impl ToolDispatched {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolDispatchedInit) -> Self {
        let ToolDispatchedInit { name, call_id, input, run_id, turn_id, outcome, reason, run_tool_counts } = init;
        ToolDispatched {
            name,
            call_id,
            input,
            run_id,
            turn_id,
            outcome,
            reason,
            run_tool_counts,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// The path the call took or the result of the attempt.
    pub fn outcome(&self) -> ToolOutcome {
        self.outcome
    }

    /// Why, in words.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Calls dispatched so far in the run, before this one.
    pub fn run_tool_counts(&self) -> &ToolCounts {
        &self.run_tool_counts
    }
}

impl HookEvent for ToolDispatched {
    const NAME: &'static str = "tool:dispatched";
}

/// `tool:error`: A tool body failed; handlers may substitute the result the model sees.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolError {
    name: String,
    call_id: String,
    input: Value,
    run_id: String,
    turn_id: String,
    error: SharedError,
    /// The result the model sees.
    pub result: Option<ToolResultContent>,
}

/// The read-only fields of [`ToolError`], named, for [`ToolError::new`].
#[derive(Debug, Clone)]
pub struct ToolErrorInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
    /// The error.
    pub error: SharedError,
}

impl ToolError {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolErrorInit) -> Self {
        let ToolErrorInit { name, call_id, input, run_id, turn_id, error } = init;
        ToolError {
            name,
            call_id,
            input,
            run_id,
            turn_id,
            error,
            result: Default::default(),
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// The error.
    pub fn error(&self) -> &SharedError {
        &self.error
    }
}

impl HookEvent for ToolError {
    const NAME: &'static str = "tool:error";
}

/// `tool:gate`: Decide a call before it runs: refuse it, substitute a result or rewrite its input.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolGate {
    name: String,
    call_id: String,
    /// The call's arguments.
    pub input: Value,
    run_id: String,
    turn_id: String,
    resumed: bool,
    /// Per-handler state stored with the call's step record.
    pub resume_state: serde_json::Map<String, Value>,
    /// Set to refuse the call; wins over `result`.
    pub block: bool,
    /// Metadata riding the tool result.
    pub metadata: ToolResultMetadata,
    /// Why, in words.
    pub reason: String,
    /// The result the model sees.
    pub result: Option<ToolResultContent>,
    run_tool_counts: ToolCounts,
}

/// The read-only fields of [`ToolGate`], named, for [`ToolGate::new`].
#[derive(Debug, Clone)]
pub struct ToolGateInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
    /// Whether this call is dispatched again by a resumed run.
    pub resumed: bool,
    /// Calls dispatched so far in the run, before this one.
    pub run_tool_counts: ToolCounts,
}

impl ToolGate {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolGateInit) -> Self {
        let ToolGateInit { name, call_id, run_id, turn_id, resumed, run_tool_counts } = init;
        ToolGate {
            name,
            call_id,
            input: Default::default(),
            run_id,
            turn_id,
            resumed,
            resume_state: Default::default(),
            block: Default::default(),
            metadata: Default::default(),
            reason: Default::default(),
            result: Default::default(),
            run_tool_counts,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Whether this call is dispatched again by a resumed run.
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// Calls dispatched so far in the run, before this one.
    pub fn run_tool_counts(&self) -> &ToolCounts {
        &self.run_tool_counts
    }
}

impl HookEvent for ToolGate {
    const NAME: &'static str = "tool:gate";
}

/// `tool:progress`: Live output of a running tool.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolProgressEvent {
    name: String,
    call_id: String,
    input: Value,
    run_id: String,
    turn_id: String,
    progress: ToolProgress,
}

/// The read-only fields of [`ToolProgressEvent`], named, for [`ToolProgressEvent::new`].
#[derive(Debug, Clone)]
pub struct ToolProgressEventInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
    /// The progress report.
    pub progress: ToolProgress,
}

impl ToolProgressEvent {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolProgressEventInit) -> Self {
        let ToolProgressEventInit { name, call_id, input, run_id, turn_id, progress } = init;
        ToolProgressEvent {
            name,
            call_id,
            input,
            run_id,
            turn_id,
            progress,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// The progress report.
    pub fn progress(&self) -> &ToolProgress {
        &self.progress
    }
}

impl HookEvent for ToolProgressEvent {
    const NAME: &'static str = "tool:progress";
}

/// `tool:transform`: A tool result before it goes back to the model; handlers may rewrite it.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolTransform {
    name: String,
    call_id: String,
    input: Value,
    run_id: String,
    turn_id: String,
    coercions: Vec<String>,
    is_error: bool,
    /// Metadata riding the tool result.
    pub metadata: ToolResultMetadata,
    output_bytes: usize,
    /// The result the model sees.
    pub result: ToolResultContent,
}

/// The read-only fields of [`ToolTransform`], named, for [`ToolTransform::new`].
#[derive(Debug, Clone)]
pub struct ToolTransformInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
    /// Input fields that validation coerced into shape.
    pub coercions: Vec<String>,
    /// Whether the result reports a failure.
    pub is_error: bool,
    /// Size of the output before any handler rewrote it.
    pub output_bytes: usize,
}

impl ToolTransform {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolTransformInit) -> Self {
        let ToolTransformInit { name, call_id, input, run_id, turn_id, coercions, is_error, output_bytes } = init;
        ToolTransform {
            name,
            call_id,
            input,
            run_id,
            turn_id,
            coercions,
            is_error,
            metadata: Default::default(),
            output_bytes,
            result: Default::default(),
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Input fields that validation coerced into shape.
    pub fn coercions(&self) -> &Vec<String> {
        &self.coercions
    }

    /// Whether the result reports a failure.
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// Size of the output before any handler rewrote it.
    pub fn output_bytes(&self) -> usize {
        self.output_bytes
    }
}

impl HookEvent for ToolTransform {
    const NAME: &'static str = "tool:transform";
}

/// `tool:unknown`: The model called a tool that does not exist; handlers may answer for it.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolUnknown {
    name: String,
    call_id: String,
    input: Value,
    run_id: String,
    turn_id: String,
    /// The result the model sees.
    pub result: Option<ToolResultContent>,
    /// Set to skip the `tool:error` that would follow.
    pub suppress_error: bool,
}

/// The read-only fields of [`ToolUnknown`], named, for [`ToolUnknown::new`].
#[derive(Debug, Clone)]
pub struct ToolUnknownInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
}

impl ToolUnknown {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ToolUnknownInit) -> Self {
        let ToolUnknownInit { name, call_id, input, run_id, turn_id } = init;
        ToolUnknown {
            name,
            call_id,
            input,
            run_id,
            turn_id,
            result: Default::default(),
            suppress_error: Default::default(),
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for ToolUnknown {
    const NAME: &'static str = "tool:unknown";
}

/// `tracing:redact`: A value about to leave for an observability sink; handlers redact it.
///
/// Emitted by `observability and durable-runtime adapters`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TracingRedact {
    kind: RedactKind,
    meta: Option<serde_json::Map<String, Value>>,
    /// The value to ship; starts equal to `value`.
    pub redacted: String,
    value: String,
}

/// The read-only fields of [`TracingRedact`], named, for [`TracingRedact::new`].
#[derive(Debug, Clone)]
pub struct TracingRedactInit {
    /// What kind of entry this is.
    pub kind: RedactKind,
    /// Identifiers of the call site (tool name, server, turn id).
    pub meta: Option<serde_json::Map<String, Value>>,
    /// The value.
    pub value: String,
}

impl TracingRedact {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: TracingRedactInit) -> Self {
        let TracingRedactInit { kind, meta, value } = init;
        TracingRedact {
            kind,
            meta,
            redacted: Default::default(),
            value,
        }
    }

    /// What kind of entry this is.
    pub fn kind(&self) -> RedactKind {
        self.kind
    }

    /// Identifiers of the call site (tool name, server, turn id).
    pub fn meta(&self) -> &Option<serde_json::Map<String, Value>> {
        &self.meta
    }

    /// The value.
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl HookEvent for TracingRedact {
    const NAME: &'static str = "tracing:redact";
}

/// `turn:after`: An assistant turn finished, before its tool calls run.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TurnAfter {
    aborted: bool,
    cumulative_usage: CumulativeUsage,
    message: SessionTurn,
    tool_counts: TurnToolCounts,
    turn: u32,
    turn_id: String,
    usage: TurnUsage,
}

/// The read-only fields of [`TurnAfter`], named, for [`TurnAfter::new`].
#[derive(Debug, Clone)]
pub struct TurnAfterInit {
    /// Whether the run was already aborted when this fired.
    pub aborted: bool,
    /// The run's running totals.
    pub cumulative_usage: CumulativeUsage,
    /// The message or turn concerned.
    pub message: SessionTurn,
    /// Tool calls of this turn and of the run.
    pub tool_counts: TurnToolCounts,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Token usage of the turn.
    pub usage: TurnUsage,
}

impl TurnAfter {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: TurnAfterInit) -> Self {
        let TurnAfterInit { aborted, cumulative_usage, message, tool_counts, turn, turn_id, usage } = init;
        TurnAfter {
            aborted,
            cumulative_usage,
            message,
            tool_counts,
            turn,
            turn_id,
            usage,
        }
    }

    /// Whether the run was already aborted when this fired.
    pub fn aborted(&self) -> bool {
        self.aborted
    }

    /// The run's running totals.
    pub fn cumulative_usage(&self) -> &CumulativeUsage {
        &self.cumulative_usage
    }

    /// The message or turn concerned.
    pub fn message(&self) -> &SessionTurn {
        &self.message
    }

    /// Tool calls of this turn and of the run.
    pub fn tool_counts(&self) -> &TurnToolCounts {
        &self.tool_counts
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Token usage of the turn.
    pub fn usage(&self) -> &TurnUsage {
        &self.usage
    }
}

impl HookEvent for TurnAfter {
    const NAME: &'static str = "turn:after";
}

/// `turn:before`: The request of the next turn; handlers may change its options.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TurnBefore {
    /// The request's options.
    pub options: StreamOptions,
    turn: u32,
    turn_id: String,
}

/// The read-only fields of [`TurnBefore`], named, for [`TurnBefore::new`].
#[derive(Debug, Clone)]
pub struct TurnBeforeInit {
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
}

impl TurnBefore {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: TurnBeforeInit) -> Self {
        let TurnBeforeInit { turn, turn_id } = init;
        TurnBefore {
            options: Default::default(),
            turn,
            turn_id,
        }
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }
}

impl HookEvent for TurnBefore {
    const NAME: &'static str = "turn:before";
}

/// `usage`: A turn's usage and the run's running input and output totals.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Usage {
    total_in: u64,
    total_out: u64,
    turn: u32,
    turn_id: String,
    usage: TurnUsage,
}

/// The read-only fields of [`Usage`], named, for [`Usage::new`].
#[derive(Debug, Clone)]
pub struct UsageInit {
    /// Input tokens of the run so far.
    pub total_in: u64,
    /// Output tokens of the run so far.
    pub total_out: u64,
    /// Turn index within the run.
    pub turn: u32,
    /// Id of the turn.
    pub turn_id: String,
    /// Token usage of the turn.
    pub usage: TurnUsage,
}

impl Usage {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: UsageInit) -> Self {
        let UsageInit { total_in, total_out, turn, turn_id, usage } = init;
        Usage {
            total_in,
            total_out,
            turn,
            turn_id,
            usage,
        }
    }

    /// Input tokens of the run so far.
    pub fn total_in(&self) -> u64 {
        self.total_in
    }

    /// Output tokens of the run so far.
    pub fn total_out(&self) -> u64 {
        self.total_out
    }

    /// Turn index within the run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Token usage of the turn.
    pub fn usage(&self) -> &TurnUsage {
        &self.usage
    }
}

impl HookEvent for Usage {
    const NAME: &'static str = "usage";
}

/// `validation:coerce`: Validation coerced some input fields into shape.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ValidationCoerce {
    name: String,
    call_id: String,
    input: Value,
    run_id: String,
    turn_id: String,
    coercions: Vec<String>,
    schema: Value,
}

/// The read-only fields of [`ValidationCoerce`], named, for [`ValidationCoerce::new`].
#[derive(Debug, Clone)]
pub struct ValidationCoerceInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
    /// Input fields that validation coerced into shape.
    pub coercions: Vec<String>,
    /// The JSON schema involved.
    pub schema: Value,
}

impl ValidationCoerce {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ValidationCoerceInit) -> Self {
        let ValidationCoerceInit { name, call_id, input, run_id, turn_id, coercions, schema } = init;
        ValidationCoerce {
            name,
            call_id,
            input,
            run_id,
            turn_id,
            coercions,
            schema,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Input fields that validation coerced into shape.
    pub fn coercions(&self) -> &Vec<String> {
        &self.coercions
    }

    /// The JSON schema involved.
    pub fn schema(&self) -> &Value {
        &self.schema
    }
}

impl HookEvent for ValidationCoerce {
    const NAME: &'static str = "validation:coerce";
}

/// `validation:reject`: Validation rejected a call's input.
///
/// Emitted by `zidane-loop`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ValidationReject {
    name: String,
    call_id: String,
    input: Value,
    run_id: String,
    turn_id: String,
    reason: String,
    schema: Value,
}

/// The read-only fields of [`ValidationReject`], named, for [`ValidationReject::new`].
#[derive(Debug, Clone)]
pub struct ValidationRejectInit {
    /// Name of the tool, server or item concerned.
    pub name: String,
    /// Id of the tool call.
    pub call_id: String,
    /// The call's arguments.
    pub input: Value,
    /// Id of the run.
    pub run_id: String,
    /// Id of the turn.
    pub turn_id: String,
    /// Why, in words.
    pub reason: String,
    /// The JSON schema involved.
    pub schema: Value,
}

impl ValidationReject {
    /// Builds the event from its read-only fields; writable fields
    /// start at their defaults.
    pub fn new(init: ValidationRejectInit) -> Self {
        let ValidationRejectInit { name, call_id, input, run_id, turn_id, reason, schema } = init;
        ValidationReject {
            name,
            call_id,
            input,
            run_id,
            turn_id,
            reason,
            schema,
        }
    }

    /// Name of the tool, server or item concerned.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Id of the tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's arguments.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// Id of the run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Id of the turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Why, in words.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The JSON schema involved.
    pub fn schema(&self) -> &Value {
        &self.schema
    }
}

impl HookEvent for ValidationReject {
    const NAME: &'static str = "validation:reject";
}

/// `child:artifact:recorded`: A sub-agent's `artifact:recorded`.
pub type ChildArtifactRecorded = Child<ArtifactRecorded>;

impl Bubble for ArtifactRecorded {
    const CHILD_NAME: &'static str = "child:artifact:recorded";
}

/// `child:background:exit`: A sub-agent's `background:exit`.
pub type ChildBackgroundExit = Child<BackgroundExit>;

impl Bubble for BackgroundExit {
    const CHILD_NAME: &'static str = "child:background:exit";
}

/// `child:background:reassign`: A sub-agent's `background:reassign`.
pub type ChildBackgroundReassign = Child<BackgroundReassign>;

impl Bubble for BackgroundReassign {
    const CHILD_NAME: &'static str = "child:background:reassign";
}

/// `child:background:start`: A sub-agent's `background:start`.
pub type ChildBackgroundStart = Child<BackgroundStart>;

impl Bubble for BackgroundStart {
    const CHILD_NAME: &'static str = "child:background:start";
}

/// `child:mcp:tool:gate`: A sub-agent's `mcp:tool:gate`; the parent's decision goes back to the child.
pub type ChildMcpToolGate = Child<McpToolGate>;

impl Bubble for McpToolGate {
    const CHILD_NAME: &'static str = "child:mcp:tool:gate";
}

/// `child:repeat-guard:exceeded`: A sub-agent's `repeat-guard:exceeded`.
pub type ChildRepeatGuardExceeded = Child<RepeatGuardExceeded>;

impl Bubble for RepeatGuardExceeded {
    const CHILD_NAME: &'static str = "child:repeat-guard:exceeded";
}

/// `child:stream:end`: A sub-agent's `stream:end`.
pub type ChildStreamEnd = Child<StreamEnd>;

impl Bubble for StreamEnd {
    const CHILD_NAME: &'static str = "child:stream:end";
}

/// `child:stream:error`: A sub-agent's `stream:error`.
pub type ChildStreamError = Child<StreamError>;

impl Bubble for StreamError {
    const CHILD_NAME: &'static str = "child:stream:error";
}

/// `child:stream:retry`: A sub-agent's `stream:retry`.
pub type ChildStreamRetry = Child<StreamRetry>;

impl Bubble for StreamRetry {
    const CHILD_NAME: &'static str = "child:stream:retry";
}

/// `child:stream:server_tool_result`: A sub-agent's `stream:server_tool_result`.
pub type ChildStreamServerToolResult = Child<StreamServerToolResult>;

impl Bubble for StreamServerToolResult {
    const CHILD_NAME: &'static str = "child:stream:server_tool_result";
}

/// `child:stream:server_tool_use`: A sub-agent's `stream:server_tool_use`.
pub type ChildStreamServerToolUse = Child<StreamServerToolUse>;

impl Bubble for StreamServerToolUse {
    const CHILD_NAME: &'static str = "child:stream:server_tool_use";
}

/// `child:stream:text`: A sub-agent's `stream:text`.
pub type ChildStreamText = Child<StreamText>;

impl Bubble for StreamText {
    const CHILD_NAME: &'static str = "child:stream:text";
}

/// `child:stream:thinking`: A sub-agent's `stream:thinking`.
pub type ChildStreamThinking = Child<StreamThinking>;

impl Bubble for StreamThinking {
    const CHILD_NAME: &'static str = "child:stream:thinking";
}

/// `child:tool:after`: A sub-agent's `tool:after`.
pub type ChildToolAfter = Child<ToolAfter>;

impl Bubble for ToolAfter {
    const CHILD_NAME: &'static str = "child:tool:after";
}

/// `child:tool:before`: A sub-agent's `tool:before`.
pub type ChildToolBefore = Child<ToolBefore>;

impl Bubble for ToolBefore {
    const CHILD_NAME: &'static str = "child:tool:before";
}

/// `child:tool:cancelled`: A sub-agent's `tool:cancelled`.
pub type ChildToolCancelled = Child<ToolCancelled>;

impl Bubble for ToolCancelled {
    const CHILD_NAME: &'static str = "child:tool:cancelled";
}

/// `child:tool:dispatched`: A sub-agent's `tool:dispatched`.
pub type ChildToolDispatched = Child<ToolDispatched>;

impl Bubble for ToolDispatched {
    const CHILD_NAME: &'static str = "child:tool:dispatched";
}

/// `child:tool:error`: A sub-agent's `tool:error`.
pub type ChildToolError = Child<ToolError>;

impl Bubble for ToolError {
    const CHILD_NAME: &'static str = "child:tool:error";
}

/// `child:tool:gate`: A sub-agent's `tool:gate`; the parent's decision goes back to the child.
pub type ChildToolGate = Child<ToolGate>;

impl Bubble for ToolGate {
    const CHILD_NAME: &'static str = "child:tool:gate";
}

/// `child:tool:progress`: A sub-agent's `tool:progress`.
pub type ChildToolProgress = Child<ToolProgressEvent>;

impl Bubble for ToolProgressEvent {
    const CHILD_NAME: &'static str = "child:tool:progress";
}

/// `child:tool:transform`: A sub-agent's `tool:transform`; the parent's rewrite goes back to the child.
pub type ChildToolTransform = Child<ToolTransform>;

impl Bubble for ToolTransform {
    const CHILD_NAME: &'static str = "child:tool:transform";
}

/// `child:turn:after`: A sub-agent's `turn:after`.
pub type ChildTurnAfter = Child<TurnAfter>;

impl Bubble for TurnAfter {
    const CHILD_NAME: &'static str = "child:turn:after";
}

/// `child:validation:reject`: A sub-agent's `validation:reject`.
pub type ChildValidationReject = Child<ValidationReject>;

impl Bubble for ValidationReject {
    const CHILD_NAME: &'static str = "child:validation:reject";
}

/// Installs, through `link`, a forwarder for each bubbled event the
/// parent listens to (see [`install_bubbling`](crate::bubble::install_bubbling)).
pub(crate) fn forward_bubbled(link: &crate::bubble::BubbleLink<'_>) {
    link.forward::<ArtifactRecorded>(false);
    link.forward::<BackgroundExit>(false);
    link.forward::<BackgroundReassign>(false);
    link.forward::<BackgroundStart>(false);
    link.forward::<McpToolGate>(true);
    link.forward::<RepeatGuardExceeded>(false);
    link.forward::<StreamEnd>(false);
    link.forward::<StreamError>(false);
    link.forward::<StreamRetry>(false);
    link.forward::<StreamServerToolResult>(false);
    link.forward::<StreamServerToolUse>(false);
    link.forward::<StreamText>(false);
    link.forward::<StreamThinking>(false);
    link.forward::<ToolAfter>(false);
    link.forward::<ToolBefore>(false);
    link.forward::<ToolCancelled>(false);
    link.forward::<ToolDispatched>(false);
    link.forward::<ToolError>(false);
    link.forward::<ToolGate>(true);
    link.forward::<ToolProgressEvent>(false);
    link.forward::<ToolTransform>(true);
    link.forward::<TurnAfter>(false);
    link.forward::<ValidationReject>(false);
}

/// Every hook of the vocabulary, in declaration order.
pub static CATALOGUE: &[HookInfo] = &[
    HookInfo {
        name: "agent:abort",
        rust_type: "AgentAbort",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The run was aborted; once per aborted run, whatever path the abort took.",
        spec: HookSpec::of::<AgentAbort>(),
    },
    HookInfo {
        name: "agent:done",
        rust_type: "AgentDone",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The run finished, on every exit path, with cumulative statistics.",
        spec: HookSpec::of::<AgentDone>(),
    },
    HookInfo {
        name: "agent:start",
        rust_type: "AgentStart",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A run started; before its first turn.",
        spec: HookSpec::of::<AgentStart>(),
    },
    HookInfo {
        name: "artifact:recorded",
        rust_type: "ArtifactRecorded",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "The session stored an artifact a tool result declared.",
        spec: HookSpec::of::<ArtifactRecorded>(),
    },
    HookInfo {
        name: "background:adopt",
        rust_type: "BackgroundAdopt",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A running background task was handed over to this agent.",
        spec: HookSpec::of::<BackgroundAdopt>(),
    },
    HookInfo {
        name: "background:exit",
        rust_type: "BackgroundExit",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A background task's process ended; once per task.",
        spec: HookSpec::of::<BackgroundExit>(),
    },
    HookInfo {
        name: "background:reassign",
        rust_type: "BackgroundReassign",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A background task moved from one execution handle to another.",
        spec: HookSpec::of::<BackgroundReassign>(),
    },
    HookInfo {
        name: "background:reconcile",
        rust_type: "BackgroundReconcile",
        emitter: Emitter::Agent,
        mutable: true,
        emitted: true,
        summary: "Background exits about to be shown to the model; handlers may edit the list.",
        spec: HookSpec::of::<BackgroundReconcile>(),
    },
    HookInfo {
        name: "background:stall",
        rust_type: "BackgroundStall",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A background task produced no output for the watchdog's window.",
        spec: HookSpec::of::<BackgroundStall>(),
    },
    HookInfo {
        name: "background:start",
        rust_type: "BackgroundStart",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A background task was spawned.",
        spec: HookSpec::of::<BackgroundStart>(),
    },
    HookInfo {
        name: "budget:exceeded",
        rust_type: "BudgetExceeded",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A turn's tool output exceeded the byte budget.",
        spec: HookSpec::of::<BudgetExceeded>(),
    },
    HookInfo {
        name: "cache:break",
        rust_type: "CacheBreak",
        emitter: Emitter::CacheTelemetry,
        mutable: false,
        emitted: true,
        summary: "A turn read back materially less cached prefix than the previous one established.",
        spec: HookSpec::of::<CacheBreak>(),
    },
    HookInfo {
        name: "cache:drift",
        rust_type: "CacheDrift",
        emitter: Emitter::CacheTelemetry,
        mutable: false,
        emitted: true,
        summary: "The outgoing request differs from the previous turn's in a cache-relevant way.",
        spec: HookSpec::of::<CacheDrift>(),
    },
    HookInfo {
        name: "child:spawn:before",
        rust_type: "ChildSpawnBefore",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's sub-agent is about to start (seen from an ancestor).",
        spec: HookSpec::of::<ChildSpawnBefore>(),
    },
    HookInfo {
        name: "child:spawn:complete",
        rust_type: "ChildSpawnComplete",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's sub-agent finished (seen from an ancestor).",
        spec: HookSpec::of::<ChildSpawnComplete>(),
    },
    HookInfo {
        name: "child:spawn:error",
        rust_type: "ChildSpawnError",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's sub-agent failed (seen from an ancestor).",
        spec: HookSpec::of::<ChildSpawnError>(),
    },
    HookInfo {
        name: "compact:end",
        rust_type: "CompactEnd",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A compaction finished, successfully or not; exactly once per `compact:start`.",
        spec: HookSpec::of::<CompactEnd>(),
    },
    HookInfo {
        name: "compact:progress",
        rust_type: "CompactProgress",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "The compaction summary is streaming; a rough output-token estimate.",
        spec: HookSpec::of::<CompactProgress>(),
    },
    HookInfo {
        name: "compact:restore",
        rust_type: "CompactRestore",
        emitter: Emitter::Agent,
        mutable: true,
        emitted: true,
        summary: "A compaction is building the turns it keeps after the summary; handlers may add calls.",
        spec: HookSpec::of::<CompactRestore>(),
    },
    HookInfo {
        name: "compact:start",
        rust_type: "CompactStart",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A compaction is about to summarize older turns.",
        spec: HookSpec::of::<CompactStart>(),
    },
    HookInfo {
        name: "content-ref:resolve",
        rust_type: "ContentRefResolve",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "A block refers to persisted bytes; handlers supply them for the wire.",
        spec: HookSpec::of::<ContentRefResolve>(),
    },
    HookInfo {
        name: "context:overflow",
        rust_type: "ContextOverflow",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The provider said the context is too long; an emergency elision follows.",
        spec: HookSpec::of::<ContextOverflow>(),
    },
    HookInfo {
        name: "context:transform",
        rust_type: "ContextTransform",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "The messages of the next request; handlers may rewrite them.",
        spec: HookSpec::of::<ContextTransform>(),
    },
    HookInfo {
        name: "decision:end",
        rust_type: "DecisionEnd",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A decision finished, successfully or not.",
        spec: HookSpec::of::<DecisionEnd>(),
    },
    HookInfo {
        name: "decision:start",
        rust_type: "DecisionStart",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A decision request started.",
        spec: HookSpec::of::<DecisionStart>(),
    },
    HookInfo {
        name: "execution:ready",
        rust_type: "ExecutionReady",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "The execution handle was bound for the first time; once per agent.",
        spec: HookSpec::of::<ExecutionReady>(),
    },
    HookInfo {
        name: "history:repair",
        rust_type: "HistoryRepair",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "Reasoning state the provider rejected was scrubbed from history.",
        spec: HookSpec::of::<HistoryRepair>(),
    },
    HookInfo {
        name: "mcp:auth:error",
        rust_type: "McpAuthError",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "An interactive MCP login failed.",
        spec: HookSpec::of::<McpAuthError>(),
    },
    HookInfo {
        name: "mcp:auth:required",
        rust_type: "McpAuthRequired",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "An MCP server needs a login before it can bootstrap.",
        spec: HookSpec::of::<McpAuthRequired>(),
    },
    HookInfo {
        name: "mcp:auth:success",
        rust_type: "McpAuthSuccess",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "An interactive MCP login succeeded and tokens were stored.",
        spec: HookSpec::of::<McpAuthSuccess>(),
    },
    HookInfo {
        name: "mcp:auth:url",
        rust_type: "McpAuthUrl",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "An interactive MCP login wants the user to open a URL.",
        spec: HookSpec::of::<McpAuthUrl>(),
    },
    HookInfo {
        name: "mcp:bootstrap:end",
        rust_type: "McpBootstrapEnd",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "One MCP server's bootstrap attempt ended.",
        spec: HookSpec::of::<McpBootstrapEnd>(),
    },
    HookInfo {
        name: "mcp:bootstrap:settled",
        rust_type: "McpBootstrapSettled",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "Every server of a bootstrap batch has settled; results sorted by name.",
        spec: HookSpec::of::<McpBootstrapSettled>(),
    },
    HookInfo {
        name: "mcp:bootstrap:start",
        rust_type: "McpBootstrapStart",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "One MCP server's bootstrap attempt starts.",
        spec: HookSpec::of::<McpBootstrapStart>(),
    },
    HookInfo {
        name: "mcp:close",
        rust_type: "McpClose",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "An MCP connection was closed.",
        spec: HookSpec::of::<McpClose>(),
    },
    HookInfo {
        name: "mcp:connect",
        rust_type: "McpConnect",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "An MCP client finished its handshake.",
        spec: HookSpec::of::<McpConnect>(),
    },
    HookInfo {
        name: "mcp:error",
        rust_type: "McpError",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "An MCP server failed to connect or failed fatally.",
        spec: HookSpec::of::<McpError>(),
    },
    HookInfo {
        name: "mcp:tool:after",
        rust_type: "McpToolAfter",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "An MCP tool call returned.",
        spec: HookSpec::of::<McpToolAfter>(),
    },
    HookInfo {
        name: "mcp:tool:before",
        rust_type: "McpToolBefore",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "An MCP tool call is about to be sent.",
        spec: HookSpec::of::<McpToolBefore>(),
    },
    HookInfo {
        name: "mcp:tool:error",
        rust_type: "McpToolError",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "An MCP tool call failed.",
        spec: HookSpec::of::<McpToolError>(),
    },
    HookInfo {
        name: "mcp:tool:gate",
        rust_type: "McpToolGate",
        emitter: Emitter::Mcp,
        mutable: true,
        emitted: true,
        summary: "Decide an MCP tool call inside the MCP wrapper: refuse it or substitute a result.",
        spec: HookSpec::of::<McpToolGate>(),
    },
    HookInfo {
        name: "mcp:tool:transform",
        rust_type: "McpToolTransform",
        emitter: Emitter::Mcp,
        mutable: true,
        emitted: true,
        summary: "An MCP tool result before it is returned; handlers may rewrite it.",
        spec: HookSpec::of::<McpToolTransform>(),
    },
    HookInfo {
        name: "mcp:tools:filter",
        rust_type: "McpToolsFilter",
        emitter: Emitter::Mcp,
        mutable: true,
        emitted: true,
        summary: "A server's tools after the config filters; handlers may narrow the list.",
        spec: HookSpec::of::<McpToolsFilter>(),
    },
    HookInfo {
        name: "mcp:tools:list",
        rust_type: "McpToolsList",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "The raw tool list a server advertised.",
        spec: HookSpec::of::<McpToolsList>(),
    },
    HookInfo {
        name: "mcp:warn",
        rust_type: "McpWarn",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "A diagnostic line from an MCP server (its stderr, a soft failure).",
        spec: HookSpec::of::<McpWarn>(),
    },
    HookInfo {
        name: "model:fallback",
        rust_type: "ModelFallback",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The run moved to the next provider and model of its fallback chain.",
        spec: HookSpec::of::<ModelFallback>(),
    },
    HookInfo {
        name: "oauth:refresh",
        rust_type: "OAuthRefresh",
        emitter: Emitter::Mcp,
        mutable: false,
        emitted: true,
        summary: "OAuth credentials were refreshed during a run (an MCP server's tokens: `provider` is `mcp:<server>`).",
        spec: HookSpec::of::<OAuthRefresh>(),
    },
    HookInfo {
        name: "output",
        rust_type: "Output",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The structured output of a run, validated against its schema.",
        spec: HookSpec::of::<Output>(),
    },
    HookInfo {
        name: "pairing:repair",
        rust_type: "PairingRepair",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The pre-send pairing pass repaired the history.",
        spec: HookSpec::of::<PairingRepair>(),
    },
    HookInfo {
        name: "provider:diagnostic",
        rust_type: "ProviderDiagnostic",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The provider reported a diagnostic for a turn.",
        spec: HookSpec::of::<ProviderDiagnostic>(),
    },
    HookInfo {
        name: "provider:input-transformations",
        rust_type: "ProviderInputTransformations",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The provider dropped replayed reasoning blocks before sampling.",
        spec: HookSpec::of::<ProviderInputTransformations>(),
    },
    HookInfo {
        name: "repeat-guard:exceeded",
        rust_type: "RepeatGuardExceeded",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The repeat guard escalated on a tool.",
        spec: HookSpec::of::<RepeatGuardExceeded>(),
    },
    HookInfo {
        name: "replay:done",
        rust_type: "ReplayDone",
        emitter: Emitter::Adapter,
        mutable: false,
        emitted: true,
        summary: "A durable replay caught up with its journal and went live.",
        spec: HookSpec::of::<ReplayDone>(),
    },
    HookInfo {
        name: "resume:mismatch",
        rust_type: "ResumeMismatch",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A resume was refused because the step records no longer match the saved turns.",
        spec: HookSpec::of::<ResumeMismatch>(),
    },
    HookInfo {
        name: "run:beforeEnd",
        rust_type: "RunBeforeEnd",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "The model gave a final answer and nothing is queued; a handler may keep the run going.",
        spec: HookSpec::of::<RunBeforeEnd>(),
    },
    HookInfo {
        name: "session:end",
        rust_type: "SessionEnd",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A run on a session ended.",
        spec: HookSpec::of::<SessionEnd>(),
    },
    HookInfo {
        name: "session:meta",
        rust_type: "SessionMeta",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A session metadata key was set.",
        spec: HookSpec::of::<SessionMeta>(),
    },
    HookInfo {
        name: "session:save",
        rust_type: "SessionSave",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "The session was saved.",
        spec: HookSpec::of::<SessionSave>(),
    },
    HookInfo {
        name: "session:start",
        rust_type: "SessionStart",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A run started on a session.",
        spec: HookSpec::of::<SessionStart>(),
    },
    HookInfo {
        name: "session:turns",
        rust_type: "SessionTurns",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "New turns were flushed to the session.",
        spec: HookSpec::of::<SessionTurns>(),
    },
    HookInfo {
        name: "skills:activate",
        rust_type: "SkillsActivate",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A skill was activated.",
        spec: HookSpec::of::<SkillsActivate>(),
    },
    HookInfo {
        name: "skills:catalog",
        rust_type: "SkillsCatalog",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "The rendered skills catalog and the skills it lists.",
        spec: HookSpec::of::<SkillsCatalog>(),
    },
    HookInfo {
        name: "skills:deactivate",
        rust_type: "SkillsDeactivate",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A skill was deactivated.",
        spec: HookSpec::of::<SkillsDeactivate>(),
    },
    HookInfo {
        name: "skills:resolve",
        rust_type: "SkillsResolve",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "Skills were resolved.",
        spec: HookSpec::of::<SkillsResolve>(),
    },
    HookInfo {
        name: "spawn:before",
        rust_type: "SpawnBefore",
        emitter: Emitter::Agent,
        mutable: true,
        emitted: true,
        summary: "A sub-agent is about to start; tracers may inject their context.",
        spec: HookSpec::of::<SpawnBefore>(),
    },
    HookInfo {
        name: "spawn:complete",
        rust_type: "SpawnComplete",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent finished.",
        spec: HookSpec::of::<SpawnComplete>(),
    },
    HookInfo {
        name: "spawn:error",
        rust_type: "SpawnError",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent failed.",
        spec: HookSpec::of::<SpawnError>(),
    },
    HookInfo {
        name: "spawn:queued",
        rust_type: "SpawnQueued",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A top-level spawn waits for a free slot.",
        spec: HookSpec::of::<SpawnQueued>(),
    },
    HookInfo {
        name: "steer:inject",
        rust_type: "SteerInject",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A queued message joined the conversation as a user turn.",
        spec: HookSpec::of::<SteerInject>(),
    },
    HookInfo {
        name: "stream:end",
        rust_type: "StreamEnd",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The turn's text stream ended.",
        spec: HookSpec::of::<StreamEnd>(),
    },
    HookInfo {
        name: "stream:error",
        rust_type: "StreamError",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The provider's stream failed before its end.",
        spec: HookSpec::of::<StreamError>(),
    },
    HookInfo {
        name: "stream:progress",
        rust_type: "StreamProgress",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "Tokens streamed so far and a running cost estimate (throttled).",
        spec: HookSpec::of::<StreamProgress>(),
    },
    HookInfo {
        name: "stream:retry",
        rust_type: "StreamRetry",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A retryable provider error; the loop sleeps, then tries again.",
        spec: HookSpec::of::<StreamRetry>(),
    },
    HookInfo {
        name: "stream:server_tool_result",
        rust_type: "StreamServerToolResult",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A server-side tool result block closed.",
        spec: HookSpec::of::<StreamServerToolResult>(),
    },
    HookInfo {
        name: "stream:server_tool_use",
        rust_type: "StreamServerToolUse",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A server-side tool call block closed.",
        spec: HookSpec::of::<StreamServerToolUse>(),
    },
    HookInfo {
        name: "stream:start",
        rust_type: "StreamStart",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The request is about to leave for the provider.",
        spec: HookSpec::of::<StreamStart>(),
    },
    HookInfo {
        name: "stream:text",
        rust_type: "StreamText",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A text delta.",
        spec: HookSpec::of::<StreamText>(),
    },
    HookInfo {
        name: "stream:thinking",
        rust_type: "StreamThinking",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A thinking delta.",
        spec: HookSpec::of::<StreamThinking>(),
    },
    HookInfo {
        name: "system:before",
        rust_type: "SystemBefore",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The run-level system prompt, once per run when one was given.",
        spec: HookSpec::of::<SystemBefore>(),
    },
    HookInfo {
        name: "system:transform",
        rust_type: "SystemTransform",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "The system prompt of the next request; handlers may rewrite it (keep it byte-stable).",
        spec: HookSpec::of::<SystemTransform>(),
    },
    HookInfo {
        name: "tool-batch:resumed",
        rust_type: "ToolBatchResumed",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A durable run resumes a tool batch a dead process left unfinished.",
        spec: HookSpec::of::<ToolBatchResumed>(),
    },
    HookInfo {
        name: "tool-budget:exceeded",
        rust_type: "ToolBudgetExceeded",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A per-tool call budget was exceeded.",
        spec: HookSpec::of::<ToolBudgetExceeded>(),
    },
    HookInfo {
        name: "tool-results:after",
        rust_type: "ToolResultsAfter",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "The tool-results turn joined the conversation.",
        spec: HookSpec::of::<ToolResultsAfter>(),
    },
    HookInfo {
        name: "tool-state:commit-failed",
        rust_type: "ToolStateCommitFailed",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "A settled call's durable tool state could not be committed.",
        spec: HookSpec::of::<ToolStateCommitFailed>(),
    },
    HookInfo {
        name: "tool:after",
        rust_type: "ToolAfter",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A tool result (executed or substituted by a gate) after transforms.",
        spec: HookSpec::of::<ToolAfter>(),
    },
    HookInfo {
        name: "tool:before",
        rust_type: "ToolBefore",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "A tool body is about to run; handlers may rewrite its input.",
        spec: HookSpec::of::<ToolBefore>(),
    },
    HookInfo {
        name: "tool:cancelled",
        rust_type: "ToolCancelled",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "One in-flight call was cancelled.",
        spec: HookSpec::of::<ToolCancelled>(),
    },
    HookInfo {
        name: "tool:dispatched",
        rust_type: "ToolDispatched",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A call was dispatched, with the path it took; once per call.",
        spec: HookSpec::of::<ToolDispatched>(),
    },
    HookInfo {
        name: "tool:error",
        rust_type: "ToolError",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "A tool body failed; handlers may substitute the result the model sees.",
        spec: HookSpec::of::<ToolError>(),
    },
    HookInfo {
        name: "tool:gate",
        rust_type: "ToolGate",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "Decide a call before it runs: refuse it, substitute a result or rewrite its input.",
        spec: HookSpec::of::<ToolGate>(),
    },
    HookInfo {
        name: "tool:progress",
        rust_type: "ToolProgressEvent",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "Live output of a running tool.",
        spec: HookSpec::of::<ToolProgressEvent>(),
    },
    HookInfo {
        name: "tool:transform",
        rust_type: "ToolTransform",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "A tool result before it goes back to the model; handlers may rewrite it.",
        spec: HookSpec::of::<ToolTransform>(),
    },
    HookInfo {
        name: "tool:unknown",
        rust_type: "ToolUnknown",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "The model called a tool that does not exist; handlers may answer for it.",
        spec: HookSpec::of::<ToolUnknown>(),
    },
    HookInfo {
        name: "tracing:redact",
        rust_type: "TracingRedact",
        emitter: Emitter::Adapter,
        mutable: true,
        emitted: true,
        summary: "A value about to leave for an observability sink; handlers redact it.",
        spec: HookSpec::of::<TracingRedact>(),
    },
    HookInfo {
        name: "turn:after",
        rust_type: "TurnAfter",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "An assistant turn finished, before its tool calls run.",
        spec: HookSpec::of::<TurnAfter>(),
    },
    HookInfo {
        name: "turn:before",
        rust_type: "TurnBefore",
        emitter: Emitter::Loop,
        mutable: true,
        emitted: true,
        summary: "The request of the next turn; handlers may change its options.",
        spec: HookSpec::of::<TurnBefore>(),
    },
    HookInfo {
        name: "usage",
        rust_type: "Usage",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "A turn's usage and the run's running input and output totals.",
        spec: HookSpec::of::<Usage>(),
    },
    HookInfo {
        name: "validation:coerce",
        rust_type: "ValidationCoerce",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "Validation coerced some input fields into shape.",
        spec: HookSpec::of::<ValidationCoerce>(),
    },
    HookInfo {
        name: "validation:reject",
        rust_type: "ValidationReject",
        emitter: Emitter::Loop,
        mutable: false,
        emitted: true,
        summary: "Validation rejected a call's input.",
        spec: HookSpec::of::<ValidationReject>(),
    },
    HookInfo {
        name: "child:artifact:recorded",
        rust_type: "Child<ArtifactRecorded>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `artifact:recorded`.",
        spec: HookSpec::of::<ChildArtifactRecorded>(),
    },
    HookInfo {
        name: "child:background:exit",
        rust_type: "Child<BackgroundExit>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `background:exit`.",
        spec: HookSpec::of::<ChildBackgroundExit>(),
    },
    HookInfo {
        name: "child:background:reassign",
        rust_type: "Child<BackgroundReassign>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `background:reassign`.",
        spec: HookSpec::of::<ChildBackgroundReassign>(),
    },
    HookInfo {
        name: "child:background:start",
        rust_type: "Child<BackgroundStart>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `background:start`.",
        spec: HookSpec::of::<ChildBackgroundStart>(),
    },
    HookInfo {
        name: "child:mcp:tool:gate",
        rust_type: "Child<McpToolGate>",
        emitter: Emitter::Agent,
        mutable: true,
        emitted: true,
        summary: "A sub-agent's `mcp:tool:gate`; the parent's decision goes back to the child.",
        spec: HookSpec::of::<ChildMcpToolGate>(),
    },
    HookInfo {
        name: "child:repeat-guard:exceeded",
        rust_type: "Child<RepeatGuardExceeded>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `repeat-guard:exceeded`.",
        spec: HookSpec::of::<ChildRepeatGuardExceeded>(),
    },
    HookInfo {
        name: "child:stream:end",
        rust_type: "Child<StreamEnd>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `stream:end`.",
        spec: HookSpec::of::<ChildStreamEnd>(),
    },
    HookInfo {
        name: "child:stream:error",
        rust_type: "Child<StreamError>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `stream:error`.",
        spec: HookSpec::of::<ChildStreamError>(),
    },
    HookInfo {
        name: "child:stream:retry",
        rust_type: "Child<StreamRetry>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `stream:retry`.",
        spec: HookSpec::of::<ChildStreamRetry>(),
    },
    HookInfo {
        name: "child:stream:server_tool_result",
        rust_type: "Child<StreamServerToolResult>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `stream:server_tool_result`.",
        spec: HookSpec::of::<ChildStreamServerToolResult>(),
    },
    HookInfo {
        name: "child:stream:server_tool_use",
        rust_type: "Child<StreamServerToolUse>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `stream:server_tool_use`.",
        spec: HookSpec::of::<ChildStreamServerToolUse>(),
    },
    HookInfo {
        name: "child:stream:text",
        rust_type: "Child<StreamText>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `stream:text`.",
        spec: HookSpec::of::<ChildStreamText>(),
    },
    HookInfo {
        name: "child:stream:thinking",
        rust_type: "Child<StreamThinking>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `stream:thinking`.",
        spec: HookSpec::of::<ChildStreamThinking>(),
    },
    HookInfo {
        name: "child:tool:after",
        rust_type: "Child<ToolAfter>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `tool:after`.",
        spec: HookSpec::of::<ChildToolAfter>(),
    },
    HookInfo {
        name: "child:tool:before",
        rust_type: "Child<ToolBefore>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `tool:before`.",
        spec: HookSpec::of::<ChildToolBefore>(),
    },
    HookInfo {
        name: "child:tool:cancelled",
        rust_type: "Child<ToolCancelled>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `tool:cancelled`.",
        spec: HookSpec::of::<ChildToolCancelled>(),
    },
    HookInfo {
        name: "child:tool:dispatched",
        rust_type: "Child<ToolDispatched>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `tool:dispatched`.",
        spec: HookSpec::of::<ChildToolDispatched>(),
    },
    HookInfo {
        name: "child:tool:error",
        rust_type: "Child<ToolError>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `tool:error`.",
        spec: HookSpec::of::<ChildToolError>(),
    },
    HookInfo {
        name: "child:tool:gate",
        rust_type: "Child<ToolGate>",
        emitter: Emitter::Agent,
        mutable: true,
        emitted: true,
        summary: "A sub-agent's `tool:gate`; the parent's decision goes back to the child.",
        spec: HookSpec::of::<ChildToolGate>(),
    },
    HookInfo {
        name: "child:tool:progress",
        rust_type: "Child<ToolProgressEvent>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `tool:progress`.",
        spec: HookSpec::of::<ChildToolProgress>(),
    },
    HookInfo {
        name: "child:tool:transform",
        rust_type: "Child<ToolTransform>",
        emitter: Emitter::Agent,
        mutable: true,
        emitted: true,
        summary: "A sub-agent's `tool:transform`; the parent's rewrite goes back to the child.",
        spec: HookSpec::of::<ChildToolTransform>(),
    },
    HookInfo {
        name: "child:turn:after",
        rust_type: "Child<TurnAfter>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `turn:after`.",
        spec: HookSpec::of::<ChildTurnAfter>(),
    },
    HookInfo {
        name: "child:validation:reject",
        rust_type: "Child<ValidationReject>",
        emitter: Emitter::Agent,
        mutable: false,
        emitted: true,
        summary: "A sub-agent's `validation:reject`.",
        spec: HookSpec::of::<ChildValidationReject>(),
    },
];

/// The catalogue as hook specs, for [`zidane_hooks::HookMap::install`].
pub static HOOK_SPECS: &[HookSpec] = &[
    HookSpec::of::<AgentAbort>(),
    HookSpec::of::<AgentDone>(),
    HookSpec::of::<AgentStart>(),
    HookSpec::of::<ArtifactRecorded>(),
    HookSpec::of::<BackgroundAdopt>(),
    HookSpec::of::<BackgroundExit>(),
    HookSpec::of::<BackgroundReassign>(),
    HookSpec::of::<BackgroundReconcile>(),
    HookSpec::of::<BackgroundStall>(),
    HookSpec::of::<BackgroundStart>(),
    HookSpec::of::<BudgetExceeded>(),
    HookSpec::of::<CacheBreak>(),
    HookSpec::of::<CacheDrift>(),
    HookSpec::of::<ChildSpawnBefore>(),
    HookSpec::of::<ChildSpawnComplete>(),
    HookSpec::of::<ChildSpawnError>(),
    HookSpec::of::<CompactEnd>(),
    HookSpec::of::<CompactProgress>(),
    HookSpec::of::<CompactRestore>(),
    HookSpec::of::<CompactStart>(),
    HookSpec::of::<ContentRefResolve>(),
    HookSpec::of::<ContextOverflow>(),
    HookSpec::of::<ContextTransform>(),
    HookSpec::of::<DecisionEnd>(),
    HookSpec::of::<DecisionStart>(),
    HookSpec::of::<ExecutionReady>(),
    HookSpec::of::<HistoryRepair>(),
    HookSpec::of::<McpAuthError>(),
    HookSpec::of::<McpAuthRequired>(),
    HookSpec::of::<McpAuthSuccess>(),
    HookSpec::of::<McpAuthUrl>(),
    HookSpec::of::<McpBootstrapEnd>(),
    HookSpec::of::<McpBootstrapSettled>(),
    HookSpec::of::<McpBootstrapStart>(),
    HookSpec::of::<McpClose>(),
    HookSpec::of::<McpConnect>(),
    HookSpec::of::<McpError>(),
    HookSpec::of::<McpToolAfter>(),
    HookSpec::of::<McpToolBefore>(),
    HookSpec::of::<McpToolError>(),
    HookSpec::of::<McpToolGate>(),
    HookSpec::of::<McpToolTransform>(),
    HookSpec::of::<McpToolsFilter>(),
    HookSpec::of::<McpToolsList>(),
    HookSpec::of::<McpWarn>(),
    HookSpec::of::<ModelFallback>(),
    HookSpec::of::<OAuthRefresh>(),
    HookSpec::of::<Output>(),
    HookSpec::of::<PairingRepair>(),
    HookSpec::of::<ProviderDiagnostic>(),
    HookSpec::of::<ProviderInputTransformations>(),
    HookSpec::of::<RepeatGuardExceeded>(),
    HookSpec::of::<ReplayDone>(),
    HookSpec::of::<ResumeMismatch>(),
    HookSpec::of::<RunBeforeEnd>(),
    HookSpec::of::<SessionEnd>(),
    HookSpec::of::<SessionMeta>(),
    HookSpec::of::<SessionSave>(),
    HookSpec::of::<SessionStart>(),
    HookSpec::of::<SessionTurns>(),
    HookSpec::of::<SkillsActivate>(),
    HookSpec::of::<SkillsCatalog>(),
    HookSpec::of::<SkillsDeactivate>(),
    HookSpec::of::<SkillsResolve>(),
    HookSpec::of::<SpawnBefore>(),
    HookSpec::of::<SpawnComplete>(),
    HookSpec::of::<SpawnError>(),
    HookSpec::of::<SpawnQueued>(),
    HookSpec::of::<SteerInject>(),
    HookSpec::of::<StreamEnd>(),
    HookSpec::of::<StreamError>(),
    HookSpec::of::<StreamProgress>(),
    HookSpec::of::<StreamRetry>(),
    HookSpec::of::<StreamServerToolResult>(),
    HookSpec::of::<StreamServerToolUse>(),
    HookSpec::of::<StreamStart>(),
    HookSpec::of::<StreamText>(),
    HookSpec::of::<StreamThinking>(),
    HookSpec::of::<SystemBefore>(),
    HookSpec::of::<SystemTransform>(),
    HookSpec::of::<ToolBatchResumed>(),
    HookSpec::of::<ToolBudgetExceeded>(),
    HookSpec::of::<ToolResultsAfter>(),
    HookSpec::of::<ToolStateCommitFailed>(),
    HookSpec::of::<ToolAfter>(),
    HookSpec::of::<ToolBefore>(),
    HookSpec::of::<ToolCancelled>(),
    HookSpec::of::<ToolDispatched>(),
    HookSpec::of::<ToolError>(),
    HookSpec::of::<ToolGate>(),
    HookSpec::of::<ToolProgressEvent>(),
    HookSpec::of::<ToolTransform>(),
    HookSpec::of::<ToolUnknown>(),
    HookSpec::of::<TracingRedact>(),
    HookSpec::of::<TurnAfter>(),
    HookSpec::of::<TurnBefore>(),
    HookSpec::of::<Usage>(),
    HookSpec::of::<ValidationCoerce>(),
    HookSpec::of::<ValidationReject>(),
    HookSpec::of::<ChildArtifactRecorded>(),
    HookSpec::of::<ChildBackgroundExit>(),
    HookSpec::of::<ChildBackgroundReassign>(),
    HookSpec::of::<ChildBackgroundStart>(),
    HookSpec::of::<ChildMcpToolGate>(),
    HookSpec::of::<ChildRepeatGuardExceeded>(),
    HookSpec::of::<ChildStreamEnd>(),
    HookSpec::of::<ChildStreamError>(),
    HookSpec::of::<ChildStreamRetry>(),
    HookSpec::of::<ChildStreamServerToolResult>(),
    HookSpec::of::<ChildStreamServerToolUse>(),
    HookSpec::of::<ChildStreamText>(),
    HookSpec::of::<ChildStreamThinking>(),
    HookSpec::of::<ChildToolAfter>(),
    HookSpec::of::<ChildToolBefore>(),
    HookSpec::of::<ChildToolCancelled>(),
    HookSpec::of::<ChildToolDispatched>(),
    HookSpec::of::<ChildToolError>(),
    HookSpec::of::<ChildToolGate>(),
    HookSpec::of::<ChildToolProgress>(),
    HookSpec::of::<ChildToolTransform>(),
    HookSpec::of::<ChildTurnAfter>(),
    HookSpec::of::<ChildValidationReject>(),
];
