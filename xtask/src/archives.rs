//! What a release is made of: the targets `dist` builds, the archive each
//! build is packed in and the program's path inside it (the names the
//! installer script, the Homebrew formula, `cargo binstall` and the npm
//! packages all rely on), and the version released.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, root};

/// The released package (`dist` names the archives after it).
pub(crate) const APP: &str = "zidane-cli";

/// The program inside.
pub(crate) const BIN: &str = "zidane";

/// Where the project lives (the `repository` of the workspace).
pub(crate) const REPO: &str = "https://github.com/zidane-rs/zidane-rs";

/// Every target a release is built for.
pub(crate) const TARGETS: &[&str] = &[
    "aarch64-apple-darwin",
    "aarch64-unknown-linux-gnu",
    "aarch64-unknown-linux-musl",
    "x86_64-apple-darwin",
    "x86_64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
    "x86_64-pc-windows-msvc",
];

/// The archive of a target's build: `zidane-cli-<triple>.tar.xz`, or
/// `.zip` for Windows.
pub(crate) fn archive_name(triple: &str) -> String {
    if triple.contains("windows") {
        format!("{APP}-{triple}.zip")
    } else {
        format!("{APP}-{triple}.tar.xz")
    }
}

/// The program's path inside its archive: a tarball holds one folder named
/// like it, a zip holds the files alone.
pub(crate) fn binary_in_archive(triple: &str) -> String {
    if triple.contains("windows") {
        format!("{BIN}.exe")
    } else {
        format!("{APP}-{triple}/{BIN}")
    }
}

/// The target folder (`CARGO_TARGET_DIR`, else `target/`).
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

/// The program's version, from `cargo metadata`.
pub(crate) fn program_version(root: &Path) -> Result<String> {
    let meta = crate::tidy::cargo_json(root, &["metadata", "--no-deps", "--format-version", "1", "--locked"])?;
    meta["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"] == APP))
        .and_then(|p| p["version"].as_str())
        .map(str::to_owned)
        .ok_or_else(|| format!("cargo metadata: no {APP}"))
}

/// The target `rustc` builds for here, which the installer must pick.
pub(crate) fn host_triple() -> Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("could not start rustc: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| "rustc -vV names no host".to_owned())
}
