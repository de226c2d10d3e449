//! A discovered MCP tool as a loop tool.

use std::sync::Arc;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientRequest,
    NumberOrString, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use zidane_core::events::{
    GateDecision, McpToolAfter, McpToolBefore, McpToolError, McpToolGate, McpToolSchema, McpToolTransform,
    MessageError, SharedError, ToolProgress,
};
use zidane_core::tool::{ToolContext, ToolFailure};
use zidane_core::{Tool, ToolOutput};
use zidane_provider::{BoxFuture, ContentBlock, ImageSource, ToolResultContent};

use crate::handler::observe;
use crate::server::Server;
use zidane_core::events::{
    McpToolAfterInit, McpToolBeforeInit, McpToolErrorInit, McpToolGateInit, McpToolTransformInit,
};

/// `mcp_<server>_<tool>`, with characters a provider refuses replaced by `_`
/// and the whole bounded to 64 characters (a long name keeps its start and a
/// hash of the rest, so two long names stay apart).
pub fn namespaced_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    let full = format!("mcp_{}_{}", clean(server), clean(tool));
    if full.len() <= 64 {
        return full;
    }
    let hash = full
        .bytes()
        .fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    format!("{}_{hash:08x}", &full[..55])
}

/// A tool of an MCP server: calls go through `mcp:tool:before`, the
/// `mcp:tool:gate`, `mcp:tool:transform` and `mcp:tool:after` hooks (or
/// `mcp:tool:error`); progress notifications become `tool:progress`; a
/// cancelled call sends the MCP cancellation.
pub struct McpTool {
    name: String,
    schema: McpToolSchema,
    description: String,
    server: Arc<Server>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    pub(crate) fn new(name: String, schema: McpToolSchema, server: Arc<Server>) -> Self {
        let description = schema
            .description
            .clone()
            .unwrap_or_else(|| format!("`{}` of the {} MCP server", schema.name, server.config.name));
        McpTool {
            name,
            schema,
            description,
            server,
        }
    }

    async fn call(&self, input: Value, cx: ToolContext) -> Result<ToolOutput, ToolFailure> {
        // A call in a run reports on the running agent's bus: a sub-agent
        // using its parent's connection has its own `mcp:tool:*` (which
        // its parent sees as `child:mcp:tool:gate`); a call outside a run
        // reports where the connection was made.
        let hooks = if cx.run_id().is_empty() {
            &self.server.hooks
        } else {
            cx.hooks()
        };
        let server = self.server.config.name.clone();
        let tool = self.schema.name.clone();
        let call_id = cx.call_id().to_owned();
        let mut before = McpToolBefore::new(McpToolBeforeInit {
            server: server.clone(),
            tool: tool.clone(),
            name: self.name.clone(),
            call_id: call_id.clone(),
            input: input.clone(),
        });
        observe(hooks, &mut before).await;
        let mut gate = McpToolGate::new(McpToolGateInit {
            server: server.clone(),
            tool: tool.clone(),
            name: self.name.clone(),
            call_id: call_id.clone(),
            input: input.clone(),
        });
        if let Err(e) = hooks.emit(&mut gate).await {
            gate.block = true;
            gate.reason = format!("an mcp:tool:gate handler failed: {e}");
        }
        let result = match gate.decision() {
            GateDecision::Block { reason, .. } => return Ok(ToolOutput::error(format!("Blocked: {reason}"))),
            GateDecision::Substitute(content) => Ok(ToolOutput {
                content,
                ..Default::default()
            }),
            GateDecision::Execute => self.send(&input, &cx).await,
        };
        let output = match result {
            Ok(output) => output,
            Err(error) => {
                let mut ev = McpToolError::new(McpToolErrorInit {
                    server,
                    tool,
                    name: self.name.clone(),
                    call_id,
                    input,
                    error: Arc::clone(&error),
                });
                observe(hooks, &mut ev).await;
                return Err(Box::new(MessageError(error.to_string())));
            }
        };
        let bytes = output.content.text_len();
        let mut transform = McpToolTransform::new(McpToolTransformInit {
            server: server.clone(),
            tool: tool.clone(),
            name: self.name.clone(),
            call_id: call_id.clone(),
            input: input.clone(),
            output_bytes: bytes,
        });
        transform.result = output.content;
        observe(hooks, &mut transform).await;
        let content = transform.result;
        let mut after = McpToolAfter::new(McpToolAfterInit {
            server,
            tool,
            name: self.name.clone(),
            call_id,
            input,
            output_bytes: bytes,
            result: content.clone(),
        });
        observe(hooks, &mut after).await;
        Ok(ToolOutput {
            content,
            is_error: output.is_error,
            metadata: output.metadata,
        })
    }

    /// Sends `tools/call`; a JSON-RPC error or a dead server is an error, an
    /// MCP error result a result the model sees as one.
    async fn send(&self, input: &Value, cx: &ToolContext) -> Result<ToolOutput, SharedError> {
        let fail = |m: String| -> SharedError { Arc::new(MessageError(m)) };
        let client = self.server.client().await.map_err(|e| fail(e.to_string()))?;
        let arguments = match input {
            Value::Object(map) => map.clone(),
            Value::Null => serde_json::Map::new(),
            other => return Err(fail(format!("arguments must be a JSON object, not {other}"))),
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(self.schema.name.clone()).with_arguments(arguments),
        ));
        let peer = client.peer().clone();
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::default())
            .await
            .map_err(|e| fail(format!("MCP error: {e}")))?;
        // The client numbers progress tokens itself; progress for this call
        // arrives under the token of its request.
        let token = match &handle.progress_token.0 {
            NumberOrString::String(s) => s.to_string(),
            NumberOrString::Number(n) => n.to_string(),
        };
        let request_id = handle.id.clone();
        let (tx, mut rx) = mpsc::unbounded_channel();
        self.server.progress.lock().insert(token.clone(), tx);
        let timeout = self.server.config.call_timeout;
        let call = tokio::time::timeout(timeout, handle.await_response());
        tokio::pin!(call);
        let outcome = loop {
            tokio::select! {
                biased;
                () = cx.signal().aborted() => {
                    // Tell the server, so it can stop the work.
                    let cancelled = CancelledNotification::new(CancelledNotificationParam::new(
                        Some(request_id.clone()),
                        cx.signal().reason(),
                    ));
                    let _ = peer.send_notification(cancelled.into()).await;
                    break Err(fail("the call was cancelled".into()));
                }
                Some(progress) = rx.recv() => {
                    let report = ToolProgress {
                        message: progress.message.clone(),
                        data: json!({ "progress": progress.progress, "total": progress.total }),
                    };
                    cx.report_progress(report).await;
                }
                done = &mut call => break match done {
                    Err(_) => Err(fail(format!("the server did not answer within {}s", timeout.as_secs()))),
                    Ok(Err(e)) => {
                        // A JSON-RPC error leaves the server usable; anything
                        // else (a closed transport) means it is gone.
                        if !matches!(e, ServiceError::McpError(_)) {
                            self.server.forget().await;
                        }
                        Err(fail(format!("MCP error: {e}")))
                    }
                    Ok(Ok(ServerResult::CallToolResult(result))) => Ok(convert(&result)),
                    Ok(Ok(other)) => Err(fail(format!("unexpected answer to tools/call: {other:?}"))),
                },
            }
        };
        self.server.progress.lock().remove(&token);
        outcome
    }
}

/// An MCP result as the model's tool result.
fn convert(result: &rmcp::model::CallToolResult) -> ToolOutput {
    let mut parts = Vec::new();
    for item in &result.content {
        let value = serde_json::to_value(item).unwrap_or(Value::Null);
        match value.get("type").and_then(Value::as_str) {
            Some("text") => parts.push(ContentBlock::text(value["text"].as_str().unwrap_or_default())),
            Some("image") => parts.push(ContentBlock::Image {
                source: ImageSource::Base64 {
                    media_type: value["mimeType"].as_str().unwrap_or("image/png").to_owned(),
                    data: value["data"].as_str().unwrap_or_default().to_owned(),
                },
            }),
            Some("resource") => {
                let resource = &value["resource"];
                let text = resource["text"]
                    .as_str()
                    .map_or_else(|| resource.to_string(), str::to_owned);
                parts.push(ContentBlock::text(text));
            }
            _ => parts.push(ContentBlock::text(value.to_string())),
        }
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(ContentBlock::text(structured.to_string()));
    }
    cap_text(&mut parts, MAX_RESULT_TEXT_BYTES);
    let content = match parts.as_slice() {
        [] => ToolResultContent::Text(String::new()),
        [ContentBlock::Text { text }] => ToolResultContent::Text(text.clone()),
        _ => ToolResultContent::Parts(parts),
    };
    ToolOutput {
        content,
        is_error: result.is_error.unwrap_or(false),
        metadata: Default::default(),
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema.input_schema
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn durability(&self) -> zidane_core::seams::Durability {
        if self.schema.idempotent {
            zidane_core::seams::Durability::Safe
        } else {
            zidane_core::seams::Durability::Unsafe
        }
    }

    fn execute<'a>(&'a self, input: Value, cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolFailure>> {
        Box::pin(self.call(input, cx))
    }
}

/// The text an MCP result may give the model, in bytes; past it the text is
/// cut with a note (images are kept).
pub const MAX_RESULT_TEXT_BYTES: usize = 100_000;

/// Cuts the text parts so that together they hold at most `max` bytes.
pub(crate) fn cap_text(parts: &mut [ContentBlock], max: usize) {
    let total: usize = parts
        .iter()
        .map(|p| match p {
            ContentBlock::Text { text } => text.len(),
            _ => 0,
        })
        .sum();
    if total <= max {
        return;
    }
    let mut left = max;
    let mut cut = false;
    for part in parts.iter_mut() {
        let ContentBlock::Text { text } = part else { continue };
        if cut {
            text.clear(); // past the cut, text parts carry nothing more
        } else if text.len() > left {
            let mut end = left;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str(&format!(
                "\n[... the server's result was {total} bytes; cut at {max}: ask for less at a time]"
            ));
            cut = true;
        } else {
            left -= text.len();
        }
    }
}

#[cfg(test)]
mod tests;
