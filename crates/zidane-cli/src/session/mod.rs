//! The interactive session: `zidane` at a terminal. One agent for the
//! whole conversation; the conversation goes into the terminal's own
//! scrollback and only the input and the status line under it are redrawn.
//! The input stays live while the model works (Enter steers, `/later`
//! queues a follow-up, Esc interrupts), approvals are answered with one key,
//! and slash commands reach what the agent can do.

mod draw;
mod editor;
pub(crate) mod feed;
mod keys;
mod markdown;
mod screen;
mod slash;
mod view;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::EventStream;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use zidane::agent::{
    AgentError, AgentRunOptions, ApprovalDecision, ApprovalRequest, QueuedMessageOptions, RememberedApproval,
    RunOutput, RunSummaryCollector, RunSummaryCollectorOptions, ToolCall, create_run_summary_collector,
};
use zidane::durable::DurableResumeOptions;
use zidane::hooks::HookScope;
use zidane::providers::{ContentBlock, ThinkingLevel};

use self::editor::{Editor, History};
use self::feed::Feed;
use self::markdown::Markdown;
use self::screen::{Hue, Paint, Screen};
pub(crate) use self::view::brief;
use crate::setup::{Args, Failure};
use crate::{Built, Context};

/// Where [`notice`] lines go while a session draws the terminal.
static NOTICES: parking_lot::Mutex<Option<UnboundedSender<Feed>>> = parking_lot::Mutex::new(None);

/// A line for the person from anywhere in the program: into the session's
/// scrollback while one runs (a plain print would break its drawing), on
/// standard error otherwise.
pub(crate) fn notice(line: String) {
    match NOTICES.lock().as_ref() {
        Some(tx) => {
            let _ = tx.send(Feed::Note(line));
        }
        None => eprintln!("zidane: {line}"),
    }
}

/// Whether this run is an interactive session: a terminal on both ends,
/// and neither `-p`, `--json` nor `--plan`.
pub(crate) fn wanted(args: &Args) -> bool {
    !args.print && !args.json && !args.plan && std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// The most an `@file` mention attaches.
const ATTACH_CAP: usize = 64 * 1024;

/// The live line's account of a run while nothing else shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Live {
    Working,
    /// `done` of `total` prompt tokens read (`None`: the server does not
    /// report it, and `total` is an estimate).
    Reading {
        done: Option<u64>,
        total: u64,
    },
    /// About this many tokens written that do not show yet.
    Writing(u64),
}

/// A question for the person: a call waiting for a yes.
pub(crate) struct Ask {
    call: ToolCall,
    reason: Option<String>,
    /// The rule `[p]roject` / `[u]ser` would save.
    rule: String,
    reply: oneshot::Sender<Answer>,
}

/// The person's answer.
pub(crate) enum Answer {
    Yes,
    No(Option<String>),
    Always,
}

impl Answer {
    pub(crate) fn decision(self, always: RememberedApproval) -> ApprovalDecision {
        match self {
            Answer::Yes => ApprovalDecision::Approve,
            Answer::Always => ApprovalDecision::ApproveAlways(always),
            Answer::No(reason) => ApprovalDecision::Decline {
                reason: Some(match reason {
                    Some(why) => format!("the user declined this call: {why}"),
                    None => "the user declined this call".to_owned(),
                }),
            },
        }
    }
}

/// Where approvals go while the interactive session runs (nowhere before:
/// the approver asks on the terminal line by line then).
#[derive(Clone, Default)]
pub(crate) struct AskLine(Arc<parking_lot::Mutex<Option<UnboundedSender<Question>>>>);

/// What the session is asked: a call to allow, or an MCP server's form.
pub(crate) enum Question {
    Call(Ask),
    Form(Form),
}

/// An MCP server's form (elicitation), filled field by field.
pub(crate) struct Form {
    request: zidane::mcp::ElicitationRequest,
    /// Each field: its name, its type, its default as shown.
    fields: Vec<(String, String, Option<String>)>,
    at: usize,
    answers: serde_json::Map<String, Value>,
    reply: oneshot::Sender<zidane::mcp::ElicitationAnswer>,
}

impl Form {
    fn new(request: zidane::mcp::ElicitationRequest, reply: oneshot::Sender<zidane::mcp::ElicitationAnswer>) -> Form {
        let fields = request.schema["properties"]
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
            .unwrap_or_default();
        Form {
            request,
            fields,
            at: 0,
            answers: serde_json::Map::new(),
            reply,
        }
    }

    /// Takes the typed value of the current field; `true` once every field
    /// has one (or was left to its default).
    fn take(&mut self, typed: &str) -> bool {
        if let Some((name, kind, _)) = self.fields.get(self.at)
            && !typed.trim().is_empty()
        {
            let typed = typed.trim();
            let value = match kind.as_str() {
                "number" | "integer" | "boolean" => serde_json::from_str(typed).unwrap_or_else(|_| Value::from(typed)),
                _ => Value::from(typed),
            };
            self.answers.insert(name.clone(), value);
        }
        self.at += 1;
        self.at >= self.fields.len()
    }
}

impl Ask {
    /// The call, the rule an "always" would save, and where the answer goes.
    pub(crate) fn into_parts(self) -> (ToolCall, String, oneshot::Sender<Answer>) {
        (self.call, self.rule, self.reply)
    }
}

impl Form {
    /// The server's request, and where the answer goes.
    pub(crate) fn into_parts(
        self,
    ) -> (
        zidane::mcp::ElicitationRequest,
        oneshot::Sender<zidane::mcp::ElicitationAnswer>,
    ) {
        (self.request, self.reply)
    }
}

impl AskLine {
    /// Whether a session (the terminal's, or an editor's) takes questions.
    pub(crate) fn connected(&self) -> bool {
        self.0.lock().is_some()
    }

    pub(crate) fn connect(&self, tx: UnboundedSender<Question>) {
        *self.0.lock() = Some(tx);
    }

    /// Asks the session; `None` when no session listens.
    pub(crate) async fn ask(&self, request: &ApprovalRequest<'_>, rule: &str) -> Option<Answer> {
        let tx = self.0.lock().clone()?;
        let (reply, answer) = oneshot::channel();
        let ask = Ask {
            call: request.call.clone(),
            reason: request.reason.map(str::to_owned),
            rule: rule.to_owned(),
            reply,
        };
        if tx.send(Question::Call(ask)).is_err() {
            return Some(Answer::No(Some("the session has ended".into())));
        }
        tokio::select! {
            answer = answer => Some(answer.unwrap_or(Answer::No(None))),
            () = request.signal.aborted() => Some(Answer::No(Some("the run was interrupted".into()))),
        }
    }
}

impl AskLine {
    /// MCP servers' forms, asked in the session.
    pub(crate) fn elicitation(&self) -> zidane::mcp::ElicitationHandler {
        let line = self.clone();
        Arc::new(move |request: zidane::mcp::ElicitationRequest| {
            let line = line.clone();
            Box::pin(async move {
                let Some(tx) = line.0.lock().clone() else {
                    return zidane::mcp::ElicitationAnswer::Decline;
                };
                let (reply, answer) = oneshot::channel();
                if tx.send(Question::Form(Form::new(request, reply))).is_err() {
                    return zidane::mcp::ElicitationAnswer::Decline;
                }
                answer.await.unwrap_or(zidane::mcp::ElicitationAnswer::Decline)
            }) as zidane::providers::BoxFuture<'static, zidane::mcp::ElicitationAnswer>
        })
    }
}

/// A message typed while the model worked, until the model takes it.
struct Queued {
    id: String,
    text: String,
    follow_up: bool,
}

/// A background task the session knows of.
struct Task {
    command: String,
    output: String,
    running: bool,
}

/// A list to choose from in the bottom area.
enum Picker {
    /// The sessions, each with its cost when its turns were priced.
    Sessions(Vec<(zidane::agent::SessionInfo, Option<f64>)>, usize),
    Tasks(Vec<String>, usize),
}

#[derive(Default)]
struct Totals {
    input: u64,
    output: u64,
    cost: f64,
    priced: bool,
}

type RunResult = Result<Option<RunOutput>, AgentError>;

/// The session and its interface.
struct Session {
    context: Context,
    built: Built,
    id: String,
    feed_tx: UnboundedSender<Feed>,
    _feeding: HookScope,
    collector: RunSummaryCollector,
    _collecting: HookScope,
    /// `cache:break` and `cache:drift`, told by the cache logger.
    _watching: HookScope,
    screen: Screen,
    paint: Paint,
    editor: Editor,
    md: Markdown,
    thinking: String,
    show_thinking: bool,
    waiting: bool,
    /// What the live line says while nothing shows: the model reading the
    /// prompt or writing what is not shown yet.
    live: Live,
    run: Option<tokio::task::JoinHandle<RunResult>>,
    run_started: Instant,
    hook_context: Option<Vec<String>>,
    model: Option<String>,
    fallback: Option<String>,
    thinking_level: ThinkingLevel,
    queued: Vec<Queued>,
    /// Typed while a run ended: sent as the next prompt.
    later: Vec<String>,
    next_id: u64,
    tasks: BTreeMap<String, Task>,
    mcp: BTreeMap<String, String>,
    spawns: HashMap<String, String>,
    totals: Totals,
    context_used: Option<u64>,
    asks: VecDeque<Ask>,
    forms: VecDeque<Form>,
    /// The value being typed for the form's current field.
    field: String,
    /// The reason being typed for a `no`.
    reason: Option<String>,
    picker: Option<Picker>,
    quit_armed: Option<Instant>,
    interrupting: bool,
    quit: bool,
}

/// Runs the interactive session until the person quits.
pub(crate) async fn run(
    context: Context,
    built: Built,
    id: String,
    prompt: String,
    images: Vec<ContentBlock>,
) -> Result<(), Failure> {
    let (feed_tx, mut feed_rx) = unbounded_channel();
    let (ask_tx, mut ask_rx) = unbounded_channel();
    context.asks.connect(ask_tx);
    *NOTICES.lock() = Some(feed_tx.clone());
    let paint = Paint::from_env();
    let history = History::open(context.store.path().parent(), &context.loaded.paths.root);
    let screen = Screen::enter().map_err(|e| Failure::run(format!("cannot take the terminal: {e}")))?;
    let cols = usize::from(screen.cols);
    let feeding = feed::install(built.agent.hooks(), &feed_tx);
    let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
    let collecting = collector.install(built.agent.hooks());
    let watching = watch_cache(built.agent.hooks());
    let thinking_level = context.args.thinking.into();
    let model = context.args.model.clone();
    let mut session = Session {
        context,
        built,
        id,
        feed_tx,
        _feeding: feeding,
        collector,
        _collecting: collecting,
        _watching: watching,
        screen,
        paint,
        editor: Editor::new(history),
        md: Markdown::new(paint, cols),
        thinking: String::new(),
        show_thinking: false,
        waiting: false,
        live: Live::Working,
        run: None,
        run_started: Instant::now(),
        hook_context: None,
        model,
        fallback: None,
        thinking_level,
        queued: Vec::new(),
        later: Vec::new(),
        next_id: 0,
        tasks: BTreeMap::new(),
        mcp: BTreeMap::new(),
        spawns: HashMap::new(),
        totals: Totals::default(),
        context_used: None,
        asks: VecDeque::new(),
        forms: VecDeque::new(),
        field: String::new(),
        reason: None,
        picker: None,
        quit_armed: None,
        interrupting: false,
        quit: false,
    };
    session.welcome().await;
    if !prompt.trim().is_empty() {
        session.submit_prompt(prompt, images).await;
    } else if session.context.args.resume {
        session.continue_interrupted();
    }
    session.draw(Vec::new());
    session.event_loop(&mut feed_rx, &mut ask_rx).await;
    session.end().await
}

impl Session {
    async fn event_loop(&mut self, feed_rx: &mut UnboundedReceiver<Feed>, ask_rx: &mut UnboundedReceiver<Question>) {
        let mut events = EventStream::new();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut shown_status = String::new();
        // SIGTERM and SIGHUP end the session as a quit does (the run
        // suspended, the terminal given back).
        let mut signals = crate::StopSignals::listen();
        while !self.quit {
            tokio::select! {
                stop = signals.next() => if stop {
                    self.quit = true;
                },
                event = events.next() => match event {
                    Some(Ok(event)) => self.on_event(event).await,
                    // The terminal is gone: end as a quit would.
                    Some(Err(_)) | None => self.quit = true,
                },
                Some(first) = feed_rx.recv() => {
                    // What arrived together is drawn once.
                    let mut commit = Vec::new();
                    self.on_feed(first, &mut commit);
                    for _ in 0..512 {
                        match feed_rx.try_recv() {
                            Ok(next) => self.on_feed(next, &mut commit),
                            Err(_) => break,
                        }
                    }
                    self.draw(commit);
                }
                Some(question) = ask_rx.recv() => {
                    match question {
                        Question::Call(ask) => self.asks.push_back(ask),
                        Question::Form(form) => self.forms.push_back(form),
                    }
                    self.draw(Vec::new());
                }
                result = wait(&mut self.run), if self.run.is_some() => {
                    self.run = None;
                    self.on_run_end(result).await;
                }
                _ = tick.tick() => {
                    // Once a second, and only when the status line changed
                    // (the cache's countdown, the elapsed time).
                    let status = self.status();
                    if status != shown_status {
                        shown_status = status;
                        self.draw(Vec::new());
                    }
                }
            }
        }
    }

    /// The first lines: where the session is, how to get help.
    async fn welcome(&mut self) {
        let turns = self.stored_turns().await.len();
        let resumed = if turns > 0 {
            format!(" · resumed with {turns} messages")
        } else {
            String::new()
        };
        let line = format!(
            "zidane · {} · session {}{resumed} · /help for commands, Esc interrupts, Ctrl-D quits",
            self.context.cwd.display(),
            self.id
        );
        let line = self.paint.dim(&line);
        self.refresh_context().await;
        self.draw(vec![line]);
    }

    /// The session's turns as stored (the agent loads them with its first
    /// run).
    async fn stored_turns(&self) -> Vec<zidane::providers::SessionTurn> {
        use zidane::agent::SessionStore;
        match self.context.store.load(&self.id).await {
            Ok(Some(session)) => session.turns,
            _ => self.built.agent.turns(),
        }
    }

    /// `--resume` with no prompt: the interrupted run, continued.
    fn continue_interrupted(&mut self) {
        let agent = self.built.agent.clone();
        self.waiting = true;
        self.live = Live::Working;
        self.run_started = Instant::now();
        self.run = Some(tokio::spawn(async move {
            agent.resume(DurableResumeOptions::default()).await
        }));
    }

    /// The context's size before the next request, estimated.
    async fn refresh_context(&mut self) {
        let mut options = self.context.instructions.context_options();
        options.effective_window = self.context.window.as_ref().map(|w| u64::from(w.tokens));
        if let Some(breakdown) = self.built.agent.get_context_breakdown(&options).await {
            self.context_used = Some(breakdown.used);
        }
    }

    fn commit_note(&self, commit: &mut Vec<String>, line: &str) {
        commit.push(self.paint.dim(line));
    }

    /// Ends the streamed text and thinking before something else is shown.
    fn settle(&mut self, commit: &mut Vec<String>) {
        self.flush_thinking(commit);
        commit.extend(self.md.finish());
    }

    fn flush_thinking(&mut self, commit: &mut Vec<String>) {
        if self.thinking.is_empty() {
            return;
        }
        let thinking = std::mem::take(&mut self.thinking);
        if self.show_thinking {
            for line in thinking.lines() {
                commit.push(self.paint.dim(&format!("✻ {line}")));
            }
        } else {
            let words = thinking.split_whitespace().count();
            let first: String = thinking.split_whitespace().take(12).collect::<Vec<_>>().join(" ");
            commit.push(self.paint.dim(&format!("✻ thought ({words} words): {first}…")));
        }
    }

    fn on_feed(&mut self, feed: Feed, commit: &mut Vec<String>) {
        let p = self.paint;
        match feed {
            Feed::Waiting(estimate) => {
                self.waiting = true;
                self.live = Live::Reading {
                    done: None,
                    total: estimate,
                };
            }
            Feed::Reading { done, total } => {
                self.live = Live::Reading {
                    done: Some(done),
                    total,
                };
            }
            // Progress reports come from the stream's first event on; the
            // model writes once there is something written.
            Feed::Writing(tokens) if tokens > 0 => {
                self.waiting = false;
                self.live = Live::Writing(tokens);
            }
            Feed::Writing(_) => {}
            Feed::Text(delta) => {
                self.waiting = false;
                self.live = Live::Working;
                self.flush_thinking(commit);
                commit.extend(self.md.push(&delta));
            }
            Feed::Thinking(delta) => {
                self.waiting = false;
                self.live = Live::Working;
                if self.show_thinking {
                    // Shown as it comes, line by line.
                    self.thinking.push_str(&delta);
                    while let Some(end) = self.thinking.find('\n') {
                        let line: String = self.thinking.drain(..=end).collect();
                        commit.push(p.dim(&format!("✻ {}", line.trim_end())));
                    }
                } else {
                    self.thinking.push_str(&delta);
                }
            }
            Feed::TurnEnd {
                input,
                output,
                cache_read,
                cost,
                model,
            } => {
                self.settle(commit);
                self.totals.input += input + cache_read;
                self.totals.output += output;
                if let Some(cost) = cost {
                    self.totals.cost += cost;
                    self.totals.priced = true;
                }
                self.context_used = Some(input + cache_read + output);
                if let (Some(model), Some(_)) = (model, &self.fallback) {
                    self.fallback = Some(model);
                }
            }
            Feed::ToolStart {
                id,
                name,
                input,
                refusal,
                depth,
            } => {
                self.settle(commit);
                if name == "spawn" {
                    self.spawns.insert(id.clone(), view::brief(&name, &input));
                }
                commit.push(view::call(&p, depth, &name, &input));
                if let Some(refusal) = refusal {
                    let lead = format!("{}  ⎿ ", "  ".repeat(depth as usize));
                    commit.push(format!("{lead}{}", p.hue(Hue::Red, &refusal)));
                }
            }
            Feed::ToolEnd {
                id: _,
                name,
                input,
                text,
                is_error,
                depth,
            } => {
                self.settle(commit);
                commit.extend(view::outcome(&p, depth, &name, &input, &text, is_error));
            }
            Feed::ToolCancelled { reason, .. } => {
                self.settle(commit);
                commit.push(format!("  ⎿ {}", p.hue(Hue::Yellow, &format!("cut off: {reason}"))));
            }
            Feed::ChildText { depth, text } => {
                let prefix = format!("{}│ ", "  ".repeat(depth as usize));
                let lines: Vec<&str> = text.lines().collect();
                for line in lines.iter().take(8) {
                    commit.push(p.dim(&format!("{prefix}{line}")));
                }
                if lines.len() > 8 {
                    commit.push(p.dim(&format!("{prefix}… {} more lines", lines.len() - 8)));
                }
            }
            Feed::TaskStart { id, command, output } => {
                self.settle(commit);
                self.commit_note(commit, &format!("⚙ task {id} started: {command}"));
                self.tasks.insert(
                    id,
                    Task {
                        command,
                        output,
                        running: true,
                    },
                );
            }
            Feed::TaskEnd { id, line } => {
                self.settle(commit);
                if let Some(task) = self.tasks.get_mut(&id) {
                    task.running = false;
                }
                self.commit_note(commit, &line);
            }
            Feed::Injected(id) => {
                if let Some(i) = self.queued.iter().position(|q| Some(&q.id) == id.as_ref()) {
                    let q = self.queued.remove(i);
                    self.settle(commit);
                    let kind = if q.follow_up { "follow-up" } else { "steer" };
                    commit.push(format!("{} {}", p.hue(Hue::Cyan, &format!("› ({kind})")), q.text));
                }
            }
            Feed::Note(line) => {
                self.settle(commit);
                self.commit_note(commit, &line);
            }
            Feed::Fallback(model) => self.fallback = Some(model),
            Feed::Barrier(done) => {
                let _ = done.send(());
            }
            Feed::Mcp { name, state } => {
                self.mcp.insert(name, state);
            }
        }
    }

    /// What Enter sent.
    async fn submit(&mut self, text: String) {
        if text.trim().is_empty() {
            return;
        }
        let trimmed = text.trim_start();
        if let Some(rest) = trimmed.strip_prefix("/later") {
            self.follow_up(rest.trim().to_owned());
            return;
        }
        if trimmed.starts_with('/') && !trimmed.starts_with("//") {
            self.command(trimmed.to_owned()).await;
            return;
        }
        if self.run.is_some() {
            self.steer(text);
            return;
        }
        self.submit_prompt(text, Vec::new()).await;
    }

    /// Enter while the model works: the text reaches it at the next turn
    /// boundary.
    fn steer(&mut self, text: String) {
        self.queue(text, false);
    }

    /// `/later TEXT`: for when the model would otherwise finish.
    fn follow_up(&mut self, text: String) {
        if text.is_empty() {
            return;
        }
        if self.run.is_none() {
            self.later.push(text);
            self.start_later();
            return;
        }
        self.queue(text, true);
    }

    /// Queues `text` on the running run (shown as queued until the model
    /// takes it); kept for the next prompt when the run takes no more.
    fn queue(&mut self, text: String, follow_up: bool) {
        self.next_id += 1;
        let id = format!("typed-{}", self.next_id);
        let options = QueuedMessageOptions {
            id: Some(id.clone()),
            ..Default::default()
        };
        let queued = if follow_up {
            self.built.agent.follow_up(text.clone(), options)
        } else {
            self.built.agent.steer(text.clone(), options)
        };
        if queued {
            self.queued.push(Queued { id, text, follow_up });
        } else {
            self.later.push(text);
        }
    }

    /// Sends what waits for the next run, if anything does.
    fn start_later(&mut self) {
        if self.later.is_empty() || self.run.is_some() {
            return;
        }
        let text = std::mem::take(&mut self.later).join("\n\n");
        let p = self.paint;
        let line = format!("{} {}", p.hue(Hue::Cyan, "›"), first_lines(&text));
        self.draw(vec![String::new(), line]);
        self.start(text, Vec::new());
    }

    /// A prompt typed (or given on the command line): echoed, hooked, run.
    async fn submit_prompt(&mut self, text: String, mut parts: Vec<ContentBlock>) {
        let p = self.paint;
        let mut commit = vec![String::new()];
        for (i, line) in text.lines().take(20).enumerate() {
            let mark = if i == 0 {
                p.hue(Hue::Cyan, "›")
            } else {
                " ".to_owned()
            };
            commit.push(format!("{mark} {}", p.bold(line)));
        }
        if text.lines().count() > 20 {
            commit.push(p.dim(&format!("  … {} more lines", text.lines().count() - 20)));
        }
        let (prompt, mut attached, notes) = self.attach(&text);
        for note in notes {
            commit.push(p.dim(&note));
        }
        self.draw(commit);
        parts.append(&mut attached);
        let first = self.hook_context.is_none();
        if first {
            let source = if self.context.args.resume { "resume" } else { "startup" };
            self.hook_context = Some(self.built.hooks.session_start(source).await);
        }
        let prompt = match self.built.hooks.submit(&prompt).await {
            Ok(prompt) if first => {
                crate::command_hooks::with_context(&prompt, self.hook_context.as_deref().unwrap_or(&[]))
            }
            Ok(prompt) => prompt,
            Err(reason) => {
                let line = p.hue(
                    Hue::Red,
                    &format!("a UserPromptSubmit hook blocked the prompt: {reason}"),
                );
                self.draw(vec![line]);
                return;
            }
        };
        self.start(prompt, parts);
    }

    /// `@path` mentions: images as parts, text files as their content
    /// (capped), folders as their listing.
    fn attach(&self, text: &str) -> (String, Vec<ContentBlock>, Vec<String>) {
        // At most 64 KB, and a quarter of a small window (code runs about
        // two bytes a token): a file the window cannot hold would make every
        // next request fail.
        let cap = self
            .context
            .window
            .as_ref()
            .map_or(ATTACH_CAP, |w| (w.tokens as usize / 4 * 2).clamp(1024, ATTACH_CAP));
        let mut prompt = text.to_owned();
        let mut notes = Vec::new();
        let parts = match crate::attach::images(
            &[],
            text,
            &self.context.cwd,
            self.context.kind,
            self.context.takes_images,
        ) {
            Ok(parts) => parts,
            Err(e) => {
                notes.push(format!("⚠ {}", e.message));
                Vec::new()
            }
        };
        let mut seen = std::collections::BTreeSet::new();
        for word in text.split_whitespace() {
            let Some(path) = word.strip_prefix('@') else {
                continue;
            };
            let path = path.trim_end_matches([',', '.', ';', ':', ')', '?', '!']);
            let full = self.context.cwd.join(path);
            if path.is_empty() || !seen.insert(path.to_owned()) || crate::attach::is_image_path(&full) {
                continue;
            }
            if full.is_dir() {
                let listing = editor::complete_path(&self.context.cwd, &format!("{}/", path.trim_end_matches('/')));
                prompt.push_str(&format!(
                    "\n\n<folder path=\"{path}\">\n{}\n</folder>",
                    listing.join("\n")
                ));
                notes.push(format!(
                    "  @ attached the listing of {path}/ ({} entries)",
                    listing.len()
                ));
                continue;
            }
            let Ok(bytes) = std::fs::read(&full) else {
                continue;
            };
            let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(cap)]).into_owned();
            let cut = if bytes.len() > cap {
                format!("\n[cut at {cap} of {} bytes; read_file reads the rest]", bytes.len())
            } else {
                String::new()
            };
            prompt.push_str(&format!("\n\n<file path=\"{path}\">\n{shown}{cut}\n</file>"));
            notes.push(format!("  @ attached {path} ({} bytes)", bytes.len().min(cap)));
        }
        (prompt, parts, notes)
    }

    /// Starts a run of `prompt` on the session's agent.
    fn start(&mut self, prompt: String, parts: Vec<ContentBlock>) {
        let mut options = AgentRunOptions::prompt(prompt);
        options.thinking = self.thinking_level;
        options.parts = parts;
        if let Some(model) = &self.model {
            options.model = vec![model.as_str().into()];
        }
        let agent = self.built.agent.clone();
        self.waiting = true;
        self.live = Live::Working;
        self.interrupting = false;
        self.run_started = Instant::now();
        self.run = Some(tokio::spawn(async move { agent.run(options).await.map(Some) }));
    }

    async fn on_run_end(&mut self, result: Result<RunResult, tokio::task::JoinError>) {
        let p = self.paint;
        let mut commit = Vec::new();
        self.settle(&mut commit);
        self.waiting = false;
        let interrupted = std::mem::take(&mut self.interrupting);
        // What the model did not take goes with the next prompt.
        let left: Vec<String> = self.queued.drain(..).map(|q| q.text).collect();
        self.later.splice(0..0, left);
        let secs = self.run_started.elapsed().as_secs_f64();
        match result {
            Err(e) => commit.push(p.hue(Hue::Red, &format!("✗ the run stopped: {e}"))),
            Ok(Ok(Some(out))) => {
                let mut line = format!(
                    "─ {} turn{} · {:.1}s",
                    out.turns,
                    if out.turns == 1 { "" } else { "s" },
                    secs
                );
                if let Some(cost) = out.totals.cost {
                    line.push_str(&format!(" · ${cost:.4}"));
                }
                commit.push(p.dim(&line));
                if out.suspended || interrupted {
                    commit.push(p.hue(
                        Hue::Yellow,
                        "⏸ interrupted: the session is saved; your next message continues it",
                    ));
                    self.later.clear();
                } else if out.status == zidane::agent::RunStatus::MaxTurns {
                    commit.push(p.hue(Hue::Yellow, "stopped at the turn limit"));
                }
            }
            Ok(Ok(None)) => commit.push(p.dim("nothing to continue: the session has no interrupted run")),
            Ok(Err(error)) => {
                let message = crate::output::describe_failure(&error, &self.context.args);
                commit.push(p.hue(Hue::Red, &format!("✗ {message}")));
            }
        }
        self.draw(commit);
        remember_folder(&self.built.agent, &self.context.cwd).await;
        self.refresh_context().await;
        self.start_later();
        self.draw(Vec::new());
    }

    /// Quits: a run still going is suspended (so `--resume` continues it),
    /// the agent ends, and the terminal is given back.
    async fn end(mut self) -> Result<(), Failure> {
        if !self.editor.is_empty() {
            self.editor.clear();
        }
        for ask in self.asks.drain(..) {
            let _ = ask.reply.send(Answer::No(Some("the session ended".into())));
        }
        for form in self.forms.drain(..) {
            let _ = form.reply.send(zidane::mcp::ElicitationAnswer::Cancel);
        }
        if let Some(run) = self.run.take() {
            crate::suspend_now(&self.built.agent).await;
            let _ = run.await;
        }
        *NOTICES.lock() = None;
        self.screen.leave();
        self.built
            .hooks
            .tell("SessionEnd", "other", serde_json::json!({ "reason": "other" }))
            .await;
        self.built.agent.destroy().await;
        if let Some(traces) = &self.built.traces
            && let Err(e) = traces.flush().await
        {
            eprintln!("⚠ {e}");
        }
        eprintln!(
            "session {} (continue with `zidane --resume --session {}`)",
            self.id, self.id
        );
        Ok(())
    }
}

/// Cache breaks become `cache:break` events (shown as a line each); the
/// logger's own lines are not printed.
fn watch_cache(hooks: &zidane::hooks::HookBus) -> HookScope {
    zidane::agent::install_cache_break_logger(
        hooks,
        zidane::agent::CacheBreakLoggerOptions {
            log: Some(Arc::new(|_: &str| {})),
            ..Default::default()
        },
    )
}

/// Records the session's folder (what `/resume` lists by), once.
pub(crate) async fn remember_folder(agent: &zidane::agent::Agent, cwd: &std::path::Path) {
    let folder = Value::from(cwd.to_string_lossy().into_owned());
    if agent
        .session()
        .is_some_and(|s| s.metadata.get(FOLDER_KEY) != Some(&folder))
    {
        let _ = agent.set_session_meta(FOLDER_KEY, folder).await;
    }
}

/// The session metadata key naming the folder a session works in.
pub(crate) const FOLDER_KEY: &str = "zidane.cwd";

/// Resolves when the run ends (pending while there is none).
async fn wait(run: &mut Option<tokio::task::JoinHandle<RunResult>>) -> Result<RunResult, tokio::task::JoinError> {
    match run {
        Some(handle) => handle.await,
        None => std::future::pending().await,
    }
}

/// The first line of `text`, with a mark when there are more.
fn first_lines(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default().to_owned();
    match lines.count() {
        0 => first,
        n => format!("{first} (+{n} lines)"),
    }
}
