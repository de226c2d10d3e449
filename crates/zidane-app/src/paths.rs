//! Where the user's and the project's files are.

use std::path::{Path, PathBuf};

/// Where things are.
#[derive(Debug, Default, Clone)]
pub struct Paths {
    /// The user's zidane folder.
    pub user: Option<PathBuf>,
    /// The repository root (the nearest folder with `.git`, else the working
    /// folder).
    pub root: PathBuf,
    /// The working folder.
    pub cwd: PathBuf,
}

impl Paths {
    /// The places of `cwd`.
    pub fn new(cwd: &Path) -> Paths {
        Paths {
            user: user_dir(),
            root: project_root(cwd),
            cwd: cwd.to_owned(),
        }
    }

    /// The user's `config.toml`.
    pub fn user_config(&self) -> Option<PathBuf> {
        self.user.as_ref().map(|d| d.join("config.toml"))
    }

    /// The project's `.zidane/config.toml`.
    pub fn project_config(&self) -> PathBuf {
        self.root.join(".zidane/config.toml")
    }
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// `$ZIDANE_HOME`, else `$XDG_CONFIG_HOME/zidane`, else `~/.config/zidane`.
pub fn user_dir() -> Option<PathBuf> {
    env_path("ZIDANE_HOME").or_else(|| {
        env_path("XDG_CONFIG_HOME")
            .or_else(|| env_path("HOME").map(|h| h.join(".config")))
            .map(|c| c.join("zidane"))
    })
}

/// The nearest folder from `cwd` up with a `.git`, else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_owned()
}

/// Where skills come from, first wins: the given folders, the project's
/// `.zidane/skills` (and `.claude/skills`), the user's (`$ZIDANE_HOME/skills`;
/// without it `$XDG_CONFIG_HOME/zidane/skills` or `~/.config/zidane/skills`,
/// then `~/.claude/skills`).
pub fn skill_folders(given: &[PathBuf], cwd: &Path) -> Vec<PathBuf> {
    let mut folders = given.to_vec();
    folders.push(cwd.join(".zidane/skills"));
    folders.push(cwd.join(".claude/skills"));
    // `$ZIDANE_HOME` stands for the whole of the user's zidane state.
    match env_path("ZIDANE_HOME") {
        Some(home) => folders.push(home.join("skills")),
        None => {
            if let Some(config) = env_path("XDG_CONFIG_HOME").or_else(|| env_path("HOME").map(|h| h.join(".config"))) {
                folders.push(config.join("zidane/skills"));
            }
            if let Some(home) = env_path("HOME") {
                folders.push(home.join(".claude/skills"));
            }
        }
    }
    folders
}

/// `path` with a leading `~` read as the home folder.
pub fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), env_path("HOME")) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_owned(),
    }
}
