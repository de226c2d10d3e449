//! OpenTelemetry traces of zidane runs.
//!
//! [`OtelExporter`] turns the hook events of a run into spans that follow
//! OpenTelemetry's GenAI semantic conventions and sends them to a collector
//! as OTLP/HTTP JSON (`POST {endpoint}/v1/traces`):
//!
//! | span | kind | from | attributes |
//! |---|---|---|---|
//! | `invoke_agent {agent}` | internal | `agent:start` → `agent:done` | `gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.provider.name`, `gen_ai.conversation.id`, token totals |
//! | `chat {model}` | client | `stream:start` → `turn:after` (or `stream:error`) | `gen_ai.request.model`, `gen_ai.response.model`, `gen_ai.request.max_tokens`, `gen_ai.usage.*`, `gen_ai.response.finish_reasons` |
//! | `execute_tool {tool}` | internal | `tool:before` → `tool:after` | `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type` |
//! | `tools/call {tool}` | client | `mcp:tool:before` → `mcp:tool:after` / `mcp:tool:error` | `mcp.method.name`, `gen_ai.tool.name`, `zidane.mcp.server` |
//! | `decision {kind}` | internal | `decision:end` | `zidane.decision.kind`, `zidane.decision.ok` |
//!
//! A run whose `agent:start` carries a W3C `traceparent` in its
//! `tracing_context` continues that trace; `spawn:before` hands a
//! sub-agent the `traceparent` of the spawn call's span, so installing
//! [`OtelExporter::hooks`] on the children too (`SpawnConfig::hooks`) gives
//! one tree per run.
//!
//! Payloads (system prompt, prompt, tool arguments and results, MCP
//! arguments and results, streamed text and thinking, decision answers) are
//! attached only with [`OtelOptions::capture_payloads`], and each one goes
//! through `tracing:redact` first: the handlers' final `redacted` is what
//! leaves the process. A redaction handler that fails ships
//! [`REDACTION_FAILED`] instead of the value.
//!
//! Spans are exported in the background when a run ends;
//! [`OtelExporter::flush`] waits for every export and reports failures.

mod span;
#[cfg(test)]
mod tests;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;
use zidane_core::events::{
    AgentDone, AgentStart, DecisionEnd, HOOK_SPECS, McpToolAfter, McpToolBefore, McpToolError, RedactKind, RunStatus,
    SpawnBefore, StreamError, StreamStart, ToolAfter, ToolBefore, ToolError, TracingRedact, TracingRedactInit,
    TurnAfter, TurnBefore,
};
use zidane_hooks::{HookBus, HookCx, HookError, HookMap, HookScope};
use zidane_provider::{
    AbortSignal, ContentBlock, FinishReason, HttpClient, ProviderError, RequestBody, Role, Timeouts, ToolResultContent,
};

pub use span::parse_traceparent;
use span::{AttrValue, KIND_CLIENT, KIND_INTERNAL, SpanData, new_trace_id};

/// What ships in place of a payload whose `tracing:redact` handler failed.
pub const REDACTION_FAILED: &str = "[redaction failed]";

/// Where and how [`OtelExporter`] sends spans.
#[derive(Clone, PartialEq)]
pub struct OtelOptions {
    /// The collector's OTLP/HTTP base endpoint (`http://host:4318`), to
    /// which `/v1/traces` is added unless it ends so already.
    pub endpoint: String,
    /// The full traces URL, used as is instead of `endpoint` when set
    /// (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
    pub traces_endpoint: Option<String>,
    /// `service.name` of the resource (`zidane` by default).
    pub service_name: String,
    /// Attach payloads (through `tracing:redact`). Off by default.
    pub capture_payloads: bool,
    /// Extra request headers (an API key of a hosted collector).
    pub headers: Vec<(String, String)>,
    /// How long one export may take.
    pub timeout: Duration,
}

impl fmt::Debug for OtelOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values are credentials more often than not.
        let headers: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("OtelOptions")
            .field("endpoint", &self.endpoint)
            .field("traces_endpoint", &self.traces_endpoint)
            .field("service_name", &self.service_name)
            .field("capture_payloads", &self.capture_payloads)
            .field("headers", &headers)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl OtelOptions {
    /// Options for `endpoint`, everything else by default.
    pub fn new(endpoint: impl Into<String>) -> Self {
        OtelOptions {
            endpoint: endpoint.into(),
            traces_endpoint: None,
            service_name: "zidane".into(),
            capture_payloads: false,
            headers: Vec::new(),
            timeout: Duration::from_secs(10),
        }
    }

    /// Options from the standard variables, `None` when no endpoint is set:
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (a base), `OTEL_SERVICE_NAME`,
    /// `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k=v`).
    pub fn from_env() -> Option<Self> {
        Self::from_vars(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
    }

    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let traces = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        let base = var("OTEL_EXPORTER_OTLP_ENDPOINT");
        if traces.is_none() && base.is_none() {
            return None;
        }
        let mut options = OtelOptions::new(base.unwrap_or_default());
        options.traces_endpoint = traces;
        if let Some(name) = var("OTEL_SERVICE_NAME") {
            options.service_name = name;
        }
        if let Some(headers) = var("OTEL_EXPORTER_OTLP_HEADERS") {
            options.headers = headers
                .split(',')
                .filter_map(|pair| pair.split_once('='))
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .filter(|(k, _)| !k.is_empty())
                .collect();
        }
        Some(options)
    }

    /// The URL spans are posted to.
    pub fn traces_url(&self) -> String {
        if let Some(full) = &self.traces_endpoint {
            return full.trim().to_owned();
        }
        let endpoint = self.endpoint.trim().trim_end_matches('/');
        if endpoint.ends_with("/v1/traces") {
            endpoint.to_owned()
        } else {
            format!("{endpoint}/v1/traces")
        }
    }
}

/// Why the exporter could not be built or could not export.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The endpoint is not an `http` or `https` URL.
    #[error("the OTLP endpoint `{endpoint}` is not a valid http(s) URL")]
    InvalidEndpoint {
        /// The endpoint as given.
        endpoint: String,
    },
    /// The HTTP client could not be built.
    #[error("the OTLP exporter could not start: {0}")]
    Client(#[source] ProviderError),
    /// Some exports failed; each entry says how.
    #[error("{} trace export(s) to {url} failed: {}", failures.len(), failures.join("; "))]
    Export {
        /// The traces URL.
        url: String,
        /// One line per failed export.
        failures: Vec<String>,
    },
}

/// Traces of every run on the buses it is installed on. Cheap to clone;
/// clones share the spans and the pending exports.
#[derive(Clone)]
pub struct OtelExporter {
    inner: Arc<Inner>,
}

impl fmt::Debug for OtelExporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtelExporter")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

struct Inner {
    options: OtelOptions,
    url: http::Uri,
    client: HttpClient,
    state: Mutex<State>,
    exports: Mutex<Vec<JoinHandle<Result<usize, String>>>>,
}

#[derive(Default)]
struct State {
    /// The run in flight on each bus (by [`HookBus::id`]), for the events
    /// that carry no run id.
    buses: HashMap<usize, String>,
    runs: HashMap<String, Run>,
    /// Finished spans not exported yet.
    finished: Vec<SpanData>,
}

impl State {
    /// The run in flight on `bus`.
    fn bus_run(&mut self, bus: usize) -> Option<&mut Run> {
        let id = self.buses.get(&bus)?;
        self.runs.get_mut(id)
    }
}

struct Run {
    span: SpanData,
    provider: Option<String>,
    /// `chat` spans by turn id.
    chats: HashMap<String, SpanData>,
    /// `execute_tool` spans by call id.
    tools: HashMap<String, SpanData>,
    /// MCP `tools/call` spans by call id.
    mcp: HashMap<String, SpanData>,
    /// The next request's caps, from `turn:before`.
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    prompted: bool,
}

impl Run {
    fn child(&self, name: String, kind: u8, parent: Option<&SpanData>) -> SpanData {
        let parent = parent.unwrap_or(&self.span);
        SpanData::start(parent.trace_id, Some(parent.span_id), name, kind)
    }
}

impl OtelExporter {
    /// An exporter sending to `options.endpoint`.
    pub fn new(options: OtelOptions) -> Result<Self, OtelError> {
        let url_text = options.traces_url();
        let Ok(url) = url_text.parse::<http::Uri>() else {
            return Err(OtelError::InvalidEndpoint { endpoint: url_text });
        };
        if !matches!(url.scheme_str(), Some("http" | "https")) || url.host().is_none() {
            return Err(OtelError::InvalidEndpoint { endpoint: url_text });
        }
        let timeouts = Timeouts {
            connect: options.timeout,
            idle: options.timeout,
        };
        let client = HttpClient::new(timeouts).map_err(OtelError::Client)?;
        Ok(OtelExporter {
            inner: Arc::new(Inner {
                options,
                url,
                client,
                state: Mutex::default(),
                exports: Mutex::default(),
            }),
        })
    }

    /// The options in force.
    pub fn options(&self) -> &OtelOptions {
        &self.inner.options
    }

    /// Installs the exporter's handlers on `bus` until the scope drops.
    pub fn install(&self, bus: &HookBus) -> Result<HookScope, HookError> {
        self.hooks().install(bus, HOOK_SPECS)
    }

    /// The exporter's handlers as a map: for an agent's own hooks, and for
    /// `SpawnConfig::hooks` so sub-agents join the parent's trace.
    pub fn hooks(&self) -> HookMap {
        let capture = self.inner.options.capture_payloads;
        // A handler per event: `sync` ones see the bus id, `payload` ones
        // may emit `tracing:redact` and so are async.
        macro_rules! sync {
            ($map:expr, $event:ty, $method:ident) => {{
                let e = self.clone();
                $map.on_sync::<$event, _>(move |ev, cx| {
                    e.$method(ev, cx.bus().id());
                    Ok(())
                })
            }};
        }
        macro_rules! payload {
            ($map:expr, $event:ty, $method:ident) => {{
                let e = self.clone();
                $map.on::<$event, _>(move |ev, cx| {
                    let e = e.clone();
                    Box::pin(async move {
                        e.$method(ev, cx, capture).await;
                        Ok(())
                    })
                })
            }};
        }
        let map = sync!(HookMap::new(), AgentStart, agent_start);
        let map = payload!(map, TurnBefore, turn_before);
        let map = sync!(map, StreamStart, stream_start);
        let map = sync!(map, StreamError, stream_error);
        let map = payload!(map, TurnAfter, turn_after);
        let map = payload!(map, ToolBefore, tool_before);
        let map = sync!(map, ToolError, tool_error);
        let map = payload!(map, ToolAfter, tool_after);
        let map = payload!(map, McpToolBefore, mcp_before);
        let map = payload!(map, McpToolAfter, mcp_after);
        let map = sync!(map, McpToolError, mcp_error);
        let map = payload!(map, DecisionEnd, decision_end);
        let map = sync!(map, SpawnBefore, spawn_before);
        sync!(map, AgentDone, agent_done)
    }

    /// Exports what finished and has not been sent yet, then waits for every
    /// export in flight. `Ok` carries how many spans were delivered.
    pub async fn flush(&self) -> Result<usize, OtelError> {
        self.export_finished();
        let handles = std::mem::take(&mut *self.inner.exports.lock());
        let mut delivered = 0;
        let mut failures = Vec::new();
        for handle in handles {
            match handle.await {
                Ok(Ok(n)) => delivered += n,
                Ok(Err(why)) => failures.push(why),
                Err(join) => failures.push(format!("the export task failed: {join}")),
            }
        }
        if failures.is_empty() {
            Ok(delivered)
        } else {
            Err(OtelError::Export {
                url: self.inner.options.traces_url(),
                failures,
            })
        }
    }

    fn with_state<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.inner.state.lock())
    }

    /// Runs `f` on the run in flight on `bus`.
    fn with_bus_run(&self, bus: usize, f: impl FnOnce(&mut Run)) {
        self.with_state(|state| {
            if let Some(run) = state.bus_run(bus) {
                f(run);
            }
        });
    }

    fn agent_start(&self, ev: &AgentStart, bus: usize) {
        let (trace_id, parent) = match ev
            .tracing_context()
            .get("traceparent")
            .and_then(|t| parse_traceparent(t))
        {
            Some((trace, parent)) => (trace, Some(parent)),
            None => (new_trace_id(), None),
        };
        let name = ev.agent_name().unwrap_or("zidane");
        let mut span = SpanData::start(trace_id, parent, format!("invoke_agent {name}"), KIND_INTERNAL);
        span.set("gen_ai.operation.name", "invoke_agent");
        span.set("gen_ai.agent.name", name);
        if let Some(provider) = ev.provider_name() {
            span.set("gen_ai.provider.name", provider);
        }
        span.set("zidane.run.id", ev.run_id());
        span.set("zidane.depth", ev.depth());
        if let Some(parent) = ev.parent_run_id() {
            span.set("zidane.parent_run.id", parent);
        }
        let run = Run {
            span,
            provider: ev.provider_name().map(str::to_owned),
            chats: HashMap::new(),
            tools: HashMap::new(),
            mcp: HashMap::new(),
            max_tokens: None,
            temperature: None,
            prompted: false,
        };
        self.with_state(|state| {
            state.buses.insert(bus, ev.run_id().to_owned());
            state.runs.insert(ev.run_id().to_owned(), run);
        });
    }

    async fn turn_before(&self, ev: &TurnBefore, cx: HookCx<'_>, capture: bool) {
        let bus = cx.bus().id();
        let options = &ev.options;
        let mut first = false;
        self.with_bus_run(bus, |run| {
            run.max_tokens = options.max_tokens;
            run.temperature = options.temperature;
            first = !std::mem::replace(&mut run.prompted, true);
        });
        if !(capture && first) {
            return;
        }
        let meta = meta(&[("turnId", ev.turn_id())]);
        let system = match &options.system {
            Some(system) => Some(redact(cx, RedactKind::System, system.clone(), meta.clone()).await),
            None => None,
        };
        let prompt = options
            .messages
            .iter()
            .rev()
            .find(|m| m.role() == Role::User)
            .map(|m| blocks_text(m.content()));
        let prompt = match prompt {
            Some(prompt) => Some(redact(cx, RedactKind::Prompt, prompt, meta).await),
            None => None,
        };
        self.with_bus_run(bus, |run| {
            if let Some(system) = system {
                run.span.set("gen_ai.system_instructions", system);
            }
            if let Some(prompt) = prompt {
                let messages = json!([{"role": "user", "parts": [{"type": "text", "content": prompt}]}]);
                run.span.set("gen_ai.input.messages", messages.to_string());
            }
        });
    }

    fn stream_start(&self, ev: &StreamStart, _bus: usize) {
        self.with_state(|state| {
            let Some(run) = state.runs.get_mut(ev.run_id()) else {
                return;
            };
            let mut span = run.child(format!("chat {}", ev.model()), KIND_CLIENT, None);
            span.set("gen_ai.operation.name", "chat");
            span.set("gen_ai.request.model", ev.model());
            if let Some(provider) = &run.provider {
                span.set("gen_ai.provider.name", provider.as_str());
            }
            if let Some(max) = run.max_tokens {
                span.set("gen_ai.request.max_tokens", max);
            }
            if let Some(t) = run.temperature {
                span.set("gen_ai.request.temperature", f64::from(t));
            }
            span.set("zidane.turn", ev.turn());
            // A retried attempt of the same turn: the one before it failed.
            if let Some(mut earlier) = run.chats.insert(ev.turn_id().to_owned(), span) {
                earlier.error.get_or_insert_with(|| "retried".into());
                earlier.end();
                state.finished.push(earlier);
            }
        });
    }

    fn stream_error(&self, ev: &StreamError, _bus: usize) {
        self.with_state(|state| {
            let Some(mut span) = state
                .runs
                .get_mut(ev.run_id())
                .and_then(|run| run.chats.remove(ev.turn_id()))
            else {
                return;
            };
            span.error = Some(ev.err().to_string());
            span.set("error.type", error_type(ev.status_code()));
            if let Some(status) = ev.status_code() {
                span.set("http.response.status_code", u64::from(status));
            }
            span.end();
            state.finished.push(span);
        });
    }

    async fn turn_after(&self, ev: &TurnAfter, cx: HookCx<'_>, capture: bool) {
        let bus = cx.bus().id();
        let output = if capture {
            Some(output_messages(cx, ev).await)
        } else {
            None
        };
        let usage = ev.usage();
        self.with_state(|state| {
            let Some(mut span) = state.bus_run(bus).and_then(|run| run.chats.remove(ev.turn_id())) else {
                return;
            };
            span.set(
                "gen_ai.usage.input_tokens",
                usage.input + usage.cache_read + usage.cache_creation,
            );
            span.set("gen_ai.usage.output_tokens", usage.output);
            span.set("gen_ai.usage.cache_read.input_tokens", usage.cache_read);
            span.set("gen_ai.usage.cache_creation.input_tokens", usage.cache_creation);
            if let Some(model) = &usage.model_id {
                span.set("gen_ai.response.model", model.as_str());
            }
            if let Some(reason) = usage.finish_reason {
                span.set(
                    "gen_ai.response.finish_reasons",
                    AttrValue::Strs(vec![finish_name(reason).into()]),
                );
            }
            if let Some(cost) = usage.cost {
                span.set("zidane.cost_usd", cost);
            }
            if let Some(output) = output {
                span.set("gen_ai.output.messages", output);
            }
            if ev.aborted() {
                span.error = Some("aborted".into());
            }
            span.end();
            state.finished.push(span);
        });
    }

    async fn tool_before(&self, ev: &ToolBefore, cx: HookCx<'_>, capture: bool) {
        let input = if capture {
            let meta = meta(&[
                ("toolName", ev.name()),
                ("callId", ev.call_id()),
                ("turnId", ev.turn_id()),
            ]);
            Some(redact(cx, RedactKind::ToolInput, ev.input.to_string(), meta).await)
        } else {
            None
        };
        self.with_state(|state| {
            let Some(run) = state.runs.get_mut(ev.run_id()) else {
                return;
            };
            let mut span = run.child(format!("execute_tool {}", ev.name()), KIND_INTERNAL, None);
            span.set("gen_ai.operation.name", "execute_tool");
            span.set("gen_ai.tool.name", ev.name());
            span.set("gen_ai.tool.call.id", ev.call_id());
            span.set("gen_ai.tool.type", "function");
            if let Some(input) = input {
                span.set("gen_ai.tool.call.arguments", input);
            }
            run.tools.insert(ev.call_id().to_owned(), span);
        });
    }

    fn tool_error(&self, ev: &ToolError, _bus: usize) {
        self.with_state(|state| {
            if let Some(span) = state
                .runs
                .get_mut(ev.run_id())
                .and_then(|run| run.tools.get_mut(ev.call_id()))
            {
                span.error = Some(ev.error().to_string());
                span.set("error.type", "tool_error");
            }
        });
    }

    async fn tool_after(&self, ev: &ToolAfter, cx: HookCx<'_>, capture: bool) {
        let result = if capture {
            let meta = meta(&[
                ("toolName", ev.name()),
                ("callId", ev.call_id()),
                ("turnId", ev.turn_id()),
            ]);
            Some(redact(cx, RedactKind::ToolResult, result_text(ev.result()), meta).await)
        } else {
            None
        };
        self.with_state(|state| {
            let Some(mut span) = state
                .runs
                .get_mut(ev.run_id())
                .and_then(|run| run.tools.remove(ev.call_id()))
            else {
                return;
            };
            if let Some(outcome) = ev.outcome() {
                let outcome = serde_json::to_value(outcome).ok();
                if let Some(Value::String(outcome)) = outcome {
                    span.set("zidane.tool.outcome", outcome);
                }
            }
            if ev.is_error() {
                span.error.get_or_insert_with(|| "the tool reported an error".into());
                span.set("error.type", "tool_error");
            }
            if let Some(result) = result {
                span.set("gen_ai.tool.call.result", result);
            }
            span.end();
            state.finished.push(span);
        });
    }

    async fn mcp_before(&self, ev: &McpToolBefore, cx: HookCx<'_>, capture: bool) {
        let input = if capture {
            let meta = meta(&[
                ("server", ev.server()),
                ("toolName", ev.tool()),
                ("callId", ev.call_id()),
            ]);
            Some(redact(cx, RedactKind::McpToolInput, ev.input().to_string(), meta).await)
        } else {
            None
        };
        self.with_bus_run(cx.bus().id(), |run| {
            let parent = run.tools.get(ev.call_id()).cloned();
            let mut span = run.child(format!("tools/call {}", ev.tool()), KIND_CLIENT, parent.as_ref());
            span.set("gen_ai.operation.name", "execute_tool");
            span.set("mcp.method.name", "tools/call");
            span.set("gen_ai.tool.name", ev.tool());
            span.set("gen_ai.tool.call.id", ev.call_id());
            span.set("zidane.mcp.server", ev.server());
            if let Some(input) = input {
                span.set("gen_ai.tool.call.arguments", input);
            }
            run.mcp.insert(ev.call_id().to_owned(), span);
        });
    }

    async fn mcp_after(&self, ev: &McpToolAfter, cx: HookCx<'_>, capture: bool) {
        let result = if capture {
            let meta = meta(&[
                ("server", ev.server()),
                ("toolName", ev.tool()),
                ("callId", ev.call_id()),
            ]);
            Some(redact(cx, RedactKind::McpToolResult, result_text(ev.result()), meta).await)
        } else {
            None
        };
        let bus = cx.bus().id();
        self.finish_mcp(bus, ev.call_id(), |span| {
            if let Some(result) = result {
                span.set("gen_ai.tool.call.result", result);
            }
        });
    }

    fn mcp_error(&self, ev: &McpToolError, bus: usize) {
        let error = ev.error().to_string();
        self.finish_mcp(bus, ev.call_id(), |span| {
            span.error = Some(error);
            span.set("error.type", "mcp_error");
        });
    }

    fn finish_mcp(&self, bus: usize, call_id: &str, f: impl FnOnce(&mut SpanData)) {
        self.with_state(|state| {
            let Some(mut span) = state.bus_run(bus).and_then(|run| run.mcp.remove(call_id)) else {
                return;
            };
            f(&mut span);
            span.end();
            state.finished.push(span);
        });
    }

    async fn decision_end(&self, ev: &DecisionEnd, cx: HookCx<'_>, capture: bool) {
        let answers = match ev.answers() {
            Some(answers) if capture => {
                let meta = meta(&[("kind", ev.kind())]);
                Some(redact(cx, RedactKind::DecisionAnswers, answers.to_string(), meta).await)
            }
            _ => None,
        };
        let bus = cx.bus().id();
        self.with_state(|state| {
            let Some(run) = state.bus_run(bus) else {
                return;
            };
            let mut span = run.child(format!("decision {}", ev.kind()), KIND_INTERNAL, None);
            span.start_ns = span.start_ns.saturating_sub(ev.duration_ms().saturating_mul(1_000_000));
            span.set("zidane.decision.kind", ev.kind());
            span.set("zidane.decision.ok", ev.ok());
            if let Some(reason) = ev.reason() {
                span.set("zidane.decision.reason", reason);
            }
            if let Some(answers) = answers {
                span.set("zidane.decision.answers", answers);
            }
            if !ev.ok() {
                span.error = Some(ev.reason().unwrap_or("the decision failed").to_owned());
            }
            span.end();
            state.finished.push(span);
        });
    }

    fn spawn_before(&self, ev: &mut SpawnBefore, _bus: usize) {
        let traceparent = self.with_state(|state| {
            let run = state.runs.get(ev.parent_run_id()?)?;
            let span = run.tools.get(ev.child_id()).unwrap_or(&run.span);
            Some(span.traceparent())
        });
        if let Some(traceparent) = traceparent {
            ev.tracing_context.insert("traceparent".into(), traceparent);
        }
    }

    fn agent_done(&self, ev: &AgentDone, bus: usize) {
        self.with_state(|state| {
            let Some(run) = state.buses.remove(&bus).and_then(|id| state.runs.remove(&id)) else {
                return;
            };
            let stats = ev.stats();
            let Run {
                mut span,
                chats,
                tools,
                mcp,
                ..
            } = run;
            // Whatever is still open ended with the run.
            for mut open in chats.into_values().chain(mcp.into_values()).chain(tools.into_values()) {
                open.error.get_or_insert_with(|| "the run ended first".into());
                open.end();
                state.finished.push(open);
            }
            span.set(
                "gen_ai.usage.input_tokens",
                stats.totals.input + stats.totals.cache_read + stats.totals.cache_creation,
            );
            span.set("gen_ai.usage.output_tokens", stats.totals.output);
            span.set("zidane.turns", stats.turns);
            span.set("zidane.tool_calls", stats.tool_calls);
            if let Some(cost) = stats.totals.cost {
                span.set("zidane.cost_usd", cost);
            }
            let status = serde_json::to_value(stats.status).ok();
            if let Some(Value::String(status)) = status {
                span.set("zidane.status", status);
            }
            if stats.status == RunStatus::Error {
                span.error = Some("the run failed".into());
            }
            span.end();
            state.finished.push(span);
        });
        self.export_finished();
    }

    /// Starts an export of every finished span.
    fn export_finished(&self) {
        let spans = self.with_state(|state| std::mem::take(&mut state.finished));
        if spans.is_empty() {
            return;
        }
        let inner = Arc::clone(&self.inner);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to send from: keep them for the next flush.
            self.with_state(|state| state.finished.extend(spans));
            return;
        };
        let handle = runtime.spawn(async move { inner.export(spans).await });
        self.inner.exports.lock().push(handle);
    }
}

impl Inner {
    async fn export(&self, spans: Vec<SpanData>) -> Result<usize, String> {
        let body = span::export_body(&self.options.service_name, &spans).to_string();
        let mut request = http::Request::post(self.url.clone()).header(http::header::CONTENT_TYPE, "application/json");
        for (name, value) in &self.options.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let request = request
            .body(RequestBody::from(Bytes::from(body)))
            .map_err(|e| format!("the request could not be built: {e}"))?;
        let signal = AbortSignal::never();
        match self.client.send_for_body("otlp", request, &signal).await {
            Ok(_) => Ok(spans.len()),
            Err(e) => Err(format!("{} spans not delivered: {e}", spans.len())),
        }
    }
}

/// Runs `value` through `tracing:redact` on the emitting bus.
async fn redact(cx: HookCx<'_>, kind: RedactKind, value: String, meta: Map<String, Value>) -> String {
    let bus = cx.bus();
    if !bus.has::<TracingRedact>() {
        return value;
    }
    let mut ev = TracingRedact::new(TracingRedactInit {
        kind,
        meta: Some(meta),
        value: value.clone(),
    });
    ev.redacted = value;
    match bus.emit(&mut ev).await {
        Ok(()) => ev.redacted,
        Err(_) => REDACTION_FAILED.to_owned(),
    }
}

/// The assistant turn as `gen_ai.output.messages`, each part redacted by
/// its kind.
async fn output_messages(cx: HookCx<'_>, ev: &TurnAfter) -> String {
    let mut parts = Vec::new();
    for block in ev.message().content.iter() {
        let meta = || meta(&[("turnId", ev.turn_id())]);
        match block {
            ContentBlock::Text { text } => {
                let content = redact(cx, RedactKind::StreamText, text.clone(), meta()).await;
                parts.push(json!({"type": "text", "content": content}));
            }
            ContentBlock::Thinking { thinking, .. } => {
                let content = redact(cx, RedactKind::StreamThinking, thinking.clone(), meta()).await;
                parts.push(json!({"type": "reasoning", "content": content}));
            }
            ContentBlock::ToolUse { id, name, input } => {
                let mut m = meta();
                m.insert("toolName".into(), name.as_str().into());
                m.insert("callId".into(), id.as_str().into());
                let arguments = redact(cx, RedactKind::ToolInput, input.to_string(), m).await;
                parts.push(json!({"type": "tool_call", "id": id, "name": name, "arguments": arguments}));
            }
            _ => {}
        }
    }
    let finish = ev.usage().finish_reason.map(finish_name);
    json!([{"role": "assistant", "parts": parts, "finish_reason": finish}]).to_string()
}

fn meta(pairs: &[(&str, &str)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
        .collect()
}

fn blocks_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn result_text(result: &ToolResultContent) -> String {
    match result {
        ToolResultContent::Text(text) => text.clone(),
        ToolResultContent::Parts(parts) => blocks_text(parts),
    }
}

/// The GenAI conventions' finish reason names.
fn finish_name(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::Pause => "pause",
        FinishReason::Refusal => "content_filter",
        FinishReason::Error => "error",
    }
}

fn error_type(status: Option<u16>) -> String {
    status.map_or_else(|| "stream_error".to_owned(), |s| s.to_string())
}
