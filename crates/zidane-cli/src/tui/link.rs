//! What the terminal session drives: a conversation in this process, or a
//! session of a server (`zidane attach`). Both give the same events and
//! answer the same requests, so the screen, the status line, the slash
//! commands, approvals, steering and Esc are the same; what only a local
//! session can do (another session in the same process, an MCP login
//! here) says so when attached.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use zidane::providers::{ThinkingLevel, Timestamp};
use zidane_app::{CompactOutcome, ContextReport, Conversation, CostReport, Error, ModelSwitch, Outcome, SkillState};

use crate::remote::session::RemoteSession;

/// A local conversation, or a served session.
#[derive(Clone)]
pub(super) enum Link {
    Local(Conversation),
    Remote(Arc<RemoteSession>),
}

/// What a served session cannot do from here.
pub(super) const LOCAL_ONLY: &str = "not available while attached to a served session";

fn thinking_name(level: ThinkingLevel) -> String {
    format!("{level:?}").to_lowercase()
}

impl Link {
    pub(super) fn id(&self) -> String {
        match self {
            Link::Local(c) => c.id().to_owned(),
            Link::Remote(r) => r.id().to_owned(),
        }
    }

    pub(super) fn remote(&self) -> Option<&Arc<RemoteSession>> {
        match self {
            Link::Local(_) => None,
            Link::Remote(r) => Some(r),
        }
    }

    pub(super) fn local(&self) -> Option<&Conversation> {
        match self {
            Link::Local(c) => Some(c),
            Link::Remote(_) => None,
        }
    }

    /// The folder the session works in.
    pub(super) fn cwd(&self) -> PathBuf {
        match self {
            Link::Local(c) => c.setup().cwd().to_owned(),
            Link::Remote(r) => r.status()["cwd"].as_str().map(PathBuf::from).unwrap_or_default(),
        }
    }

    /// The model's window, when known.
    pub(super) fn window(&self) -> Option<u32> {
        match self {
            Link::Local(c) => c.setup().window_tokens(),
            Link::Remote(r) => r.status()["window"].as_u64().map(|w| w as u32),
        }
    }

    /// The model of the next turns.
    pub(super) fn model(&self) -> String {
        match self {
            Link::Local(c) => c.model(),
            Link::Remote(r) => r.status()["model"].as_str().unwrap_or_default().to_owned(),
        }
    }

    /// When the prompt cache expires.
    pub(super) fn cache_expires_at(&self) -> Option<Timestamp> {
        match self {
            Link::Local(c) => c.agent().cache_expires_at(),
            Link::Remote(r) => r.status()["cacheExpiresAt"].as_u64().map(Timestamp::from_millis),
        }
    }

    /// The approval mode's name.
    pub(super) fn approve(&self) -> String {
        match self {
            Link::Local(c) => c.setup().approve.lock().name().to_owned(),
            Link::Remote(r) => r.status()["approve"].as_str().unwrap_or("ask").to_owned(),
        }
    }

    /// The sandbox mode's name.
    pub(super) fn sandbox(&self) -> String {
        match self {
            Link::Local(c) => c
                .setup()
                .settings
                .sandbox
                .map_or("workspace-write", |s| s.name())
                .to_owned(),
            Link::Remote(r) => r.status()["sandbox"].as_str().unwrap_or("workspace-write").to_owned(),
        }
    }

    /// A remote session's connection state for the status line.
    pub(super) fn connection(&self) -> Option<String> {
        let remote = self.remote()?;
        Some(if remote.connected() {
            format!("attached {}", remote.url())
        } else {
            remote.reconnecting()
        })
    }

    pub(super) async fn submit(&self, text: String) -> Result<Outcome, Error> {
        match self {
            Link::Local(c) => c.submit(zidane_app::Submission::text(text)).await,
            Link::Remote(r) => r.submit(&text).await,
        }
    }

    pub(super) async fn resume_interrupted(&self) -> Outcome {
        match self {
            Link::Local(c) => c.resume_interrupted().await,
            Link::Remote(r) => r.resume_interrupted().await,
        }
    }

    /// Queues `text` on the running run (`follow_up`: for when it would
    /// otherwise end); whether it takes it (a served session is asked, and
    /// the queued line shows until the model takes it).
    pub(super) fn queue(&self, text: &str, id: &str, follow_up: bool) -> bool {
        match self {
            Link::Local(c) if follow_up => c.follow_up(text, id),
            Link::Local(c) => c.steer(text, id),
            Link::Remote(r) => {
                let (r, params) = (Arc::clone(r), json!({ "text": text, "id": id, "followUp": follow_up }));
                tokio::spawn(async move { r.call("_zidane/steer", params).await });
                true
            }
        }
    }

    /// The text a `/command` typed while a run goes on steers with.
    pub(super) fn steering_text(&self, text: &str) -> Result<String, Error> {
        match self {
            Link::Local(c) => c.steering_text(text),
            Link::Remote(_) => Ok(text.to_owned()),
        }
    }

    /// Waits for the end of the run going on at the server (a local
    /// conversation has none it did not start).
    pub(super) async fn follow(&self) -> Outcome {
        match self {
            Link::Local(_) => Outcome::NothingToContinue,
            Link::Remote(r) => r.follow().await,
        }
    }

    /// Interrupts the run.
    pub(super) async fn suspend(&self) {
        match self {
            Link::Local(c) => c.suspend().await,
            Link::Remote(r) => r.cancel(),
        }
    }

    /// Ends the session here: a local one ends; a served one is left
    /// running.
    pub(super) async fn end(&self) {
        match self {
            Link::Local(c) => c.end().await,
            Link::Remote(r) => r.detach(),
        }
    }

    async fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        match self {
            Link::Remote(r) => r.call(method, params).await,
            Link::Local(_) => Err(LOCAL_ONLY.to_owned()),
        }
    }

    pub(super) async fn fallback_models(&self) -> Vec<String> {
        match self {
            Link::Local(c) => c.fallback_models().to_vec(),
            Link::Remote(_) => {
                let answer = self.call("_zidane/model", json!({})).await.unwrap_or_default();
                serde_json::from_value(answer["fallbacks"].clone()).unwrap_or_default()
            }
        }
    }

    pub(super) async fn set_model(&self, name: &str) -> Result<ModelSwitch, String> {
        match self {
            Link::Local(c) => Ok(c.set_model(name)),
            Link::Remote(_) => {
                let answer = self.call("_zidane/model", json!({ "name": name })).await?;
                serde_json::from_value(answer).map_err(|e| e.to_string())
            }
        }
    }

    pub(super) async fn thinking(&self) -> String {
        match self {
            Link::Local(c) => thinking_name(c.thinking()),
            Link::Remote(_) => {
                let answer = self.call("_zidane/thinking", json!({})).await.unwrap_or_default();
                answer["level"].as_str().unwrap_or("off").to_owned()
            }
        }
    }

    /// Sets the thinking level; the tokens read again.
    pub(super) async fn set_thinking(&self, level: ThinkingLevel) -> Result<u64, String> {
        match self {
            Link::Local(c) => Ok(c.set_thinking(level)),
            Link::Remote(_) => {
                let answer = self
                    .call("_zidane/thinking", json!({ "level": thinking_name(level) }))
                    .await?;
                Ok(answer["reread"].as_u64().unwrap_or(0))
            }
        }
    }

    pub(super) async fn compact(&self, focus: String) -> Result<CompactOutcome, String> {
        match self {
            Link::Local(c) => c.compact(Some(focus)).await,
            Link::Remote(_) => {
                let answer = self.call("_zidane/compact", json!({ "focus": focus })).await?;
                Ok(match answer["replaced"].as_u64().unwrap_or(0) {
                    0 => CompactOutcome::Nothing,
                    n => CompactOutcome::Compacted { replaced: n as u32 },
                })
            }
        }
    }

    pub(super) async fn context_report(&self) -> ContextReport {
        match self {
            Link::Local(c) => c.context_report().await,
            Link::Remote(_) => self
                .call("_zidane/context", json!({}))
                .await
                .ok()
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default(),
        }
    }

    pub(super) async fn context_used(&self) -> Option<u64> {
        match self {
            Link::Local(c) => c.context_used().await,
            Link::Remote(r) => r.status()["contextUsed"].as_u64(),
        }
    }

    pub(super) async fn cost(&self) -> CostReport {
        match self {
            Link::Local(c) => c.cost(),
            Link::Remote(_) => self
                .call("_zidane/cost", json!({}))
                .await
                .ok()
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default(),
        }
    }

    pub(super) async fn skills(&self) -> Vec<SkillState> {
        match self {
            Link::Local(c) => c.skills().await,
            Link::Remote(_) => self
                .call("_zidane/skills", json!({}))
                .await
                .ok()
                .and_then(|v| serde_json::from_value(v["skills"].clone()).ok())
                .unwrap_or_default(),
        }
    }

    pub(super) async fn toggle_skill(&self, name: &str) -> Result<bool, String> {
        match self {
            Link::Local(c) => c.toggle_skill(name).await,
            Link::Remote(_) => {
                let answer = self.call("_zidane/skills", json!({ "toggle": name })).await?;
                Ok(answer["active"] == true)
            }
        }
    }

    pub(super) async fn kill_task(&self, id: &str) -> bool {
        match self {
            Link::Local(c) => c.kill_task(id).await,
            Link::Remote(_) => self
                .call("_zidane/tasks", json!({ "kill": id }))
                .await
                .is_ok_and(|v| v["stopping"] == true),
        }
    }

    /// The approval mode, set when `mode` names one.
    pub(super) async fn set_approve(&self, mode: &str) -> Result<String, String> {
        match self {
            Link::Local(c) => {
                let approve = zidane_app::Approve::from_name(mode)
                    .ok_or_else(|| format!("unknown mode `{mode}` (ask, auto-edit, yolo)"))?;
                *c.setup().approve.lock() = approve;
                Ok(approve.name().to_owned())
            }
            Link::Remote(r) => {
                let answer = self.call("_zidane/approve", json!({ "mode": mode })).await?;
                r.refresh().await;
                Ok(answer["mode"].as_str().unwrap_or_default().to_owned())
            }
        }
    }

    /// The language servers, for `/lsp` (the serving process's, attached).
    pub(super) async fn language_servers(&self) -> Option<(Vec<zidane::lsp::ServerStatus>, zidane::lsp::Counts)> {
        match self {
            Link::Local(c) => Some(c.language_servers()),
            Link::Remote(_) => {
                let answer = self.call("_zidane/lsp", json!({})).await.ok()?;
                Some((
                    serde_json::from_value(answer["servers"].clone()).ok()?,
                    serde_json::from_value(answer["counts"].clone()).ok()?,
                ))
            }
        }
    }

    pub(super) async fn sandbox_line(&self) -> String {
        match self {
            Link::Local(c) => c.setup().sandbox_line(),
            Link::Remote(r) => r.about()["sandboxLine"].as_str().unwrap_or_default().to_owned(),
        }
    }

    /// The session's messages, and its last question and answer.
    pub(super) async fn summary(&self) -> (usize, Option<String>, Option<String>) {
        match self {
            Link::Local(c) => {
                let turns = c.stored_turns().await;
                let last = |role: zidane::providers::Role| {
                    turns
                        .iter()
                        .rev()
                        .filter(|t| t.role == role)
                        .map(|t| t.text())
                        .find(|t| !t.trim().is_empty())
                };
                (
                    turns.len(),
                    last(zidane::providers::Role::User),
                    last(zidane::providers::Role::Assistant),
                )
            }
            Link::Remote(r) => {
                r.refresh().await;
                let about = r.about();
                let text = |key: &str| about[key].as_str().map(str::to_owned);
                (
                    about["messages"].as_u64().unwrap_or(0) as usize,
                    text("lastAsked"),
                    text("lastAnswer"),
                )
            }
        }
    }

    pub(super) async fn interrupted(&self) -> bool {
        match self {
            Link::Local(c) => c.interrupted().await,
            Link::Remote(r) => r.about()["interrupted"] == true && r.status()["running"] != true,
        }
    }

    /// The folder's own commands: name and description.
    pub(super) fn custom_commands(&self) -> Vec<(String, String)> {
        match self {
            Link::Local(c) => {
                let settings = &c.setup().settings;
                let folders = zidane_app::commands::folders(&settings.paths, settings.trusted);
                zidane_app::commands::list(&folders)
                    .0
                    .into_iter()
                    .map(|c| (c.name, c.description.unwrap_or_default()))
                    .collect()
            }
            Link::Remote(r) => r.about()["commands"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                    (text("name"), text("description"))
                })
                .collect(),
        }
    }

    /// The MCP servers: name and where each was configured.
    pub(super) fn mcp_servers(&self) -> Vec<(String, String)> {
        match self {
            Link::Local(c) => c
                .setup()
                .settings
                .mcp
                .iter()
                .map(|(n, _, o)| (n.clone(), o.clone()))
                .collect(),
            Link::Remote(r) => r.about()["mcp"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let text = |k: &str| m[k].as_str().unwrap_or_default().to_owned();
                    (text("name"), text("origin"))
                })
                .collect(),
        }
    }

    /// Whether folder checkpoints are taken.
    pub(super) fn checkpoints(&self) -> bool {
        match self {
            Link::Local(c) => c.setup().settings.checkpoints,
            Link::Remote(r) => r.about()["checkpoints"] != false,
        }
    }

    /// `/diff`: the session's changes (or one prompt's), file by file.
    pub(super) async fn changes(&self, prompt: Option<usize>) -> Result<Vec<zidane_app::diff::FileDiff>, String> {
        match self {
            Link::Local(c) => c.changes(prompt).await,
            Link::Remote(_) => {
                let answer = self.call("_zidane/diff", json!({ "prompt": prompt })).await?;
                serde_json::from_value(answer["files"].clone()).map_err(|e| e.to_string())
            }
        }
    }

    /// Whether plan mode is on (the next runs use read-only tools).
    pub(super) fn planning(&self) -> bool {
        match self {
            Link::Local(c) => c.planning(),
            Link::Remote(r) => r.status()["planning"] == true,
        }
    }

    /// Sets the mode: `plan`, or an approval mode (which leaves plan mode).
    pub(super) async fn set_mode(&self, mode: &str) -> Result<(), String> {
        match self {
            Link::Local(c) => {
                if mode == "plan" {
                    c.set_planning(true);
                } else {
                    let approve = zidane_app::Approve::from_name(mode)
                        .ok_or_else(|| format!("unknown mode `{mode}` (ask, auto-edit, yolo, plan)"))?;
                    *c.setup().approve.lock() = approve;
                    c.set_planning(false);
                }
                Ok(())
            }
            Link::Remote(r) => {
                self.call("session/set_mode", json!({ "modeId": mode })).await?;
                r.refresh().await;
                Ok(())
            }
        }
    }

    /// The model's last answer (the plan, after a planning run).
    pub(super) async fn last_answer(&self) -> String {
        match self {
            Link::Local(c) => c.last_answer(),
            Link::Remote(_) => self.summary().await.2.unwrap_or_default(),
        }
    }

    /// Leaves plan mode and carries out `plan`.
    pub(super) async fn carry_out(&self, plan: String) -> Result<Outcome, Error> {
        match self {
            Link::Local(c) => Ok(c.carry_out(&plan).await),
            Link::Remote(r) => r.submit(&zidane_app::plan::go_ahead(&plan)).await,
        }
    }
}
