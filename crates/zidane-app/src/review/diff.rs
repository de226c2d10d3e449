//! The change under review, from git: the unified diff of one target, cut
//! into files, each with its hunks' line ranges on the new side, and what
//! is left out (binary files, files `.gitattributes` marks
//! `linguist-generated`, lockfiles).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::Target;
use crate::Error;

/// The tree of an empty repository (what a root commit and a repository
/// without commits are compared with).
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The lockfiles a review skips, by file name.
const LOCKFILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "Gemfile.lock",
    "composer.lock",
    "go.sum",
    "flake.lock",
    "mix.lock",
    "Podfile.lock",
    "pubspec.lock",
    "packages.lock.json",
    "gradle.lockfile",
    "Package.resolved",
];

/// Why a file of the diff was not reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// A binary file.
    Binary,
    /// Marked `linguist-generated` in `.gitattributes`.
    Generated,
    /// A lockfile.
    Lockfile,
    /// Larger than a sub-review can hold.
    TooLarge,
    /// The cost limit was reached before its sub-review.
    Budget,
    /// Its sub-review failed.
    Failed,
}

impl SkipReason {
    /// What a person reads.
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::Generated => "generated (linguist-generated)",
            SkipReason::Lockfile => "lockfile",
            SkipReason::TooLarge => "too large for the context window",
            SkipReason::Budget => "the cost limit was reached",
            SkipReason::Failed => "its sub-review failed",
        }
    }
}

/// One file of the diff.
#[derive(Debug, Clone)]
pub struct FileDiff {
    /// The path on the new side (the old one for a deleted file).
    pub path: String,
    /// The old path of a renamed file.
    pub renamed_from: Option<String>,
    /// Whether the file was deleted.
    pub deleted: bool,
    /// The file's part of the unified diff, headers included.
    pub patch: String,
    /// The hunks' line ranges on the new side (first and last line).
    pub ranges: Vec<(u32, u32)>,
    /// The new side's lines the diff shows (context and added), by number.
    pub lines: BTreeMap<u32, String>,
    /// Lines added and removed.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
    binary: bool,
}

impl FileDiff {
    /// Whether lines `start..=end` meet a hunk of the diff.
    pub fn touches(&self, start: u32, end: u32) -> bool {
        self.ranges.iter().any(|&(a, b)| start <= b && end >= a)
    }
}

/// A change to review: the files to review and the files left out.
#[derive(Debug, Clone, Default)]
pub struct Diff {
    /// The files a review reads, in the diff's order.
    pub files: Vec<FileDiff>,
    /// The files left out, with why.
    pub skipped: Vec<(String, SkipReason)>,
}

impl Diff {
    /// The file at `path`.
    pub fn file(&self, path: &str) -> Option<&FileDiff> {
        let path = path.trim_start_matches("./");
        self.files.iter().find(|f| f.path == path)
    }

    /// The whole diff as text.
    pub fn text(&self) -> String {
        self.files.iter().map(|f| f.patch.as_str()).collect()
    }
}

/// Runs `git ARGS` in `cwd`; `ok_codes` are the exit codes that are not
/// failures (`git diff --no-index` says 1 for "different").
async fn git(cwd: &Path, args: &[&str], ok_codes: &[i32]) -> Result<String, Error> {
    let out = tokio::process::Command::new("git")
        .args(["-c", "core.quotePath=false", "-c", "diff.noprefix=false"])
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| Error::usage(format!("cannot run git: {e}")))?;
    let code = out.status.code().unwrap_or(-1);
    if !ok_codes.contains(&code) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(Error::usage(format!("`git {}`: {}", args.join(" "), stderr.trim())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether `rev` names a commit.
async fn is_commit(cwd: &Path, rev: &str) -> bool {
    git(
        cwd,
        &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")],
        &[0],
    )
    .await
    .is_ok()
}

const DIFF_OPTIONS: &[&str] = &[
    "--no-color",
    "--no-ext-diff",
    "--find-renames",
    "--unified=3",
    "--src-prefix=a/",
    "--dst-prefix=b/",
];

async fn diff_between(cwd: &Path, from: &str, to: Option<&str>) -> Result<String, Error> {
    let mut args = vec!["diff"];
    args.extend(DIFF_OPTIONS);
    args.push(from);
    args.extend(to);
    args.push("--");
    git(cwd, &args, &[0]).await
}

/// The unified diff `target` names, in the repository at `cwd`.
pub async fn unified(cwd: &Path, target: &Target) -> Result<String, Error> {
    git(cwd, &["rev-parse", "--git-dir"], &[0])
        .await
        .map_err(|_| Error::usage(format!("{} is not in a git repository", cwd.display())))?;
    match target {
        Target::Uncommitted => {
            let base = if is_commit(cwd, "HEAD").await {
                "HEAD"
            } else {
                EMPTY_TREE
            };
            let mut text = diff_between(cwd, base, None).await?;
            let untracked = git(cwd, &["ls-files", "--others", "--exclude-standard", "-z"], &[0]).await?;
            for path in untracked.split('\0').filter(|p| !p.is_empty()) {
                let mut args = vec!["diff", "--no-index"];
                args.extend(DIFF_OPTIONS);
                args.extend(["--", "/dev/null", path]);
                text.push_str(&git(cwd, &args, &[0, 1]).await?);
            }
            Ok(text)
        }
        Target::Base(branch) => {
            if !is_commit(cwd, branch).await {
                return Err(Error::usage(format!("--base {branch}: no such branch or commit")));
            }
            let base = git(cwd, &["merge-base", branch, "HEAD"], &[0])
                .await
                .map_err(|e| Error::usage(format!("--base {branch}: no merge base with HEAD ({e})")))?;
            diff_between(cwd, base.trim(), Some("HEAD")).await
        }
        Target::Commit(sha) => {
            if !is_commit(cwd, sha).await {
                return Err(Error::usage(format!("--commit {sha}: no such commit")));
            }
            let parent = format!("{sha}^1");
            let from = if is_commit(cwd, &parent).await {
                parent
            } else {
                EMPTY_TREE.to_owned()
            };
            diff_between(cwd, &from, Some(sha)).await
        }
        Target::Range(from, to) => {
            for rev in [from, to] {
                if !is_commit(cwd, rev).await {
                    return Err(Error::usage(format!("{from}..{to}: `{rev}` is no commit")));
                }
            }
            diff_between(cwd, from, Some(to)).await
        }
    }
}

/// The diff `target` names, parsed, with what a review skips set apart.
pub async fn collect(cwd: &Path, target: &Target) -> Result<Diff, Error> {
    let text = unified(cwd, target).await?;
    let files = parse(&text);
    let paths: Vec<&str> = files.iter().filter(|f| !f.deleted).map(|f| f.path.as_str()).collect();
    let generated = generated(cwd, &paths).await?;
    let mut diff = Diff::default();
    for file in files {
        let name = file.path.rsplit('/').next().unwrap_or(&file.path);
        let reason = if file.binary {
            Some(SkipReason::Binary)
        } else if LOCKFILES.contains(&name) {
            Some(SkipReason::Lockfile)
        } else if generated.contains(&file.path) {
            Some(SkipReason::Generated)
        } else {
            None
        };
        match reason {
            Some(reason) => diff.skipped.push((file.path, reason)),
            None => diff.files.push(file),
        }
    }
    Ok(diff)
}

/// The paths `.gitattributes` marks `linguist-generated`.
async fn generated(cwd: &Path, paths: &[&str]) -> Result<Vec<String>, Error> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec!["check-attr", "-z", "linguist-generated", "--"];
    args.extend(paths);
    let out = git(cwd, &args, &[0]).await?;
    // NUL-separated triples: path, attribute, value.
    let fields: Vec<&str> = out.split('\0').collect();
    Ok(fields
        .chunks(3)
        .filter(|t| t.len() == 3 && matches!(t[2], "set" | "true"))
        .map(|t| t[0].to_owned())
        .collect())
}

/// A unified diff cut into files.
pub fn parse(text: &str) -> Vec<FileDiff> {
    let mut files = Vec::new();
    let mut current: Option<FileDiff> = None;
    let mut new_line = 0u32;
    for line in text.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            files.extend(current.take());
            current = Some(FileDiff {
                path: header_path(line),
                renamed_from: None,
                deleted: false,
                patch: String::new(),
                ranges: Vec::new(),
                lines: BTreeMap::new(),
                added: 0,
                removed: 0,
                binary: false,
            });
        }
        let Some(file) = current.as_mut() else {
            continue;
        };
        file.patch.push_str(line);
        let body = line.trim_end_matches('\n');
        if file.ranges.is_empty() {
            if let Some(from) = body.strip_prefix("rename from ") {
                file.renamed_from = Some(from.to_owned());
            } else if let Some(to) = body.strip_prefix("rename to ") {
                to.clone_into(&mut file.path);
            } else if body.starts_with("deleted file mode") {
                file.deleted = true;
            } else if let Some(to) = body.strip_prefix("+++ b/") {
                // A name with a space ends with a tab there.
                to.trim_end_matches('\t').clone_into(&mut file.path);
            } else if body.starts_with("Binary files ") || body == "GIT binary patch" {
                file.binary = true;
            }
        }
        if let Some(range) = body.strip_prefix("@@ ").and_then(hunk_range) {
            new_line = range.0;
            file.ranges.push(range);
        } else if !file.ranges.is_empty() {
            match body.as_bytes().first() {
                Some(b'+') => {
                    file.lines.insert(new_line, body[1..].to_owned());
                    file.added += 1;
                    new_line += 1;
                }
                Some(b'-') => file.removed += 1,
                Some(b' ') => {
                    file.lines.insert(new_line, body[1..].to_owned());
                    new_line += 1;
                }
                _ => {}
            }
        }
    }
    files.extend(current);
    files
}

/// The path a `diff --git a/X b/Y` line names (`Y`), before the `+++`
/// line or a rename says it exactly.
fn header_path(line: &str) -> String {
    let rest = line.trim_end().trim_start_matches("diff --git ");
    match rest.rfind(" b/") {
        Some(at) => rest[at + 3..].to_owned(),
        None => rest.to_owned(),
    }
}

/// A hunk header's new-side lines, first and last (`@@ -a,b +c,d @@`).
fn hunk_range(header: &str) -> Option<(u32, u32)> {
    let new = header.split_whitespace().find(|w| w.starts_with('+'))?;
    let mut parts = new[1..].splitn(2, ',');
    let start: u32 = parts.next()?.parse().ok()?;
    let count: u32 = match parts.next() {
        Some(n) => n.parse().ok()?,
        None => 1,
    };
    let start = start.max(1);
    Some((start, start + count.max(1) - 1))
}
