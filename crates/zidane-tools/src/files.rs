//! File tools: read (with read-state dedup), write, exact-match edits, list.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use zidane_agent::read_state_key;
use zidane_loop::tool::{ReadStateEntry, ToolContext};
use zidane_loop::{FnTool, ToolOutput};

use crate::{Env, fail};

/// FNV-1a over bytes: change detection for the read state.
pub(crate) fn content_hash(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(*b)).wrapping_mul(0x0100_0193))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The path relative to the root, as the model and the read state name it.
pub(crate) fn display(env: &Env, path: &Path) -> String {
    let root = env
        .context
        .root()
        .canonicalize()
        .unwrap_or_else(|_| env.context.root().to_path_buf());
    path.strip_prefix(&root)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

fn resolve(env: &Env, input: &Value) -> Result<(PathBuf, String), zidane_loop::tool::ToolFailure> {
    let path = input["path"].as_str().ok_or_else(|| fail("`path` is required"))?;
    let resolved = env.context.resolve(path).map_err(|e| fail(e.to_string()))?;
    let key = read_state_key(&display(env, &resolved));
    Ok((resolved, key))
}

fn record_read(cx: &ToolContext, key: String, hash: u32, range: Option<(u64, u64)>) {
    let mut map = cx
        .read_state()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    map.insert(
        key,
        ReadStateEntry {
            hash,
            mtime_ms: None,
            range,
            read_at_ms: now_ms(),
        },
    );
}

/// With `require_read_before_edit`, an existing file must have been read and
/// be unchanged since.
fn check_read(env: &Env, cx: &ToolContext, key: &str, current: &[u8]) -> Result<(), zidane_loop::tool::ToolFailure> {
    if !env.options.require_read_before_edit {
        return Ok(());
    }
    let entry = cx
        .read_state()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(key)
        .cloned();
    match entry {
        None => Err(fail(format!("read `{key}` before changing it"))),
        Some(e) if e.hash != content_hash(current) => Err(fail(format!(
            "`{key}` changed since you read it; read it again before changing it"
        ))),
        Some(_) => Ok(()),
    }
}

pub(crate) fn read_file(env: Env) -> FnTool {
    FnTool::new(
        "read_file",
        "Read a text file, with line numbers. Use offset (1-based first line) and limit (number of lines) for part of \
         a long file. Reading an unchanged file again returns a short note instead of the same text.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the working folder."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read."}
            },
            "required": ["path"]
        }),
        move |input, cx| {
            let env = env.clone();
            async move {
                let (path, key) = resolve(&env, &input)?;
                let bytes = tokio::fs::read(&path)
                    .await
                    .map_err(|e| fail(format!("cannot read `{key}`: {e}")))?;
                let hash = content_hash(&bytes);
                let offset = input["offset"].as_u64().unwrap_or(1).max(1);
                let limit = input["limit"].as_u64();
                let range = (input["offset"].is_u64() || limit.is_some()).then(|| (offset, limit.unwrap_or(u64::MAX)));
                let previous = cx
                    .read_state()
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get(&key)
                    .cloned();
                if let Some(previous) = previous
                    && previous.hash == hash
                    && previous.range == range
                {
                    return Ok(ToolOutput::text(format!(
                        "`{key}` is unchanged since you last read it; its content is in that earlier result."
                    )));
                }
                if bytes.iter().take(8192).any(|b| *b == 0) {
                    return Ok(ToolOutput::text(format!(
                        "`{key}` is a binary file ({} bytes); not shown.",
                        bytes.len()
                    )));
                }
                let text = String::from_utf8_lossy(&bytes);
                let mut out = String::new();
                let total = text.lines().count();
                for (i, line) in text
                    .lines()
                    .enumerate()
                    .skip((offset - 1) as usize)
                    .take(limit.unwrap_or(u64::MAX) as usize)
                {
                    let line: String = line.chars().take(2000).collect();
                    out.push_str(&format!("{:>6}\t{line}\n", i + 1));
                }
                if out.is_empty() {
                    out = if total == 0 {
                        format!("`{key}` is empty.")
                    } else {
                        format!("`{key}` has {total} lines; none in that range.")
                    };
                }
                record_read(&cx, key, hash, range);
                Ok(ToolOutput::text(out))
            }
        },
    )
}

pub(crate) fn write_file(env: Env) -> FnTool {
    FnTool::new(
        "write_file",
        "Write a whole file (creating folders). Overwriting an existing file requires having read it first; prefer \
         `edit` for changes to existing files.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the working folder."},
                "content": {"type": "string", "description": "The complete new content."}
            },
            "required": ["path", "content"]
        }),
        move |input, cx| {
            let env = env.clone();
            async move {
                let (path, key) = resolve(&env, &input)?;
                let content = input["content"].as_str().ok_or_else(|| fail("`content` is required"))?;
                if let Ok(current) = tokio::fs::read(&path).await {
                    check_read(&env, &cx, &key, &current)?;
                }
                if let Some(dir) = path.parent() {
                    tokio::fs::create_dir_all(dir)
                        .await
                        .map_err(|e| fail(format!("cannot create the folder of `{key}`: {e}")))?;
                }
                tokio::fs::write(&path, content)
                    .await
                    .map_err(|e| fail(format!("cannot write `{key}`: {e}")))?;
                record_read(&cx, key.clone(), content_hash(content.as_bytes()), None);
                Ok(ToolOutput::text(format!("Wrote {} bytes to `{key}`.", content.len())))
            }
        },
    )
}

/// Applies one exact-match replacement to `text`.
fn replace(key: &str, text: &str, edit: &Value) -> Result<(String, usize), zidane_loop::tool::ToolFailure> {
    let old = edit["old_string"]
        .as_str()
        .ok_or_else(|| fail("`old_string` is required"))?;
    let new = edit["new_string"]
        .as_str()
        .ok_or_else(|| fail("`new_string` is required"))?;
    let all = edit["replace_all"].as_bool().unwrap_or(false);
    if old.is_empty() {
        return Err(fail("`old_string` is empty; use write_file to create a file"));
    }
    if old == new {
        return Err(fail("`old_string` and `new_string` are the same"));
    }
    let count = text.matches(old).count();
    match count {
        0 => Err(fail(format!("`old_string` was not found in `{key}`"))),
        n if n > 1 && !all => Err(fail(format!(
            "`old_string` matches {n} places in `{key}`; include more surrounding text to pick one, or set replace_all"
        ))),
        n => Ok((
            if all {
                text.replace(old, new)
            } else {
                text.replacen(old, new, 1)
            },
            n,
        )),
    }
}

async fn apply_edits(
    env: &Env,
    cx: &ToolContext,
    input: &Value,
    edits: &[Value],
) -> Result<ToolOutput, zidane_loop::tool::ToolFailure> {
    let (path, key) = resolve(env, input)?;
    let bytes = tokio::fs::read(&path)
        .await
        .map_err(|e| fail(format!("cannot read `{key}`: {e}")))?;
    check_read(env, cx, &key, &bytes)?;
    let mut text = String::from_utf8(bytes).map_err(|_| fail(format!("`{key}` is not UTF-8 text")))?;
    let mut replacements = 0;
    for (i, edit) in edits.iter().enumerate() {
        let (next, n) = replace(&key, &text, edit).map_err(|e| {
            if edits.len() > 1 {
                fail(format!("edit {} of {}: {e}; no edit was applied", i + 1, edits.len()))
            } else {
                e
            }
        })?;
        text = next;
        replacements += n;
    }
    tokio::fs::write(&path, &text)
        .await
        .map_err(|e| fail(format!("cannot write `{key}`: {e}")))?;
    record_read(cx, key.clone(), content_hash(text.as_bytes()), None);
    Ok(ToolOutput::text(format!(
        "Edited `{key}`: {replacements} replacement(s)."
    )))
}

pub(crate) fn edit(env: Env) -> FnTool {
    FnTool::new(
        "edit",
        "Replace an exact piece of text in a file. `old_string` must match exactly once (include surrounding lines to \
         make it unique) unless `replace_all` is set. Read the file first.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "Its replacement."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence."}
            },
            "required": ["path", "old_string", "new_string"]
        }),
        move |input, cx| {
            let env = env.clone();
            async move { apply_edits(&env, &cx, &input, std::slice::from_ref(&input)).await }
        },
    )
}

pub(crate) fn multi_edit(env: Env) -> FnTool {
    FnTool::new(
        "multi_edit",
        "Apply several exact-match replacements to one file, in order, all or none. Each follows the rules of `edit`.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "old_string": {"type": "string"},
                            "new_string": {"type": "string"},
                            "replace_all": {"type": "boolean"}
                        },
                        "required": ["old_string", "new_string"]
                    }
                }
            },
            "required": ["path", "edits"]
        }),
        move |input, cx| {
            let env = env.clone();
            async move {
                let edits = input["edits"].as_array().cloned().unwrap_or_default();
                apply_edits(&env, &cx, &input, &edits).await
            }
        },
    )
}

pub(crate) fn list_files(env: Env) -> FnTool {
    FnTool::new(
        "list_files",
        "List a folder's entries (folders end with /).",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "The folder (default: the working folder)."}}
        }),
        move |input, _cx| {
            let env = env.clone();
            async move {
                let folder = input["path"].as_str().unwrap_or(".");
                let path = env.context.resolve(folder).map_err(|e| fail(e.to_string()))?;
                let mut dir = tokio::fs::read_dir(&path)
                    .await
                    .map_err(|e| fail(format!("cannot list `{folder}`: {e}")))?;
                let mut names = Vec::new();
                while let Some(entry) = dir
                    .next_entry()
                    .await
                    .map_err(|e| fail(format!("cannot list `{folder}`: {e}")))?
                {
                    let is_dir = entry.file_type().await.is_ok_and(|t| t.is_dir());
                    let name = entry.file_name().to_string_lossy().into_owned();
                    names.push(if is_dir { format!("{name}/") } else { name });
                }
                names.sort();
                let total = names.len();
                names.truncate(1000);
                let mut out = names.join("\n");
                if total > 1000 {
                    out.push_str(&format!("\n[... {} more entries]", total - 1000));
                }
                if out.is_empty() {
                    out = format!("`{folder}` is empty.");
                }
                Ok(ToolOutput::text(out))
            }
        },
    )
}
