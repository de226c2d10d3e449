//! Which servers exist, which languages they take, and which a folder
//! calls for.

use std::path::{Path, PathBuf};

/// One language server: how to start it and what it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Its name (`pyright`, `rust-analyzer`, or a configuration's `[lsp.NAME]`).
    pub name: String,
    /// The program: a name looked up on `PATH`, or a path.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The language ids it serves (`python`, `rust`, `typescript`, …; see
    /// [`language_of`]).
    pub languages: Vec<String>,
    /// Files whose presence in the folder says the server applies
    /// (`Cargo.toml`); empty: any file of its languages does.
    pub root_markers: Vec<String>,
    /// `false` turns it off.
    pub enabled: bool,
    /// For a server that publishes nothing when a clean file stays clean
    /// (typescript-language-server): after a change to a file it last
    /// called clean, this long a silence about the file means it still is
    /// (`None`: wait for a publication, up to the settle time).
    pub clean_silence: Option<std::time::Duration>,
}

impl ServerConfig {
    /// A server with a command, its arguments and its languages.
    pub fn new<A, L>(name: impl Into<String>, command: impl Into<String>, args: A, languages: L) -> Self
    where
        A: IntoIterator,
        A::Item: Into<String>,
        L: IntoIterator,
        L::Item: Into<String>,
    {
        ServerConfig {
            name: name.into(),
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            languages: languages.into_iter().map(Into::into).collect(),
            root_markers: Vec::new(),
            enabled: true,
            clean_silence: None,
        }
    }

    /// The same, for a server that is silent when a clean file stays
    /// clean (see [`clean_silence`](ServerConfig::clean_silence)).
    #[must_use]
    pub fn silent_when_clean(mut self, silence: std::time::Duration) -> Self {
        self.clean_silence = Some(silence);
        self
    }

    /// The same, with root markers.
    #[must_use]
    pub fn with_markers<M>(mut self, markers: M) -> Self
    where
        M: IntoIterator,
        M::Item: Into<String>,
    {
        self.root_markers = markers.into_iter().map(Into::into).collect();
        self
    }

    /// The servers known without configuration, in order of preference
    /// for a language (`pyright` before `pylsp`).
    pub fn known() -> Vec<ServerConfig> {
        vec![
            ServerConfig::new("rust-analyzer", "rust-analyzer", Vec::<String>::new(), ["rust"])
                .with_markers(["Cargo.toml"]),
            ServerConfig::new("pyright", "pyright-langserver", ["--stdio"], ["python"])
                .with_markers(PYTHON_MARKERS.iter().copied()),
            ServerConfig::new("pylsp", "pylsp", Vec::<String>::new(), ["python"])
                .with_markers(PYTHON_MARKERS.iter().copied()),
            ServerConfig::new(
                "typescript-language-server",
                "typescript-language-server",
                ["--stdio"],
                ["typescript", "typescriptreact", "javascript", "javascriptreact"],
            )
            .with_markers(["tsconfig.json", "package.json", "jsconfig.json"])
            // It publishes 0.3–0.4 s after a change when it has news.
            .silent_when_clean(TYPESCRIPT_CLEAN_SILENCE),
            ServerConfig::new("gopls", "gopls", Vec::<String>::new(), ["go"]).with_markers(["go.mod"]),
        ]
    }

    /// The program to start: `command` as a path when it names one (it
    /// has a slash), else found on `PATH`; `None` when it is nowhere.
    pub fn resolve(&self) -> Option<PathBuf> {
        find_program(&self.command, std::env::var_os("PATH").as_deref())
    }

    /// Whether `root` calls for this server: one of its markers is there,
    /// or (without markers, or for Python, where a loose script is a
    /// project too) a file of its languages is at the top of the folder.
    pub fn applies_to(&self, root: &Path) -> bool {
        if self.root_markers.iter().any(|m| root.join(m).exists()) {
            return true;
        }
        if !self.root_markers.is_empty() && !self.languages.iter().any(|l| l == "python") {
            return false;
        }
        std::fs::read_dir(root).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| language_of(&e.path()).is_some_and(|lang| self.languages.iter().any(|l| l == lang)))
        })
    }
}

/// typescript-language-server's silence that says a clean file is still
/// clean.
pub const TYPESCRIPT_CLEAN_SILENCE: std::time::Duration = std::time::Duration::from_millis(1500);

/// What marks a Python project.
const PYTHON_MARKERS: &[&str] = &["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"];

/// The language id of a file, from its extension.
pub fn language_of(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?;
    Some(match ext {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        "java" => "java",
        "rb" => "ruby",
        "lua" => "lua",
        "zig" => "zig",
        _ => return None,
    })
}

/// `program` as a path when it has a slash, else the first executable of
/// that name in `path`'s folders.
pub(crate) fn find_program(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_executable(&p).then_some(p);
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests;
