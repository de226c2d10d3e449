//! The workspace's examples, for tests that run them as their own processes.
//!
//! `cargo test --all-targets` compiles examples as test harnesses, so the
//! plain example binaries (`target/<profile>/examples/<name>`) exist only
//! after a `cargo build --examples`. [`path`] builds them once per test
//! binary when they are missing, with the same selection `cargo xtask ci`
//! uses, so the dependencies already compiled for the tests are reused.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The path of the example `name`, built first if it is missing.
///
/// # Panics
///
/// When the test binary's location is unusual or the build fails: both
/// mean the test cannot run, and the message says why.
pub fn path(name: &str) -> PathBuf {
    #[allow(clippy::expect_used)]
    let exe = std::env::current_exe().expect("the test binary has a path");
    #[allow(clippy::expect_used)]
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps");
    let path = profile.join("examples").join(name);
    if !path.exists() {
        static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
        if let Err(why) = BUILT.get_or_init(build) {
            panic!("{} is missing and building it failed: {why}", path.display());
        }
    }
    assert!(
        path.exists(),
        "{} is missing after `cargo build --examples`",
        path.display()
    );
    path
}

fn build() -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let status = Command::new(cargo)
        .args(["build", "--workspace", "--examples", "--all-features", "--locked"])
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`cargo build --workspace --examples --all-features` exited with {status}"
        ))
    }
}
