//! Unknown tools and input validation (with coercion).

use std::sync::Arc;

use serde_json::Value;

use crate::run::RunLoop;
use crate::validate::InputValidator;
use zidane_core::events::{SharedError, ToolBefore, ToolOutcome, ToolUnknown, ValidationCoerce, ValidationReject};
use zidane_core::events::{ToolBeforeInit, ToolUnknownInit, ValidationCoerceInit, ValidationRejectInit};

use super::{CallCx, CallResult};

impl RunLoop {
    /// Stage 2: A tool nobody offers: `tool:unknown` may substitute a result.
    pub(super) async fn unknown_stage(&self, c: &CallCx<'_>, input: Value) -> CallResult {
        let (cx, name) = (c.run, &c.call.name);
        let hooks = &self.inner.config.hooks;
        let mut unknown = ToolUnknown::new(call_init!(ToolUnknownInit { input: input.clone() }, c));
        self.observe(&mut unknown).await;
        self.dispatched(c, ToolOutcome::Unknown, None, &input).await;
        if hooks.has::<ToolBefore>() {
            let mut before = ToolBefore::new(call_init!(
                ToolBeforeInit {
                    coercions: Vec::new(),
                    prior_content: None,
                    run_tool_counts: c.snapshot.clone(),
                    unknown: true,
                },
                c
            ));
            before.input = input.clone();
            self.observe(&mut before).await;
        }
        let available: Vec<&str> = cx.tools.names().collect();
        let text = format!(
            "Tool error: unknown tool `{name}`. Available tools: {}",
            available.join(", ")
        );
        if !unknown.suppress_error {
            let error: SharedError = Arc::new(zidane_core::tool::UnknownTool { name: name.clone() });
            if let Some(substitute) = self.tool_error(c, &input, error).await {
                return CallResult {
                    content: substitute,
                    ..c.result(String::new(), true)
                };
            }
        }
        match unknown.result.take() {
            Some(content) => CallResult {
                content,
                ..c.result(String::new(), false)
            },
            None => c.result(text, true),
        }
    }

    /// Stage 3: Validation against the tool's schema, with coercion of near-misses.
    pub(super) async fn validate_stage(
        &self,
        c: &CallCx<'_>,
        tool: &Arc<dyn zidane_core::tool::Tool>,
        input: Value,
    ) -> Result<(Value, Vec<String>), CallResult> {
        let (call, name) = (c.call, &c.call.name);
        let hooks = &self.inner.config.hooks;
        let validator = self.validator(name, tool.input_schema());
        match validator.validate(input) {
            Ok(mut valid) => {
                if let Some(repairs) = c.run.repairs.get(&call.id) {
                    let mut all = repairs.clone();
                    all.append(&mut valid.coercions);
                    valid.coercions = all;
                }
                if !valid.coercions.is_empty() && hooks.has::<ValidationCoerce>() {
                    let mut ev = ValidationCoerce::new(call_init!(
                        ValidationCoerceInit {
                            input: valid.input.clone(),
                            coercions: valid.coercions.clone(),
                            schema: tool.input_schema().clone(),
                        },
                        c
                    ));
                    self.observe(&mut ev).await;
                }
                Ok((valid.input, valid.coercions))
            }
            Err(reason) => {
                if hooks.has::<ValidationReject>() {
                    let mut ev = ValidationReject::new(call_init!(
                        ValidationRejectInit {
                            input: call.input.clone(),
                            reason: reason.clone(),
                            schema: tool.input_schema().clone(),
                        },
                        c
                    ));
                    self.observe(&mut ev).await;
                }
                self.dispatched(c, ToolOutcome::InvalidInput, Some(reason.clone()), call.input)
                    .await;
                // The expected shape, so a model that got it wrong can send it
                // right the next time.
                let schema = tool.input_schema();
                Err(c.result(
                    format!(
                        "Validation error: {reason}. Send arguments shaped like {} (schema: {schema})",
                        crate::repair::example(schema)
                    ),
                    true,
                ))
            }
        }
    }

    pub(super) fn validator(&self, name: &str, schema: &Value) -> Arc<InputValidator> {
        let mut cache = self.inner.validators.lock();
        Arc::clone(
            cache
                .entry(name.to_owned())
                .or_insert_with(|| Arc::new(InputValidator::new(schema))),
        )
    }
}
