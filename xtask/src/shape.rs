//! Rules on the shape of the code that `cargo xtask tidy` checks: no
//! function over a length limit, no import cycle between the files of a
//! crate. Both read source text (comments and literals blanked first),
//! which is enough for code that rustfmt formats.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The source with comments, string and character literals replaced by
/// spaces (newlines kept), so braces and keywords in them do not count.
pub(crate) fn blank(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let keep_lines = |out: &mut Vec<u8>, from: &[u8]| {
        out.extend(from.iter().map(|&b| if b == b'\n' { b'\n' } else { b' ' }));
    };
    while i < bytes.len() {
        let rest = &bytes[i..];
        let end = if rest.starts_with(b"//") {
            rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            block_comment(rest)
        } else if let Some(len) = raw_string(rest) {
            len
        } else if rest[0] == b'"' || (rest.starts_with(b"b\"") && !ident_before(bytes, i)) {
            let skip = usize::from(rest[0] == b'b');
            quoted(&rest[skip..], b'"') + skip
        } else if rest[0] == b'\'' {
            char_literal(rest).unwrap_or(1)
        } else {
            out.push(rest[0]);
            i += 1;
            continue;
        };
        if rest[0] == b'\'' && end == 1 {
            // A lifetime: kept as it is.
            out.push(b'\'');
        } else {
            keep_lines(&mut out, &rest[..end]);
        }
        i += end;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn ident_before(bytes: &[u8], i: usize) -> bool {
    i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')
}

fn block_comment(rest: &[u8]) -> usize {
    let mut depth = 0;
    let mut i = 0;
    while i + 1 < rest.len() {
        match &rest[i..i + 2] {
            b"/*" => {
                depth += 1;
                i += 2;
            }
            b"*/" => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    rest.len()
}

/// `r"…"`, `r#"…"#`, `br"…"`: its length.
fn raw_string(rest: &[u8]) -> Option<usize> {
    let start = if rest.starts_with(b"br") {
        2
    } else if rest.starts_with(b"r") {
        1
    } else {
        return None;
    };
    let hashes = rest[start..].iter().take_while(|&&b| b == b'#').count();
    if rest.get(start + hashes) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let body = start + hashes + 1;
    let found = rest[body..].windows(close.len()).position(|w| w == close.as_slice())?;
    Some(body + found + close.len())
}

/// A literal quoted by `quote` (escapes honoured): its length.
fn quoted(rest: &[u8], quote: u8) -> usize {
    let mut i = 1;
    while i < rest.len() {
        match rest[i] {
            b'\\' => i += 2,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    rest.len()
}

/// A character literal's length; `None` for a lifetime.
fn char_literal(rest: &[u8]) -> Option<usize> {
    if rest.get(1) == Some(&b'\\') {
        return Some(quoted(rest, b'\''));
    }
    // One character (up to four bytes of UTF-8), then the closing quote.
    (2..=5)
        .find(|&n| {
            rest.get(n) == Some(&b'\'') && std::str::from_utf8(&rest[1..n]).is_ok_and(|s| s.chars().count() == 1)
        })
        .map(|n| n + 1)
}

/// The functions of `source` longer than `limit` lines (from `fn` to the
/// closing brace): name, first line, length. A `#[cfg(test)]` module is
/// left out.
pub(crate) fn long_functions(source: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let text = blank(source);
    let bytes = text.as_bytes();
    let line_of = |at: usize| bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let tests = test_modules(&text);
    let mut long = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find("fn ") {
        let start = at + found;
        at = start + 3;
        if ident_before(bytes, start) || tests.iter().any(|r| r.contains(&start)) {
            continue;
        }
        let name: String = text[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let Some(open) = text[at..].find(['{', ';']).map(|p| at + p) else {
            break;
        };
        if bytes[open] == b';' {
            continue;
        }
        let Some(close) = matching(bytes, open) else { break };
        let (first, last) = (line_of(start), line_of(close));
        if last - first + 1 > limit {
            long.push((name, first, last - first + 1));
        }
    }
    long
}

/// The byte ranges of `#[cfg(test)] mod … { … }` blocks.
fn test_modules(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find("#[cfg(test)]") {
        let start = at + found;
        at = start + 1;
        let after = text[start + 12..].trim_start();
        if !after.starts_with("mod ") {
            continue;
        }
        let from = text.len() - after.len();
        match text[from..].find(['{', ';']).map(|p| from + p) {
            Some(open) if text.as_bytes()[open] == b'{' => {
                if let Some(close) = matching(text.as_bytes(), open) {
                    ranges.push(start..close + 1);
                }
            }
            _ => {}
        }
    }
    ranges
}

fn matching(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The module path of a source file under `src` (`agent/mod.rs` →
/// `agent`, `lib.rs` → ``, `run/stream.rs` → `run::stream`).
pub(crate) fn module_of(relative: &Path) -> String {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts.join("::")
}

/// Which files of a crate each file takes names from: `crate::a::b` and
/// `super::…` paths, resolved to the longest module that is a file.
pub(crate) fn imports(files: &[(PathBuf, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = files.iter().map(|(p, _)| module_of(p)).collect();
    let mut graph = BTreeMap::new();
    for (path, source) in files {
        let this = module_of(path);
        let text = blank(source);
        let mut targets = BTreeSet::new();
        for path in paths(&text) {
            let absolute = if let Some(rest) = path.strip_prefix("crate::") {
                rest.to_owned()
            } else if let Some(rest) = path.strip_prefix("super::") {
                let mut base: Vec<&str> = this.split("::").filter(|s| !s.is_empty()).collect();
                base.pop();
                let mut joined = base.join("::");
                if !joined.is_empty() {
                    joined.push_str("::");
                }
                joined + rest
            } else {
                continue;
            };
            // The longest prefix that is a file of the crate.
            let segments: Vec<&str> = absolute.split("::").collect();
            if let Some(target) = (1..=segments.len())
                .rev()
                .map(|n| segments[..n].join("::"))
                .find(|m| modules.contains(m))
                && !related(&this, &target)
            {
                targets.insert(target);
            }
        }
        graph.insert(this, targets);
    }
    graph
}

/// Whether one module is the other or holds it: a parent declares its
/// children and a child uses its parent's names, which is no cycle of
/// files.
fn related(a: &str, b: &str) -> bool {
    let holds =
        |outer: &str, inner: &str| outer.is_empty() || inner == outer || inner.starts_with(&format!("{outer}::"));
    holds(a, b) || holds(b, a)
}

/// The `crate::…` and `super::…` paths of a text, with `use` groups
/// (`crate::a::{b, c::d}`) expanded one level.
fn paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for start in ["crate::", "super::"] {
        let mut at = 0;
        while let Some(found) = text[at..].find(start) {
            let begin = at + found;
            at = begin + start.len();
            if ident_before(text.as_bytes(), begin) {
                continue;
            }
            let path: String = text[begin..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let path = path.trim_end_matches(':').to_owned();
            let after = &text[begin + path.len()..];
            if after.starts_with("::{") {
                let group = &after[3..after.find('}').unwrap_or(after.len())];
                for item in group.split(',') {
                    let item: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                        .collect();
                    if !item.is_empty() {
                        out.push(format!("{path}::{item}"));
                    }
                }
            }
            out.push(path);
        }
    }
    out
}

/// The import cycles of a graph: each strongly connected set of more than
/// one file, sorted.
pub(crate) fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: finish order on the graph, then sets on its transpose.
    let mut order = Vec::new();
    let mut seen = BTreeSet::new();
    for node in graph.keys() {
        visit(node, graph, &mut seen, &mut order);
    }
    let mut transpose: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, tos) in graph {
        for to in tos {
            transpose.entry(to.as_str()).or_default().push(from.as_str());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut sets = Vec::new();
    for node in order.iter().rev() {
        if assigned.contains(node.as_str()) {
            continue;
        }
        let mut set = Vec::new();
        let mut stack = vec![node.as_str()];
        while let Some(n) = stack.pop() {
            if !assigned.insert(n.to_owned()) {
                continue;
            }
            set.push(n.to_owned());
            stack.extend(transpose.get(n).into_iter().flatten().copied());
        }
        if set.len() > 1 {
            set.sort();
            sets.push(set);
        }
    }
    sets.sort();
    sets
}

fn visit(node: &str, graph: &BTreeMap<String, BTreeSet<String>>, seen: &mut BTreeSet<String>, order: &mut Vec<String>) {
    if !seen.insert(node.to_owned()) {
        return;
    }
    for next in graph.get(node).into_iter().flatten() {
        visit(next, graph, seen, order);
    }
    order.push(node.to_owned());
}

#[cfg(test)]
mod tests;
