//! Compaction as the agent runs it: manual (`Agent::compact`) and
//! automatic (the loop's compactor), with its hooks.

use crate::agent::{Agent, Inner, estimate_tokens};
use crate::compact::{
    AutoCompact, CompactOptions, CompactionResult, SUMMARY_INSTRUCTION, is_clean_boundary, prune_results,
    summary_turns, unfinished,
};
use crate::error::AgentError;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;
use zidane_core::durable::{Durability, Step, StepError, StepKey, StepKind, StepValue};
use zidane_core::events::{
    CompactEnd, CompactProgress, CompactReason, CompactRestore, CompactStart, CompactStatus, MessageError,
    RestoredCall, SharedError,
};
use zidane_core::events::{CompactEndInit, CompactProgressInit, CompactRestoreInit, CompactStartInit};
use zidane_core::seams::{CompactCheck, Compactor};
use zidane_provider::{
    AbortController, AbortSignal, BoxFuture, Message, MessageAccumulator, Provider, SessionTurn, StreamEvent,
    StreamOptions,
};

pub(crate) struct Compaction {
    auto: Option<AutoCompact>,
    provider: Arc<dyn Provider>,
    agent: Weak<Inner>,
    failures: AtomicU32,
    running: AtomicBool,
    /// What a manual compaction's summary should keep in view.
    focus: parking_lot::Mutex<Option<String>>,
}

impl Compaction {
    pub(crate) fn new(auto: Option<AutoCompact>, provider: Arc<dyn Provider>, agent: Weak<Inner>) -> Self {
        Compaction {
            auto,
            provider,
            agent,
            failures: AtomicU32::new(0),
            running: AtomicBool::new(false),
            focus: parking_lot::Mutex::new(None),
        }
    }

    pub(crate) fn threshold(&self) -> Option<f64> {
        self.auto.as_ref().map(|a| a.threshold)
    }

    /// The auto-compaction settings (what sub-agents inherit).
    pub(crate) fn settings(&self) -> Option<&AutoCompact> {
        self.auto.as_ref()
    }

    /// The context window compaction works to.
    fn window(&self) -> u32 {
        self.auto
            .as_ref()
            .and_then(|a| a.context_window)
            .unwrap_or(self.provider.meta().context_window)
    }

    /// Tokens a request spends before its messages (system prompt and
    /// tools), from the last request.
    fn overhead(agent: &Agent) -> u64 {
        let (_, last) = agent.run_loop().last_request();
        last.map_or(0, |r| {
            estimate_tokens(r.system.as_deref().unwrap_or_default())
                + estimate_tokens(&serde_json::to_string(&r.tools).unwrap_or_default())
        })
    }

    fn agent(&self) -> Option<Agent> {
        self.agent.upgrade().map(|inner| Agent { inner })
    }

    pub(crate) async fn manual(&self, agent: &Agent, options: CompactOptions) -> Result<CompactionResult, AgentError> {
        let keep = options
            .keep_turns
            .unwrap_or_else(|| self.auto.as_ref().map_or(4, |a| a.keep_turns));
        let controller = AbortController::new();
        let signal = controller.signal();
        let scope = agent.inner.control.compaction(controller);
        let turns = agent.turns();
        *self.focus.lock() = options.focus.filter(|f| !f.trim().is_empty());
        let outcome = self
            .compact(agent, &turns, keep, CompactReason::Manual, &signal, None)
            .await;
        *self.focus.lock() = None;
        drop(scope);
        let (replacement, result) = outcome?;
        if let Some(turns) = replacement {
            agent.run_loop().set_turns(turns);
        }
        Ok(result)
    }

    /// Compacts `turns`, keeping the last `keep` verbatim; returns the new
    /// history (`None` when there is nothing to compact) and the result.
    /// Within a run, `step` names the summary as a durable step: a resumed
    /// or replayed run takes the summary from its record instead of asking
    /// for another (which could differ).
    async fn compact(
        &self,
        agent: &Agent,
        turns: &[SessionTurn],
        keep: usize,
        reason: CompactReason,
        signal: &AbortSignal,
        step: Option<StepKey>,
    ) -> Result<(Option<Vec<SessionTurn>>, CompactionResult), AgentError> {
        if self.running.swap(true, Ordering::AcqRel) {
            return Err(AgentError::Busy);
        }
        let _running = Release(&self.running);
        // Cut where no call is separated from its result.
        let latest = turns.len().saturating_sub(keep);
        let Some(cut) = (1..=latest)
            .rev()
            .filter(|&i| i < turns.len())
            .find(|&i| is_clean_boundary(&turns[i]))
        else {
            return Ok((None, CompactionResult::default()));
        };
        let estimated = estimate_tokens(&serde_json::to_string(&turns[..cut]).unwrap_or_default());
        let mut start = CompactStart::new(CompactStartInit {
            reason,
            turns: cut as u32,
            estimated_tokens: estimated,
        });
        agent.observe(&mut start).await;

        // First, old tool results become one-line stubs; when that is
        // enough (half the window left), no summary is needed.
        let window = u64::from(self.window());
        let overhead = Self::overhead(agent);
        let (pruned, stubs) = prune_results(turns, cut);
        let size = |t: &[SessionTurn]| estimate_tokens(&serde_json::to_string(t).unwrap_or_default()) + overhead;
        if reason == CompactReason::Auto && stubs > 0 && window > 0 && size(&pruned) * 2 <= window {
            return self.finish(agent, reason, pruned, 0, stubs, None, Vec::new()).await;
        }
        let turns = &pruned[..];

        let summary = match self.summary(agent, turns, cut, reason, signal, step.clone()).await {
            Ok(s) => s,
            Err(_) if signal.is_aborted() => {
                agent.observe(&mut unfinished(reason, None)).await;
                return Ok((None, CompactionResult::default()));
            }
            Err(error) => {
                let shared: SharedError = Arc::new(MessageError(error.to_string()));
                agent.observe(&mut unfinished(reason, Some(shared))).await;
                return Err(error);
            }
        };

        let mut calls = self.restored(agent, step).await;
        // What comes back takes at most a fifth of the window.
        let mut budget = (window as usize).saturating_mul(4) / 5;
        if window > 0 {
            for call in &mut calls {
                if call.output.len() > budget {
                    let mut end = budget;
                    while !call.output.is_char_boundary(end) {
                        end -= 1;
                    }
                    call.output.truncate(end);
                    call.output.push_str("\n[… cut to fit the context window]");
                }
                budget = budget.saturating_sub(call.output.len());
            }
        }

        let mut replacement = summary_turns(&*agent.inner.clock, &summary, &calls);
        replacement.extend_from_slice(&turns[cut..]);
        // The new history must fit before the next request: the kept turns'
        // results are stubbed too when it does not.
        let mut stubs = stubs;
        if window > 0 && size(&replacement) as f64 >= self.threshold().unwrap_or(0.8) * window as f64 {
            let last = replacement.len().saturating_sub(1);
            let (smaller, more) = prune_results(&replacement, last);
            replacement = smaller;
            stubs += more;
        }
        self.finish(agent, reason, replacement, cut as u32, stubs, Some(summary), calls)
            .await
    }

    /// Stores the new history and reports it.
    #[allow(clippy::too_many_arguments)]
    async fn finish(
        &self,
        agent: &Agent,
        reason: CompactReason,
        replacement: Vec<SessionTurn>,
        replaced: u32,
        stubs: u32,
        summary: Option<String>,
        calls: Vec<RestoredCall>,
    ) -> Result<(Option<Vec<SessionTurn>>, CompactionResult), AgentError> {
        if let Err(error) = agent.persist_replacement(&replacement).await {
            agent.observe(&mut unfinished(reason, Some(Arc::clone(&error)))).await;
            return Err(AgentError::Store(error));
        }
        let effective = estimate_tokens(&serde_json::to_string(&replacement).unwrap_or_default());
        let result = CompactionResult {
            compacted: true,
            replaced,
            restored: calls.len() as u32,
            summary,
            effective_tokens: effective,
        };
        let mut end = CompactEnd::new(CompactEndInit {
            reason,
            status: CompactStatus::Ok,
            replaced: result.replaced,
            dropped: stubs,
            restored: result.restored,
            effective_tokens: Some(effective),
            error: None,
        });
        agent.observe(&mut end).await;
        Ok((Some(replacement), result))
    }

    /// What comes back after the summary: the host's additions
    /// (`compact:restore`), then the most recently read files. Within a
    /// run, a durable step of its own beside the summary's: a resumed or
    /// replayed run re-attaches what the first attempt did (the files may
    /// have changed since, the handlers may add something else), and the
    /// hook does not fire again.
    async fn restored(&self, agent: &Agent, summary_step: Option<StepKey>) -> Vec<RestoredCall> {
        let Some(mut key) = summary_step else {
            return self.restore(agent).await;
        };
        key.name = format!("{}:restore", key.name);
        let runtime = Arc::clone(&agent.run_loop().config().runtime);
        let run_id = key.run_id.clone();
        let work = async {
            let calls = self.restore(agent).await;
            let value = serde_json::to_value(&calls).map_err(|e| Arc::new(e) as SharedError)?;
            Ok(StepValue::Decision(value))
        };
        let step = Step {
            key,
            durability: Durability::Safe,
        };
        let recorded = match runtime.step(step, Box::pin(work)).await {
            Ok(value) => value,
            Err(StepError::Record { error, value }) => {
                tracing::warn!(target: "zidane", "what the compaction re-attaches could not be recorded: {error}");
                *value
            }
            Err(e) => {
                tracing::warn!(target: "zidane", "what the compaction re-attaches is left out: {e}");
                return Vec::new();
            }
        };
        if let Err(e) = runtime.sync(&run_id).await {
            tracing::warn!(target: "zidane", "what the compaction re-attaches could not be recorded: {e}");
        }
        match recorded {
            StepValue::Decision(value) => serde_json::from_value(value).unwrap_or_else(|e| {
                tracing::warn!(target: "zidane", "the recorded re-attachments are not calls: {e}");
                Vec::new()
            }),
            other => {
                tracing::warn!(
                    target: "zidane",
                    "the recorded re-attachments are a {} value, not calls",
                    other.kind_name()
                );
                Vec::new()
            }
        }
    }

    /// The re-attachments, asked and read now.
    async fn restore(&self, agent: &Agent) -> Vec<RestoredCall> {
        let session = agent.session();
        let session_id = session.as_ref().map(|s| s.id.clone());
        let mut restore = CompactRestore::new(CompactRestoreInit { session, session_id });
        agent.observe(&mut restore).await;
        let mut calls = restore.take_added();
        calls.extend(self.recent_files(agent).await);
        calls
    }

    /// What the summary request asks, with a manual compaction's focus.
    fn instruction(&self) -> Message {
        Message::user(match self.focus.lock().as_deref() {
            Some(focus) => format!("{SUMMARY_INSTRUCTION}\n\nKeep in view above all: {focus}"),
            None => SUMMARY_INSTRUCTION.to_owned(),
        })
    }

    /// The summary, as a durable step when `step` names one.
    async fn summary(
        &self,
        agent: &Agent,
        turns: &[SessionTurn],
        cut: usize,
        reason: CompactReason,
        signal: &AbortSignal,
        step: Option<StepKey>,
    ) -> Result<String, AgentError> {
        let Some(key) = step else {
            return self.summarize(agent, turns, cut, reason, signal).await;
        };
        let runtime = Arc::clone(&agent.run_loop().config().runtime);
        let work = async {
            let text = self
                .summarize(agent, turns, cut, reason, signal)
                .await
                .map_err(|e| Arc::new(e) as SharedError)?;
            Ok(StepValue::Decision(Value::String(text)))
        };
        let run_id = key.run_id.clone();
        let step = Step {
            key,
            durability: Durability::Safe,
        };
        let summary = runtime.step(step, Box::pin(work)).await;
        if summary.is_ok()
            && let Err(e) = runtime.sync(&run_id).await
        {
            // The summary is used either way; a crash before the next write
            // would ask for it again.
            tracing::warn!(target: "zidane", "the compaction summary could not be recorded: {e}");
        }
        match summary {
            Ok(StepValue::Decision(Value::String(text))) => Ok(text),
            Ok(_) => Err(AgentError::Compaction("the recorded summary is not text".into())),
            Err(e) => Err(AgentError::Compaction(e.to_string())),
        }
    }

    /// The summary request of `turns[..cut]`, cut to fit the window with
    /// an eighth of it left for the summary.
    fn summary_request(
        &self,
        agent: &Agent,
        provider: &dyn Provider,
        turns: &[SessionTurn],
        cut: usize,
    ) -> StreamOptions {
        let (_, last) = agent.run_loop().last_request();
        let history: Vec<Message> = turns.iter().map(SessionTurn::to_message).collect();
        let instruction = self.instruction();
        // When the history still starts with the last request, resend that
        // request (same system, tools and messages) with the instruction, so
        // the provider reads it from its prompt cache.
        let window = u64::from(self.window());
        let fits = |r: &StreamOptions| {
            window == 0
                || estimate_tokens(&serde_json::to_string(&r.messages).unwrap_or_default())
                    + estimate_tokens(r.system.as_deref().unwrap_or_default())
                    + estimate_tokens(&serde_json::to_string(&r.tools).unwrap_or_default())
                    + window / 8
                    <= window
        };
        let fresh = || {
            let config = agent.run_loop().config();
            let model = config.default_model_for(provider);
            let mut messages = history[..cut].to_vec();
            messages.push(instruction.clone());
            let mut r = StreamOptions::new(model, messages);
            r.system = config.system.clone();
            r
        };
        let mut request = match last.as_deref() {
            // Not when that request is what overflowed the window.
            Some(last)
                if history.len() >= last.messages.len() && history[..last.messages.len()] == last.messages[..] =>
            {
                let mut r = last.clone();
                r.messages.push(instruction.clone());
                if fits(&r) { r } else { fresh() }
            }
            _ => fresh(),
        };
        request.response_schema = None;
        request.tool_choice = Some(zidane_provider::ToolChoice::None).filter(|_| !request.tools.is_empty());
        // The summary request fits the window: the oldest messages go first
        // when it would not, and the summary gets an eighth of the window.
        if window > 0 {
            if !fits(&request) {
                request.tools.clear();
                request.tool_choice = None;
            }
            while !fits(&request) && request.messages.len() > 2 {
                request.messages.remove(0);
                // Never start on a result whose call was dropped.
                while request.messages.len() > 2 && !zidane_provider::Role::User.eq(&request.messages[0].role())
                    || request.messages.len() > 2
                        && request.messages[0]
                            .content()
                            .iter()
                            .any(|b| matches!(b, zidane_provider::ContentBlock::ToolResult { .. }))
                {
                    request.messages.remove(0);
                }
            }
            // What is left may be one answer longer than the window: its
            // head is summarized.
            if !fits(&request) {
                let spare = (window.saturating_mul(3) / 4) as usize * 4;
                if let Some(first) = request.messages.first_mut() {
                    cut_text(first, spare);
                }
            }
            // A request starts with the person's turn.
            if request
                .messages
                .first()
                .is_some_and(|m| m.role() == zidane_provider::Role::Assistant)
            {
                request
                    .messages
                    .insert(0, Message::user("[The conversation before this point was left out.]"));
            }
            let cap = u32::try_from((window / 8).clamp(256, 4096)).unwrap_or(4096);
            request.max_tokens = Some(request.max_tokens.map_or(cap, |m| m.min(cap)));
        }
        request
    }

    async fn summarize(
        &self,
        agent: &Agent,
        turns: &[SessionTurn],
        cut: usize,
        reason: CompactReason,
        signal: &AbortSignal,
    ) -> Result<String, AgentError> {
        // The summary goes where the last request went (a fallback provider
        // keeps the cache the primary does not have).
        let provider = agent
            .run_loop()
            .last_provider()
            .unwrap_or_else(|| Arc::clone(&self.provider));
        let request = self.summary_request(agent, provider.as_ref(), turns, cut);
        let mut stream = provider.stream(&request, signal.clone());
        let mut acc = MessageAccumulator::new();
        let mut chars = 0usize;
        let mut last_progress: Option<tokio::time::Instant> = None;
        while let Some(event) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
            let event = event?;
            if let StreamEvent::TextDelta { text, .. } = &event {
                chars += text.chars().count();
                let now = tokio::time::Instant::now();
                if last_progress.is_none_or(|t| now.duration_since(t) >= Duration::from_millis(250)) {
                    last_progress = Some(now);
                    let mut ev = CompactProgress::new(CompactProgressInit {
                        reason,
                        est_output_tokens: (chars / 4) as u64,
                    });
                    agent.observe(&mut ev).await;
                }
            }
            acc.push(&event);
        }
        let message = acc.finish();
        let text = message.text();
        if text.trim().is_empty() {
            return Err(AgentError::Compaction("the summary came back empty".into()));
        }
        Ok(text)
    }

    async fn recent_files(&self, agent: &Agent) -> Vec<RestoredCall> {
        let limit = self.auto.as_ref().map_or(5, |a| a.restore_files);
        let mut entries: Vec<(String, u64)> = {
            let read_state = agent.run_loop().config().read_state.lock();
            read_state.iter().map(|(k, v)| (k.clone(), v.read_at_ms)).collect()
        };
        entries.sort_by_key(|e| std::cmp::Reverse(e.1));
        let Ok(handle) = agent.ensure_execution().await else {
            return Vec::new();
        };
        let mut calls = Vec::new();
        for (path, _) in entries.into_iter().take(limit) {
            if let Ok(bytes) = agent.execution().read_file(&handle, &path).await {
                calls.push(RestoredCall {
                    name: "read_file".into(),
                    input: json!({ "path": path }),
                    output: String::from_utf8_lossy(&bytes).into_owned(),
                });
            }
        }
        calls
    }
}

/// Cuts the text of `message` to at most `bytes` bytes in all (its first
/// text blocks kept, the rest emptied), with a note where it was cut.
fn cut_text(message: &mut Message, bytes: usize) {
    let mut left = bytes;
    for block in message.content_mut() {
        if let zidane_provider::ContentBlock::Text { text } = block {
            if text.len() <= left {
                left -= text.len();
                continue;
            }
            let mut end = left;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n[… cut to fit the context window]");
            left = 0;
        }
    }
}

struct Release<'a>(&'a AtomicBool);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Compaction {
    /// An automatic compaction of `check`'s conversation keeping the last
    /// `keep` turns, as the durable step `name`; a failure counts against
    /// the circuit breaker.
    async fn auto_compact(&self, check: &CompactCheck<'_>, keep: usize, name: &str) -> Option<Vec<SessionTurn>> {
        let agent = self.agent()?;
        let step = StepKey {
            run_id: check.run_id.to_owned(),
            turn: check.turn,
            kind: StepKind::Decision,
            name: name.to_owned(),
        };
        match self
            .compact(&agent, check.turns, keep, CompactReason::Auto, check.signal, Some(step))
            .await
        {
            Ok((turns, _)) => {
                self.failures.store(0, Ordering::Release);
                turns
            }
            Err(e) => {
                // The run goes on with the full history; after too many
                // failures auto-compaction stops trying.
                self.failures.fetch_add(1, Ordering::AcqRel);
                tracing::warn!(target: "zidane", "auto-compaction failed: {e}");
                None
            }
        }
    }
}

impl Compactor for Compaction {
    fn wants_check(&self, expected_input_tokens: Option<u64>) -> bool {
        let Some(auto) = self.auto.as_ref() else {
            return false;
        };
        let window = auto.context_window.unwrap_or(self.provider.meta().context_window);
        self.failures.load(Ordering::Acquire) < auto.max_failures
            && window > 0
            && expected_input_tokens.is_some_and(|used| used as f64 >= auto.threshold * f64::from(window))
    }

    fn before_request<'a>(&'a self, check: CompactCheck<'a>) -> BoxFuture<'a, Option<Vec<SessionTurn>>> {
        Box::pin(async move {
            let auto = self.auto.as_ref()?;
            if self.failures.load(Ordering::Acquire) >= auto.max_failures {
                return None; // the circuit breaker is open
            }
            let window = auto.context_window.unwrap_or(self.provider.meta().context_window);
            let used = check.expected_input_tokens.or(check.last_input_tokens)?;
            if window == 0 || (used as f64) < auto.threshold * f64::from(window) {
                return None;
            }
            // A request that would not fit at all keeps only the newest turn
            // (a long answer before a new prompt is summarized too); one
            // that only crossed the threshold keeps the usual tail.
            let keep = if used >= u64::from(window) { 1 } else { auto.keep_turns };
            self.auto_compact(&check, keep, "compaction").await
        })
    }

    /// Also without auto-compaction: a run the provider refuses for its
    /// size is saved by a summary rather than ended (as `context:overflow`
    /// protects runs that never opted into compaction).
    fn on_overflow<'a>(&'a self, check: CompactCheck<'a>) -> BoxFuture<'a, Option<Vec<SessionTurn>>> {
        Box::pin(async move {
            let max_failures = self
                .auto
                .as_ref()
                .map_or(AutoCompact::default().max_failures, |a| a.max_failures);
            if self.failures.load(Ordering::Acquire) >= max_failures {
                return None;
            }
            self.auto_compact(&check, 1, "compaction:overflow").await
        })
    }
}
