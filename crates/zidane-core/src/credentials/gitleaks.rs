//! gitleaks' rule file, applied as gitleaks applies it to one line: a rule
//! whose keywords the line holds runs its expression; each match's secret
//! (the capture group the rule names, else the first non-empty one) must
//! pass the rule's entropy floor and neither the global nor the rule's
//! allow lists. Rules bound to a file path, and allow lists of paths or
//! commits, have nothing to match here.

use std::sync::OnceLock;

use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;

#[derive(Deserialize)]
struct FileDef {
    allowlist: Option<AllowDef>,
    #[serde(default)]
    rules: Vec<RuleDef>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleDef {
    id: String,
    regex: Option<String>,
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    secret_group: Option<usize>,
    path: Option<String>,
    #[serde(default)]
    skip_report: bool,
    #[serde(default)]
    allowlists: Vec<AllowDef>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AllowDef {
    condition: Option<String>,
    regex_target: Option<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    commits: Vec<String>,
}

/// What an allow list's expressions are matched against.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

struct Allow {
    /// Every check must hold (`condition = "AND"`), else any.
    all: bool,
    target: Target,
    /// The list's expressions joined into one.
    regexes: Option<Regex>,
    /// Lower-case.
    stopwords: Vec<String>,
    /// It also names paths or commits, which never match here.
    elsewhere: bool,
}

impl Allow {
    fn new(def: AllowDef) -> Result<Allow, String> {
        let regexes = if def.regexes.is_empty() {
            None
        } else {
            let joined = def
                .regexes
                .iter()
                .map(|r| format!("(?:{r})"))
                .collect::<Vec<_>>()
                .join("|");
            Some(compile(&joined).map_err(|e| e.to_string())?)
        };
        Ok(Allow {
            all: def.condition.as_deref().is_some_and(|c| c.eq_ignore_ascii_case("and")),
            target: match def.regex_target.as_deref() {
                Some("match") => Target::Match,
                Some("line") => Target::Line,
                _ => Target::Secret,
            },
            regexes,
            stopwords: def.stopwords.iter().map(|s| s.to_lowercase()).collect(),
            elsewhere: !def.paths.is_empty() || !def.commits.is_empty(),
        })
    }

    fn allows(&self, secret: &str, matched: &str, line: &str) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line,
        };
        let regex = !target.is_empty() && self.regexes.as_ref().is_some_and(|r| r.is_match(target.as_bytes()));
        let lower = secret.to_lowercase();
        let stopword = !secret.is_empty() && self.stopwords.iter().any(|w| lower.contains(w.as_str()));
        if self.all {
            !self.elsewhere
                && (self.regexes.is_none() || regex)
                && (self.stopwords.is_empty() || stopword)
                && (self.regexes.is_some() || !self.stopwords.is_empty())
        } else {
            regex || stopword
        }
    }
}

struct Rule {
    id: String,
    source: String,
    /// Compiled on the first line that holds a keyword.
    regex: OnceLock<Option<Regex>>,
    entropy: f64,
    /// Lower-case; empty: every line.
    keywords: Vec<String>,
    secret_group: usize,
    allows: Vec<Allow>,
}

impl Rule {
    fn regex(&self) -> Option<&Regex> {
        self.regex.get_or_init(|| compile(&self.source).ok()).as_ref()
    }
}

/// The rules of one gitleaks configuration file.
pub(super) struct Rules {
    rules: Vec<Rule>,
    global: Vec<Allow>,
}

impl Rules {
    /// Reads a gitleaks configuration (TOML).
    pub(super) fn parse(text: &str) -> Result<Rules, String> {
        let file: FileDef = toml::from_str(text).map_err(|e| e.to_string())?;
        let global = file.allowlist.map(Allow::new).transpose()?.into_iter().collect();
        let mut rules = Vec::new();
        for def in file.rules {
            // A rule bound to a file path, or reported only as part of
            // another, has nothing to say about one variable.
            let (Some(source), None, false) = (def.regex, &def.path, def.skip_report) else {
                continue;
            };
            rules.push(Rule {
                id: def.id,
                source,
                regex: OnceLock::new(),
                entropy: def.entropy.unwrap_or(0.0),
                keywords: def.keywords.iter().map(|k| k.to_lowercase()).collect(),
                secret_group: def.secret_group.unwrap_or(0),
                allows: def.allowlists.into_iter().map(Allow::new).collect::<Result<_, _>>()?,
            });
        }
        Ok(Rules { rules, global })
    }

    /// The id of the first rule that finds a secret in `line`.
    pub(super) fn finding(&self, line: &str) -> Option<&str> {
        let lower = line.to_lowercase();
        self.rules
            .iter()
            .filter(|r| r.keywords.is_empty() || r.keywords.iter().any(|k| lower.contains(k.as_str())))
            .find(|r| self.finds(r, line))
            .map(|r| r.id.as_str())
    }

    /// Whether any rule finds a secret in `line`.
    pub(super) fn matches(&self, line: &str) -> bool {
        self.finding(line).is_some()
    }

    fn finds(&self, rule: &Rule, line: &str) -> bool {
        let Some(regex) = rule.regex() else {
            return false;
        };
        regex.find_iter(line.as_bytes()).any(|m| {
            let matched = trim_newlines(m.as_bytes());
            let secret = String::from_utf8_lossy(secret_of(regex, matched, rule.secret_group));
            let matched = String::from_utf8_lossy(matched);
            if rule.entropy != 0.0 && shannon_entropy(&secret) <= rule.entropy {
                return false;
            }
            !self.global.iter().any(|a| a.allows(&secret, &matched, line))
                && !rule.allows.iter().any(|a| a.allows(&secret, &matched, line))
        })
    }
}

fn trim_newlines(mut bytes: &[u8]) -> &[u8] {
    while let [b'\n', rest @ ..] = bytes {
        bytes = rest;
    }
    while let [rest @ .., b'\n'] = bytes {
        bytes = rest;
    }
    bytes
}

/// The secret in a match: the rule's group, else the first non-empty one,
/// else the whole match.
fn secret_of<'a>(regex: &Regex, matched: &'a [u8], group: usize) -> &'a [u8] {
    let Some(captures) = regex.captures(matched) else {
        return matched;
    };
    if captures.len() < 2 {
        return matched;
    }
    if group > 0 {
        return captures.get(group).map_or(matched, |g| g.as_bytes());
    }
    captures
        .iter()
        .skip(1)
        .flatten()
        .map(|g| g.as_bytes())
        .find(|s| !s.is_empty())
        .unwrap_or(matched)
}

/// A gitleaks expression compiled as Go compiles it: `\\w`, `\\s` and `\\d`
/// are ASCII classes there, and matching is over bytes.
fn compile(source: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(&go_syntax(source)).unicode(false).build()
}

/// A Go (RE2) expression in the `regex` crate's syntax: Go takes a `{`
/// that starts no repetition (`${VAR}`) as itself, `regex` wants it
/// escaped.
fn go_syntax(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len() + 8);
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.get(i + 1) {
                    out.push(*next);
                }
                i += 2;
                continue;
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` first in a class is itself.
                if chars.get(i + 1) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i + 1) == Some(&']') {
                    out.push(']');
                    i += 1;
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '{' if !in_class => {
                let rest: String = chars[i..].iter().collect();
                match repetition_len(&rest) {
                    Some(len) => {
                        out.push_str(&rest[..len]);
                        i += rest[..len].chars().count();
                        continue;
                    }
                    None => out.push_str("\\{"),
                }
            }
            '}' if !in_class => out.push_str("\\}"),
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// The length of `{n}`, `{n,}` or `{n,m}` at the start of `s`.
fn repetition_len(s: &str) -> Option<usize> {
    let end = s.find('}')?;
    let inner = &s[1..end];
    let (low, high) = inner.split_once(',').unwrap_or((inner, "0"));
    let digits = |d: &str| d.chars().all(|c| c.is_ascii_digit());
    (!low.is_empty() && digits(low) && digits(high)).then_some(end + 1)
}

/// Shannon entropy in bits per byte, as gitleaks computes it.
fn shannon_entropy(s: &str) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0usize; 256];
    for b in s.bytes() {
        counts[usize::from(b)] += 1;
    }
    let len = s.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / len;
            -p * p.log2()
        })
        .sum()
}

/// Each rule's id and why its expression does not compile, if it does not.
#[cfg(test)]
pub(super) fn compile_all(rules: &Rules) -> Vec<(&str, Option<String>)> {
    rules
        .rules
        .iter()
        .map(|r| (r.id.as_str(), compile(&r.source).err().map(|e| e.to_string())))
        .collect()
}
