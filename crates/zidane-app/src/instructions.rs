//! Instruction files: `AGENTS.md` (or `CLAUDE.md` where a folder has no
//! `AGENTS.md`) from the repository root down to the working folder, after
//! the user's own, from general to specific, in the system prompt's rules
//! block. Files in sub-folders are offered when the agent first reads or
//! writes a file under them. `.zidane/SYSTEM.md` replaces the base prompt.
//!
//! The block is part of the system prompt, which does not change between
//! turns, so it never breaks the prompt cache; a sub-folder's file arrives
//! in a tool result, after the cached prefix.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use zidane::agent::ContextOptions;
use zidane::agent::events::ToolTransform;
use zidane::providers::{ContentBlock, ToolResultContent};

use crate::paths::Paths;

/// Bytes kept of one file.
pub(crate) const FILE_CAP: usize = 32 * 1024;
/// Bytes kept of all the files at start.
pub(crate) const TOTAL_CAP: usize = 64 * 1024;

/// One file, as loaded.
#[derive(Debug, Clone)]
pub struct InstructionFile {
    pub(crate) path: PathBuf,
    /// What the model reads (cut to the caps, with a note).
    pub(crate) text: String,
    /// Bytes left out.
    pub(crate) cut: usize,
}

impl InstructionFile {
    /// About four bytes a token.
    pub(crate) fn tokens(&self) -> u64 {
        self.text.len().div_ceil(4) as u64
    }
}

/// What was found at start.
#[derive(Debug, Default)]
pub struct Instructions {
    pub(crate) files: Vec<InstructionFile>,
    /// The rules block, as it appears in the system prompt.
    pub(crate) block: String,
    /// `.zidane/SYSTEM.md`, when there is one: its path and text.
    pub(crate) system: Option<(PathBuf, String)>,
}

/// The instruction file of `dir`: `AGENTS.md`, else `CLAUDE.md`.
fn file_in(dir: &Path) -> Option<PathBuf> {
    ["AGENTS.md", "CLAUDE.md"]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
}

/// Reads `path`, keeping at most `cap` bytes (at a character boundary).
fn read_capped(path: &Path, cap: usize) -> Option<InstructionFile> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim().to_owned();
    if text.is_empty() {
        return None;
    }
    if text.len() <= cap {
        return Some(InstructionFile {
            path: path.to_owned(),
            text,
            cut: 0,
        });
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    Some(InstructionFile {
        path: path.to_owned(),
        text: format!(
            "{}\n[… {cut} more bytes cut; read {} for the rest]",
            &text[..end],
            path.display()
        ),
        cut,
    })
}

/// The folders from `root` down to `cwd` (just `cwd` when it is not under
/// `root`).
fn chain(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    match cwd.strip_prefix(root) {
        Ok(rest) => {
            let mut dirs = vec![root.to_owned()];
            let mut at = root.to_owned();
            for part in rest.components() {
                at.push(part);
                dirs.push(at.clone());
            }
            dirs
        }
        Err(_) => vec![cwd.to_owned()],
    }
}

/// Finds the files and builds the block.
pub(crate) fn discover(paths: &Paths) -> Instructions {
    let mut found: Vec<PathBuf> = Vec::new();
    if let Some(user) = &paths.user
        && let Some(file) = file_in(user)
    {
        found.push(file);
    }
    for dir in chain(&paths.root, &paths.cwd) {
        if let Some(file) = file_in(&dir) {
            found.push(file);
        }
    }
    let mut files = Vec::new();
    let mut left = TOTAL_CAP;
    for path in found {
        if left == 0 {
            break;
        }
        if let Some(file) = read_capped(&path, FILE_CAP.min(left)) {
            left = left.saturating_sub(file.text.len());
            files.push(file);
        }
    }
    let system = [
        paths.cwd.join(".zidane/SYSTEM.md"),
        paths.root.join(".zidane/SYSTEM.md"),
    ]
    .into_iter()
    .find_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)));
    let block = render(&files);
    Instructions { files, block, system }
}

fn render(files: &[InstructionFile]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut block = String::from(
        "<instructions>\nInstructions from the user's and the project's instruction files, from the most general to \
         the most specific; where they differ, the later one wins.\n",
    );
    for file in files {
        block.push_str(&format!("\n## {}\n\n{}\n", file.path.display(), file.text));
    }
    block.push_str("</instructions>");
    block
}

impl Instructions {
    /// The system prompt: the base (or `SYSTEM.md`), then the block.
    pub(crate) fn system_prompt(&self, base: &str) -> String {
        let base = self.system.as_ref().map_or(base, |(_, text)| text.as_str());
        if self.block.is_empty() {
            base.to_owned()
        } else {
            format!("{}\n\n{}", base.trim_end(), self.block)
        }
    }

    /// The line a person reads at start, if any file was loaded.
    pub(crate) fn summary(&self) -> Option<String> {
        let mut parts: Vec<String> = self
            .files
            .iter()
            .map(|f| {
                let cut = if f.cut > 0 {
                    format!(", {} bytes cut", f.cut)
                } else {
                    String::new()
                };
                format!("{} (~{} tokens{cut})", f.path.display(), f.tokens())
            })
            .collect();
        if let Some((path, _)) = &self.system {
            parts.push(format!("{} (replaces the base prompt)", path.display()));
        }
        (!parts.is_empty()).then(|| format!("instructions: {}", parts.join(", ")))
    }

    /// For `get_context_segments` / `get_context_breakdown`: the files with
    /// their real paths and the block they make.
    pub(crate) fn context_options(&self) -> ContextOptions {
        ContextOptions {
            rules_block: (!self.block.is_empty()).then(|| self.block.clone()),
            rules_files: self
                .files
                .iter()
                .map(|f| (f.path.display().to_string(), f.text.clone()))
                .collect(),
            ..Default::default()
        }
    }

    /// Offers a sub-folder's instruction file the first time the agent
    /// reads or writes a file under it: the file's text follows the tool's
    /// result, once per process.
    pub(crate) fn offer_nested(&self, hooks: &zidane::hooks::HookBus, cwd: &Path) -> zidane::hooks::HookHandle {
        let seen: HashSet<PathBuf> = self.files.iter().map(|f| f.path.clone()).collect();
        let seen = Arc::new(Mutex::new(seen));
        let cwd = cwd.to_owned();
        hooks.on_sync::<ToolTransform, _>(move |ev, _| {
            if !matches!(ev.name(), "read_file" | "write_file" | "edit" | "multi_edit") || ev.is_error() {
                return Ok(());
            }
            let Some(path) = ev.input().get("path").and_then(|p| p.as_str()) else {
                return Ok(());
            };
            let mut notes = Vec::new();
            for file in nested_files(&cwd, Path::new(path)) {
                if !seen.lock().insert(file.clone()) {
                    continue;
                }
                if let Some(loaded) = read_capped(&file, FILE_CAP) {
                    let dir = file.parent().unwrap_or(&cwd);
                    let under = dir.strip_prefix(&cwd).unwrap_or(dir).display().to_string();
                    notes.push(format!(
                        "\n\n<instructions file=\"{}\">\nThis file has instructions for the files under {under}/; \
                         follow them there.\n\n{}\n</instructions>",
                        file.display(),
                        loaded.text
                    ));
                }
            }
            if !notes.is_empty() {
                append(&mut ev.result, &notes.concat());
            }
            Ok(())
        })
    }
}

/// The instruction files in the folders between `cwd` (excluded) and the
/// folder of `path`, outermost first; none for a path outside `cwd`.
fn nested_files(cwd: &Path, path: &Path) -> Vec<PathBuf> {
    let full = cwd.join(path);
    let Some(dir) = full.parent() else {
        return Vec::new();
    };
    let Ok(rest) = dir.strip_prefix(cwd) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut at = cwd.to_owned();
    for part in rest.components() {
        if !matches!(part, std::path::Component::Normal(_)) {
            return Vec::new();
        }
        at.push(part);
        if let Some(file) = file_in(&at) {
            out.push(file);
        }
    }
    out
}

fn append(result: &mut ToolResultContent, text: &str) {
    match result {
        ToolResultContent::Text(s) => s.push_str(text),
        ToolResultContent::Parts(parts) => parts.push(ContentBlock::Text {
            text: text.trim_start().to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests;
