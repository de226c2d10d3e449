//! ACP sessions: each one a conversation of the program's core in its
//! folder, opened by `session/new`, `session/load` or `session/resume`,
//! prompted by `session/prompt`, listed, closed, deleted and switched
//! between modes.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};
use zidane::agent::SessionStore;
use zidane::providers::{ContentBlock, FinishReason, ImageSource, Role};
use zidane_app::{Approve, Conversation, Events, Outcome, Setup, Submission};

use super::{Reply, RpcError, Server, Session, commands, forward, str_param, update};

impl Server {
    pub(super) fn session(&self, params: &Value) -> Result<Arc<Session>, RpcError> {
        let id = str_param(params, "sessionId")?;
        self.sessions
            .lock()
            .get(&id)
            .cloned()
            .ok_or_else(|| RpcError::not_found(format!("no session `{id}` (open it with session/new or session/load)")))
    }

    /// `session/new` (`load` none), `session/load` (the stored
    /// conversation replayed) and `session/resume` (not replayed).
    pub(super) async fn open(self: &Arc<Self>, params: Value, load: Option<(String, bool)>) -> Reply {
        let replay = load.as_ref().is_some_and(|(_, replay)| *replay);
        let load = load.map(|(id, _)| id);
        let cwd = PathBuf::from(str_param(&params, "cwd")?);
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(RpcError::params(format!(
                "cwd `{}` is not an absolute path to a folder",
                cwd.display()
            )));
        }
        let servers = params.get("mcpServers").cloned().unwrap_or(Value::Array(Vec::new()));
        let servers = servers
            .as_array()
            .ok_or_else(|| RpcError::params("mcpServers must be a list"))?
            .clone();
        if let Some(id) = &load {
            let stored = self.runtime.sqlite().load(id).await;
            if !matches!(stored, Ok(Some(_))) {
                return Err(RpcError::not_found(format!("no session `{id}` in the sessions file")));
            }
            if self.sessions.lock().contains_key(id) {
                return Err(RpcError::params(format!("session `{id}` is already open")));
            }
        }
        let id = load.clone().unwrap_or_else(zidane::agent::new_session_id);
        let session = self.start(&id, cwd, &servers).await?;
        self.sessions.lock().insert(id.clone(), Arc::clone(&session));
        if load.is_some() {
            self.reopen(&session, replay).await;
        }
        self.notify(&id, commands::advertised(&session));
        let modes = modes(*session.mode.lock());
        Ok(match load {
            Some(_) => json!({ "modes": modes }),
            None => json!({ "sessionId": id, "modes": modes }),
        })
    }

    /// A stored session opened again: its conversation shown (`replay`),
    /// and the run a crash cut off continued, as a turn the client watches.
    async fn reopen(&self, session: &Session, replay: bool) {
        if replay {
            let turns = session.conversation.stored_turns().await;
            for update in update::replay(&turns, session.cwd()) {
                self.notify(&session.id, update);
            }
        }
        if session.conversation.interrupted().await {
            *session.busy.lock() = true;
            let resumed = session.conversation.resume_interrupted().await;
            *session.busy.lock() = false;
            session.events.flush().await;
            if let Outcome::Failed(e) = resumed {
                eprintln!(
                    "zidane acp: the interrupted run of {} did not continue: {e}",
                    session.id
                );
            }
        }
    }

    /// The conversation of session `id` in `cwd`, with the client's MCP
    /// servers beside the configured ones.
    async fn start(self: &Arc<Self>, id: &str, cwd: PathBuf, servers: &[Value]) -> Result<Arc<Session>, RpcError> {
        let mut flags = self.flags.clone();
        flags.cwd = Some(cwd.clone());
        flags.session = Some(id.to_owned());
        let mut settings = zidane_app::config::load(&flags, &self.given, &cwd, zidane_app::config::Asking::Never)
            .map_err(|e| RpcError::params(e.message()))?;
        for server in servers {
            let (name, entry) = mcp_entry(server)?;
            settings.mcp.retain(|(n, _, _)| *n != name);
            settings.mcp.push((name, entry, "the ACP client".to_owned()));
        }
        let mut setup = Setup::new(settings, Arc::clone(&self.runtime), true)
            .await
            .map_err(|e| RpcError::params(e.message()))?;
        for note in &setup.notes {
            eprintln!("zidane acp: {note}");
        }
        let terminals: Arc<Mutex<HashMap<String, String>>> = Arc::default();
        setup.wrap_execution = self.client_files(id, &cwd, &terminals);
        let mode = setup.settings.approve.name();
        let (events, rx) = Events::channel();
        let conversation = Conversation::open(Arc::new(setup), id, events.clone(), false)
            .await
            .map_err(|e| RpcError::internal(e.message()))?;
        let mode = match mode {
            "auto-edit" => "auto-edit",
            "yolo" => "yolo",
            _ => "ask",
        };
        let session = Arc::new(Session {
            id: id.to_owned(),
            conversation,
            events,
            busy: Mutex::new(false),
            mode: Mutex::new(mode),
            tasks: Mutex::new(BTreeMap::new()),
            terminals,
        });
        tokio::spawn(forward::forward(Arc::clone(self), Arc::downgrade(&session), rx));
        Ok(session)
    }

    /// Where a session's tools run when the client offers its files or
    /// terminals: through it.
    fn client_files(
        self: &Arc<Self>,
        id: &str,
        cwd: &std::path::Path,
        terminals: &Arc<Mutex<HashMap<String, String>>>,
    ) -> Option<zidane_app::ExecutionWrap> {
        let client = self.client.lock().clone();
        let (read, write, terminal) = (
            client["fs"]["readTextFile"] == true,
            client["fs"]["writeTextFile"] == true,
            client["terminal"] == true,
        );
        if !(read || write || terminal) {
            return None;
        }
        let server = Arc::downgrade(self);
        let (session, cwd, terminals) = (id.to_owned(), cwd.to_owned(), Arc::clone(terminals));
        Some(Arc::new(move |inner, calls| {
            Arc::new(super::files::ClientFiles {
                inner,
                cwd: cwd.clone(),
                server: server.clone(),
                session: session.clone(),
                read,
                write,
                terminal,
                calls,
                terminals: Arc::clone(&terminals),
            }) as Arc<dyn zidane::tools::ExecutionContext>
        }))
    }

    /// `session/prompt`: a built-in command answered, or a prompt through
    /// the conversation's pipeline.
    pub(super) async fn prompt(self: &Arc<Self>, params: Value) -> Reply {
        let session = self.session(&params)?;
        let blocks = params
            .get("prompt")
            .and_then(Value::as_array)
            .ok_or_else(|| RpcError::params("prompt must be a list of content blocks"))?;
        let (text, parts) = prompt_content(blocks)?;
        {
            let mut busy = session.busy.lock();
            if *busy {
                return Err(RpcError::params(format!(
                    "a prompt is already running in session `{}`; send session/cancel first",
                    session.id
                )));
            }
            *busy = true;
        }
        let reply = self.answer(&session, text, parts).await;
        *session.busy.lock() = false;
        reply
    }

    async fn answer(&self, session: &Session, text: String, parts: Vec<ContentBlock>) -> Reply {
        if let Some(answer) = commands::run(session, text.trim()).await {
            self.say(&session.id, &answer);
            return Ok(json!({ "stopReason": "end_turn" }));
        }
        let submission = Submission {
            text,
            parts,
            ..Default::default()
        };
        let outcome = session.conversation.submit(submission).await;
        session.events.flush().await;
        match outcome {
            Ok(Outcome::Ran(out)) => Ok(json!({ "stopReason": stop_reason(session, &out) })),
            Ok(Outcome::Blocked(reason)) => {
                self.say(&session.id, &reason);
                Ok(json!({ "stopReason": "refusal" }))
            }
            Ok(Outcome::NothingToContinue) => Ok(json!({ "stopReason": "end_turn" })),
            Ok(Outcome::Failed(message) | Outcome::InUse(message)) => Err(RpcError::internal(message)),
            Ok(_) => Ok(json!({ "stopReason": "end_turn" })),
            Err(e) => Err(RpcError::params(e.message())),
        }
    }

    /// A message from the agent, outside a run.
    fn say(&self, session: &str, text: &str) {
        self.notify(
            session,
            json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": text } }),
        );
    }

    /// `session/list`: the stored sessions (of `cwd`, when given), the most
    /// recent first; a session is listed once a prompt recorded its folder.
    pub(super) async fn list(&self, params: &Value) -> Reply {
        let cwd = params.get("cwd").and_then(Value::as_str);
        let store = self.runtime.sqlite();
        let mut listed = store
            .list()
            .await
            .map_err(|e| RpcError::internal(format!("cannot read the sessions: {e}")))?;
        listed.retain(|s| !s.id.contains(zidane::agent::CHILD_SESSION_MARK));
        listed.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        let mut sessions = Vec::new();
        for info in listed {
            let Ok(Some(stored)) = store.load(&info.id).await else {
                continue;
            };
            let Some(folder) = stored.metadata.get(zidane_app::FOLDER_KEY).and_then(Value::as_str) else {
                continue;
            };
            if cwd.is_some_and(|c| c != folder) {
                continue;
            }
            sessions.push(json!({
                "sessionId": info.id,
                "cwd": folder,
                "title": info.title,
                "updatedAt": super::rfc3339(info.updated_at.as_millis()),
            }));
        }
        Ok(json!({ "sessions": sessions }))
    }

    /// `session/close`: a running turn is suspended (resumable), the
    /// conversation ends.
    pub(super) async fn close(&self, params: &Value) -> Reply {
        let session = self.session(params)?;
        self.sessions.lock().remove(&session.id);
        session.end().await;
        Ok(json!({}))
    }

    /// `session/delete`: the session (closed first when open), its turns,
    /// checkpoints and background output.
    pub(super) async fn delete(&self, params: &Value) -> Reply {
        let id = str_param(params, "sessionId")?;
        if self.sessions.lock().contains_key(&id) {
            self.close(params).await?;
        }
        let store = self.runtime.sqlite();
        match store.delete_session(&id).await {
            Ok(true) => {
                zidane_app::checkpoints::remove_task_output(store, &id);
                Ok(json!({}))
            }
            Ok(false) => Err(RpcError::not_found(format!("no session `{id}`"))),
            Err(e) => Err(RpcError::internal(format!("cannot delete session `{id}`: {e}"))),
        }
    }

    pub(super) fn cancel(&self, id: &str) {
        let Some(session) = self.sessions.lock().get(id).cloned() else {
            return;
        };
        tokio::spawn(async move {
            session.conversation.suspend().await;
        });
    }

    pub(super) fn set_mode(&self, params: &Value) -> Reply {
        let session = self.session(params)?;
        let mode = match str_param(params, "modeId")?.as_str() {
            "ask" => "ask",
            "auto-edit" => "auto-edit",
            "yolo" => "yolo",
            "plan" => "plan",
            other => {
                return Err(RpcError::params(format!(
                    "no mode `{other}` (ask, auto-edit, yolo, plan)"
                )));
            }
        };
        *session.mode.lock() = mode;
        *session.conversation.setup().approve.lock() = Approve::from_name(mode).unwrap_or(Approve::Ask);
        session.conversation.set_planning(mode == "plan");
        self.notify(
            &session.id,
            json!({ "sessionUpdate": "current_mode_update", "currentModeId": mode }),
        );
        Ok(json!({}))
    }
}

/// Why a finished run stopped, in ACP's words.
fn stop_reason(session: &Session, out: &zidane::agent::RunOutput) -> &'static str {
    if out.suspended || out.status == zidane::agent::RunStatus::Aborted {
        return "cancelled";
    }
    if out.status == zidane::agent::RunStatus::MaxTurns {
        return "max_turn_requests";
    }
    let last = session
        .conversation
        .agent()
        .turns()
        .into_iter()
        .rev()
        .find(|t| t.role == Role::Assistant)
        .and_then(|t| t.usage)
        .and_then(|u| u.finish_reason);
    match last {
        Some(FinishReason::Length) => "max_tokens",
        Some(FinishReason::Refusal) => "refusal",
        _ => "end_turn",
    }
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

/// The prompt's text and attachments: text as is, resource links as
/// `@path` mentions, embedded resources as their text, images as images.
fn prompt_content(blocks: &[Value]) -> Result<(String, Vec<ContentBlock>), RpcError> {
    let mut text = String::new();
    let mut parts = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
            Some("resource_link") => {
                let uri = block["uri"].as_str().unwrap_or_default();
                text.push_str(&format!("\n[{}]({uri})", block["name"].as_str().unwrap_or(uri)));
            }
            Some("resource") => {
                let resource = &block["resource"];
                let uri = resource["uri"].as_str().unwrap_or_default();
                if let Some(body) = resource["text"].as_str() {
                    text.push_str(&format!("\n\n<file path=\"{uri}\">\n{body}\n</file>"));
                }
            }
            Some("image") => parts.push(ContentBlock::Image {
                source: ImageSource::Base64 {
                    media_type: block["mimeType"].as_str().unwrap_or("image/png").to_owned(),
                    data: block["data"].as_str().unwrap_or_default().to_owned(),
                },
            }),
            Some(other) => return Err(RpcError::params(format!("content of type `{other}` is not supported"))),
            None => return Err(RpcError::params("a content block without a type")),
        }
    }
    if text.trim().is_empty() && parts.is_empty() {
        return Err(RpcError::params("the prompt is empty"));
    }
    Ok((text, parts))
}

/// The modes, the current one first named.
fn modes(current: &str) -> Value {
    json!({
        "currentModeId": current,
        "availableModes": [
            { "id": "ask", "name": "Ask", "description": "Commands, file changes, MCP tools and fetches ask first" },
            { "id": "auto-edit", "name": "Auto-edit", "description": "File changes run; commands, MCP tools and fetches ask" },
            { "id": "yolo", "name": "Yolo", "description": "Everything runs without asking (deny rules still hold)" },
            { "id": "plan", "name": "Plan", "description": "Read-only tools; the agent proposes a plan" },
        ],
    })
}
