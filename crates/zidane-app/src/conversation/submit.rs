//! The prompt pipeline, the one way a prompt reaches the model, whatever
//! the front end: the folder's `/command` expanded (its model and allowed
//! tools for this run), `@` attachments, the `SessionStart` hooks' context
//! on the first prompt, the `UserPromptSubmit` hooks, plan mode, the run's
//! options, the run, the folder remembered, the checkpoint told, and the
//! run's end on the stream.

use std::path::PathBuf;

use serde_json::Value;
use zidane::agent::{AgentError, AgentRunOptions, RunErrorKind, RunOutput};
use zidane::durable::DurableResumeOptions;
use zidane::providers::{ContentBlock, ErrorKind, Role};

use super::{Conversation, FOLDER_KEY};
use crate::Error;
use crate::event::{Event, Outcome, RunEnd};
use crate::settings::Settings;

/// A prompt as a front end submits it.
#[derive(Debug, Clone, Default)]
pub struct Submission {
    /// What the person wrote: a prompt, or one of the folder's
    /// `/command arguments`; `@path` mentions attach files, folders and
    /// images.
    pub text: String,
    /// Attachments the front end holds already (an editor's images).
    pub parts: Vec<ContentBlock>,
    /// Image files given beside the prompt (`--image`).
    pub images: Vec<PathBuf>,
}

impl Submission {
    /// A submission of `text` alone.
    pub fn text(text: impl Into<String>) -> Self {
        Submission {
            text: text.into(),
            ..Default::default()
        }
    }
}

/// What the folder's command made of a prompt.
struct Expanded {
    prompt: String,
    model: Option<String>,
}

impl Conversation {
    /// Submits a prompt through the pipeline and runs it. `Err` when nothing
    /// could run (an unknown `/command`, an image that cannot be sent): the
    /// message says why. Every run's end is also sent as
    /// [`Event::RunEnd`].
    pub async fn submit(&self, submission: Submission) -> Result<Outcome, Error> {
        let Expanded { prompt, model } = self.expand(&submission.text)?;
        let settings = &self.inner.setup.settings;
        let mut parts = submission.parts;
        parts.extend(crate::attach::images(
            &submission.images,
            &prompt,
            &settings.cwd,
            self.inner.setup.kind,
            self.inner.setup.takes_images,
        )?);
        let (prompt, notes) =
            crate::attach::mentions_attached(&prompt, &settings.cwd, self.inner.setup.window_tokens());
        for note in notes {
            self.inner.events.notice(note);
        }
        let context = self.session_start().await;
        let prompt = match self.inner.hooks.submit(&prompt).await {
            Ok(prompt) => crate::command_hooks::with_context(&prompt, &context),
            Err(reason) => {
                self.inner.permissions.end_run();
                let outcome = Outcome::Blocked(format!("a UserPromptSubmit hook blocked the prompt: {reason}"));
                self.tell_end(outcome.clone(), false);
                return Ok(outcome);
            }
        };
        let mut options = self.run_options(prompt);
        options.parts = parts;
        if let Some(model) = model {
            options.model = vec![model.as_str().into()];
        }
        Ok(self.run(options).await)
    }

    /// `text` as the folder's `/command` makes it (its model and allowed
    /// tools kept for the next run), or as it is. An unknown command is an
    /// error that lists the folder's.
    fn expand(&self, text: &str) -> Result<Expanded, Error> {
        let settings = &self.inner.setup.settings;
        let Some((name, rest)) = crate::commands::invocation(text) else {
            return Ok(Expanded {
                prompt: text.to_owned(),
                model: None,
            });
        };
        let folders = crate::commands::folders(&settings.paths, settings.trusted);
        let command = crate::commands::find(&folders, name)?;
        self.inner
            .permissions
            .allow_for_run(&command.allowed_tools, &format!("the command /{}", command.name))
            .map_err(Error::usage)?;
        // The command's model over the configuration's, not over `--model`.
        let model = command.model.clone().filter(|_| !settings.given("model"));
        Ok(Expanded {
            prompt: command.expand(rest),
            model,
        })
    }

    /// What a `/command` typed while a run goes on says, for steering it;
    /// other text as it is.
    pub fn steering_text(&self, text: &str) -> Result<String, Error> {
        let expanded = self.expand(text);
        self.inner.permissions.end_run();
        expanded.map(|e| e.prompt)
    }

    /// The `SessionStart` hooks' context, for the conversation's first
    /// prompt only.
    async fn session_start(&self) -> Vec<String> {
        if self.inner.state.lock().hook_context.is_some() {
            return Vec::new();
        }
        let source = if self.inner.setup.settings.resume {
            "resume"
        } else {
            "startup"
        };
        let context = self.inner.hooks.session_start(source).await;
        self.inner.state.lock().hook_context = Some(context.clone());
        context
    }

    /// A run's options: the prompt, the thinking level and model of the
    /// next turns, plan mode.
    fn run_options(&self, prompt: String) -> AgentRunOptions {
        let mut options = AgentRunOptions::prompt(prompt);
        let state = self.inner.state.lock();
        options.thinking = state.thinking;
        options.goal = state.goal.clone();
        if let Some(model) = &state.model {
            options.model = vec![model.as_str().into()];
        }
        drop(state);
        if self.planning() {
            options.hooks = crate::plan::hooks();
            options.system_notes.push(crate::plan::NOTE.into());
        }
        options
    }

    /// Continues the session's interrupted run, if there is one.
    pub async fn resume_interrupted(&self) -> Outcome {
        self.inner.state.lock().running = true;
        let started = crate::now_ms();
        let result = self.inner.agent.resume(DurableResumeOptions::default()).await;
        self.finish(result, started).await
    }

    /// After a planning run: leaves plan mode and carries out `plan` (as
    /// the model wrote it, or as the person edited it).
    pub async fn carry_out(&self, plan: &str) -> Outcome {
        self.set_planning(false);
        let mut options = AgentRunOptions::prompt(crate::plan::go_ahead(plan));
        options.thinking = self.inner.state.lock().thinking;
        self.run(options).await
    }

    /// `/init`'s exploring run: read-only tools (as in plan mode) and
    /// [`crate::init::prompt`]; its answer ([`Self::last_answer`]) holds
    /// the new `AGENTS.md`.
    pub async fn explore_for_init(&self) -> Outcome {
        let existing = std::fs::read_to_string(crate::init::path(self.setup().cwd())).ok();
        let was = self.planning();
        self.set_planning(true);
        let mut options = AgentRunOptions::prompt(crate::init::prompt(existing.as_deref()));
        options.hooks = crate::plan::hooks();
        options.thinking = self.inner.state.lock().thinking;
        let outcome = self.run(options).await;
        self.set_planning(was);
        outcome
    }

    /// The text of the model's last answer (a plan, after a planning run).
    pub fn last_answer(&self) -> String {
        self.inner
            .agent
            .turns()
            .iter()
            .rev()
            .find(|t| t.role == Role::Assistant)
            .map(|t| {
                t.content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }

    pub(super) async fn run(&self, options: AgentRunOptions) -> Outcome {
        self.inner.state.lock().running = true;
        let started = crate::now_ms();
        let result = self.inner.agent.run(options).await.map(Some);
        self.settle_goal();
        self.finish(result, started).await
    }

    /// After a run: the folder remembered, the run's rules dropped, the
    /// checkpoint told, the end on the stream.
    async fn finish(&self, result: Result<Option<RunOutput>, AgentError>, started_ms: u64) -> Outcome {
        self.remember_folder().await;
        self.inner.permissions.end_run();
        self.inner.state.lock().running = false;
        let settings = &self.inner.setup.settings;
        if settings.checkpoints && !matches!(result, Ok(None)) {
            let note = crate::checkpoints::after_run(&self.inner.id, &self.inner.setup.checkpoints, started_ms).await;
            self.inner.events.send(Event::Checkpoint(Box::new(note)));
        }
        let outcome = match result {
            Ok(Some(output)) => Outcome::Ran(output),
            Ok(None) => Outcome::NothingToContinue,
            Err(error @ AgentError::RunLeaseHeld(_)) => {
                Outcome::InUse(format!("{error}; wait for it to finish, or stop it, then try again"))
            }
            Err(error) => Outcome::Failed(describe_failure(&error, settings)),
        };
        let unanswered = matches!(&outcome, Outcome::Ran(out) if out.completed())
            && self.inner.agent.turns().last().is_some_and(|t| t.role == Role::User);
        self.tell_end(outcome.clone(), unanswered);
        outcome
    }

    fn tell_end(&self, outcome: Outcome, unanswered: bool) {
        self.inner.events.send(Event::RunEnd(Box::new(RunEnd {
            session: self.inner.id.clone(),
            outcome,
            summary: self.last_summary(),
            unanswered,
        })));
    }

    /// Records the session's folder (what a session list filters by) and
    /// the front end's facts, once.
    async fn remember_folder(&self) {
        let folder = Value::from(self.inner.setup.settings.cwd.to_string_lossy().into_owned());
        let facts = std::iter::once((FOLDER_KEY, &folder))
            .chain(self.inner.setup.session_meta.iter().map(|(k, v)| (k.as_str(), v)));
        let agent = &self.inner.agent;
        for (key, value) in facts {
            if agent.session().is_some_and(|s| s.metadata.get(key) != Some(value)) {
                let _ = agent.set_session_meta(key, value.clone()).await;
            }
        }
    }
}

/// A run's failure as a message a person can act on.
pub(crate) fn describe_failure(error: &AgentError, settings: &Settings) -> String {
    let AgentError::Run(run) = error else {
        return error.to_string();
    };
    let where_ = settings
        .base_url
        .as_deref()
        .map_or_else(|| "the provider".to_owned(), zidane::providers::shown_url);
    match &run.kind {
        RunErrorKind::Provider(e) => match e.kind() {
            ErrorKind::Auth => format!(
                "the API key was rejected ({}): {}",
                e.status().map_or("auth".to_owned(), |s| format!("HTTP {s}")),
                e.message()
            ),
            ErrorKind::InvalidRequest
                if e.status() == Some(404) || e.message().to_ascii_lowercase().contains("model") =>
            {
                format!(
                    "the model is unknown or unavailable{}: {}",
                    settings.model.as_ref().map(|m| format!(" (`{m}`)")).unwrap_or_default(),
                    e.message()
                )
            }
            ErrorKind::Unreachable => {
                let cause = std::error::Error::source(e)
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                format!("cannot reach {where_}: {}{cause}", e.message())
            }
            // The server was reached; the exchange broke off (or went
            // silent) and the retries ran out.
            ErrorKind::Transport => {
                let cause = std::error::Error::source(e)
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                format!("{where_} stopped answering: {}{cause}", e.message())
            }
            ErrorKind::RateLimited | ErrorKind::Overloaded | ErrorKind::Quota => {
                let what = match e.kind() {
                    ErrorKind::RateLimited => "the provider is rate-limiting requests",
                    ErrorKind::Overloaded => "the provider is overloaded",
                    _ => "the account's quota is spent",
                };
                format!("{what} and the retries ran out: {}", e.message())
            }
            _ => e.to_string(),
        },
        kind @ RunErrorKind::BudgetExceeded { .. } => {
            format!("stopped: {}", kind.to_string().trim_start_matches("budget exceeded: "))
        }
        other => other.to_string(),
    }
}
