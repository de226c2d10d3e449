//! One ACP session's state: its conversation, the clients attached, the
//! turn going on (for a client that attaches mid-turn) and the questions
//! waiting for an answer.
//!
//! What the session shows its clients goes through [`Session::publish`],
//! which keeps the turn's updates and delivers them under one lock: a
//! client attaching takes its snapshot of the turn under the same lock, so
//! every update is either in the snapshot or delivered to it, never both
//! and never neither.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};
use serde_json::Value;
use zidane_app::{Conversation, Events};

use super::Connection;
use super::forward::Pending;

/// One ACP session: its conversation and the clients attached to it.
pub(super) struct Session {
    pub(super) id: String,
    /// Replaced when a rewind changes the stored conversation.
    conversation: RwLock<Conversation>,
    pub(super) events: Events,
    /// Whether a prompt is being answered.
    busy: Mutex<bool>,
    /// Told when a run ends (`busy` turns false).
    idle: tokio::sync::Notify,
    /// Steers and follow-ups the run has not read yet: id and text.
    pub(super) queued: Mutex<Vec<(String, String)>>,
    pub(super) mode: Mutex<&'static str>,
    /// Background tasks: the command, whether it runs.
    pub(super) tasks: Mutex<BTreeMap<String, (String, bool)>>,
    /// The client's terminal each `shell` call ran in.
    pub(super) terminals: Arc<Mutex<HashMap<String, String>>>,
    /// The clients that see it.
    clients: Mutex<Vec<Weak<Connection>>>,
    /// The updates since the last model turn ended, for a client that
    /// attaches in the middle of a turn (the turns before are replayed from
    /// the sessions file).
    live: Mutex<Vec<Value>>,
    /// How many times `live` was emptied (a turn ended).
    generation: AtomicU64,
    /// Questions no client has answered yet, for a client that attaches.
    pub(super) questions: Mutex<Vec<Arc<Pending>>>,
    /// The git worktree it works in, when it has one of its own.
    pub(super) worktree: Option<crate::worktree::Worktree>,
    /// Whether it outlives its clients (`zidane serve`).
    pub(super) served: bool,
    /// How its last run ended (as `_zidane/event` sends it), for a client
    /// that reconnects after it.
    pub(super) last_end: Mutex<Option<Value>>,
    /// Its usage turn by turn (`_zidane/usage`).
    pub(super) usage: Mutex<super::usage::Ledger>,
}

/// What a session is made of.
pub(super) struct Parts {
    pub(super) id: String,
    pub(super) conversation: Conversation,
    pub(super) events: Events,
    pub(super) mode: &'static str,
    pub(super) terminals: Arc<Mutex<HashMap<String, String>>>,
    pub(super) worktree: Option<crate::worktree::Worktree>,
    pub(super) served: bool,
}

impl Session {
    pub(super) fn new(parts: Parts) -> Session {
        Session {
            id: parts.id,
            conversation: RwLock::new(parts.conversation),
            events: parts.events,
            busy: Mutex::new(false),
            idle: tokio::sync::Notify::new(),
            queued: Mutex::new(Vec::new()),
            mode: Mutex::new(parts.mode),
            tasks: Mutex::new(BTreeMap::new()),
            terminals: parts.terminals,
            clients: Mutex::new(Vec::new()),
            live: Mutex::new(Vec::new()),
            generation: AtomicU64::new(0),
            questions: Mutex::new(Vec::new()),
            worktree: parts.worktree,
            served: parts.served,
            last_end: Mutex::new(None),
            usage: Mutex::new(super::usage::Ledger::default()),
        }
    }

    /// The conversation (a handle: cheap to clone).
    pub(super) fn conversation(&self) -> Conversation {
        self.conversation.read().clone()
    }

    /// The conversation read again from the sessions file (after a rewind).
    pub(super) async fn reopen(&self) -> Result<(), String> {
        let again = self.conversation().reopen().await.map_err(|e| e.message().to_owned())?;
        *self.conversation.write() = again;
        Ok(())
    }

    /// A running turn suspended (resumable), the conversation ended.
    pub(super) async fn end(&self) {
        self.conversation().end().await;
    }

    pub(super) fn cwd(&self) -> std::path::PathBuf {
        self.conversation().setup().cwd().to_owned()
    }

    /// Marks a run going; `false` when one already is.
    pub(super) fn begin(&self) -> bool {
        let mut busy = self.busy.lock();
        !std::mem::replace(&mut *busy, true)
    }

    /// Whether a run is going.
    pub(super) fn busy(&self) -> bool {
        *self.busy.lock()
    }

    /// Marks the run ended.
    pub(super) fn done(&self) {
        *self.busy.lock() = false;
        self.idle.notify_waiters();
    }

    /// Waits until no run is going, then marks one going.
    pub(super) async fn begin_when_idle(&self) {
        loop {
            let ended = self.idle.notified();
            if self.begin() {
                return;
            }
            ended.await;
        }
    }

    /// The clients still connected.
    pub(super) fn clients(&self) -> Vec<Arc<Connection>> {
        let mut clients = self.clients.lock();
        clients.retain(|c| c.upgrade().is_some_and(|c| !c.out.is_closed()));
        clients.iter().filter_map(Weak::upgrade).collect()
    }

    /// Attaches `client` (once).
    pub(super) fn attach(&self, client: &Arc<Connection>) {
        let mut clients = self.clients.lock();
        if !clients.iter().any(|c| c.as_ptr() == Arc::as_ptr(client)) {
            clients.push(Arc::downgrade(client));
        }
        client.sessions.lock().insert(self.id.clone());
    }

    /// Detaches `client`.
    pub(super) fn detach(&self, client: &Connection) {
        self.clients
            .lock()
            .retain(|c| c.upgrade().is_some_and(|c| !std::ptr::eq(Arc::as_ptr(&c), client)));
    }

    /// Shows `update` to every attached client (`except` one); `keep`: it
    /// belongs to the turn going on, and a client attaching later is shown
    /// it too.
    pub(super) fn publish(&self, update: &Value, except: Option<&Connection>, keep: bool) {
        let mut live = self.live.lock();
        if keep {
            live.push(update.clone());
        }
        for client in self.clients() {
            if except.is_some_and(|e| std::ptr::eq(e, Arc::as_ptr(&client))) {
                continue;
            }
            client.deliver(&self.id, update.clone());
        }
    }

    /// A turn ended (it is in the sessions file now): the live updates go.
    pub(super) fn turn_ended(&self) {
        let mut live = self.live.lock();
        live.clear();
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// How many turns ended so far (see [`Session::turn_ended`]).
    pub(super) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Attaches `client` with its updates held back (it is being shown the
    /// conversation), unless a turn ended since `generation`: the turn's
    /// updates so far, or `None` to read the stored turns again.
    pub(super) fn attach_at(&self, client: &Arc<Connection>, generation: u64) -> Option<Vec<Value>> {
        let live = self.live.lock();
        if self.generation() != generation {
            return None;
        }
        client.hold(&self.id);
        self.attach(client);
        Some(live.clone())
    }
}
