//! Plan mode in the session: `/plan` and Shift-Tab cycling ask →
//! auto-edit → plan → ask (shown on the status line); leaving plan mode
//! after a plan offers to carry it out.

use crossterm::event::{KeyCode, KeyEvent};
use zidane_app::Outcome;

use super::screen::Hue;
use super::{Offer, Session};

impl Session {
    /// Shift-Tab: the next mode.
    pub(super) async fn cycle_mode(&mut self) {
        let next = if self.link.planning() {
            "ask"
        } else if self.link.approve() == "ask" {
            "auto-edit"
        } else {
            "plan"
        };
        self.set_mode(next).await;
    }

    /// `/plan`: into plan mode (with a prompt: planning it), or out of it.
    pub(super) async fn plan_command(&mut self, rest: &str) {
        if self.link.planning() && rest.is_empty() {
            let approve = self.link.approve();
            self.set_mode(&approve).await;
            return;
        }
        if !self.link.planning() {
            self.set_mode("plan").await;
        }
        if !rest.is_empty() {
            self.submit_prompt(rest.to_owned()).await;
        }
    }

    async fn set_mode(&mut self, mode: &str) {
        let leaving = self.link.planning() && mode != "plan";
        if let Err(e) = self.link.set_mode(mode).await {
            return self.note(&e);
        }
        let line = match mode {
            "plan" => "plan mode: the next prompts use read-only tools and end with a plan (Shift-Tab or /plan leaves)",
            "ask" => "approve ask: commands, file changes, MCP tools and fetches ask first",
            "auto-edit" => "approve auto-edit: file changes in the folder run; commands, MCP tools and fetches ask",
            _ => "approve yolo: everything runs without asking (deny rules still hold)",
        };
        self.note(line);
        if leaving && std::mem::take(&mut self.planned) {
            let plan = self.link.last_answer().await;
            if !plan.trim().is_empty() {
                self.offer = Some(Offer::Plan(plan));
            }
        }
    }

    /// A planning run ended with an answer: the plan, kept for the offer.
    pub(super) fn on_plan_end(&mut self, outcome: &Outcome, commit: &mut Vec<String>) {
        if let Outcome::Ran(out) = outcome
            && self.link.planning()
            && !self.initing
            && out.completed()
        {
            self.planned = true;
            commit.push(self.paint.hue(
                Hue::Cyan,
                "plan ready: leave plan mode (Shift-Tab or /plan) to carry it out, or keep refining it",
            ));
        }
    }

    /// A key while something is offered: `y` takes it, `n` or Esc does
    /// not.
    pub(super) fn offer_key(&mut self, key: KeyEvent) {
        if let Some(Offer::Memory(_)) = &self.offer {
            if let Some(Offer::Memory(fact)) = self.offer.take() {
                self.memory_key(fact, key);
            }
            return;
        }
        let yes = match key.code {
            KeyCode::Char('y' | 'Y') | KeyCode::Enter => true,
            KeyCode::Char('n' | 'N') | KeyCode::Esc => false,
            _ => return,
        };
        match self.offer.take() {
            Some(Offer::Plan(plan)) => self.plan_offer(plan, yes),
            Some(Offer::Init(path, text)) => self.init_offer(&path, &text, yes),
            Some(Offer::Memory(_)) | None => {}
        }
    }

    /// The plan carried out (`yes`), or kept in the conversation.
    fn plan_offer(&mut self, plan: String, yes: bool) {
        if !yes {
            return self.note("the plan was not carried out; it stays in the conversation");
        }
        if self.run.is_some() {
            self.offer = Some(Offer::Plan(plan));
            return;
        }
        let line = self.paint.hue(Hue::Cyan, "› carry out the plan");
        self.draw(vec![String::new(), line]);
        let link = self.link.clone();
        self.start_with(async move { link.carry_out(plan).await });
    }
}
