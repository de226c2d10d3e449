//! Streaming a turn: the stream hooks, retries with backoff, the fallback
//! chain and context-overflow recovery.

use std::sync::Arc;
use std::time::Duration;

use zidane_provider::{
    AssistantMessage, ContentBlock, ErrorKind, Message, MessageAccumulator, ProviderError, Role, StreamEvent,
    StreamOptions, ToolResultContent, TurnUsage,
};

use crate::error::RunErrorKind;
use zidane_core::events::{
    ContextOverflow, HistoryRepair, HistoryRepairInit, ModelFallback, ModelTarget, ProviderDiagnostic,
    ProviderDiagnosticInit, ProviderInputTransformations, ProviderInputTransformationsInit, SharedError, StreamEnd,
    StreamError, StreamProgress, StreamRetry, StreamServerToolResult, StreamServerToolUse, StreamStart, StreamText,
    StreamThinking, StreamedText,
};
use zidane_core::events::{
    ContextOverflowInit, ModelFallbackInit, StreamEndInit, StreamErrorInit, StreamProgressInit, StreamRetryInit,
    StreamServerToolResultInit, StreamServerToolUseInit, StreamStartInit, StreamTextInit, StreamThinkingInit,
};
use zidane_core::seams::{Durability, Step, StepError, StepKey, StepKind, StepValue};
use zidane_hooks::HookBus;

use super::recover::{Attempts, FailedAttempt, Next, recover};
use super::{RunCx, RunLoop, TurnFailure};

/// Per-stream bookkeeping for the stream hooks.
pub(crate) struct Streamed {
    /// The text so far, kept only while `stream:text` is observed (the
    /// accumulator holds the message itself).
    text: StreamedText,
    /// Likewise for `stream:thinking`.
    thinking: StreamedText,
    /// Bytes of text and thinking streamed (for the progress estimate and
    /// the retry's `discarded*` flags), kept always.
    text_bytes: usize,
    thinking_bytes: usize,
    /// Bytes of tool-call arguments streamed: a long argument (a whole file
    /// being written) shows as progress too.
    tool_bytes: usize,
    /// The text is kept here only (the accumulator holds the blocks'
    /// places): `stream:text` was observed when the stream started.
    keeps_text: bool,
    /// Where each text block starts in `text`, in order: (block, offset).
    segments: Vec<(usize, usize)>,
    /// Server tool calls of this stream (id, tool name): a result names
    /// the tool of the call it answers.
    server_tools: Vec<(String, String)>,
    /// Which per-event hooks are observed, asked again only when the bus
    /// changes.
    listening: Listening,
}

/// The answers of [`HookBus::has`] for the hooks a stream may fire on every
/// event, as of one [`HookBus::version`].
#[derive(Clone, Copy)]
struct Listening {
    version: u64,
    text: bool,
    thinking: bool,
    progress: bool,
}

impl Listening {
    fn of(hooks: &HookBus) -> Self {
        Listening {
            version: hooks.version(),
            text: hooks.has::<StreamText>(),
            thinking: hooks.has::<StreamThinking>(),
            progress: hooks.has::<StreamProgress>(),
        }
    }

    fn refresh(&mut self, hooks: &HookBus) {
        if hooks.version() != self.version {
            *self = Listening::of(hooks);
        }
    }
}

impl Streamed {
    fn new(listening: Listening) -> Self {
        Streamed {
            text: StreamedText::new(),
            thinking: StreamedText::new(),
            text_bytes: 0,
            thinking_bytes: 0,
            tool_bytes: 0,
            keeps_text: listening.text,
            segments: Vec::new(),
            server_tools: Vec::new(),
            listening,
        }
    }

    /// The message, with the text this stream kept itself put back in its
    /// blocks (moved, not copied, in the usual case of one text block).
    fn finish(&mut self, acc: MessageAccumulator) -> AssistantMessage {
        if !self.keeps_text {
            return acc.finish();
        }
        let text = std::mem::take(&mut self.text).into_string();
        let segments = std::mem::take(&mut self.segments);
        let texts = match segments.as_slice() {
            [] => Vec::new(),
            [(index, 0)] => vec![(*index, text)],
            _ => {
                let mut out = Vec::with_capacity(segments.len());
                for (n, (index, start)) in segments.iter().enumerate() {
                    let end = segments.get(n + 1).map_or(text.len(), |(_, s)| *s);
                    out.push((*index, text[*start..end].to_owned()));
                }
                out
            }
        };
        acc.finish_with_text(texts)
    }
}

impl RunLoop {
    /// The turn's model call as a step: a checkpoint runtime answers a call
    /// it recorded (no request is sent); otherwise the request runs, with
    /// its retries and fallbacks, inside the step.
    pub(crate) async fn stream_turn(
        &self,
        cx: &mut RunCx,
        request: StreamOptions,
        turn_id: &str,
    ) -> Result<AssistantMessage, TurnFailure> {
        let step = Step {
            key: StepKey {
                run_id: cx.run_id.clone(),
                turn: cx.turn,
                kind: StepKind::ModelCall,
                name: "model".into(),
            },
            durability: Durability::Safe,
        };
        let runtime = Arc::clone(&self.inner.config.runtime);
        let mut failure = None;
        let recorded = {
            let failure = &mut failure;
            let work = async move {
                match self.stream_attempts(cx, request, turn_id).await {
                    Ok(message) => Ok(StepValue::Model(message)),
                    Err(f) => {
                        *failure = Some(f);
                        Err(Arc::new(zidane_core::events::MessageError(
                            "the model call did not finish".into(),
                        )) as SharedError)
                    }
                }
            };
            runtime.step(step, Box::pin(work)).await
        };
        match recorded {
            Ok(StepValue::Model(message)) => Ok(message),
            Ok(other) => Err(TurnFailure::Failed(RunErrorKind::Durable(Arc::new(
                zidane_core::durable::StepMismatch {
                    asked: "model call",
                    answered: other.kind_name(),
                },
            )))),
            Err(StepError::Work(error)) => Err(failure.unwrap_or(TurnFailure::Failed(RunErrorKind::Durable(error)))),
            Err(StepError::Record { error, .. }) => Err(TurnFailure::Failed(RunErrorKind::Durable(error))),
            Err(StepError::StaleEpoch(e)) => Err(TurnFailure::Failed(RunErrorKind::StaleEpoch(e))),
        }
    }

    /// The model call's attempts: one [`attempt`](Self::attempt) after
    /// another, each failure answered by [`recover`] (elide old results,
    /// strip rejected reasoning, retry after a delay, fall back to the next
    /// model, or fail).
    async fn stream_attempts(
        &self,
        cx: &mut RunCx,
        request: StreamOptions,
        turn_id: &str,
    ) -> Result<AssistantMessage, TurnFailure> {
        // The stream's own signal: a suspend stops the stream at once while
        // the run (and its tool calls) goes on to its boundary.
        let stream_ctl = cx.signal.child();
        if let Some(control) = self.inner.lock().control.as_mut() {
            if control.suspending {
                return Err(TurnFailure::Suspended);
            }
            control.stream = Some(stream_ctl.clone());
        }
        let stream_signal = stream_ctl.signal();
        let mut request = Arc::new(request);
        let mut attempts = Attempts {
            may_compact: self.inner.config.compactor.is_some() && !cx.overflow_compacted,
            ..Attempts::default()
        };
        loop {
            let failed = self.attempt(cx, &mut request, turn_id, &stream_signal).await?;
            let failed = match failed {
                Ok(message) => return Ok(message),
                Err(failed) => failed,
            };
            self.recover_from(cx, &mut request, turn_id, &mut attempts, failed, &stream_signal)
                .await?;
        }
    }

    /// One request to the current target, streamed through the stream
    /// hooks: the message, or the failure to recover from (`Err` when the
    /// run stops: aborted or suspended).
    async fn attempt(
        &self,
        cx: &mut RunCx,
        request: &mut Arc<StreamOptions>,
        turn_id: &str,
        stream_signal: &zidane_provider::AbortSignal,
    ) -> Result<Result<AssistantMessage, FailedAttempt>, TurnFailure> {
        let config = &self.inner.config;
        let hooks = &config.hooks;
        let (provider, model) = cx.targets[cx.target].clone();
        if request.model != model {
            Arc::make_mut(request).model = model.clone();
        }
        {
            let mut state = self.inner.lock();
            state.last_request_at = Some(config.clock.now_ms());
            state.last_request = Some(Arc::clone(request));
            state.last_provider = Some(Arc::clone(&provider));
        }
        let mut start = StreamStart::new(stream_init!(
            StreamStartInit {
                started_at: config.clock.now_ms(),
            },
            cx,
            turn_id,
            model
        ));
        self.observe(&mut start).await;
        let mut acc = MessageAccumulator::new();
        let mut streamed = Streamed::new(Listening::of(hooks));
        let mut outcome = self
            .consume(cx, request, turn_id, &model, stream_signal, &mut acc, &mut streamed)
            .await;
        if outcome.is_ok() && !acc.is_finished() {
            outcome = Err(ProviderError::new(
                ErrorKind::Transport,
                provider.name(),
                "the stream ended without its end event",
            ));
        }
        let error = match outcome {
            Ok(()) => return Ok(Ok(self.finish_stream(cx, turn_id, &model, acc, streamed).await)),
            Err(e) => e,
        };
        // A failed attempt the server already billed (its usage came
        // before the failure) still counts in the run's totals.
        self.count_failed_attempt(cx, &model, acc.usage());
        if self.suspending() {
            return Err(TurnFailure::Suspended);
        }
        if cx.signal.is_aborted() || error.kind() == ErrorKind::Aborted {
            let partial = streamed.finish(acc);
            let keep = !partial.content.is_empty();
            return Err(TurnFailure::Aborted(keep.then_some(partial)));
        }
        Ok(Err(FailedAttempt {
            discarded_text: streamed.text_bytes > 0,
            discarded_thinking: streamed.thinking_bytes > 0,
            error,
        }))
    }

    /// Reads the stream to its end (or its first error) into `acc`, firing
    /// the stream hooks on the way.
    #[allow(clippy::too_many_arguments)]
    async fn consume(
        &self,
        cx: &RunCx,
        request: &StreamOptions,
        turn_id: &str,
        model: &str,
        stream_signal: &zidane_provider::AbortSignal,
        acc: &mut MessageAccumulator,
        streamed: &mut Streamed,
    ) -> Result<(), ProviderError> {
        let hooks = &self.inner.config.hooks;
        let provider = Arc::clone(&cx.targets[cx.target].0);
        let mut stream = provider.stream(request, stream_signal.clone());
        let mut last_progress: Option<tokio::time::Instant> = None;
        while let Some(item) = std::future::poll_fn(|c| stream.as_mut().poll_next(c)).await {
            let event = item?;
            streamed.listening.refresh(hooks);
            // The deltas nobody observes are only counted: no hook future
            // is built for them.
            match &event {
                StreamEvent::ToolCallDelta { json, .. } => streamed.tool_bytes += json.len(),
                StreamEvent::TextDelta { text, .. } if !streamed.keeps_text && !streamed.listening.text => {
                    streamed.text_bytes += text.len();
                }
                _ => self.stream_hooks(cx, turn_id, model, &event, streamed).await,
            }
            match &event {
                StreamEvent::TextDelta { index, .. } if streamed.keeps_text => acc.push_text_elsewhere(*index),
                _ => acc.push(&event),
            }
            if streamed.listening.progress {
                let now = tokio::time::Instant::now();
                if last_progress.is_none_or(|t| now.duration_since(t) >= cx.behavior.progress_interval) {
                    last_progress = Some(now);
                    self.progress(cx, turn_id, model, acc, streamed).await;
                }
            }
        }
        Ok(())
    }

    /// A stream that finished: the last progress, the message, `stream:end`.
    async fn finish_stream(
        &self,
        cx: &RunCx,
        turn_id: &str,
        model: &str,
        acc: MessageAccumulator,
        mut streamed: Streamed,
    ) -> AssistantMessage {
        let hooks = &self.inner.config.hooks;
        if hooks.has::<StreamProgress>() {
            self.progress(cx, turn_id, model, &acc, &streamed).await;
        }
        let message = streamed.finish(acc);
        if hooks.has::<StreamEnd>() {
            let mut end = StreamEnd::new(stream_init!(StreamEndInit { text: message.text() }, cx, turn_id, model));
            self.observe(&mut end).await;
        }
        message
    }

    /// Carries out what [`recover`] decides for a failed attempt: `Ok` when
    /// the call goes on (another attempt), `Err` when it ends.
    async fn recover_from(
        &self,
        cx: &mut RunCx,
        request: &mut Arc<StreamOptions>,
        turn_id: &str,
        attempts: &mut Attempts,
        failed: FailedAttempt,
        stream_signal: &zidane_provider::AbortSignal,
    ) -> Result<(), TurnFailure> {
        let jitter = self.inner.config.clock.jitter();
        let shared: SharedError = Arc::new(ProviderError::clone(&failed.error));
        attempts.elided = false;
        loop {
            let fallbacks = cx.targets.len() - cx.target - 1;
            match recover(&failed.error, attempts, &cx.behavior, jitter, fallbacks) {
                Next::ElideResults { pass } => {
                    attempts.overflow_passes = pass;
                    attempts.elided = true;
                    if self.elide(cx, request, turn_id, pass, &shared).await {
                        return Ok(());
                    }
                }
                Next::Compact => {
                    return Err(TurnFailure::Overflow {
                        error: failed.error,
                        model: request.model.clone(),
                    });
                }
                Next::StripReasoning => {
                    attempts.repaired = true;
                    if self.strip(cx, request, &failed.error).await {
                        return Ok(());
                    }
                }
                Next::Retry {
                    transport,
                    attempt,
                    max,
                    delay,
                } => {
                    attempts.count(transport, attempt, delay, failed.error.silence());
                    return self
                        .retry(
                            cx,
                            request,
                            turn_id,
                            &failed,
                            &shared,
                            (attempt, max, delay),
                            stream_signal,
                        )
                        .await;
                }
                Next::Fallback => {
                    *attempts = Attempts {
                        provider: 0,
                        transport: 0,
                        ..*attempts
                    };
                    self.fall_back(cx, request, turn_id, &failed, shared).await;
                    return Ok(());
                }
                Next::Fail => {
                    self.fail_stream(cx, request, turn_id, &failed.error, shared).await;
                    return Err(TurnFailure::Failed(RunErrorKind::Provider(failed.error)));
                }
            }
        }
    }

    /// Elides older tool results (pass `pass`); whether anything changed
    /// (then `context:overflow` fired).
    async fn elide(
        &self,
        cx: &RunCx,
        request: &mut Arc<StreamOptions>,
        turn_id: &str,
        pass: u32,
        shared: &SharedError,
    ) -> bool {
        if !elide_tool_results(&mut Arc::make_mut(request).messages, pass) {
            return false;
        }
        let mut ev = ContextOverflow::new(stream_init!(
            ContextOverflowInit {
                attempt: pass,
                err: Arc::clone(shared),
            },
            cx,
            turn_id,
            request.model
        ));
        self.observe(&mut ev).await;
        true
    }

    /// Replayed reasoning the provider no longer accepts (a thinking block
    /// whose signature it rejects) goes from the history, in memory and in
    /// the session; whether any went (then `history:repair` fired).
    async fn strip(&self, cx: &RunCx, request: &mut Arc<StreamOptions>, error: &ProviderError) -> bool {
        let scrubbed = strip_reasoning(&mut Arc::make_mut(request).messages);
        let turn_ids = self.strip_reasoning_from_history().await;
        if !scrubbed && turn_ids.is_empty() {
            return false;
        }
        let mut ev = HistoryRepair::new(HistoryRepairInit {
            turn_ids,
            reason: format!("the provider rejected replayed reasoning: {}", error.message()),
            run_id: cx.run_id.clone(),
        });
        self.observe(&mut ev).await;
        true
    }

    /// `stream:retry`, then the delay (an abort or a suspend cuts it short
    /// and ends the call).
    #[allow(clippy::too_many_arguments)]
    async fn retry(
        &self,
        cx: &RunCx,
        request: &StreamOptions,
        turn_id: &str,
        failed: &FailedAttempt,
        shared: &SharedError,
        (attempt, max, delay): (u32, u32, Duration),
        stream_signal: &zidane_provider::AbortSignal,
    ) -> Result<(), TurnFailure> {
        let error = &failed.error;
        tracing::debug!(target: "zidane", attempt, max, "the model call failed, retrying in {}ms: {error}", delay.as_millis());
        let mut ev = StreamRetry::new(stream_init!(
            StreamRetryInit {
                attempt,
                delay_ms: delay.as_millis() as u64,
                discarded_text: failed.discarded_text,
                discarded_thinking: failed.discarded_thinking,
                err: Arc::clone(shared),
                max_attempts: max,
                next_attempt: attempt + 1,
                request_id: error.request_id().map(str::to_owned),
                status_code: error.status(),
            },
            cx,
            turn_id,
            request.model
        ));
        self.observe(&mut ev).await;
        tokio::select! {
            biased;
            () = stream_signal.aborted() => {
                Err(if self.suspending() { TurnFailure::Suspended } else { TurnFailure::Aborted(None) })
            }
            () = tokio::time::sleep(delay) => Ok(()),
        }
    }

    /// The next target of the fallback chain, with `model:fallback`.
    async fn fall_back(
        &self,
        cx: &mut RunCx,
        request: &StreamOptions,
        turn_id: &str,
        failed: &FailedAttempt,
        shared: SharedError,
    ) {
        let from = ModelTarget {
            provider: cx.targets[cx.target].0.name().to_owned(),
            model: request.model.clone(),
        };
        cx.target += 1;
        let (next, next_model) = &cx.targets[cx.target];
        let to = ModelTarget {
            provider: next.name().to_owned(),
            model: next_model.clone(),
        };
        let mut ev = ModelFallback::new(stream_init!(
            ModelFallbackInit {
                discarded_thinking: failed.discarded_thinking,
                err: shared,
                from,
                target_index: cx.target as u32,
                to,
            },
            cx,
            turn_id,
            request.model
        ));
        self.observe(&mut ev).await;
    }

    /// The call failed for good: `stream:error`.
    async fn fail_stream(
        &self,
        cx: &RunCx,
        request: &StreamOptions,
        turn_id: &str,
        error: &ProviderError,
        shared: SharedError,
    ) {
        tracing::debug!(target: "zidane", "the model call failed for good: {error}");
        let mut ev = StreamError::new(stream_init!(
            StreamErrorInit {
                err: shared,
                status_code: error.status(),
                request_id: error.request_id().map(str::to_owned),
            },
            cx,
            turn_id,
            request.model
        ));
        self.observe(&mut ev).await;
    }

    /// Adds what a failed attempt reported using to the run's totals (not
    /// to any turn: the attempt left none).
    fn count_failed_attempt(&self, cx: &mut RunCx, model: &str, report: &zidane_provider::UsageReport) {
        let usage = TurnUsage {
            input: report.input.unwrap_or(0),
            output: report.output.unwrap_or(0),
            cache_read: report.cache_read.unwrap_or(0),
            cache_creation: report.cache_creation.unwrap_or(0),
            ..Default::default()
        };
        if usage.input + usage.output + usage.cache_read + usage.cache_creation == 0 {
            return;
        }
        let stats = &mut cx.stats;
        stats.totals.input += usage.input;
        stats.totals.output += usage.output;
        stats.totals.cache_read += usage.cache_read;
        stats.totals.cache_creation += usage.cache_creation;
        if let Some(cost) = self.inner.config.pricing.cost(model, &usage) {
            stats.totals.cost = Some(stats.totals.cost.unwrap_or(0.0) + cost);
        }
    }

    async fn stream_hooks(&self, cx: &RunCx, turn_id: &str, model: &str, event: &StreamEvent, streamed: &mut Streamed) {
        match event {
            StreamEvent::TextDelta { text, index } => {
                streamed.text_bytes += text.len();
                if streamed.keeps_text || streamed.listening.text {
                    if streamed.segments.last().is_none_or(|(i, _)| i != index) {
                        streamed.segments.push((*index, streamed.text.len()));
                    }
                    streamed.text.push_str(text);
                    let mut ev = StreamText::new(stream_init!(
                        StreamTextInit {
                            delta: text.clone(),
                            text: streamed.text.clone(),
                        },
                        cx,
                        turn_id,
                        model
                    ));
                    self.observe(&mut ev).await;
                }
            }
            StreamEvent::ThinkingDelta { text, .. } => {
                streamed.thinking_bytes += text.len();
                if streamed.listening.thinking {
                    streamed.thinking.push_str(text);
                    let mut ev = StreamThinking::new(stream_init!(
                        StreamThinkingInit {
                            delta: text.clone(),
                            thinking: streamed.thinking.clone(),
                        },
                        cx,
                        turn_id,
                        model
                    ));
                    self.observe(&mut ev).await;
                }
            }
            StreamEvent::ServerToolUse { id, name, input, .. } => {
                streamed.server_tools.push((id.clone(), name.clone()));
                let mut ev = StreamServerToolUse::new(stream_init!(
                    StreamServerToolUseInit {
                        id: id.clone(),
                        input: input.clone(),
                        name: name.clone(),
                    },
                    cx,
                    turn_id,
                    model
                ));
                self.observe(&mut ev).await;
            }
            StreamEvent::ServerToolResult {
                tool_use_id,
                kind,
                content,
                ..
            } => {
                let mut ev = StreamServerToolResult::new(stream_init!(
                    StreamServerToolResultInit {
                        content: content.clone(),
                        // The tool of the call it answers; the block type only
                        // when the stream never showed that call.
                        tool_name: streamed
                            .server_tools
                            .iter()
                            .find(|(id, _)| id == tool_use_id)
                            .map_or_else(|| kind.clone(), |(_, name)| name.clone()),
                        tool_use_id: tool_use_id.clone(),
                    },
                    cx,
                    turn_id,
                    model
                ));
                self.observe(&mut ev).await;
            }
            StreamEvent::InputTransformations(changes) => {
                let mut ev = ProviderInputTransformations::new(ProviderInputTransformationsInit {
                    transformations: changes.clone(),
                    run_id: cx.run_id.clone(),
                    turn_id: turn_id.to_owned(),
                });
                self.observe(&mut ev).await;
            }
            StreamEvent::Diagnostic(diagnostic) => {
                let mut ev = ProviderDiagnostic::new(ProviderDiagnosticInit {
                    kind: diagnostic.kind.clone(),
                    message: diagnostic.message.clone(),
                    data: diagnostic.data.clone(),
                    run_id: cx.run_id.clone(),
                    turn_id: turn_id.to_owned(),
                });
                self.observe(&mut ev).await;
            }
            _ => {}
        }
    }

    pub(crate) async fn progress(
        &self,
        cx: &RunCx,
        turn_id: &str,
        model: &str,
        acc: &MessageAccumulator,
        streamed: &Streamed,
    ) {
        let (tokens, counted) = match acc.usage().output {
            Some(out) if out > 1 => (out, true),
            _ => (
                ((streamed.text_bytes + streamed.thinking_bytes + streamed.tool_bytes) / 4) as u64,
                false,
            ),
        };
        let usage = TurnUsage {
            output: tokens,
            input: acc.usage().input.unwrap_or(0),
            ..Default::default()
        };
        let cost = self.inner.config.pricing.cost(model, &usage);
        let mut ev = StreamProgress::new(stream_init!(
            StreamProgressInit {
                tokens,
                provider_counted: counted,
                cost_usd: cost,
            },
            cx,
            turn_id,
            model
        ));
        self.observe(&mut ev).await;
    }
}

/// Replaces old tool results with a stub, keeping fewer recent messages intact
/// on each pass. Returns whether anything changed.
fn elide_tool_results(messages: &mut [Message], pass: u32) -> bool {
    const STUB: &str = "[tool output elided to fit the context window]";
    let keep = match pass {
        1 => 6,
        2 => 2,
        _ => 0,
    };
    let cut = messages.len().saturating_sub(keep);
    let mut changed = false;
    for message in &mut messages[..cut] {
        let stale = message.content().iter().any(|b| match b {
            ContentBlock::ToolResult { content, .. } => content != &ToolResultContent::Text(STUB.to_owned()),
            _ => false,
        });
        if stale {
            for block in message.content_mut() {
                if let ContentBlock::ToolResult { content, .. } = block {
                    *content = ToolResultContent::Text(STUB.to_owned());
                }
            }
            changed = true;
        }
    }
    changed
}

fn is_reasoning(block: &ContentBlock) -> bool {
    matches!(
        block,
        ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. }
    )
}

/// Removes reasoning blocks from the assistant messages of a request;
/// whether any went.
fn strip_reasoning(messages: &mut [Message]) -> bool {
    let mut any = false;
    for message in messages.iter_mut().filter(|m| m.role() == Role::Assistant) {
        if message.content().iter().any(is_reasoning) {
            message.content_mut().retain(|b| !is_reasoning(b));
            any = true;
        }
    }
    any
}

impl RunLoop {
    /// Removes reasoning blocks from the conversation's assistant turns and
    /// keeps the repaired history in the session; the ids of the turns
    /// that changed.
    async fn strip_reasoning_from_history(&self) -> Vec<String> {
        let (turns, changed, unsaved) = {
            let mut state = self.inner.lock();
            let mut changed = Vec::new();
            let state = &mut *state;
            for (turn, message) in state.turns.iter_mut().zip(state.messages.iter_mut()) {
                if turn.role == Role::Assistant && turn.content.iter().any(is_reasoning) {
                    let kept: Vec<ContentBlock> = turn.content.iter().filter(|b| !is_reasoning(b)).cloned().collect();
                    turn.content = kept.into();
                    *message = turn.to_message();
                    changed.push(turn.id.clone());
                }
            }
            if !changed.is_empty() {
                state.paired = 0;
            }
            (state.turns.clone(), changed, !state.unsaved.is_empty())
        };
        // With turns still waiting to be saved, a whole replacement would
        // save them twice: the session is repaired by the next load instead.
        if !changed.is_empty()
            && !unsaved
            && let Some(sink) = &self.inner.config.sink
            && let Err(e) = sink.replace(&turns).await
        {
            tracing::warn!(target: "zidane", "the repaired history could not be saved: {e}");
        }
        changed
    }
}
