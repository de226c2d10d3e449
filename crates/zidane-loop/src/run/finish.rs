//! Finishing a turn: the assistant turn recorded with its usage and cost,
//! caps checked, pending calls closed, turns flushed to the sink, and the
//! structured output validated.

use std::sync::Arc;
use zidane_core::seams::{StaleEpochError, TurnMark};

use serde_json::Value;
use zidane_provider::{AssistantMessage, ContentBlock, FinishReason, Role, SessionTurn, ToolResultContent};

use crate::error::{BudgetCap, RunErrorKind};
use zidane_core::events::{CumulativeUsage, MessageError, Output, ToolCounts, TurnAfter, TurnToolCounts, Usage};
use zidane_core::events::{OutputInit, TurnAfterInit, UsageInit};

use super::{RunCx, RunLoop, tracing_warn};

impl RunLoop {
    /// Calls whose arguments did not parse: repaired when the repair is
    /// unambiguous, otherwise kept and answered with an error.
    fn incomplete_calls(
        cx: &mut RunCx,
        calls: Vec<zidane_provider::IncompleteToolCall>,
        cut_off: bool,
        content: &mut Vec<ContentBlock>,
    ) {
        // A call whose arguments were cut off (the output limit) or do not
        // parse is kept in the turn and answered with an error the model can
        // act on, never dropped in silence.
        cx.malformed.clear();
        cx.repairs.clear();
        for call in calls {
            // A small model's near-miss (a fence, trailing commas, Python
            // literals…) runs as meant, and the repair is reported.
            if !cut_off && let Some(repaired) = crate::repair::repair(&call.partial_json) {
                cx.repairs.insert(call.id.clone(), repaired.notes);
                content.push(ContentBlock::ToolUse {
                    id: call.id,
                    name: call.name,
                    input: repaired.input,
                });
                continue;
            }
            let mut shown: String = call.partial_json.chars().take(200).collect();
            if shown.len() < call.partial_json.len() {
                shown.push('…');
            }
            let reason = if cut_off {
                format!(
                    "Tool error: the arguments of this `{}` call were cut off by the output token limit before they were complete, so nothing ran. Send a shorter call (split a large file into several edits) or ask for fewer tokens at once.",
                    call.name
                )
            } else {
                let expected = cx
                    .tools
                    .get(&call.name)
                    .map(|tool| {
                        format!(
                            " Send the arguments as one JSON object (no code fence, double-quoted keys and strings), shaped like {} per this schema: {}",
                            crate::repair::example(tool.input_schema()),
                            tool.input_schema()
                        )
                    })
                    .unwrap_or_default();
                format!(
                    "Tool error: the arguments of this `{}` call are not a valid JSON object, so nothing ran. Received: {shown}.{expected}",
                    call.name
                )
            };
            cx.malformed.insert(call.id.clone(), reason);
            content.push(ContentBlock::ToolUse {
                id: call.id,
                name: call.name,
                input: Value::Object(serde_json::Map::new()),
            });
        }
    }

    /// Appends the assistant turn, updates the statistics, emits `turn:after`
    /// and `usage`.
    pub(crate) async fn finish_turn(&self, cx: &mut RunCx, message: AssistantMessage, turn_id: &str) -> SessionTurn {
        let config = &self.inner.config;
        let model = cx.targets[cx.target].1.clone();
        let mut usage = message.usage.clone();
        usage.model_id = Some(model.clone());
        usage.cost = config.pricing.cost(&model, &usage);
        let mut content = message.content;
        let cut_off = message.finish_reason == FinishReason::Length;
        Self::incomplete_calls(cx, message.incomplete_tool_calls, cut_off, &mut content);
        let mut turn_counts = ToolCounts::new();
        let mut seen_ids = std::collections::BTreeSet::new();
        for block in &mut content {
            if let ContentBlock::ToolUse { id, name, .. } = block {
                // Two calls under one id would share one result: the later is
                // re-keyed, so each is answered.
                if !seen_ids.insert(id.clone()) {
                    let mut n = 2;
                    while !seen_ids.insert(format!("{id}_{n}")) {
                        n += 1;
                    }
                    *id = format!("{id}_{n}");
                }
                let canonical = cx.tools.canonical(name).to_owned();
                *turn_counts.entry(canonical.clone()).or_insert(0) += 1;
                *name = canonical;
            }
        }
        // A model that answered nothing at all leaves no turn: an empty
        // assistant message would make the next request invalid.
        let turn = if content.is_empty() {
            SessionTurn {
                id: turn_id.to_owned(),
                role: Role::Assistant,
                content: content.into(),
                created_at: self.inner.config.clock.now(),
                usage: Some(usage.clone()),
            }
        } else {
            self.push_turn_with_id(turn_id.to_owned(), Role::Assistant, content, Some(usage.clone()))
        };
        let stats = &mut cx.stats;
        stats.add_turn(&usage);
        let cumulative = CumulativeUsage {
            input: stats.totals.input,
            output: stats.totals.output,
            cache_read: stats.totals.cache_read,
            cache_creation: stats.totals.cache_creation,
            cost: stats.totals.cost,
            turns: stats.turns,
        };
        let run_counts = cx.run_counts.lock().clone();
        let mut after = TurnAfter::new(TurnAfterInit {
            aborted: cx.signal.is_aborted(),
            cumulative_usage: cumulative,
            message: turn.clone(),
            tool_counts: TurnToolCounts {
                run: run_counts,
                turn: turn_counts,
            },
            turn: cx.turn,
            turn_id: turn_id.to_owned(),
            usage: usage.clone(),
        });
        self.observe(&mut after).await;
        let mut ev = Usage::new(UsageInit {
            total_in: cx.stats.totals.input,
            total_out: cx.stats.totals.output,
            turn: cx.turn,
            turn_id: turn_id.to_owned(),
            usage,
        });
        self.observe(&mut ev).await;
        turn
    }

    pub(crate) fn check_caps(&self, cx: &RunCx) -> Option<RunErrorKind> {
        let stats = &cx.stats;
        if let (Some(max), Some(cost)) = (cx.behavior.max_cost_usd, stats.totals.cost)
            && cost > max
        {
            return Some(RunErrorKind::BudgetExceeded {
                cap: BudgetCap::CostUsd,
                limit: max,
                observed: cost,
            });
        }
        let total = stats.totals.input + stats.totals.output + stats.totals.cache_read + stats.totals.cache_creation;
        if let Some(max) = cx.behavior.max_total_tokens
            && total > max
        {
            return Some(RunErrorKind::BudgetExceeded {
                cap: BudgetCap::TotalTokens,
                limit: max as f64,
                observed: total as f64,
            });
        }
        None
    }

    /// Answers every call of the last assistant turn that has no result yet,
    /// so the history stays paired.
    pub(crate) async fn close_pending_calls(&self, text: &str) {
        let pending: Vec<ContentBlock> = {
            let state = self.inner.lock();
            let Some(last) = state.messages.last().filter(|m| m.role() == Role::Assistant) else {
                return;
            };
            last.content()
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, .. } => Some(ContentBlock::ToolResult {
                        tool_use_id: id.clone(),
                        content: ToolResultContent::Text(text.to_owned()),
                        is_error: true,
                    }),
                    _ => None,
                })
                .collect()
        };
        let last = self.inner.lock().turns.last().cloned();
        if pending.is_empty() {
            if let Some(last) = last {
                self.flush(&[last]).await;
            }
            return;
        }
        let results = self.push_turn(Role::User, pending, None);
        if let Some(last) = last {
            self.flush(&[last, results]).await;
        }
    }

    /// Hands turns to the sink, after any it could not save before (in
    /// order, in one flush). A failing sink is retried twice (after 50 ms,
    /// then 200 ms); when it still fails the turns are kept for the next
    /// flush and the failure fails the run at its next turn boundary.
    pub(crate) async fn flush(&self, turns: &[SessionTurn]) {
        let Some(sink) = &self.inner.config.sink else {
            return;
        };
        let batch: Vec<SessionTurn> = {
            let mut state = self.inner.lock();
            if state.unsaved.is_empty() {
                turns.to_vec()
            } else {
                let mut batch = std::mem::take(&mut state.unsaved);
                batch.extend_from_slice(turns);
                batch
            }
        };
        let (run_id, turn) = self.inner.lock().mark.clone().unwrap_or_default();
        let mark = TurnMark { run_id: &run_id, turn };
        let mut last = None;
        for delay in [None, Some(50), Some(200)] {
            if let Some(ms) = delay {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            }
            match sink.flush(&batch, mark).await {
                Ok(()) => return,
                Err(e) => {
                    // Another process owns the session now: retrying cannot
                    // help, and this process must write nothing more.
                    if let Some(stale) = e.downcast_ref::<StaleEpochError>() {
                        let mut state = self.inner.lock();
                        state.stale = Some(stale.clone());
                        state.unsaved = batch;
                        return;
                    }
                    last = Some(e);
                }
            }
        }
        let error = last.unwrap_or_else(|| Arc::new(MessageError("the turns could not be saved".into())));
        tracing_warn(&format!("{} turn(s) could not be saved: {error}", batch.len()));
        let mut state = self.inner.lock();
        state.unsaved = batch;
        state.save_failure = Some(error);
    }

    /// The save failure to report, as the run's error.
    pub(crate) fn take_save_failure(&self) -> Option<RunErrorKind> {
        let mut state = self.inner.lock();
        let error = state.save_failure.take()?;
        Some(RunErrorKind::Store {
            unsaved: state.unsaved.len(),
            error,
        })
    }

    pub(crate) async fn check_output(&self, schema: &Value, assistant: &SessionTurn) -> Result<(), String> {
        let text: String = assistant
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let trimmed = text
            .trim()
            .trim_start_matches("```json")
            .trim_start_matches("```")
            .trim_end_matches("```")
            .trim();
        let value: Value = serde_json::from_str(trimmed).map_err(|e| format!("not JSON: {e}"))?;
        let validator = jsonschema::validator_for(schema).map_err(|e| format!("the schema does not compile: {e}"))?;
        if let Some(error) = validator.iter_errors(&value).next() {
            return Err(error.to_string());
        }
        let mut ev = Output::new(OutputInit {
            output: value,
            schema: schema.clone(),
        });
        self.observe(&mut ev).await;
        Ok(())
    }
}
