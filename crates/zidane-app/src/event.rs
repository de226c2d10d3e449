//! What a conversation tells its front end: one stream of UI-neutral
//! events (text, thinking, tool calls and their outcomes, questions to
//! answer, notices, status figures, checkpoints, the run's end). A front
//! end renders them; nothing here knows a terminal, an editor or a socket.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use zidane::agent::ToolCall;
use zidane::agent::events::{ActivationVia, ModelTarget, TaskStatus, ToolOutcome};
use zidane::agent::{AgentStats, RunSummary};
use zidane::checkpoints::Checkpoint;
use zidane::mcp::{ElicitationAnswer, ElicitationRequest};
use zidane::providers::ToolResultContent;

/// A sub-agent a tool call belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildRef {
    /// The sub-agent's id.
    pub id: String,
    /// How deep it runs (1: spawned by the agent itself).
    pub depth: u32,
}

/// The figures of a model turn that ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnFigures {
    /// Prompt tokens read without the cache.
    pub input: u64,
    /// Tokens written.
    pub output: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache.
    pub cache_creation: u64,
    /// The turn's cost in USD, when priced.
    pub cost: Option<f64>,
    /// The model that answered.
    pub model: Option<String>,
}

/// A tool call as dispatched: what ran (or why it did not).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolCallEvent {
    /// The call's id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub input: Value,
    /// Which path it took (ran, blocked, unknown tool, bad input).
    pub outcome: ToolOutcome,
    /// Why it was blocked or refused.
    pub reason: Option<String>,
    /// The sub-agent that made it (`None`: the agent itself).
    pub child: Option<ChildRef>,
}

impl ToolCallEvent {
    /// Why the call did not run, as a person reads it (`None`: it ran).
    pub fn refusal(&self) -> Option<String> {
        match self.outcome {
            ToolOutcome::GateBlock => Some(format!("blocked: {}", self.reason.as_deref().unwrap_or_default())),
            ToolOutcome::Unknown => Some("unknown tool".to_owned()),
            ToolOutcome::InvalidInput => Some(match &self.reason {
                Some(why) => format!("invalid input: {}", why.chars().take(160).collect::<String>()),
                None => "invalid input".to_owned(),
            }),
            ToolOutcome::Execute | ToolOutcome::GateSubstitute => None,
        }
    }
}

/// A tool call's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolResultEvent {
    /// The call's id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments (`Null` for a sub-agent's call).
    pub input: Value,
    /// What it returned.
    pub content: ToolResultContent,
    /// Whether it failed.
    pub is_error: bool,
    /// The sub-agent that made it.
    pub child: Option<ChildRef>,
    /// What the language server says of the file the call edited (also at
    /// the end of `content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<zidane::lsp::EditReport>,
}

impl ToolResultEvent {
    /// The result's text parts, joined.
    pub fn text(&self) -> String {
        match &self.content {
            ToolResultContent::Text(t) => t.clone(),
            ToolResultContent::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    zidane::providers::ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// A background task's end.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskEnd {
    /// The task.
    pub id: String,
    /// Its command.
    pub command: String,
    /// How it ended.
    pub status: TaskStatus,
    /// Its exit code.
    pub exit_code: i32,
    /// The signal that ended it.
    pub signal: Option<String>,
    /// How long it ran.
    pub duration_ms: u64,
}

impl TaskEnd {
    /// The line a person reads.
    pub fn line(&self) -> String {
        let how = match (self.status, &self.signal) {
            (TaskStatus::Killed, _) => "was stopped".to_owned(),
            (_, Some(signal)) => format!("was ended by {signal}"),
            (_, None) => format!("exited with code {}", self.exit_code),
        };
        format!(
            "⚙ task {} {how} after {:.1}s: {}",
            self.id,
            self.duration_ms as f64 / 1000.0,
            self.command
        )
    }
}

/// A model request being retried.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Retry {
    /// The attempt that failed.
    pub attempt: u32,
    /// The next one.
    pub next_attempt: u32,
    /// The most there will be.
    pub max_attempts: u32,
    /// The wait before it.
    pub delay_ms: u64,
    /// Why.
    pub error: String,
    /// Whether text already shown is discarded (the answer starts again).
    pub discarded_text: bool,
}

impl Retry {
    /// The line a person reads.
    pub fn line(&self) -> String {
        format!(
            "↻ {} — retrying in {:.1}s (attempt {} of {})",
            self.error,
            self.delay_ms as f64 / 1000.0,
            self.next_attempt,
            self.max_attempts
        )
    }
}

/// An MCP server's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpState {
    /// Connected (or registered to connect on first use) with its tools.
    Ready {
        /// How many tools it gives.
        tools: usize,
        /// Whether it connects on first use.
        lazy: bool,
    },
    /// It cannot be used.
    Unavailable(String),
}

impl McpState {
    /// The state as a person reads it.
    pub fn describe(&self) -> String {
        match self {
            McpState::Ready { tools, lazy: true } => format!("registered, {tools} tools"),
            McpState::Ready { tools, lazy: false } => format!("connected, {tools} tools"),
            McpState::Unavailable(why) => format!("unavailable: {why}"),
        }
    }
}

/// What the checkpoints say after a prompt: the checkpoint it took (when
/// it changed something) and notes for the person.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckpointNote {
    /// The session.
    pub session: String,
    /// The prompt's checkpoint, when one was taken during the run.
    pub checkpoint: Option<Checkpoint>,
    /// Notes (checkpoints dropped past the limit, files left out).
    pub notes: Vec<String>,
}

impl CheckpointNote {
    /// The line a person reads about the checkpoint, when it changed files.
    pub fn line(&self) -> Option<String> {
        let cp = self.checkpoint.as_ref().filter(|cp| !cp.changes.is_empty())?;
        let c = &cp.changes;
        Some(format!(
            "↺ checkpoint {}: {} created, {} modified, {} deleted (`zidane undo` takes them back)",
            cp.index,
            c.created.len(),
            c.modified.len(),
            c.deleted.len()
        ))
    }
}

/// How a submission ended.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The run ended (completed, stopped at a limit, suspended, aborted).
    Ran(zidane::agent::RunOutput),
    /// `--resume` with nothing to continue.
    NothingToContinue,
    /// A `UserPromptSubmit` hook blocked the prompt; nothing ran.
    Blocked(String),
    /// Another process is running in the session; nothing ran.
    InUse(String),
    /// The run failed; the message is one a person can act on.
    Failed(String),
}

/// The end of a run, as the stream tells it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunEnd {
    /// The session.
    pub session: String,
    /// How it ended.
    pub outcome: Outcome,
    /// The run summary, with what the program kept out of the window.
    pub summary: Option<RunSummary>,
    /// Whether the model's last turn was a prompt without an answer (it
    /// ended its turn writing nothing).
    pub unanswered: bool,
}

impl RunEnd {
    /// The run's statistics, when it ran.
    pub fn stats(&self) -> Option<&AgentStats> {
        match &self.outcome {
            Outcome::Ran(output) => Some(&output.stats),
            _ => None,
        }
    }
}

/// A call waiting for a yes.
#[derive(Debug)]
pub struct Ask {
    /// The call.
    pub call: ToolCall,
    /// Why a rule or a hook asks (`None`: the approval mode asks).
    pub reason: Option<String>,
    /// The permission rule an "always in this project / for me" answer
    /// saves (`shell(cargo test:*)`).
    pub rule: String,
    /// What an "always" answer covers, as a person reads it.
    pub scope: String,
    reply: oneshot::Sender<Answer>,
}

impl Ask {
    pub(crate) fn new(
        call: ToolCall,
        reason: Option<String>,
        rule: String,
        scope: String,
        reply: oneshot::Sender<Answer>,
    ) -> Ask {
        Ask {
            call,
            reason,
            rule,
            scope,
            reply,
        }
    }

    /// A question asked elsewhere (by a server, of a front end that shows
    /// it here), and where its answer arrives.
    pub fn relayed(
        call: ToolCall,
        reason: Option<String>,
        rule: String,
        scope: String,
    ) -> (Ask, oneshot::Receiver<Answer>) {
        let (reply, answer) = oneshot::channel();
        (Ask::new(call, reason, rule, scope, reply), answer)
    }

    /// Whether nobody waits for the answer any more (the question was
    /// answered elsewhere, or its run ended).
    pub fn is_withdrawn(&self) -> bool {
        self.reply.is_closed()
    }

    /// Answers the question (a question answered twice keeps the first).
    pub fn answer(self, answer: Answer) {
        let _ = self.reply.send(answer);
    }
}

/// A person's answer to a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Run it.
    Yes,
    /// Do not run it (with a reason the model reads).
    No(Option<String>),
    /// Run it, and calls like it for the rest of the conversation.
    Always,
    /// Run it, and save the rule to the project's (`true`) or the user's
    /// configuration.
    Save {
        /// The project's configuration, else the user's.
        project: bool,
    },
    /// Refuse it, and calls like it for the rest of the conversation.
    Never,
}

/// An MCP server's form (elicitation).
#[derive(Debug)]
pub struct Form {
    /// What the server asks.
    pub request: ElicitationRequest,
    reply: oneshot::Sender<ElicitationAnswer>,
}

impl Form {
    pub(crate) fn new(request: ElicitationRequest, reply: oneshot::Sender<ElicitationAnswer>) -> Form {
        Form { request, reply }
    }

    /// Each field: its name, its type, its default as shown.
    pub fn fields(&self) -> Vec<(String, String, Option<String>)> {
        self.request.schema["properties"]
            .as_object()
            .map(|props| {
                props
                    .iter()
                    .map(|(name, p)| {
                        let kind = p["type"].as_str().unwrap_or("string").to_owned();
                        let default = p
                            .get("default")
                            .map(|d| d.as_str().map_or_else(|| d.to_string(), str::to_owned));
                        (name.clone(), kind, default)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A form asked elsewhere, and where its answer arrives.
    pub fn relayed(request: ElicitationRequest) -> (Form, oneshot::Receiver<ElicitationAnswer>) {
        let (reply, answer) = oneshot::channel();
        (Form::new(request, reply), answer)
    }

    /// Whether nobody waits for the answer any more (the form was
    /// answered elsewhere, or its server went).
    pub fn is_withdrawn(&self) -> bool {
        self.reply.is_closed()
    }

    /// Answers the form.
    pub fn answer(self, answer: ElicitationAnswer) {
        let _ = self.reply.send(answer);
    }
}

/// A field's typed text as the form's value: numbers and booleans parsed,
/// the rest as text.
pub fn field_value(kind: &str, typed: &str) -> Value {
    let typed = typed.trim();
    match kind {
        "number" | "integer" | "boolean" => serde_json::from_str(typed).unwrap_or_else(|_| Value::from(typed)),
        _ => Value::from(typed),
    }
}

/// A question for the person.
#[derive(Debug)]
pub enum Question {
    /// A call to allow.
    Call(Ask),
    /// An MCP server's form.
    Form(Form),
}

/// One thing to show or answer.
///
/// It crosses a process boundary as JSON, `{"type": "text", "data":
/// "…"}` (a server telling a remote front end what a conversation does);
/// questions and
/// flushes are not sent that way (a question travels as the protocol's own
/// request, a flush stays in its process).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A model request starts, of about this many prompt tokens.
    RequestStart {
        /// Estimated at four bytes a token.
        prompt_tokens: u64,
    },
    /// The server has read `done` of the prompt's `total` tokens
    /// (llama.cpp's progress reports).
    PromptProgress {
        /// Tokens read.
        done: u64,
        /// Tokens in the prompt.
        total: u64,
    },
    /// The model writes something not shown yet (a tool call's arguments).
    Writing {
        /// About this many tokens so far.
        tokens: u64,
    },
    /// Answer text, as it streams.
    Text(String),
    /// Thinking, as it streams.
    Thinking(String),
    /// A model turn ended.
    TurnEnd(TurnFigures),
    /// A tool call was dispatched.
    ToolCall(ToolCallEvent),
    /// A tool call returned.
    ToolResult(ToolResultEvent),
    /// A running tool call was cut off.
    ToolCancelled {
        /// The call's id.
        id: String,
        /// Why.
        reason: String,
        /// The sub-agent that made it.
        child: Option<ChildRef>,
    },
    /// A sub-agent's text at the end of one of its turns.
    ChildText {
        /// The sub-agent.
        child: ChildRef,
        /// What it wrote.
        text: String,
    },
    /// A sub-agent waits for a free slot.
    SpawnQueued {
        /// The sub-agent.
        child_id: String,
        /// Sub-agents running now.
        running: u32,
        /// The most that run at once.
        limit: u32,
    },
    /// A sub-agent failed to start or run.
    SpawnError {
        /// The sub-agent.
        child_id: String,
        /// Why.
        error: String,
    },
    /// A background task started.
    TaskStart {
        /// The task.
        id: String,
        /// Its command.
        command: String,
        /// Its process.
        pid: u32,
        /// The file its output goes to.
        output: String,
    },
    /// A background task ended.
    TaskEnd(TaskEnd),
    /// A background task went quiet.
    TaskStall {
        /// The task.
        id: String,
        /// Its command.
        command: String,
        /// For how long.
        stalled_ms: u64,
    },
    /// A skill became active.
    Skill {
        /// Its name.
        name: String,
        /// What activated it.
        via: ActivationVia,
    },
    /// A model request is retried.
    Retry(Retry),
    /// The run moved to the next model of the fallback chain.
    Fallback {
        /// The one that failed.
        from: ModelTarget,
        /// The one used now.
        to: ModelTarget,
    },
    /// The provider's own note about a turn (a refusal's reason, a
    /// server-side fallback).
    ProviderNote {
        /// Its kind.
        kind: String,
        /// Its text.
        message: String,
    },
    /// The prompt cache broke: the next request reads these tokens again.
    CacheBreak {
        /// The turn.
        turn: u32,
        /// What changed (`model`, `tools`, …; empty: the prefix expired or
        /// was evicted).
        changed: Vec<String>,
        /// The tokens read again.
        rebilled_tokens: u64,
    },
    /// Older turns are being summarized.
    CompactStart,
    /// A compaction ended.
    CompactEnd {
        /// Turns replaced by the summary.
        replaced: u32,
        /// The context's size after it.
        effective_tokens: Option<u64>,
        /// Why it failed.
        error: Option<String>,
    },
    /// A steering or follow-up message reached the model.
    Injected {
        /// The id it was queued with.
        id: Option<String>,
    },
    /// An MCP server's state.
    Mcp {
        /// The server.
        name: String,
        /// Its state.
        state: McpState,
    },
    /// An HTTP MCP server wants an OAuth login.
    McpLoginNeeded {
        /// The server.
        name: String,
    },
    /// A line for the person from the program (a hook's message, a local
    /// server's state, a configuration note).
    Notice(String),
    /// A question to answer: a call to allow, an MCP server's form.
    #[serde(skip)]
    Question(Question),
    /// A question shown here was answered elsewhere (another client of a
    /// served session): it is no longer asked.
    Answered {
        /// The call's id (empty for a form).
        call_id: String,
        /// Who answered, when known.
        by: Option<String>,
    },
    /// What the checkpoints say after a prompt.
    Checkpoint(Box<CheckpointNote>),
    /// A run ended.
    RunEnd(Box<RunEnd>),
    /// Answered when every event sent before it was handled (what a reply
    /// waits for, so it follows the updates of its turn).
    #[serde(skip)]
    Flush(oneshot::Sender<()>),
}

/// Where a conversation's events go: the sending half of a front end's
/// stream. Sending never blocks; events sent after the front end went away
/// are dropped.
#[derive(Debug, Clone)]
pub struct Events(UnboundedSender<Event>);

impl Events {
    /// A sink and the stream it feeds.
    pub fn channel() -> (Events, UnboundedReceiver<Event>) {
        let (tx, rx) = unbounded_channel();
        (Events(tx), rx)
    }

    /// Sends `event`.
    pub fn send(&self, event: Event) {
        let _ = self.0.send(event);
    }

    /// Sends a line for the person.
    pub fn notice(&self, line: impl Into<String>) {
        self.send(Event::Notice(line.into()));
    }

    /// Waits until every event sent before this call was handled (at once
    /// when the stream is gone).
    pub async fn flush(&self) {
        let (done, reached) = oneshot::channel();
        if self.0.send(Event::Flush(done)).is_ok() {
            let _ = reached.await;
        }
    }

    /// Whether the stream's receiver is gone.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}
