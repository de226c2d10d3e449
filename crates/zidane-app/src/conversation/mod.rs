//! One conversation in one folder: its agent (built once, with its MCP
//! connections, approvals and event feed), the one way to submit a prompt
//! ([`Conversation::submit`], the prompt pipeline), and the operations a
//! front end offers on it (compaction, the model, skills, tasks, reports).
//! Nothing here prints; everything a person sees goes out as an
//! [`Event`](crate::Event).

mod build;
mod goal;
mod reports;
mod review;
mod submit;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use zidane::agent::{Agent, QueuedMessageOptions, RunSummary, RunSummaryCollector};
use zidane::durable::SuspendOptions;
use zidane::providers::ThinkingLevel;

pub use self::goal::{GOAL_USAGE, GoalAction, describe as describe_goal, goal_of};
pub use self::reports::{
    CompactOutcome, ContextReport, CostReport, ModelCost, ModelSwitch, NO_LANGUAGE_SERVER, SkillState,
    diagnostics_tally, language_server_lines,
};
pub use self::submit::Submission;
use crate::Error;
use crate::command_hooks::CommandHooks;
use crate::event::Events;
use crate::permissions::Permissions;
use crate::savings::Savings;
use crate::setup::Setup;

/// The session metadata key naming the folder a session works in.
pub const FOLDER_KEY: &str = "zidane.cwd";

/// A conversation: cheap to clone, each clone the same conversation.
#[derive(Clone)]
pub struct Conversation {
    inner: Arc<Inner>,
}

struct Inner {
    setup: Arc<Setup>,
    id: String,
    agent: Agent,
    hooks: Arc<CommandHooks>,
    permissions: Arc<Permissions>,
    savings: Savings,
    planning: Arc<AtomicBool>,
    /// The review going on: what `report_finding` collects.
    review: crate::review::finding::Slot,
    collector: RunSummaryCollector,
    traces: Option<zidane::otel::OtelExporter>,
    events: Events,
    notes: Vec<String>,
    state: Mutex<State>,
    /// Hook subscriptions, dropped with the conversation.
    _guards: Vec<Box<dyn std::any::Any + Send + Sync>>,
}

/// What changes as the conversation goes on.
struct State {
    /// The `SessionStart` hooks' context, once they ran.
    hook_context: Option<Vec<String>>,
    /// `/model`: the model of the next turns.
    model: Option<String>,
    /// `/thinking`: the level of the next turns.
    thinking: ThinkingLevel,
    /// Whether a run is going on.
    running: bool,
    /// Whether `end` ran.
    ended: bool,
    /// The goal the next runs work toward (`--goal`, `/goal`), until a
    /// check says it is met or its budget is spent.
    goal: Option<zidane::agent::Goal>,
}

impl Conversation {
    /// Opens session `id` in `setup`'s folder: the agent with everything
    /// installed on its bus, its events going to `events`. `first` is the
    /// first conversation of the process (its notes say how commands are
    /// confined).
    pub async fn open(setup: Arc<Setup>, id: &str, events: Events, first: bool) -> Result<Conversation, Error> {
        build::open(setup, id, events, first).await
    }

    /// The same session opened again (its stored conversation read anew,
    /// after a rewind changed it): the hooks' context, the model and the
    /// thinking level of the next turns carry over.
    pub async fn reopen(&self) -> Result<Conversation, Error> {
        let again = build::open(
            Arc::clone(&self.inner.setup),
            &self.inner.id,
            self.inner.events.clone(),
            false,
        )
        .await?;
        {
            let before = self.inner.state.lock();
            let mut after = again.inner.state.lock();
            after.hook_context.clone_from(&before.hook_context);
            after.model.clone_from(&before.model);
            after.thinking = before.thinking;
        }
        again.set_planning(self.planning());
        Ok(again)
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// What the conversation is built from.
    pub fn setup(&self) -> &Arc<Setup> {
        &self.inner.setup
    }

    /// The agent (for what only reads it: its turns, its model).
    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }

    /// Lines for the person from opening it: how commands are confined,
    /// skills that could not be read, settings that do not apply.
    pub fn notes(&self) -> &[String] {
        &self.inner.notes
    }

    /// Whether a run is going on.
    pub fn running(&self) -> bool {
        self.inner.state.lock().running
    }

    /// Queues `text` for the running run's next turn boundary (`id` is told
    /// back by [`Event::Injected`](crate::Event::Injected) when the model
    /// takes it); `false` when no run takes messages now.
    pub fn steer(&self, text: &str, id: &str) -> bool {
        self.inner.agent.steer(text.to_owned(), queued(id))
    }

    /// Queues `text` for when the running run would otherwise finish.
    pub fn follow_up(&self, text: &str, id: &str) -> bool {
        self.inner.agent.follow_up(text.to_owned(), queued(id))
    }

    /// Stops the run now: the model stream stops and a running call is cut
    /// off and stays pending, for a resume (or healed by the next run).
    pub async fn suspend(&self) {
        self.inner
            .agent
            .suspend(SuspendOptions {
                grace: Some(std::time::Duration::ZERO),
            })
            .await;
    }

    /// Whether plan mode is on: the next runs use read-only tools.
    pub fn planning(&self) -> bool {
        self.inner.planning.load(Ordering::SeqCst)
    }

    /// Turns plan mode on or off.
    pub fn set_planning(&self, on: bool) {
        self.inner.planning.store(on, Ordering::SeqCst);
    }

    /// The run summary of the last run.
    pub fn last_summary(&self) -> Option<RunSummary> {
        self.inner.collector.latest().map(|mut s| {
            s.context_savings = self.inner.savings.snapshot();
            s
        })
    }

    /// Ends the conversation: a run still going is suspended (so a resume
    /// continues it), the `SessionEnd` hooks run, the agent ends
    /// (background commands with it) and traces are sent. Ending twice
    /// does nothing.
    pub async fn end(&self) {
        {
            let mut state = self.inner.state.lock();
            if state.ended {
                return;
            }
            state.ended = true;
        }
        if self.running() {
            self.suspend().await;
        }
        self.inner
            .hooks
            .tell("SessionEnd", "other", serde_json::json!({ "reason": "other" }))
            .await;
        self.inner.agent.destroy().await;
        if let Some(traces) = &self.inner.traces
            && let Err(e) = traces.flush().await
        {
            self.inner.events.notice(format!("⚠ {e}"));
        }
    }
}

impl Conversation {
    /// The `Notification` command hooks, told that `message` waits for the
    /// person (`kind`: Claude Code's `notification_type`, such as
    /// `idle_prompt` when a turn ended). A front end calls it when it
    /// notifies; approvals tell the hooks themselves.
    pub async fn notification(&self, kind: &str, message: &str) {
        let fields = serde_json::json!({ "message": message, "notification_type": kind });
        self.inner.hooks.tell("Notification", kind, fields).await;
    }
}

fn queued(id: &str) -> QueuedMessageOptions {
    QueuedMessageOptions {
        id: Some(id.to_owned()),
        ..Default::default()
    }
}
