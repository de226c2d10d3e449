//! Permission rules: `deny`, then `ask`, then `allow`, then the approval
//! mode's default. They are the program's interceptor, so a call the rules
//! settle never reaches a question, and a call they refuse tells the model
//! which rule refused it.
//!
//! A rule is a tool name (`web_fetch`, `mcp__github__*`) with an optional
//! specifier in parentheses:
//!
//! - `shell(cargo test:*)`: commands starting with `cargo test`;
//!   `shell(git status)`: that command exactly; `*` matches anything.
//! - `read_file(.env)`, `edit(**/*.rs)`, `write_file(src/**)`: paths in the
//!   working folder; a pattern without `/` matches file names at any depth.
//! - `web_fetch(domain:docs.rs)`: that host and its sub-domains.
//!
//! Claude Code's names work too (`Bash`, `Read`, `Write`, `Edit`,
//! `MultiEdit`, `Glob`, `Grep`, `WebFetch`); `edit` covers `multi_edit`.
//!
//! A command is split on `&&`, `||`, `;`, `|`, `&` and newlines, and every
//! part must be allowed; a command with `$(…)`, backticks, `<(…)`, `>(…)`
//! or a redirection to a file outside the working folder never matches an
//! allow rule. Deny and ask rules also look inside substitutions.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;
use zidane::agent::{ToolCall, ToolCallInterceptor, ToolCallVerdict};
use zidane::providers::BoxFuture;

use crate::modes::Approve;

/// A permission rule and where it was written.
#[derive(Debug, Clone)]
pub struct RuleText {
    /// What the rule does.
    pub kind: RuleKind,
    /// The rule as written (`shell(cargo test:*)`).
    pub rule: String,
    /// Where it was written.
    pub origin: String,
}

/// What a permission rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    /// Lets a call run without asking.
    Allow,
    /// Asks before a call.
    Ask,
    /// Refuses a call.
    Deny,
}

impl RuleKind {
    /// Its name in files (`allow`).
    pub fn name(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Ask => "ask",
            RuleKind::Deny => "deny",
        }
    }
}

/// One rule, compiled.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    text: String,
    origin: String,
    tools: Tools,
    spec: Option<Spec>,
}

#[derive(Debug, Clone)]
enum Tools {
    Names(Vec<String>),
    Glob(globset::GlobMatcher),
}

#[derive(Debug, Clone)]
enum Spec {
    Command(regex::Regex),
    Path(globset::GlobMatcher),
    Domain(String),
}

fn tool_names(name: &str) -> Vec<String> {
    let names: &[&str] = match name {
        "Bash" | "shell" => &["shell"],
        "Read" | "read_file" => &["read_file"],
        "Write" | "write_file" => &["write_file"],
        "Edit" | "edit" => &["edit", "multi_edit"],
        "MultiEdit" | "multi_edit" => &["multi_edit"],
        "Glob" => &["glob"],
        "Grep" => &["grep"],
        "WebFetch" => &["web_fetch"],
        other => return vec![other.to_owned()],
    };
    names.iter().map(|s| (*s).to_owned()).collect()
}

/// A command pattern: `prefix:*`, or a command where `*` matches anything.
fn command_pattern(spec: &str) -> Result<regex::Regex, String> {
    let (body, prefix) = match spec.strip_suffix(":*") {
        Some(body) => (body, true),
        None => (spec, false),
    };
    let words = normalize(body);
    if words.is_empty() {
        return Err("an empty command".into());
    }
    let mut re = String::from("^");
    for (i, piece) in words.split('*').enumerate() {
        if i > 0 {
            re.push_str(".*");
        }
        re.push_str(&regex::escape(piece));
    }
    if prefix {
        re.push_str(r"(\s.*)?");
    }
    re.push('$');
    regex::Regex::new(&re).map_err(|e| e.to_string())
}

fn path_pattern(spec: &str) -> Result<globset::GlobMatcher, String> {
    let spec = spec.strip_prefix("./").unwrap_or(spec);
    let pattern = if spec.contains('/') {
        spec.trim_start_matches('/').to_owned()
    } else {
        format!("**/{spec}")
    };
    globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.to_string())
}

impl Rule {
    /// Parses `text`; the error says what is wrong with it.
    pub(crate) fn parse(text: &str, origin: &str) -> Result<Rule, String> {
        let text = text.trim();
        let (tool, spec) = match text.split_once('(') {
            Some((tool, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| format!("`{text}`: the specifier must end with `)`"))?;
                (tool.trim(), Some(inner.trim()))
            }
            None => (text, None),
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*'))
        {
            return Err(format!(
                "`{text}` is not a rule: write a tool name, optionally with a specifier, e.g. `shell(cargo test:*)`"
            ));
        }
        let tools = if let Some(mcp) = tool.strip_prefix("mcp__") {
            // `mcp__server__tool`: the program names MCP tools `mcp_server_tool`.
            let glob = format!("mcp_{}", mcp.replace("__", "_"));
            Tools::Glob(
                globset::Glob::new(&glob)
                    .map_err(|e| format!("`{text}`: {e}"))?
                    .compile_matcher(),
            )
        } else if tool.contains('*') {
            Tools::Glob(
                globset::Glob::new(tool)
                    .map_err(|e| format!("`{text}`: {e}"))?
                    .compile_matcher(),
            )
        } else {
            Tools::Names(tool_names(tool))
        };
        let first = match &tools {
            Tools::Names(names) => names[0].as_str(),
            Tools::Glob(_) => "",
        };
        let spec = match spec {
            None => None,
            Some("") => return Err(format!("`{text}`: the specifier is empty")),
            Some(spec) => Some(match first {
                "shell" => Spec::Command(command_pattern(spec).map_err(|e| format!("`{text}`: {e}"))?),
                "web_fetch" => Spec::Domain(
                    spec.strip_prefix("domain:")
                        .ok_or_else(|| format!("`{text}`: web_fetch rules take `domain:HOST`"))?
                        .trim()
                        .to_ascii_lowercase(),
                ),
                _ => Spec::Path(path_pattern(spec).map_err(|e| format!("`{text}`: {e}"))?),
            }),
        };
        Ok(Rule {
            text: text.to_owned(),
            origin: origin.to_owned(),
            tools,
            spec,
        })
    }

    fn covers_tool(&self, name: &str) -> bool {
        match &self.tools {
            Tools::Names(names) => names.iter().any(|n| n == name),
            Tools::Glob(glob) => glob.is_match(name),
        }
    }

    fn matches_command_part(&self, part: &str) -> bool {
        match &self.spec {
            None => true,
            Some(Spec::Command(re)) => re.is_match(part),
            Some(_) => false,
        }
    }

    fn matches_path(&self, path: &str) -> bool {
        match &self.spec {
            None => true,
            Some(Spec::Path(glob)) => glob.is_match(path),
            Some(_) => false,
        }
    }

    fn matches_host(&self, host: &str) -> bool {
        match &self.spec {
            None => true,
            Some(Spec::Domain(domain)) => host == domain || host.ends_with(&format!(".{domain}")),
            Some(_) => false,
        }
    }

    fn named(&self) -> String {
        if self.origin.is_empty() {
            format!("`{}`", self.text)
        } else {
            format!("`{}` ({})", self.text, self.origin)
        }
    }
}

/// What a command is, for the rules.
struct Command {
    /// The simple commands, split on the shell's operators.
    parts: Vec<String>,
    /// Also the commands inside substitutions (for deny and ask).
    all_parts: Vec<String>,
    /// Never allowed by a rule (substitutions, writes outside the folder).
    opaque: bool,
}

fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Splits `command` on `&&`, `||`, `;`, `|`, `&` and newlines outside
/// quotes; notes substitutions and redirections to files outside `cwd`.
fn split_command(command: &str, cwd: &Path) -> Command {
    let mut parts = Vec::new();
    let mut inner = Vec::new();
    let mut opaque = false;
    let mut current = String::new();
    let chars: Vec<char> = command.chars().collect();
    let mut i = 0;
    let (mut single, mut double) = (false, false);
    let push = |current: &mut String, parts: &mut Vec<String>| {
        let part = normalize(current);
        if !part.is_empty() {
            parts.push(part);
        }
        current.clear();
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if single {
            if c == '\'' {
                single = false;
            }
            current.push(c);
            i += 1;
            continue;
        }
        match c {
            '\\' => {
                current.push(c);
                if let Some(n) = next {
                    current.push(n);
                }
                i += 2;
                continue;
            }
            '\'' if !double => single = true,
            '"' => double = !double,
            '$' if next == Some('(') => {
                opaque = true;
                let (body, end) = balanced(&chars, i + 2);
                inner.push(body);
                current.extend(&chars[i..end]);
                i = end;
                continue;
            }
            '`' => {
                opaque = true;
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '`')
                    .map_or(chars.len(), |p| i + 1 + p);
                inner.push(chars[i + 1..end].iter().collect());
                current.extend(&chars[i..(end + 1).min(chars.len())]);
                i = end + 1;
                continue;
            }
            '<' | '>' if next == Some('(') && !double => {
                opaque = true;
                let (body, end) = balanced(&chars, i + 2);
                inner.push(body);
                i = end;
                continue;
            }
            '>' if !double => {
                let (end, outside) = redirection(&chars, i, cwd);
                opaque |= outside;
                current.extend(&chars[i..end]);
                i = end;
                continue;
            }
            ';' | '\n' if !double => {
                push(&mut current, &mut parts);
                i += 1;
                continue;
            }
            '&' | '|' if !double => {
                push(&mut current, &mut parts);
                i += if next == Some(c) { 2 } else { 1 };
                continue;
            }
            _ => {}
        }
        current.push(c);
        i += 1;
    }
    push(&mut current, &mut parts);
    let mut all_parts = parts.clone();
    for body in inner {
        all_parts.extend(split_command(&body, cwd).all_parts);
    }
    Command {
        parts,
        all_parts,
        opaque,
    }
}

/// The redirection at `i` (`>`, `>>`, `>|`, `&>`): the index after it,
/// and whether its target leaves the folder (`2>&1` names a descriptor,
/// not a file).
fn redirection(chars: &[char], i: usize, cwd: &Path) -> (usize, bool) {
    let mut j = i + 1;
    if matches!(chars.get(j), Some('>') | Some('|')) {
        j += 1;
    }
    if chars.get(j) == Some(&'&') {
        return (j + 1, false);
    }
    while chars.get(j).is_some_and(|c| c.is_whitespace()) {
        j += 1;
    }
    let start = j;
    while chars
        .get(j)
        .is_some_and(|c| !c.is_whitespace() && !matches!(c, ';' | '&' | '|'))
    {
        j += 1;
    }
    let target: String = chars[start..j].iter().collect();
    (j, !inside(&target, cwd))
}

/// The text up to the `)` that closes an opening at `start - 1`, and the
/// index after it.
fn balanced(chars: &[char], start: usize) -> (String, usize) {
    let mut depth = 1;
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return (chars[start..i].iter().collect(), i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    (chars[start..].iter().collect(), chars.len())
}

/// Whether a redirection target stays inside `cwd` (or is `/dev/null`).
fn inside(target: &str, cwd: &Path) -> bool {
    let target = target.trim_matches(['"', '\'']);
    if target.is_empty() || target == "/dev/null" || target.starts_with('$') || target.starts_with('~') {
        return target == "/dev/null";
    }
    let path = lexical(&cwd.join(target));
    path.starts_with(lexical(cwd))
}

/// `path` with `.` and `..` resolved without touching the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// A tool's path argument relative to `cwd` (`/`-separated), as rules see
/// it; a path outside the folder stays absolute.
fn relative_path(input: &Value, cwd: &Path) -> Option<String> {
    let raw = input
        .get("path")
        .or_else(|| input.get("file_path"))
        .and_then(Value::as_str)?;
    let full = lexical(&cwd.join(raw));
    let shown = match full.strip_prefix(lexical(cwd)) {
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => full.to_string_lossy().into_owned(),
    };
    Some(shown.replace('\\', "/"))
}

fn host_of(input: &Value) -> Option<String> {
    let url = input.get("url").and_then(Value::as_str)?;
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = if host.starts_with('[') {
        host.split(']').next().map(|h| format!("{h}]"))?
    } else {
        host.split(':').next()?.to_owned()
    };
    Some(host.to_ascii_lowercase())
}

/// The hosts on private addresses `web_fetch` may reach: those an allow
/// rule names with `web_fetch(domain:HOST)` (no deny rule refusing them).
pub(crate) fn private_hosts(rules: &[RuleText]) -> zidane::tools::HostFilter {
    let compiled = |kind: RuleKind| -> Vec<Rule> {
        rules
            .iter()
            .filter(|r| r.kind == kind)
            .filter_map(|r| Rule::parse(&r.rule, &r.origin).ok())
            .filter(|r| r.covers_tool("web_fetch") && matches!(r.spec, Some(Spec::Domain(_))))
            .collect()
    };
    let (allow, deny) = (compiled(RuleKind::Allow), compiled(RuleKind::Deny));
    std::sync::Arc::new(move |host: &str| {
        allow.iter().any(|r| r.matches_host(host)) && !deny.iter().any(|r| r.matches_host(host))
    })
}

/// The program's interceptor: the rules, then the approval mode.
pub(crate) struct Permissions {
    allow: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
    /// Shared with the interactive session's `/approve`.
    mode: std::sync::Arc<parking_lot::Mutex<Approve>>,
    cwd: PathBuf,
    /// What `PreToolUse` hooks allowed.
    hooks: Option<std::sync::Arc<crate::command_hooks::CommandHooks>>,
    /// Rules allowed for the run going on (a custom command's
    /// `allowed-tools`).
    run_allow: parking_lot::Mutex<Vec<Rule>>,
}

fn is_write(name: &str) -> bool {
    matches!(name, "write_file" | "edit" | "multi_edit")
}

impl Permissions {
    pub(crate) fn new(rules: &[RuleText], mode: Approve, cwd: &Path) -> Result<Permissions, String> {
        let mut out = Permissions {
            allow: Vec::new(),
            ask: Vec::new(),
            deny: Vec::new(),
            mode: std::sync::Arc::new(parking_lot::Mutex::new(mode)),
            cwd: cwd.to_owned(),
            hooks: None,
            run_allow: parking_lot::Mutex::default(),
        };
        for rule in rules {
            let compiled = Rule::parse(&rule.rule, &rule.origin)?;
            match rule.kind {
                RuleKind::Allow => out.allow.push(compiled),
                RuleKind::Ask => out.ask.push(compiled),
                RuleKind::Deny => out.deny.push(compiled),
            }
        }
        Ok(out)
    }

    /// With the `PreToolUse` hooks whose allow these rules honour.
    pub(crate) fn with_hooks(mut self, hooks: std::sync::Arc<crate::command_hooks::CommandHooks>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// With the approval mode shared with the interactive session's
    /// `/approve`.
    pub(crate) fn with_mode(mut self, mode: std::sync::Arc<parking_lot::Mutex<Approve>>) -> Self {
        self.mode = mode;
        self
    }

    /// Allows `rules` for the next run only (until [`Self::end_run`]).
    pub(crate) fn allow_for_run(&self, rules: &[String], origin: &str) -> Result<(), String> {
        let compiled = rules
            .iter()
            .map(|r| Rule::parse(r, origin))
            .collect::<Result<Vec<_>, _>>()?;
        *self.run_allow.lock() = compiled;
        Ok(())
    }

    /// Drops the rules allowed for the run that ended.
    pub(crate) fn end_run(&self) {
        self.run_allow.lock().clear();
    }

    /// What the approval mode says when no rule does.
    fn default_asks(&self, name: &str) -> bool {
        let mode = *self.mode.lock();
        match mode {
            Approve::Yolo => false,
            // Files change only inside the working folder (the tools refuse
            // anything else), so `auto-edit` lets those through.
            Approve::AutoEdit => name == "shell" || name.starts_with("mcp_") || name == "web_fetch",
            Approve::Ask => name == "shell" || name.starts_with("mcp_") || name == "web_fetch" || is_write(name),
        }
    }

    /// The verdict on `call`.
    pub(crate) fn decide(&self, call: &ToolCall) -> ToolCallVerdict {
        let name = call.name.as_str();
        let command = (name == "shell").then(|| {
            let text = call.input.get("command").and_then(Value::as_str).unwrap_or_default();
            split_command(text, &self.cwd)
        });
        let path = relative_path(&call.input, &self.cwd);
        let host = host_of(&call.input);
        // Whether `rule` matches the call; for commands, `any` part or all.
        let hit = |rule: &Rule, any: bool| -> bool {
            if !rule.covers_tool(name) {
                return false;
            }
            if rule.spec.is_none() {
                return true;
            }
            match (&command, &path, &host) {
                (Some(cmd), _, _) if any => cmd.all_parts.iter().any(|p| rule.matches_command_part(p)),
                (Some(_), _, _) => false,
                (None, Some(path), _) => rule.matches_path(path),
                (None, None, Some(host)) => rule.matches_host(host),
                _ => false,
            }
        };
        if let Some(rule) = self.deny.iter().find(|r| hit(r, true)) {
            return ToolCallVerdict::Deny {
                reason: format!("denied by the permission rule {}", rule.named()),
            };
        }
        // A `PreToolUse` hook's allow settles what the deny rules leave.
        if self.hooks.as_ref().is_some_and(|h| h.take_allowed(&call.call_id)) {
            return ToolCallVerdict::Allow;
        }
        if let Some(rule) = self.ask.iter().find(|r| hit(r, true)) {
            return ToolCallVerdict::Ask {
                reason: Some(format!("the permission rule {} asks", rule.named())),
            };
        }
        let allowed = match &command {
            Some(cmd) => {
                !cmd.opaque
                    && !cmd.parts.is_empty()
                    && cmd.parts.iter().all(|part| {
                        let run = self.run_allow.lock();
                        self.allow
                            .iter()
                            .chain(run.iter())
                            .any(|r| r.covers_tool(name) && r.matches_command_part(part))
                    })
            }
            None => self
                .allow
                .iter()
                .chain(self.run_allow.lock().iter())
                .any(|r| hit(r, false)),
        };
        if allowed || !self.default_asks(name) {
            ToolCallVerdict::Allow
        } else {
            ToolCallVerdict::Ask { reason: None }
        }
    }
}

impl ToolCallInterceptor for Permissions {
    fn intercept<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, ToolCallVerdict> {
        let verdict = self.decide(call);
        Box::pin(async move { verdict })
    }
}

#[cfg(test)]
mod tests;
