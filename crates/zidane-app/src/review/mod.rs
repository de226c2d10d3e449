//! Code review of a change: what to review ([`Target`]), the diff from git
//! ([`diff`]), findings reported through the `report_finding` tool and
//! merged ([`finding`]), and the report in the formats people and CI read
//! ([`Report::to_json`], [`sarif`], [`markdown`]).
//!
//! The run itself is [`Conversation::review`](crate::Conversation::review):
//! read-only by construction (plan mode's tools and `report_finding`), a
//! diff too large for the window split by file into sub-reviews, each in a
//! session of its own, their findings merged.

pub mod diff;
pub mod finding;
mod gate;
pub mod markdown;
pub mod sarif;

use serde::Serialize;
use serde_json::{Value, json};

pub use self::diff::{Diff, FileDiff, SkipReason};
pub use self::finding::{Category, Finding, Priority};
pub(crate) use self::gate::{ReviewGate, hide_outside_reviews, hooks as run_hooks};
use crate::Error;

/// The version of the JSON document [`Report::to_json`] writes.
pub const JSON_SCHEMA: &str = "zidane.review/1";

/// The change a review reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Staged, unstaged and untracked changes against `HEAD`.
    Uncommitted,
    /// From the merge base with this branch to `HEAD`.
    Base(String),
    /// One commit against its first parent.
    Commit(String),
    /// From the first commit to the second (`A..B`).
    Range(String, String),
}

impl Target {
    /// `A..B` as a range.
    pub fn range(text: &str) -> Result<Target, Error> {
        match text.split_once("..") {
            Some((a, b)) if !a.is_empty() && !b.is_empty() && !b.starts_with('.') => {
                Ok(Target::Range(a.to_owned(), b.to_owned()))
            }
            _ => Err(Error::usage(format!("`{text}` is not a range like main..HEAD"))),
        }
    }

    /// What a person reads.
    pub fn describe(&self) -> String {
        match self {
            Target::Uncommitted => "the uncommitted changes (staged, unstaged and untracked)".into(),
            Target::Base(branch) => format!("the changes on HEAD since its merge base with `{branch}`"),
            Target::Commit(sha) => format!("commit `{sha}`"),
            Target::Range(a, b) => format!("the changes from `{a}` to `{b}`"),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Target::Uncommitted => json!({ "mode": "uncommitted" }),
            Target::Base(branch) => json!({ "mode": "base", "base": branch }),
            Target::Commit(sha) => json!({ "mode": "commit", "commit": sha }),
            Target::Range(a, b) => json!({ "mode": "range", "from": a, "to": b }),
        }
    }

    /// `/review`'s arguments: `--uncommitted` (the default), `--base B`,
    /// `--commit SHA` or `A..B`, and `--focus TEXT` (the rest of the line).
    pub fn parse_args(args: &str) -> Result<(Target, Option<String>), Error> {
        let mut words = args.split_whitespace();
        let mut target = None;
        let mut focus = None;
        let set = |t: Target, target: &mut Option<Target>| {
            if target.replace(t).is_some() {
                Err(Error::usage(
                    "give one of --uncommitted, --base BRANCH, --commit SHA or A..B",
                ))
            } else {
                Ok(())
            }
        };
        while let Some(word) = words.next() {
            let value = |words: &mut std::str::SplitWhitespace<'_>| {
                words
                    .next()
                    .map(str::to_owned)
                    .ok_or_else(|| Error::usage(format!("{word} needs a value")))
            };
            match word {
                "--uncommitted" => set(Target::Uncommitted, &mut target)?,
                "--base" => set(Target::Base(value(&mut words)?), &mut target)?,
                "--commit" => set(Target::Commit(value(&mut words)?), &mut target)?,
                "--focus" => {
                    let rest: Vec<&str> = words.by_ref().collect();
                    focus = Some(rest.join(" ")).filter(|f| !f.is_empty());
                }
                range if range.contains("..") => set(Target::range(range)?, &mut target)?,
                other => return Err(Error::usage(format!("/review: `{other}` is not an option"))),
            }
        }
        Ok((target.unwrap_or(Target::Uncommitted), focus))
    }
}

/// What to review and how.
#[derive(Debug, Clone)]
pub struct Request {
    /// The change.
    pub target: Target,
    /// What to look at most (`security`, or any text).
    pub focus: Option<String>,
    /// Instructions of the person's (the text of `--instructions FILE`).
    pub instructions: Option<String>,
    /// Whether the review may fetch web pages (`web_fetch`); a review
    /// reaches no network otherwise.
    pub network: bool,
}

impl Request {
    /// A review of `target`.
    pub fn new(target: Target) -> Self {
        Request {
            target,
            focus: None,
            instructions: None,
            network: false,
        }
    }
}

/// A file reviewed.
#[derive(Debug, Clone, Serialize)]
pub struct Reviewed {
    /// Its path.
    pub path: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
    /// The old path of a renamed file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
}

/// A file left out.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// Its path.
    pub path: String,
    /// Why.
    pub reason: SkipReason,
}

/// A review's figures and what it covered.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// The files reviewed.
    pub reviewed: Vec<Reviewed>,
    /// The files left out.
    pub skipped: Vec<Skipped>,
    /// The sub-reviews the diff was split into (1: not split).
    pub sub_reviews: usize,
    /// Input tokens (cache reads and writes included).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// The cost in USD, when the model has a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Milliseconds the review took.
    pub duration_ms: u64,
    /// The model's closing words (of each sub-review).
    pub notes: Vec<String>,
}

/// A review's outcome.
#[derive(Debug, Clone)]
pub struct Report {
    /// What was reviewed.
    pub target: Target,
    /// The findings, merged, most urgent first.
    pub findings: Vec<Finding>,
    /// What was covered.
    pub summary: Summary,
}

impl Report {
    /// The findings at `threshold` or more urgent.
    pub fn at_or_above(&self, threshold: Priority) -> usize {
        self.findings.iter().filter(|f| f.priority <= threshold).count()
    }

    /// How many findings of each priority.
    pub fn counts(&self) -> Vec<(Priority, usize)> {
        Priority::ALL
            .into_iter()
            .map(|p| (p, self.findings.iter().filter(|f| f.priority == p).count()))
            .collect()
    }

    /// The JSON document (`docs/review.md` describes it).
    pub fn to_json(&self) -> Value {
        let counts: serde_json::Map<String, Value> = self
            .counts()
            .into_iter()
            .map(|(p, n)| (p.name().to_owned(), json!(n)))
            .collect();
        let mut summary = serde_json::to_value(&self.summary).unwrap_or_default();
        summary["findings"] = json!(self.findings.len());
        summary["by_priority"] = Value::Object(counts);
        json!({
            "schema": JSON_SCHEMA,
            "target": self.target.to_json(),
            "findings": self.findings,
            "summary": summary,
        })
    }
}

/// The prompt of one (sub-)review of `files`.
pub(crate) fn prompt(request: &Request, files: &[&FileDiff], part: Option<(usize, usize)>, rules: &str) -> String {
    let mut out = format!("Review {}", request.target.describe());
    if let Some((n, of)) = part {
        out.push_str(&format!(
            " (part {n} of {of}: the diff was split by file; review only these files)"
        ));
    }
    out.push_str(".\n\n");
    out.push_str(
        "Find real problems the change introduces: bugs, security holes, broken edge cases, missing error \
         handling, wrong tests. Report each with the `report_finding` tool, one call per problem, with the new \
         file's line numbers inside the diff's hunks. Priorities: P0 must fix (breaks the program, loses data, a \
         security hole), P1 should fix before merging, P2 worth fixing, P3 nit. A problem outside the diff only \
         when the change breaks it, saying how in `outside_diff_reason`. Do not report style preferences as P0 or \
         P1, and do not report what is fine. You may read files and search the repository; you cannot change \
         anything. When done, answer with one short paragraph summing up the change and the review.\n",
    );
    if let Some(focus) = &request.focus {
        out.push_str(&format!("\nFocus on: {focus}\n"));
    }
    if !rules.trim().is_empty() {
        out.push_str(&format!(
            "\nThe repository's review instructions (REVIEW.md):\n<review-instructions>\n{}\n</review-instructions>\n",
            rules.trim()
        ));
    }
    if let Some(text) = &request.instructions {
        out.push_str(&format!(
            "\nInstructions:\n<instructions>\n{}\n</instructions>\n",
            text.trim()
        ));
    }
    out.push_str("\n<diff>\n");
    for file in files {
        out.push_str(&file.patch);
    }
    out.push_str("</diff>\n");
    out
}

/// The files of `diff` in groups whose prompt fits `budget` bytes (one
/// group when it all fits), and the files too large for any group.
pub(crate) fn split(diff: &Diff, budget: usize) -> (Vec<Vec<&FileDiff>>, Vec<&FileDiff>) {
    let mut groups: Vec<Vec<&FileDiff>> = Vec::new();
    let mut too_large = Vec::new();
    let mut size = 0;
    for file in &diff.files {
        let len = file.patch.len();
        if len > budget {
            too_large.push(file);
            continue;
        }
        match groups.last_mut() {
            Some(group) if size + len <= budget => {
                group.push(file);
                size += len;
            }
            _ => {
                groups.push(vec![file]);
                size = len;
            }
        }
    }
    (groups, too_large)
}

#[cfg(test)]
mod tests;
