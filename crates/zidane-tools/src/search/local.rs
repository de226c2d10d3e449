//! The walk on this machine's file system: `ignore`'s parallel walker (the
//! ignore files, hidden entries, no symbolic links followed), each file
//! searched through `grep-searcher`'s bounded buffer, on blocking threads.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use grep_regex::RegexMatcher;
use ignore::{WalkBuilder, WalkState};
use parking_lot::Mutex;
use zidane_core::tool::ToolFailure;

use super::{FileFilter, FileHits, Hits, StopFlag, WalkRules, searcher};

/// A search on this machine: the folder (or file) searched, and the
/// context's working folder above it.
pub(super) struct Searched {
    pub top: PathBuf,
    pub base: PathBuf,
    /// What the walk leaves out as withheld (credential stores, the
    /// sessions file) when the context has a sandbox.
    pub hides: Hides,
}

/// Whether a path is withheld from the tools.
pub(super) type Hides = Arc<dyn Fn(&Path) -> bool + Send + Sync>;
use crate::fail;

/// The walk of `base`, started at the working folder `top` so the ignore
/// files of the folders between them apply (and none above `top`: a
/// `.gitignore` in the home folder is not the project's), going down only
/// towards and into `base`.
fn walker(top: &Path, base: &Path, rules: WalkRules, hides: &Hides) -> ignore::WalkParallel {
    let hides = Arc::clone(hides);
    let ignored = !rules.include_ignored;
    let base = base.to_path_buf();
    let mut builder = WalkBuilder::new(top);
    builder
        .hidden(!rules.hidden)
        .ignore(ignored)
        .git_ignore(ignored)
        .git_exclude(ignored)
        .git_global(ignored)
        .parents(false)
        // A `.gitignore` counts in a folder that is not a repository too.
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            let path = entry.path();
            if hides(path) {
                return false;
            }
            if !path.starts_with(&base) {
                // Above `base`: only the folders on the way to it.
                return base.starts_with(path);
            }
            path == base
                || !entry.file_type().is_some_and(|t| t.is_dir())
                || !rules.skips_folder(&entry.file_name().to_string_lossy())
        });
    builder.build_parallel()
}

/// `path` under `root`, `/`-separated (a searched file given as the root
/// is named by its file name).
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    if rel.as_os_str().is_empty() {
        return path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Runs `visit` on every regular file the walk yields, from the walker's
/// threads, until it ends or `stop` is set. A folder asked for by name is
/// searched even when the walk from the working folder skips it (hidden,
/// ignored, a build folder), as a path given to ripgrep is.
fn each_file<F>(folder: &Searched, rules: WalkRules, stop: &StopFlag, make: impl Fn() -> F + Sync)
where
    F: FnMut(&Path, String) + Send + 'static,
{
    let reached = walk_files(&folder.top, &folder.base, rules, &folder.hides, stop, &make);
    if !reached && folder.top != folder.base {
        walk_files(&folder.base, &folder.base, rules, &folder.hides, stop, &make);
    }
}

/// One walk from `top` into `base`; whether it reached `base`.
fn walk_files<F>(
    top: &Path,
    base: &Path,
    rules: WalkRules,
    hides: &Hides,
    stop: &StopFlag,
    make: &(impl Fn() -> F + Sync),
) -> bool
where
    F: FnMut(&Path, String) + Send + 'static,
{
    let reached = Arc::new(AtomicBool::new(false));
    walker(top, base, rules, hides).run(|| {
        let mut visit = make();
        let base = base.to_path_buf();
        let (stop, reached) = (stop.clone(), Arc::clone(&reached));
        Box::new(move |entry| {
            if stop.is_set() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.path().starts_with(&base) {
                return WalkState::Continue;
            }
            reached.store(true, Ordering::Relaxed);
            if entry.file_type().is_some_and(|t| t.is_file()) {
                let rel = relative(&base, entry.path());
                visit(entry.path(), rel);
            }
            WalkState::Continue
        })
    });
    reached.load(Ordering::Relaxed)
}

async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, ToolFailure> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| fail(format!("the search stopped: {e}")))
}

/// Every file under `root` whose path matches `filter`, in no order.
pub(super) async fn glob(
    folder: Searched,
    filter: FileFilter,
    rules: WalkRules,
    stop: StopFlag,
) -> Result<Vec<String>, ToolFailure> {
    blocking(move || {
        let found = Arc::new(Mutex::new(Vec::new()));
        each_file(&folder, rules, &stop, || {
            let found = Arc::clone(&found);
            let filter = filter.clone();
            move |_: &Path, rel: String| {
                if filter.is_match(&rel) {
                    found.lock().push(rel);
                }
            }
        });
        std::mem::take(&mut *found.lock())
    })
    .await
}

/// The lines matching `matcher` in the files under `root` (those matching
/// `filter`, when given).
pub(super) async fn grep(
    folder: Searched,
    matcher: RegexMatcher,
    filter: Option<FileFilter>,
    rules: WalkRules,
    stop: StopFlag,
) -> Result<Hits, ToolFailure> {
    blocking(move || {
        let hits = Arc::new(Mutex::new(Hits::default()));
        each_file(&folder, rules, &stop, || {
            let hits = Arc::clone(&hits);
            let filter = filter.clone();
            let matcher = matcher.clone();
            let mut searcher = searcher();
            move |path: &Path, rel: String| {
                if filter.as_ref().is_some_and(|f| !f.is_match(&rel)) {
                    return;
                }
                let mut file = FileHits::default();
                // An unreadable file (gone, no permission, a line past the
                // buffer limit) is left out, as a listing error is.
                if searcher.search_path(&matcher, path, &mut file).is_ok() && file.count > 0 {
                    hits.lock().add(rel, file);
                }
            }
        });
        std::mem::take(&mut *hits.lock())
    })
    .await
}
