//! The Virtual Object `ZidaneSchedule`, one per schedule name: a prompt
//! run in a session each time a cron expression (UTC) comes due, kept as
//! a durable timer — a delayed call of the object's own `fire`, which
//! Restate keeps across restarts of the service and of the server. Each
//! firing sends `run` to the `ZidaneAgent` of its session (the
//! schedule's, or `<name>-<due ms>` for a new one each time) and sets the
//! next timer; only one timer is pending at a time, so a service that was
//! down over several due times fires once when it is back, and the
//! firing records how many due times it stands for.

use std::str::FromStr;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use restate_sdk::context::{ContextClient, ContextReadState, ContextSideEffects, ContextWriteState, ObjectContext};
use restate_sdk::context::{RequestTarget, SharedObjectContext};
use restate_sdk::errors::{HandlerResult, TerminalError};
use restate_sdk::serde::Json;
use serde::{Deserialize, Serialize};

use crate::api::RunRequest;

/// The state key of the schedule's definition.
const DEFINITION: &str = "definition";
/// The state key of its firings.
const FIRINGS: &str = "firings";
/// The state key of the timer generation: a timer set before the last
/// `add` or `remove` finds another and does nothing.
const GENERATION: &str = "generation";
/// How many firings the state keeps.
const KEPT: usize = 20;

/// What `add` takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleRequest {
    /// When: a cron expression, in UTC (five fields, or six with seconds).
    pub cron: String,
    /// The session each firing runs in (default: a new one each time,
    /// `<name>-<due ms>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// What each firing runs (its prompt, turn cap and goal).
    pub run: RunRequest,
}

/// One firing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleFiring {
    /// The due time (epoch ms).
    pub due_ms: u64,
    /// When it fired (epoch ms).
    pub fired_ms: u64,
    /// Earlier due times that passed before it could fire.
    pub missed: u32,
    /// The session its run went to.
    pub session: String,
}

/// What `get` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleInfo {
    /// The definition (`None`: no such schedule).
    pub schedule: Option<ScheduleRequest>,
    /// The next due time (epoch ms).
    pub next_ms: Option<u64>,
    /// The last firings, the newest last.
    pub firings: Vec<ScheduleFiring>,
}

/// What a timer carries to `fire`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Due {
    /// The timer's generation.
    pub generation: u64,
    /// The due time it was set for (epoch ms).
    pub due_ms: u64,
}

/// The object.
#[derive(Debug, Default, Clone, Copy)]
pub struct ZidaneSchedule;

fn cron(text: &str) -> Result<croner::Cron, TerminalError> {
    croner::Cron::from_str(text.trim())
        .map_err(|e| TerminalError::new(format!("`{text}` is not a cron expression: {e}")))
}

/// The first due time of `cron` after `after_ms` (UTC).
fn next_after(cron: &croner::Cron, after_ms: u64) -> Option<u64> {
    let start = Utc.timestamp_millis_opt(after_ms as i64).single()?;
    let next = cron.find_next_occurrence(&start, false).ok()?;
    u64::try_from(next.timestamp_millis()).ok()
}

/// The time, journaled (a replay reads the same).
async fn now_ms(ctx: &ObjectContext<'_>) -> HandlerResult<u64> {
    let now = ctx
        .run(|| async {
            Ok(std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64))
        })
        .await?;
    Ok(now)
}

/// Sets the timer for the first due time after `after_ms`.
fn set_timer(ctx: &ObjectContext<'_>, cron: &croner::Cron, generation: u64, after_ms: u64, now: u64) {
    if let Some(due_ms) = next_after(cron, after_ms) {
        ctx.request::<Json<Due>, ()>(
            RequestTarget::object("ZidaneSchedule", ctx.key(), "fire"),
            Json(Due { generation, due_ms }),
        )
        .send_after(Duration::from_millis(due_ms.saturating_sub(now)));
    }
}

#[restate_sdk::object(name = "ZidaneSchedule")]
impl ZidaneSchedule {
    /// Adds (or replaces) the schedule and sets its timer.
    #[handler]
    async fn add(&self, ctx: ObjectContext<'_>, request: Json<ScheduleRequest>) -> HandlerResult<Json<ScheduleInfo>> {
        let request = request.into_inner();
        let parsed = cron(&request.cron)?;
        let generation = ctx.get::<u64>(GENERATION).await?.unwrap_or(0) + 1;
        let now = now_ms(&ctx).await?;
        ctx.set(GENERATION, generation);
        ctx.set(DEFINITION, Json(request.clone()));
        set_timer(&ctx, &parsed, generation, now, now);
        Ok(Json(ScheduleInfo {
            next_ms: next_after(&parsed, now),
            schedule: Some(request),
            firings: Vec::new(),
        }))
    }

    /// Removes the schedule: its pending timer finds nothing to fire.
    #[handler]
    async fn remove(&self, ctx: ObjectContext<'_>) -> HandlerResult<bool> {
        let had = ctx.get::<Json<ScheduleRequest>>(DEFINITION).await?.is_some();
        let generation = ctx.get::<u64>(GENERATION).await?.unwrap_or(0) + 1;
        ctx.clear(DEFINITION);
        ctx.set(GENERATION, generation);
        Ok(had)
    }

    /// A timer came due: the run is sent to its session, the firing
    /// recorded, the next timer set.
    #[handler]
    async fn fire(&self, ctx: ObjectContext<'_>, due: Json<Due>) -> HandlerResult<()> {
        let Due { generation, due_ms } = due.into_inner();
        if ctx.get::<u64>(GENERATION).await?.unwrap_or(0) != generation {
            return Ok(());
        }
        let Some(Json(schedule)) = ctx.get::<Json<ScheduleRequest>>(DEFINITION).await? else {
            return Ok(());
        };
        let parsed = cron(&schedule.cron)?;
        let now = now_ms(&ctx).await?;
        // Due times that passed while nothing could fire: one firing
        // stands for them all.
        let mut missed = 0u32;
        let mut at = due_ms;
        while let Some(next) = next_after(&parsed, at).filter(|n| *n <= now) {
            missed += 1;
            at = next;
            if missed >= 10_000 {
                break;
            }
        }
        let session = schedule
            .session
            .clone()
            .unwrap_or_else(|| format!("{}-{due_ms}", ctx.key()));
        ctx.request::<Json<RunRequest>, ()>(
            RequestTarget::object("ZidaneAgent", &session, "run"),
            Json(schedule.run.clone()),
        )
        .idempotency_key(format!("schedule-{}-{due_ms}", ctx.key()))
        .send();
        let mut firings = ctx
            .get::<Json<Vec<ScheduleFiring>>>(FIRINGS)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        firings.push(ScheduleFiring {
            due_ms,
            fired_ms: now,
            missed,
            session,
        });
        let drop = firings.len().saturating_sub(KEPT);
        firings.drain(..drop);
        ctx.set(FIRINGS, Json(firings));
        set_timer(&ctx, &parsed, generation, now, now);
        Ok(())
    }

    /// The schedule, its next due time and its last firings.
    #[handler]
    async fn get(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<ScheduleInfo>> {
        let schedule = ctx
            .get::<Json<ScheduleRequest>>(DEFINITION)
            .await?
            .map(Json::into_inner);
        let firings = ctx
            .get::<Json<Vec<ScheduleFiring>>>(FIRINGS)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        let after = firings.last().map_or(0, |f| f.fired_ms.max(f.due_ms));
        let next_ms = match &schedule {
            Some(s) => cron(&s.cron).ok().and_then(|c| next_after(&c, after)),
            None => None,
        };
        Ok(Json(ScheduleInfo {
            schedule,
            next_ms,
            firings,
        }))
    }
}
