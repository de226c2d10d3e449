//! `zidane schedule add CRON PROMPT | list | remove NAME`: the schedules
//! `zidane serve` fires, kept in the sessions file (see
//! `zidane_app::schedule`).

use std::path::Path;

use serde_json::json;
use zidane_app::schedule::{self, Schedule, ScheduleState};

use super::{Failure, emit};
use crate::cli::{ScheduleAction, ScheduleAddArgs};

/// Runs `action` on the sessions file `store` (default: the usual one).
pub(crate) async fn run(store: Option<&Path>, action: ScheduleAction, json: bool) -> Result<(), Failure> {
    let runtime = zidane_app::open_runtime(store)?;
    match action {
        ScheduleAction::Add(args) => {
            let schedule = from_args(args)?;
            schedule::add(&runtime, &schedule).await?;
            let next = schedule::next_firing(&schedule, &ScheduleState::default(), zidane_app::now_ms());
            if json {
                emit(&format!(
                    "{}\n",
                    json!({ "type": "added", "schedule": schedule, "nextMs": next })
                ))
            } else {
                let when = next.map_or_else(|| "never".to_owned(), schedule::local_time);
                emit(&format!(
                    "Added schedule `{}`: next firing {when}. It fires while `zidane serve` runs on this sessions file.\n",
                    schedule.name
                ))
            }
        }
        ScheduleAction::List => {
            let schedules = schedule::list(&runtime).await?;
            emit(&listing(&schedules, json, zidane_app::now_ms()))
        }
        ScheduleAction::Remove { name } => {
            if !schedule::remove(&runtime, &name).await? {
                return Err(Failure::usage(format!(
                    "no schedule named `{name}` (`zidane schedule list` lists them)"
                )));
            }
            if json {
                emit(&format!("{}\n", json!({ "type": "removed", "name": name })))
            } else {
                emit(&format!("Removed schedule `{name}`.\n"))
            }
        }
    }
}

/// The schedule `zidane schedule add` describes.
fn from_args(args: ScheduleAddArgs) -> Result<Schedule, Failure> {
    let folder = match args.folder {
        Some(folder) => folder,
        None => std::env::current_dir().map_err(|e| Failure::usage(format!("cannot read the current folder: {e}")))?,
    };
    let folder = folder
        .canonicalize()
        .map_err(|e| Failure::usage(format!("--folder {}: {e}", folder.display())))?;
    if let Some(max) = args.max_cost
        && !(max.is_finite() && max > 0.0)
    {
        return Err(Failure::usage("--max-cost is a positive amount in USD"));
    }
    let prompt = args.prompt.join(" ");
    if prompt.trim().is_empty() {
        return Err(Failure::usage("the schedule's prompt is empty"));
    }
    let name = args.name.unwrap_or_else(|| name_of(&prompt));
    let goal = args
        .goal
        .map(|condition| zidane_app::goal_of(condition, args.goal_check, args.goal_max_checks, args.goal_evaluate));
    Ok(Schedule {
        name,
        cron: args.cron,
        folder,
        prompt,
        goal,
        session: args.session,
        max_turns: args.max_turns.unwrap_or(schedule::DEFAULT_MAX_TURNS),
        max_cost: args.max_cost,
        created_ms: zidane_app::now_ms(),
    })
}

/// A name from a prompt's first words: `run the tests` → `run-the-tests`.
fn name_of(prompt: &str) -> String {
    let words: Vec<String> = prompt
        .split_whitespace()
        .map(|w| {
            w.chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_lowercase()
        })
        .filter(|w| !w.is_empty())
        .take(4)
        .collect();
    let name = words.join("-");
    if name.is_empty() { "schedule".to_owned() } else { name }
}

/// The schedules, one line each (a JSON object each with `--json`), with
/// their next firing and their last one.
fn listing(schedules: &[(Schedule, ScheduleState)], json: bool, now: u64) -> String {
    let mut out = String::new();
    if schedules.is_empty() && !json {
        out.push_str("No schedules yet: `zidane schedule add \"0 9 * * 1-5\" --folder PATH PROMPT` adds one.\n");
    }
    for (schedule, state) in schedules {
        let next = schedule::next_firing(schedule, state, now);
        if json {
            out.push_str(&format!(
                "{}\n",
                json!({ "type": "schedule", "schedule": schedule, "state": state, "nextMs": next })
            ));
            continue;
        }
        let next = match next {
            Some(ms) => schedule::local_time(ms),
            None if schedule::spent(schedule, state) => format!("never (its ${:.2} budget is spent)", state.spent),
            None => "never".to_owned(),
        };
        out.push_str(&format!(
            "{}  \"{}\"  in {}  next: {next}\n",
            schedule.name,
            schedule.cron,
            schedule.folder.display()
        ));
        out.push_str(&format!("    {}\n", first_line(&schedule.prompt)));
        if let Some(last) = state.firings.last() {
            let outcome = last.outcome.as_deref().unwrap_or("running (or its server stopped)");
            let mut line = format!(
                "    last: {} in session {}: {outcome}",
                schedule::local_time(last.started_ms),
                last.session
            );
            if last.missed > 0 {
                line.push_str(&format!(
                    " (after {} due time(s) missed with no server running)",
                    last.missed
                ));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut short: String = line.chars().take(80).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}
