//! Questions for the person: a call to allow, and an MCP server's form.
//! What needs asking depends on the approval mode and the rules; a
//! question goes to the front end as an [`Event::Question`] and waits for
//! its [`Answer`]: yes, no, always (the conversation remembers it), never
//! (refused for the rest of the conversation), or a rule saved to the
//! project's or the user's configuration (`[permissions] allow`). A
//! conversation whose front end answers no questions refuses, saying how
//! to allow such calls.

use std::collections::HashSet;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::oneshot;
use zidane::agent::{ApprovalDecision, ApprovalRequest, RememberedApproval, ToolCall, ToolCallApprover};
use zidane::mcp::{ElicitationAnswer, ElicitationRequest};
use zidane::providers::BoxFuture;

pub use crate::event::{Answer, Ask, Form, Question, field_value};
use crate::event::{Event, Events};
use crate::paths::Paths;

/// The `always` an answer would remember for `call`: a command's first
/// word (two, for `cargo test`-like pairs), or the tool.
pub fn always_for(call: &ToolCall) -> (RememberedApproval, String, String) {
    if call.name == "shell"
        && let Some(command) = call.input.get("command").and_then(Value::as_str)
    {
        let words: Vec<&str> = command.split_whitespace().collect();
        let prefix = match words.as_slice() {
            [first, second, ..] if !second.starts_with('-') && !second.contains(['/', '.', '=']) => {
                format!("{first} {second}")
            }
            [first, ..] => (*first).to_owned(),
            [] => String::new(),
        };
        if !prefix.is_empty() {
            let shown = format!("commands starting with `{prefix}`");
            let rule = format!("shell({prefix}:*)");
            return (RememberedApproval::CommandPrefix(prefix), shown, rule);
        }
    }
    let rule = call.name.clone();
    (
        RememberedApproval::Tool(call.name.clone()),
        format!("`{}` for this session", call.name),
        rule,
    )
}

/// The call, as the person reads it before deciding.
pub fn describe(call: &ToolCall) -> String {
    let text = |key: &str| call.input.get(key).and_then(Value::as_str).unwrap_or_default();
    let lines = |s: &str, mark: &str| -> String {
        let all: Vec<&str> = s.lines().collect();
        let mut out: String = all.iter().take(20).map(|l| format!("  {mark} {l}\n")).collect();
        if all.len() > 20 {
            out.push_str(&format!("  {mark} … {} more lines\n", all.len() - 20));
        }
        out
    };
    match call.name.as_str() {
        "shell" => {
            let background = if call.input["run_in_background"].as_bool() == Some(true) {
                " in the background"
            } else {
                ""
            };
            format!("run{background}:\n  $ {}\n", text("command"))
        }
        "write_file" => format!(
            "write {} ({} bytes):\n{}",
            text("path"),
            text("content").len(),
            lines(text("content"), "+")
        ),
        "edit" => format!(
            "edit {}:\n{}{}",
            text("path"),
            lines(text("old_string"), "-"),
            lines(text("new_string"), "+")
        ),
        "multi_edit" => {
            let mut out = format!("edit {}:\n", text("path"));
            for edit in call.input["edits"].as_array().into_iter().flatten() {
                out.push_str(&lines(edit["old_string"].as_str().unwrap_or_default(), "-"));
                out.push_str(&lines(edit["new_string"].as_str().unwrap_or_default(), "+"));
            }
            out
        }
        name => format!("call `{name}` with {}\n", call.input),
    }
}

/// The conversation's approver: a `Notification` hook hears of each
/// question; a question goes to the front end when it answers questions,
/// and is refused (saying how to allow the call) when it does not.
pub(crate) struct Approver {
    events: Events,
    answers: bool,
    paths: Paths,
    hooks: Arc<crate::command_hooks::CommandHooks>,
    /// Rules the person refused for the rest of the conversation.
    refused: Mutex<HashSet<String>>,
}

impl Approver {
    pub(crate) fn new(
        events: Events,
        answers: bool,
        paths: Paths,
        hooks: Arc<crate::command_hooks::CommandHooks>,
    ) -> Arc<Self> {
        Arc::new(Approver {
            events,
            answers,
            paths,
            hooks,
            refused: Mutex::default(),
        })
    }

    /// MCP servers' forms, asked of the front end (declined when it
    /// answers no questions).
    pub(crate) fn elicitation(self: &Arc<Self>) -> zidane::mcp::ElicitationHandler {
        let this = Arc::clone(self);
        Arc::new(move |request: ElicitationRequest| {
            let this = Arc::clone(&this);
            Box::pin(async move {
                if !this.answers {
                    return ElicitationAnswer::Decline;
                }
                let (reply, answer) = oneshot::channel();
                this.events
                    .send(Event::Question(Question::Form(Form::new(request, reply))));
                answer.await.unwrap_or(ElicitationAnswer::Decline)
            }) as BoxFuture<'static, ElicitationAnswer>
        })
    }

    /// The decision for `answer`.
    fn decide(&self, answer: Answer, always: RememberedApproval, rule: &str) -> ApprovalDecision {
        match answer {
            Answer::Yes => ApprovalDecision::Approve,
            Answer::Always => ApprovalDecision::ApproveAlways(always),
            Answer::Save { project } => {
                self.events.notice(save(&self.paths, rule, project));
                ApprovalDecision::ApproveAlways(always)
            }
            Answer::Never => {
                self.refused.lock().insert(rule.to_owned());
                ApprovalDecision::Decline {
                    reason: Some("the user declined this call".into()),
                }
            }
            Answer::No(reason) => ApprovalDecision::Decline {
                reason: Some(match reason {
                    Some(why) => format!("the user declined this call: {why}"),
                    None => "the user declined this call".to_owned(),
                }),
            },
        }
    }
}

impl ToolCallApprover for Approver {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            let message = format!("zidane needs your permission to use {}", request.call.name);
            let fields = serde_json::json!({ "message": message, "notification_type": "permission_prompt" });
            self.hooks.tell("Notification", "permission_prompt", fields).await;
            let (always, scope, rule) = always_for(request.call);
            if self.refused.lock().contains(&rule) {
                return ApprovalDecision::Decline {
                    reason: Some("the user rejects these calls for this session".into()),
                };
            }
            if !self.answers {
                // A permission rule that asks says so; otherwise the mode
                // asked, and `--approve yolo` (or an allow rule) lets it run.
                let how = match request.reason {
                    Some(rule) => format!("{rule}; an allow rule for it lets it run without asking"),
                    None => "the program runs with `--approve yolo` to allow it without asking, or an allow rule lets \
                             this call run"
                        .to_owned(),
                };
                return ApprovalDecision::Decline {
                    reason: Some(format!(
                        "this needs the user's approval and there is no terminal to ask on ({how})"
                    )),
                };
            }
            let (reply, answer) = oneshot::channel();
            let ask = Ask::new(
                request.call.clone(),
                request.reason.map(str::to_owned),
                rule.clone(),
                scope,
                reply,
            );
            self.events.send(Event::Question(Question::Call(ask)));
            let answer = tokio::select! {
                answer = answer => answer.unwrap_or(Answer::No(Some("the session has ended".into()))),
                () = request.signal.aborted() => Answer::No(Some("the run was interrupted".into())),
            };
            self.decide(answer, always, &rule)
        })
    }
}

/// Saves `rule` to the project's or the user's `[permissions] allow`; a
/// project the person writes a rule for is one they trust. Says what it did.
pub fn save(paths: &Paths, rule: &str, project: bool) -> String {
    let file = if project {
        Some(paths.project_config())
    } else {
        paths.user_config()
    };
    let Some(file) = file else {
        return format!("no user configuration folder to save `{rule}` in");
    };
    let saved = crate::config::trust::edit(&file, |doc| {
        let table = doc
            .entry("permissions")
            .or_insert_with(toml_edit::table)
            .as_table_like_mut()
            .ok_or_else(|| std::io::Error::other("`permissions` is not a table"))?;
        let allow = table
            .entry("allow")
            .or_insert(toml_edit::value(toml_edit::Array::new()))
            .as_array_mut()
            .ok_or_else(|| std::io::Error::other("`permissions.allow` is not a list"))?;
        if !allow.iter().any(|v| v.as_str() == Some(rule)) {
            allow.push(rule);
        }
        Ok(())
    });
    let trusted = match (project, paths.user_config()) {
        (true, Some(user)) => crate::config::trust::remember(&user, &paths.root, true),
        _ => Ok(()),
    };
    match saved.and(trusted) {
        Ok(()) => format!("saved `{rule}` to the allowed rules of {}", file.display()),
        Err(e) => format!("could not save `{rule}` to {}: {e}", file.display()),
    }
}
