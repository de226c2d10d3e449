//! One configuration file: where it is, its keys (checked before anything
//! runs), and the line each key is on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use zidane::providers::ProviderKind;

use crate::Error;
use crate::settings::{Approve, SandboxFlag, Thinking};

/// The keys of a configuration file (and of a `[profiles.NAME]` table).
///
/// Every key a flag sets has the flag's name with `_` for `-`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileSettings {
    pub(crate) provider: Option<ProviderKind>,
    pub(crate) model: Option<String>,
    /// Models tried after `model`, in order, when it fails.
    pub(crate) fallback_models: Option<Vec<String>>,
    pub(crate) base_url: Option<String>,
    /// The environment variable holding the provider's key.
    pub(crate) api_key_env: Option<String>,
    pub(crate) system: Option<String>,
    /// `false`: command output reaches the model as it is (no reduction of
    /// passing tests, progress lines, long listings).
    pub(crate) reduce_output: Option<bool>,
    /// Tool calls described in the prompt and read from the text.
    pub(crate) text_tool_calls: Option<bool>,
    /// Whether the model takes images (default: yes, except on
    /// openai-compatible servers).
    pub(crate) images: Option<bool>,
    pub(crate) thinking: Option<Thinking>,
    #[serde(default, deserialize_with = "positive_u32")]
    pub(crate) max_tokens: Option<u32>,
    #[serde(default, deserialize_with = "positive_u32")]
    pub(crate) context_window: Option<u32>,
    /// The share of the window the tools' schemas may take before the
    /// least used are offered through `tool_search` (default 0.1).
    #[serde(default, deserialize_with = "share")]
    pub(crate) defer_tools_above: Option<f64>,
    #[serde(default, deserialize_with = "positive_u32")]
    pub(crate) max_turns: Option<u32>,
    #[serde(default, deserialize_with = "positive_usd")]
    pub(crate) max_cost: Option<f64>,
    pub(crate) approve: Option<Approve>,
    pub(crate) sandbox: Option<SandboxFlag>,
    /// `false`: commands may not open network connections.
    pub(crate) network: Option<bool>,
    #[serde(default, deserialize_with = "positive_u64")]
    pub(crate) idle_timeout: Option<u64>,
    #[serde(default, deserialize_with = "positive_u64")]
    pub(crate) lsp_wait: Option<u64>,
    #[serde(default, deserialize_with = "positive_u32")]
    pub(crate) retries: Option<u32>,
    pub(crate) pass_env: Option<Vec<String>>,
    /// Withheld paths (credential stores, `.env` files) commands may read.
    pub(crate) sandbox_read: Option<Vec<PathBuf>>,
    pub(crate) skills: Option<Vec<PathBuf>>,
    pub(crate) otlp: Option<String>,
    pub(crate) otlp_payloads: Option<bool>,
    /// `false`: no folder checkpoints.
    pub(crate) checkpoints: Option<bool>,
    #[serde(default, deserialize_with = "positive_u32")]
    pub(crate) max_checkpoints: Option<u32>,
    /// Trust every project folder (the user's file only).
    pub(crate) trust: Option<bool>,
    /// The profile used when `--profile` is not given.
    pub(crate) profile: Option<String>,
    /// `off`: the terminal session sends no notification when a turn ends
    /// or a question waits while the terminal is not focused.
    pub(crate) notifications: Option<crate::settings::Notifications>,
    /// The terminal session's colours: `auto` (asked of the terminal),
    /// `dark` or `light`.
    pub(crate) theme: Option<crate::settings::Theme>,
    /// `{ command = "…", timeout_ms = … }`: a command whose first line of
    /// output is the terminal session's status line.
    pub(crate) status_line: Option<crate::settings::StatusLine>,
    /// MCP servers by name, in the `mcpServers` JSON shape.
    pub(crate) mcp_servers: Option<toml::Table>,
    /// Language servers by name (`[lsp.NAME]`): a known one changed, or a
    /// new one.
    pub(crate) lsp: Option<BTreeMap<String, LspTable>>,
    pub(crate) permissions: Option<PermissionTable>,
    /// Command hooks by event (`PreToolUse`, …).
    pub(crate) hooks: Option<BTreeMap<String, Vec<crate::command_hooks::HookEntry>>>,
    pub(crate) profiles: Option<BTreeMap<String, FileSettings>>,
    /// Folders the person answered the trust question for (the user's file
    /// only), by path.
    pub(crate) projects: Option<BTreeMap<String, Project>>,
}

/// `[lsp.NAME]`: a language server.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LspTable {
    pub(crate) command: Option<String>,
    pub(crate) args: Option<Vec<String>>,
    pub(crate) languages: Option<Vec<String>>,
    pub(crate) root_markers: Option<Vec<String>>,
    pub(crate) enabled: Option<bool>,
}

/// `[permissions]`: rules like `shell(cargo test:*)`, `edit(src/**)`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PermissionTable {
    #[serde(default)]
    pub(crate) allow: Vec<String>,
    #[serde(default)]
    pub(crate) ask: Vec<String>,
    #[serde(default)]
    pub(crate) deny: Vec<String>,
}

/// `[projects."/path"]` in the user's file.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Project {
    pub(crate) trust: Option<bool>,
}

fn positive_u32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let n = i64::deserialize(d)?;
    match u32::try_from(n) {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(serde::de::Error::custom(format!("{n} is not a positive whole number"))),
    }
}

fn positive_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let n = i64::deserialize(d)?;
    match u64::try_from(n) {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(serde::de::Error::custom(format!("{n} is not a positive whole number"))),
    }
}

fn share<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = match toml::Value::deserialize(d)? {
        toml::Value::Integer(n) => n as f64,
        toml::Value::Float(f) => f,
        other => {
            return Err(serde::de::Error::custom(format!(
                "{other} is not a share (a number from 0 to 1)"
            )));
        }
    };
    if (0.0..=1.0).contains(&v) {
        Ok(Some(v))
    } else {
        Err(serde::de::Error::custom(format!(
            "{v} is not a share (a number from 0 to 1)"
        )))
    }
}

fn positive_usd<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = match toml::Value::deserialize(d)? {
        toml::Value::Integer(n) => n as f64,
        toml::Value::Float(f) => f,
        other => {
            return Err(serde::de::Error::custom(format!(
                "{other} is not an amount of dollars (a number)"
            )));
        }
    };
    if v.is_finite() && v > 0.0 {
        Ok(Some(v))
    } else {
        Err(serde::de::Error::custom(format!(
            "{v} is not a positive amount of dollars"
        )))
    }
}

/// A configuration file read and checked.
#[derive(Debug, Clone)]
pub(crate) struct ConfigFile {
    pub(crate) path: PathBuf,
    pub(crate) settings: FileSettings,
    /// The line of each key (`model`, `permissions.allow`,
    /// `profiles.fast.model`, `mcp_servers.github`).
    pub(crate) lines: BTreeMap<String, usize>,
}

impl ConfigFile {
    /// Reads `path`; `None` when there is no such file. A key the program
    /// does not know, or a value of the wrong kind, is an error naming the
    /// file, the line and the key.
    pub(crate) fn read(path: &Path) -> Result<Option<ConfigFile>, Error> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::usage(format!("cannot read {}: {e}", path.display()))),
        };
        Self::parse(path, &text).map(Some)
    }

    pub(crate) fn parse(path: &Path, text: &str) -> Result<ConfigFile, Error> {
        let mut lines = BTreeMap::new();
        if let Ok(table) = toml::de::DeTable::parse(text) {
            key_lines(text, "", table.get_ref(), &mut lines);
        }
        let settings: FileSettings = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
            // The key on the failing line, when the message does not name it.
            let key = lines
                .iter()
                .filter(|(_, line)| **line == at.0)
                .map(|(key, _)| key.as_str())
                .max_by_key(|k| k.len())
                .filter(|k| {
                    !e.message()
                        .contains(&format!("`{}`", k.rsplit('.').next().unwrap_or(k)))
                })
                .map(|k| format!("`{k}`: "))
                .unwrap_or_default();
            Error::usage(format!(
                "{}:{}:{}: {key}{}",
                path.display(),
                at.0,
                at.1,
                e.message().trim_end()
            ))
        })?;
        let file = ConfigFile {
            path: path.to_owned(),
            settings,
            lines,
        };
        file.check_profiles()?;
        Ok(file)
    }

    /// The line of `key`, or of the nearest table holding it.
    pub(crate) fn line(&self, key: &str) -> usize {
        let mut key = key;
        loop {
            if let Some(line) = self.lines.get(key) {
                return *line;
            }
            match key.rsplit_once('.') {
                Some((parent, _)) => key = parent,
                None => return 1,
            }
        }
    }

    /// An error about `key` in this file.
    pub(crate) fn error(&self, key: &str, message: impl std::fmt::Display) -> Error {
        Error::usage(format!(
            "{}:{}: `{key}`: {message}",
            self.path.display(),
            self.line(key)
        ))
    }

    /// Profiles hold settings, not other profiles, trust or remembered
    /// folders.
    fn check_profiles(&self) -> Result<(), Error> {
        for (name, profile) in self.settings.profiles.iter().flatten() {
            for (key, present) in [
                ("profiles", profile.profiles.is_some()),
                ("projects", profile.projects.is_some()),
                ("profile", profile.profile.is_some()),
                ("trust", profile.trust.is_some()),
            ] {
                if present {
                    let at = format!("profiles.{name}.{key}");
                    return Err(self.error(&at, "a profile cannot set this key"));
                }
            }
        }
        Ok(())
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn key_lines(text: &str, prefix: &str, table: &toml::de::DeTable<'_>, out: &mut BTreeMap<String, usize>) {
    for (key, value) in table {
        let name = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        out.insert(name.clone(), line_col(text, key.span().start).0);
        if let toml::de::DeValue::Table(inner) = value.get_ref() {
            key_lines(text, &name, inner, out);
        }
    }
}

#[cfg(test)]
mod tests;
