//! The way back into JavaScript: one thread-safe function per agent that the
//! Rust side calls with a JSON envelope (a hook's payload, a tool call) and
//! that answers with a promise of JSON text; the hooks registered on the bus
//! through it, and the tools that run through it.

use std::cell::RefCell;
use std::sync::Arc;

use napi::Status;
use napi::bindgen_prelude::Promise;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use zidane::agent::events::*;
use zidane::hooks::{BoxFuture, HookBus, HookEvent, HookHandle};
use zidane::tools::{Tool, ToolContext, ToolFailure, ToolOutput};

/// The JavaScript dispatcher: `(envelope: string) => Promise<string>`.
/// Weak: it never keeps the Node process alive by itself.
pub(crate) type JsCall = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

/// A handle on the dispatcher, shared by every hook and tool of an agent.
#[derive(Clone)]
pub(crate) struct Bridge {
    call: Arc<JsCall>,
}

impl Bridge {
    pub(crate) fn new(call: JsCall) -> Self {
        Bridge { call: Arc::new(call) }
    }

    /// Sends `envelope` and waits for the answer's text.
    pub(crate) async fn ask(&self, envelope: Value) -> Result<String, String> {
        let promise = self
            .call
            .call_async(envelope.to_string())
            .await
            .map_err(|e| format!("the JavaScript side is gone: {e}"))?;
        promise.await.map_err(|e| e.reason.clone())
    }

    /// Sends `envelope` without waiting.
    pub(crate) fn tell(&self, envelope: Value) {
        let _ = self
            .call
            .call(envelope.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

// Payload values through serde where the type has it, `null` otherwise
// (autoref specialization: the generated code names no types).
pub(crate) struct Js<'a, T>(pub(crate) &'a T);

pub(crate) trait ViaSerde {
    fn js(&self) -> Value;
}

impl<T: Serialize> ViaSerde for &Js<'_, T> {
    fn js(&self) -> Value {
        serde_json::to_value(self.0).unwrap_or(Value::Null)
    }
}

pub(crate) trait ViaNothing {
    fn js(&self) -> Value;
}

impl<T> ViaNothing for Js<'_, T> {
    fn js(&self) -> Value {
        Value::Null
    }
}

// A handler's answer for a writable field, through serde (every writable
// field's type has it).
pub(crate) struct Slot<'a, T>(pub(crate) RefCell<&'a mut T>);

pub(crate) trait TakeSerde {
    fn take(&self, v: &Value, what: &str);
}

impl<T: DeserializeOwned> TakeSerde for &Slot<'_, T> {
    fn take(&self, v: &Value, what: &str) {
        match serde_json::from_value::<T>(v.clone()) {
            Ok(x) => **self.0.borrow_mut() = x,
            Err(e) => tracing_warn(&format!("hook answer `{what}` ignored: {e}")),
        }
    }
}

#[allow(clippy::print_stderr)]
fn tracing_warn(message: &str) {
    eprintln!("@zidane-rs/agent: {message}");
}

pub(crate) fn put(out: &mut Map<String, Value>, key: &str, value: Value) {
    if !value.is_null() {
        out.insert(key.to_owned(), value);
    }
}

pub(crate) fn flatten(out: &mut Map<String, Value>, value: Value) {
    if let Value::Object(map) = value {
        out.extend(map);
    }
}

pub(crate) fn error_value<E: ToString + ?Sized>(e: &E) -> Value {
    Value::String(e.to_string())
}

/// Puts a handler on `E` that sends its payload to JavaScript, waits for
/// the handlers there, and reads back the answers of a decision hook.
pub(crate) fn on<E: HookEvent>(
    bus: &HookBus,
    bridge: Bridge,
    write: impl Fn(&E, &mut Map<String, Value>) + Send + Sync + 'static,
    read: Option<impl Fn(&mut E, &Map<String, Value>) + Send + Sync + 'static>,
) -> HookHandle {
    let write = Arc::new(write);
    let read = read.map(Arc::new);
    bus.on::<E, _>(move |ev: &mut E, _cx| {
        let bridge = bridge.clone();
        let write = Arc::clone(&write);
        let read = read.clone();
        let fut: BoxFuture<'_, _> = Box::pin(async move {
            let mut payload = Map::new();
            write(ev, &mut payload);
            let envelope = json!({ "kind": "hook", "name": E::NAME, "payload": payload });
            let answer = bridge.ask(envelope).await?;
            if let Some(read) = read
                && let Ok(Value::Object(answer)) = serde_json::from_str::<Value>(&answer)
            {
                read(ev, &answer);
            }
            Ok(())
        });
        fut
    })
}

include!(concat!(env!("OUT_DIR"), "/hooks.rs"));

/// A tool written in JavaScript: its body runs in Node through the bridge.
pub(crate) struct JsTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) schema: Value,
    pub(crate) parallel: bool,
    pub(crate) bridge: Bridge,
}

impl Tool for JsTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn parallel_safe(&self) -> bool {
        self.parallel
    }

    fn execute<'a>(&'a self, input: Value, cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolFailure>> {
        Box::pin(async move {
            let envelope = json!({
                "kind": "tool",
                "name": self.name,
                "input": input,
                "ctx": { "callId": cx.call_id(), "runId": cx.run_id(), "turnId": cx.turn_id() },
            });
            // The loop may drop this future when the call is cancelled or the
            // run aborted: the guard then fires the JavaScript call's signal.
            let mut guard = AbortOnDrop {
                bridge: &self.bridge,
                call_id: cx.call_id().to_owned(),
                reason: cx.signal().clone(),
                armed: true,
            };
            let signal = cx.signal().clone();
            let answer = tokio::select! {
                answer = self.bridge.ask(envelope) => answer,
                _ = signal.aborted() => return Err(ToolFailure::from("the call was cancelled".to_owned())),
            };
            guard.armed = false;
            let answer: Value = serde_json::from_str(&answer?).map_err(|e| e.to_string())?;
            if let Some(message) = answer.get("error").and_then(Value::as_str) {
                return Err(ToolFailure::from(message.to_owned()));
            }
            let output = answer.get("output").cloned().unwrap_or(Value::Null);
            let content = serde_json::from_value(output.get("content").cloned().unwrap_or(Value::Null))
                .map_err(|e| format!("the tool's result is neither text nor content blocks: {e}"))?;
            let mut output_ = ToolOutput {
                content,
                is_error: output.get("isError").and_then(Value::as_bool).unwrap_or(false),
                ..Default::default()
            };
            if let Some(metadata) = output
                .get("metadata")
                .filter(|m| m.as_object().is_some_and(|m| !m.is_empty()))
            {
                output_.metadata =
                    serde_json::from_value(metadata.clone()).map_err(|e| format!("the tool's result metadata: {e}"))?;
            }
            let output = output_;
            Ok(output)
        })
    }
}

struct AbortOnDrop<'a> {
    bridge: &'a Bridge,
    call_id: String,
    reason: zidane::providers::AbortSignal,
    armed: bool,
}

impl Drop for AbortOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            let reason = self.reason.reason().unwrap_or_else(|| "cancelled".to_owned());
            self.bridge
                .tell(json!({ "kind": "abort-tool", "callId": self.call_id, "reason": reason }));
        }
    }
}
