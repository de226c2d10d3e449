//! The layered configuration. Later wins:
//!
//! 1. built-in defaults;
//! 2. the user's `config.toml` (`$ZIDANE_HOME/config.toml`, else
//!    `$XDG_CONFIG_HOME/zidane/config.toml` or `~/.config/zidane/config.toml`);
//! 3. the project's `.zidane/config.toml` (at the repository root), once
//!    the folder is trusted;
//! 4. the profile (`--profile`, else the `profile` key): `[profiles.NAME]`
//!    of the user's file, then of the project's;
//! 5. environment variables (`ZIDANE_MODEL`, `ZIDANE_APPROVE`, …);
//! 6. flags.
//!
//! Lists a flag also sets (`pass_env`, `skills`) add the flag's items to the
//! configured ones; permission rules add up across every layer; MCP servers
//! merge by name (user, project, `.mcp.json`, `--mcp`: later wins), and so
//! do language servers (`[lsp.NAME]`, over the known ones, key by key).

mod file;
mod lsp;
mod mcp;
mod show;
pub mod trust;

use std::collections::BTreeMap;
use std::path::Path;

pub(crate) use self::file::ConfigFile;
use self::file::FileSettings;
pub use self::mcp::expand_text;
pub use self::show::show;
pub use self::trust::{TrustAnswer, TrustQuestion};
use crate::Error;
use crate::paths::Paths;
pub use crate::permissions::{RuleKind, RuleText};
pub use crate::settings::Source;
use crate::settings::{Flags, Given, Settings};

/// How the trust question is put, when a folder's project files would
/// need it.
pub enum Asking<'a> {
    /// Not at all: a listing or a report, not a run (the files stay out).
    Never,
    /// Through the front end, which answers `None` when there is no one to
    /// ask (no terminal): the files stay out, and a note says how to
    /// trust the folder.
    Through(&'a (dyn Fn(&TrustQuestion) -> Option<bool> + Sync)),
}

/// Reads the layers, decides trust (asking through `asking` when a folder
/// has project files and no answer yet), and resolves `flags` over them.
pub fn load(flags: &Flags, given: &Given, cwd: &Path, asking: Asking<'_>) -> Result<Settings, Error> {
    let paths = Paths::new(cwd);
    let user = match paths.user_config() {
        Some(path) => ConfigFile::read(&path)?,
        None => None,
    };
    let project_path = paths.project_config();
    // A user's file is never a project's too (a home folder with `.git`).
    let project = if Some(&project_path) == paths.user_config().as_ref() {
        None
    } else {
        ConfigFile::read(&project_path)?
    };
    let mut notes = Vec::new();
    let trusted = trust::decide(flags.trust, user.as_ref(), &paths, project.as_ref(), asking, &mut notes)?;
    // Where the trust answer comes from, for `zidane config`.
    let remembered = format!("projects.{}", paths.root.display());
    let remembered = user
        .as_ref()
        .filter(|u| u.lines.contains_key(&remembered))
        .map(|u| Source::File {
            path: u.path.clone(),
            line: u.line(&remembered),
            profile: None,
        });
    if let Some(project) = &project
        && project.settings.trust.is_some()
    {
        return Err(project.error(
            "trust",
            "a project cannot trust itself; set it in the user's configuration or pass --trust",
        ));
    }
    let project = project.filter(|_| trusted.trusted);
    let mut layers: Vec<(&ConfigFile, &FileSettings, Option<String>)> = Vec::new();
    for file in [user.as_ref(), project.as_ref()].into_iter().flatten() {
        layers.push((file, &file.settings, None));
    }
    let profile = flags.profile.clone().or_else(|| {
        project
            .as_ref()
            .and_then(|p| p.settings.profile.clone())
            .or_else(|| user.as_ref().and_then(|u| u.settings.profile.clone()))
    });
    if let Some(name) = &profile {
        profile_layers(name, [user.as_ref(), project.as_ref()], &mut layers)?;
    }
    let mut merged = Merged::default();
    let mut extra = Extra::default();
    for (file, settings, profile) in &layers {
        merged.add(file, settings, profile.as_deref(), &mut extra)?;
    }
    let mut settings = merged.resolve(flags, given);
    settings.cwd = cwd.to_owned();
    settings.files = [user.as_ref(), project.as_ref()]
        .into_iter()
        .flatten()
        .map(|f| f.path.clone())
        .collect();
    settings.trusted = trusted.trusted;
    settings.untrusted = trusted.ignored;
    settings.notes = notes;
    settings.rules = extra.rules;
    settings.hooks = extra.hooks;
    if let Some(source) = remembered {
        settings.sources.entry("trust".into()).or_insert(source);
    }
    settings.paths = paths;
    if settings.trusted {
        claude_settings(&mut settings)?;
    }
    mcp::collect(flags.mcp.as_deref(), &layers, &mut settings)?;
    settings.lsp = lsp::collect(&layers)?;
    for (kind, list) in [(RuleKind::Allow, &flags.allow), (RuleKind::Deny, &flags.deny)] {
        for rule in list {
            settings.rules.push(RuleText {
                kind,
                rule: rule.clone(),
                origin: format!("--{}", kind.name()),
            });
        }
    }
    Ok(settings)
}

/// Adds the `[profiles.NAME]` tables of the user's and the project's files
/// as layers; a profile named but defined nowhere is an error listing the
/// defined ones.
fn profile_layers<'a>(
    name: &str,
    files: [Option<&'a ConfigFile>; 2],
    layers: &mut Vec<(&'a ConfigFile, &'a FileSettings, Option<String>)>,
) -> Result<(), Error> {
    let mut found = false;
    for file in files.into_iter().flatten() {
        if let Some(p) = file.settings.profiles.as_ref().and_then(|ps| ps.get(name)) {
            layers.push((file, p, Some(name.to_owned())));
            found = true;
        }
    }
    if found {
        return Ok(());
    }
    let known: Vec<String> = files
        .into_iter()
        .flatten()
        .flat_map(|f| f.settings.profiles.iter().flatten().map(|(n, _)| format!("`{n}`")))
        .collect();
    let known = if known.is_empty() {
        "none is defined".to_owned()
    } else {
        format!("defined: {}", known.join(", "))
    };
    Err(Error::usage(format!(
        "no profile `{name}` in the configuration ({known}; a profile is a [profiles.{name}] table)"
    )))
}

/// The project's `.claude/settings.json` (and `settings.local.json`): its
/// `hooks` and `permissions`, in Claude Code's shapes; its other keys are
/// Claude Code's own and left alone.
fn claude_settings(settings: &mut Settings) -> Result<(), Error> {
    #[derive(serde::Deserialize, Default)]
    struct ClaudeSettings {
        #[serde(default)]
        hooks: BTreeMap<String, Vec<crate::command_hooks::HookEntry>>,
        #[serde(default)]
        permissions: ClaudePermissions,
    }
    #[derive(serde::Deserialize, Default)]
    struct ClaudePermissions {
        #[serde(default)]
        allow: Vec<String>,
        #[serde(default)]
        ask: Vec<String>,
        #[serde(default)]
        deny: Vec<String>,
    }
    for name in ["settings.json", "settings.local.json"] {
        let path = settings.paths.root.join(".claude").join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let shown = path.display().to_string();
        let claude: ClaudeSettings =
            serde_json::from_str(&text).map_err(|e| Error::usage(format!("{shown}:{}: {e}", e.line())))?;
        settings.hooks.extend(
            crate::command_hooks::compile(&claude.hooks, &shown)
                .map_err(|(event, e)| Error::usage(format!("{shown}: `hooks.{event}`: {e}")))?,
        );
        let p = claude.permissions;
        for (kind, list) in [
            (RuleKind::Deny, p.deny),
            (RuleKind::Ask, p.ask),
            (RuleKind::Allow, p.allow),
        ] {
            for rule in list {
                crate::permissions::Rule::parse(&rule, "")
                    .map_err(|e| Error::usage(format!("{shown}: `permissions.{}`: {e}", kind.name())))?;
                settings.rules.push(RuleText {
                    kind,
                    rule,
                    origin: shown.clone(),
                });
            }
        }
        settings.files.push(path);
    }
    Ok(())
}

/// What the layers add up beside their scalar values: permission rules and
/// command hooks.
#[derive(Default)]
struct Extra {
    rules: Vec<RuleText>,
    hooks: Vec<crate::command_hooks::HookCommand>,
}

/// The scalar settings of every layer, the later over the earlier, each
/// with its source.
#[derive(Default)]
struct Merged {
    settings: FileSettings,
    sources: BTreeMap<&'static str, Source>,
}

macro_rules! later_wins {
    ($self:ident, $settings:ident, $source:ident, [$($key:ident),* $(,)?]) => {
        $(
            if let Some(v) = &$settings.$key {
                $self.settings.$key = Some(v.clone());
                $self.sources.insert(stringify!($key), $source(stringify!($key)));
            }
        )*
    };
}

impl Merged {
    fn add(
        &mut self,
        file: &ConfigFile,
        settings: &FileSettings,
        profile: Option<&str>,
        extra: &mut Extra,
    ) -> Result<(), Error> {
        let prefix = profile.map(|p| format!("profiles.{p}.")).unwrap_or_default();
        let source = |key: &str| Source::File {
            path: file.path.clone(),
            line: file.line(&format!("{prefix}{key}")),
            profile: profile.map(str::to_owned),
        };
        later_wins!(
            self,
            settings,
            source,
            [
                provider,
                model,
                fallback_models,
                base_url,
                api_key_env,
                system,
                images,
                defer_tools_above,
                text_tool_calls,
                reduce_output,
                thinking,
                max_tokens,
                context_window,
                max_turns,
                max_cost,
                approve,
                sandbox,
                network,
                idle_timeout,
                lsp_wait,
                retries,
                pass_env,
                sandbox_read,
                skills,
                otlp,
                otlp_payloads,
                checkpoints,
                max_checkpoints,
                notifications,
                theme,
                status_line,
            ]
        );
        if settings.trust.is_some() && profile.is_none() {
            self.sources.insert("trust", source("trust"));
        }
        if let Some(hooks) = &settings.hooks {
            let origin = file.path.display().to_string();
            let compiled = crate::command_hooks::compile(hooks, &origin)
                .map_err(|(event, e)| file.error(&format!("{prefix}hooks.{event}"), e))?;
            extra.hooks.extend(compiled);
        }
        if let Some(table) = &settings.permissions {
            for (kind, list) in [
                (RuleKind::Deny, &table.deny),
                (RuleKind::Ask, &table.ask),
                (RuleKind::Allow, &table.allow),
            ] {
                let key = format!("{prefix}permissions.{}", kind.name());
                for rule in list {
                    if let Err(e) = crate::permissions::Rule::parse(rule, "") {
                        return Err(file.error(&key, e));
                    }
                    extra.rules.push(RuleText {
                        kind,
                        rule: rule.clone(),
                        origin: format!("{}:{}", file.path.display(), file.line(&key)),
                    });
                }
            }
        }
        Ok(())
    }

    /// The settings: a flag (or its variable) over the files, the files
    /// over the defaults.
    fn resolve(self, flags: &Flags, given: &Given) -> Settings {
        let Merged {
            settings: s,
            mut sources,
        } = self;
        // A value of the files, unless the flag `id` (or its variable) set
        // it; the source of `key` goes with the value that won.
        let mut pick = |id: &str, key: &'static str, set: bool| -> bool {
            if given.has(id) || !set {
                sources.remove(key);
                return false;
            }
            true
        };
        macro_rules! value {
            ($key:ident) => {
                if pick(stringify!($key), stringify!($key), s.$key.is_some()) {
                    s.$key.clone()
                } else {
                    flags.$key.clone()
                }
            };
        }
        let mut out = Settings {
            provider: value!(provider),
            model: value!(model),
            base_url: value!(base_url),
            system: value!(system),
            max_tokens: value!(max_tokens),
            context_window: value!(context_window),
            max_turns: value!(max_turns),
            max_cost: value!(max_cost),
            sandbox: value!(sandbox),
            idle_timeout: value!(idle_timeout),
            lsp_wait: value!(lsp_wait),
            retries: value!(retries),
            otlp: value!(otlp),
            max_checkpoints: value!(max_checkpoints),
            thinking: value!(thinking).unwrap_or_default(),
            approve: value!(approve).unwrap_or_default(),
            ..Default::default()
        };
        out.text_tool_calls = match s.text_tool_calls {
            Some(t) if pick("text_tool_calls", "text_tool_calls", true) => t,
            _ => flags.text_tool_calls,
        };
        out.otlp_payloads = match s.otlp_payloads {
            Some(p) if pick("otlp_payloads", "otlp_payloads", true) => p,
            _ => flags.otlp_payloads,
        };
        out.network = match s.network {
            Some(n) if pick("no_network", "network", true) => n,
            _ => !flags.no_network,
        };
        out.checkpoints = match s.checkpoints {
            Some(on) if pick("no_checkpoints", "checkpoints", true) => on,
            _ => !flags.no_checkpoints,
        };
        // Lists: the configured items, then the flags'.
        out.pass_env = s.pass_env.clone().unwrap_or_default();
        out.pass_env.extend(flags.pass_env.iter().cloned());
        out.sandbox_read = s.sandbox_read.clone().unwrap_or_default();
        out.sandbox_read.extend(flags.sandbox_read.iter().cloned());
        out.sandbox_read = out.sandbox_read.iter().map(|p| crate::paths::expand_home(p)).collect();
        out.skills = s.skills.clone().unwrap_or_default();
        out.skills.extend(flags.skills.iter().cloned());
        out.fallback_models = s.fallback_models.clone().unwrap_or_default();
        out.api_key_env = s.api_key_env.clone();
        out.images = s.images;
        out.defer_tools_above = s.defer_tools_above.unwrap_or(crate::deferred::DEFAULT_SHARE);
        out.reduce_output = s.reduce_output.unwrap_or(true);
        out.notifications = s.notifications.unwrap_or_default();
        out.theme = s.theme.unwrap_or_default();
        out.status_line = s.status_line.clone();
        out.store = flags.store.clone();
        out.session = flags.session.clone();
        out.resume = flags.resume;
        out.plan = flags.plan;
        out.goal = flags.goal.clone().map(|condition| {
            crate::conversation::goal_of(
                condition,
                flags.goal_check.clone(),
                flags.goal_max_checks,
                flags.goal_evaluate,
            )
        });
        out.attach_images = flags.images.clone();
        out.sources = sources.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        for (id, source) in &given.sources {
            let key = match id.as_str() {
                "no_network" => "network",
                "no_checkpoints" => "checkpoints",
                other => other,
            };
            out.sources.insert(key.to_owned(), source.clone());
        }
        out
    }
}
