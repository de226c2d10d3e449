//! The schedules a server fires (`zidane schedule add`): at each due time
//! one server on the sessions file claims the firing and runs it as a
//! served session; a due time passed while no server ran fires once, at
//! the next start, and says how many it stands for.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use zidane_app::schedule::{self, Claim};

use crate::acp::Hub;

/// How often the schedules are read again (new ones, removed ones), at
/// the longest.
const LOOK_AGAIN: Duration = Duration::from_secs(30);

/// Fires the schedules of `hub`'s sessions file, at most `most` runs at
/// once, until the server stops.
pub(super) async fn run(hub: Arc<Hub>, most: u32) {
    let slots = Arc::new(tokio::sync::Semaphore::new(most as usize));
    let running: Arc<Mutex<HashSet<String>>> = Arc::default();
    let ended = Arc::new(tokio::sync::Notify::new());
    let mut first = true;
    loop {
        let now = zidane_app::now_ms();
        let schedules = match schedule::list(hub.runtime()).await {
            Ok(schedules) => schedules,
            Err(e) => {
                eprintln!("zidane serve: {}", e.message());
                Vec::new()
            }
        };
        let mut wake = now + LOOK_AGAIN.as_millis() as u64;
        for (item, state) in &schedules {
            if let Some(next) = schedule::next_firing(item, state, now) {
                wake = wake.min(next);
            }
            // One firing of a schedule at a time: a due time that comes
            // while it runs fires when it ends.
            if running.lock().contains(&item.name) {
                continue;
            }
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                continue;
            };
            let named = |s: &schedule::Schedule| s.session.clone().unwrap_or_else(zidane_app::new_session_id);
            match schedule::claim(hub.runtime(), &item.name, now, named).await {
                Ok(Some(claim)) => {
                    running.lock().insert(item.name.clone());
                    let (hub, running, ended) = (Arc::clone(&hub), Arc::clone(&running), Arc::clone(&ended));
                    tokio::spawn(async move {
                        fire(&hub, &claim).await;
                        running.lock().remove(&claim.schedule.name);
                        drop(slot);
                        ended.notify_one();
                    });
                }
                Ok(None) => {}
                Err(e) => eprintln!("zidane serve: schedule `{}`: {}", item.name, e.message()),
            }
        }
        if first {
            first = false;
            eprintln!("zidane serve: {} schedule(s) looked at", schedules.len());
        }
        let now = zidane_app::now_ms();
        let pause = Duration::from_millis(wake.saturating_sub(now).max(200));
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = ended.notified() => {}
        }
    }
}

/// Runs one firing and records how it ended.
async fn fire(hub: &Arc<Hub>, claim: &Claim) {
    let name = &claim.schedule.name;
    let firing = &claim.firing;
    if firing.missed > 0 {
        eprintln!(
            "zidane serve: schedule `{name}` was due {} more time(s) while no server ran; it runs once now, for {}",
            firing.missed,
            schedule::local_time(firing.due_ms)
        );
    }
    eprintln!(
        "zidane serve: schedule `{name}` fires (due {}) in session {}",
        schedule::local_time(firing.due_ms),
        firing.session
    );
    let (outcome, spent) = hub.fire(claim).await;
    eprintln!("zidane serve: schedule `{name}` ended: {outcome}");
    if let Err(e) = schedule::settle(hub.runtime(), name, firing.due_ms, outcome, spent).await {
        eprintln!("zidane serve: schedule `{name}`: {}", e.message());
    }
}
