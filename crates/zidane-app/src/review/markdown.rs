//! A review as Markdown, for a pull-request comment: the counts, the
//! findings by priority with their place and excerpt, what was reviewed
//! and what was left out.

use super::Report;
use super::finding::Priority;

/// The fence around `code` (longer than any backtick run inside it).
fn fence(code: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in code.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

/// The file's language for the fence, from its extension.
fn language(path: &str) -> &str {
    match path.rsplit('.').next().unwrap_or_default() {
        "rs" => "rust",
        "py" => "python",
        "js" | "mjs" | "cjs" => "javascript",
        "ts" | "tsx" => "typescript",
        "go" => "go",
        "rb" => "ruby",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" => "cpp",
        "sh" => "sh",
        "sql" => "sql",
        _ => "",
    }
}

/// The report as Markdown.
pub fn to_markdown(report: &Report) -> String {
    let mut out = String::from("## zidane review\n\n");
    out.push_str(&format!("Reviewed {}.\n\n", report.target.describe()));
    if report.findings.is_empty() {
        out.push_str("No findings.\n\n");
    } else {
        let counts: Vec<String> = report
            .counts()
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(p, n)| format!("{n} {}", p.name()))
            .collect();
        out.push_str(&format!(
            "**{} finding{}**: {}.\n\n",
            report.findings.len(),
            if report.findings.len() == 1 { "" } else { "s" },
            counts.join(", ")
        ));
    }
    for priority in Priority::ALL {
        let group: Vec<_> = report.findings.iter().filter(|f| f.priority == priority).collect();
        if group.is_empty() {
            continue;
        }
        out.push_str(&format!("### {} ({})\n\n", priority.name(), priority.meaning()));
        for f in group {
            let lines = if f.start_line == f.end_line {
                format!("{}", f.start_line)
            } else {
                format!("{}-{}", f.start_line, f.end_line)
            };
            out.push_str(&format!(
                "- **{}** (`{}:{lines}`, {}, confidence {:.2})\n\n",
                f.title,
                f.path,
                f.category.name(),
                f.confidence
            ));
            for line in f.body.lines() {
                out.push_str(&format!("  {line}\n"));
            }
            if let Some(reason) = &f.outside_diff_reason {
                out.push_str(&format!("\n  Outside the diff: {reason}\n"));
            }
            if !f.excerpt.is_empty() {
                let fence = fence(&f.excerpt);
                out.push_str(&format!("\n  {fence}{}\n", language(&f.path)));
                for line in f.excerpt.lines() {
                    out.push_str(&format!("  {line}\n"));
                }
                out.push_str(&format!("  {fence}\n"));
            }
            out.push('\n');
        }
    }
    let summary = &report.summary;
    out.push_str(&format!(
        "<details><summary>{} file{} reviewed, {} skipped</summary>\n\n",
        summary.reviewed.len(),
        if summary.reviewed.len() == 1 { "" } else { "s" },
        summary.skipped.len()
    ));
    for r in &summary.reviewed {
        out.push_str(&format!("- `{}` (+{} −{})\n", r.path, r.added, r.removed));
    }
    for s in &summary.skipped {
        out.push_str(&format!("- `{}`: skipped, {}\n", s.path, s.reason.describe()));
    }
    out.push_str(&format!(
        "\n{} sub-review{}, {} tokens in, {} out.\n\n</details>\n",
        summary.sub_reviews,
        if summary.sub_reviews == 1 { "" } else { "s" },
        summary.input_tokens,
        summary.output_tokens
    ));
    out
}
