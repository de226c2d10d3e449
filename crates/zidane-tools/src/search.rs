//! `glob` and `grep` over the working folder.

use regex::{Regex, RegexBuilder};
use serde_json::json;
use zidane_core::Workspace;
use zidane_core::execution::EntryKind;
use zidane_core::{FnTool, ToolOutput};

use crate::{fail, workspace};

const SKIPPED: &[&str] = &[".git", "target", "node_modules", ".venv", "__pycache__"];

/// Every regular file under `dir` (skipping VCS and build folders), as
/// paths relative to `dir`, in name order, at most `limit` of them. Folders
/// that cannot be listed are skipped.
pub(crate) async fn walk(ws: &Workspace, dir: &str, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    // Depth first, in name order: a stack of (folder, its path relative to `dir`).
    let mut stack = vec![(dir.to_owned(), String::new())];
    while let Some((folder, rel)) = stack.pop() {
        let Ok(entries) = ws.list(&folder).await else { continue };
        let mut subfolders = Vec::new();
        for entry in entries {
            if out.len() >= limit {
                return out;
            }
            let rel_path = if rel.is_empty() {
                entry.name.clone()
            } else {
                format!("{rel}/{}", entry.name)
            };
            match entry.kind {
                EntryKind::Dir if !SKIPPED.contains(&entry.name.as_str()) => {
                    let path = if folder.is_empty() || folder == "." {
                        entry.name.clone()
                    } else {
                        format!("{folder}/{}", entry.name)
                    };
                    subfolders.push((path, rel_path));
                }
                EntryKind::File => out.push(rel_path),
                EntryKind::Dir | EntryKind::Other => {}
            }
        }
        // Reversed, so the first subfolder is listed next.
        stack.extend(subfolders.into_iter().rev());
    }
    out
}

/// A glob (`*`, `**`, `?`, `{a,b}`) as an anchored regex over `/` paths.
pub(crate) fn glob_regex(pattern: &str) -> Result<Regex, regex::Error> {
    let mut re = String::from("^");
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut in_group = false;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                if chars.get(i + 2) == Some(&'/') {
                    re.push_str("(?:.*/)?");
                    i += 2;
                } else {
                    re.push_str(".*");
                    i += 1;
                }
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '{' => {
                re.push_str("(?:");
                in_group = true;
            }
            '}' if in_group => {
                re.push(')');
                in_group = false;
            }
            ',' if in_group => re.push('|'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    re.push('$');
    Regex::new(&re)
}

pub(crate) fn glob() -> FnTool {
    FnTool::new(
        "glob",
        "Find files by name pattern (`*` within a folder, `**` across folders, `{a,b}` alternatives), e.g. \
         `src/**/*.rs`. Skips .git, target and node_modules.",
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "Folder to search (default: the working folder)."}
            },
            "required": ["pattern"]
        }),
        move |input, cx| async move {
            let pattern = input["pattern"]
                .as_str()
                .ok_or_else(|| fail("`pattern` is required"))?
                .to_owned();
            let re = glob_regex(&pattern).map_err(|e| fail(format!("bad pattern: {e}")))?;
            let ws = workspace(&cx)?;
            let base = ws
                .resolve_path(input["path"].as_str().unwrap_or("."))
                .map_err(|e| fail(e.to_string()))?;
            let found: Vec<String> = walk(ws, &base, 50_000)
                .await
                .into_iter()
                .filter(|p| re.is_match(p))
                .collect();
            let total = found.len();
            let mut out = found.into_iter().take(500).collect::<Vec<_>>().join("\n");
            if total > 500 {
                out.push_str(&format!("\n[... {} more files]", total - 500));
            }
            if out.is_empty() {
                out = format!("No file matches `{pattern}`.");
            }
            Ok(ToolOutput::text(out))
        },
    )
    .safe()
}

pub(crate) fn grep() -> FnTool {
    FnTool::new(
        "grep",
        "Search file contents with a regular expression; returns `path:line: text` lines. Narrow with `glob` (a file \
         pattern) and `path`.",
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "A regular expression."},
                "path": {"type": "string", "description": "Folder to search (default: the working folder)."},
                "glob": {"type": "string", "description": "Only files matching this pattern."},
                "ignore_case": {"type": "boolean"}
            },
            "required": ["pattern"]
        }),
        move |input, cx| async move {
            let pattern = input["pattern"].as_str().ok_or_else(|| fail("`pattern` is required"))?;
            let re = RegexBuilder::new(pattern)
                .case_insensitive(input["ignore_case"].as_bool().unwrap_or(false))
                .build()
                .map_err(|e| fail(format!("bad regular expression: {e}")))?;
            let filter = match input["glob"].as_str() {
                Some(g) => Some(glob_regex(g).map_err(|e| fail(format!("bad glob: {e}")))?),
                None => None,
            };
            let ws = workspace(&cx)?;
            let base = ws
                .resolve_path(input["path"].as_str().unwrap_or("."))
                .map_err(|e| fail(e.to_string()))?;
            let (lines, more) = {
                let files = walk(ws, &base, 50_000).await;
                let mut lines = Vec::new();
                let mut more = 0usize;
                for rel_text in files {
                    if filter.as_ref().is_some_and(|f| !f.is_match(&rel_text)) {
                        continue;
                    }
                    let path = if base.is_empty() {
                        rel_text.clone()
                    } else {
                        format!("{base}/{rel_text}")
                    };
                    let Ok(bytes) = ws.read_file(&path).await else {
                        continue;
                    };
                    if bytes.iter().take(8192).any(|b| *b == 0) {
                        continue;
                    }
                    for (n, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
                        if re.is_match(line) {
                            if lines.len() < 200 {
                                let line: String = line.chars().take(300).collect();
                                lines.push(format!("{rel_text}:{}: {line}", n + 1));
                            } else {
                                more += 1;
                            }
                        }
                    }
                }
                (lines, more)
            };
            let mut out = lines.join("\n");
            if more > 0 {
                out.push_str(&format!("\n[... {more} more matches]"));
            }
            if out.is_empty() {
                out = "No match.".to_owned();
            }
            Ok(ToolOutput::text(out))
        },
    )
    .safe()
}
