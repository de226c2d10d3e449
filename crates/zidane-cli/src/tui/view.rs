//! How a tool call reads in the conversation: one line for the call, and
//! its outcome in a few (a command's first and last lines, an edit as a
//! coloured diff, a read as its path and lines).

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use super::screen::{Hue, Paint};
pub(crate) use crate::brief::brief;
use crate::brief::text;

/// Lines of a command's output shown at each end.
const ENDS: usize = 2;
/// Lines of a diff shown before "… N more".
const DIFF_LINES: usize = 40;

/// How a line of a sub-agent's starts: indented by depth.
pub(crate) fn indent(depth: u32) -> String {
    if depth == 0 {
        String::new()
    } else {
        format!("{}↳ ", "  ".repeat(depth as usize))
    }
}

/// The call line.
pub(crate) fn call(p: &Paint, depth: u32, name: &str, input: &Value) -> String {
    let mark = if depth == 0 {
        p.hue(Hue::Green, "●")
    } else {
        p.dim("●")
    };
    format!("{}{mark} {} {}", indent(depth), p.bold(name), brief(name, input))
}

/// A unified diff of `old` against `new`, coloured, at most
/// [`DIFF_LINES`] lines.
pub(crate) fn diff(p: &Paint, prefix: &str, old: &str, new: &str) -> Vec<String> {
    let diff = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    let mut more = 0;
    for group in diff.grouped_ops(2) {
        for op in group {
            for change in diff.iter_changes(&op) {
                let line = change.value().trim_end_matches('\n');
                let shown = match change.tag() {
                    ChangeTag::Delete => p.hue(Hue::Red, &format!("- {line}")),
                    ChangeTag::Insert => p.hue(Hue::Green, &format!("+ {line}")),
                    ChangeTag::Equal => p.dim(&format!("  {line}")),
                };
                if out.len() < DIFF_LINES {
                    out.push(format!("{prefix}{shown}"));
                } else {
                    more += 1;
                }
            }
        }
    }
    if more > 0 {
        out.push(format!("{prefix}{}", p.dim(&format!("… {more} more lines"))));
    }
    out
}

/// The outcome lines under a call.
pub(crate) fn outcome(p: &Paint, depth: u32, name: &str, input: &Value, result: &str, is_error: bool) -> Vec<String> {
    let lead = format!("{}  ⎿ ", "  ".repeat(depth as usize));
    let pad = " ".repeat(lead.chars().count());
    if is_error {
        let first = result.lines().find(|l| !l.trim().is_empty()).unwrap_or("failed");
        return vec![format!(
            "{lead}{}",
            p.hue(Hue::Red, &first.chars().take(200).collect::<String>())
        )];
    }
    match name {
        "edit" => {
            let mut out = vec![format!("{lead}{}", p.dim(&format!("edited {}", text(input, "path"))))];
            out.extend(diff(p, &pad, text(input, "old_string"), text(input, "new_string")));
            out
        }
        "multi_edit" => {
            let mut out = vec![format!("{lead}{}", p.dim(&format!("edited {}", text(input, "path"))))];
            for edit in input["edits"].as_array().into_iter().flatten() {
                out.extend(diff(p, &pad, text(edit, "old_string"), text(edit, "new_string")));
            }
            out
        }
        "write_file" => {
            let content = text(input, "content");
            let mut out = vec![format!(
                "{lead}{}",
                p.dim(&format!(
                    "wrote {} ({} lines)",
                    text(input, "path"),
                    content.lines().count()
                ))
            )];
            out.extend(diff(p, &pad, "", content).into_iter().take(12));
            out
        }
        "read_file" => {
            // The result numbers its lines: the first and the last say the
            // range.
            let numbers: Vec<&str> = result
                .lines()
                .filter_map(|l| l.split('\t').next())
                .map(str::trim)
                .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                .collect();
            let range = match (numbers.first(), numbers.last()) {
                (Some(a), Some(b)) => format!("lines {a}–{b}"),
                _ => result.lines().next().unwrap_or_default().chars().take(100).collect(),
            };
            vec![format!(
                "{lead}{}",
                p.dim(&format!("read {} {range}", text(input, "path")))
            )]
        }
        _ => ends(p, &lead, &pad, result),
    }
}

/// A result's first and last lines, with how many are left out between.
fn ends(p: &Paint, lead: &str, pad: &str, result: &str) -> Vec<String> {
    let lines: Vec<&str> = result.lines().filter(|l| !l.trim().is_empty()).collect();
    let cut = |l: &str| -> String { l.chars().take(160).collect() };
    if lines.is_empty() {
        return vec![format!("{lead}{}", p.dim("(no output)"))];
    }
    let mut out = Vec::new();
    if lines.len() <= ENDS * 2 + 1 {
        for (i, line) in lines.iter().enumerate() {
            out.push(format!("{}{}", if i == 0 { lead } else { pad }, p.dim(&cut(line))));
        }
        return out;
    }
    for (i, line) in lines[..ENDS].iter().enumerate() {
        out.push(format!("{}{}", if i == 0 { lead } else { pad }, p.dim(&cut(line))));
    }
    out.push(format!(
        "{pad}{}",
        p.dim(&format!("… {} lines", lines.len() - ENDS * 2))
    ));
    for line in &lines[lines.len() - ENDS..] {
        out.push(format!("{pad}{}", p.dim(&cut(line))));
    }
    out
}

#[cfg(test)]
mod tests;
