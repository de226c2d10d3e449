//! What a call ends with: error substitution, `tool:transform`,
//! `tool:after`, result caps, and the batch's results pushed.

use serde_json::Value;
use zidane_provider::{ContentBlock, Role, SessionTurn, ToolResultContent};

use crate::error::RunErrorKind;
use crate::run::{RunCx, RunLoop, tracing_warn};
use zidane_core::events::{
    BudgetExceeded, SharedError, ToolAfter, ToolError, ToolOutcome, ToolResult, ToolResultsAfter, ToolTransform,
};
use zidane_core::events::{BudgetExceededInit, ToolAfterInit, ToolErrorInit, ToolResultsAfterInit, ToolTransformInit};
use zidane_core::seams::{ArtifactRecord, TurnMark};
use zidane_core::tool::ToolOutput;

use super::{CallCx, CallResult};

impl RunLoop {
    /// Emits `tool:error` (when observed) and returns the result a handler
    /// substituted, if any.
    pub(super) async fn tool_error(
        &self,
        c: &CallCx<'_>,
        input: &Value,
        error: SharedError,
    ) -> Option<ToolResultContent> {
        if !self.inner.config.hooks.has::<ToolError>() {
            return None;
        }
        let mut ev = ToolError::new(call_init!(
            ToolErrorInit {
                input: input.clone(),
                error,
            },
            c
        ));
        self.observe(&mut ev).await;
        ev.result.take()
    }

    /// Stage 5: The result: `tool:transform` (which may rewrite it), then
    /// `tool:after`.
    pub(super) async fn finish_call(
        &self,
        c: &CallCx<'_>,
        input: &Value,
        output: ToolOutput,
        coercions: Vec<String>,
        outcome: ToolOutcome,
    ) -> CallResult {
        let (cx, call) = (c.run, c.call);
        let hooks = &self.inner.config.hooks;
        let bytes = output.content.text_len();
        let mut metadata = output.metadata;
        let content = if hooks.has::<ToolTransform>() {
            let mut transform = ToolTransform::new(call_init!(
                ToolTransformInit {
                    input: input.clone(),
                    coercions: coercions.clone(),
                    is_error: output.is_error,
                    output_bytes: bytes,
                },
                c
            ));
            transform.result = output.content;
            transform.metadata = std::mem::take(&mut metadata);
            if let Err(e) = hooks.emit(&mut transform).await {
                tracing_warn(&format!(
                    "tool:transform handler failed; the result is sent untransformed: {e}"
                ));
            }
            metadata = std::mem::take(&mut transform.metadata);
            transform.result
        } else {
            output.content
        };
        let content = cap_result(content, cx.behavior.max_result_bytes);
        if hooks.has::<ToolAfter>() {
            let mut after = ToolAfter::new(call_init!(
                ToolAfterInit {
                    input: input.clone(),
                    coercions,
                    is_error: output.is_error,
                    outcome: Some(outcome),
                    output_bytes: bytes,
                    result: content.clone(),
                    run_tool_counts: c.snapshot.clone(),
                },
                c
            ));
            self.observe(&mut after).await;
        }
        let budget_bytes = content.text_len();
        let artifacts = if self.inner.config.artifacts {
            declared_artifacts(&metadata)
        } else {
            Vec::new()
        };
        CallResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error: output.is_error,
            budget_bytes,
            artifacts,
        }
    }

    /// Pushes the tool-results turn, then enforces the output budget and
    /// queues the nudges the guards asked for.
    pub(crate) async fn push_results(
        &self,
        cx: &RunCx,
        assistant: SessionTurn,
        results: Vec<CallResult>,
        turn_id: &str,
    ) -> Result<(), RunErrorKind> {
        let content: Vec<ContentBlock> = results
            .iter()
            .map(|r| ContentBlock::ToolResult {
                tool_use_id: r.call_id.clone(),
                content: r.content.clone(),
                is_error: r.is_error,
            })
            .collect();
        let message = self.push_turn(Role::User, content, None);
        let listed: Vec<ToolResult> = results
            .iter()
            .map(|r| ToolResult {
                call_id: r.call_id.clone(),
                name: r.name.clone(),
                content: r.content.clone(),
                is_error: r.is_error,
            })
            .collect();
        let mut ev = ToolResultsAfter::new(ToolResultsAfterInit {
            message: message.clone(),
            results: listed,
            turn: cx.turn,
            turn_id: turn_id.to_owned(),
        });
        self.observe(&mut ev).await;
        self.flush(&[assistant, message]).await;
        // What the results declared, once the turns that hold them are kept.
        let records: Vec<ArtifactRecord> = results
            .iter()
            .flat_map(|r| {
                r.artifacts.iter().map(|artifact| ArtifactRecord {
                    artifact: artifact.clone(),
                    call_id: r.call_id.clone(),
                    name: r.name.clone(),
                    turn_id: turn_id.to_owned(),
                })
            })
            .collect();
        if !records.is_empty()
            && let Some(sink) = &self.inner.config.sink
        {
            let mark = TurnMark {
                run_id: &cx.run_id,
                turn: cx.turn,
            };
            sink.artifacts(&records, mark).await;
        }

        let bytes: usize = results.iter().map(|r| r.budget_bytes).sum();
        if let Some(budget) = cx.behavior.tool_output_budget
            && bytes as u64 > budget
        {
            let mut ev = BudgetExceeded::new(BudgetExceededInit {
                budget,
                bytes: bytes as u64,
                turn: cx.turn,
                turn_id: turn_id.to_owned(),
            });
            self.observe(&mut ev).await;
            self.queue_internal(format!(
                "The tool output of the last turn was {bytes} bytes, over the {budget}-byte budget. Summarize what you learned so far before calling more tools, and request less output at a time."
            ));
        }
        let nudges = std::mem::take(&mut *cx.nudges.lock());
        for nudge in nudges {
            self.queue_internal(nudge);
        }
        Ok(())
    }
}

/// A result's text cut to `max` bytes (the head kept, with a note of what
/// was cut); images and documents pass.
pub(super) fn cap_result(content: ToolResultContent, max: Option<usize>) -> ToolResultContent {
    let Some(max) = max else { return content };
    let total = content.text_len();
    if total <= max {
        return content;
    }
    let note = format!("\n[... the result was {total} bytes; cut at {max}: ask for less at a time]");
    let cut = |text: &mut String, keep: usize| {
        let mut end = keep.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    };
    match content {
        ToolResultContent::Text(mut text) => {
            cut(&mut text, max);
            text.push_str(&note);
            ToolResultContent::Text(text)
        }
        ToolResultContent::Parts(mut parts) => {
            let mut left = max;
            let mut noted = false;
            for part in &mut parts {
                if let ContentBlock::Text { text } = part {
                    if noted {
                        text.clear();
                    } else if text.len() > left {
                        cut(text, left);
                        text.push_str(&note);
                        noted = true;
                    } else {
                        left -= text.len();
                    }
                }
            }
            ToolResultContent::Parts(parts)
        }
    }
}

pub(super) fn append_text(content: &mut ToolResultContent, note: &str) {
    match content {
        ToolResultContent::Text(text) => {
            text.push_str("\n\n");
            text.push_str(note);
        }
        ToolResultContent::Parts(parts) => parts.push(ContentBlock::text(note)),
    }
}

/// The artifacts a result declares in its reserved `metadata.artifacts`
/// (an array of `{id, kind, title, data}`); entries that are not artifacts
/// are left out.
pub(super) fn declared_artifacts(
    metadata: &zidane_core::events::ToolResultMetadata,
) -> Vec<zidane_core::events::SessionArtifact> {
    metadata
        .get("artifacts")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|a| serde_json::from_value(a.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}
