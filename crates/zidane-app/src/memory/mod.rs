//! `/memory` (and a line typed as `# always use pnpm`): a fact the person
//! asks the agent to remember, written where they choose — the project's
//! `AGENTS.md` or their own (in the user folder) — as a plain bullet under
//! a `## Remembered` heading. Nothing is remembered unasked, and the files
//! are the ones the instructions are read from, so a person reads and
//! edits them as any other.

use std::path::{Path, PathBuf};

use crate::paths::Paths;

/// The heading the facts go under.
pub const HEADING: &str = "## Remembered";

/// Where a fact is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The project's `AGENTS.md` (at the repository root).
    Project,
    /// The person's own `AGENTS.md` (in the user folder), for every project.
    User,
}

impl Scope {
    /// The scope by its name (`project`, `user`).
    pub fn from_name(name: &str) -> Option<Scope> {
        match name {
            "project" => Some(Scope::Project),
            "user" => Some(Scope::User),
            _ => None,
        }
    }
}

/// The file of `scope` (`None`: no user folder is known).
pub fn file(paths: &Paths, scope: Scope) -> Option<PathBuf> {
    match scope {
        Scope::Project => Some(paths.root.join("AGENTS.md")),
        Scope::User => paths.user.as_ref().map(|d| d.join("AGENTS.md")),
    }
}

/// The fact in a line typed as `# FACT` (one line, a space after the
/// mark; `##` and longer are headings, not facts).
pub fn shortcut(text: &str) -> Option<&str> {
    let rest = text.trim().strip_prefix("# ")?;
    (!rest.contains('\n') && !rest.trim().is_empty()).then(|| rest.trim())
}

/// Adds `fact` as a bullet under the file's `## Remembered` heading (made
/// when missing; the file too).
pub fn remember(path: &Path, fact: &str) -> std::io::Result<()> {
    let fact = fact.trim();
    if fact.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "nothing to remember",
        ));
    }
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let updated = add(&text, fact);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let beside = path.with_extension("md.zidane-new");
    std::fs::write(&beside, updated)?;
    std::fs::rename(&beside, path)
}

/// `text` with `fact` added under the heading.
fn add(text: &str, fact: &str) -> String {
    let bullet = format!("- {fact}\n");
    let Some(at) = text.lines().position(|l| l.trim_end() == HEADING) else {
        let base = text.trim_end();
        return if base.is_empty() {
            format!("{HEADING}\n\n{bullet}")
        } else {
            format!("{base}\n\n{HEADING}\n\n{bullet}")
        };
    };
    let lines: Vec<&str> = text.lines().collect();
    // The section ends at the next heading.
    let end = lines[at + 1..]
        .iter()
        .position(|l| l.starts_with('#'))
        .map_or(lines.len(), |i| at + 1 + i);
    let mut last = end;
    while last > at + 1 && lines[last - 1].trim().is_empty() {
        last -= 1;
    }
    let mut out: Vec<String> = lines[..last].iter().map(|l| (*l).to_owned()).collect();
    if last == at + 1 {
        out.push(String::new());
    }
    out.push(bullet.trim_end().to_owned());
    if end < lines.len() {
        out.push(String::new());
    }
    out.extend(lines[end..].iter().map(|l| (*l).to_owned()));
    format!("{}\n", out.join("\n"))
}

#[cfg(test)]
mod tests;
