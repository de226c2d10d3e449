//! What the person types becomes a submission: a prompt through the
//! conversation's pipeline, a steer or a follow-up while a run goes on, a
//! slash command; and the run's end, shown.

use std::time::Instant;

use zidane_app::Outcome;

use super::screen::Hue;
use super::{Live, Queued, RunResult, Session, first_lines};

impl Session {
    /// What Enter sent.
    pub(super) async fn submit(&mut self, text: String) {
        if text.trim().is_empty() {
            return;
        }
        let trimmed = text.trim_start();
        if let Some(rest) = trimmed.strip_prefix("/later") {
            self.follow_up(rest.trim().to_owned());
            return;
        }
        if let Some(fact) = zidane_app::memory::shortcut(trimmed) {
            self.offer_memory(fact);
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
        self.submit_prompt(text).await;
    }

    /// Enter while the model works: the text reaches it at the next turn
    /// boundary.
    pub(super) fn steer(&mut self, text: String) {
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
        // Unique past this process: several terminals steer one served session.
        let id = format!("typed-{}-{}", std::process::id(), self.next_id);
        let queued = self.link.queue(&text, &id, follow_up);
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
        self.start(text);
    }

    /// A prompt typed (or given on the command line): echoed, then through
    /// the conversation's pipeline.
    pub(super) async fn submit_prompt(&mut self, text: String) {
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
        self.draw(commit);
        self.start(text);
    }

    /// Starts a run of `text` through the pipeline.
    fn start(&mut self, text: String) {
        let link = self.link.clone();
        self.start_with(async move { link.submit(text).await });
    }

    /// Starts `run` as the session's run.
    pub(super) fn start_with(&mut self, run: impl std::future::Future<Output = RunResult> + Send + 'static) {
        self.waiting = true;
        self.live = Live::Working;
        self.interrupting = false;
        self.run_started = Instant::now();
        self.run = Some(tokio::spawn(run));
    }

    pub(super) async fn on_run_end(&mut self, result: Result<RunResult, tokio::task::JoinError>) {
        let p = self.paint;
        let mut commit = Vec::new();
        self.settle(&mut commit);
        self.waiting = false;
        let interrupted = std::mem::take(&mut self.interrupting);
        // What the model did not take goes with the next prompt.
        let left: Vec<String> = self.queued.drain(..).map(|q| q.text).collect();
        self.later.splice(0..0, left);
        let secs = self.run_started.elapsed().as_secs_f64();
        if let Ok(Ok(outcome)) = &result {
            self.on_plan_end(outcome, &mut commit);
        }
        let initing =
            std::mem::take(&mut self.initing) && matches!(&result, Ok(Ok(Outcome::Ran(out))) if out.completed());
        match result {
            Err(e) => commit.push(p.hue(Hue::Red, &format!("✗ the run stopped: {e}"))),
            Ok(Err(e)) => commit.push(p.hue(Hue::Red, &format!("✗ {e}"))),
            Ok(Ok(Outcome::Ran(out))) => {
                let mut line = format!(
                    "─ {} turn{} · {:.1}s",
                    out.turns,
                    if out.turns == 1 { "" } else { "s" },
                    secs
                );
                if let Some(cost) = out.totals.cost {
                    line.push_str(&format!(" · ${cost:.4}"));
                }
                if let Some(d) = self
                    .link
                    .local()
                    .and_then(|c| c.last_summary())
                    .map(|s| s.diagnostics)
                    .filter(|d| !d.is_empty())
                {
                    line.push_str(&format!(" · {} diagnostics, {} fixed", d.reported, d.fixed));
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
            Ok(Ok(Outcome::NothingToContinue)) => {
                commit.push(p.dim("nothing to continue: the session has no interrupted run"));
            }
            Ok(Ok(Outcome::Blocked(message) | Outcome::Failed(message) | Outcome::InUse(message))) => {
                commit.push(p.hue(Hue::Red, &format!("✗ {message}")));
            }
            Ok(Ok(_)) => {}
        }
        self.draw(commit);
        if self.asks.is_empty() {
            self.notify("idle_prompt", "zidane: the turn ended; your move");
        }
        if initing {
            self.on_init_end().await;
        }
        self.refresh_context().await;
        self.start_later();
        self.draw(Vec::new());
    }
}
