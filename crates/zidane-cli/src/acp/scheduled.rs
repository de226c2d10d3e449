//! A schedule's firing as a served session: opened in the schedule's
//! folder (or its named session), its goal set, its prompt run with no
//! client; clients see it in the session list and may attach to follow it
//! or answer its questions.

use std::sync::Arc;

use serde_json::json;
use zidane::agent::GoalStatus;
use zidane_app::schedule::{Claim, FIRED_KEY};
use zidane_app::{Outcome, Submission};

use super::Hub;
use super::hub::Opening;

impl Hub {
    /// Runs the firing `claim` recorded; how it ended, for people, and what
    /// it spent (USD).
    pub(crate) async fn fire(self: &Arc<Self>, claim: &Claim) -> (String, f64) {
        let schedule = &claim.schedule;
        let id = claim.firing.session.as_str();
        let session = {
            let _opening = self.opening(id).await;
            match self.get(id) {
                Some(open) => open,
                None => {
                    let opening = Opening {
                        max_turns: Some(schedule.max_turns),
                        ..Opening::default()
                    };
                    match self.start(None, id, &schedule.folder, opening).await {
                        Ok(session) => {
                            self.insert(Arc::clone(&session));
                            session
                        }
                        Err(e) => return (format!("failed to start: {}", e.1), 0.0),
                    }
                }
            }
        };
        if !session.begin() {
            return ("skipped: its session was running another prompt".to_owned(), 0.0);
        }
        let conversation = session.conversation();
        let _ = conversation
            .agent()
            .set_session_meta(
                FIRED_KEY,
                json!({ "schedule": schedule.name, "dueMs": claim.firing.due_ms }),
            )
            .await;
        let before = conversation.cost().cost.unwrap_or(0.0);
        conversation.set_goal(schedule.goal.clone());
        let outcome = conversation.submit(Submission::text(schedule.prompt.clone())).await;
        session.events.flush().await;
        let goal = schedule.goal.as_ref().and(conversation.goal());
        session.done();
        let spent = (conversation.cost().cost.unwrap_or(0.0) - before).max(0.0);
        let said = match outcome {
            Ok(Outcome::Ran(out)) => match goal {
                Some(progress) if progress.status == GoalStatus::Met => {
                    format!("goal met after {} check(s)", progress.verdicts.len())
                }
                Some(progress) if progress.status == GoalStatus::Unmet => {
                    format!("goal not met: {}", progress.summary())
                }
                _ => format!("{:?}", out.stats.status).to_lowercase(),
            },
            Ok(Outcome::Blocked(reason)) => format!("blocked: {reason}"),
            Ok(Outcome::InUse(reason)) => format!("skipped: {reason}"),
            Ok(Outcome::Failed(reason)) => format!("failed: {reason}"),
            Ok(_) => "nothing to run".to_owned(),
            Err(e) => format!("failed: {}", e.message()),
        };
        (said, spent)
    }
}
