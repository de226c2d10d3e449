//! `glob` and `grep` over the working folder.
//!
//! Two walks answer the same question. A context on this machine's file
//! system (a [`ProcessContext`]) takes [`local`]: `ignore`'s parallel walk
//! and `grep-searcher` reading each file through a bounded buffer. Any
//! other context takes [`through`]: its own `list` and `read_file`, one
//! folder and one file at a time. Both skip the same things (hidden
//! entries, `.gitignore` / `.ignore` matches and well-known build folders,
//! unless asked) and give the same sorted, capped answer.

mod local;
mod through;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use globset::{Glob, GlobMatcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use serde_json::{Value, json};
use zidane_core::tool::ToolFailure;
use zidane_core::{FnTool, ToolOutput, Workspace};

use crate::{ProcessContext, fail, workspace};

/// Folders skipped unless `include_ignored`: build output and caches that
/// are rarely in a `.gitignore` only because the project has none.
const BUILD_FOLDERS: &[&str] = &["target", "node_modules", ".venv", "__pycache__"];
/// Never searched: the version-control store.
const VCS_FOLDERS: &[&str] = &[".git", ".hg", ".svn"];
/// At most this many paths in a `glob` answer.
const GLOB_SHOWN: usize = 500;
/// At most this many lines in a `grep` answer.
const GREP_SHOWN: usize = 200;
/// A matching line is cut to this many characters.
const LINE_CHARS: usize = 300;
/// A line longer than this makes its file unsearchable (a file without
/// line breaks must not cost its size in memory).
const LINE_BUFFER_LIMIT: usize = 16 * 1024 * 1024;

/// What a walk skips.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WalkRules {
    /// Walk hidden entries (names starting with `.`).
    pub hidden: bool,
    /// Walk what `.gitignore` / `.ignore` and the build-folder list skip.
    pub include_ignored: bool,
}

impl WalkRules {
    fn from_input(input: &Value) -> Self {
        WalkRules {
            hidden: input["hidden"].as_bool().unwrap_or(false),
            include_ignored: input["include_ignored"].as_bool().unwrap_or(false),
        }
    }

    /// Whether a folder named `name` is skipped before any ignore file is
    /// consulted.
    fn skips_folder(self, name: &str) -> bool {
        VCS_FOLDERS.contains(&name) || (!self.include_ignored && BUILD_FOLDERS.contains(&name))
    }
}

/// Paths sorted component by component (`a/b` before `a-b/c`), as a
/// depth-first walk in name order would list them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SortedPath(pub String);

impl Ord for SortedPath {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.split('/').cmp(other.0.split('/'))
    }
}

impl PartialOrd for SortedPath {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A file filter: a pattern with a `/` is matched against the path under
/// the searched folder, one without against the file name (so `*.rs`
/// finds Rust files at any depth, as in ripgrep's `-g`).
#[derive(Debug, Clone)]
pub(crate) struct FileFilter {
    matcher: GlobMatcher,
    whole_path: bool,
}

impl FileFilter {
    fn new(pattern: &str, whole_path: bool) -> Result<Self, globset::Error> {
        let matcher = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map(|g: Glob| g.compile_matcher())?;
        Ok(FileFilter { matcher, whole_path })
    }

    /// The `glob` tool's filter: always the whole path.
    pub(crate) fn path(pattern: &str) -> Result<Self, globset::Error> {
        Self::new(pattern, true)
    }

    /// `grep`'s `glob` filter: the whole path when the pattern names a folder.
    pub(crate) fn file(pattern: &str) -> Result<Self, globset::Error> {
        Self::new(pattern, pattern.contains('/'))
    }

    pub(crate) fn is_match(&self, rel: &str) -> bool {
        if self.whole_path {
            self.matcher.is_match(rel)
        } else {
            self.matcher.is_match(rel.rsplit('/').next().unwrap_or(rel))
        }
    }
}

/// The matching lines of one file.
#[derive(Debug, Default)]
pub(crate) struct FileHits {
    /// The first lines matched: (line number, text cut to [`LINE_CHARS`]).
    pub lines: Vec<(u64, String)>,
    /// Every matching line, kept or not.
    pub count: usize,
    /// The file holds binary data (it is left out).
    pub binary: bool,
}

impl Sink for FileHits {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, found: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.count += 1;
        if self.lines.len() < GREP_SHOWN {
            let text = String::from_utf8_lossy(found.bytes());
            let text = text.trim_end_matches(['\n', '\r']);
            let text: String = text.chars().take(LINE_CHARS).collect();
            self.lines.push((found.line_number().unwrap_or(0), text));
        }
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, std::io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A searcher as both walks use it: line numbers, binary files skipped at
/// their first NUL byte, a line buffer that never grows past
/// [`LINE_BUFFER_LIMIT`].
pub(crate) fn searcher() -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .heap_limit(Some(LINE_BUFFER_LIMIT))
        .build()
}

/// The first [`GREP_SHOWN`] matching lines in path order, with a count of
/// all of them. Files may arrive in any order (the local walk is
/// parallel): the map keeps only the files that can still be shown.
#[derive(Debug, Default)]
pub(crate) struct Hits {
    kept: BTreeMap<SortedPath, Vec<(u64, String)>>,
    kept_lines: usize,
    total: usize,
}

impl Hits {
    pub(crate) fn add(&mut self, path: String, file: FileHits) {
        if file.binary || file.count == 0 {
            return;
        }
        self.total += file.count;
        self.kept_lines += file.lines.len();
        self.kept.insert(SortedPath(path), file.lines);
        // Drop the last files while the ones before them still fill the answer.
        while let Some((_, last)) = self.kept.last_key_value() {
            if self.kept_lines - last.len() < GREP_SHOWN {
                break;
            }
            self.kept_lines -= last.len();
            self.kept.pop_last();
        }
    }

    fn render(self, walk_note: Option<String>) -> String {
        let mut out = String::new();
        let mut shown = 0;
        'files: for (path, lines) in self.kept {
            for (n, line) in lines {
                if shown == GREP_SHOWN {
                    break 'files;
                }
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("{}:{n}: {line}", path.0));
                shown += 1;
            }
        }
        if out.is_empty() {
            out = "No match.".to_owned();
        }
        if self.total > shown {
            out.push_str(&format!("\n[... {} more matches]", self.total - shown));
        }
        if let Some(note) = walk_note {
            out.push_str(&format!("\n[{note}]"));
        }
        out
    }
}

/// Set when the tool call's future is dropped (an abort), so a walk on a
/// blocking thread stops at its next file.
#[derive(Debug, Clone, Default)]
pub(crate) struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(AtomicOrdering::Relaxed)
    }
}

/// Sets the flag when dropped.
struct StopOnDrop(StopFlag);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.0.store(true, AtomicOrdering::Relaxed);
    }
}

/// The searched folder: on this machine (the fast walk), or only through
/// the context.
enum Folder {
    Local(local::Searched),
    Through(String),
}

/// The folder (or file) to search, which must exist: a search of a path
/// that is not there says so rather than finding nothing.
async fn folder(ws: &Workspace, input: &Value) -> Result<Folder, ToolFailure> {
    let requested = input["path"].as_str().filter(|p| !p.trim().is_empty()).unwrap_or(".");
    let base = ws.resolve_path(requested).map_err(|e| fail(e.to_string()))?;
    if !base.is_empty() {
        // A context may not stat folders: a folder it can list exists.
        let exists = match ws.stat(&base).await {
            Ok(Some(_)) => true,
            Ok(None) | Err(_) => ws.list(&base).await.is_ok(),
        };
        if !exists {
            return Err(fail(format!(
                "`{requested}` does not exist; give a folder or file inside the working folder, or leave `path` out"
            )));
        }
    }
    let local = ws
        .execution
        .as_any()
        .and_then(|any| any.downcast_ref::<ProcessContext>())
        .and_then(|process| {
            let base = process.resolve(&base).ok()?;
            let top = process.root().canonicalize().ok()?;
            let context = process.clone();
            let hides: local::Hides = Arc::new(move |path: &std::path::Path| context.hides(path));
            base.starts_with(&top).then_some(local::Searched { top, base, hides })
        });
    Ok(match local {
        Some(path) => Folder::Local(path),
        None => Folder::Through(base),
    })
}

fn schema(properties: Value, required: &str) -> Value {
    let mut properties = properties;
    if let Some(map) = properties.as_object_mut() {
        map.insert(
            "hidden".to_owned(),
            json!({"type": "boolean", "description": "Also search hidden files and folders (names starting with `.`)."}),
        );
        map.insert(
            "include_ignored".to_owned(),
            json!({"type": "boolean", "description": "Also search what .gitignore / .ignore exclude and build folders (target, node_modules)."}),
        );
    }
    json!({"type": "object", "properties": properties, "required": [required]})
}

pub(crate) fn glob() -> FnTool {
    FnTool::new(
        "glob",
        "Find files by path pattern (`*` within a folder, `**` across folders, `{a,b}` alternatives), e.g. \
         `src/**/*.rs`; sorted by path. Skips hidden files, what .gitignore excludes, and build folders unless asked.",
        schema(
            json!({
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "Folder to search (default: the working folder)."}
            }),
            "pattern",
        ),
        move |input, cx| async move {
            let pattern = input["pattern"].as_str().ok_or_else(|| fail("`pattern` is required"))?;
            let filter = FileFilter::path(pattern).map_err(|e| fail(format!("bad pattern: {e}")))?;
            let rules = WalkRules::from_input(&input);
            let ws = workspace(&cx)?;
            let stop = StopFlag::default();
            let _guard = StopOnDrop(stop.clone());
            let (mut found, note) = match folder(ws, &input).await? {
                Folder::Local(root) => (local::glob(root, filter, rules, stop).await?, None),
                Folder::Through(base) => through::glob(ws, &base, &filter, rules).await,
            };
            found.sort_by(|a, b| a.split('/').cmp(b.split('/')));
            let total = found.len();
            let mut out = found.into_iter().take(GLOB_SHOWN).collect::<Vec<_>>().join("\n");
            if total > GLOB_SHOWN {
                out.push_str(&format!("\n[... {} more files; {total} in all]", total - GLOB_SHOWN));
            }
            if out.is_empty() {
                out = format!("No file matches `{pattern}`.");
            }
            if let Some(note) = note {
                out.push_str(&format!("\n[{note}]"));
            }
            Ok(ToolOutput::text(out))
        },
    )
    .safe()
}

fn matcher(input: &Value) -> Result<RegexMatcher, ToolFailure> {
    let pattern = input["pattern"].as_str().ok_or_else(|| fail("`pattern` is required"))?;
    RegexMatcherBuilder::new()
        .case_insensitive(input["ignore_case"].as_bool().unwrap_or(false))
        .build(pattern)
        .map_err(|e| fail(format!("bad regular expression: {e}")))
}

pub(crate) fn grep() -> FnTool {
    FnTool::new(
        "grep",
        "Search file contents with a regular expression; returns `path:line: text` lines sorted by path. Narrow with \
         `glob` (`*.rs` matches file names, `src/**/*.rs` paths) and `path`. Skips hidden files, binary files, what \
         .gitignore excludes, and build folders unless asked.",
        schema(
            json!({
                "pattern": {"type": "string", "description": "A regular expression."},
                "path": {"type": "string", "description": "Folder to search (default: the working folder)."},
                "glob": {"type": "string", "description": "Only files matching this pattern."},
                "ignore_case": {"type": "boolean"}
            }),
            "pattern",
        ),
        move |input, cx| async move {
            let matcher = matcher(&input)?;
            // An empty pattern is no filter (small models send every
            // optional field, empty).
            let filter = match input["glob"].as_str().filter(|g| !g.trim().is_empty()) {
                Some(g) => Some(FileFilter::file(g).map_err(|e| fail(format!("bad glob: {e}")))?),
                None => None,
            };
            let rules = WalkRules::from_input(&input);
            let ws = workspace(&cx)?;
            let stop = StopFlag::default();
            let _guard = StopOnDrop(stop.clone());
            let (hits, note) = match folder(ws, &input).await? {
                Folder::Local(root) => (local::grep(root, matcher, filter, rules, stop).await?, None),
                Folder::Through(base) => through::grep(ws, &base, &matcher, filter.as_ref(), rules).await,
            };
            Ok(ToolOutput::text(hits.render(note)))
        },
    )
    .safe()
}

#[cfg(test)]
mod tests;
