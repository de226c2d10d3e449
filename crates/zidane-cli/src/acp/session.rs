//! What a client asks of sessions: open one (new, loaded, resumed, or
//! attached when the hub holds it already), prompt it, list, close and
//! delete them, switch modes; and the program's own extensions
//! (`_zidane/steer`, `_zidane/status`).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use zidane::agent::SessionStore;
use zidane::providers::{ContentBlock, FinishReason, ImageSource, Role};
use zidane_app::{Approve, Outcome, Submission};

use super::{Connection, Reply, RpcError, Session, commands, str_param, update};

impl Connection {
    /// The session `params` names, which this client opened (a served
    /// session another client opened is loaded first).
    pub(super) fn session(&self, params: &Value) -> Result<Arc<Session>, RpcError> {
        let id = str_param(params, "sessionId")?;
        self.hub
            .get(&id)
            .filter(|_| self.sessions.lock().contains(&id))
            .ok_or_else(|| {
                RpcError::not_found(format!(
                    "no session `{id}` open here (open it with session/new, session/load or session/resume)"
                ))
            })
    }

    /// `session/new` (`load` none), `session/load` (the stored
    /// conversation replayed) and `session/resume` (not replayed, or from
    /// the message `_meta.zidane.since` on).
    pub(super) async fn open(self: &Arc<Self>, request: &Value, params: Value, load: Option<(String, bool)>) -> Reply {
        let since = match &load {
            Some((_, true)) => Some(0),
            Some((_, false)) => params["_meta"]["zidane"]["since"].as_u64().map(|n| n as usize),
            None => None,
        };
        let load = load.map(|(id, _)| id);
        // One opening of a stored session at a time: a second client
        // loading it meanwhile attaches to what the first opened.
        let _opening = match &load {
            Some(id) => Some(self.hub.opening(id).await),
            None => None,
        };
        if let Some(id) = &load
            && let Some(open) = self.hub.get(id)
        {
            // Served: the session lives in the hub; this client attaches.
            if !self.hub.served() {
                return Err(RpcError::params(format!("session `{id}` is already open")));
            }
            self.attach(&open, since).await;
            return Ok(json!({ "modes": modes(*open.mode.lock()) }));
        }
        let (id, cwd, worktree) = self.place(&params, load.as_deref()).await?;
        let servers = params.get("mcpServers").cloned().unwrap_or(Value::Array(Vec::new()));
        let servers = servers
            .as_array()
            .ok_or_else(|| RpcError::params("mcpServers must be a list"))?
            .clone();
        let trust = self.trust(request, &cwd).await;
        if self.out.is_closed() {
            // The client went while the trust question waited.
            if load.is_none()
                && let Some(tree) = &worktree
            {
                let _ = tree.remove(false);
            }
            return Err(RpcError::internal("the client went away"));
        }
        let opening = super::hub::Opening {
            servers,
            worktree,
            trust,
            ..Default::default()
        };
        let session = self.hub.start(Some(self), &id, &cwd, opening).await?;
        let interrupted = load.is_some() && session.conversation().interrupted().await;
        if interrupted {
            // Before anyone can prompt it: the cut-off run goes first.
            session.begin();
        }
        self.hub.insert(Arc::clone(&session));
        for note in &session.conversation().setup().notes {
            self.say(&id, &format!("{note}\n"));
        }
        self.attach(&session, since).await;
        if interrupted {
            self.continue_run(&session).await;
        }
        let modes = modes(*session.mode.lock());
        let mut reply = match load {
            Some(_) => json!({ "modes": modes }),
            None => json!({ "sessionId": id, "modes": modes }),
        };
        if let Some(tree) = &session.worktree {
            reply["_meta"] = json!({ "zidane": { "worktree": { "path": tree.path, "branch": tree.branch } } });
        }
        Ok(reply)
    }

    /// Where a session opens: its id, its folder and its own worktree (a
    /// new one when `_meta.zidane.worktree` names it; a stored served
    /// session's own, where it was made).
    async fn place(
        &self,
        params: &Value,
        load: Option<&str>,
    ) -> Result<(String, PathBuf, Option<crate::worktree::Worktree>), RpcError> {
        let mut cwd = PathBuf::from(str_param(params, "cwd")?);
        let mut worktree = None;
        if let Some(id) = load {
            let stored = match self.hub.runtime().sqlite().load(id).await {
                Ok(Some(stored)) => stored,
                _ => return Err(RpcError::not_found(format!("no session `{id}` in the sessions file"))),
            };
            // A served session opens where it was made (its worktree
            // included), whichever folder the client is in.
            if self.hub.served()
                && let Some((folder, tree)) = super::hub::served_place(&stored.metadata)
            {
                cwd = folder;
                worktree = tree;
            }
        }
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(RpcError::params(format!(
                "cwd `{}` is not an absolute path to a folder",
                cwd.display()
            )));
        }
        let id = load.map_or_else(zidane::agent::new_session_id, str::to_owned);
        if let Some(name) = params["_meta"]["zidane"]["worktree"].as_str()
            && load.is_none()
        {
            let (folder, name) = (cwd.clone(), name.to_owned());
            let tree = tokio::task::spawn_blocking(move || crate::worktree::Worktree::create(&folder, &name))
                .await
                .map_err(|e| RpcError::internal(e.to_string()))?
                .map_err(RpcError::params)?;
            cwd.clone_from(&tree.path);
            worktree = Some(tree);
        }
        Ok((id, cwd, worktree))
    }

    /// The folder's trust, when its project files would need it: asked of
    /// a client that shows forms, as a form tied to the opening request
    /// (`Some`: its answer, remembered as the terminal's is); `None` (not
    /// asked, or not answered) leaves the files out.
    async fn trust(&self, request: &Value, cwd: &std::path::Path) -> Option<bool> {
        if self.client.lock()["elicitation"]["form"].is_null() {
            return None;
        }
        let question = self.hub.trust_question(cwd)?;
        let params = json!({
            "requestId": request,
            "mode": "form",
            "message": question.message(),
            "requestedSchema": {
                "type": "object",
                "properties": { "trust": {
                    "type": "boolean",
                    "title": "Trust this folder",
                    "description": "Use these files (remembered for the folder)",
                } },
                "required": ["trust"],
            },
            "_meta": { "zidane": { "trust": question.root } },
        });
        let answer = self.request("elicitation/create", params).await?;
        (answer["action"] == "accept").then(|| answer["content"]["trust"] == true)
    }

    /// Attaches to a session: its conversation from message `since` on
    /// (`None`: none of it), then the turn going on, as updates; then the
    /// commands, and the questions waiting for an answer. What the session
    /// shows meanwhile is held back and follows, so nothing is missed or
    /// shown twice.
    async fn attach(self: &Arc<Self>, session: &Arc<Session>, since: Option<usize>) {
        let id = session.id.clone();
        let (turns, live) = loop {
            let generation = session.generation();
            let turns = match since {
                Some(from) => {
                    let turns = session.conversation().stored_turns().await;
                    turns.into_iter().skip(from).collect()
                }
                None => Vec::new(),
            };
            if let Some(live) = session.attach_at(self, generation) {
                break (turns, if since.is_some() { live } else { Vec::new() });
            }
        };
        let cwd = session.cwd();
        let shown = update::replay(&turns, &cwd).into_iter().chain(live);
        for update in shown {
            if !self.notify_waiting(&id, update).await {
                return;
            }
        }
        self.release(&id).await;
        self.notify(&id, commands::advertised(session));
        let waiting = session.questions.lock().clone();
        for pending in waiting {
            super::forward::offer(Arc::clone(self), session.id.clone(), pending);
        }
    }

    /// A stored session's run that a crash cut off, continued: served, on
    /// a task of its own (the client watches it as any turn); over
    /// standard input and output, before the client's `session/load` is
    /// answered.
    async fn continue_run(&self, session: &Arc<Session>) {
        let session = Arc::clone(session);
        let running = async move {
            let resumed = session.conversation().resume_interrupted().await;
            session.events.flush().await;
            session.done();
            if let Outcome::Failed(e) = resumed {
                eprintln!("zidane: the interrupted run of {} did not continue: {e}", session.id);
            }
        };
        if self.hub.served() {
            tokio::spawn(running);
        } else {
            running.await;
        }
    }

    /// `session/prompt`: a built-in command answered, a prompt through the
    /// conversation's pipeline, or, while a run goes on in a served
    /// session, a steer for its next turn.
    pub(super) async fn prompt(self: &Arc<Self>, params: Value) -> Reply {
        let session = self.session(&params)?;
        let blocks = params
            .get("prompt")
            .and_then(Value::as_array)
            .ok_or_else(|| RpcError::params("prompt must be a list of content blocks"))?;
        let (text, parts) = prompt_content(blocks)?;
        if !session.begin() {
            if !self.hub.served() {
                return Err(RpcError::params(format!(
                    "a prompt is already running in session `{}`; send session/cancel first",
                    session.id
                )));
            }
            if let Some(steered) = self.steer_running(&session, &text)? {
                return Ok(steered);
            }
            // The run was ending: the prompt runs once it has.
            session.begin_when_idle().await;
        }
        session.turn_ended();
        self.echo(&session, &text);
        let reply = self.answer(&session, text, parts).await;
        session.done();
        reply
    }

    /// A prompt while a run goes on in a served session: it steers the
    /// run (the client is told so), or, when the run takes no more
    /// (it is ending), `None`.
    fn steer_running(&self, session: &Session, text: &str) -> Result<Option<Value>, RpcError> {
        let expanded = session
            .conversation()
            .steering_text(text)
            .map_err(|e| RpcError::params(e.message()))?;
        let id = format!("steer-{}", zidane_app::now_ms());
        if !session.conversation().steer(&expanded, &id) {
            return Ok(None);
        }
        session.queued.lock().push((id, text.to_owned()));
        self.echo(session, text);
        Ok(Some(
            json!({ "stopReason": "end_turn", "_meta": { "zidane": { "steered": true } } }),
        ))
    }

    /// What this client typed, shown to the session's other clients (and
    /// to one attaching during the turn), with the client's name.
    fn echo(&self, session: &Session, text: &str) {
        let name = self.name.lock().clone();
        let update = json!({
            "sessionUpdate": "user_message_chunk",
            "content": { "type": "text", "text": text },
            "_meta": { "zidane": { "client": name } },
        });
        session.publish(&update, Some(self), true);
    }

    async fn answer(&self, session: &Session, mut text: String, parts: Vec<ContentBlock>) -> Reply {
        if let Some(("review", args)) = zidane_app::slash::parse(text.trim()) {
            return self.review(session, args).await;
        }
        let goal = zidane_app::slash::parse(text.trim())
            .filter(|(name, _)| *name == "goal")
            .map(|(_, arg)| arg.to_owned());
        if let Some(arg) = goal {
            match session.conversation().goal_command(&arg).await {
                zidane_app::GoalAction::Say(message) => {
                    self.say(&session.id, &message);
                    return Ok(json!({ "stopReason": "end_turn" }));
                }
                zidane_app::GoalAction::Run(submission) => text = submission.text,
            }
        } else if let Some(answer) = commands::run(session, text.trim()).await {
            self.say(&session.id, &answer);
            return Ok(json!({ "stopReason": "end_turn" }));
        }
        let goal_run = session.conversation().goal_pending();
        let submission = Submission {
            text,
            parts,
            ..Default::default()
        };
        let outcome = session.conversation().submit(submission).await;
        session.events.flush().await;
        if goal_run && let Some(progress) = session.conversation().goal() {
            self.say(&session.id, &zidane_app::describe_goal(&progress));
        }
        match outcome {
            Ok(Outcome::Ran(out)) => {
                let mut reply = json!({ "stopReason": stop_reason(session, &out) });
                // The program's own clients show the run's figures.
                if self.wants_events.load(std::sync::atomic::Ordering::SeqCst) {
                    reply["_meta"] = json!({ "zidane": { "output": out } });
                }
                Ok(reply)
            }
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
    /// `/review [ARGS]`: a read-only review of a change; each finding is
    /// a tool call with its location (so an editor can jump to it), then
    /// the report as the agent's message.
    async fn review(&self, session: &Session, args: &str) -> Reply {
        let (target, focus) =
            zidane_app::review::Target::parse_args(args).map_err(|e| RpcError::params(e.message()))?;
        let mut request = zidane_app::review::Request::new(target);
        request.focus = focus;
        let conversation = session.conversation();
        let report = conversation.review(&request).await;
        session.events.flush().await;
        let report = report.map_err(|e| RpcError::internal(e.message()))?;
        for update in commands::finding_updates(&report, &conversation.setup().settings.cwd) {
            session.publish(&update, None, true);
        }
        self.say(&session.id, &zidane_app::review::markdown::to_markdown(&report));
        Ok(json!({ "stopReason": "end_turn" }))
    }

    fn say(&self, session: &str, text: &str) {
        self.notify(
            session,
            json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": text } }),
        );
    }

    /// `session/list`: the stored sessions (of `cwd`, when given), the most
    /// recent first; a session is listed once a prompt recorded its folder.
    /// A session with a worktree of its own says its branch and whether it
    /// has changes.
    pub(super) async fn list(&self, params: &Value) -> Reply {
        let cwd = params.get("cwd").and_then(Value::as_str);
        let store = self.hub.runtime().sqlite();
        let mut listed = store
            .list()
            .await
            .map_err(|e| RpcError::internal(format!("cannot read the sessions: {e}")))?;
        listed.retain(|s| zidane::agent::is_conversation(&s.id));
        listed.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        let mut sessions = Vec::new();
        for info in listed {
            let Ok(Some(stored)) = store.load(&info.id).await else {
                continue;
            };
            let served = super::hub::served_place(&stored.metadata);
            let folder = stored.metadata.get(zidane_app::FOLDER_KEY).and_then(Value::as_str);
            let folder = match (folder, &served) {
                (Some(folder), _) => folder.to_owned(),
                (None, Some((folder, _))) => folder.to_string_lossy().into_owned(),
                (None, None) => continue,
            };
            let tree = crate::worktree::Worktree::of_session(&stored.metadata);
            let matches = |c: &str| c == folder || tree.as_ref().is_some_and(|t| t.repo.to_string_lossy() == c);
            if cwd.is_some_and(|c| !matches(c)) {
                continue;
            }
            let mut entry = json!({
                "sessionId": info.id,
                "cwd": folder,
                "title": info.title,
                "updatedAt": super::rfc3339(info.updated_at.as_millis()),
            });
            let state = self.hub.get(&info.id).map(|s| {
                if !s.questions.lock().is_empty() {
                    "waiting"
                } else if s.busy() {
                    "running"
                } else {
                    "open"
                }
            });
            let state = state.unwrap_or(if info.interrupted { "interrupted" } else { "stored" });
            // Model turns and what they cost, from the figures each turn keeps.
            let answers = stored
                .turns
                .iter()
                .filter(|t| t.role == zidane::providers::Role::Assistant);
            let turns = answers.clone().count();
            let costs: Vec<f64> = answers.filter_map(|t| t.usage.as_ref()?.cost).collect();
            let cost = (!costs.is_empty()).then(|| costs.iter().sum::<f64>());
            let mut zidane = json!({ "state": state, "served": served.is_some(), "turns": turns, "cost": cost });
            if let Some(tree) = tree {
                let (path, branch) = (tree.path.clone(), tree.branch.clone());
                let changed = tokio::task::spawn_blocking(move || tree.changed()).await.ok().flatten();
                zidane["worktree"] = json!({ "path": path, "branch": branch, "changed": changed });
            }
            entry["_meta"] = json!({ "zidane": zidane });
            sessions.push(entry);
        }
        Ok(json!({ "sessions": sessions }))
    }

    /// `session/close`: the client leaves the session. Over standard input
    /// and output that ends it (a running turn suspended, resumable); a
    /// served session goes on for its other clients, and for this one when
    /// it loads it again.
    pub(super) async fn close(&self, params: &Value) -> Reply {
        let session = self.session(params)?;
        self.sessions.lock().remove(&session.id);
        if self.hub.served() {
            session.detach(self);
            self.held.lock().remove(&session.id);
            return Ok(json!({}));
        }
        self.hub.remove(&session.id);
        session.end().await;
        Ok(json!({}))
    }

    /// `session/delete`: the session (ended first when open), its turns,
    /// checkpoints and background output. A worktree of its own goes with
    /// it when it has no uncommitted work; one that has is kept and named
    /// (`_meta.zidane.removeWorktree: "force"` removes it anyway).
    pub(super) async fn delete(&self, params: &Value) -> Reply {
        let id = str_param(params, "sessionId")?;
        let store = self.hub.runtime().sqlite();
        let tree = match self.hub.remove(&id) {
            Some(session) => {
                session.end().await;
                session.worktree.clone()
            }
            None => match store.load(&id).await {
                Ok(Some(stored)) => crate::worktree::Worktree::of_session(&stored.metadata),
                _ => None,
            },
        };
        let force = params["_meta"]["zidane"]["removeWorktree"] == "force";
        let kept = tree.and_then(|tree| tree.remove(force).err());
        match store.delete_session(&id).await {
            Ok(true) => {
                zidane_app::checkpoints::remove_task_output(store, &id);
                Ok(match kept {
                    Some(why) => json!({ "_meta": { "zidane": { "worktreeKept": why } } }),
                    None => json!({}),
                })
            }
            Ok(false) => Err(RpcError::not_found(format!("no session `{id}`"))),
            Err(e) => Err(RpcError::internal(format!("cannot delete session `{id}`: {e}"))),
        }
    }

    /// `session/cancel` of a session this client opened.
    pub(super) fn cancel(&self, id: &str) {
        let Some(session) = self.hub.get(id).filter(|_| self.sessions.lock().contains(id)) else {
            return;
        };
        tokio::spawn(async move {
            session.conversation().suspend().await;
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
        *session.conversation().setup().approve.lock() = Approve::from_name(mode).unwrap_or(Approve::Ask);
        session.conversation().set_planning(mode == "plan");
        let update = json!({ "sessionUpdate": "current_mode_update", "currentModeId": mode });
        session.publish(&update, None, false);
        Ok(json!({}))
    }

    /// `_zidane/steer` (`followUp`: for when the run would otherwise end):
    /// `queued` is whether the running run takes it.
    pub(super) fn steer(&self, params: &Value) -> Reply {
        let session = self.session(params)?;
        let text = str_param(params, "text")?;
        // A `/command` steers with what it stands for.
        let text = session
            .conversation()
            .steering_text(&text)
            .map_err(|e| RpcError::params(e.message()))?;
        let id = params["id"]
            .as_str()
            .map_or_else(|| format!("steer-{}", zidane_app::now_ms()), str::to_owned);
        let queued = if params["followUp"] == true {
            session.conversation().follow_up(&text, &id)
        } else {
            session.conversation().steer(&text, &id)
        };
        if queued {
            self.echo(&session, &text);
            session.queued.lock().push((id.clone(), text.clone()));
        }
        Ok(json!({ "queued": queued, "id": id }))
    }

    /// `_zidane/status`: the figures a status line shows.
    pub(super) async fn status(&self, params: &Value) -> Reply {
        let session = self.session(params)?;
        let conversation = &session.conversation();
        let setup = conversation.setup();
        Ok(json!({
            "model": conversation.model(),
            "window": setup.window_tokens(),
            "contextUsed": conversation.context_used().await,
            "cacheExpiresAt": conversation.agent().cache_expires_at().map(|t| t.as_millis()),
            "approve": setup.approve.lock().name(),
            "sandbox": setup.settings.sandbox.map_or("workspace-write", |s| s.name()),
            "planning": conversation.planning(),
            "running": session.busy(),
            "cwd": setup.cwd(),
            "clients": session.clients().len(),
            "lastEnd": session.last_end.lock().clone(),
            "messages": conversation.agent().turns().len(),
            "queued": session.queued.lock().iter().map(|(id, text)| json!({ "id": id, "text": text })).collect::<Vec<_>>(),
        }))
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
        .conversation()
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
