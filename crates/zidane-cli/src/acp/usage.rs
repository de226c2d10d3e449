//! A session's usage over time, for charts: each model turn's tokens (cache
//! reads, cache writes, uncached input, output), cost and model, the
//! prompt-cache breaks with what changed, and the compactions. Recorded
//! from the session's events while the server holds it, after the figures
//! the sessions file keeps of the turns before (whose cache breaks are
//! found again from the figures, without their dimension).
//!
//! `_zidane/usage` answers with it:
//!
//! | field | what |
//! |---|---|
//! | `window` | the model's context window, in tokens |
//! | `turns` | `turn` (1, 2, …), `model`, `input` (uncached), `cacheRead`, `cacheWrite`, `output`, `cost` (USD or null), `context` (the prompt and answer, in tokens) |
//! | `cacheBreaks` | `turn` (the turn that read the cache again), `changed` (the dimensions: `model`, `tools`, `system`, …; empty: expired, evicted or unknown), `rebilledTokens` |
//! | `compactions` | `afterTurn`, `replaced` (messages), `effectiveTokens` (the context after it) |

use serde_json::{Value, json};
use zidane::providers::SessionTurn;
use zidane_app::{Event, TurnFigures};

/// What a cache break is, as the program's detector decides it: a turn
/// read less than this share of what the turn before had cached.
const EXPECTED_READ_RATIO: f64 = 0.8;

/// A session's usage, turn by turn.
#[derive(Debug, Default)]
pub(super) struct Ledger {
    turns: Vec<TurnFigures>,
    /// Turn (1-based), what changed, tokens read again.
    breaks: Vec<(usize, Vec<String>, u64)>,
    /// A break reported before its turn's figures.
    pending: Option<(Vec<String>, u64)>,
    /// After turn, messages replaced, context after.
    compactions: Vec<(usize, u32, Option<u64>)>,
}

impl Ledger {
    /// The figures the sessions file keeps of the turns before.
    pub(super) fn seed(&mut self, turns: &[SessionTurn]) {
        for usage in turns.iter().filter_map(|t| t.usage.as_ref()) {
            self.turns.push(TurnFigures {
                input: usage.input,
                output: usage.output,
                cache_read: usage.cache_read,
                cache_creation: usage.cache_creation,
                cost: usage.cost,
                model: usage.model_id.clone(),
            });
            let n = self.turns.len();
            if let Some(rebilled) = self.broke(n) {
                self.breaks.push((n, Vec::new(), rebilled));
            }
        }
    }

    /// Whether turn `n` (1-based) read less of the cache than the turn
    /// before had in it: the tokens read again.
    fn broke(&self, n: usize) -> Option<u64> {
        let (prev, now) = (self.turns.get(n.checked_sub(2)?)?, self.turns.get(n - 1)?);
        let established = prev.cache_read + prev.cache_creation;
        let floor = ((EXPECTED_READ_RATIO * established as f64).floor() as u64).max(1);
        (established > 0 && now.cache_read < floor).then(|| established.saturating_sub(now.cache_read))
    }

    /// Records what `event` says of usage.
    pub(super) fn record(&mut self, event: &Event) {
        match event {
            Event::TurnEnd(figures) => {
                self.turns.push(figures.clone());
                if let Some((changed, rebilled)) = self.pending.take() {
                    self.breaks.push((self.turns.len(), changed, rebilled));
                }
            }
            Event::CacheBreak {
                changed,
                rebilled_tokens,
                ..
            } => {
                // The detector and the figures see the same turn's end; the
                // break is the last turn's when its figures came first.
                let n = self.turns.len();
                let marked = self.breaks.last().is_some_and(|b| b.0 == n);
                if n > 0 && !marked && self.broke(n).is_some() {
                    self.breaks.push((n, changed.clone(), *rebilled_tokens));
                } else {
                    self.pending = Some((changed.clone(), *rebilled_tokens));
                }
            }
            Event::CompactEnd {
                replaced,
                effective_tokens,
                error: None,
            } => self.compactions.push((self.turns.len(), *replaced, *effective_tokens)),
            _ => {}
        }
    }

    /// `_zidane/usage`'s result.
    pub(super) fn report(&self, window: Option<u32>) -> Value {
        let turns: Vec<Value> = self
            .turns
            .iter()
            .enumerate()
            .map(|(i, t)| {
                json!({
                    "turn": i + 1,
                    "model": t.model,
                    "input": t.input,
                    "cacheRead": t.cache_read,
                    "cacheWrite": t.cache_creation,
                    "output": t.output,
                    "cost": t.cost,
                    "context": t.input + t.cache_read + t.cache_creation + t.output,
                })
            })
            .collect();
        let breaks: Vec<Value> = self
            .breaks
            .iter()
            .map(|(turn, changed, rebilled)| json!({ "turn": turn, "changed": changed, "rebilledTokens": rebilled }))
            .collect();
        let compactions: Vec<Value> = self
            .compactions
            .iter()
            .map(|(after, replaced, effective)| {
                json!({ "afterTurn": after, "replaced": replaced, "effectiveTokens": effective })
            })
            .collect();
        json!({ "window": window, "turns": turns, "cacheBreaks": breaks, "compactions": compactions })
    }
}
