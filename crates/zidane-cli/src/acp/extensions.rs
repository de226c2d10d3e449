//! The program's own methods beside ACP's (its extension point: names
//! that start with `_`), for clients that show more than an editor does
//! (`zidane attach`, the web page): the status line's figures, steering,
//! the model and thinking level, compaction, what fills the context and
//! what it cost, skills, background tasks, the approval mode, the folder's
//! commands, checkpoints, and the language servers.
//!
//! | method | params (beside `sessionId`) | result |
//! |---|---|---|
//! | `_zidane/status` | | `model`, `window`, `contextUsed`, `cacheExpiresAt`, `approve`, `sandbox`, `planning`, `running`, `cwd`, `clients`, `lastEnd`, `queued` |
//! | `_zidane/steer` | `text`, `id`?, `followUp`? | `queued`, `id` |
//! | `_zidane/model` | `name`? | `model`, `fallbacks`; with a name: `from`, `to`, `reread`, `changed` |
//! | `_zidane/thinking` | `level`? | `level`, `reread` |
//! | `_zidane/compact` | `focus`? | `replaced` (0: nothing to compact) |
//! | `_zidane/context` | | a context report |
//! | `_zidane/cost` | | a cost report |
//! | `_zidane/usage` | | `window`, `turns`, `cacheBreaks`, `compactions` (see `usage.rs`) |
//! | `_zidane/skills` | `toggle`? | `skills`; with a name: `active` |
//! | `_zidane/tasks` | `kill`? | `tasks`; with an id: `stopping` |
//! | `_zidane/approve` | `mode`? | `mode` |
//! | `_zidane/session` | | `messages`, `lastAsked`, `lastAnswer`, `interrupted`, `commands`, `mcp`, `checkpoints`, `sandboxLine` |
//! | `_zidane/diff` | `prompt`? (none: the whole session) | `files`: each file's diff |
//! | `_zidane/lsp` | | `servers` (each with its `state`), `counts` (`reported`, `fixed`) |
//! | `_zidane/rewind` | `index`? (none: undo), `apply` | `plan` text; applied: `report` |
//! | `_zidane/checkpoints` | | `checkpoints`: each prompt's (`index`, `label`, `createdAt`, `changes`), for a rewind to pick from |

use serde_json::{Value, json};
use zidane::providers::{Role, ThinkingLevel};
use zidane_app::{Approve, CompactOutcome};

use super::{Connection, Reply, RpcError, Session};

impl Connection {
    /// Answers one of the program's own methods.
    pub(super) async fn extension(&self, method: &str, params: &Value) -> Reply {
        let session = self.session(params)?;
        let conversation = &session.conversation();
        match method {
            "_zidane/model" => Ok(match params["name"].as_str() {
                Some(name) => serde_json::to_value(conversation.set_model(name)).unwrap_or_default(),
                None => json!({ "model": conversation.model(), "fallbacks": conversation.fallback_models() }),
            }),
            "_zidane/thinking" => {
                let reread = match params["level"].as_str() {
                    Some(level) => conversation.set_thinking(thinking_level(level)?),
                    None => 0,
                };
                Ok(json!({ "level": format!("{:?}", conversation.thinking()).to_lowercase(), "reread": reread }))
            }
            "_zidane/compact" => match conversation.compact(params["focus"].as_str().map(str::to_owned)).await {
                Ok(CompactOutcome::Compacted { replaced }) => Ok(json!({ "replaced": replaced })),
                Ok(_) => Ok(json!({ "replaced": 0 })),
                Err(e) => Err(RpcError::internal(e)),
            },
            "_zidane/context" => Ok(serde_json::to_value(conversation.context_report().await).unwrap_or_default()),
            "_zidane/cost" => Ok(serde_json::to_value(conversation.cost()).unwrap_or_default()),
            "_zidane/usage" => {
                // What the events said so far is in the ledger first.
                session.events.flush().await;
                Ok(session.usage.lock().report(conversation.setup().window_tokens()))
            }
            "_zidane/skills" => skills(&session, params["toggle"].as_str()).await,
            "_zidane/tasks" => Ok(tasks(&session, params["kill"].as_str()).await),
            "_zidane/approve" => {
                if let Some(mode) = params["mode"].as_str() {
                    let mode = Approve::from_name(mode)
                        .ok_or_else(|| RpcError::params(format!("no mode `{mode}` (ask, auto-edit, yolo)")))?;
                    *conversation.setup().approve.lock() = mode;
                }
                Ok(json!({ "mode": conversation.setup().approve.lock().name() }))
            }
            "_zidane/session" => Ok(about(&session).await),
            "_zidane/lsp" => {
                let (servers, counts) = conversation.language_servers();
                Ok(json!({ "servers": servers, "counts": counts }))
            }
            "_zidane/rewind" => rewind(&session, params).await,
            "_zidane/checkpoints" => {
                let list = zidane_app::checkpoints::list(&conversation.setup().checkpoints, &session.id)
                    .await
                    .map_err(|e| RpcError::internal(e.message()))?;
                Ok(json!({ "checkpoints": list }))
            }
            "_zidane/diff" => {
                let prompt = params["prompt"].as_u64().map(|n| n as usize);
                let files = conversation.changes(prompt).await.map_err(RpcError::params)?;
                Ok(json!({ "files": files }))
            }
            other => Err(RpcError(-32601, format!("no method `{other}`"))),
        }
    }
}

fn thinking_level(level: &str) -> Result<ThinkingLevel, RpcError> {
    Ok(match level {
        "off" => ThinkingLevel::Off,
        "minimal" => ThinkingLevel::Minimal,
        "low" => ThinkingLevel::Low,
        "medium" => ThinkingLevel::Medium,
        "high" => ThinkingLevel::High,
        other => {
            return Err(RpcError::params(format!(
                "unknown level `{other}` (off, minimal, low, medium, high)"
            )));
        }
    })
}

async fn skills(session: &Session, toggle: Option<&str>) -> Reply {
    if let Some(name) = toggle {
        return match session.conversation().toggle_skill(name).await {
            Ok(active) => Ok(json!({ "active": active })),
            Err(e) => Err(RpcError::params(e)),
        };
    }
    Ok(json!({ "skills": serde_json::to_value(session.conversation().skills().await).unwrap_or_default() }))
}

async fn tasks(session: &Session, kill: Option<&str>) -> Value {
    if let Some(id) = kill {
        return json!({ "stopping": session.conversation().kill_task(id).await });
    }
    let tasks: Vec<Value> = session
        .tasks
        .lock()
        .iter()
        .map(|(id, (command, running))| json!({ "id": id, "command": command, "running": running }))
        .collect();
    json!({ "tasks": tasks })
}

/// What a client needs to show a session it attaches to.
async fn about(session: &Session) -> Value {
    let conversation = &session.conversation();
    let turns = conversation.stored_turns().await;
    let last = |role: Role| {
        turns
            .iter()
            .rev()
            .filter(|t| t.role == role)
            .map(|t| t.text())
            .find(|t| !t.trim().is_empty())
    };
    let settings = &conversation.setup().settings;
    let folders = zidane_app::commands::folders(&settings.paths, settings.trusted);
    let commands: Vec<Value> = zidane_app::commands::list(&folders)
        .0
        .into_iter()
        .map(|c| json!({ "name": c.name, "description": c.description }))
        .collect();
    let mcp: Vec<Value> = settings
        .mcp
        .iter()
        .map(|(name, _, origin)| json!({ "name": name, "origin": origin }))
        .collect();
    json!({
        "messages": turns.len(),
        "lastAsked": last(Role::User),
        "lastAnswer": last(Role::Assistant),
        "interrupted": conversation.interrupted().await,
        "commands": commands,
        "mcp": mcp,
        "checkpoints": settings.checkpoints,
        "sandboxLine": conversation.setup().sandbox_line(),
    })
}

/// `_zidane/rewind`: the plan of an undo (no `index`) or a rewind, as the
/// person reads it; with `apply`, done (files changed since the agent left
/// them are left alone and named).
async fn rewind(session: &Session, params: &Value) -> Reply {
    let conversation = session.conversation();
    let setup = conversation.setup();
    let (store, checkpoints) = (&setup.store, &setup.checkpoints);
    let id = &session.id;
    let list = zidane_app::checkpoints::list(checkpoints, id)
        .await
        .map_err(|e| RpcError::internal(e.message()))?;
    if list.is_empty() {
        return Err(RpcError::params(format!("session {id} has no checkpoints")));
    }
    let index = params["index"].as_u64().map(|n| n as usize);
    let target = match index {
        None => zidane_app::checkpoints::rewind_target(&list, None),
        Some(n) => (n, false),
    };
    let restore = if index.is_none() {
        zidane_app::checkpoints::Restore::Files
    } else {
        zidane_app::checkpoints::Restore::Both
    };
    let plan = zidane_app::checkpoints::plan_rewind(store, checkpoints, id, &list, target, restore)
        .await
        .map_err(|e| RpcError::params(e.message()))?;
    let text = crate::commands::checkpoints::show_rewind(&plan);
    if params["apply"] != true || plan.is_empty() {
        return Ok(json!({ "plan": text, "empty": plan.is_empty() }));
    }
    // Not under a run: the rewind changes what it is working on.
    if !session.begin() {
        return Err(RpcError::params("a run is going on; interrupt it before a rewind"));
    }
    let done = zidane_app::checkpoints::apply_rewind(&setup.runtime, checkpoints, plan, true).await;
    // The conversation goes on from the stored turns the rewind left.
    let reopened = match &done {
        Ok(_) => session.reopen().await,
        Err(_) => Ok(()),
    };
    session.done();
    let done = done.map_err(|e| RpcError::internal(e.message()))?;
    reopened.map_err(RpcError::internal)?;
    Ok(json!({ "plan": text, "report": done.report, "branch": done.branch, "notes": done.notes }))
}
