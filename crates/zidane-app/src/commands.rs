//! Custom commands: Markdown prompt templates run as `/NAME args`.
//!
//! They live in the project's `.zidane/commands/` and `.claude/commands/`
//! (once the folder is trusted) and the user's `commands/` folder (and
//! `~/.claude/commands/`); the first folder with a name wins. A file in a
//! sub-folder is `/sub:name`. Optional front matter: `description`,
//! `argument-hint`, `model`, `allowed-tools` (permission rules allowed for
//! the run). In the text, `$ARGUMENTS` is everything after the name, and
//! `$1` … `$9` the words (quotes group words).

use std::path::{Path, PathBuf};

use crate::Error;
use crate::paths::Paths;

/// One command file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CustomCommand {
    /// Its name (`sub:name` for a file in a sub-folder).
    pub name: String,
    /// Its file.
    pub path: PathBuf,
    /// What it does (front matter).
    pub description: Option<String>,
    /// What its arguments are (front matter).
    pub argument_hint: Option<String>,
    /// The model it runs on (front matter).
    pub model: Option<String>,
    /// Permission rules allowed while it runs (front matter).
    pub allowed_tools: Vec<String>,
    /// The prompt template.
    pub body: String,
}

/// Where commands are looked for, first wins.
pub fn folders(paths: &Paths, trusted: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if trusted {
        out.push(paths.root.join(".zidane/commands"));
        out.push(paths.root.join(".claude/commands"));
    }
    if let Some(user) = &paths.user {
        out.push(user.join("commands"));
    }
    if std::env::var_os("ZIDANE_HOME").is_none()
        && let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty())
    {
        out.push(PathBuf::from(home).join(".claude/commands"));
    }
    out
}

/// Every command in `folders` (the first of each name), sorted by name,
/// and the files that could not be read.
pub fn list(folders: &[PathBuf]) -> (Vec<CustomCommand>, Vec<String>) {
    let mut found: Vec<CustomCommand> = Vec::new();
    let mut problems = Vec::new();
    for folder in folders {
        let mut files = Vec::new();
        collect(folder, folder, &mut files);
        files.sort();
        for (name, path) in files {
            if found.iter().any(|c| c.name == name) {
                continue;
            }
            match load(&name, &path) {
                Ok(command) => found.push(command),
                Err(e) => problems.push(format!("{}: {e}", path.display())),
            }
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    (found, problems)
}

fn collect(base: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(base, &path, out);
        } else if path.extension().is_some_and(|e| e == "md")
            && let Ok(rel) = path.with_extension("").strip_prefix(base).map(Path::to_owned)
        {
            let name: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push((name.join(":"), path));
        }
    }
}

fn load(name: &str, path: &Path) -> Result<CustomCommand, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut command = CustomCommand {
        name: name.to_owned(),
        path: path.to_owned(),
        ..Default::default()
    };
    let body = match text.strip_prefix("---\n").and_then(|rest| rest.split_once("\n---")) {
        Some((front, body)) => {
            front_matter(front, &mut command)?;
            body.strip_prefix('\n').unwrap_or(body)
        }
        None => text.as_str(),
    };
    command.body = body.to_owned();
    Ok(command)
}

fn front_matter(front: &str, command: &mut CustomCommand) -> Result<(), String> {
    use yaml_rust2::Yaml;
    let docs = yaml_rust2::YamlLoader::load_from_str(front).map_err(|e| format!("front matter: {e}"))?;
    let Some(Yaml::Hash(map)) = docs.first() else {
        return Ok(());
    };
    let text = |key: &str| match map.get(&Yaml::String(key.to_owned())) {
        Some(Yaml::String(s)) => Some(s.clone()),
        Some(Yaml::Integer(n)) => Some(n.to_string()),
        _ => None,
    };
    command.description = text("description");
    command.argument_hint = text("argument-hint");
    command.model = text("model");
    command.allowed_tools = match map.get(&Yaml::String("allowed-tools".into())) {
        Some(Yaml::String(s)) => split_rules(s),
        Some(Yaml::Array(items)) => items.iter().filter_map(|i| i.as_str().map(str::to_owned)).collect(),
        None => Vec::new(),
        Some(_) => return Err("`allowed-tools` is a list of rules".into()),
    };
    for rule in &command.allowed_tools {
        crate::permissions::Rule::parse(rule, "").map_err(|e| format!("allowed-tools: {e}"))?;
    }
    Ok(())
}

/// `Bash(git add:*), Read`: rules split on commas outside parentheses.
fn split_rules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(current.trim().to_owned());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current.trim().to_owned());
    out.retain(|r| !r.is_empty());
    out
}

/// The words of `args`, with quotes grouping.
fn words(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                    any = false;
                }
            }
            (None, c) => current.push(c),
        }
    }
    if any || !current.is_empty() {
        out.push(current);
    }
    out
}

impl CustomCommand {
    /// The prompt for `args`.
    pub fn expand(&self, args: &str) -> String {
        let words = words(args);
        let mut out = self.body.replace("$ARGUMENTS", args.trim());
        for i in (1..=9).rev() {
            out = out.replace(&format!("${i}"), words.get(i - 1).map_or("", String::as_str));
        }
        if !self.body.contains("$ARGUMENTS") && !self.body.contains("$1") && !args.trim().is_empty() {
            out = format!("{}\n\n{}", out.trim_end(), args.trim());
        }
        out
    }
}

/// `/name rest…` as a command's name and arguments, when `prompt` has that
/// shape (a path like `/usr/bin …` does not).
pub fn invocation(prompt: &str) -> Option<(&str, &str)> {
    let rest = prompt.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '.'));
    valid.then_some((name, args))
}

/// The command `name` from `folders`, or an error listing those there are.
pub fn find(folders: &[PathBuf], name: &str) -> Result<CustomCommand, Error> {
    let (commands, problems) = list(folders);
    if let Some(command) = commands.iter().find(|c| c.name == name) {
        return Ok(command.clone());
    }
    if let Some(problem) = problems.iter().find(|p| p.contains(&format!("{name}.md"))) {
        return Err(Error::usage(format!("the command `/{name}` cannot be used: {problem}")));
    }
    let known: Vec<String> = commands.iter().map(|c| format!("/{}", c.name)).collect();
    let known = if known.is_empty() {
        "there are none".to_owned()
    } else {
        format!("there are {}", known.join(", "))
    };
    Err(Error::usage(format!(
        "no command `/{name}` ({known}; a command is a Markdown file such as .zidane/commands/{name}.md)"
    )))
}

#[cfg(test)]
mod tests;
