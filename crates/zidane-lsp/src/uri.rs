//! `file://` URIs of paths and back, and positions in a file's text
//! (the protocol counts columns in UTF-16 code units).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::Uri;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};

/// What a path segment keeps encoded in a URI.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The `file://` URI of an absolute path.
pub fn from_path(path: &Path) -> Uri {
    let text = path.to_string_lossy();
    let encoded = utf8_percent_encode(&text, PATH).to_string();
    let uri = format!("file://{encoded}");
    // Every character a path holds that a URI does not take is encoded
    // above, so this parses; a fallback keeps the function total.
    Uri::from_str(&uri).unwrap_or_else(|_| fallback())
}

#[allow(clippy::expect_used)]
fn fallback() -> Uri {
    Uri::from_str("file:///").expect("a constant URI")
}

/// The path of a `file://` URI.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    let decoded = percent_decode_str(rest).decode_utf8().ok()?;
    Some(PathBuf::from(decoded.as_ref()))
}

/// The protocol's column (UTF-16 units) of a 1-based character column in
/// `line`.
pub fn utf16_column(line: &str, column: u32) -> u32 {
    let chars = column.saturating_sub(1) as usize;
    line.chars().take(chars).map(|c| c.len_utf16() as u32).sum()
}

/// The 1-based character column of a protocol column in `line`.
pub fn char_column(line: &str, utf16: u32) -> u32 {
    let mut units = 0u32;
    let mut chars = 0u32;
    for c in line.chars() {
        if units >= utf16 {
            break;
        }
        units += c.len_utf16() as u32;
        chars += 1;
    }
    chars + 1
}

#[cfg(test)]
mod tests;
