//! `glob` and `grep` over the working folder.

use std::path::{Path, PathBuf};

use regex::{Regex, RegexBuilder};
use serde_json::json;
use zidane_loop::{FnTool, ToolOutput};

use crate::{Env, fail};

const SKIPPED: &[&str] = &[".git", "target", "node_modules", ".venv", "__pycache__"];

/// Every file under `dir` (skipping VCS and build folders), relative paths.
pub(crate) fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>, limit: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= limit {
            return;
        }
        let path = entry.path();
        let name = entry.file_name();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if !SKIPPED.iter().any(|s| name == *s) {
                walk(root, &path, out, limit);
            }
        } else if kind.is_file()
            && let Ok(rel) = path.strip_prefix(root)
        {
            out.push(rel.to_path_buf());
        }
    }
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

pub(crate) fn glob(env: Env) -> FnTool {
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
        move |input, _cx| {
            let env = env.clone();
            async move {
                let pattern = input["pattern"]
                    .as_str()
                    .ok_or_else(|| fail("`pattern` is required"))?
                    .to_owned();
                let re = glob_regex(&pattern).map_err(|e| fail(format!("bad pattern: {e}")))?;
                let base = env
                    .context
                    .resolve(input["path"].as_str().unwrap_or("."))
                    .map_err(|e| fail(e.to_string()))?;
                let found = tokio::task::spawn_blocking(move || {
                    let mut files = Vec::new();
                    walk(&base, &base, &mut files, 50_000);
                    files
                        .into_iter()
                        .map(|p| p.to_string_lossy().replace('\\', "/"))
                        .filter(|p| re.is_match(p))
                        .collect::<Vec<_>>()
                })
                .await
                .map_err(|e| fail(e.to_string()))?;
                let total = found.len();
                let mut out = found.into_iter().take(500).collect::<Vec<_>>().join("\n");
                if total > 500 {
                    out.push_str(&format!("\n[... {} more files]", total - 500));
                }
                if out.is_empty() {
                    out = format!("No file matches `{pattern}`.");
                }
                Ok(ToolOutput::text(out))
            }
        },
    )
}

pub(crate) fn grep(env: Env) -> FnTool {
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
        move |input, _cx| {
            let env = env.clone();
            async move {
                let pattern = input["pattern"].as_str().ok_or_else(|| fail("`pattern` is required"))?;
                let re = RegexBuilder::new(pattern)
                    .case_insensitive(input["ignore_case"].as_bool().unwrap_or(false))
                    .build()
                    .map_err(|e| fail(format!("bad regular expression: {e}")))?;
                let filter = match input["glob"].as_str() {
                    Some(g) => Some(glob_regex(g).map_err(|e| fail(format!("bad glob: {e}")))?),
                    None => None,
                };
                let base = env
                    .context
                    .resolve(input["path"].as_str().unwrap_or("."))
                    .map_err(|e| fail(e.to_string()))?;
                let (lines, more) = tokio::task::spawn_blocking(move || {
                    let mut files = Vec::new();
                    walk(&base, &base, &mut files, 50_000);
                    let mut lines = Vec::new();
                    let mut more = 0usize;
                    for rel in files {
                        let rel_text = rel.to_string_lossy().replace('\\', "/");
                        if filter.as_ref().is_some_and(|f| !f.is_match(&rel_text)) {
                            continue;
                        }
                        let Ok(bytes) = std::fs::read(base.join(&rel)) else {
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
                })
                .await
                .map_err(|e| fail(e.to_string()))?;
                let mut out = lines.join("\n");
                if more > 0 {
                    out.push_str(&format!("\n[... {more} more matches]"));
                }
                if out.is_empty() {
                    out = "No match.".to_owned();
                }
                Ok(ToolOutput::text(out))
            }
        },
    )
}
