//! The sessions a server holds, each a conversation in its folder, and
//! how long they live: as long as their one client (`zidane acp`), or past
//! every client (`zidane serve`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};
use zidane::agent::SessionStore;
use zidane::durable::CheckpointRuntime;
use zidane_app::config::{Asking, TrustQuestion};
use zidane_app::{Conversation, Events, Flags, Given, Outcome, Setup};

use super::{Connection, RpcError, Session, forward, str_param};

/// The session metadata key that marks a session `zidane serve` ran.
pub(crate) const SERVED_KEY: &str = "zidane.served";

/// The sessions, and what opening one takes.
pub(crate) struct Hub {
    flags: Flags,
    given: Given,
    runtime: Arc<CheckpointRuntime>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// A lock per stored session being opened, so that two clients loading
    /// it at once share one conversation.
    opening: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Sessions outlive their clients (`zidane serve`).
    served: bool,
    /// How long a question waits for a client to answer it.
    pub(crate) question_timeout: std::time::Duration,
}

impl Hub {
    /// A hub of sessions on `runtime`, opened with `flags`.
    pub(crate) fn new(flags: Flags, given: Given, runtime: Arc<CheckpointRuntime>, served: bool) -> Arc<Hub> {
        Arc::new(Hub {
            flags,
            given,
            runtime,
            sessions: Mutex::new(HashMap::new()),
            opening: Mutex::new(HashMap::new()),
            served,
            question_timeout: std::time::Duration::from_secs(3600),
        })
    }

    /// Waits for any other opening of stored session `id`; the guard
    /// holds others back until this one is done.
    pub(super) async fn opening(&self, id: &str) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut opening = self.opening.lock();
            // Locks nobody waits on any more go.
            opening.retain(|_, lock| Arc::strong_count(lock) > 1);
            Arc::clone(opening.entry(id.to_owned()).or_default())
        };
        lock.lock_owned().await
    }

    /// Ends the served sessions nobody is attached to and nothing is going
    /// on in (no run, no question waiting); loading one opens it again from
    /// the sessions file. Their ids.
    pub(crate) async fn end_idle(&self) -> Vec<String> {
        let idle: Vec<Arc<Session>> = {
            let mut sessions = self.sessions.lock();
            let ids: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.clients().is_empty() && !s.busy() && s.questions.lock().is_empty())
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for session in &idle {
            session.end().await;
        }
        idle.iter().map(|s| s.id.clone()).collect()
    }

    /// The flags sessions are opened with.
    pub(crate) fn flags(&self) -> &Flags {
        &self.flags
    }

    /// Whether sessions outlive their clients.
    pub(crate) fn served(&self) -> bool {
        self.served
    }

    /// The sessions file's durable runtime.
    pub(crate) fn runtime(&self) -> &Arc<CheckpointRuntime> {
        &self.runtime
    }

    pub(super) fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock().get(id).cloned()
    }

    pub(super) fn insert(&self, session: Arc<Session>) {
        self.sessions.lock().insert(session.id.clone(), session);
    }

    pub(super) fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock().remove(id)
    }

    /// Opens session `id` in `cwd` for `client`, with the client's MCP
    /// servers beside the configured ones.
    pub(super) async fn start(
        self: &Arc<Self>,
        client: Option<&Arc<Connection>>,
        id: &str,
        cwd: &Path,
        opening: Opening,
    ) -> Result<Arc<Session>, RpcError> {
        let Opening {
            servers,
            worktree,
            trust,
            max_turns,
            max_cost,
        } = opening;
        let mut flags = self.flags.clone();
        flags.cwd = Some(cwd.to_owned());
        flags.session = Some(id.to_owned());
        if max_turns.is_some() {
            flags.max_turns = max_turns;
        }
        if max_cost.is_some() {
            flags.max_cost = max_cost;
        }
        // The client's answer to the trust question (remembered), else the
        // project's files stay out and a note says so.
        let answer = move |_: &TrustQuestion| trust;
        let mut settings = zidane_app::config::load(&flags, &self.given, cwd, Asking::Through(&answer))
            .map_err(|e| RpcError::params(e.message()))?;
        for server in &servers {
            let (name, entry) = mcp_entry(server)?;
            settings.mcp.retain(|(n, _, _)| *n != name);
            settings.mcp.push((name, entry, "the ACP client".to_owned()));
        }
        let mut setup = Setup::new(settings, Arc::clone(&self.runtime), true)
            .await
            .map_err(|e| RpcError::params(e.message()))?;
        for note in &setup.notes {
            eprintln!("zidane: {note}");
        }
        let terminals: Arc<Mutex<HashMap<String, String>>> = Arc::default();
        // A served session's tools run where the server runs: its clients
        // come and go, and none of them owns its files.
        if let Some(client) = client.filter(|_| !self.served) {
            setup.wrap_execution = super::files::wrap(client, id, cwd, &terminals);
        }
        let mode = match setup.settings.approve.name() {
            "auto-edit" => "auto-edit",
            "yolo" => "yolo",
            _ => "ask",
        };
        let (events, rx) = Events::channel();
        let conversation = Conversation::open(Arc::new(setup), id, events.clone(), false)
            .await
            .map_err(|e| RpcError::internal(e.message()))?;
        let session = Arc::new(Session::new(super::state::Parts {
            id: id.to_owned(),
            conversation,
            events,
            mode,
            terminals,
            worktree,
            served: self.served,
        }));
        if self.served {
            let conversation = session.conversation();
            let agent = conversation.agent();
            let _ = agent
                .set_session_meta(SERVED_KEY, json!({ "cwd": cwd.to_string_lossy() }))
                .await;
            if let Some(tree) = &session.worktree {
                let _ = agent.set_session_meta(crate::worktree::KEY, tree.to_meta()).await;
            }
        }
        // The turns before, from the sessions file; the events (queued
        // until `forward` runs) add the turns from now on.
        let before = session.conversation().stored_turns().await;
        session.usage.lock().seed(&before);
        tokio::spawn(forward::forward(Arc::downgrade(&session), rx, self.question_timeout));
        Ok(session)
    }

    /// The trust question a session in `cwd` would raise (its project
    /// files would take effect, and the folder has no answer yet).
    pub(super) fn trust_question(&self, cwd: &Path) -> Option<TrustQuestion> {
        let mut flags = self.flags.clone();
        flags.cwd = Some(cwd.to_owned());
        let asked = Mutex::new(None);
        let capture = |question: &TrustQuestion| {
            *asked.lock() = Some(question.clone());
            None
        };
        zidane_app::config::load(&flags, &self.given, cwd, Asking::Through(&capture)).ok()?;
        asked.into_inner()
    }

    /// `client` left `sessions`: over standard input and output they end
    /// with it (a running turn suspended, resumable); served, they go on.
    pub(super) async fn left(&self, client: &Arc<Connection>, sessions: &[String]) {
        if self.served {
            for id in sessions {
                if let Some(session) = self.get(id) {
                    session.detach(client);
                }
            }
            return;
        }
        let all: Vec<Arc<Session>> = self.sessions.lock().drain().map(|(_, s)| s).collect();
        for session in all {
            session.end().await;
        }
    }

    /// Ends every session (the server stops).
    pub(crate) async fn end_all(&self) {
        let all: Vec<Arc<Session>> = self.sessions.lock().drain().map(|(_, s)| s).collect();
        for session in all {
            session.end().await;
        }
    }

    /// At a served hub's start: every session it ran whose run was cut off
    /// (the server was killed) is opened again and its run continued.
    pub(crate) async fn continue_interrupted(self: &Arc<Self>) -> Vec<String> {
        let store = self.runtime.sqlite().clone();
        let Ok(listed) = store.list().await else {
            return Vec::new();
        };
        let mut continued = Vec::new();
        for info in listed.into_iter().filter(|s| s.interrupted) {
            let Ok(Some(stored)) = store.load(&info.id).await else {
                continue;
            };
            let Some((cwd, worktree)) = served_place(&stored.metadata) else {
                continue;
            };
            let opening = Opening {
                worktree,
                ..Opening::default()
            };
            let Ok(session) = self.start(None, &info.id, &cwd, opening).await else {
                continue;
            };
            // Marked running before anyone can prompt it.
            session.begin();
            self.insert(Arc::clone(&session));
            continued.push(info.id.clone());
            tokio::spawn(async move {
                let outcome = session.conversation().resume_interrupted().await;
                session.events.flush().await;
                session.done();
                if let Outcome::Failed(e) = outcome {
                    eprintln!(
                        "zidane serve: the interrupted run of {} did not continue: {e}",
                        session.id
                    );
                }
            });
        }
        continued
    }
}

/// What a session opens with beside its folder.
#[derive(Default)]
pub(crate) struct Opening {
    /// The client's MCP servers (ACP's `mcpServers`).
    pub(crate) servers: Vec<Value>,
    /// Its own worktree.
    pub(crate) worktree: Option<crate::worktree::Worktree>,
    /// The client's answer to the trust question.
    pub(crate) trust: Option<bool>,
    /// Most turns per run, over the server's (a scheduled run's).
    pub(crate) max_turns: Option<u32>,
    /// Spend cap per run, over the server's.
    pub(crate) max_cost: Option<f64>,
}

/// Where a served session was made: its folder (when it still is one) and
/// its worktree.
pub(super) fn served_place(
    metadata: &std::collections::BTreeMap<String, serde_json::Value>,
) -> Option<(std::path::PathBuf, Option<crate::worktree::Worktree>)> {
    let meta = metadata.get(SERVED_KEY)?;
    let cwd = meta["cwd"]
        .as_str()
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_dir())?;
    Some((cwd, crate::worktree::Worktree::of_session(metadata)))
}

/// An ACP MCP server as an entry of the `mcpServers` shape.
fn mcp_entry(server: &Value) -> Result<(String, Value), RpcError> {
    let name = str_param(server, "name")?;
    let pairs = |key: &str| -> serde_json::Map<String, Value> {
        server[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| Some((p["name"].as_str()?.to_owned(), Value::from(p["value"].as_str()?))))
            .collect()
    };
    let entry = if let Some(command) = server["command"].as_str() {
        json!({ "command": command, "args": server["args"].clone(), "env": pairs("env") })
    } else if let Some(url) = server["url"].as_str() {
        let mut entry = json!({ "url": url, "headers": pairs("headers") });
        if server["type"] == "sse" {
            entry["type"] = json!("sse");
        }
        entry
    } else {
        return Err(RpcError::params(format!(
            "MCP server `{name}` has neither a command nor a url"
        )));
    };
    Ok((name, entry))
}
