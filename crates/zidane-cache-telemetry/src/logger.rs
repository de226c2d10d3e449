//! The cache-break logger: snapshots every request on `turn:before`, compares
//! each turn's cache reads on `turn:after`, and emits `cache:drift` and
//! `cache:break`.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use zidane_core::events::{
    AgentStart, CacheBreak, CacheBreakInfo, CacheDrift, CacheDriftInfo, SessionStart, TurnAfter, TurnBefore,
};
use zidane_hooks::{HookBus, HookError, HookScope};

use crate::snapshot::{CacheDimensionSnapshot, CachePromptSections, diff_cache_dimensions, snapshot_cache_dimensions};
use zidane_core::events::{CacheBreakInit, CacheDriftInit};

/// A sink for log lines.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// A sink for errors of cache-event handlers.
pub type ErrorSink = Arc<dyn Fn(&HookError) + Send + Sync>;

/// Options of [`install_cache_break_logger`]. All optional.
#[derive(Clone)]
pub struct CacheBreakLoggerOptions {
    /// Absolute floor under which a turn's cache read counts as a miss.
    /// Default `1`.
    pub expected_read_at_least: u64,
    /// A turn should read back at least this share of what the previous turn
    /// established (its cache reads plus writes). Default `0.8`; `0` leaves
    /// only the absolute floor.
    pub expected_read_ratio: f64,
    /// Where log lines go. Default: standard error.
    pub log: Option<LogSink>,
    /// Where errors of `cache:break` / `cache:drift` handlers go. Default: `log`.
    pub on_emit_error: Option<ErrorSink>,
    /// Share the comparison baseline with other loggers on the same session
    /// (top-level runs only). Default `true`.
    pub session_baseline: bool,
    /// A log line on every turn, with the dimension hashes. Default `false`.
    pub verbose: bool,
    /// System-prompt sections the host appends, so a `system` change can be
    /// traced to one of them.
    pub sections: Option<CachePromptSections>,
}

impl Default for CacheBreakLoggerOptions {
    fn default() -> Self {
        CacheBreakLoggerOptions {
            expected_read_at_least: 1,
            expected_read_ratio: 0.8,
            log: None,
            on_emit_error: None,
            session_baseline: true,
            verbose: false,
            sections: None,
        }
    }
}

impl fmt::Debug for CacheBreakLoggerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheBreakLoggerOptions")
            .field("expected_read_at_least", &self.expected_read_at_least)
            .field("expected_read_ratio", &self.expected_read_ratio)
            .field("session_baseline", &self.session_baseline)
            .field("verbose", &self.verbose)
            .finish_non_exhaustive()
    }
}

/// A completed turn: its request and what it read and wrote.
#[derive(Debug, Clone)]
struct Completed {
    snapshot: CacheDimensionSnapshot,
    cache_read: u64,
    cache_creation: u64,
}

#[derive(Default)]
struct State {
    turn: u32,
    session_id: Option<String>,
    top_level: bool,
    pending: Option<(String, u32, CacheDimensionSnapshot)>,
    previous: Option<Completed>,
}

/// Baselines of top-level runs, per session id, for this process.
fn baselines() -> &'static Mutex<HashMap<String, Completed>> {
    static BASELINES: OnceLock<Mutex<HashMap<String, Completed>>> = OnceLock::new();
    BASELINES.get_or_init(Mutex::default)
}

/// Installs the logger on `hooks`; dropping (or closing) the returned scope
/// uninstalls it. The turn counter runs over the installer's lifetime, across
/// runs.
///
/// The snapshot is taken by the logger's own `turn:before` handler, so it
/// sees what the handlers registered before it left: install it after any
/// handler that rewrites requests.
#[must_use = "dropping the returned scope uninstalls the logger at once"]
pub fn install_cache_break_logger(hooks: &HookBus, options: CacheBreakLoggerOptions) -> HookScope {
    let state: Arc<Mutex<State>> = Arc::default();
    let options = Arc::new(options);
    let scope = hooks.scope();

    let s = Arc::clone(&state);
    scope.on_sync::<SessionStart, _>(move |ev, _| {
        s.lock().session_id = Some(ev.session_id().to_owned());
        Ok(())
    });

    let (s, o) = (Arc::clone(&state), Arc::clone(&options));
    scope.on_sync::<AgentStart, _>(move |ev, _| {
        let mut state = s.lock();
        state.top_level = ev.depth() == 0;
        if o.session_baseline
            && state.top_level
            && state.previous.is_none()
            && let Some(id) = &state.session_id
        {
            state.previous = baselines().lock().get(id).cloned();
        }
        Ok(())
    });

    let (s, o) = (Arc::clone(&state), Arc::clone(&options));
    scope.on::<TurnBefore, _>(move |ev, cx| {
        let (s, o) = (Arc::clone(&s), Arc::clone(&o));
        Box::pin(async move {
            let drift = snapshot_turn(&s, &o, ev);
            if let Some(info) = drift {
                // Off the request path: the request does not wait for the
                // drift's handlers (a slow consumer never delays a turn); a
                // failing one is reported, never fatal to the run.
                let (bus, o) = (cx.bus().clone(), Arc::clone(&o));
                let emit = async move {
                    let mut event = CacheDrift::new(CacheDriftInit { info });
                    if let Err(e) = bus.emit(&mut event).await {
                        report(&o, &e);
                    }
                };
                match tokio::runtime::Handle::try_current() {
                    Ok(runtime) => drop(runtime.spawn(emit)),
                    Err(_) => emit.await,
                }
            }
            Ok(())
        })
    });

    let (s, o) = (Arc::clone(&state), Arc::clone(&options));
    scope.on::<TurnAfter, _>(move |ev, cx| {
        let (s, o) = (Arc::clone(&s), Arc::clone(&o));
        Box::pin(async move {
            if let Some(info) = compare_turn(&s, &o, ev) {
                log_break(&o, &info);
                let mut event = CacheBreak::new(CacheBreakInit { info });
                if let Err(e) = cx.bus().emit(&mut event).await {
                    report(&o, &e);
                }
            }
            Ok(())
        })
    });
    scope
}

/// The turn's snapshot, kept for its end; the drift from the previous
/// turn's, when something changed.
fn snapshot_turn(state: &Mutex<State>, o: &CacheBreakLoggerOptions, ev: &TurnBefore) -> Option<CacheDriftInfo> {
    let snapshot = snapshot_cache_dimensions(&ev.options, o.sections.as_ref());
    let mut state = state.lock();
    state.turn += 1;
    let turn = state.turn;
    let drift = state.previous.as_ref().and_then(|prev| {
        let diff = diff_cache_dimensions(&prev.snapshot, &snapshot);
        (!diff.is_empty()).then(|| CacheDriftInfo {
            changed: diff.changed,
            details: diff.details,
            diverged_at: diff.message_prefix_diverged_at,
            message_count: snapshot.message_count,
            model: snapshot.model.clone(),
            previous_message_count: prev.snapshot.message_count,
            system_sections: diff.system_sections,
            turn,
            turn_id: ev.turn_id().to_owned(),
        })
    });
    if o.verbose {
        emit_log(
            o,
            &format!(
                "cache: turn {turn} system={:08x} tools={:08x} model={} thinking={} messages={}",
                snapshot.system_hash, snapshot.tools_hash, snapshot.model, snapshot.thinking, snapshot.message_count
            ),
        );
    }
    state.pending = Some((ev.turn_id().to_owned(), turn, snapshot));
    drift
}

/// The turn's end against the previous turn's: the break, when the cache
/// read less than it should have. The turn (when it is the one
/// snapshotted) becomes the previous one.
fn compare_turn(state: &Mutex<State>, o: &CacheBreakLoggerOptions, ev: &TurnAfter) -> Option<CacheBreakInfo> {
    let usage = ev.usage();
    let mut state = state.lock();
    let (turn_id, turn, snapshot) = state.pending.take().filter(|(id, _, _)| id == ev.turn_id())?;
    let info = state.previous.as_ref().and_then(|prev| {
        let established = prev.cache_read + prev.cache_creation;
        if established == 0 {
            return None; // nothing was cached to lose
        }
        let ratio_floor = (o.expected_read_ratio * established as f64).floor() as u64;
        let floor = o.expected_read_at_least.max(ratio_floor);
        if usage.cache_read >= floor {
            return None;
        }
        let diff = diff_cache_dimensions(&prev.snapshot, &snapshot);
        Some(CacheBreakInfo {
            cache_creation: usage.cache_creation,
            cache_read: usage.cache_read,
            changed: diff.changed,
            details: diff.details,
            expected_at_least: floor,
            model: snapshot.model.clone(),
            rebilled_tokens: established.saturating_sub(usage.cache_read),
            system_sections: diff.system_sections,
            turn,
            turn_id: turn_id.clone(),
        })
    });
    let completed = Completed {
        snapshot,
        cache_read: usage.cache_read,
        cache_creation: usage.cache_creation,
    };
    if o.session_baseline
        && state.top_level
        && let Some(id) = &state.session_id
    {
        baselines().lock().insert(id.clone(), completed.clone());
    }
    state.previous = Some(completed);
    info
}

/// The logger's line about a break: when something changed, or always when
/// verbose.
fn log_break(o: &CacheBreakLoggerOptions, info: &CacheBreakInfo) {
    if info.changed.is_empty() && !o.verbose {
        return;
    }
    let what = if info.changed.is_empty() {
        "nothing changed (TTL expiry or eviction?)".to_owned()
    } else {
        info.details.values().cloned().collect::<Vec<_>>().join("; ")
    };
    emit_log(
        o,
        &format!(
            "cache-break: turn {} read {} of at least {} cached tokens, ~{} re-billed: {what}",
            info.turn, info.cache_read, info.expected_at_least, info.rebilled_tokens
        ),
    );
}

fn emit_log(options: &CacheBreakLoggerOptions, line: &str) {
    match &options.log {
        Some(log) => log(line),
        None => {
            #[allow(clippy::print_stderr)] // the documented default sink
            {
                eprintln!("{line}");
            }
        }
    }
}

fn report(options: &CacheBreakLoggerOptions, error: &HookError) {
    match &options.on_emit_error {
        Some(sink) => sink(error),
        None => emit_log(
            options,
            &format!("cache-break: '{}' handler threw: {error}", error.name()),
        ),
    }
}
