//! A finding: what the model reports through the `report_finding` tool,
//! checked against the diff (a place outside it needs a reason), merged
//! with its duplicates, and given a fingerprint that stays the same when
//! the same problem is found again.

use std::sync::Arc;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use zidane::tools::{FnTool, ToolOutput};

use super::diff::Diff;

/// The tool's name.
pub const TOOL: &str = "report_finding";

/// How urgent a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Priority {
    /// Must fix: breaks the program, loses data, opens a hole.
    P0,
    /// Should fix before merging.
    P1,
    /// Worth fixing.
    P2,
    /// A nit.
    P3,
}

impl Priority {
    /// Every priority, most urgent first.
    pub const ALL: [Priority; 4] = [Priority::P0, Priority::P1, Priority::P2, Priority::P3];

    /// Its name (`P0` … `P3`).
    pub fn name(self) -> &'static str {
        match self {
            Priority::P0 => "P0",
            Priority::P1 => "P1",
            Priority::P2 => "P2",
            Priority::P3 => "P3",
        }
    }

    /// What it means.
    pub fn meaning(self) -> &'static str {
        match self {
            Priority::P0 => "must fix",
            Priority::P1 => "should fix before merging",
            Priority::P2 => "worth fixing",
            Priority::P3 => "nit",
        }
    }

    /// The priority named `text` (`P1`, `p1`).
    pub fn parse(text: &str) -> Option<Priority> {
        Priority::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(text.trim()))
    }
}

/// What kind of problem a finding is (the SARIF rule it is reported
/// under).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Wrong results, crashes, off-by-one errors.
    Correctness,
    /// Injection, secrets, access control.
    Security,
    /// Speed and resources.
    Performance,
    /// Error handling, concurrency, edge cases.
    Reliability,
    /// Readability, structure, duplication.
    Maintainability,
    /// Missing or wrong tests.
    Testing,
    /// Wrong or missing documentation.
    Documentation,
    /// Anything else.
    Other,
}

impl Category {
    /// Every category.
    pub const ALL: [Category; 8] = [
        Category::Correctness,
        Category::Security,
        Category::Performance,
        Category::Reliability,
        Category::Maintainability,
        Category::Testing,
        Category::Documentation,
        Category::Other,
    ];

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Category::Correctness => "correctness",
            Category::Security => "security",
            Category::Performance => "performance",
            Category::Reliability => "reliability",
            Category::Maintainability => "maintainability",
            Category::Testing => "testing",
            Category::Documentation => "documentation",
            Category::Other => "other",
        }
    }

    /// The SARIF rule id.
    pub fn rule_id(self) -> String {
        format!("zidane/{}", self.name())
    }

    /// What the rule covers.
    pub fn about(self) -> &'static str {
        match self {
            Category::Correctness => "The change computes a wrong result or crashes.",
            Category::Security => "The change opens a security hole.",
            Category::Performance => "The change wastes time or resources.",
            Category::Reliability => "The change mishandles errors, concurrency or edge cases.",
            Category::Maintainability => "The change is hard to read or to change.",
            Category::Testing => "Tests are missing or wrong.",
            Category::Documentation => "Documentation is missing or wrong.",
            Category::Other => "Another problem.",
        }
    }
}

/// One finding of a review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// How urgent.
    pub priority: Priority,
    /// Its kind.
    pub category: Category,
    /// A one-line title.
    pub title: String,
    /// Why it is a problem, and what to do.
    pub body: String,
    /// The file, relative to the repository's top.
    pub path: String,
    /// The first line (new side).
    pub start_line: u32,
    /// The last line (new side).
    pub end_line: u32,
    /// How sure the model is, from 0 to 1.
    pub confidence: f64,
    /// Why the diff breaks code outside it, for a place outside the diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_diff_reason: Option<String>,
    /// The lines it points at.
    #[serde(default)]
    pub excerpt: String,
    /// Stable across runs: the category, the file and the lines' text.
    #[serde(default)]
    pub fingerprint: String,
}

/// The tool's input schema.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "priority": { "type": "string", "enum": ["P0", "P1", "P2", "P3"],
                "description": "P0 must fix (breaks the program, loses data, a security hole), P1 should fix before merging, P2 worth fixing, P3 nit" },
            "category": { "type": "string", "enum": Category::ALL.iter().map(|c| c.name()).collect::<Vec<_>>() },
            "title": { "type": "string", "description": "one line" },
            "body": { "type": "string", "description": "why it is a problem and what to do" },
            "path": { "type": "string", "description": "the file, relative to the repository's top, as the diff names it" },
            "start_line": { "type": "integer", "minimum": 1, "description": "first line, numbered as in the new version of the file" },
            "end_line": { "type": "integer", "minimum": 1, "description": "last line (default: start_line)" },
            "confidence": { "type": "number", "minimum": 0, "maximum": 1 },
            "outside_diff_reason": { "type": "string",
                "description": "only for lines outside the diff: how the change breaks them" }
        },
        "required": ["priority", "category", "title", "body", "path", "start_line", "confidence"]
    })
}

/// What the tool collects during one review run.
pub(crate) struct Collector {
    diff: Diff,
    cwd: std::path::PathBuf,
    /// The findings so far.
    pub(crate) findings: Vec<Finding>,
    /// Whether the review may reach the network.
    pub(crate) network: bool,
}

impl Collector {
    pub(crate) fn new(diff: Diff, cwd: std::path::PathBuf, network: bool) -> Self {
        Collector {
            diff,
            cwd,
            findings: Vec::new(),
            network,
        }
    }
}

/// The collector of the review going on, if one is.
pub(crate) type Slot = Arc<Mutex<Option<Collector>>>;

/// The `report_finding` tool, adding to `slot`'s collector.
pub(crate) fn tool(slot: Slot) -> FnTool {
    FnTool::new(
        TOOL,
        "Report one problem found in the change under review (one call per problem). Lines are numbered as in the \
         new version of the file and must fall inside the diff's hunks, unless `outside_diff_reason` says how the \
         change breaks code elsewhere.",
        schema(),
        move |input, _cx| {
            let slot = Arc::clone(&slot);
            async move {
                let mut guard = slot.lock();
                let Some(collector) = guard.as_mut() else {
                    return Ok(ToolOutput::error("no review is going on"));
                };
                Ok(match check(&input, &collector.diff, &collector.cwd) {
                    Ok(finding) => {
                        let text = format!(
                            "Recorded {} {} at {}:{}-{}.",
                            finding.priority.name(),
                            finding.title,
                            finding.path,
                            finding.start_line,
                            finding.end_line
                        );
                        collector.findings.push(finding);
                        ToolOutput::text(text)
                    }
                    Err(why) => {
                        ToolOutput::error(format!("Not recorded: {why}. Correct the call and report it again."))
                    }
                })
            }
        },
    )
    .parallel()
    .safe()
}

/// A call's input as a finding, checked against the diff.
pub(crate) fn check(input: &Value, diff: &Diff, cwd: &std::path::Path) -> Result<Finding, String> {
    let text = |key: &str| {
        input
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or_default()
    };
    let priority = Priority::parse(text("priority")).ok_or("`priority` is one of P0, P1, P2, P3")?;
    let category = Category::ALL
        .into_iter()
        .find(|c| c.name() == text("category"))
        .unwrap_or(Category::Other);
    let (title, body) = (text("title"), text("body"));
    if title.is_empty() || body.is_empty() {
        return Err("`title` and `body` must not be empty".into());
    }
    let path = text("path").trim_start_matches("./").to_owned();
    let line = |key: &str| input.get(key).and_then(Value::as_u64).map(|n| n as u32);
    let start = line("start_line")
        .filter(|&n| n >= 1)
        .ok_or("`start_line` is a line number from 1")?;
    let end = line("end_line").unwrap_or(start).max(start);
    let confidence = input
        .get("confidence")
        .and_then(Value::as_f64)
        .filter(|c| (0.0..=1.0).contains(c))
        .ok_or("`confidence` is a number from 0 to 1")?;
    let reason = Some(text("outside_diff_reason"))
        .filter(|r| !r.is_empty())
        .map(str::to_owned);
    let file = diff.file(&path);
    let inside = file.is_some_and(|f| f.touches(start, end));
    if !inside && reason.is_none() {
        let files: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
        return Err(match file {
            None => format!(
                "`{path}` is not in the diff (its files: {}); a finding elsewhere needs `outside_diff_reason`",
                files.join(", ")
            ),
            Some(f) => format!(
                "lines {start}-{end} of `{path}` are outside the diff's hunks ({}); a finding there needs \
                 `outside_diff_reason`",
                f.ranges
                    .iter()
                    .map(|(a, b)| format!("{a}-{b}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    if !inside && file.is_none() && !cwd.join(&path).is_file() {
        return Err(format!("`{path}` is not a file of the repository"));
    }
    let excerpt = excerpt(diff, cwd, &path, start, end);
    Ok(Finding {
        priority,
        category,
        title: title.to_owned(),
        body: body.to_owned(),
        fingerprint: fingerprint(category, &path, &excerpt, title),
        path,
        start_line: start,
        end_line: end,
        confidence,
        outside_diff_reason: reason,
        excerpt,
    })
}

/// Lines `start..=end` of `path`: from the diff's new side, else from the
/// file in the working folder.
fn excerpt(diff: &Diff, cwd: &std::path::Path, path: &str, start: u32, end: u32) -> String {
    let end = end.min(start + 20);
    if let Some(file) = diff.file(path) {
        let lines: Vec<&str> = (start..=end)
            .filter_map(|n| file.lines.get(&n).map(String::as_str))
            .collect();
        if !lines.is_empty() {
            return lines.join("\n");
        }
    }
    std::fs::read_to_string(cwd.join(path))
        .map(|text| {
            text.lines()
                .skip(start as usize - 1)
                .take((end - start + 1) as usize)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The same problem at the same code, whatever line it moved to: the
/// category, the path and the code's text without its indentation (the
/// title when there is no code to read).
fn fingerprint(category: Category, path: &str, excerpt: &str, title: &str) -> String {
    let code: Vec<&str> = excerpt.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let anchor = if code.is_empty() {
        title.to_lowercase()
    } else {
        code.join("\n")
    };
    let text = format!("{}\0{path}\0{anchor}", category.name());
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    digest.as_ref()[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// `findings` with duplicates merged (same file, overlapping lines, same
/// category; or the same fingerprint): the most urgent priority, the
/// higher confidence, the union of the lines, both bodies when they
/// differ. Sorted by priority, file and line.
pub fn merge(findings: Vec<Finding>) -> Vec<Finding> {
    let mut merged: Vec<Finding> = Vec::new();
    for finding in findings {
        let same = merged.iter_mut().find(|m| {
            m.fingerprint == finding.fingerprint
                || (m.path == finding.path
                    && m.category == finding.category
                    && m.start_line <= finding.end_line
                    && finding.start_line <= m.end_line)
        });
        match same {
            Some(m) => {
                m.priority = m.priority.min(finding.priority);
                m.confidence = m.confidence.max(finding.confidence);
                if !m.body.contains(&finding.body) {
                    m.body = format!("{}\n\n{}", m.body, finding.body);
                }
                if finding.start_line < m.start_line || finding.end_line > m.end_line {
                    m.start_line = m.start_line.min(finding.start_line);
                    m.end_line = m.end_line.max(finding.end_line);
                }
            }
            None => merged.push(finding),
        }
    }
    merged.sort_by(|a, b| (a.priority, &a.path, a.start_line).cmp(&(b.priority, &b.path, b.start_line)));
    merged
}
