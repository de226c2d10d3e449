//! Building a turn's request: compaction before it, the transcript's
//! appends, `context:transform`, pairing repair, `system:transform` and
//! `turn:before`.

use std::sync::Arc;

use zidane_provider::{
    ContentBlock, DocumentSource, ImageSource, Message, ProviderError, Role, SessionTurn, StreamOptions,
    ToolResultContent, TurnUsage,
};

use crate::error::RunErrorKind;
use crate::pairing::{ends_with_user_message, ensure_tool_result_pairing};
use zidane_core::events::{
    ContentRefBlock, ContentRefResolve, ContentRefResolveInit, ContextTransform, PairingRepair, SystemTransform,
    TurnBefore,
};
use zidane_core::events::{
    PairingRepairInit, SharedError, StreamError, StreamErrorInit, SystemTransformInit, TurnBeforeInit,
};
use zidane_core::seams::CompactCheck;

use super::{RunCx, RunLoop, RunOptions, tracing_warn};

impl RunLoop {
    /// Lets the compactor replace the conversation before the next request.
    pub(crate) async fn maybe_compact(&self, cx: &RunCx) {
        let Some(compactor) = &self.inner.config.compactor else {
            return;
        };
        // Before this run's first request (a resumed run, a new prompt on a
        // long session), the conversation's last usage says how big the
        // context is. The next request holds that input, the answer to it
        // and whatever came since.
        let usage = cx.stats.turn_usage.last().cloned().or_else(|| self.last_usage());
        let last_input_tokens = usage.as_ref().map(|u| u.input + u.cache_read + u.cache_creation);
        let expected_input_tokens = last_input_tokens
            .zip(usage.as_ref())
            .map(|(input, u)| input + u.output + self.tokens_since_last_usage());
        // Asked first, so a turn copies the transcript only when a
        // compaction may actually happen.
        if !compactor.wants_check(expected_input_tokens) {
            return;
        }
        let turns = self.inner.lock().turns.clone();
        let check = CompactCheck {
            run_id: &cx.run_id,
            turn: cx.turn,
            turns: &turns,
            last_input_tokens,
            expected_input_tokens,
            signal: &cx.signal,
        };
        if let Some(compacted) = compactor.before_request(check).await {
            self.replace_turns(compacted);
        }
    }

    /// A request the provider refused as larger than its window, which
    /// eliding could not save: the compactor's overflow compaction, and the
    /// turn asks again (once). Without one, the model call fails for good
    /// (`stream:error`).
    pub(crate) async fn compact_for_overflow(
        &self,
        cx: &mut RunCx,
        turn_id: &str,
        error: ProviderError,
        model: &str,
    ) -> Result<(), RunErrorKind> {
        cx.overflow_compacted = true;
        if let Some(compactor) = &self.inner.config.compactor {
            let turns = self.inner.lock().turns.clone();
            let check = CompactCheck {
                run_id: &cx.run_id,
                turn: cx.turn,
                turns: &turns,
                last_input_tokens: None,
                expected_input_tokens: None,
                signal: &cx.signal,
            };
            if let Some(compacted) = compactor.on_overflow(check).await {
                self.replace_turns(compacted);
                return Ok(());
            }
        }
        let shared: SharedError = Arc::new(error.clone());
        let mut ev = StreamError::new(stream_init!(
            StreamErrorInit {
                err: shared,
                status_code: error.status(),
                request_id: error.request_id().map(str::to_owned),
            },
            cx,
            turn_id,
            model
        ));
        self.observe(&mut ev).await;
        Err(RunErrorKind::Provider(error))
    }

    /// Tokens the conversation gained after its last turn with usage (the
    /// results and prompts the next request adds), estimated from their
    /// text (4 bytes a token; an image or a document counts as 1,600).
    fn tokens_since_last_usage(&self) -> u64 {
        let state = self.inner.lock();
        state
            .turns
            .iter()
            .rev()
            .take_while(|t| t.usage.is_none())
            .map(|t| approx_tokens(&t.content))
            .sum()
    }

    /// Replaces the conversation (after a compaction).
    pub(crate) fn replace_turns(&self, turns: Vec<SessionTurn>) {
        let mut state = self.inner.lock();
        state.messages = turns.iter().map(SessionTurn::to_message).collect();
        state.turns = turns;
        state.paired = 0;
    }

    /// Appends a turn to the conversation and returns it.
    pub(crate) fn push_turn(&self, role: Role, content: Vec<ContentBlock>, usage: Option<TurnUsage>) -> SessionTurn {
        let id = self.inner.config.clock.id();
        self.push_turn_with_id(id, role, content, usage)
    }

    pub(crate) fn push_turn_with_id(
        &self,
        id: String,
        role: Role,
        content: Vec<ContentBlock>,
        usage: Option<TurnUsage>,
    ) -> SessionTurn {
        let turn = SessionTurn {
            id,
            role,
            content: content.into(),
            created_at: self.inner.config.clock.now(),
            usage,
        };
        let mut state = self.inner.lock();
        state.messages.push(turn.to_message());
        state.turns.push(turn.clone());
        turn
    }

    pub(crate) async fn build_request(
        &self,
        cx: &RunCx,
        options: &RunOptions,
        turn_id: &str,
    ) -> Result<StreamOptions, RunErrorKind> {
        let config = &self.inner.config;
        let hooks = &config.hooks;
        let (mut messages, paired) = {
            let state = self.inner.lock();
            (state.messages.clone(), state.paired)
        };
        let own_len = messages.len();
        // Whether the request still holds the loop's own messages, by
        // pointer (only a transform handler can change that).
        let mut untouched = true;
        if hooks.has::<ContextTransform>() {
            let own = messages.clone();
            let mut transform = ContextTransform::new();
            transform.messages = messages;
            self.decide(&mut transform).await?;
            messages = transform.messages;
            untouched = messages.len() == own.len() && messages.iter().zip(&own).all(|(a, b)| a.same_as(b));
        }
        // Only the part after the checked prefix is checked, from the last
        // assistant message of the prefix on (its calls meet their results
        // there).
        let start = if untouched {
            messages[..paired.min(messages.len())]
                .iter()
                .rposition(|m| m.role() == Role::Assistant)
                .unwrap_or(0)
        } else {
            0
        };
        if !(untouched && paired == own_len) {
            let mut tail = messages.split_off(start);
            let repaired = self.repair_pairing(cx, &mut tail, Some(turn_id), start).await?;
            messages.append(&mut tail);
            if untouched && !repaired {
                self.inner.lock().paired = own_len;
            }
        }

        let system = self.request_system(cx, options, &messages, turn_id).await?;
        let (_, model) = &cx.targets[cx.target];
        let mut request = StreamOptions::new(model.clone(), self.wire_messages(cx, messages));
        request.system = (!system.is_empty()).then_some(system);
        request.tools = cx.tool_specs.clone();
        request.thinking = options.thinking;
        request.thinking_budget = options.thinking_budget;
        request.max_tokens = options.max_tokens;
        request.temperature = options.temperature;
        request.cache_ttl = options.cache_ttl;
        request.response_schema = options.response_schema.clone();

        if hooks.has::<TurnBefore>() {
            let sent = request.messages.clone();
            let mut before = TurnBefore::new(TurnBeforeInit {
                turn: cx.turn,
                turn_id: turn_id.to_owned(),
            });
            before.options = request;
            self.decide(&mut before).await?;
            request = before.options;
            // A handler that edited the messages gets them checked again.
            let edited =
                request.messages.len() != sent.len() || request.messages.iter().zip(&sent).any(|(a, b)| !a.same_as(b));
            if edited {
                self.repair_pairing(cx, &mut request.messages, Some(turn_id), 0).await?;
                // An edit that leaves the request ending with the model's
                // turn is repaired for this request, not a failed run: a
                // user turn asks the model to go on.
                if !ends_with_user_message(&request.messages) && !cx.continuing_pause {
                    tracing_warn(
                        "a turn:before handler left the request ending with the model's turn; it asks the model to continue",
                    );
                    request.messages.push(Message::user("Continue."));
                }
            }
        }
        if !ends_with_user_message(&request.messages) && !cx.continuing_pause {
            return Err(RunErrorKind::Pairing(
                "the conversation must end with a user message".into(),
            ));
        }
        // References become bytes on the wire only: the request's copies of
        // the messages change, the conversation keeps the references.
        if hooks.has::<ContentRefResolve>() {
            self.resolve_refs(&mut request.messages).await;
        }
        Ok(request)
    }

    /// The request's system prompt: the run's (or the loop's), through
    /// `system:transform`.
    async fn request_system(
        &self,
        cx: &RunCx,
        options: &RunOptions,
        messages: &[Message],
        turn_id: &str,
    ) -> Result<String, RunErrorKind> {
        let config = &self.inner.config;
        let system = options
            .system
            .clone()
            .or_else(|| config.system.clone())
            .unwrap_or_default();
        if !config.hooks.has::<SystemTransform>() {
            return Ok(system);
        }
        let session = config.sink.as_ref().and_then(|sink| sink.session(self.turns()));
        let mut sys = SystemTransform::new(SystemTransformInit {
            session,
            messages: messages.to_vec(),
            session_id: options.session_id.clone(),
            turn: cx.turn,
            turn_id: turn_id.to_owned(),
        });
        sys.system = system;
        self.decide(&mut sys).await?;
        Ok(sys.system)
    }

    /// Asks `content-ref:resolve` for each referenced image or document of
    /// `messages` and puts the bytes a handler gave in its place.
    async fn resolve_refs(&self, messages: &mut [Message]) {
        for message in messages.iter_mut() {
            if !message
                .content()
                .iter()
                .any(|b| matches!(b, ContentBlock::ContentRef { .. }))
            {
                continue;
            }
            let refs: Vec<(usize, ContentRefBlock)> = message
                .content()
                .iter()
                .enumerate()
                .filter_map(|(i, b)| match b {
                    ContentBlock::ContentRef {
                        reference,
                        kind,
                        media_type,
                    } => Some((
                        i,
                        ContentRefBlock {
                            reference: reference.clone(),
                            kind: kind.clone(),
                            media_type: media_type.clone(),
                        },
                    )),
                    _ => None,
                })
                .collect();
            for (i, block) in refs {
                let mut ev = ContentRefResolve::new(ContentRefResolveInit {
                    block: block.clone(),
                    child_id: None,
                    depth: Some(self.inner.config.depth),
                });
                self.observe(&mut ev).await;
                let Some(data) = ev.data else { continue };
                let resolved = match block.kind.as_str() {
                    "image" => ContentBlock::Image {
                        source: ImageSource::Base64 {
                            media_type: block.media_type.unwrap_or_else(|| "image/png".into()),
                            data,
                        },
                    },
                    "document" => ContentBlock::Document {
                        source: DocumentSource::Base64 {
                            media_type: block.media_type.unwrap_or_else(|| "application/pdf".into()),
                            data,
                        },
                        title: None,
                    },
                    _ => continue,
                };
                message.content_mut()[i] = resolved;
            }
        }
    }

    /// Canonical tool names become the model-facing aliases (only messages
    /// carrying an aliased call are copied; the rest keep their wire bytes).
    pub(crate) fn wire_messages(&self, cx: &RunCx, mut messages: Vec<Message>) -> Vec<Message> {
        let tools = &cx.tools;
        if !tools.has_aliases() {
            return messages;
        }
        for message in &mut messages {
            let aliased = message.content().iter().any(|b| match b {
                ContentBlock::ToolUse { name, .. } => tools.wire_name(name) != name,
                _ => false,
            });
            if aliased {
                for block in message.content_mut() {
                    if let ContentBlock::ToolUse { name, .. } = block {
                        *name = tools.wire_name(name).to_owned();
                    }
                }
            }
        }
        messages
    }

    /// Runs the pairing pass; returns whether it repaired anything.
    pub(crate) async fn repair_pairing(
        &self,
        cx: &RunCx,
        messages: &mut Vec<Message>,
        turn_id: Option<&str>,
        offset: usize,
    ) -> Result<bool, RunErrorKind> {
        let repairs = ensure_tool_result_pairing(messages);
        if repairs.is_empty() {
            return Ok(false);
        }
        if cx.behavior.strict_tool_pairing {
            let first = &repairs[0];
            return Err(RunErrorKind::Pairing(format!(
                "{:?} for `{}`",
                first.kind, first.tool_use_id
            )));
        }
        for repair in repairs {
            let mut ev = PairingRepair::new(PairingRepairInit {
                kind: repair.kind,
                tool_use_id: repair.tool_use_id,
                message_index: repair.message_index + offset,
                turn_id: turn_id.map(str::to_owned),
            });
            self.observe(&mut ev).await;
        }
        Ok(true)
    }
}

/// A rough size of some content in tokens: its text at 4 bytes a token,
/// an image or a document at 1,600.
fn approx_tokens(content: &[ContentBlock]) -> u64 {
    const MEDIA: usize = 1600 * 4;
    let bytes: usize = content
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.len(),
            ContentBlock::Thinking { thinking, .. } => thinking.len(),
            ContentBlock::RedactedThinking { data } => data.len(),
            ContentBlock::ToolUse { name, input, .. } | ContentBlock::ServerToolUse { name, input, .. } => {
                name.len() + input.to_string().len()
            }
            ContentBlock::ToolResult { content, .. } => match content {
                ToolResultContent::Text(text) => text.len(),
                ToolResultContent::Parts(parts) => approx_tokens(parts) as usize * 4,
            },
            ContentBlock::ServerToolResult { content, .. } | ContentBlock::Unknown(content) => {
                content.to_string().len()
            }
            ContentBlock::Image { .. } | ContentBlock::Document { .. } | ContentBlock::ContentRef { .. } => MEDIA,
        })
        .sum();
    (bytes / 4) as u64
}
