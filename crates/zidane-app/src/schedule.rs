//! Schedules: a prompt that runs in a folder each time a cron expression
//! comes due, kept in the sessions file so that every `zidane serve` on
//! that file sees the same ones and exactly one of them fires each due
//! time.
//!
//! A schedule is a record kept as a session, `~schedule/NAME` (listings,
//! `--resume` and pruning leave such records out): its definition and its
//! state (the last due time claimed, what its firings cost, the last
//! firings and how they ended) are two metadata keys. A server claims a
//! due time by taking the record's lease and writing the claim fenced on
//! it, so a second server reading the record after that sees the claim,
//! and one that tries while the first holds the lease gets nothing.
//!
//! A server that was down when a schedule came due fires it once when it
//! comes back, whatever the number of due times it missed, and the firing
//! records that number.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use chrono::{Local, TimeZone};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use zidane::agent::{Goal, SessionStore};
use zidane::durable::{CheckpointBackend, CheckpointRuntime, LeaseError, SessionWrite};

use crate::Error;

/// What starts a schedule record's session id, after which its name.
pub const SCHEDULE_SESSION: &str = "~schedule/";

/// The metadata key of a schedule's definition.
pub const DEFINITION_KEY: &str = "zidane.schedule";

/// The metadata key of a schedule's state.
pub const STATE_KEY: &str = "zidane.schedule.state";

/// The metadata key, on a session a firing ran in, of the schedule and the
/// due time it ran for.
pub const FIRED_KEY: &str = "zidane.scheduled";

/// Most turns of one firing's run, unless the schedule says otherwise.
pub const DEFAULT_MAX_TURNS: u32 = 50;

/// How many firings a schedule's state keeps.
const KEPT_FIRINGS: usize = 20;

/// Most due times counted as missed (a schedule every minute down for a
/// year counts to here and says "at least").
const MOST_MISSED: u32 = 10_000;

/// A schedule, as `zidane schedule add` makes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Its name (unique in the sessions file).
    pub name: String,
    /// When it fires: a cron expression (five fields, or six with seconds),
    /// in this machine's local time.
    pub cron: String,
    /// The folder its runs work in.
    pub folder: PathBuf,
    /// The prompt each firing runs.
    pub prompt: String,
    /// The goal each firing pursues, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<Goal>,
    /// The session every firing runs in (default: a new one each time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Most turns of one firing.
    pub max_turns: u32,
    /// Most spent by all its firings together, in USD; once reached, it
    /// fires no more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
    /// When it was made (epoch ms): due times before it never count.
    pub created_ms: u64,
}

/// A schedule's state, written by the servers that fire it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScheduleState {
    /// The last due time claimed (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_due_ms: Option<u64>,
    /// What its firings spent, in USD.
    #[serde(default)]
    pub spent: f64,
    /// Its last firings, the newest last.
    #[serde(default)]
    pub firings: Vec<Firing>,
}

/// One firing of a schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Firing {
    /// The due time it fired for (epoch ms).
    pub due_ms: u64,
    /// When it started (epoch ms).
    pub started_ms: u64,
    /// Earlier due times that passed with no server to fire them.
    #[serde(default)]
    pub missed: u32,
    /// The session it ran in.
    pub session: String,
    /// The server that fired it (`pid@host`).
    pub server: String,
    /// How it ended (`None`: running, or its server stopped first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// When it ended (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
    /// What it spent, in USD.
    #[serde(default)]
    pub cost: f64,
}

/// A cron expression, read: five fields (minute, hour, day of month,
/// month, day of week) or six with seconds first, and the usual
/// shorthands (`@hourly`, `@daily`, …).
pub fn parse_cron(text: &str) -> Result<croner::Cron, Error> {
    croner::Cron::from_str(text.trim()).map_err(|e| {
        Error::usage(format!(
            "`{text}` is not a cron expression like \"0 9 * * 1-5\" (minute hour day-of-month month day-of-week): {e}"
        ))
    })
}

/// The first due time of `cron` after `after_ms` (epoch ms), in local time.
pub fn next_after(cron: &croner::Cron, after_ms: u64) -> Option<u64> {
    let start = Local.timestamp_millis_opt(after_ms as i64).single()?;
    let next = cron.find_next_occurrence(&start, false).ok()?;
    u64::try_from(next.timestamp_millis()).ok()
}

/// The due times of `cron` in `(after_ms, now_ms]`: the latest, and how
/// many there were (at most 10,000).
pub fn due_between(cron: &croner::Cron, after_ms: u64, now_ms: u64) -> Option<(u64, u32)> {
    let mut at = after_ms;
    let mut latest = None;
    let mut count = 0u32;
    while let Some(next) = next_after(cron, at).filter(|next| *next <= now_ms) {
        latest = Some(next);
        count += 1;
        if count >= MOST_MISSED {
            // Too many to count one by one: the latest is what fires.
            let last = cron
                .find_previous_occurrence(&Local.timestamp_millis_opt(now_ms as i64).single()?, true)
                .ok()
                .and_then(|t| u64::try_from(t.timestamp_millis()).ok());
            return Some((last.unwrap_or(next), count));
        }
        at = next;
    }
    latest.map(|latest| (latest, count))
}

/// The session id of schedule `name`.
pub fn record_id(name: &str) -> String {
    format!("{SCHEDULE_SESSION}{name}")
}

/// Whether `name` can name a schedule: letters, digits, `-`, `_` and `.`,
/// up to 64 of them.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Keeps `schedule` in the sessions file. An error when its name is taken,
/// its cron expression does not read, or its folder is not one.
pub async fn add(runtime: &CheckpointRuntime, schedule: &Schedule) -> Result<(), Error> {
    if !valid_name(&schedule.name) {
        return Err(Error::usage(format!(
            "`{}` cannot name a schedule: use letters, digits, `-`, `_` and `.` (64 at most)",
            schedule.name
        )));
    }
    parse_cron(&schedule.cron)?;
    if !schedule.folder.is_dir() {
        return Err(Error::usage(format!("{} is not a folder", schedule.folder.display())));
    }
    let store = runtime.sqlite();
    let id = record_id(&schedule.name);
    let stored = |e| Error::run(format!("cannot write the schedule: {e}"));
    if store.load(&id).await.map_err(stored)?.is_some() {
        return Err(Error::usage(format!(
            "a schedule named `{}` exists: `zidane schedule remove {}` first, or choose another --name",
            schedule.name, schedule.name
        )));
    }
    store.create(&id, schedule.created_ms).await.map_err(stored)?;
    let definition = serde_json::to_value(schedule).map_err(|e| Error::run(e.to_string()))?;
    store.set_meta(&id, DEFINITION_KEY, &definition).await.map_err(stored)
}

/// Every schedule in the sessions file, with its state, by name. A record
/// that does not read is left out.
pub async fn list(runtime: &CheckpointRuntime) -> Result<Vec<(Schedule, ScheduleState)>, Error> {
    let store = runtime.sqlite();
    let listed = store
        .list()
        .await
        .map_err(|e| Error::run(format!("cannot read the schedules: {e}")))?;
    let mut schedules = Vec::new();
    for info in listed.iter().filter(|s| s.id.starts_with(SCHEDULE_SESSION)) {
        if let Some(found) = load(runtime, &info.id).await? {
            schedules.push(found);
        }
    }
    schedules.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    Ok(schedules)
}

async fn load(runtime: &CheckpointRuntime, id: &str) -> Result<Option<(Schedule, ScheduleState)>, Error> {
    let stored = runtime
        .sqlite()
        .load(id)
        .await
        .map_err(|e| Error::run(format!("cannot read the schedules: {e}")))?;
    let Some(stored) = stored else {
        return Ok(None);
    };
    let Some(schedule) = stored
        .metadata
        .get(DEFINITION_KEY)
        .and_then(|v| serde_json::from_value::<Schedule>(v.clone()).ok())
    else {
        return Ok(None);
    };
    let state = stored
        .metadata
        .get(STATE_KEY)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    Ok(Some((schedule, state)))
}

/// Removes schedule `name` (its firings' sessions stay). `false` when
/// there was none.
pub async fn remove(runtime: &CheckpointRuntime, name: &str) -> Result<bool, Error> {
    runtime
        .sqlite()
        .delete_session(&record_id(name))
        .await
        .map_err(|e| Error::run(format!("cannot remove the schedule: {e}")))
}

/// When a schedule fires next, after `now_ms` (`None`: never, or its
/// budget is spent).
pub fn next_firing(schedule: &Schedule, state: &ScheduleState, now_ms: u64) -> Option<u64> {
    if spent(schedule, state) {
        return None;
    }
    let cron = parse_cron(&schedule.cron).ok()?;
    next_after(&cron, now_ms.max(schedule.created_ms))
}

/// Whether the schedule's budget is spent.
pub fn spent(schedule: &Schedule, state: &ScheduleState) -> bool {
    schedule.max_cost.is_some_and(|max| state.spent >= max)
}

/// A due time this server claimed: it fires now.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The schedule.
    pub schedule: Schedule,
    /// The firing, as recorded.
    pub firing: Firing,
}

/// Claims the latest due time of schedule `name` at `now_ms` for this
/// server, when it has one nobody claimed: the firing is recorded (with
/// the session `session` names for it) before this returns. `None` when
/// nothing is due, the budget is spent, or another server holds the
/// schedule right now (it is firing it).
pub async fn claim(
    runtime: &Arc<CheckpointRuntime>,
    name: &str,
    now_ms: u64,
    session: impl FnOnce(&Schedule) -> String,
) -> Result<Option<Claim>, Error> {
    let id = record_id(name);
    // Quick look first: most checks find nothing due and take no lease.
    let Some((schedule, state)) = load(runtime, &id).await? else {
        return Ok(None);
    };
    if due(&schedule, &state, now_ms).is_none() {
        return Ok(None);
    }
    match Arc::clone(runtime).acquire(id.clone()).await {
        Ok(_) => {}
        Err(LeaseError::Held(_)) => return Ok(None),
        Err(LeaseError::Store(e)) => return Err(Error::run(format!("cannot claim the schedule: {e}"))),
    }
    let claimed = claim_held(runtime, &id, now_ms, session).await;
    runtime.release(&id);
    claimed
}

/// [`claim`], with the lease held: read again, then write the claim
/// fenced on the lease.
async fn claim_held(
    runtime: &Arc<CheckpointRuntime>,
    id: &str,
    now_ms: u64,
    session: impl FnOnce(&Schedule) -> String,
) -> Result<Option<Claim>, Error> {
    let Some((schedule, mut state)) = load(runtime, id).await? else {
        return Ok(None);
    };
    let Some((due_ms, count)) = due(&schedule, &state, now_ms) else {
        return Ok(None);
    };
    let firing = Firing {
        due_ms,
        started_ms: now_ms,
        missed: count.saturating_sub(1),
        session: session(&schedule),
        server: server_name(),
        outcome: None,
        ended_ms: None,
        cost: 0.0,
    };
    state.last_due_ms = Some(due_ms);
    state.firings.push(firing.clone());
    let drop = state.firings.len().saturating_sub(KEPT_FIRINGS);
    state.firings.drain(..drop);
    write_state(runtime, id, &state).await?;
    Ok(Some(Claim { schedule, firing }))
}

/// The latest unclaimed due time of a schedule at `now_ms`, and how many
/// due times there were since the last claim.
fn due(schedule: &Schedule, state: &ScheduleState, now_ms: u64) -> Option<(u64, u32)> {
    if spent(schedule, state) {
        return None;
    }
    let cron = parse_cron(&schedule.cron).ok()?;
    let after = state.last_due_ms.unwrap_or(0).max(schedule.created_ms);
    due_between(&cron, after, now_ms)
}

/// Records how the firing for `due_ms` ended, and what it cost.
pub async fn settle(
    runtime: &Arc<CheckpointRuntime>,
    name: &str,
    due_ms: u64,
    outcome: String,
    cost: f64,
) -> Result<(), Error> {
    let id = record_id(name);
    // The lease is held only for the moment of a write: wait out another
    // server's claim rather than lose the outcome.
    let mut tries = 0;
    loop {
        match Arc::clone(runtime).acquire(id.clone()).await {
            Ok(_) => break,
            Err(LeaseError::Held(_)) if tries < 50 => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(e) => return Err(Error::run(format!("cannot record the firing's outcome: {e}"))),
        }
    }
    let settled = async {
        let Some((_, mut state)) = load(runtime, &id).await? else {
            return Ok(());
        };
        state.spent += cost;
        if let Some(firing) = state.firings.iter_mut().rev().find(|f| f.due_ms == due_ms) {
            firing.outcome = Some(outcome);
            firing.ended_ms = Some(crate::now_ms());
            firing.cost = cost;
        }
        write_state(runtime, &id, &state).await
    }
    .await;
    runtime.release(&id);
    settled
}

async fn write_state(runtime: &CheckpointRuntime, id: &str, state: &ScheduleState) -> Result<(), Error> {
    let value: Value = serde_json::to_value(state).map_err(|e| Error::run(e.to_string()))?;
    let write = SessionWrite::SetMeta {
        id: id.to_owned(),
        key: STATE_KEY.to_owned(),
        value,
    };
    CheckpointBackend::write_session(runtime, id, vec![write])
        .await
        .map_err(|e| Error::run(format!("cannot write the schedule's state: {e}")))
}

/// This process, as a firing names its server.
fn server_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    format!("{}@{host}", std::process::id())
}

/// An epoch-ms time as this machine's local time, for people.
pub fn local_time(ms: u64) -> String {
    Local
        .timestamp_millis_opt(ms as i64)
        .single()
        .map_or_else(|| ms.to_string(), |t| t.format("%Y-%m-%d %H:%M").to_string())
}

#[cfg(test)]
mod tests;
