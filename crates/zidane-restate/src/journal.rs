//! The replay-mode durable runtime: every step of a run becomes an entry of
//! the Restate invocation's journal, written by one driver that owns the
//! handler's context.
//!
//! A tool batch runs its calls concurrently, so the order in which steps
//! reach the journal is not fixed from one attempt to the next. The journal
//! is therefore read as a sequence of self-describing entries (each names
//! its step) rather than matched position by position: on a replay, the
//! driver reads entries until it finds the one a step asks for, keeping the
//! others for the steps that will ask next, and the first entry that is not
//! in the journal is where the invocation goes live. Every entry is a
//! `ctx.run` under one name, [`ENTRY_NAME`], because Restate compares a
//! replayed entry's name with the one the handler asks for, and a reader
//! that does not know which step comes next cannot name it. Writes to the
//! object's K/V state follow the entry that carries their value, so a
//! replay issues the same writes at the same places.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use restate_sdk::context::{
    ContextClient, ContextSideEffects, ContextSignals, ContextWriteState, ObjectContext, RunFuture,
};
use restate_sdk::serde::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use zidane_core::clock::Clock;
use zidane_core::durable::INTERRUPTED_CALL_MESSAGE;
use zidane_core::events::{ReplayDone, SharedError, ToolStateOp};
use zidane_core::seams::{
    Durability, DurableMode, DurableRuntime, Step, StepError, StepKey, StepKind, StepValue, ToolStep, ToolStepOutcome,
};
use zidane_core::tool::apply_ops;
use zidane_hooks::HookBus;
use zidane_provider::{BoxFuture, SessionTurn};

mod controls;
mod replay;
#[cfg(test)]
mod tests;
mod turns;
mod write;

use self::replay::interrupted;
pub use self::replay::{ReplayClock, ReplayRuntime, ReplayTracker};

/// The name of every journal entry the runtime writes.
pub const ENTRY_NAME: &str = "zidane";

/// The K/V key of the number of turns a session holds.
pub const TURN_COUNT_KEY: &str = "turns";

/// The K/V key of a session's committed tool state.
pub const TOOL_STATE_KEY: &str = "tool-state";

/// The K/V key of the session's turn `index` (zero-padded, so keys sort in
/// turn order).
pub fn turn_key(index: usize) -> String {
    format!("turn:{index:08}")
}

/// Why the journal could not take a step.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The invocation is being suspended: it writes nothing more and runs
    /// again from its journal.
    #[error("the invocation is suspended; Restate runs it again from its journal")]
    Suspended,
    /// The driver stopped (the handler ended or lost its Restate
    /// connection).
    #[error("the invocation's journal is closed")]
    Closed,
    /// Restate refused an entry.
    #[error("the journal refused an entry: {0}")]
    Refused(String),
}

/// A step's identity in an entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Key {
    run: String,
    turn: u32,
    kind: String,
    name: String,
}

impl From<&StepKey> for Key {
    fn from(key: &StepKey) -> Self {
        Key {
            run: key.run_id.clone(),
            turn: key.turn,
            kind: key.kind.as_str().to_owned(),
            name: key.name.clone(),
        }
    }
}

/// A message for a running invocation, delivered by the object's shared
/// handlers and journaled, so a replay hands the run the same messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Control {
    /// `Agent::steer`.
    Steer {
        /// The message.
        text: String,
    },
    /// `Agent::follow_up`.
    FollowUp {
        /// The message.
        text: String,
    },
    /// `Agent::abort_with`.
    Abort {
        /// Why.
        reason: Option<String>,
    },
    /// `Agent::cancel_tool`.
    #[serde(rename_all = "camelCase")]
    CancelTool {
        /// The call.
        call_id: String,
        /// Why.
        reason: Option<String>,
    },
    /// `Agent::suspend`: the attempt stops, and Restate runs the
    /// invocation again from its journal (where this entry does nothing).
    Suspend,
}

/// One journal entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "camelCase")]
enum Entry {
    /// An unsafe tool call is about to run (its dispatch marker).
    Begin { key: Key },
    /// A step finished with `value`.
    Done { key: Key, value: Box<StepValue> },
    /// An unsafe call whose earlier attempt died while running it.
    Interrupted { key: Key },
    /// Turns written to the session, from index `from` (`replace`: the
    /// session's turns are these).
    Turns {
        from: usize,
        turns: Vec<JournalTurn>,
        #[serde(default)]
        replace: bool,
    },
    /// A control message handed to the run; `seq` is its place among the
    /// messages the inbox signalled (`None`: not through the inbox).
    Control {
        control: Control,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
        /// The inbox invocation waiting to hear that the run took it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply_to: Option<String>,
        /// The id the client gave the message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Whether the run took it (a turn reads it); what the inbox answers.
        #[serde(default = "taken", skip_serializing_if = "is_taken")]
        accepted: bool,
        /// A message whose id the run took before: answered as that one
        /// was, not applied again.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        again: bool,
    },
    /// A session metadata value (the running background tasks, say).
    Meta { key: String, value: Value },
    /// Entries journaled together, applied in order: model and tool values
    /// the run was answered before they were written (see [`HOLD_FOR`])
    /// travel with the next entry.
    Batch { entries: Vec<Entry> },
    /// The K/V writes before it reached Restate. The SDK sends a write with
    /// the next entry or await; a driver that awaits no inbox signal (the
    /// invocation was cancelled) writes this when no entry came within
    /// [`HOLD_FOR`], so a run's turns are readable while it waits. The
    /// probe that reads the journal to its end writes one too.
    Stored,
}

/// How long a finished step's value may wait for the next entry, which then
/// carries it, before it is journaled on its own (and how long K/V writes
/// may wait to reach Restate when the driver awaits no inbox signal, which
/// would send them). Everything held is journaled before an `unsafe` call
/// starts, with the turns the loop writes, and when the run syncs (a
/// person's answer, a summary, a sub-agent about to start). A tool turn is
/// then two entries when a call is `unsafe`: the model's value with the
/// call's dispatch marker, and the call's value with the turns the loop
/// wrote, whose K/V writes reach Restate as the driver goes back to
/// awaiting the inbox, so they are readable while the run waits for the
/// model. A turn of safe calls that end within the window is one: the
/// model's value, the calls' values and the turns. A final answer is one. A
/// crash inside the wait costs what the checkpoint runtime's group commit
/// costs: a model call that led to no tool call yet is asked again, a safe
/// call runs again, an `unsafe` call whose value waited is reported
/// interrupted.
pub(crate) const HOLD_FOR: std::time::Duration = std::time::Duration::from_millis(50);

/// How many model steps' contents the driver keeps for `Turns` entries to
/// refer to (the answer a flush writes is the last model step's).
const ANSWERS_KEPT: usize = 2;

/// How many tool calls' outputs the driver keeps for `Turns` entries to
/// refer to (the results a flush writes are those of the last batch).
const RESULTS_KEPT: usize = 64;

/// A turn as a `Turns` entry holds it: whole, or with the steps' keys in
/// place of what their values journaled already (the model's answer, tool
/// outputs), so a turn's content is journaled once.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum JournalTurn {
    Answer(AnswerTurn),
    Results(ResultsTurn),
    Whole(SessionTurn),
}

/// A turn of tool results, each of which is whole or, when it is a tool
/// step's output as journaled, that step's key (a result's content is
/// journaled once).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultsTurn {
    id: String,
    role: zidane_provider::Role,
    results: Vec<JournalBlock>,
    created_at: zidane_provider::Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<zidane_provider::TurnUsage>,
}

/// A block of a [`ResultsTurn`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum JournalBlock {
    /// A tool result whose content is the output of the tool step
    /// `output_of`.
    #[serde(rename_all = "camelCase")]
    Output {
        tool_use_id: String,
        output_of: Key,
    },
    Whole(zidane_provider::ContentBlock),
}

/// A model's answer whose content is the message of the model step
/// `content_of`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnswerTurn {
    id: String,
    role: zidane_provider::Role,
    content_of: Key,
    created_at: zidane_provider::Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<zidane_provider::TurnUsage>,
}

/// What the journal says about a step about to run.
enum Begun {
    /// An earlier attempt finished it.
    Recorded(Box<StepValue>),
    /// Run it.
    Live,
    /// An earlier attempt died in this unsafe call.
    Interrupted,
}

type Reply<T> = oneshot::Sender<Result<T, JournalError>>;

enum Request {
    Begin {
        key: Key,
        unsafe_call: bool,
        reply: Reply<Begun>,
    },
    /// Answered with the value back, as journaled.
    Done {
        key: Key,
        value: Box<StepValue>,
        reply: Reply<Box<StepValue>>,
    },
    Append {
        turns: Vec<SessionTurn>,
        reply: Reply<()>,
    },
    Replace {
        turns: Vec<SessionTurn>,
        reply: Reply<()>,
    },
    Meta {
        key: String,
        value: Value,
        reply: Reply<()>,
    },
    /// Journal the values held now.
    Sync {
        reply: Reply<()>,
    },
}

/// What the object hands the driver at the start of an invocation.
pub(crate) struct Start {
    /// Turns the session held (read from K/V state).
    pub turns: usize,
    /// The committed tool state.
    pub tool_state: BTreeMap<String, Value>,
    /// The ids of the control messages runs of the session took, and
    /// whether each was taken (read from K/V state).
    pub control_ids: ControlIds,
}

/// The ids of the control messages a session's runs took, newest last, and
/// whether a turn read each; what a client's retry with the same id is
/// answered from. At most [`CONTROL_IDS_KEPT`].
pub(crate) type ControlIds = std::collections::VecDeque<(String, bool)>;

/// How many control message ids a session keeps.
pub(crate) const CONTROL_IDS_KEPT: usize = 256;

/// The K/V key of the session's [`ControlIds`].
pub(crate) const CONTROL_IDS_KEY: &str = "control-ids";

/// The default of a journaled control message's `accepted` (entries
/// journaled before it was recorded were applied).
fn taken() -> bool {
    true
}

fn is_taken(accepted: &bool) -> bool {
    *accepted
}

/// Hands a control message to the run: whether it took it (a turn reads
/// it, the call is cancelled, the run stops).
pub(crate) type ApplyControl = Arc<dyn Fn(&Control) -> bool + Send + Sync>;

/// Hears, when an attempt goes live, the session metadata earlier attempts
/// journaled after this one's run started.
pub(crate) type OnLive = Box<dyn FnOnce(BTreeMap<String, Value>) + Send + Sync>;

/// The single writer of an invocation's journal.
pub(crate) struct Driver {
    requests: mpsc::UnboundedReceiver<Request>,
    suspend: tokio::sync::watch::Receiver<bool>,
    apply: Option<ApplyControl>,
    tracker: Option<ReplayTracker>,
    live: bool,
    done: HashMap<Key, StepValue>,
    begun: HashSet<Key>,
    /// Turns the K/V state holds (as far as the journal read so far says).
    stored_turns: usize,
    /// Turns the run has handed over so far.
    handed_turns: usize,
    replaces_read: usize,
    replaces_asked: usize,
    tool_state: BTreeMap<String, Value>,
    /// Control messages that came while the journal replayed, with their
    /// inbox place and id.
    pending_controls: Vec<Received>,
    /// The ids of the control messages the session's runs took.
    control_ids: ControlIds,
    /// The last inbox message the journal holds (read or written).
    journaled_seq: Option<u64>,
    /// The inbox message awaited next.
    next_seq: u64,
    /// Session metadata an earlier attempt journaled, as the replay read it.
    replayed_meta: BTreeMap<String, Value>,
    /// Told of `replayed_meta` when the attempt goes live.
    on_live: Option<OnLive>,
    suspended: bool,
    /// Values answered but not journaled yet (see [`HOLD_FOR`]), and since
    /// when the first of them waits.
    held: Vec<Entry>,
    held_since: Option<tokio::time::Instant>,
    /// Since when K/V writes wait for the next entry to reach Restate.
    unsent_since: Option<tokio::time::Instant>,
    /// The content of the last model steps journaled (read or written), by
    /// key: what a `Turns` entry's answer refers to.
    answers: std::collections::VecDeque<(Key, zidane_provider::Content)>,
    /// The outputs of the last tool steps journaled (read or written), by
    /// key: what a `Turns` entry's results refer to.
    results: std::collections::VecDeque<(Key, zidane_core::ToolOutput)>,
    /// Entries read back and written, for the run's report.
    pub(crate) replayed: u64,
    pub(crate) written: u64,
}

/// Whether `entry`, or an entry of its batch, is one `is` picks.
fn any_in(entry: &Entry, is: fn(&Entry) -> bool) -> bool {
    is(entry) || matches!(entry, Entry::Batch { entries } if entries.iter().any(|e| any_in(e, is)))
}

/// Whether an entry issues commands the SDK sends only with the next entry
/// or await (K/V writes, the inbox's answer).
fn sends_with_next(entry: &Entry) -> bool {
    any_in(entry, |e| {
        matches!(
            e,
            Entry::Turns { .. }
                | Entry::Meta { .. }
                | Entry::Control { reply_to: Some(_), .. }
                | Entry::Control { id: Some(_), .. }
        )
    })
}

/// The last `n` of `items`.
fn last<T>(mut items: Vec<T>, n: usize) -> Vec<T> {
    let extra = items.len().saturating_sub(n);
    items.drain(..extra);
    items
}

/// Whether an entry answers an inbox invocation that waits for it.
fn answers_inbox(entry: &Entry) -> bool {
    any_in(entry, |e| matches!(e, Entry::Control { reply_to: Some(_), .. }))
}

/// The K/V key of the session metadata value `key`.
pub(crate) fn meta_key(key: &str) -> String {
    format!("meta:{key}")
}

/// The entry as a replay reads it: a `Turns` entry goes through its JSON
/// once, so the K/V writes made from it carry the same bytes on every
/// attempt.
fn settled(entry: Entry) -> Entry {
    if !sends_with_next(&entry) {
        return entry;
    }
    match serde_json::to_vec(&entry).and_then(|bytes| serde_json::from_slice(&bytes)) {
        Ok(read) => read,
        Err(_) => entry,
    }
}

/// `value` as the journal gives it back: through its JSON, so the run sees
/// the same value on a replay.
fn as_journaled(value: &StepValue) -> Result<Box<StepValue>, JournalError> {
    serde_json::to_vec(value)
        .and_then(|bytes| serde_json::from_slice(&bytes))
        .map(Box::new)
        .map_err(|e| JournalError::Refused(format!("a step's value does not go through JSON: {e}")))
}

/// The sending halves the object keeps.
pub(crate) struct DriverHandles {
    pub runtime: Arc<ReplayRuntime>,
    pub suspend: tokio::sync::watch::Sender<bool>,
}

/// The name of the `seq`th inbox signal of a run invocation.
pub(crate) fn signal_name(seq: u64) -> String {
    format!("control-{seq}")
}

/// What the inbox signals a run: a control message, its place, the inbox
/// invocation to tell once it is journaled, and the client's id for it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Signal {
    pub seq: u64,
    pub control: Control,
    pub reply_to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A control message as the driver receives it.
pub(crate) struct Received {
    control: Control,
    /// Its place among the inbox's messages (`None`: not through it).
    seq: Option<u64>,
    /// The inbox invocation that waits to hear whether the run took it.
    reply_to: Option<String>,
    /// The client's id for it.
    id: Option<String>,
}

/// The signal the inbox waits for: the run journaled its message.
pub(crate) const TAKEN_SIGNAL: &str = "taken";

impl Driver {
    pub(crate) fn new(start: Start) -> (Driver, DriverHandles) {
        let (requests_tx, requests) = mpsc::unbounded_channel();
        let (suspend_tx, suspend) = tokio::sync::watch::channel(false);
        let driver = Driver {
            requests,
            suspend,
            apply: None,
            tracker: None,
            live: false,
            done: HashMap::new(),
            begun: HashSet::new(),
            stored_turns: start.turns,
            handed_turns: start.turns,
            replaces_read: 0,
            replaces_asked: 0,
            tool_state: start.tool_state,
            pending_controls: Vec::new(),
            control_ids: start.control_ids,
            journaled_seq: None,
            next_seq: 0,
            replayed_meta: BTreeMap::new(),
            on_live: None,
            suspended: false,
            held: Vec::new(),
            held_since: None,
            unsent_since: None,
            answers: std::collections::VecDeque::new(),
            results: std::collections::VecDeque::new(),
            replayed: 0,
            written: 0,
        };
        let handles = DriverHandles {
            runtime: Arc::new(ReplayRuntime { requests: requests_tx }),
            suspend: suspend_tx,
        };
        (driver, handles)
    }

    /// Where `replay:done` goes and how control messages reach the run
    /// (the agent, which is made with this driver's runtime).
    pub(crate) fn attach(&mut self, tracker: ReplayTracker, apply: ApplyControl, on_live: OnLive) {
        self.tracker = Some(tracker);
        self.apply = Some(apply);
        self.on_live = Some(on_live);
    }

    /// Whether a suspend stopped the invocation.
    pub(crate) fn suspended(&self) -> bool {
        self.suspended
    }

    /// Serves requests until `finished` resolves (the run ended), then
    /// answers what is left in the queue.
    pub(crate) async fn drive(&mut self, ctx: &ObjectContext<'_>, finished: impl std::future::Future<Output = ()>) {
        let mut finished = std::pin::pin!(finished);
        // The inbox's next message: a named signal on this invocation. An
        // awaited signal writes nothing to the journal, and Restate keeps
        // the ones that arrive, so a later attempt receives them again. It
        // is awaited only once the attempt is live: while the journal
        // replays, Restate takes an await its journal cannot answer for a
        // change in the code.
        let mut listening = true;
        loop {
            // A fresh future each time round: one kept across a journal
            // write would wait for input that the write already read, and
            // never see its signal.
            let name = signal_name(self.next_seq);
            let mut signal = (listening && self.live).then(|| Box::pin(ctx.signal::<Json<Signal>>(&name)));
            // Awaiting the signal first sends what the SDK holds, the K/V
            // writes included: no marker has to carry them.
            if signal.is_some() {
                self.unsent_since = None;
            }
            let held_until = self.held_since.map(|since| since + HOLD_FOR);
            let unsent_until = self.unsent_since.map(|since| since + HOLD_FOR);
            tokio::select! {
                biased;
                () = &mut finished => break,
                () = async {
                    match held_until {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                }, if held_until.is_some() => self.write_held(ctx).await,
                () = async {
                    match unsent_until {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                }, if unsent_until.is_some() => {
                    if let Err(e) = self.stored(ctx).await {
                        tracing::warn!(target: "zidane", "the session's K/V writes wait for the next entry: {e}");
                    }
                }
                received = async {
                    match signal.as_mut() {
                        Some(signal) => signal.await,
                        None => std::future::pending().await,
                    }
                }, if signal.is_some() => {
                    match received {
                        Ok(Json(Signal { seq, control, reply_to, id })) => {
                            self.next_seq = seq + 1;
                            let received = Received { control, seq: Some(seq), reply_to: Some(reply_to), id };
                            self.control(ctx, received).await;
                        }
                        Err(e) => {
                            // Only a cancellation fails a signal: Restate's
                            // own abort of the invocation.
                            listening = false;
                            let reason = format!("the invocation was cancelled ({})", e.message());
                            let abort = Received {
                                control: Control::Abort { reason: Some(reason) },
                                seq: None,
                                reply_to: None,
                                id: None,
                            };
                            self.control(ctx, abort).await;
                        }
                    }
                }
                request = self.requests.recv() => match request {
                    Some(request) => self.serve(ctx, request).await,
                    None => break,
                },
            }
        }
        while let Ok(request) = self.requests.try_recv() {
            self.serve(ctx, request).await;
        }
        if !self.check_suspended() {
            self.write_held(ctx).await;
        }
        if !self.check_suspended() {
            self.read_to_end(ctx).await;
        }
    }

    /// Reads the rest of the journal. The handler's answer is itself a
    /// journal entry, and Restate refuses it while the journal holds
    /// entries this attempt did not read (the turns of an aborted run, a
    /// late control message). The probe that finds the end writes a
    /// `Stored` marker.
    async fn read_to_end(&mut self, ctx: &ObjectContext<'_>) {
        while !self.live {
            if let Err(e) = self.probe(ctx, Entry::Stored).await {
                tracing::warn!(target: "zidane", "the journal could not be read to its end: {e}");
                return;
            }
        }
    }

    /// Whether a suspend came: from then on nothing is written.
    fn check_suspended(&mut self) -> bool {
        if *self.suspend.borrow() {
            self.suspended = true;
        }
        self.suspended
    }

    async fn serve(&mut self, ctx: &ObjectContext<'_>, request: Request) {
        // What the run was already told goes into the journal before a
        // suspend stops the writing.
        if *self.suspend.borrow() {
            self.write_held(ctx).await;
        }
        if self.check_suspended() {
            match request {
                Request::Begin { reply, .. } => {
                    let _ = reply.send(Err(JournalError::Suspended));
                }
                Request::Done { reply, .. } => {
                    let _ = reply.send(Err(JournalError::Suspended));
                }
                Request::Append { reply, .. }
                | Request::Replace { reply, .. }
                | Request::Meta { reply, .. }
                | Request::Sync { reply } => {
                    let _ = reply.send(Err(JournalError::Suspended));
                }
            }
            return;
        }
        match request {
            Request::Begin {
                key,
                unsafe_call,
                reply,
            } => {
                let answer = self.begin(ctx, key, unsafe_call).await;
                let _ = reply.send(answer);
            }
            Request::Done { key, value, reply } => {
                // A value waits for the next entry (within `HOLD_FOR`),
                // answered at once as the journal would give it back. What
                // must not be lost (a person's answer, a summary) the run
                // syncs; an `unsafe` call's dispatch marker carries what
                // led to the call.
                if self.live {
                    let answer = as_journaled(&value);
                    if self.held.is_empty() {
                        self.held_since = Some(tokio::time::Instant::now());
                    }
                    self.held.push(Entry::Done { key, value });
                    let _ = reply.send(answer);
                    return;
                }
                let answer = self.write(ctx, Entry::Done { key, value }).await.and_then(|value| {
                    value.ok_or_else(|| JournalError::Refused("a step's entry came back without its value".into()))
                });
                let _ = reply.send(answer);
            }
            Request::Append { turns, reply } => {
                let answer = self.append(ctx, turns).await;
                let _ = reply.send(answer);
            }
            Request::Replace { turns, reply } => {
                let answer = self.replace(ctx, turns).await;
                let _ = reply.send(answer);
            }
            Request::Sync { reply } => {
                let answer = self.flush_held(ctx).await;
                let _ = reply.send(answer);
            }
            Request::Meta { key, value, reply } => {
                // Written only live: what a replaying attempt sets again, an
                // earlier attempt journaled at this place already (and the
                // replay reads it there).
                let answer = if self.live {
                    self.write(ctx, Entry::Meta { key, value }).await.map(drop)
                } else {
                    Ok(())
                };
                let _ = reply.send(answer);
            }
        }
    }

    async fn begin(&mut self, ctx: &ObjectContext<'_>, key: Key, unsafe_call: bool) -> Result<Begun, JournalError> {
        loop {
            if let Some(value) = self.done.get(&key) {
                return Ok(Begun::Recorded(Box::new(value.clone())));
            }
            let interrupted = unsafe_call && self.begun.contains(&key);
            if self.live {
                if interrupted {
                    self.write(ctx, Entry::Interrupted { key }).await?;
                    return Ok(Begun::Interrupted);
                }
                // What led to an `unsafe` call is journaled before it
                // starts, with its dispatch marker. A safe call runs with the
                // model's value still held (within `HOLD_FOR`): a crash
                // meanwhile asks the model again and runs the call again. A
                // safe call that starts something keyed by its id (a
                // sub-agent's invocation) syncs first, so a replay finds it
                // under the same id.
                if unsafe_call {
                    self.write(ctx, Entry::Begin { key }).await?;
                }
                self.step_live().await;
                return Ok(Begun::Live);
            }
            // When the journal has no more, the probe's own entry is the
            // step's: the interrupted report, or the dispatch marker (which
            // a safe step does not need, and a later replay ignores).
            let live_entry = if interrupted {
                Entry::Interrupted { key: key.clone() }
            } else {
                Entry::Begin { key: key.clone() }
            };
            if self.probe(ctx, live_entry).await? {
                if interrupted {
                    return Ok(Begun::Interrupted);
                }
                self.step_live().await;
                return Ok(Begun::Live);
            }
        }
    }

    /// A step's work is about to run live: the first one of the attempt
    /// fires `replay:done` (turns or a control message written after the
    /// journal's end are not a step, and an interrupted call runs nothing).
    async fn step_live(&self) {
        if let Some(tracker) = &self.tracker {
            tracker.live().await;
        }
    }

    /// Applies an entry to what the driver knows, and issues the K/V writes
    /// it carries (the same on every attempt: they are made from the entry).
    /// A step's value is handed back with its key.
    fn apply(&mut self, ctx: &ObjectContext<'_>, entry: Entry) -> Option<(Key, Box<StepValue>)> {
        match entry {
            Entry::Begin { key } => {
                self.begun.insert(key);
            }
            Entry::Interrupted { key } => {
                self.begun.remove(&key);
                return Some((key, Box::new(interrupted())));
            }
            Entry::Done { key, value } => {
                self.begun.remove(&key);
                if let StepValue::Tool(ToolStep { state, .. }) = &*value
                    && !state.is_empty()
                {
                    self.commit_tool_state(ctx, state);
                }
                if let StepValue::Tool(ToolStep {
                    outcome: ToolStepOutcome::Output(output),
                    ..
                }) = &*value
                {
                    self.results.push_back((key.clone(), output.clone()));
                    if self.results.len() > RESULTS_KEPT {
                        self.results.pop_front();
                    }
                }
                if let StepValue::Model(message) = &*value {
                    self.answers.push_back((key.clone(), message.content.clone().into()));
                    if self.answers.len() > ANSWERS_KEPT {
                        self.answers.pop_front();
                    }
                }
                // A folder checkpoint joins the object's state as it is
                // journaled (again, with the same bytes, on a replay).
                if let StepValue::Checkpoint(journaled) = &*value {
                    let id = journaled.snapshot.id;
                    ctx.set(&crate::checkpoints::checkpoint_key(id), Json((**journaled).clone()));
                    ctx.set(crate::checkpoints::CHECKPOINT_COUNT_KEY, id as u64);
                }
                return Some((key, value));
            }
            Entry::Turns { from, turns, replace } => {
                if replace {
                    self.replaces_read += 1;
                }
                let end = from + turns.len();
                for (i, turn) in turns.into_iter().enumerate() {
                    match self.whole(turn) {
                        Some(turn) => ctx.set(&turn_key(from + i), Json(turn)),
                        None => {
                            tracing::warn!(target: "zidane", "a journaled turn refers to a step the journal does not hold")
                        }
                    }
                }
                ctx.set(TURN_COUNT_KEY, end as u64);
                self.stored_turns = if replace { end } else { self.stored_turns.max(end) };
            }
            Entry::Control {
                control,
                seq,
                reply_to,
                id,
                accepted,
                again,
            } => self.apply_control(ctx, control, seq, reply_to, id, accepted, again),
            Entry::Meta { key, value } => {
                ctx.set(&meta_key(&key), Json(value.clone()));
                if !self.live {
                    self.replayed_meta.insert(key, value);
                }
            }
            Entry::Batch { entries } => {
                // The last entry's value goes back to whoever wrote it; the
                // others' wait for their steps when the journal replays
                // (live, those steps were answered already).
                let mut last: Option<(Key, Box<StepValue>)> = None;
                for entry in entries {
                    if let Some((key, value)) = last.take()
                        && !self.live
                    {
                        self.done.insert(key, *value);
                    }
                    last = self.apply(ctx, entry);
                }
                return last;
            }
            Entry::Stored => {}
        }
        None
    }

    fn commit_tool_state(&mut self, ctx: &ObjectContext<'_>, ops: &[ToolStateOp]) {
        apply_ops(&mut self.tool_state, ops);
        ctx.set(TOOL_STATE_KEY, Json(self.tool_state.clone()));
    }
}
