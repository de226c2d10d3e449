//! File tools: read (with read-state dedup), write, exact-match edits, list.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use zidane_core::Workspace;
use zidane_core::execution::EntryKind;
use zidane_core::tool::{ReadStateEntry, ToolContext, ToolFailure};
use zidane_core::{FnTool, ToolOutput};

use crate::{Env, fail, workspace};

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

/// The call's workspace and the context's name for its `path` argument
/// (also the read-state key).
fn resolve<'a>(cx: &'a ToolContext, input: &Value) -> Result<(&'a Workspace, String), ToolFailure> {
    let path = input["path"].as_str().ok_or_else(|| fail("`path` is required"))?;
    let ws = workspace(cx)?;
    let key = ws.resolve_path(path).map_err(|e| fail(e.to_string()))?;
    Ok((ws, key))
}

/// The bytes of an existing regular file, or `None` when nothing is there.
/// Folders and special files (FIFOs, sockets, devices) are refused: reading
/// a FIFO would block the call forever.
/// The largest file the file tools read whole (a larger one is refused
/// before any of it is read).
pub(crate) const MAX_FILE_BYTES: u64 = 16 << 20;

async fn read_existing(ws: &Workspace, key: &str) -> Result<Option<Vec<u8>>, ToolFailure> {
    let stat = ws.stat(key).await.map_err(|e| fail(e.to_string()))?;
    match stat {
        None => Ok(None),
        Some(s) if s.kind == EntryKind::Dir => {
            Err(fail(format!("`{key}` is a folder; use list_files to see its entries")))
        }
        Some(s) if s.kind == EntryKind::Other => Err(fail(format!("`{key}` is not a regular file"))),
        Some(s) if s.size > MAX_FILE_BYTES => Err(fail(format!(
            "`{key}` is {:.1} MiB, more than the {} MiB the file tools read whole; use grep, or shell (`head`, `sed -n 'A,Bp'`), for parts of it",
            s.size as f64 / (1 << 20) as f64,
            MAX_FILE_BYTES >> 20
        ))),
        Some(_) => ws.read_file(key).await.map(Some).map_err(|e| fail(e.to_string())),
    }
}

/// The read, in the map and in the call's durable tool state (so a
/// resumed run knows what was read before it).
fn record_read(cx: &ToolContext, key: String, hash: u32, range: Option<(u64, u64)>) {
    zidane_core::read_state::record_read(
        cx,
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
fn check_read(env: &Env, cx: &ToolContext, key: &str, current: &[u8]) -> Result<(), ToolFailure> {
    if !env.options.require_read_before_edit {
        return Ok(());
    }
    let entry = cx.read_state().lock().get(key).cloned();
    match entry {
        None => Err(fail(format!("read `{key}` before changing it"))),
        Some(e) if e.hash != content_hash(current) => Err(fail(format!(
            "`{key}` changed since you read it; read it again before changing it"
        ))),
        Some(_) => Ok(()),
    }
}

/// The largest image `read_file` returns (the Anthropic API's limit per
/// image; OpenAI's is larger).
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// The media type of an image the providers take (PNG, JPEG, GIF, WebP),
/// from its first bytes.
pub fn image_media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// An image file as the model sees it: a line naming it, then the image;
/// past [`MAX_IMAGE_BYTES`], the line alone.
fn image_output(key: &str, media_type: &str, bytes: &[u8]) -> ToolOutput {
    use base64::Engine as _;
    let kind = media_type.trim_start_matches("image/").to_ascii_uppercase();
    if bytes.len() > MAX_IMAGE_BYTES {
        return ToolOutput::text(format!(
            "`{key}` is an image ({kind}, {} bytes), larger than the {} bytes a model takes; not shown.",
            bytes.len(),
            MAX_IMAGE_BYTES
        ));
    }
    ToolOutput {
        content: zidane_provider::ToolResultContent::Parts(vec![
            zidane_provider::ContentBlock::Text {
                text: format!("`{key}` is an image ({kind}, {} bytes):", bytes.len()),
            },
            zidane_provider::ContentBlock::Image {
                source: zidane_provider::ImageSource::Base64 {
                    media_type: media_type.to_owned(),
                    data: base64::engine::general_purpose::STANDARD.encode(bytes),
                },
            },
        ]),
        ..Default::default()
    }
}

pub(crate) fn read_file(max_bytes: usize) -> FnTool {
    FnTool::new(
        "read_file",
        "Read a text file, with line numbers. Use offset (1-based first line) and limit (number of lines) for part of \
         a long file. Reading an unchanged file again returns a short note instead of the same text. An image (PNG, \
         JPEG, GIF, WebP) is returned as an image.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the working folder."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read."}
            },
            "required": ["path"]
        }),
        move |input, cx| async move {
            let (ws, key) = resolve(&cx, &input)?;
            let bytes = read_existing(ws, &key)
                .await?
                .ok_or_else(|| fail(format!("`{key}` does not exist")))?;
            let hash = content_hash(&bytes);
            let offset = input["offset"].as_u64().unwrap_or(1).max(1);
            let limit = input["limit"].as_u64();
            let range = (input["offset"].is_u64() || limit.is_some()).then(|| (offset, limit.unwrap_or(u64::MAX)));
            let previous = cx
                .read_state()
                .lock()
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
            if let Some(media_type) = image_media_type(&bytes) {
                record_read(&cx, key.clone(), hash, range);
                return Ok(image_output(&key, media_type, &bytes));
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
            let mut cut_at = None;
            for (i, line) in text
                .lines()
                .enumerate()
                .skip((offset - 1) as usize)
                .take(limit.unwrap_or(u64::MAX) as usize)
            {
                // The result's budget: the model is told where it stopped and
                // how to read on.
                if out.len() >= max_bytes {
                    cut_at = Some(i + 1);
                    break;
                }
                let line: String = line.chars().take(2000).collect();
                out.push_str(&format!("{:>6}\t{line}\n", i + 1));
            }
            if let Some(next) = cut_at {
                out.push_str(&format!(
                    "[... stopped at the {max_bytes}-byte limit: lines {offset}-{} of {total} shown; read on with offset {next}]\n",
                    next - 1
                ));
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
        },
    )
    .safe()
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
                let (ws, key) = resolve(&cx, &input)?;
                let content = input["content"].as_str().ok_or_else(|| fail("`content` is required"))?;
                if let Some(current) = read_existing(ws, &key).await? {
                    check_read(&env, &cx, &key, &current)?;
                }
                ws.write_file(&key, content.as_bytes())
                    .await
                    .map_err(|e| fail(e.to_string()))?;
                record_read(&cx, key.clone(), content_hash(content.as_bytes()), None);
                let mut output = ToolOutput::text(format!("Wrote {} bytes to `{key}`.", content.len()));
                declare_file(&mut output, &key, "write", content.len());
                Ok(output)
            }
        },
    )
    .with_prior_content(prior_text)
}

/// The text of the file a write or an edit names, before the call (for
/// `tool:before`): `None` when there is none, or it is not text.
async fn prior_text(input: Value, cx: ToolContext) -> Option<String> {
    let (ws, key) = resolve(&cx, &input).ok()?;
    let bytes = read_existing(ws, &key).await.ok()??;
    String::from_utf8(bytes).ok()
}

/// Applies one exact-match replacement to `text`.
fn replace(key: &str, text: &str, edit: &Value) -> Result<(String, usize), ToolFailure> {
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

async fn apply_edits(env: &Env, cx: &ToolContext, input: &Value, edits: &[Value]) -> Result<ToolOutput, ToolFailure> {
    let (ws, key) = resolve(cx, input)?;
    let bytes = read_existing(ws, &key)
        .await?
        .ok_or_else(|| fail(format!("`{key}` does not exist")))?;
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
    ws.write_file(&key, text.as_bytes())
        .await
        .map_err(|e| fail(e.to_string()))?;
    record_read(cx, key.clone(), content_hash(text.as_bytes()), None);
    let mut output = ToolOutput::text(format!("Edited `{key}`: {replacements} replacement(s)."));
    declare_file(&mut output, &key, "edit", text.len());
    Ok(output)
}

/// Declares the file a call changed as the session's artifact (one per
/// path: a later change of the same file replaces its entry).
fn declare_file(output: &mut ToolOutput, key: &str, change: &str, bytes: usize) {
    output.metadata.insert(
        "artifacts".into(),
        serde_json::json!([{
            "id": format!("file:{key}"),
            "kind": "file",
            "title": key,
            "data": {"path": key, "change": change, "bytes": bytes},
        }]),
    );
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
    .with_prior_content(prior_text)
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
    .with_prior_content(prior_text)
}

pub(crate) fn list_files() -> FnTool {
    FnTool::new(
        "list_files",
        "List a folder's entries (folders end with /).",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "The folder (default: the working folder)."}}
        }),
        move |input, cx| async move {
            let folder = input["path"].as_str().unwrap_or(".");
            {
                let ws = workspace(&cx)?;
                let key = ws.resolve_path(folder).map_err(|e| fail(e.to_string()))?;
                let entries = ws.list(&key).await.map_err(|e| fail(e.to_string()))?;
                let mut names: Vec<String> = entries
                    .into_iter()
                    .map(|e| if e.is_dir() { format!("{}/", e.name) } else { e.name })
                    .collect();
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
    .safe()
}
