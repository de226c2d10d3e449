//! Build facts for `zidane --version`, as compile-time environment
//! variables: the commit the program was built from
//! (`ZIDANE_BUILD_COMMIT`, empty when unknown) and its date
//! (`ZIDANE_BUILD_COMMIT_DATE`), the Cargo profile (`ZIDANE_BUILD_PROFILE`:
//! `debug`, `release`, `dist`) and the target (`ZIDANE_BUILD_TARGET`).
#![allow(clippy::print_stdout, reason = "a build script speaks to Cargo on standard output")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ZIDANE_BUILD_COMMIT");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    // A build outside a checkout (a source archive) may be told its commit.
    let given = std::env::var("ZIDANE_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .map(|c| (c.trim().chars().take(9).collect::<String>(), None));
    let commit = given.or_else(|| git_commit(&dir));
    let profile = profile();
    let target = std::env::var("TARGET").unwrap_or_default();
    let (hash, date) = commit.unwrap_or_default();
    println!("cargo:rustc-env=ZIDANE_BUILD_COMMIT={hash}");
    println!("cargo:rustc-env=ZIDANE_BUILD_COMMIT_DATE={}", date.unwrap_or_default());
    println!("cargo:rustc-env=ZIDANE_BUILD_PROFILE={profile}");
    println!("cargo:rustc-env=ZIDANE_BUILD_TARGET={target}");
}

/// The Cargo profile: the folder the build's output goes to
/// (`target/[TRIPLE/]PROFILE/build/zidane-cli-HASH/out`; `debug` for `dev`),
/// since `PROFILE` only tells `debug` from `release`.
fn profile() -> String {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    out.ancestors()
        .nth(3)
        .and_then(Path::file_name)
        .and_then(|name| name.to_str())
        .map(str::to_owned)
        .or_else(|| std::env::var("PROFILE").ok())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The short hash and date of the checkout's `HEAD`, and the files whose
/// change means a new commit.
fn git_commit(dir: &Path) -> Option<(String, Option<String>)> {
    let out = git(dir, &["log", "-1", "--format=%h %cs", "--abbrev=9"])?;
    let (hash, date) = out.split_once(' ')?;
    watch_head(dir);
    Some((hash.to_owned(), Some(date.to_owned())))
}

/// Reruns this script when `HEAD` moves: the `HEAD` file of the work tree's
/// git folder, the branch it names and the packed refs.
fn watch_head(dir: &Path) {
    let Some(git_dir) = git(dir, &["rev-parse", "--absolute-git-dir"]) else {
        return;
    };
    let git_dir = PathBuf::from(git_dir);
    let common = git(dir, &["rev-parse", "--git-common-dir"])
        .map(|c| {
            if Path::new(&c).is_absolute() {
                PathBuf::from(c)
            } else {
                dir.join(c)
            }
        })
        .unwrap_or_else(|| git_dir.clone());
    let head = git_dir.join("HEAD");
    let mut watched = vec![head.clone(), common.join("packed-refs")];
    if let Some(branch) = std::fs::read_to_string(&head)
        .ok()
        .and_then(|h| h.strip_prefix("ref: ").map(|r| r.trim().to_owned()))
    {
        watched.push(common.join(branch));
    }
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}
