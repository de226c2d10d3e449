//! What fills the context window: per-category token counts and the text of
//! each chunk, available before the first run.

use zidane_provider::Role;

/// Options of [`Agent::get_context_breakdown`](crate::Agent::get_context_breakdown) and [`Agent::get_context_segments`](crate::Agent::get_context_segments).
#[derive(Debug, Clone, Default)]
pub struct ContextOptions {
    /// The model's usable window (raw window minus output reserve), when the
    /// host knows it.
    pub effective_window: Option<u64>,
    /// The rendered rules block inside the system prompt, reported apart.
    pub rules_block: Option<String>,
    /// Rules files the host loaded (path and text).
    pub rules_files: Vec<(String, String)>,
    /// Ask the provider for exact counts of the system prompt and tools
    /// (one round trip), when it can count.
    pub exact: bool,
}

/// One category of the breakdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextCategory {
    /// `system`, `rules`, `tools`, `conversation`, `autocompact buffer` or `free`.
    pub name: &'static str,
    /// Tokens.
    pub tokens: u64,
    /// Whether the count is an estimate.
    pub estimated: bool,
}

/// The context window by category.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextBreakdown {
    /// The categories, in display order.
    pub categories: Vec<ContextCategory>,
    /// Tokens in use.
    pub used: u64,
    /// The usable window, when known.
    pub effective_window: Option<u64>,
    /// Share of the window in use, when the window is known.
    pub fraction: Option<f64>,
}

/// Where a chunk of context comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SegmentSource {
    /// The base system prompt.
    System,
    /// A rules file.
    RulesFile {
        /// Its path.
        path: String,
    },
    /// A tool's description.
    Tool {
        /// The tool's name.
        name: String,
    },
    /// A conversation turn.
    Turn {
        /// The turn's id.
        id: String,
        /// Who wrote it.
        role: Role,
    },
}

/// The text of one chunk of context and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextSegment {
    /// Where it came from.
    pub source: SegmentSource,
    /// Its text.
    pub text: String,
}
