//! How a gate's final state becomes a decision: the one place the precedence
//! rules live.

use zidane_provider::{ContentBlock, ToolResultContent};

use super::{McpToolGate, ToolGate, ToolResultMetadata};

/// The reason a refusal carries when no handler gave one.
pub const BLOCKED_DEFAULT_REASON: &str = "Tool execution was blocked";

/// What the dispatcher does with a call after its gate ran.
#[derive(Debug, Clone, PartialEq)]
pub enum GateDecision {
    /// Refuse the call; the model sees `Blocked: <reason>` as an error result.
    Block {
        /// The handler's reason, or [`BLOCKED_DEFAULT_REASON`].
        reason: String,
        /// Metadata riding the refusal.
        metadata: ToolResultMetadata,
    },
    /// Skip the body; the model sees this result as a normal one.
    Substitute(ToolResultContent),
    /// Run the body.
    Execute,
}

impl GateDecision {
    /// Resolves a gate's fields: `block` beats `result`; an empty or blank
    /// reason becomes [`BLOCKED_DEFAULT_REASON`].
    pub fn resolve(
        block: bool,
        reason: &str,
        result: Option<&ToolResultContent>,
        metadata: &ToolResultMetadata,
    ) -> GateDecision {
        if block {
            let reason = if reason.trim().is_empty() {
                BLOCKED_DEFAULT_REASON
            } else {
                reason
            };
            return GateDecision::Block {
                reason: reason.to_owned(),
                metadata: metadata.clone(),
            };
        }
        match result {
            Some(result) => GateDecision::Substitute(result.clone()),
            None => GateDecision::Execute,
        }
    }

    /// The `tool_result` block the model receives for `call_id`, or `None`
    /// when the body runs and produces it.
    pub fn tool_result(&self, call_id: &str) -> Option<ContentBlock> {
        match self {
            GateDecision::Block { reason, .. } => Some(ContentBlock::ToolResult {
                tool_use_id: call_id.to_owned(),
                content: ToolResultContent::Text(format!("Blocked: {reason}")),
                is_error: true,
            }),
            GateDecision::Substitute(content) => Some(ContentBlock::ToolResult {
                tool_use_id: call_id.to_owned(),
                content: content.clone(),
                is_error: false,
            }),
            GateDecision::Execute => None,
        }
    }
}

impl ToolGate {
    /// The decision the handlers' writes add up to.
    pub fn decision(&self) -> GateDecision {
        GateDecision::resolve(self.block, &self.reason, self.result.as_ref(), &self.metadata)
    }
}

impl McpToolGate {
    /// The decision the handlers' writes add up to (same rule as `tool:gate`).
    pub fn decision(&self) -> GateDecision {
        GateDecision::resolve(
            self.block,
            &self.reason,
            self.result.as_ref(),
            &ToolResultMetadata::new(),
        )
    }
}
