//! Tools: the trait the loop dispatches to, the context a call runs with, and
//! the tool set an agent offers (with model-facing aliases and descriptions).

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zidane_hooks::HookBus;
use zidane_provider::{AbortSignal, BoxFuture, ToolResultContent, ToolSpec};

use crate::events::ToolProgressEventInit;
use crate::events::{ToolProgress, ToolProgressEvent, ToolResultMetadata, ToolStateOp};
use crate::execution::Workspace;
use crate::spawn::{SpawnError, SpawnRequest, SpawnResult, Spawning};

/// What a tool body returns.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    /// What the model receives.
    pub content: ToolResultContent,
    /// Whether the result reports a failure the model should see as one.
    pub is_error: bool,
    /// Metadata riding the result (not sent to the model).
    pub metadata: ToolResultMetadata,
}

impl ToolOutput {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: ToolResultContent::Text(text.into()),
            ..Default::default()
        }
    }

    /// A text result the model sees as an error.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            content: ToolResultContent::Text(text.into()),
            is_error: true,
            ..Default::default()
        }
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::text(text)
    }
}

/// A tool body's failure: the model reads `Tool error: <message>` as the
/// call's result (unless a `tool:error` handler substitutes one), and the
/// run goes on. Any error converts into it (`?` works), and so does a
/// `String`.
///
/// Returning `Ok(ToolOutput::error(..))` instead also marks the result an
/// error for the model, with the text exactly as given and without
/// `tool:error`: for failures the tool reports as its answer (a test that
/// failed, a file not found).
pub type ToolFailure = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// Canonical name (what history records).
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// JSON schema of the arguments; the loop validates input against it.
    fn input_schema(&self) -> &Value;

    /// Whether calls may run concurrently with other parallel-safe calls of
    /// the same turn. Default: no (the call runs alone).
    fn parallel_safe(&self) -> bool {
        false
    }

    /// Whether a call may run again after a crash ([`Durability::Safe`]:
    /// it is idempotent) or must be reported interrupted instead. Default:
    /// [`Durability::Unsafe`].
    fn durability(&self) -> Durability {
        Durability::Unsafe
    }

    /// Runs one call.
    ///
    /// `Ok` is the result the model reads (with
    /// [`is_error`](ToolOutput::is_error) set by [`ToolOutput::error`]);
    /// `Err` is a failure the model reads as `Tool error: <message>` (see
    /// [`ToolFailure`]). Neither ends the run.
    fn execute<'a>(&'a self, input: Value, cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolFailure>>;

    /// What a call with `input` is about to replace (a file's content before
    /// a write or an edit), asked only when a `tool:before` handler listens,
    /// which reads it as `prior_content`. `None` (the default): nothing, or
    /// the tool does not say.
    fn prior_content<'a>(&'a self, input: &'a Value, cx: &'a ToolContext) -> BoxFuture<'a, Option<String>> {
        let _ = (input, cx);
        Box::pin(async { None })
    }
}

/// The input schema of `A`: the JSON schema `schemars` derives, with the
/// meta fields providers do not take (`$schema`, `title`) left out.
#[cfg(feature = "schemars")]
fn input_schema_of<A: schemars::JsonSchema>() -> Value {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<A>();
    let mut value = schema.to_value();
    if let Some(map) = value.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
    }
    value
}

type ExecuteFn = dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolFailure>> + Send + Sync;
type PriorFn = dyn Fn(Value, ToolContext) -> BoxFuture<'static, Option<String>> + Send + Sync;

/// The handler of a typed tool ([`FnTool::typed`]): any
/// `Fn(A, ToolContext) -> impl Future<Output = Result<O, ToolFailure>>`
/// where `O` becomes a [`ToolOutput`] (a `String`, a `&str`, a
/// `ToolOutput`). The error type is fixed, so a body's `Ok(value)` needs no
/// annotation, and `?` turns any error (and a `String`) into it.
/// Implemented for every such closure; the closure's arguments are inferred
/// from `A` (named by the closure or by `FnTool::typed::<A>`).
pub trait ToolHandler<A>: Fn(A, ToolContext) -> <Self as ToolHandler<A>>::Future + Send + Sync + 'static {
    /// What a call answers.
    type Answer: Into<ToolOutput>;
    /// How a call fails: a [`ToolFailure`].
    type Failure: Into<ToolFailure>;
    /// The call.
    type Future: Future<Output = Result<Self::Answer, Self::Failure>> + Send + 'static;
}

impl<A, F, Fut, O> ToolHandler<A> for F
where
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolFailure>> + Send + 'static,
    O: Into<ToolOutput>,
{
    type Answer = O;
    type Failure = ToolFailure;
    type Future = Fut;
}

/// A tool made of a name, a description, a schema and a closure.
///
/// ```
/// use zidane::serde_json::json;
/// use zidane::tools::{FnTool, ToolOutput};
/// # mod zidane { pub use serde_json; pub mod tools { pub use zidane_core::tool::*; } }
///
/// let echo = FnTool::new("echo", "Repeat the text", json!({"type": "object"}), |input, _cx| async move {
///     Ok(ToolOutput::text(input["text"].as_str().unwrap_or_default()))
/// });
/// ```
pub struct FnTool {
    name: String,
    description: String,
    schema: Value,
    parallel: bool,
    durability: Durability,
    execute: Arc<ExecuteFn>,
    prior: Option<Arc<PriorFn>>,
}

impl fmt::Debug for FnTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.name)
            .field("parallel", &self.parallel)
            .finish_non_exhaustive()
    }
}

impl FnTool {
    /// A tool running `execute` for each call.
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, schema: Value, execute: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolFailure>> + Send + 'static,
    {
        FnTool {
            name: name.into(),
            description: description.into(),
            schema,
            parallel: false,
            durability: Durability::Unsafe,
            execute: Arc::new(move |input, cx| Box::pin(execute(input, cx))),
            prior: None,
        }
    }

    /// A tool whose arguments arrive as `A`, deserialized from the call's
    /// input, with the input schema derived from `A` (feature `schemars`).
    ///
    /// The loop checks each call's input against that schema first; an
    /// input that passes the schema but does not deserialize into `A`
    /// reaches the model the same way: an error result reading
    /// `Validation error: …`, and the run goes on. The handler returns
    /// `Ok` with anything that becomes a [`ToolOutput`] (a `String`, a
    /// `&str`, a `ToolOutput`), or a [`ToolFailure`] (`?` on any error,
    /// `Err("…".into())`): the model then reads `Tool error: <message>`.
    ///
    /// The derive needs `schemars` among the program's dependencies, the
    /// version the facade uses (one line in `Cargo.toml`:
    /// `schemars = "1"`); then the whole tool is:
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use zidane::tools::FnTool;
    /// # mod zidane { pub mod tools { pub use zidane_core::tool::*; } }
    ///
    /// /// Two integers to add.
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Add {
    ///     /// The first.
    ///     a: i64,
    ///     /// The second.
    ///     b: i64,
    /// }
    ///
    /// let add = FnTool::typed("add", "Add two integers.", |args: Add, _cx| async move {
    ///     Ok((args.a + args.b).to_string())
    /// });
    /// // A body may fail with `?` on any error, or with a message.
    /// let parse = FnTool::typed::<Add>("parse", "Parse the sum.", |args, _cx| async move {
    ///     let sum: i64 = format!("{}", args.a + args.b).parse()?;
    ///     if sum < 0 {
    ///         return Err("negative".into());
    ///     }
    ///     Ok(sum.to_string())
    /// });
    /// # let _ = (add, parse);
    /// ```
    #[cfg(feature = "schemars")]
    pub fn typed<A>(name: impl Into<String>, description: impl Into<String>, handler: impl ToolHandler<A>) -> Self
    where
        A: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
    {
        FnTool::typed_with_schema(name, description, input_schema_of::<A>(), handler)
    }

    /// A tool whose arguments arrive as `A`, with `schema` written by hand
    /// (what [`FnTool::typed`] derives with the `schemars` feature); input
    /// errors and handler errors reach the model as they do there.
    pub fn typed_with_schema<A>(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
        handler: impl ToolHandler<A>,
    ) -> Self
    where
        A: serde::de::DeserializeOwned + Send + 'static,
    {
        let handler = Arc::new(handler);
        FnTool::new(name, description, schema, move |input, cx| {
            let parsed = serde_json::from_value::<A>(input);
            let handler = Arc::clone(&handler);
            async move {
                match parsed {
                    Ok(args) => handler(args, cx).await.map(Into::into).map_err(Into::into),
                    Err(e) => Ok(ToolOutput::error(format!("Validation error: {e}"))),
                }
            }
        })
    }

    /// Marks the tool parallel-safe.
    pub fn parallel(mut self) -> Self {
        self.parallel = true;
        self
    }

    /// Marks the tool idempotent: a resumed run may run a call of it again.
    pub fn safe(mut self) -> Self {
        self.durability = Durability::Safe;
        self
    }

    /// Tells `tool:before` what a call is about to replace
    /// ([`Tool::prior_content`]): `prior` reads it from the call's input.
    pub fn with_prior_content<F, Fut>(mut self, prior: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<String>> + Send + 'static,
    {
        self.prior = Some(Arc::new(move |input, cx| Box::pin(prior(input, cx))));
        self
    }
}

impl Tool for FnTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn parallel_safe(&self) -> bool {
        self.parallel
    }

    fn durability(&self) -> Durability {
        self.durability
    }

    fn execute<'a>(&'a self, input: Value, cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolFailure>> {
        (self.execute)(input, cx)
    }

    fn prior_content<'a>(&'a self, input: &'a Value, cx: &'a ToolContext) -> BoxFuture<'a, Option<String>> {
        match &self.prior {
            Some(prior) => prior(input.clone(), cx.clone()),
            None => Box::pin(async { None }),
        }
    }
}

/// A description override: a replacement, or a function of the current text.
#[derive(Clone)]
pub enum DescriptionOverride {
    /// Replaces the description.
    Text(String),
    /// Maps the current description to a new one.
    Map(Arc<dyn Fn(&str) -> String + Send + Sync>),
}

impl fmt::Debug for DescriptionOverride {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DescriptionOverride::Text(t) => f.debug_tuple("Text").field(t).finish(),
            DescriptionOverride::Map(_) => f.write_str("Map(..)"),
        }
    }
}

/// The tools an agent offers, by canonical name, with the model-facing
/// aliases and description overrides.
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    order: Vec<String>,
    aliases: BTreeMap<String, String>,
    descriptions: BTreeMap<String, DescriptionOverride>,
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.order)
            .field("aliases", &self.aliases)
            .finish()
    }
}

impl ToolSet {
    /// No tools.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a tool.
    pub fn with(mut self, tool: impl Tool + 'static) -> Self {
        self.insert(Arc::new(tool));
        self
    }

    /// Adds (or replaces) a shared tool.
    pub fn insert(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.name().to_owned();
        if self.tools.insert(name.clone(), tool).is_none() {
            self.order.push(name);
        }
    }

    /// Calls `canonical` by `alias` at the model boundary; history keeps the
    /// canonical name.
    pub fn alias(mut self, canonical: impl Into<String>, alias: impl Into<String>) -> Self {
        self.aliases.insert(canonical.into(), alias.into());
        self
    }

    /// Overrides the model-facing description of `canonical`.
    pub fn describe(mut self, canonical: impl Into<String>, description: DescriptionOverride) -> Self {
        self.descriptions.insert(canonical.into(), description);
        self
    }

    /// Appends `text` to the model-facing description of `canonical`,
    /// after any override already set (the spawn tool's list of named
    /// sub-agents, say).
    pub fn append_description(&mut self, canonical: &str, text: &str) {
        let text = text.to_owned();
        let next = match self.descriptions.remove(canonical) {
            Some(DescriptionOverride::Text(t)) => DescriptionOverride::Text(format!("{t}{text}")),
            Some(DescriptionOverride::Map(f)) => DescriptionOverride::Map(Arc::new(move |d| format!("{}{text}", f(d)))),
            None => DescriptionOverride::Map(Arc::new(move |d| format!("{d}{text}"))),
        };
        self.descriptions.insert(canonical.to_owned(), next);
    }

    /// Adds `other`'s tools, aliases and description overrides; `other`
    /// wins where both name the same tool.
    pub fn merge(&mut self, other: ToolSet) {
        let ToolSet {
            mut tools,
            order,
            aliases,
            descriptions,
        } = other;
        for name in order {
            if let Some(tool) = tools.remove(&name) {
                self.insert(tool);
            }
        }
        self.aliases.extend(aliases);
        self.descriptions.extend(descriptions);
    }

    /// Keeps the tools whose canonical name `keep` accepts (with their
    /// aliases and description overrides).
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.order.retain(|name| keep(name));
        let kept: std::collections::BTreeSet<&String> = self.order.iter().collect();
        self.tools.retain(|name, _| kept.contains(name));
        self.aliases.retain(|name, _| kept.contains(name));
        self.descriptions.retain(|name, _| kept.contains(name));
    }

    /// The tool of a canonical name.
    pub fn get(&self, canonical: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(canonical)
    }

    /// Canonical names, in insertion order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(String::as_str)
    }

    /// Whether any tool has a model-facing alias.
    pub fn has_aliases(&self) -> bool {
        !self.aliases.is_empty()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The canonical name behind a name the model used (an alias or the
    /// canonical name itself).
    pub fn canonical<'a>(&'a self, wire_name: &'a str) -> &'a str {
        self.aliases
            .iter()
            .find(|(_, alias)| alias.as_str() == wire_name)
            .map_or(wire_name, |(c, _)| c.as_str())
    }

    /// The model-facing name of a canonical name.
    pub fn wire_name<'a>(&'a self, canonical: &'a str) -> &'a str {
        self.aliases.get(canonical).map_or(canonical, String::as_str)
    }

    /// The tool list as the model sees it: aliases and description overrides
    /// applied.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.order
            .iter()
            .filter_map(|name| self.tools.get(name))
            .map(|tool| {
                let description = match self.descriptions.get(tool.name()) {
                    Some(DescriptionOverride::Text(text)) => text.clone(),
                    Some(DescriptionOverride::Map(f)) => f(tool.description()),
                    None => tool.description().to_owned(),
                };
                ToolSpec {
                    name: self.wire_name(tool.name()).to_owned(),
                    description,
                    input_schema: tool.input_schema().clone(),
                }
            })
            .collect()
    }
}

/// Where committed tool state lives; writes are staged per call and committed
/// when the call settles.
pub trait ToolStateStore: Send + Sync {
    /// The committed state.
    fn load(&self) -> BoxFuture<'_, Result<BTreeMap<String, Value>, ToolFailure>>;
    /// Applies one settled call's staged writes, in order.
    fn commit<'a>(&'a self, ops: &'a [ToolStateOp]) -> BoxFuture<'a, Result<(), ToolFailure>>;
}

/// The default tool-state store: a map in memory, scoped to its owner.
#[derive(Debug, Default)]
pub struct MemoryToolState {
    map: Mutex<BTreeMap<String, Value>>,
}

impl ToolStateStore for MemoryToolState {
    fn load(&self) -> BoxFuture<'_, Result<BTreeMap<String, Value>, ToolFailure>> {
        let snapshot = self.map.lock().clone();
        Box::pin(async move { Ok(snapshot) })
    }

    fn commit<'a>(&'a self, ops: &'a [ToolStateOp]) -> BoxFuture<'a, Result<(), ToolFailure>> {
        let mut map = self.map.lock();
        apply_ops(&mut map, ops);
        Box::pin(async { Ok(()) })
    }
}

/// Applies staged operations to a map.
pub fn apply_ops(map: &mut BTreeMap<String, Value>, ops: &[ToolStateOp]) {
    for op in ops {
        match op {
            ToolStateOp::Set { key, value } => {
                map.insert(key.clone(), value.clone());
            }
            ToolStateOp::Delete { key } => {
                map.remove(key);
            }
        }
    }
}

/// A call's view of the durable tool state: reads see committed state plus
/// this call's own staged writes.
#[derive(Debug, Clone, Default)]
pub struct ToolState {
    committed: Arc<Mutex<BTreeMap<String, Value>>>,
    staged: Arc<Mutex<Vec<ToolStateOp>>>,
}

impl ToolState {
    /// A call's view over `committed` (the run's committed state), with
    /// nothing staged yet. Runtimes build one per call.
    pub fn new(committed: Arc<Mutex<BTreeMap<String, Value>>>) -> Self {
        ToolState {
            committed,
            staged: Arc::default(),
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<Value> {
        let staged = self.staged.lock();
        for op in staged.iter().rev() {
            match op {
                ToolStateOp::Set { key: k, value } if k == key => return Some(value.clone()),
                ToolStateOp::Delete { key: k } if k == key => return None,
                _ => {}
            }
        }
        drop(staged);
        self.committed.lock().get(key).cloned()
    }

    /// Stages `key = value`.
    pub fn set(&self, key: impl Into<String>, value: Value) {
        self.staged.lock().push(ToolStateOp::Set { key: key.into(), value });
    }

    /// Stages the removal of `key`.
    pub fn delete(&self, key: impl Into<String>) {
        self.staged.lock().push(ToolStateOp::Delete { key: key.into() });
    }

    /// Takes the writes staged so far (the runtime commits them when the
    /// call settles).
    pub fn take_staged(&self) -> Vec<ToolStateOp> {
        std::mem::take(&mut *self.staged.lock())
    }
}

/// What a tool knows of a file it read: for read dedup and read-before-edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadStateEntry {
    /// Content hash when read.
    pub hash: u32,
    /// Modification time when read (epoch ms), when known.
    pub mtime_ms: Option<u64>,
    /// The line range read, when partial.
    pub range: Option<(u64, u64)>,
    /// When it was read (epoch ms): compaction restores the most recent reads.
    pub read_at_ms: u64,
}

/// Files read in this session, by key (see `read_state_key`), shared by
/// the tools of an agent (and, when asked, its sub-agents).
pub type ReadStateMap = Arc<Mutex<BTreeMap<String, ReadStateEntry>>>;

/// What a runtime builds a call's [`ToolContext`] from.
#[derive(Debug, Clone)]
pub struct ToolCallParts {
    /// The call id.
    pub call_id: String,
    /// The canonical tool name.
    pub name: String,
    /// The (validated) input.
    pub input: Value,
    /// The run.
    pub run_id: String,
    /// The turn.
    pub turn_id: String,
    /// Aborts when the call is cancelled or the run is aborted.
    pub signal: AbortSignal,
    /// The bus `tool:progress` goes to.
    pub hooks: HookBus,
    /// The call's view of durable tool state.
    pub state: ToolState,
    /// The session's read state.
    pub read_state: ReadStateMap,
    /// Where the call acts, when the agent has an execution context.
    pub workspace: Option<Workspace>,
    /// How the call starts sub-agents (none outside an agent's run).
    pub spawning: Spawning,
}

/// Everything a call runs with.
#[derive(Clone)]
pub struct ToolContext {
    parts: Arc<ToolCallParts>,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.parts.call_id)
            .field("name", &self.parts.name)
            .finish_non_exhaustive()
    }
}

impl From<ToolCallParts> for ToolContext {
    fn from(parts: ToolCallParts) -> Self {
        ToolContext { parts: Arc::new(parts) }
    }
}

impl ToolContext {
    /// A context for calling a tool outside a run (tests, hosts): no run,
    /// its own read state and tool state, no workspace.
    pub fn detached(name: impl Into<String>, call_id: impl Into<String>, signal: AbortSignal) -> Self {
        ToolCallParts {
            call_id: call_id.into(),
            name: name.into(),
            input: Value::Null,
            run_id: String::new(),
            turn_id: String::new(),
            signal,
            hooks: HookBus::new(),
            state: ToolState::default(),
            read_state: ReadStateMap::default(),
            workspace: None,
            spawning: Spawning::default(),
        }
        .into()
    }

    fn edit(mut self, f: impl FnOnce(&mut ToolCallParts)) -> Self {
        f(Arc::make_mut(&mut self.parts));
        self
    }

    /// The same context with `read_state` shared (calls outside a run that
    /// must see each other's reads).
    pub fn with_read_state(self, read_state: ReadStateMap) -> Self {
        self.edit(|p| p.read_state = read_state)
    }

    /// The same context acting through `workspace`.
    pub fn with_workspace(self, workspace: Workspace) -> Self {
        self.edit(|p| p.workspace = Some(workspace))
    }

    /// The same context reporting to `hooks` (e.g. to observe
    /// `tool:progress` of a call outside a run).
    pub fn with_hooks(self, hooks: HookBus) -> Self {
        self.edit(|p| p.hooks = hooks)
    }

    /// The call id.
    pub fn call_id(&self) -> &str {
        &self.parts.call_id
    }

    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.parts.run_id
    }

    /// The turn id.
    pub fn turn_id(&self) -> &str {
        &self.parts.turn_id
    }

    /// Aborts when the call is cancelled or the run is aborted.
    pub fn signal(&self) -> &AbortSignal {
        &self.parts.signal
    }

    /// Durable tool state (staged until the call settles).
    pub fn state(&self) -> &ToolState {
        &self.parts.state
    }

    /// The session's read state.
    pub fn read_state(&self) -> &ReadStateMap {
        &self.parts.read_state
    }

    /// The bus of the agent running the call (a sub-agent's own bus for
    /// its calls, whose events its parent sees in their `child:*` forms).
    pub fn hooks(&self) -> &HookBus {
        &self.parts.hooks
    }

    /// The tool's canonical name.
    pub fn name(&self) -> &str {
        &self.parts.name
    }

    /// Where the call acts: the agent's execution context and live handle,
    /// or `None` when the agent has no execution context (a bare loop, a
    /// detached call without [`with_workspace`](Self::with_workspace)).
    pub fn workspace(&self) -> Option<&Workspace> {
        self.parts.workspace.as_ref()
    }

    /// Runs a sub-agent on `task` to its final answer (the spawn tool's
    /// body). The child stops when this call is cancelled or the run is
    /// aborted; its usage counts in the run's totals and budgets.
    pub async fn spawn(
        &self,
        task: String,
        agent: Option<String>,
        description: Option<String>,
    ) -> Result<SpawnResult, SpawnError> {
        let p = &*self.parts;
        let request = SpawnRequest {
            task,
            agent,
            description,
            call_id: p.call_id.clone(),
            parent_run_id: p.run_id.clone(),
            budget: p.spawning.budget(),
        };
        p.spawning.spawn(request, p.signal.clone()).await
    }

    /// Whether this call can spawn sub-agents.
    pub fn can_spawn(&self) -> bool {
        self.parts.spawning.is_enabled()
    }

    /// The same context spawning through `spawning` (calls outside a run).
    pub fn with_spawning(self, spawning: Spawning) -> Self {
        self.edit(|p| p.spawning = spawning)
    }

    /// Reports live progress (`tool:progress`); nothing reaches the model.
    /// A failing progress observer never fails the call.
    pub async fn report_progress(&self, progress: ToolProgress) {
        let p = &*self.parts;
        if !p.hooks.has::<ToolProgressEvent>() {
            return;
        }
        let mut ev = ToolProgressEvent::new(ToolProgressEventInit {
            name: p.name.clone(),
            call_id: p.call_id.clone(),
            input: p.input.clone(),
            run_id: p.run_id.clone(),
            turn_id: p.turn_id.clone(),
            progress,
        });
        p.hooks.observe(&mut ev).await;
    }
}

/// Whether a step may run again after a crash.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// Idempotent: a resume runs a pending one again.
    Safe,
    /// Has effects: a resume reports a pending one as interrupted instead
    /// of running it twice. The default for tools.
    #[default]
    Unsafe,
}

/// The model called a tool the run does not offer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool `{name}`")]
pub struct UnknownTool {
    /// The name the model used.
    pub name: String,
}
