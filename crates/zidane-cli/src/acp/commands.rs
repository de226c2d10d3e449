//! Slash commands over ACP: the built-in ones a prompt can start with,
//! answered as the agent's message, and the folder's own commands, which
//! expand into a prompt.

use serde_json::{Value, json};
use zidane::agent::{AgentCacheChange, CompactOptions};

use super::Session;

/// The built-in commands: name, description, input hint.
const BUILT_IN: &[(&str, &str, Option<&str>)] = &[
    ("compact", "Summarize the older turns now", Some("what to keep in view")),
    (
        "model",
        "Show or switch the model for the next turns",
        Some("model name"),
    ),
    ("context", "What fills the context window", None),
    ("cost", "Tokens and cost of this session", None),
    (
        "skills",
        "List the skills; a name activates or deactivates one",
        Some("skill name"),
    ),
    ("tasks", "Background tasks; `kill ID` stops one", Some("kill ID")),
];

/// `available_commands_update`: the built-in commands and the folder's.
pub(super) fn advertised(session: &Session) -> Value {
    let mut listed: Vec<Value> = BUILT_IN
        .iter()
        .map(|(name, about, hint)| {
            let mut command = json!({ "name": name, "description": about });
            if let Some(hint) = hint {
                command["input"] = json!({ "hint": hint });
            }
            command
        })
        .collect();
    let folders = crate::commands::folders(&session.context.loaded.paths, session.context.loaded.trusted);
    for c in crate::commands::list(&folders).0 {
        if BUILT_IN.iter().any(|(name, _, _)| *name == c.name) {
            continue;
        }
        let mut command = json!({ "name": c.name, "description": c.description.unwrap_or_default() });
        if let Some(hint) = c.argument_hint {
            command["input"] = json!({ "hint": hint });
        }
        listed.push(command);
    }
    json!({ "sessionUpdate": "available_commands_update", "availableCommands": listed })
}

/// A built-in command's answer; `None` when `text` is not one.
pub(super) async fn run(session: &Session, text: &str) -> Option<String> {
    let rest = text.strip_prefix('/')?;
    let (name, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let arg = arg.trim();
    let agent = &session.built.agent;
    Some(match name {
        "compact" => {
            let options = CompactOptions {
                keep_turns: None,
                focus: (!arg.is_empty()).then(|| arg.to_owned()),
            };
            match agent.compact(options).await {
                Ok(r) if r.compacted => format!("{} turns were replaced by a summary.", r.replaced),
                Ok(_) => "Nothing to compact yet.".to_owned(),
                Err(e) => format!("The compaction failed: {e}"),
            }
        }
        "model" => {
            let current = session
                .model
                .lock()
                .clone()
                .unwrap_or_else(|| agent.meta().default_model);
            if arg.is_empty() {
                format!("The model is {current}.")
            } else {
                let impact = agent.cache_impact(&AgentCacheChange {
                    model: Some(arg.to_owned()),
                    ..Default::default()
                });
                *session.model.lock() = Some(arg.to_owned());
                format!(
                    "The next turns use {arg} (was {current}); the next request reads about {} tokens again instead of from the cache.",
                    impact.tokens
                )
            }
        }
        "context" => {
            let mut options = session.context.instructions.context_options();
            options.effective_window = session.context.window.as_ref().map(|w| u64::from(w.tokens));
            match agent.get_context_breakdown(&options).await {
                Some(b) => {
                    let mut out = String::from("The context before the next request (estimated tokens):\n");
                    for c in &b.categories {
                        out.push_str(&format!("- {}: {}\n", c.name, c.tokens));
                    }
                    out.push_str(&format!("- in all: {}", b.used));
                    out
                }
                None => "The context is empty.".to_owned(),
            }
        }
        "cost" => {
            let turns = agent.turns();
            let usage = turns.iter().filter_map(|t| t.usage.as_ref());
            let (mut input, mut output, mut cost, mut priced) = (0, 0, 0.0, false);
            for u in usage {
                input += u.input + u.cache_read + u.cache_creation;
                output += u.output;
                if let Some(c) = u.cost {
                    cost += c;
                    priced = true;
                }
            }
            let cost = if priced {
                format!("${cost:.4}")
            } else {
                "an unknown cost".to_owned()
            };
            format!("This session: {input} tokens in, {output} out, {cost}.")
        }
        "skills" => {
            if arg.is_empty() {
                let active: Vec<String> = agent.active_skills().into_iter().map(|s| s.name).collect();
                let all = agent.skills().await;
                if all.is_empty() {
                    "No skills (put them in .zidane/skills/<name>/SKILL.md).".to_owned()
                } else {
                    all.iter()
                        .map(|s| {
                            let mark = if active.contains(&s.name) {
                                "active"
                            } else {
                                "available"
                            };
                            format!("- {} ({mark}): {}", s.name, s.description)
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                }
            } else if agent.active_skills().iter().any(|s| s.name == arg) {
                match agent.deactivate_skill(arg).await {
                    Ok(()) => format!("Skill `{arg}` deactivated."),
                    Err(e) => format!("Skill `{arg}`: {e}"),
                }
            } else {
                match agent.activate_skill(arg).await {
                    Ok(()) => format!("Skill `{arg}` activated."),
                    Err(e) => format!("Skill `{arg}`: {e}"),
                }
            }
        }
        "tasks" => {
            if let Some(id) = arg.strip_prefix("kill").map(str::trim).filter(|id| !id.is_empty()) {
                if agent.kill_background_task(id).await {
                    format!("Stopping task {id}.")
                } else {
                    format!("No running task {id}.")
                }
            } else {
                let tasks = session.tasks.lock();
                if tasks.is_empty() {
                    "No background tasks.".to_owned()
                } else {
                    tasks
                        .iter()
                        .map(|(id, (command, running))| {
                            format!("- {id} ({}): {command}", if *running { "running" } else { "ended" })
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                }
            }
        }
        _ => return None,
    })
}
