//! `cargo xtask web-tests`: the page `zidane serve` serves, in a real
//! browser. Chromium comes from the distribution's packages (`apt-get
//! install chromium`; `$CHROMIUM` names another); Playwright's core
//! package drives it (it downloads no browser) and axe-core checks the
//! page's accessibility, both pinned from npm into `target/web-tests`. The
//! tests (`crates/zidane-cli/tests/web/`, Node's own test runner) start
//! the debug build of `zidane serve` against a scripted model on loopback.

use std::path::PathBuf;
use std::time::Instant;

use crate::{Result, root};

/// The browser driver and the accessibility checker, pinned.
const PACKAGES: &[&str] = &["playwright-core@1.65.2", "axe-core@4.14.1"];

fn browser() -> Result<PathBuf> {
    let path = std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "web-tests: no Chromium at {} (apt-get install chromium, or set CHROMIUM)",
            path.display()
        ))
    }
}

pub(crate) fn run() -> Result {
    let root = root();
    let dir = root.join("target/web-tests");
    let ready = ["playwright-core/package.json", "axe-core/axe.min.js"]
        .iter()
        .all(|f| dir.join("node_modules").join(f).exists());
    if ready {
        println!("web-tests: Playwright and axe-core present in {}", dir.display());
    } else {
        crate::npm_install(&dir, PACKAGES, &[("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")])?;
    }
    let chromium = browser()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    crate::run(&cargo, &["build", "-p", "zidane-cli", "--locked"], &[])?;
    let binary = crate::archives::target_dir()
        .join("debug")
        .join(format!("zidane{}", std::env::consts::EXE_SUFFIX));
    // The screenshots the README shows are taken here (copied to docs/web).
    let screenshots = dir.join("screenshots");
    let started = Instant::now();
    crate::run(
        "node",
        &["--test", "--test-concurrency=1", "crates/zidane-cli/tests/web/"],
        &[
            ("ZIDANE_BIN", &binary.display().to_string()),
            ("CHROMIUM", &chromium.display().to_string()),
            ("WEB_TEST_MODULES", &dir.join("node_modules").display().to_string()),
            ("WEB_SCREENSHOTS", &screenshots.display().to_string()),
        ],
    )?;
    println!("web-tests: passed in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
