//! Command hooks: programs run on the agent's events, with Claude Code's
//! contract so a team's scripts work unchanged. Each event maps onto one of
//! the agent's own hooks (or, for the prompt and the session's start and
//! end, onto the program's own steps); there is no second event system.
//!
//! | Event | Runs at | Its answer can |
//! |---|---|---|
//! | `PreToolUse` | the interceptor chain, first (before the permission rules) | block (exit 2: stderr to the model), `permissionDecision` allow / deny / ask, `updatedInput`, `additionalContext` |
//! | `PostToolUse` | `tool:transform` | `decision: block` / exit 2 (the reason follows the result), `additionalContext` |
//! | `UserPromptSubmit` | before the prompt is sent | block it (exit 2: stderr to the person), add context (stdout or `additionalContext`) |
//! | `Stop` | `run:beforeEnd` | `decision: block` / exit 2: the reason goes to the model and the run goes on (`stop_hook_active` is then true) |
//! | `SubagentStop` | `spawn:complete` | tell the person (a sub-agent cannot be continued) |
//! | `SessionStart` | before the first prompt (`source`: `startup` or `resume`) | add context (stdout or `additionalContext`) |
//! | `SessionEnd` | after the run | tell the person |
//! | `PreCompact` | `compact:start` (`trigger`: `auto` or `manual`) | tell the person |
//! | `Notification` | when a call needs the person's approval | tell the person |
//!
//! Every event takes `continue: false` (with `stopReason`): the run stops.
//! Exit 0 continues; exit 2 blocks; another exit code or a timeout is an
//! error shown to the person, and the run goes on. Hooks are the user's own
//! programs (and a trusted project's): they run in the working folder with
//! the user's permissions, outside the sandbox the agent's commands run in
//! (a hook may log under `~/.claude/`, as Claude Code's guide shows), with
//! the same secret variables removed from their environment, and
//! `CLAUDE_PROJECT_DIR` / `ZIDANE_PROJECT_DIR` set to the project's root.
//!
//! The input on standard input: `session_id`, `cwd`, `hook_event_name`,
//! `permission_mode` (`default`, `acceptEdits`, `bypassPermissions`), then
//! per event: `tool_name`, `tool_input`, `tool_use_id` (tool events),
//! `tool_response` (`PostToolUse`), `prompt` (`UserPromptSubmit`),
//! `stop_hook_active` (`Stop`, `SubagentStop`, which also has `agent_id`),
//! `source` (`SessionStart`), `reason` (`SessionEnd`), `trigger` and
//! `custom_instructions` (`PreCompact`), `message` and
//! `notification_type` (`Notification`).
//!
//! Where it differs from Claude Code:
//! - `tool_name` is Claude Code's name for the built-in tools that have one
//!   (`Bash`, `Read`, `Write`, `Edit`, `MultiEdit`, `Glob`, `Grep`,
//!   `WebFetch`, `TodoWrite`, `Task`) and zidane's otherwise (`list_files`,
//!   `mcp_server_tool`); a matcher is tried against both names. File tools'
//!   `tool_input` has `file_path` beside zidane's `path`.
//! - `tool_response` is `{ "content": <the result's text>, "is_error": … }`
//!   for every tool.
//! - There is no `transcript_path` (sessions live in SQLite, not JSONL).
//! - The hooks of one event run one after the other (a rewritten input goes
//!   to the next), not in parallel.
//! - Only `command` hooks; `prompt` hooks are refused at load.
//! - A `PreToolUse` allow does not override a `deny` permission rule.
//! - `SubagentStop`, `PreCompact`, `SessionEnd` and `Notification` cannot
//!   block or continue anything: their exit 2 is shown to the person.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt;
use zidane::agent::{Agent, ToolCall, ToolCallInterceptor, ToolCallVerdict};
use zidane::providers::{BoxFuture, ContentBlock, ToolResultContent};

/// The events, by Claude Code's names.
pub const EVENTS: [&str; 9] = [
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
];

/// Seconds a hook may run.
pub(crate) const DEFAULT_TIMEOUT: u64 = 60;

/// One entry of `[hooks]` / a `settings.json`'s `hooks`: a matcher and
/// either a command or Claude Code's list of `{type, command, timeout}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookEntry {
    #[serde(default)]
    pub(crate) matcher: Option<String>,
    #[serde(default)]
    pub(crate) command: Option<String>,
    #[serde(default)]
    pub(crate) timeout: Option<u64>,
    #[serde(default)]
    pub(crate) hooks: Vec<HookSpec>,
}

/// `{ "type": "command", "command": "…", "timeout": 30 }`.
#[derive(Debug, Clone, Deserialize)]
pub struct HookSpec {
    #[serde(rename = "type", default = "command_type")]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) command: Option<String>,
    #[serde(default)]
    pub(crate) timeout: Option<u64>,
}

fn command_type() -> String {
    "command".into()
}

/// One command on one event.
#[derive(Debug, Clone)]
pub struct HookCommand {
    pub(crate) event: &'static str,
    pub(crate) matcher: Option<regex::Regex>,
    pub(crate) command: String,
    pub(crate) timeout: Duration,
    pub(crate) origin: String,
}

/// Checks the entries of one file's `hooks` table; the error says which.
pub(crate) fn compile(
    table: &std::collections::BTreeMap<String, Vec<HookEntry>>,
    origin: &str,
) -> Result<Vec<HookCommand>, (String, String)> {
    let mut out = Vec::new();
    for (event, entries) in table {
        let Some(event) = EVENTS.iter().find(|e| **e == event) else {
            return Err((
                event.clone(),
                format!("`{event}` is not a hook event (one of {})", EVENTS.join(", ")),
            ));
        };
        for entry in entries {
            let matcher = match entry.matcher.as_deref().map(str::trim) {
                None | Some("") | Some("*") => None,
                Some(m) => Some(
                    regex::Regex::new(&format!("^(?:{m})$"))
                        .map_err(|e| (event.to_string(), format!("the matcher `{m}` is not a regex: {e}")))?,
                ),
            };
            let mut commands: Vec<(String, Option<u64>)> = Vec::new();
            if let Some(c) = &entry.command {
                commands.push((c.clone(), entry.timeout));
            }
            for spec in &entry.hooks {
                if spec.kind != "command" {
                    return Err((
                        event.to_string(),
                        format!("hooks of type `{}` are not supported (only `command`)", spec.kind),
                    ));
                }
                let command = spec
                    .command
                    .clone()
                    .ok_or_else(|| (event.to_string(), "a hook needs a `command`".to_owned()))?;
                commands.push((command, spec.timeout.or(entry.timeout)));
            }
            if commands.is_empty() {
                return Err((event.to_string(), "a hook needs a `command`".into()));
            }
            for (command, timeout) in commands {
                out.push(HookCommand {
                    event,
                    matcher: matcher.clone(),
                    command,
                    timeout: Duration::from_secs(timeout.unwrap_or(DEFAULT_TIMEOUT).max(1)),
                    origin: origin.to_owned(),
                });
            }
        }
    }
    Ok(out)
}

/// Claude Code's name for one of the built-in tools.
fn claude_name(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "shell" => "Bash",
        "read_file" => "Read",
        "write_file" => "Write",
        "edit" => "Edit",
        "multi_edit" => "MultiEdit",
        "glob" => "Glob",
        "grep" => "Grep",
        "web_fetch" => "WebFetch",
        "todowrite" => "TodoWrite",
        "spawn" => "Task",
        _ => return None,
    })
}

/// The tool's input as a hook reads it: `file_path` beside `path`.
fn hook_input(input: &Value) -> Value {
    let mut input = input.clone();
    if let Some(map) = input.as_object_mut()
        && let Some(path) = map.get("path").cloned()
    {
        map.entry("file_path").or_insert(path);
    }
    input
}

/// A hook's `updatedInput` back in the tool's shape.
fn tool_input(mut updated: Value, original: &Value) -> Value {
    if let Some(map) = updated.as_object_mut()
        && original.get("path").is_some()
        && let Some(path) = map.remove("file_path")
    {
        map.insert("path".into(), path);
    }
    updated
}

/// What a hook said.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Answer {
    /// Exit 2 (its stderr) or `decision: block` (its reason).
    pub(crate) blocked: Option<String>,
    /// `permissionDecision` (or the older `decision: approve`).
    pub(crate) decision: Option<(String, Option<String>)>,
    pub(crate) updated_input: Option<Value>,
    /// `additionalContext`, or the plain stdout of the events whose output
    /// is context.
    pub(crate) context: Vec<String>,
    /// `continue: false`: the run stops, with this reason.
    pub(crate) stop: Option<String>,
}

/// The hooks of a run and what they need.
pub(crate) struct CommandHooks {
    hooks: Vec<HookCommand>,
    cwd: PathBuf,
    root: PathBuf,
    session_id: String,
    mode: &'static str,
    pass_env: Vec<String>,
    launcher: Option<Launcher>,
    events: crate::event::Events,
    agent: OnceLock<Agent>,
    /// Calls a `PreToolUse` hook allowed: the rules do not ask for them.
    allowed: Mutex<HashSet<String>>,
    /// `PreToolUse` context, added to the call's result.
    pending_context: Mutex<HashMap<String, Vec<String>>>,
    stop_active: std::sync::atomic::AtomicBool,
}

type Launcher = Arc<dyn Fn(tokio::process::Command) -> std::io::Result<tokio::process::Child> + Send + Sync>;

impl CommandHooks {
    pub(crate) fn new(
        hooks: Vec<HookCommand>,
        paths: &crate::paths::Paths,
        session_id: &str,
        approve: crate::modes::Approve,
        pass_env: Vec<String>,
        launcher: Option<Launcher>,
        events: crate::event::Events,
    ) -> Arc<CommandHooks> {
        Arc::new(CommandHooks {
            hooks,
            cwd: paths.cwd.clone(),
            root: paths.root.clone(),
            session_id: session_id.to_owned(),
            mode: match approve {
                crate::modes::Approve::Ask => "default",
                crate::modes::Approve::AutoEdit => "acceptEdits",
                crate::modes::Approve::Yolo => "bypassPermissions",
            },
            pass_env,
            launcher,
            events,
            agent: OnceLock::new(),
            allowed: Mutex::default(),
            pending_context: Mutex::default(),
            stop_active: std::sync::atomic::AtomicBool::new(false),
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    fn has(&self, event: &str) -> bool {
        self.hooks.iter().any(|h| h.event == event)
    }

    /// Whether a `PreToolUse` hook allowed `call_id` (taken once).
    pub(crate) fn take_allowed(&self, call_id: &str) -> bool {
        self.allowed.lock().remove(call_id)
    }

    /// Runs the hooks of `event` whose matcher takes `target` (one after
    /// the other; a tool's rewritten input goes to the next), each with
    /// `fields` and the common ones on its standard input.
    pub(crate) async fn run(&self, event: &str, target: &str, fields: Value) -> Answer {
        let mut answer = Answer::default();
        let mut input = json!({
            "session_id": self.session_id,
            "cwd": self.cwd,
            "hook_event_name": event,
            "permission_mode": self.mode,
        });
        if let (Some(map), Value::Object(extra)) = (input.as_object_mut(), fields) {
            map.extend(extra);
        }
        let alias = claude_name(target).unwrap_or(target);
        for hook in self.hooks.iter().filter(|h| h.event == event) {
            // Events without a subject take every hook, matcher or not.
            let matched = matches!(event, "UserPromptSubmit" | "Stop" | "SubagentStop" | "SessionEnd")
                || hook
                    .matcher
                    .as_ref()
                    .is_none_or(|m| m.is_match(target) || m.is_match(alias));
            if !matched {
                continue;
            }
            if let Some(updated) = &answer.updated_input {
                input["tool_input"] = updated.clone();
            }
            self.run_one(hook, &input, &mut answer).await;
            if answer.blocked.is_some() || answer.stop.is_some() {
                break;
            }
        }
        answer
    }

    async fn run_one(&self, hook: &HookCommand, input: &Value, answer: &mut Answer) {
        let fail = |what: String| {
            self.events.notice(format!(
                "the {} hook `{}` ({}) {what}",
                hook.event, hook.command, hook.origin
            ));
        };
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(&hook.command)
            .current_dir(&self.cwd)
            .env("CLAUDE_PROJECT_DIR", &self.root)
            .env("ZIDANE_PROJECT_DIR", &self.root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // A variable goes when its name or its value looks like a
        // credential (unless passed).
        for (name, value) in std::env::vars_os() {
            let (name, value) = (name.to_string_lossy(), value.to_string_lossy());
            if zidane::tools::is_secret_var(&name, &value) && !self.pass_env.iter().any(|p| *p == name) {
                cmd.env_remove(name.as_ref());
            }
        }
        let child = match &self.launcher {
            Some(launch) => launch(cmd),
            None => cmd.spawn(),
        };
        let mut child = match child {
            Ok(child) => child,
            Err(e) => return fail(format!("could not start: {e}")),
        };
        if let Some(mut stdin) = child.stdin.take() {
            let text = input.to_string();
            // A hook that does not read its input is not an error.
            let _ = stdin.write_all(text.as_bytes()).await;
        }
        let out = match tokio::time::timeout(hook.timeout, child.wait_with_output()).await {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => return fail(format!("failed: {e}")),
            Err(_) => return fail(format!("timed out after {} s and was stopped", hook.timeout.as_secs())),
        };
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        match out.status.code() {
            Some(0) => self.read_output(hook.event, &stdout, answer),
            Some(2) => {
                answer.blocked = Some(if stderr.is_empty() {
                    format!("blocked by the {} hook `{}`", hook.event, hook.command)
                } else {
                    stderr
                });
            }
            code => {
                let code = code.map_or_else(|| "a signal".to_owned(), |c| format!("exit {c}"));
                let detail = if stderr.is_empty() {
                    String::new()
                } else {
                    format!(": {stderr}")
                };
                fail(format!("failed ({code}){detail}"));
            }
        }
    }

    /// Exit 0: a JSON object is read as Claude Code's output; other text
    /// is context for the events whose output is context.
    fn read_output(&self, event: &str, stdout: &str, answer: &mut Answer) {
        let Ok(Value::Object(out)) = serde_json::from_str::<Value>(stdout) else {
            if !stdout.is_empty() && matches!(event, "UserPromptSubmit" | "SessionStart") {
                answer.context.push(stdout.to_owned());
            }
            return;
        };
        let empty = Map::new();
        let specific = out
            .get("hookSpecificOutput")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let text = |map: &Map<String, Value>, key: &str| map.get(key).and_then(Value::as_str).map(str::to_owned);
        if out.get("continue") == Some(&Value::Bool(false)) {
            answer.stop = Some(text(&out, "stopReason").unwrap_or_else(|| format!("a {event} hook stopped the run")));
        }
        let reason = text(&out, "reason");
        match text(&out, "decision").as_deref() {
            Some("block") => {
                answer.blocked = Some(reason.clone().unwrap_or_else(|| format!("blocked by a {event} hook")))
            }
            Some("approve") => answer.decision = Some(("allow".into(), reason.clone())),
            _ => {}
        }
        if let Some(decision) = text(specific, "permissionDecision") {
            answer.decision = Some((decision, text(specific, "permissionDecisionReason")));
        }
        if let Some(updated) = specific.get("updatedInput").or_else(|| out.get("updatedInput")) {
            answer.updated_input = Some(updated.clone());
        }
        if let Some(context) = text(specific, "additionalContext").or_else(|| text(&out, "additionalContext")) {
            answer.context.push(context);
        }
    }

    /// Stops the run for a hook's `continue: false`.
    fn stop(&self, reason: &str) {
        self.events.notice(format!("a hook stopped the run: {reason}"));
        if let Some(agent) = self.agent.get() {
            agent.abort_with(reason);
        }
    }

    /// `PreToolUse` as the interceptor chain's first link.
    async fn pre_tool_use(&self, call: &ToolCall) -> ToolCallVerdict {
        let fields = json!({
            "tool_name": claude_name(&call.name).unwrap_or(&call.name),
            "tool_input": hook_input(&call.input),
            "tool_use_id": call.call_id,
        });
        let answer = self.run("PreToolUse", &call.name, fields).await;
        if let Some(reason) = &answer.stop {
            self.stop(reason);
            return ToolCallVerdict::Deny { reason: reason.clone() };
        }
        if let Some(reason) = answer.blocked {
            return ToolCallVerdict::Deny { reason };
        }
        if !answer.context.is_empty() {
            self.pending_context
                .lock()
                .entry(call.call_id.clone())
                .or_default()
                .extend(answer.context);
        }
        match answer.decision {
            Some((d, reason)) if d == "deny" => ToolCallVerdict::Deny {
                reason: reason.unwrap_or_else(|| "denied by a PreToolUse hook".into()),
            },
            Some((d, reason)) if d == "ask" => ToolCallVerdict::Ask { reason },
            decision => {
                if decision.is_some_and(|(d, _)| d == "allow") {
                    self.allowed.lock().insert(call.call_id.clone());
                }
                match answer.updated_input {
                    Some(updated) => ToolCallVerdict::Rewrite {
                        input: tool_input(updated, &call.input),
                    },
                    None => ToolCallVerdict::Allow,
                }
            }
        }
    }

    /// Registers the events that map onto the agent's hooks, and keeps the
    /// agent for `continue: false` and `Stop`.
    pub(crate) fn install(self: &Arc<Self>, agent: &Agent) -> Vec<zidane::hooks::HookHandle> {
        let _ = self.agent.set(agent.clone());
        let bus = agent.hooks();
        let mut handles = Vec::new();
        let this = Arc::clone(self);
        handles.push(bus.on::<zidane::agent::events::ToolTransform, _>(move |ev, _| {
            let this = Arc::clone(&this);
            Box::pin(async move { this.post_tool_use(ev).await })
        }));
        if self.has("Stop") {
            let this = Arc::clone(self);
            handles.push(bus.on::<zidane::agent::events::RunBeforeEnd, _>(move |ev, _| {
                let this = Arc::clone(&this);
                Box::pin(async move {
                    this.on_stop(ev).await;
                    Ok(())
                })
            }));
        }
        if self.has("SubagentStop") {
            let this = Arc::clone(self);
            handles.push(bus.on::<zidane::agent::events::SpawnComplete, _>(move |ev, _| {
                let this = Arc::clone(&this);
                let fields = json!({ "stop_hook_active": false, "agent_id": ev.stats().child_id });
                Box::pin(async move {
                    this.tell("SubagentStop", "", fields).await;
                    Ok(())
                })
            }));
        }
        if self.has("PreCompact") {
            let this = Arc::clone(self);
            handles.push(bus.on::<zidane::agent::events::CompactStart, _>(move |ev, _| {
                let this = Arc::clone(&this);
                let trigger = match ev.reason() {
                    zidane::agent::events::CompactReason::Auto => "auto",
                    zidane::agent::events::CompactReason::Manual => "manual",
                };
                Box::pin(async move {
                    this.tell(
                        "PreCompact",
                        trigger,
                        json!({ "trigger": trigger, "custom_instructions": "" }),
                    )
                    .await;
                    Ok(())
                })
            }));
        }
        handles
    }

    /// An event whose answer only the person reads.
    pub(crate) async fn tell(&self, event: &str, target: &str, fields: Value) {
        if !self.has(event) {
            return;
        }
        let answer = self.run(event, target, fields).await;
        if let Some(reason) = answer.blocked {
            self.events.notice(format!("the {event} hook says: {reason}"));
        }
        if let Some(reason) = answer.stop {
            self.stop(&reason);
        }
    }

    async fn post_tool_use(&self, ev: &mut zidane::agent::events::ToolTransform) -> zidane::hooks::HandlerResult {
        let mut notes = self.pending_context.lock().remove(ev.call_id()).unwrap_or_default();
        if self.has("PostToolUse") {
            let fields = json!({
                "tool_name": claude_name(ev.name()).unwrap_or(ev.name()),
                "tool_input": hook_input(ev.input()),
                "tool_use_id": ev.call_id(),
                "tool_response": { "content": ev.result.text(), "is_error": ev.is_error() },
            });
            let answer = self.run("PostToolUse", ev.name(), fields).await;
            if let Some(reason) = answer.blocked {
                notes.push(format!("A PostToolUse hook says: {reason}"));
            }
            notes.extend(answer.context);
            if let Some(reason) = answer.stop {
                self.stop(&reason);
            }
        }
        if !notes.is_empty() {
            let text = format!("\n\n<hook-context>\n{}\n</hook-context>", notes.join("\n"));
            match &mut ev.result {
                ToolResultContent::Text(s) => s.push_str(&text),
                ToolResultContent::Parts(parts) => parts.push(ContentBlock::Text {
                    text: text.trim_start().to_owned(),
                }),
            }
        }
        Ok(())
    }

    /// `Stop`: a block sends its reason to the model and the run goes on
    /// (the run's end decision, recorded as a step like any other).
    async fn on_stop(&self, ev: &mut zidane::agent::events::RunBeforeEnd) {
        let active = self.stop_active.load(std::sync::atomic::Ordering::SeqCst);
        let answer = self.run("Stop", "", json!({ "stop_hook_active": active })).await;
        if let Some(reason) = answer.stop {
            self.stop(&reason);
            return;
        }
        match answer.blocked {
            Some(reason) => {
                self.stop_active.store(true, std::sync::atomic::Ordering::SeqCst);
                ev.follow_up(reason);
            }
            None => self.stop_active.store(false, std::sync::atomic::Ordering::SeqCst),
        }
    }

    /// `UserPromptSubmit`: the prompt with the hooks' context after it, or
    /// the reason it was blocked.
    pub(crate) async fn submit(&self, prompt: &str) -> Result<String, String> {
        if !self.has("UserPromptSubmit") {
            return Ok(prompt.to_owned());
        }
        let answer = self.run("UserPromptSubmit", "", json!({ "prompt": prompt })).await;
        if let Some(reason) = answer.blocked.or(answer.stop) {
            return Err(reason);
        }
        Ok(with_context(prompt, &answer.context))
    }

    /// `SessionStart`: context for the first prompt.
    pub(crate) async fn session_start(&self, source: &str) -> Vec<String> {
        if !self.has("SessionStart") {
            return Vec::new();
        }
        let answer = self.run("SessionStart", source, json!({ "source": source })).await;
        answer.context
    }
}

/// `prompt` followed by hook context.
pub(crate) fn with_context(prompt: &str, context: &[String]) -> String {
    if context.is_empty() {
        return prompt.to_owned();
    }
    format!("{prompt}\n\n<hook-context>\n{}\n</hook-context>", context.join("\n"))
}

/// `PreToolUse` in the interceptor chain.
pub(crate) struct PreToolUse(pub(crate) Arc<CommandHooks>);

impl ToolCallInterceptor for PreToolUse {
    fn intercept<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, ToolCallVerdict> {
        Box::pin(async move {
            if !self.0.has("PreToolUse") {
                return ToolCallVerdict::Allow;
            }
            self.0.pre_tool_use(call).await
        })
    }
}
