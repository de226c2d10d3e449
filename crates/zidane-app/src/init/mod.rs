//! `/init`: the agent explores the repository in a read-only run with a
//! prompt of its own (build and test commands, layout, conventions found in
//! existing files) and answers with an `AGENTS.md`; the front end shows the
//! change and asks before [`write()`] puts it in place. What a person wrote
//! in an existing file is kept: the generated part lives between two marks
//! and only it is replaced.

use std::path::{Path, PathBuf};

/// Where the generated part starts.
pub const START: &str = "<!-- zidane /init: generated from here; edit above or below -->";
/// Where it ends.
pub const END: &str = "<!-- zidane /init: generated until here -->";

/// The file `/init` writes in `root`.
pub fn path(root: &Path) -> PathBuf {
    root.join("AGENTS.md")
}

/// The exploring run's prompt, the existing file's text given.
pub fn prompt(existing: Option<&str>) -> String {
    let mut out = String::from(
        "Write the AGENTS.md for this repository: the instructions a coding agent reads before working here. \
         Explore it first with the read-only tools (nothing may be changed now): find the build, test, lint and \
         format commands (in the manifests, Makefiles, CI files, scripts), the layout (what each top folder \
         holds), and the conventions the existing files follow (style, naming, how tests are written, rules in \
         files such as CONTRIBUTING.md or .editorconfig). Keep it short and concrete: commands in code blocks, \
         no generic advice, nothing you did not see in the repository.\n\n\
         Answer with the file's content between <agents_md> and </agents_md>, and nothing else after it.",
    );
    if let Some(text) = existing.map(generated_part).filter(|t| !t.trim().is_empty()) {
        out.push_str("\n\nThe part of the current AGENTS.md written by an earlier /init, to update:\n\n");
        out.push_str(text.trim());
    }
    if existing.is_some_and(|t| !hand_written(t).trim().is_empty()) {
        out.push_str("\n\nThe file also has a part a person wrote; it is kept as it is, so do not repeat it:\n\n");
        out.push_str(hand_written(existing.unwrap_or_default()).trim());
    }
    out
}

/// The file's content from the model's answer (between the tags, else the
/// whole answer); `None` when the answer holds nothing.
pub fn extract(answer: &str) -> Option<String> {
    let inner = match (answer.find("<agents_md>"), answer.rfind("</agents_md>")) {
        (Some(a), Some(b)) if b > a => &answer[a + "<agents_md>".len()..b],
        _ => answer,
    };
    let inner = inner.trim();
    (!inner.is_empty()).then(|| inner.to_owned())
}

/// The generated part of `text` (between the marks).
fn generated_part(text: &str) -> &str {
    match (text.find(START), text.find(END)) {
        (Some(a), Some(b)) if b > a => &text[a + START.len()..b],
        _ => "",
    }
}

/// What a person wrote: everything outside the marks.
fn hand_written(text: &str) -> String {
    match (text.find(START), text.find(END)) {
        (Some(a), Some(b)) if b > a => format!("{}{}", &text[..a], &text[b + END.len()..]),
        _ => text.to_owned(),
    }
}

/// The new file: `existing` with its generated part replaced by
/// `generated` (or, in a file without one, added after what is there).
pub fn merge(existing: Option<&str>, generated: &str) -> String {
    let block = format!("{START}\n{}\n{END}\n", generated.trim());
    match existing {
        None => block,
        Some(text) => match (text.find(START), text.find(END)) {
            (Some(a), Some(b)) if b > a => {
                let after = text[b + END.len()..].trim_start_matches('\n');
                format!("{}{block}{after}", &text[..a])
            }
            _ if text.trim().is_empty() => block,
            _ => format!("{}\n\n{block}", text.trim_end()),
        },
    }
}

/// Writes `text` to `path` (beside it first, then renamed).
pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let beside = path.with_extension("md.zidane-new");
    std::fs::write(&beside, text)?;
    std::fs::rename(&beside, path)
}

#[cfg(test)]
mod tests;
