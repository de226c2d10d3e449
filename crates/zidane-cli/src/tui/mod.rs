//! The interactive session: `zidane` at a terminal. One conversation at a
//! time (`/new` and `/resume` open another in the same folder); the
//! conversation goes into the terminal's own scrollback and only the input
//! and the status line under it are redrawn. The input stays live while
//! the model works (Enter steers, `/later` queues a follow-up, Esc
//! interrupts), approvals are answered with one key, and slash commands
//! reach what the conversation can do. This module renders the
//! conversation's events and turns keys into submissions; the rest is the
//! program's core.

mod changes;
mod draw;
mod editor;
mod init;
mod keys;
mod link;
mod loops;
mod markdown;
mod memory;
mod modes;
mod notify;
mod ops;
mod outside;
mod prompt;
mod screen;
mod slash;
mod status_command;
mod theme;
mod update;
mod view;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::EventStream;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;
use zidane_app::{Ask, Conversation, Error, Event, Events, Form, Outcome, Setup};

use self::link::Link;

use self::editor::{Editor, History};
use self::markdown::Markdown;
use self::screen::{Paint, Screen};

use crate::out::Failure;

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

/// An MCP server's form, filled field by field.
struct FormState {
    form: Form,
    /// Each field: its name, its type, its default as shown.
    fields: Vec<(String, String, Option<String>)>,
    at: usize,
    answers: serde_json::Map<String, Value>,
}

impl FormState {
    fn new(form: Form) -> FormState {
        FormState {
            fields: form.fields(),
            form,
            at: 0,
            answers: serde_json::Map::new(),
        }
    }

    /// Takes the typed value of the current field; `true` once every field
    /// has one (or was left to its default).
    fn take(&mut self, typed: &str) -> bool {
        if let Some((name, kind, _)) = self.fields.get(self.at)
            && !typed.trim().is_empty()
        {
            self.answers
                .insert(name.clone(), zidane_app::ask::field_value(kind, typed));
        }
        self.at += 1;
        self.at >= self.fields.len()
    }
}

/// A yes-or-no offer in the bottom area.
enum Offer {
    /// The plan, to carry out.
    Plan(String),
    /// `/init`'s file: where, and its new text.
    Init(std::path::PathBuf, String),
    /// A fact to remember, waiting for its place.
    Memory(String),
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

type RunResult = Result<Outcome, Error>;

/// The session and its interface.
struct Session {
    /// What every local conversation is built from (`None`: attached to a
    /// served session).
    setup: Option<Arc<Setup>>,
    link: Link,
    /// Where every conversation of the session sends its events.
    events: Events,
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
    fallback: Option<String>,
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
    forms: VecDeque<FormState>,
    /// The value being typed for the form's current field.
    field: String,
    /// The reason being typed for a `no`.
    reason: Option<String>,
    picker: Option<Picker>,
    quit_armed: Option<Instant>,
    interrupting: bool,
    quit: bool,
    /// `/loop`: prompts sent again at an interval.
    loops: Vec<loops::Looped>,
    /// A planning run ended with a plan not yet carried out.
    planned: bool,
    /// What is offered with a yes or no: the plan on leaving plan mode,
    /// `/init`'s file.
    offer: Option<Offer>,
    /// `/init`'s exploring run is going.
    initing: bool,
    /// The terminal asked for by the editor or the shell.
    outside: Option<outside::Outside>,
    /// Whether the terminal has the focus (as it last reported).
    focused: bool,
    /// Whether to notify while it does not.
    notifications: bool,
    /// `status_line = { command }`.
    status_command: Option<status_command::StatusCommand>,
    /// When the session opened.
    opened: Instant,
}

/// Runs the interactive session in `setup`'s folder until the person
/// quits, starting with `prompt` (or, with `--resume` and no prompt,
/// continuing an interrupted run).
pub(crate) async fn run(setup: Arc<Setup>, id: &str, prompt: String) -> Result<(), Failure> {
    let (events, rx) = Events::channel();
    let conversation = Conversation::open(Arc::clone(&setup), id, events.clone(), true).await?;
    crate::out::tell(conversation.notes());
    let history = History::open(setup.store.path().parent(), &setup.settings.paths.root);
    let resume = setup.settings.resume;
    let session = Session::new(Some(setup), Link::Local(conversation), events, history)?;
    session.go(rx, prompt, resume).await
}

/// The interactive session on a served session (`zidane attach`): the run
/// goes on at the server when this terminal goes.
pub(crate) async fn attach(
    target: crate::remote::Target,
    opening: crate::remote::session::Opening,
    prompt: String,
) -> Result<(), Failure> {
    let (events, rx) = Events::channel();
    let name = format!(
        "{}@terminal",
        std::env::var("USER").unwrap_or_else(|_| "someone".into())
    );
    let remote = crate::remote::session::RemoteSession::open(target, opening, &name, events.clone(), true)
        .await
        .map_err(Failure::run)?;
    let history = History::open(
        zidane_app::paths::user_dir().as_deref(),
        &std::env::current_dir().unwrap_or_default(),
    );
    let running = remote.status()["running"] == true;
    let mut session = Session::new(None, Link::Remote(remote), events, history)?;
    if running && prompt.trim().is_empty() {
        session.follow_remote_run();
    }
    session.go(rx, prompt, false).await
}

impl Session {
    fn new(setup: Option<Arc<Setup>>, link: Link, events: Events, history: History) -> Result<Session, Failure> {
        let notifications = setup
            .as_ref()
            .is_none_or(|s| s.settings.notifications == zidane_app::Notifications::On);
        let screen = Screen::enter().map_err(|e| Failure::run(format!("cannot take the terminal: {e}")))?;
        let mut paint = Paint::from_env();
        if paint.color {
            // In raw mode, before the keys are read: the terminal's answer
            // is read here.
            paint.light = theme::light(setup.as_ref().map_or(zidane_app::Theme::Auto, |s| s.settings.theme));
        }
        let cols = usize::from(screen.cols);
        Ok(Session {
            setup,
            link,
            events,
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
            fallback: None,
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
            loops: Vec::new(),
            planned: false,
            offer: None,
            initing: false,
            outside: None,
            focused: true,
            notifications,
            status_command: None,
            opened: Instant::now(),
        })
    }

    /// Welcomes, starts `prompt` (or continues an interrupted run), and
    /// serves keys and events until the person quits.
    async fn go(mut self, mut rx: UnboundedReceiver<Event>, prompt: String, resume: bool) -> Result<(), Failure> {
        self.welcome().await;
        if !prompt.trim().is_empty() {
            self.submit_prompt(prompt).await;
        } else if resume {
            self.continue_interrupted();
        }
        self.draw(Vec::new());
        self.event_loop(&mut rx).await;
        self.end(rx).await
    }

    async fn event_loop(&mut self, rx: &mut UnboundedReceiver<Event>) {
        let mut keys = EventStream::new();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut shown_status = String::new();
        // SIGTERM and SIGHUP end the session as a quit does (the run
        // suspended, the terminal given back).
        let mut signals = crate::signals::StopSignals::listen();
        let (status_tx, mut status_rx) = tokio::sync::mpsc::unbounded_channel();
        if let Some(config) = self.setup.as_ref().and_then(|s| s.settings.status_line.clone()) {
            self.status_command = Some(status_command::StatusCommand::new(config, status_tx));
        }
        while !self.quit {
            tokio::select! {
                Some(line) = status_rx.recv() => {
                    if let Some(cmd) = &mut self.status_command {
                        cmd.take(line);
                    }
                    self.draw(Vec::new());
                }
                stop = signals.next() => if stop {
                    self.quit = true;
                },
                key = keys.next() => match key {
                    Some(Ok(key)) => {
                        self.on_event(key).await;
                        if let Some(what) = self.outside.take() {
                            // The editor or the shell reads the keys meanwhile.
                            drop(keys);
                            self.go_outside(what).await;
                            keys = EventStream::new();
                        }
                    }
                    // The terminal is gone: end as a quit would.
                    Some(Err(_)) | None => self.quit = true,
                },
                Some(first) = rx.recv() => self.take_updates(first, rx),
                result = wait(&mut self.run), if self.run.is_some() => {
                    self.run = None;
                    // Everything the run sent comes before its end.
                    while let Ok(next) = rx.try_recv() {
                        self.take_updates(next, rx);
                    }
                    self.on_run_end(result).await;
                }
                _ = tick.tick() => {
                    self.fire_loops().await;
                    self.refresh_status_command();
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

    /// `first` and what else arrived with it, drawn once.
    fn take_updates(&mut self, first: Event, rx: &mut UnboundedReceiver<Event>) {
        let mut commit = Vec::new();
        self.on_update(first, &mut commit);
        for _ in 0..512 {
            match rx.try_recv() {
                Ok(next) => self.on_update(next, &mut commit),
                Err(_) => break,
            }
        }
        self.draw(commit);
    }

    /// The first lines: where the session is, how to get help.
    async fn welcome(&mut self) {
        let (turns, _, _) = self.link.summary().await;
        let resumed = if turns > 0 {
            format!(" · resumed with {turns} messages")
        } else {
            String::new()
        };
        let leave = if self.link.remote().is_some() {
            "Ctrl-\\ detaches (the session goes on at the server)"
        } else {
            "Ctrl-D quits"
        };
        let line = format!(
            "zidane · {} · session {}{resumed} · /help for commands, Esc interrupts, {leave}",
            self.link.cwd().display(),
            self.link.id()
        );
        let line = self.paint.dim(&line);
        self.refresh_context().await;
        self.draw(vec![line]);
    }

    /// `--resume` with no prompt: the interrupted run, continued.
    fn continue_interrupted(&mut self) {
        let link = self.link.clone();
        self.waiting = true;
        self.live = Live::Working;
        self.run_started = Instant::now();
        self.run = Some(tokio::spawn(async move { Ok(link.resume_interrupted().await) }));
    }

    /// Watches the served session's run going on as this terminal's own
    /// run (its end ends the working line).
    fn follow_remote_run(&mut self) {
        let link = self.link.clone();
        self.live = Live::Working;
        self.run_started = Instant::now();
        self.run = Some(tokio::spawn(async move { Ok(link.follow().await) }));
    }

    /// The context's size before the next request, estimated.
    async fn refresh_context(&mut self) {
        if let Some(used) = self.link.context_used().await {
            self.context_used = Some(used);
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

    /// Quits: a run still going is suspended (so `--resume` continues it),
    /// the conversation ends, and the terminal is given back.
    async fn end(mut self, mut rx: UnboundedReceiver<Event>) -> Result<(), Failure> {
        if !self.editor.is_empty() {
            self.editor.clear();
        }
        let attached = self.link.remote().is_some();
        if attached {
            // Left unanswered: the server keeps them for the next client.
            self.asks.clear();
            self.forms.clear();
        }
        for ask in self.asks.drain(..) {
            ask.answer(zidane_app::Answer::No(Some("the session ended".into())));
        }
        for form in self.forms.drain(..) {
            form.form.answer(zidane::mcp::ElicitationAnswer::Cancel);
        }
        if let Some(run) = self.run.take()
            && !attached
        {
            self.link.suspend().await;
            let _ = run.await;
        }
        self.screen.leave();
        self.link.end().await;
        // What ending said (a hook's message, traces that could not be
        // sent) is printed now that the terminal is given back.
        while let Ok(event) = rx.try_recv() {
            if let Event::Notice(line) = event {
                eprintln!("zidane: {line}");
            }
        }
        let id = self.link.id();
        if attached {
            eprintln!("detached from session {id}; it goes on at the server (`zidane attach --session {id}`)");
        } else {
            eprintln!("session {id} (continue with `zidane --resume --session {id}`)");
        }
        Ok(())
    }
}

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
