//! Snapshots of the dimensions that make up a request's prompt-cache key, and
//! their diffs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use zidane_core::events::{CacheDimensionName, CacheSystemSection};
use zidane_provider::{SYSTEM_PROMPT_BOUNDARY, StreamOptions};

use crate::hash::{fnv1a32, hash_messages};

/// Texts of system-prompt sections a snapshot can name; each counts only
/// when it is a substring of the request's system prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachePromptSections {
    /// The MCP server instructions the SDK appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_instructions: Option<String>,
    /// The rules block the run passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<String>,
    /// The skills catalog the SDK appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills_catalog: Option<String>,
    /// The searchable tools catalog the SDK appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_catalog: Option<String>,
}

/// The cache-relevant dimensions of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheDimensionSnapshot {
    /// Whether the level-derived effort hint is sent (`true` when absent).
    pub effort_hint: bool,
    /// Messages in the request.
    pub message_count: u32,
    /// Per-message hashes, in order.
    pub message_hashes: Vec<u32>,
    /// Model id.
    pub model: String,
    /// UTF-8 byte length of the system prompt.
    pub system_bytes: u64,
    /// Hash of the system prompt (boundary marker included).
    pub system_hash: u32,
    /// Hash of each part of the system prompt that could be found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_sections: Option<BTreeMap<CacheSystemSection, u32>>,
    /// Whole-task thinking budget (`0` when absent).
    pub task_budget: u32,
    /// Thinking level (`off` when absent).
    pub thinking: String,
    /// Exact thinking budget (`0` when absent).
    pub thinking_budget: u32,
    /// Tools offered.
    pub tools_count: u32,
    /// Hash of the JSON of the tool list.
    pub tools_hash: u32,
}

/// What differs between two snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheDimensionDiff {
    /// The dimensions whose hashes differ, in a fixed order.
    pub changed: Vec<CacheDimensionName>,
    /// A readable line per changed dimension.
    pub details: BTreeMap<CacheDimensionName, String>,
    /// Where the message prefixes diverged, when `messagePrefix` changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_prefix_diverged_at: Option<u32>,
    /// The system-prompt parts that changed, when `system` changed and both
    /// snapshots carry sections; empty when the change could not be traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_sections: Option<Vec<CacheSystemSection>>,
}

impl CacheDimensionDiff {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty()
    }
}

/// Builds the snapshot of a request. Pure; deterministic on byte-identical
/// input. The halves around [`SYSTEM_PROMPT_BOUNDARY`] are always hashed;
/// `sections` names further parts.
pub fn snapshot_cache_dimensions(
    options: &StreamOptions,
    sections: Option<&CachePromptSections>,
) -> CacheDimensionSnapshot {
    let system = options.system.as_deref().unwrap_or_default();
    let tools_json = serde_json::to_string(&options.tools).unwrap_or_default();
    let message_hashes = hash_messages(&options.messages);
    CacheDimensionSnapshot {
        effort_hint: options.effort_hint.unwrap_or(true),
        message_count: message_hashes.len() as u32,
        message_hashes,
        model: options.model.clone(),
        system_bytes: system.len() as u64,
        system_hash: fnv1a32(system),
        system_sections: options.system.as_deref().map(|s| system_sections(s, sections)),
        task_budget: options.task_budget.unwrap_or(0),
        thinking: options.thinking.as_str().to_owned(),
        thinking_budget: options.thinking_budget.unwrap_or(0),
        tools_count: options.tools.len() as u32,
        tools_hash: fnv1a32(&tools_json),
    }
}

fn system_sections(system: &str, sections: Option<&CachePromptSections>) -> BTreeMap<CacheSystemSection, u32> {
    let mut out = BTreeMap::new();
    let mut found: Vec<&str> = Vec::new();
    // The catalog the agent renders (`<skills>…</skills>`) is found without
    // the host naming it.
    let rendered = system.find("<skills>\n").and_then(|start| {
        system[start..]
            .find("</skills>")
            .map(|end| system[start..start + end + "</skills>".len()].to_owned())
    });
    let detected = CachePromptSections {
        skills_catalog: rendered,
        ..Default::default()
    };
    let sections = match sections {
        Some(given) if given.skills_catalog.is_some() => Some(given.clone()),
        Some(given) => Some(CachePromptSections {
            skills_catalog: detected.skills_catalog.clone(),
            ..given.clone()
        }),
        None if detected.skills_catalog.is_some() => Some(detected),
        None => None,
    };
    if let Some(sections) = &sections {
        let named = [
            (CacheSystemSection::SkillsCatalog, &sections.skills_catalog),
            (CacheSystemSection::ToolsCatalog, &sections.tools_catalog),
            (CacheSystemSection::McpInstructions, &sections.mcp_instructions),
            (CacheSystemSection::Rules, &sections.rules),
        ];
        for (name, text) in named {
            if let Some(text) = text.as_deref().filter(|t| !t.is_empty() && system.contains(*t)) {
                out.insert(name, fnv1a32(text));
                found.push(text);
            }
        }
    }
    // The host's own parts, with the named sections taken out so a catalog
    // change is not also blamed on the host.
    let strip = |part: &str| found.iter().fold(part.to_owned(), |acc, s| acc.replace(s, ""));
    match system.split_once(SYSTEM_PROMPT_BOUNDARY) {
        Some((head, tail)) => {
            out.insert(CacheSystemSection::HostStatic, fnv1a32(&strip(head)));
            out.insert(CacheSystemSection::HostDynamic, fnv1a32(&strip(tail)));
        }
        None => {
            out.insert(CacheSystemSection::HostStatic, fnv1a32(&strip(system)));
        }
    }
    out
}

/// The dimensions that differ between `prev` and `curr`, with a readable
/// line for each. Pure.
///
/// Messages are compared by position: a longer request whose first messages
/// match is an append and no change; the first position whose hash differs
/// (or a shorter request) is where the prefix diverged.
pub fn diff_cache_dimensions(prev: &CacheDimensionSnapshot, curr: &CacheDimensionSnapshot) -> CacheDimensionDiff {
    let mut diff = CacheDimensionDiff::default();
    let mut change = |name: CacheDimensionName, detail: String| {
        diff.changed.push(name);
        diff.details.insert(name, detail);
    };
    if prev.system_hash != curr.system_hash || prev.system_bytes != curr.system_bytes {
        change(
            CacheDimensionName::System,
            if prev.system_bytes == curr.system_bytes {
                format!("system: {} bytes, content changed", curr.system_bytes)
            } else {
                format!("system: {} → {} bytes", prev.system_bytes, curr.system_bytes)
            },
        );
    }
    if prev.tools_hash != curr.tools_hash || prev.tools_count != curr.tools_count {
        change(
            CacheDimensionName::Tools,
            if prev.tools_count == curr.tools_count {
                format!("tools: {} tools, definitions changed", curr.tools_count)
            } else {
                format!("tools: {} → {} tools", prev.tools_count, curr.tools_count)
            },
        );
    }
    if prev.model != curr.model {
        change(
            CacheDimensionName::Model,
            format!("model: {} → {}", prev.model, curr.model),
        );
    }
    if prev.thinking != curr.thinking {
        change(
            CacheDimensionName::Thinking,
            format!("thinking: {} → {}", prev.thinking, curr.thinking),
        );
    }
    if prev.thinking_budget != curr.thinking_budget {
        change(
            CacheDimensionName::ThinkingBudget,
            format!("thinkingBudget: {} → {}", prev.thinking_budget, curr.thinking_budget),
        );
    }
    if prev.task_budget != curr.task_budget {
        change(
            CacheDimensionName::TaskBudget,
            format!("taskBudget: {} → {}", prev.task_budget, curr.task_budget),
        );
    }
    if prev.effort_hint != curr.effort_hint {
        change(
            CacheDimensionName::EffortHint,
            format!("effortHint: {} → {}", prev.effort_hint, curr.effort_hint),
        );
    }
    let shared = prev.message_hashes.len().min(curr.message_hashes.len());
    let diverged = (0..shared)
        .find(|&i| prev.message_hashes[i] != curr.message_hashes[i])
        .or((curr.message_hashes.len() < prev.message_hashes.len()).then_some(shared));
    if let Some(at) = diverged {
        change(
            CacheDimensionName::MessagePrefix,
            format!(
                "messagePrefix: rewritten from message {at} ({} → {} messages)",
                prev.message_hashes.len(),
                curr.message_hashes.len()
            ),
        );
        diff.message_prefix_diverged_at = Some(at as u32);
    }
    if diff.changed.contains(&CacheDimensionName::System)
        && let (Some(a), Some(b)) = (&prev.system_sections, &curr.system_sections)
    {
        let keys: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).copied().collect();
        diff.system_sections = Some(keys.into_iter().filter(|k| a.get(k) != b.get(k)).collect());
    }
    diff
}
