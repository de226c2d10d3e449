//! What `zidane --version` says (the version, and the commit, its date and
//! the build profile when the build knew them), and what `zidane update`
//! says: how this copy was installed and the command that updates it.

use std::path::{Path, PathBuf};

/// The long version text.
pub(crate) fn long() -> &'static str {
    static LONG: std::sync::LazyLock<String> = std::sync::LazyLock::new(text);
    LONG.as_str()
}

fn built(value: Option<&'static str>) -> Option<&'static str> {
    value.filter(|v| !v.is_empty())
}

fn text() -> String {
    let commit = built(option_env!("ZIDANE_BUILD_COMMIT"));
    let date = built(option_env!("ZIDANE_BUILD_COMMIT_DATE"));
    let profile = built(option_env!("ZIDANE_BUILD_PROFILE")).map(|p| format!("{p} build"));
    let commit = commit.map(|c| date.map_or_else(|| c.to_owned(), |d| format!("{c} {d}")));
    let facts: Vec<String> = [commit, profile].into_iter().flatten().collect();
    if facts.is_empty() {
        return env!("CARGO_PKG_VERSION").to_owned();
    }
    format!("{} ({})", env!("CARGO_PKG_VERSION"), facts.join(", "))
}

/// Where releases are published.
const RELEASES: &str = "https://github.com/zidane-rs/zidane-rs/releases";

/// How a copy of the program was installed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Route {
    Npm,
    Homebrew,
    Script { windows: bool },
    Cargo,
    Checkout,
}

impl Route {
    /// The route of the program at `exe`: `receipt_prefix` is the folder
    /// the install script's receipt names, `cargo_bin` Cargo's `bin` folder.
    pub(crate) fn of(exe: &Path, receipt_prefix: Option<&Path>, cargo_bin: Option<&Path>) -> Route {
        let text = exe.to_string_lossy().replace('\\', "/");
        let folder = exe.parent();
        if text.contains("/node_modules/@zidane-rs/cli-") {
            Route::Npm
        } else if text.contains("/Cellar/zidane/") {
            Route::Homebrew
        } else if receipt_prefix.is_some_and(|p| Some(p) == folder) {
            Route::Script { windows: cfg!(windows) }
        } else if cargo_bin.is_some_and(|b| Some(b) == folder) {
            Route::Cargo
        } else {
            Route::Checkout
        }
    }

    /// What `zidane update` says for this route.
    pub(crate) fn advice(&self) -> String {
        match self {
            Route::Npm => "installed with npm; update: npm install -g @zidane-rs/cli@latest".to_owned(),
            Route::Homebrew => "installed with Homebrew; update: brew upgrade zidane".to_owned(),
            Route::Script { windows: false } => format!(
                "installed by the install script; update: run it again: curl --proto '=https' --tlsv1.2 -LsSf {RELEASES}/latest/download/zidane-cli-installer.sh | sh"
            ),
            Route::Script { windows: true } => format!(
                "installed by the install script; update: run it again: powershell -ExecutionPolicy Bypass -c \"irm {RELEASES}/latest/download/zidane-cli-installer.ps1 | iex\""
            ),
            Route::Cargo => "installed with cargo; update: cargo binstall --git https://github.com/zidane-rs/zidane-rs zidane-cli (or cargo install --git https://github.com/zidane-rs/zidane-rs zidane-cli --profile dist --locked)".to_owned(),
            Route::Checkout => {
                let profile = built(option_env!("ZIDANE_BUILD_PROFILE")).unwrap_or("local");
                let commit = built(option_env!("ZIDANE_BUILD_COMMIT")).unwrap_or("an unknown commit");
                format!(
                    "a {profile} build of {commit} from a checkout; update: git pull, then cargo install --path crates/zidane-cli --profile dist --locked"
                )
            }
        }
    }
}

/// `zidane update`'s text: this copy's version, its route and the command
/// that updates it.
pub(crate) fn update_text() -> String {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .unwrap_or_default();
    let route = Route::of(&exe, receipt_prefix().as_deref(), cargo_bin().as_deref());
    format!(
        "zidane {} at {}\n{}\nReleases: {RELEASES}\n",
        long(),
        exe.display(),
        route.advice()
    )
}

/// The folder the install script's receipt says it installed into.
fn receipt_prefix() -> Option<PathBuf> {
    let config = if cfg!(windows) {
        std::env::var_os("LOCALAPPDATA").map(PathBuf::from)?
    } else {
        std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?
    };
    let text = std::fs::read_to_string(config.join("zidane-cli/zidane-cli-receipt.json")).ok()?;
    let receipt: serde_json::Value = serde_json::from_str(&text).ok()?;
    let prefix = PathBuf::from(receipt["install_prefix"].as_str()?);
    // The script installs into the prefix's `bin`, or the prefix itself.
    let bin = prefix.join("bin");
    let chosen = if bin.is_dir() { bin } else { prefix };
    Some(std::fs::canonicalize(&chosen).unwrap_or(chosen))
}

/// Cargo's `bin` folder (`$CARGO_HOME/bin`, else `~/.cargo/bin`).
fn cargo_bin() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let bin = home.join("bin");
    Some(std::fs::canonicalize(&bin).unwrap_or(bin))
}

#[cfg(test)]
mod tests;
