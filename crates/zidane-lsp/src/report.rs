//! What an edit did to a file's diagnostics: the errors and warnings after
//! it, each marked new or already there, and those it fixed.

use std::collections::HashMap;

use lsp_types::{Diagnostic, DiagnosticSeverity};
use serde::{Deserialize, Serialize};

/// One diagnostic as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The file, relative to the folder.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (characters).
    pub column: u32,
    /// `error` or `warning`.
    pub severity: String,
    /// The server's message (its first line).
    pub message: String,
    /// Whether the edit introduced it.
    pub new: bool,
}

impl Finding {
    /// `path:line:col severity message`.
    pub fn line_text(&self) -> String {
        let mark = if self.new { " (new)" } else { "" };
        format!(
            "{}:{}:{} {}{mark} {}",
            self.path, self.line, self.column, self.severity, self.message
        )
    }
}

/// A file's diagnostics after an edit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditReport {
    /// The server that gave them.
    pub server: String,
    /// The file, relative to the folder.
    pub path: String,
    /// Errors now.
    pub errors: usize,
    /// Warnings now.
    pub warnings: usize,
    /// Of those, the ones the edit introduced.
    pub new: usize,
    /// Errors and warnings that were there before the edit and are gone.
    pub fixed: usize,
    /// The findings, errors first, capped.
    pub findings: Vec<Finding>,
    /// Findings left out by the cap.
    pub omitted: usize,
}

/// Diagnostics reported and fixed over a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Errors and warnings reported after edits.
    pub reported: u64,
    /// Errors and warnings edits fixed.
    pub fixed: u64,
}

fn severity(d: &Diagnostic) -> Option<&'static str> {
    match d.severity {
        Some(DiagnosticSeverity::ERROR) | None => Some("error"),
        Some(DiagnosticSeverity::WARNING) => Some("warning"),
        _ => None,
    }
}

/// What identifies a diagnostic across an edit (lines move).
fn key(d: &Diagnostic) -> (Option<&'static str>, String) {
    (severity(d), d.message.clone())
}

impl EditReport {
    /// Compares `after` with `before` (`None`: unknown, so nothing is
    /// marked new). `line_text` gives a line of the new text, for columns.
    pub fn compare(
        server: &str,
        path: &str,
        before: Option<&[Diagnostic]>,
        after: &[Diagnostic],
        text: &str,
        cap: usize,
    ) -> EditReport {
        let mut left: HashMap<(Option<&'static str>, String), usize> = HashMap::new();
        for d in before.unwrap_or_default().iter().filter(|d| severity(d).is_some()) {
            *left.entry(key(d)).or_default() += 1;
        }
        let lines: Vec<&str> = text.lines().collect();
        let mut findings: Vec<Finding> = Vec::new();
        for d in after {
            let Some(sev) = severity(d) else { continue };
            let new = match left.get_mut(&key(d)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => before.is_some(),
            };
            let line = d.range.start.line;
            let column = lines.get(line as usize).map_or(d.range.start.character + 1, |l| {
                crate::uri::char_column(l, d.range.start.character)
            });
            findings.push(Finding {
                path: path.to_owned(),
                line: line + 1,
                column,
                severity: sev.to_owned(),
                message: d.message.lines().next().unwrap_or("").trim().to_owned(),
                new,
            });
        }
        findings.sort_by_key(|f| (f.severity != "error", !f.new, f.line, f.column));
        let errors = findings.iter().filter(|f| f.severity == "error").count();
        let warnings = findings.len() - errors;
        let new = findings.iter().filter(|f| f.new).count();
        let omitted = findings.len().saturating_sub(cap);
        findings.truncate(cap);
        EditReport {
            server: server.to_owned(),
            path: path.to_owned(),
            errors,
            warnings,
            new,
            fixed: left.values().sum(),
            findings,
            omitted,
        }
    }

    /// Whether there is anything to say (a clean file that stayed clean
    /// says nothing).
    pub fn is_empty(&self) -> bool {
        self.errors == 0 && self.warnings == 0 && self.fixed == 0
    }

    /// The one-line summary a person reads: `✗ 2 errors, 1 warning`.
    pub fn summary(&self) -> String {
        if self.errors == 0 && self.warnings == 0 {
            return format!("✓ no errors ({} fixed)", self.fixed);
        }
        let mut parts = vec![plural(self.errors, "error")];
        if self.warnings > 0 {
            parts.push(plural(self.warnings, "warning"));
        }
        let mut text = format!("{} {}", if self.errors > 0 { "✗" } else { "⚠" }, parts.join(", "));
        if self.new > 0 {
            text.push_str(&format!(" ({} new)", self.new));
        }
        text
    }

    /// The text appended to the tool's result.
    pub fn render(&self) -> String {
        let mut out = format!("\n\n<diagnostics server=\"{}\" file=\"{}\">\n", self.server, self.path);
        if self.errors == 0 && self.warnings == 0 {
            out.push_str(&format!(
                "No errors or warnings now: this edit fixed {}.\n",
                plural(self.fixed, "problem")
            ));
        } else {
            out.push_str(&format!(
                "{}, {} ({} new with this edit{}):\n",
                plural(self.errors, "error"),
                plural(self.warnings, "warning"),
                self.new,
                if self.fixed > 0 {
                    format!(", {} fixed", self.fixed)
                } else {
                    String::new()
                },
            ));
            for f in &self.findings {
                out.push_str(&f.line_text());
                out.push('\n');
            }
            if self.omitted > 0 {
                out.push_str(&format!("… and {} more\n", self.omitted));
            }
        }
        out.push_str("</diagnostics>");
        out
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests;
