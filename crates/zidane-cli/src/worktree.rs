//! A session's own git worktree: several sessions change one repository
//! without touching each other's files. The worktree is made with
//! `git worktree add` under the repository's `.zidane/worktrees/NAME`, on
//! a new branch `zidane/NAME`; it is removed with its session only when it
//! holds no uncommitted work.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The session metadata key a session's own worktree is kept under.
pub(crate) const KEY: &str = "zidane.worktree";

/// A worktree and the repository it belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Worktree {
    /// Its folder.
    pub(crate) path: PathBuf,
    /// Its branch.
    pub(crate) branch: String,
    /// The repository's main folder.
    pub(crate) repo: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Whether `name` can name a folder and a branch.
fn valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl Worktree {
    /// A new worktree `name` of the repository `folder` is in.
    pub(crate) fn create(folder: &Path, name: &str) -> Result<Worktree, String> {
        if !valid(name) {
            return Err(format!(
                "`{name}` cannot name a worktree (letters, digits, `-`, `_`, `.`)"
            ));
        }
        let repo = PathBuf::from(
            git(folder, &["rev-parse", "--show-toplevel"])
                .map_err(|e| format!("{} is not in a git repository: {e}", folder.display()))?,
        );
        // A link in the way would put the worktree (and the session's
        // writes) outside the repository.
        for dir in [repo.join(".zidane"), repo.join(".zidane/worktrees")] {
            if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(format!(
                    "{} is a symbolic link; worktrees go only inside the repository",
                    dir.display()
                ));
            }
        }
        let path = repo.join(".zidane/worktrees").join(name);
        if path.exists() {
            return Err(format!("the worktree {} exists already", path.display()));
        }
        let branch = format!("zidane/{name}");
        git(&repo, &["worktree", "add", "-b", &branch, &path.to_string_lossy()])?;
        exclude(&repo);
        Ok(Worktree { path, branch, repo })
    }

    /// As a session keeps it (under [`KEY`]).
    pub(crate) fn to_meta(&self) -> Value {
        serde_json::json!({ "path": self.path, "branch": self.branch, "repo": self.repo })
    }

    /// The worktree a session's metadata names (under [`KEY`]).
    pub(crate) fn of_session(metadata: &std::collections::BTreeMap<String, Value>) -> Option<Worktree> {
        Worktree::from_meta(metadata.get(KEY)?)
    }

    /// The worktree `meta` describes.
    pub(crate) fn from_meta(meta: &Value) -> Option<Worktree> {
        Some(Worktree {
            path: PathBuf::from(meta["path"].as_str()?),
            branch: meta["branch"].as_str()?.to_owned(),
            repo: PathBuf::from(meta["repo"].as_str()?),
        })
    }

    /// Whether it has changes not committed (`None`: git could not tell).
    pub(crate) fn changed(&self) -> Option<bool> {
        git(&self.path, &["status", "--porcelain"]).ok().map(|s| !s.is_empty())
    }

    /// Removes it (and its branch, when merged); with uncommitted work it
    /// stays unless `force`, and the error says where it is.
    pub(crate) fn remove(&self, force: bool) -> Result<(), String> {
        if !self.path.exists() {
            return Ok(());
        }
        if !force && self.changed() != Some(false) {
            return Err(format!(
                "the worktree {} has uncommitted changes; it is kept (remove it with `git worktree remove`)",
                self.path.display()
            ));
        }
        let path = self.path.to_string_lossy();
        let mut args = vec!["worktree", "remove", path.as_ref()];
        if force {
            args.push("--force");
        }
        git(&self.repo, &args)?;
        let _ = git(&self.repo, &["branch", "-d", &self.branch]);
        Ok(())
    }
}

/// Keeps the worktrees out of the repository's own status.
fn exclude(repo: &Path) {
    let Ok(dir) = git(repo, &["rev-parse", "--git-common-dir"]) else {
        return;
    };
    let file = repo.join(dir).join("info/exclude");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    if text.lines().any(|l| l.trim() == "/.zidane/worktrees/") {
        return;
    }
    if let Some(parent) = file.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = std::fs::write(
        &file,
        format!(
            "{text}{}/.zidane/worktrees/\n",
            if text.ends_with('\n') || text.is_empty() {
                ""
            } else {
                "\n"
            }
        ),
    );
}
