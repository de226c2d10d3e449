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
//! merge by name (user, project, `.mcp.json`, `--mcp`: later wins).

mod file;
mod mcp;
mod show;
pub(crate) mod trust;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;

pub(crate) use self::file::{ConfigFile, Settings};
pub(crate) use self::show::show;
use crate::setup::{Args, Failure};

/// Where an effective value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    Default,
    File {
        path: PathBuf,
        line: usize,
        profile: Option<String>,
    },
    Env(String),
    Flag,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File {
                path,
                line,
                profile: None,
            } => write!(f, "{}:{line}", path.display()),
            Source::File {
                path,
                line,
                profile: Some(name),
            } => write!(f, "profile `{name}`, {}:{line}", path.display()),
            Source::Env(var) => write!(f, "${var}"),
            Source::Flag => f.write_str("flag"),
        }
    }
}

/// Which arguments came from the command line or the environment.
#[derive(Debug, Default, Clone)]
pub(crate) struct Given {
    sources: BTreeMap<String, Source>,
}

impl Given {
    pub(crate) fn from_matches(matches: &clap::ArgMatches, command: &clap::Command) -> Given {
        let mut sources = BTreeMap::new();
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            let source = match matches.value_source(id) {
                Some(ValueSource::CommandLine) => Source::Flag,
                Some(ValueSource::EnvVariable) => Source::Env(
                    arg.get_env()
                        .map(|v| v.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                ),
                _ => continue,
            };
            sources.insert(id.to_owned(), source);
        }
        Given { sources }
    }

    pub(crate) fn has(&self, id: &str) -> bool {
        self.sources.contains_key(id)
    }
}

/// A permission rule and where it was written.
#[derive(Debug, Clone)]
pub(crate) struct RuleText {
    pub(crate) kind: RuleKind,
    pub(crate) rule: String,
    pub(crate) origin: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleKind {
    Allow,
    Ask,
    Deny,
}

impl RuleKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Ask => "ask",
            RuleKind::Deny => "deny",
        }
    }
}

/// The configuration in effect.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// The source of each key set by something other than the defaults.
    pub(crate) sources: BTreeMap<String, Source>,
    pub(crate) fallback_models: Vec<String>,
    pub(crate) api_key_env: Option<String>,
    pub(crate) images: Option<bool>,
    pub(crate) defer_tools_above: Option<f64>,
    pub(crate) reduce_output: Option<bool>,
    pub(crate) rules: Vec<RuleText>,
    pub(crate) hooks: Vec<crate::command_hooks::HookCommand>,
    /// MCP servers by name, in the `mcpServers` shape, with where each came
    /// from.
    pub(crate) mcp: Vec<(String, serde_json::Value, String)>,
    /// The files in effect, in order.
    pub(crate) files: Vec<PathBuf>,
    /// Project files left out because the folder is not trusted.
    pub(crate) untrusted: Vec<PathBuf>,
    pub(crate) paths: Paths,
    pub(crate) trusted: bool,
}

/// Where things are.
#[derive(Debug, Default, Clone)]
pub(crate) struct Paths {
    /// The user's zidane folder.
    pub(crate) user: Option<PathBuf>,
    /// The repository root (the nearest folder with `.git`, else the working
    /// folder).
    pub(crate) root: PathBuf,
    pub(crate) cwd: PathBuf,
}

impl Paths {
    pub(crate) fn new(cwd: &Path) -> Paths {
        Paths {
            user: user_dir(),
            root: project_root(cwd),
            cwd: cwd.to_owned(),
        }
    }

    pub(crate) fn user_config(&self) -> Option<PathBuf> {
        self.user.as_ref().map(|d| d.join("config.toml"))
    }

    pub(crate) fn project_config(&self) -> PathBuf {
        self.root.join(".zidane/config.toml")
    }
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// `$ZIDANE_HOME`, else `$XDG_CONFIG_HOME/zidane`, else `~/.config/zidane`.
pub(crate) fn user_dir() -> Option<PathBuf> {
    env_path("ZIDANE_HOME").or_else(|| {
        env_path("XDG_CONFIG_HOME")
            .or_else(|| env_path("HOME").map(|h| h.join(".config")))
            .map(|c| c.join("zidane"))
    })
}

/// The nearest folder from `cwd` up with a `.git`, else `cwd`.
pub(crate) fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_owned()
}

/// Reads the layers, asks about trust when `ask` and there is a terminal,
/// and fills every argument not given on the command line or in the
/// environment.
pub(crate) fn load(args: &mut Args, given: &Given, cwd: &Path, ask: bool) -> Result<Loaded, Failure> {
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
    let trusted = trust::decide(args, user.as_ref(), &paths, project.as_ref(), ask)?;
    let mut loaded = Loaded {
        paths: paths.clone(),
        trusted: trusted.trusted,
        untrusted: trusted.ignored,
        ..Default::default()
    };
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
    let project = project.filter(|_| loaded.trusted);
    let mut layers: Vec<(&ConfigFile, &Settings, Option<String>)> = Vec::new();
    for file in [user.as_ref(), project.as_ref()].into_iter().flatten() {
        layers.push((file, &file.settings, None));
        loaded.files.push(file.path.clone());
    }
    let profile = match &args.profile {
        Some(name) => Some(name.clone()),
        None => project
            .as_ref()
            .and_then(|p| p.settings.profile.clone())
            .or_else(|| user.as_ref().and_then(|u| u.settings.profile.clone())),
    };
    if let Some(name) = &profile {
        let mut found = false;
        for file in [user.as_ref(), project.as_ref()].into_iter().flatten() {
            if let Some(p) = file.settings.profiles.as_ref().and_then(|ps| ps.get(name)) {
                layers.push((file, p, Some(name.clone())));
                found = true;
            }
        }
        if !found {
            let known: Vec<String> = [user.as_ref(), project.as_ref()]
                .into_iter()
                .flatten()
                .flat_map(|f| f.settings.profiles.iter().flatten().map(|(n, _)| format!("`{n}`")))
                .collect();
            let known = if known.is_empty() {
                "none is defined".to_owned()
            } else {
                format!("defined: {}", known.join(", "))
            };
            return Err(Failure::usage(format!(
                "no profile `{name}` in the configuration ({known}; a profile is a [profiles.{name}] table)"
            )));
        }
    }
    let mut merged = Merged::default();
    for (file, settings, profile) in &layers {
        merged.add(file, settings, profile.as_deref(), &mut loaded)?;
    }
    merged.apply(args, given, &mut loaded);
    if let Some(source) = remembered {
        loaded.sources.entry("trust".into()).or_insert(source);
    }
    if loaded.trusted {
        claude_settings(&paths, &mut loaded)?;
    }
    mcp::collect(args, &layers, &paths, loaded.trusted, &mut loaded)?;
    for (kind, list) in [(RuleKind::Allow, &args.allow), (RuleKind::Deny, &args.deny)] {
        for rule in list {
            loaded.rules.push(RuleText {
                kind,
                rule: rule.clone(),
                origin: format!("--{}", kind.name()),
            });
        }
    }
    Ok(loaded)
}

/// The project's `.claude/settings.json` (and `settings.local.json`): its
/// `hooks` and `permissions`, in Claude Code's shapes; its other keys are
/// Claude Code's own and left alone.
fn claude_settings(paths: &Paths, loaded: &mut Loaded) -> Result<(), Failure> {
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
        let path = paths.root.join(".claude").join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let shown = path.display().to_string();
        let settings: ClaudeSettings =
            serde_json::from_str(&text).map_err(|e| Failure::usage(format!("{shown}:{}: {e}", e.line())))?;
        loaded.hooks.extend(
            crate::command_hooks::compile(&settings.hooks, &shown)
                .map_err(|(event, e)| Failure::usage(format!("{shown}: `hooks.{event}`: {e}")))?,
        );
        let p = settings.permissions;
        for (kind, list) in [
            (RuleKind::Deny, p.deny),
            (RuleKind::Ask, p.ask),
            (RuleKind::Allow, p.allow),
        ] {
            for rule in list {
                crate::permissions::Rule::parse(&rule, "")
                    .map_err(|e| Failure::usage(format!("{shown}: `permissions.{}`: {e}", kind.name())))?;
                loaded.rules.push(RuleText {
                    kind,
                    rule,
                    origin: shown.clone(),
                });
            }
        }
        loaded.files.push(path);
    }
    Ok(())
}

/// The scalar settings of every layer, the later over the earlier, each
/// with its source.
#[derive(Default)]
struct Merged {
    settings: Settings,
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
        settings: &Settings,
        profile: Option<&str>,
        loaded: &mut Loaded,
    ) -> Result<(), Failure> {
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
                retries,
                pass_env,
                skills,
                otlp,
                otlp_payloads,
                checkpoints,
                max_checkpoints,
            ]
        );
        if settings.trust.is_some() && profile.is_none() {
            self.sources.insert("trust", source("trust"));
        }
        if let Some(hooks) = &settings.hooks {
            let origin = file.path.display().to_string();
            let compiled = crate::command_hooks::compile(hooks, &origin)
                .map_err(|(event, e)| file.error(&format!("{prefix}hooks.{event}"), e))?;
            loaded.hooks.extend(compiled);
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
                    loaded.rules.push(RuleText {
                        kind,
                        rule: rule.clone(),
                        origin: format!("{}:{}", file.path.display(), file.line(&key)),
                    });
                }
            }
        }
        Ok(())
    }

    /// Fills what the command line and the environment left unset.
    fn apply(self, args: &mut Args, given: &Given, loaded: &mut Loaded) {
        let Merged {
            settings: s,
            mut sources,
        } = self;
        macro_rules! fill {
            ($($key:ident),* $(,)?) => {
                $(
                    if !given.has(stringify!($key)) && s.$key.is_some() {
                        args.$key = s.$key.clone();
                    } else {
                        sources.remove(stringify!($key));
                    }
                )*
            };
        }
        fill!(
            provider,
            model,
            base_url,
            system,
            max_tokens,
            max_turns,
            max_cost,
            sandbox,
            idle_timeout,
            retries,
            otlp,
            max_checkpoints
        );
        // A value set by a file, unless the flag `id` (or its variable) set it.
        let mut pick = |id: &str, key: &'static str, value: Option<bool>| -> Option<bool> {
            if given.has(id) || value.is_none() {
                sources.remove(key);
                return None;
            }
            value
        };
        if let Some(t) = pick("text_tool_calls", "text_tool_calls", s.text_tool_calls) {
            args.text_tool_calls = t;
        }
        if let Some(p) = pick("otlp_payloads", "otlp_payloads", s.otlp_payloads) {
            args.otlp_payloads = p;
        }
        if let Some(network) = pick("no_network", "network", s.network) {
            args.no_network = !network;
        }
        if let Some(on) = pick("no_checkpoints", "checkpoints", s.checkpoints) {
            args.no_checkpoints = !on;
        }
        if let Some(t) = pick("thinking", "thinking", s.thinking.map(|_| true)).and(s.thinking) {
            args.thinking = t;
        }
        if let Some(a) = pick("approve", "approve", s.approve.map(|_| true)).and(s.approve) {
            args.approve = a;
        }
        // Lists: the configured items, then the flags'.
        if let Some(list) = &s.pass_env {
            let mut all = list.clone();
            all.append(&mut args.pass_env);
            args.pass_env = all;
        }
        if let Some(list) = &s.skills {
            let mut all = list.clone();
            all.append(&mut args.skills);
            args.skills = all;
        }
        loaded.fallback_models = s.fallback_models.clone().unwrap_or_default();
        loaded.api_key_env = s.api_key_env.clone();
        loaded.images = s.images;
        loaded.defer_tools_above = s.defer_tools_above;
        loaded.reduce_output = s.reduce_output;
        loaded.sources = sources.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        for (id, source) in &given.sources {
            let key = match id.as_str() {
                "no_network" => "network",
                "no_checkpoints" => "checkpoints",
                other => other,
            };
            loaded.sources.insert(key.to_owned(), source.clone());
        }
    }
}
