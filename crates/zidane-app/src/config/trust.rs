//! Trust: a project's files that can run programs (its `.zidane/config.toml`,
//! `.mcp.json`, custom commands) take effect only in a folder the person has
//! trusted. `AGENTS.md` and skills are text and need no trust.

use std::path::{Path, PathBuf};

use super::{Asking, ConfigFile};
use crate::Error;
use crate::paths::Paths;

/// The answer for this folder.
pub(crate) struct Trust {
    pub(crate) trusted: bool,
    /// The project's files left out.
    pub(crate) ignored: Vec<PathBuf>,
}

/// The trust question, for a front end to put to the person.
#[derive(Debug, Clone)]
pub struct TrustQuestion {
    /// The folder (the repository's root).
    pub root: PathBuf,
    /// Each project file that can run programs, with what it would add.
    pub files: Vec<(String, String)>,
}

impl TrustQuestion {
    /// The question as a text ending in the prompt for an answer.
    pub fn text(&self) -> String {
        format!("\n{}Trust this folder and use them? [y]es / [n]o: ", self.message())
    }

    /// The folder and its files, without the prompt (for a form).
    pub fn message(&self) -> String {
        let mut text = format!(
            "This folder ({}) has files that can run programs on your behalf:\n",
            self.root.display()
        );
        for (name, what) in &self.files {
            text.push_str(&format!("  {name}: {what}\n"));
        }
        text
    }
}

/// What a person answered, read from a line of text.
pub struct TrustAnswer;

impl TrustAnswer {
    /// `y` or `yes` (any case) trusts; anything else does not.
    pub fn parse(line: &str) -> bool {
        matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
    }
}

/// The project's files that would take effect once trusted.
pub fn project_files(paths: &Paths) -> Vec<PathBuf> {
    [
        paths.project_config(),
        paths.root.join(".mcp.json"),
        paths.root.join(".claude/settings.json"),
        paths.root.join(".claude/settings.local.json"),
        paths.root.join(".zidane/commands"),
        paths.root.join(".claude/commands"),
    ]
    .into_iter()
    .filter(|p| p.exists())
    .collect()
}

/// Whether this folder is trusted: `--trust`, the user's `trust = true`,
/// a remembered answer, or (when `asking` reaches a person) the person's
/// answer, remembered in the user's configuration.
pub(crate) fn decide(
    flag: bool,
    user: Option<&ConfigFile>,
    paths: &Paths,
    project: Option<&ConfigFile>,
    asking: Asking<'_>,
    notes: &mut Vec<String>,
) -> Result<Trust, Error> {
    let files = project_files(paths);
    let trusted = |yes: bool| Trust {
        trusted: yes,
        ignored: if yes { Vec::new() } else { files.clone() },
    };
    if flag || user.and_then(|u| u.settings.trust) == Some(true) {
        return Ok(trusted(true));
    }
    let key = paths.root.display().to_string();
    let asks = matches!(asking, Asking::Through(_));
    if let Some(answer) = user
        .and_then(|u| u.settings.projects.as_ref())
        .and_then(|p| p.get(&key))
        .and_then(|p| p.trust)
    {
        if !answer && asks && !files.is_empty() {
            notes.push(ignored_note(paths, &files, true));
        }
        return Ok(trusted(answer));
    }
    if files.is_empty() {
        return Ok(trusted(false));
    }
    let Asking::Through(ask) = asking else {
        return Ok(trusted(false));
    };
    let question = TrustQuestion {
        root: paths.root.clone(),
        files: files
            .iter()
            .map(|file| (relative(paths, file), describe_file(paths, file, project)))
            .collect(),
    };
    let Some(answer) = ask(&question) else {
        notes.push(ignored_note(paths, &files, false));
        return Ok(trusted(false));
    };
    match paths.user_config() {
        Some(config) => {
            if let Err(e) = remember(&config, &paths.root, answer) {
                notes.push(format!("could not remember the answer in {}: {e}", config.display()));
            }
        }
        None => notes.push("no user configuration folder to remember the answer in".to_owned()),
    }
    Ok(trusted(answer))
}

fn relative(paths: &Paths, file: &Path) -> String {
    file.strip_prefix(&paths.root).unwrap_or(file).display().to_string()
}

fn ignored_note(paths: &Paths, files: &[PathBuf], answered: bool) -> String {
    let names: Vec<String> = files.iter().map(|f| relative(paths, f)).collect();
    let why = if answered {
        "you chose not to trust this folder; `--trust` accepts them for one run"
    } else {
        "the folder is not trusted; answer the question on a terminal, or pass --trust"
    };
    format!("ignoring {} in {} ({why})", names.join(", "), paths.root.display())
}

/// What a project file would add.
fn describe_file(paths: &Paths, file: &Path, project: Option<&ConfigFile>) -> String {
    let name = relative(paths, file);
    if Some(file) == project.map(|p| p.path.as_path()) {
        project.map(describe_config).unwrap_or_default()
    } else if name == ".mcp.json" {
        describe_mcp_json(file)
    } else if name.ends_with(".json") {
        "Claude Code settings: hooks and permission rules".to_owned()
    } else {
        let count = std::fs::read_dir(file).map(|d| d.count()).unwrap_or(0);
        format!("{count} custom command file(s)")
    }
}

fn describe_config(file: &ConfigFile) -> String {
    let keys: Vec<&str> = file
        .lines
        .keys()
        .filter(|k| !k.contains('.') && *k != "mcp_servers")
        .map(String::as_str)
        .collect();
    let mut out = if keys.is_empty() {
        String::new()
    } else {
        format!("sets {}", keys.join(", "))
    };
    for (name, server) in file.settings.mcp_servers.iter().flatten() {
        let runs = server
            .get("command")
            .and_then(|c| c.as_str())
            .or_else(|| server.get("url").and_then(|u| u.as_str()))
            .unwrap_or_default();
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(&format!("MCP server `{name}`: {runs}"));
    }
    out
}

fn describe_mcp_json(file: &Path) -> String {
    let Ok(text) = std::fs::read_to_string(file) else {
        return "unreadable".into();
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
        return "not valid JSON".into();
    };
    let servers: Vec<String> = value["mcpServers"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, s)| {
            let runs = s["command"]
                .as_str()
                .map(|c| {
                    let args: Vec<&str> = s["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|a| a.as_str())
                        .collect();
                    format!("{c} {}", args.join(" ")).trim_end().to_owned()
                })
                .or_else(|| s["url"].as_str().map(str::to_owned))
                .unwrap_or_default();
            format!("`{name}` ({runs})")
        })
        .collect();
    format!("MCP servers {}", servers.join(", "))
}

/// Writes `[projects."ROOT"] trust = ANSWER` into the user's file, keeping
/// the rest of it as it is.
pub fn remember(config: &Path, root: &Path, answer: bool) -> std::io::Result<()> {
    edit(config, |doc| {
        let projects = doc
            .entry("projects")
            .or_insert_with(|| {
                let mut t = toml_edit::Table::new();
                t.set_implicit(true);
                toml_edit::Item::Table(t)
            })
            .as_table_mut()
            .ok_or_else(|| std::io::Error::other("`projects` is not a table"))?;
        let key = root.display().to_string();
        let entry = projects
            .entry(&key)
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
            .as_table_mut()
            .ok_or_else(|| std::io::Error::other(format!("`projects.{key}` is not a table")))?;
        entry["trust"] = toml_edit::value(answer);
        Ok(())
    })
}

/// Changes a TOML file in place (comments and order kept), creating it and
/// its folder when missing; the new text replaces the old at once.
pub fn edit(
    path: &Path,
    change: impl FnOnce(&mut toml_edit::DocumentMut) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
    change(&mut doc)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, doc.to_string())?;
    std::fs::rename(&tmp, path)
}
