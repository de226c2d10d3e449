//! The walk through the execution context's own `list` and `read_file`,
//! for contexts that are not this machine's file system (a container, a
//! client's editor): depth first in name order, the same skipping rules as
//! the local walk (hidden entries, `.gitignore` / `.ignore`, build
//! folders), at most [`WALK_LIMIT`] files, and a note when it stops there.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use grep_regex::RegexMatcher;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use zidane_core::Workspace;
use zidane_core::execution::{DirEntry, EntryKind};

use super::{FileFilter, FileHits, Hits, WalkRules, searcher};

/// The most files the walk visits through a context.
pub(super) const WALK_LIMIT: usize = 50_000;
/// Files read through a context at once.
const READS_IN_FLIGHT: usize = 16;

/// A context path under a fixed root: the ignore files' patterns are
/// anchored to their folder, and `Gitignore` wants paths under a root.
fn anchored(rel: &str) -> PathBuf {
    Path::new("/").join(rel)
}

/// A folder still to list: its context path, its path under the searched
/// folder, and the ignore files that apply inside it, outermost first.
struct Pending {
    folder: String,
    rel: String,
    ignores: Vec<Arc<Gitignore>>,
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() || parent == "." {
        name.to_owned()
    } else {
        format!("{parent}/{name}")
    }
}

/// The ignore files of a folder (context path), read through the context:
/// those its listing shows, or, without a listing, any that read.
async fn ignore_file(ws: &Workspace, folder: &str, entries: Option<&[DirEntry]>) -> Option<Arc<Gitignore>> {
    let mut builder = GitignoreBuilder::new(anchored(folder));
    let mut any = false;
    for name in [".gitignore", ".ignore"] {
        if entries.is_some_and(|entries| !entries.iter().any(|e| e.name == name && e.kind == EntryKind::File)) {
            continue;
        }
        let Ok(bytes) = ws.read_file(&join(folder, name)).await else {
            continue;
        };
        for line in String::from_utf8_lossy(&bytes).lines() {
            any |= builder.add_line(None, line).is_ok();
        }
    }
    if !any {
        return None;
    }
    builder.build().ok().map(Arc::new)
}

/// Whether the innermost ignore file with a say on `path` (a context path)
/// excludes it.
fn ignored(ignores: &[Arc<Gitignore>], path: &str, is_dir: bool) -> bool {
    let path = anchored(path);
    for ignore in ignores.iter().rev() {
        match ignore.matched(&path, is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    false
}

/// Every regular file under `base` the rules keep, as (context path, path
/// under `base`), in name order, at most `limit` of them; `true` when the
/// walk stopped there.
pub(super) async fn files(ws: &Workspace, base: &str, rules: WalkRules, limit: usize) -> (Vec<(String, String)>, bool) {
    // A file asked for by name is searched alone.
    if !base.is_empty()
        && let Ok(Some(stat)) = ws.stat(base).await
        && stat.kind == EntryKind::File
    {
        let name = base.rsplit('/').next().unwrap_or(base).to_owned();
        return (vec![(base.to_owned(), name)], false);
    }
    let mut out = Vec::new();
    // The ignore files of the folders above `base`, from the context's
    // root down, apply inside it too.
    let mut above = Vec::new();
    if !rules.include_ignored && !base.is_empty() && !base.starts_with('/') {
        let mut prefix = String::new();
        for part in base.split('/').filter(|p| !p.is_empty()) {
            if let Some(found) = ignore_file(ws, &prefix, None).await {
                above.push(found);
            }
            prefix = join(&prefix, part);
        }
    }
    let mut stack = vec![Pending {
        // The context's own name for the folder (`""` for its root).
        folder: base.to_owned(),
        rel: String::new(),
        ignores: above,
    }];
    while let Some(Pending {
        folder,
        rel,
        mut ignores,
    }) = stack.pop()
    {
        let Ok(entries) = ws.list(&folder).await else { continue };
        if !rules.include_ignored
            && let Some(found) = ignore_file(ws, &folder, Some(&entries)).await
        {
            ignores.push(found);
        }
        let mut subfolders = Vec::new();
        for entry in entries {
            if !rules.hidden && entry.name.starts_with('.') {
                continue;
            }
            let rel_path = join(&rel, &entry.name);
            let is_dir = entry.kind == EntryKind::Dir;
            if (is_dir && rules.skips_folder(&entry.name)) || ignored(&ignores, &join(&folder, &entry.name), is_dir) {
                continue;
            }
            match entry.kind {
                EntryKind::Dir => subfolders.push(Pending {
                    folder: join(&folder, &entry.name),
                    rel: rel_path,
                    ignores: ignores.clone(),
                }),
                EntryKind::File => {
                    if out.len() == limit {
                        return (out, true);
                    }
                    out.push((join(&folder, &entry.name), rel_path));
                }
                EntryKind::Other => {}
            }
        }
        // Reversed, so the first subfolder is listed next.
        stack.extend(subfolders.into_iter().rev());
    }
    (out, false)
}

fn limit_note(stopped: bool) -> Option<String> {
    stopped.then(|| format!("the walk stopped after {WALK_LIMIT} files; narrow `path` or the pattern"))
}

/// The files under `base` whose path matches `filter`.
pub(super) async fn glob(
    ws: &Workspace,
    base: &str,
    filter: &FileFilter,
    rules: WalkRules,
) -> (Vec<String>, Option<String>) {
    let (found, stopped) = files(ws, base, rules, WALK_LIMIT).await;
    let matching = found
        .into_iter()
        .filter_map(|(_, rel)| filter.is_match(&rel).then_some(rel))
        .collect();
    (matching, limit_note(stopped))
}

/// The lines matching `matcher` in the files under `base`, each file read
/// whole through the context.
pub(super) async fn grep(
    ws: &Workspace,
    base: &str,
    matcher: &RegexMatcher,
    filter: Option<&FileFilter>,
    rules: WalkRules,
) -> (Hits, Option<String>) {
    let (found, stopped) = files(ws, base, rules, WALK_LIMIT).await;
    let wanted = found
        .into_iter()
        .filter(|(_, rel)| filter.is_none_or(|f| f.is_match(rel)));
    // A few reads in flight (a remote context answers each after a round
    // trip), taken in order.
    let mut reads = futures::stream::iter(wanted)
        .map(|(path, rel)| async move { (rel, ws.read_file(&path).await) })
        .buffered(READS_IN_FLIGHT);
    let mut searcher = searcher();
    let mut hits = Hits::default();
    while let Some((rel, read)) = reads.next().await {
        let Ok(bytes) = read else { continue };
        let mut file = FileHits::default();
        if searcher.search_slice(matcher, &bytes, &mut file).is_ok() {
            hits.add(rel, file);
        }
    }
    (hits, limit_note(stopped))
}
