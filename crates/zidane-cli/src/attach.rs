//! Images given with the prompt: `--image PATH` (repeatable) and `@path`
//! mentions of image files in the prompt's text. Each is checked (PNG,
//! JPEG, GIF or WebP, within the provider's size limit) and sent as an
//! image block after the text, in every wire format.

use std::path::{Path, PathBuf};

use zidane::providers::{ContentBlock, ImageSource};

use crate::setup::{Failure, ProviderKind};

const EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// The largest image a provider takes, and its name.
fn limit(kind: ProviderKind) -> (usize, &'static str) {
    match kind {
        ProviderKind::Anthropic => (5 * 1024 * 1024, "Anthropic"),
        _ => (20 * 1024 * 1024, "the OpenAI formats"),
    }
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
) -> Result<Vec<ContentBlock>, Failure> {
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
        return Err(Failure::usage(format!(
            "{}: this model is set not to take images (`images = false`, the default for openai-compatible servers; set `images = true` in the configuration if it does)",
            files[0].0
        )));
    }
    let (max, who) = limit(kind);
    let mut blocks = Vec::new();
    for (named, path) in files {
        let bytes = std::fs::read(&path).map_err(|e| Failure::usage(format!("{named}: cannot read it: {e}")))?;
        let media_type = zidane::tools::image_media_type(&bytes)
            .ok_or_else(|| Failure::usage(format!("{named}: not a PNG, JPEG, GIF or WebP image")))?;
        if bytes.len() > max {
            return Err(Failure::usage(format!(
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
mod tests {
    #[test]
    fn image_mentions_in_a_prompt() {
        assert_eq!(
            super::mentions("What is in @shot.png, and @docs/a.JPEG? Not @notes.md or a@b.png."),
            ["shot.png", "docs/a.JPEG"]
        );
    }
}
