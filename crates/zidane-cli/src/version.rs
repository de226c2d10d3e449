//! What `zidane --version` says: the version, and the commit and build
//! profile the binary was built from when the build knew them.

/// The long version text.
pub(crate) fn long() -> &'static str {
    static LONG: std::sync::LazyLock<String> = std::sync::LazyLock::new(text);
    LONG.as_str()
}

fn text() -> String {
    let mut text = env!("CARGO_PKG_VERSION").to_owned();
    let commit = option_env!("ZIDANE_BUILD_COMMIT").filter(|c| !c.is_empty());
    let profile = option_env!("ZIDANE_BUILD_PROFILE").filter(|p| !p.is_empty());
    match (commit, profile) {
        (Some(commit), Some(profile)) => text.push_str(&format!(" ({commit}, {profile})")),
        (Some(commit), None) => text.push_str(&format!(" ({commit})")),
        (None, Some(profile)) => text.push_str(&format!(" ({profile})")),
        (None, None) => {}
    }
    text
}
