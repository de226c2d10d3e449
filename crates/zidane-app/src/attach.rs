//! Attachments: `@path` mentions in a prompt and `--image PATH`.
//!
//! Images (`--image` and `@image.png`) are checked (PNG, JPEG, GIF or
//! WebP, within the provider's size limit) and sent as an image block
//! after the text, in every wire format. A text file's mention attaches its
//! content (at most 64 KB, and a quarter of a small window at about two
//! bytes a token, with a note where cut); a folder's, its listing.

use std::path::{Path, PathBuf};

use zidane::providers::{ContentBlock, ImageSource};

use zidane::providers::ProviderKind;

use crate::Error;

const EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// The largest image a provider takes, and its name.
fn limit(kind: ProviderKind) -> (usize, &'static str) {
    let who = match kind {
        ProviderKind::Anthropic => "Anthropic",
        _ => "the OpenAI formats",
    };
    (kind.image_limit(), who)
}

/// The `@path` mentions of image files in `prompt`.
pub(crate) fn mentions(prompt: &str) -> Vec<String> {
    prompt
        .split_whitespace()
        .filter_map(|word| word.strip_prefix('@'))
        .map(|path| path.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '"', '\'']))
        .filter(|path| {
            Path::new(path)
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        })
        .map(str::to_owned)
        .collect()
}

/// Whether `path` is named as an image (the mentions [`images`] takes).
pub(crate) fn is_image_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

fn megabytes(n: usize) -> String {
    format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
}

/// The image blocks for `--image` files and the prompt's mentions.
/// `accepted` is whether the model takes images (the `images` key).
pub(crate) fn images(
    flags: &[PathBuf],
    prompt: &str,
    cwd: &Path,
    kind: ProviderKind,
    accepted: bool,
) -> Result<Vec<ContentBlock>, Error> {
    use base64::Engine as _;
    let mut files: Vec<(String, PathBuf)> = flags
        .iter()
        .map(|p| (format!("--image {}", p.display()), cwd.join(p)))
        .collect();
    files.extend(mentions(prompt).into_iter().map(|m| (format!("@{m}"), cwd.join(&m))));
    // The same file given twice is sent once.
    let mut seen = std::collections::HashSet::new();
    files.retain(|(_, path)| seen.insert(path.canonicalize().unwrap_or_else(|_| path.clone())));
    if files.is_empty() {
        return Ok(Vec::new());
    }
    if !accepted {
        return Err(Error::usage(format!(
            "{}: this model is set not to take images (`images = false`, the default for openai-compatible servers; set `images = true` in the configuration if it does)",
            files[0].0
        )));
    }
    let (max, who) = limit(kind);
    let mut blocks = Vec::new();
    for (named, path) in files {
        let bytes = std::fs::read(&path).map_err(|e| Error::usage(format!("{named}: cannot read it: {e}")))?;
        let media_type = zidane::tools::image_media_type(&bytes)
            .ok_or_else(|| Error::usage(format!("{named}: not a PNG, JPEG, GIF or WebP image")))?;
        if bytes.len() > max {
            return Err(Error::usage(format!(
                "{named}: {} is over the {} {who} take per image",
                megabytes(bytes.len()),
                megabytes(max)
            )));
        }
        blocks.push(ContentBlock::Image {
            source: ImageSource::Base64 {
                media_type: media_type.to_owned(),
                data: base64::engine::general_purpose::STANDARD.encode(&bytes),
            },
        });
    }
    Ok(blocks)
}

/// The most an `@file` mention attaches.
pub const ATTACH_CAP: usize = 64 * 1024;

/// The prompt with the files and folders its `@path` mentions name
/// appended (images are left to `images`), and a note for each.
pub fn mentions_attached(text: &str, cwd: &Path, window: Option<u32>) -> (String, Vec<String>) {
    // A file the window cannot hold would make every next request fail.
    let cap = window.map_or(ATTACH_CAP, |w| (w as usize / 4 * 2).clamp(1024, ATTACH_CAP));
    let mut prompt = text.to_owned();
    let mut notes = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches([',', '.', ';', ':', ')', '?', '!']);
        let full = cwd.join(path);
        if path.is_empty() || !seen.insert(path.to_owned()) || is_image_path(&full) {
            continue;
        }
        if full.is_dir() {
            let listing = complete_path(cwd, &format!("{}/", path.trim_end_matches('/')));
            prompt.push_str(&format!(
                "\n\n<folder path=\"{path}\">\n{}\n</folder>",
                listing.join("\n")
            ));
            notes.push(format!("@ attached the listing of {path}/ ({} entries)", listing.len()));
            continue;
        }
        let Ok(bytes) = std::fs::read(&full) else {
            continue;
        };
        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(cap)]).into_owned();
        let cut = if bytes.len() > cap {
            format!("\n[cut at {cap} of {} bytes; read_file reads the rest]", bytes.len())
        } else {
            String::new()
        };
        prompt.push_str(&format!("\n\n<file path=\"{path}\">\n{shown}{cut}\n</file>"));
        notes.push(format!("@ attached {path} ({} bytes)", bytes.len().min(cap)));
    }
    (prompt, notes)
}

/// The entries of the folder part of `partial` (a path typed so far) whose
/// names start with its last part: folders with a `/`, hidden ones only
/// when asked for, sorted, at most 50.
pub fn complete_path(cwd: &Path, partial: &str) -> Vec<String> {
    let (dir, stem) = match partial.rfind('/') {
        Some(i) => (&partial[..=i], &partial[i + 1..]),
        None => ("", partial),
    };
    let Ok(entries) = std::fs::read_dir(cwd.join(dir)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with(stem) || (name.starts_with('.') && !stem.starts_with('.')) {
                return None;
            }
            let slash = if e.file_type().is_ok_and(|t| t.is_dir()) {
                "/"
            } else {
                ""
            };
            Some(format!("{dir}{name}{slash}"))
        })
        .collect();
    out.sort();
    out.truncate(50);
    out
}

/// For a model that takes no images: what a tool returns as an image
/// becomes a note.
pub(crate) fn without_images(hooks: &zidane::hooks::HookBus) -> zidane::hooks::HookHandle {
    hooks.on_sync::<zidane::agent::events::ToolTransform, _>(|ev, _| {
        if let zidane::providers::ToolResultContent::Parts(parts) = &mut ev.result {
            for part in parts.iter_mut() {
                if matches!(part, ContentBlock::Image { .. }) {
                    *part = ContentBlock::Text {
                        text: "[the image is not shown: this model is set not to take images]".into(),
                    };
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests;
