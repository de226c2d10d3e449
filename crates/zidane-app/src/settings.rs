//! The program's settings, in two steps (as ripgrep's `LowArgs` and
//! `HiArgs`): [`Flags`] are a run's options as the command line and the
//! environment gave them; [`Settings`] are what is in effect once the
//! configuration files are layered under them ([`crate::config::load`]).
//! The rest of the program reads `Settings` only.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::parser::ValueSource;
use zidane::providers::ProviderKind;

use crate::command_hooks::HookCommand;
pub use crate::modes::{Approve, SandboxFlag, Thinking};
use crate::paths::Paths;
use crate::permissions::RuleText;

/// `--provider`: one of the provider kinds.
fn provider_kind(text: &str) -> Result<ProviderKind, String> {
    text.parse().map_err(|e: zidane::providers::ChoiceError| e.to_string())
}

/// `--max-cost`: a positive, finite number of dollars.
fn positive_usd(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err(format!("`{text}` is not a positive amount of dollars")),
        Err(_) => Err(format!("`{text}` is not a number")),
    }
}

/// `--session`: a name with something in it.
fn session_name(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("a session id cannot be empty".into());
    }
    Ok(text.to_owned())
}

/// Where an effective value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in default.
    Default,
    /// A configuration file's line (of a profile's table, when named).
    File {
        /// The file.
        path: PathBuf,
        /// The line of the key.
        line: usize,
        /// The profile whose table set it.
        profile: Option<String>,
    },
    /// An environment variable.
    Env(String),
    /// A flag.
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

/// A run's options, as the command line and the environment give them
/// (nothing filled in yet: no defaults, no configuration).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Flags {
    /// The provider (default: the first with a key among ANTHROPIC_API_KEY,
    /// OPENAI_API_KEY, OPENROUTER_API_KEY): anthropic, openai,
    /// openai-responses, openrouter, openai-compatible.
    #[arg(long, env = "ZIDANE_PROVIDER", value_parser = provider_kind, help_heading = "Model")]
    pub provider: Option<ProviderKind>,
    /// The model id.
    #[arg(long, env = "ZIDANE_MODEL", help_heading = "Model")]
    pub model: Option<String>,
    /// Another API root: `http://host:port` for Anthropic-compatible
    /// servers, `http://host:port/v1` for OpenAI-compatible ones (Ollama,
    /// vLLM, llama.cpp, LM Studio, gateways).
    #[arg(long, help_heading = "Model")]
    pub base_url: Option<String>,
    /// Extended thinking: off, minimal, low, medium, high.
    #[arg(long, value_enum, help_heading = "Model")]
    pub thinking: Option<Thinking>,
    /// Text appended to the system prompt.
    #[arg(long, help_heading = "Model")]
    pub system: Option<String>,
    /// The model's context window in tokens (default: what the server says,
    /// else a built-in table, else 32768 for a compatible server).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(256..), help_heading = "Model")]
    pub context_window: Option<u32>,
    /// Output token limit of each model request, in every wire format
    /// (default 8192).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = "Model")]
    pub max_tokens: Option<u32>,
    /// Describe the tools in the prompt and read the model's calls from its
    /// text (`<tool_call>` tags or a bare `{"name", "arguments"}` object),
    /// for servers that do not parse tool calls. Without it an
    /// openai-compatible server switches to this when it fails to parse a
    /// call.
    #[arg(long, help_heading = "Model")]
    pub text_tool_calls: bool,
    /// Give up on a model that sends nothing for this many seconds (default
    /// 120, 600 for a server on this machine or a private network).
    #[arg(long, env = "ZIDANE_IDLE_TIMEOUT", value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Model")]
    pub idle_timeout: Option<u64>,
    /// Wait this many seconds at most for a language server's diagnostics
    /// after an edit (default 4; its other answers get at least 10).
    #[arg(long, env = "ZIDANE_LSP_WAIT", value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Session")]
    pub lsp_wait: Option<u64>,
    /// Attempts per model request before giving up (default 4 for errors the
    /// provider reports, 8 for dropped connections). Waits between attempts
    /// add up to at most 3 minutes.
    #[arg(long, env = "ZIDANE_RETRIES", value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = "Model")]
    pub retries: Option<u32>,

    /// Most assistant turns.
    #[arg(long, help_heading = "Limits")]
    pub max_turns: Option<u32>,
    /// Spend cap in USD (a positive, finite amount).
    #[arg(long, value_parser = positive_usd, help_heading = "Limits")]
    pub max_cost: Option<f64>,

    /// Run in (or create) this session.
    #[arg(long, value_parser = session_name, help_heading = "Session")]
    pub session: Option<String>,
    /// Continue the session (`--session`, else the most recent one): a run
    /// that was interrupted (a crash, `kill -9`, Ctrl-C) is continued first,
    /// then the prompt, if one is given, runs. On a terminal the session
    /// opens interactively.
    #[arg(long, short = 'c', visible_alias = "continue", help_heading = "Session")]
    pub resume: bool,
    /// Plan first: the model investigates with read-only tools and proposes
    /// a plan; nothing is written or run until you approve it (on a
    /// terminal; without one, continue with `--resume`).
    #[arg(long, help_heading = "Session")]
    pub plan: bool,
    /// Keep working until CONDITION holds: when the model ends its answer,
    /// a check runs (`--goal-check`, else the model judges), and while it
    /// fails the run goes on with its reason, within the goal's budget.
    /// With no prompt, the condition is the prompt.
    #[arg(long, value_name = "CONDITION", help_heading = "Goal")]
    pub goal: Option<String>,
    /// The goal's check: a shell command, met when it exits 0 (its output's
    /// end is what the model reads when it fails).
    #[arg(long, value_name = "COMMAND", requires = "goal", help_heading = "Goal")]
    pub goal_check: Option<String>,
    /// Checks the goal may take before it stops unmet (default 10).
    #[arg(long, value_name = "N", requires = "goal", value_parser = clap::value_parser!(u32).range(1..), help_heading = "Goal")]
    pub goal_max_checks: Option<u32>,
    /// With `--goal-check`: when the command passes, the model judges the
    /// condition too.
    #[arg(long, requires = "goal_check", help_heading = "Goal")]
    pub goal_evaluate: bool,
    /// Attach an image (PNG, JPEG, GIF, WebP) to the prompt (repeatable);
    /// `@path.png` in the prompt does the same.
    #[arg(long = "image", value_name = "PATH", help_heading = "Session")]
    pub images: Vec<PathBuf>,
    /// The sessions file (default: $ZIDANE_HOME/sessions.db, else the user's
    /// data folder).
    #[arg(long, help_heading = "Session")]
    pub store: Option<PathBuf>,
    /// The working folder (default: the current one).
    #[arg(long, help_heading = "Session")]
    pub cwd: Option<PathBuf>,
    /// Take no folder checkpoints for this run.
    #[arg(long, help_heading = "Session")]
    pub no_checkpoints: bool,
    /// Checkpoints kept per session (the oldest are dropped past it, with a
    /// note; default 100).
    #[arg(long, env = "ZIDANE_MAX_CHECKPOINTS", value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = "Session")]
    pub max_checkpoints: Option<u32>,

    /// What the program asks you before doing: `ask` (before commands, MCP
    /// tools and file writes; the default), `auto-edit` (file writes in the
    /// working folder go through; commands and MCP tools ask), `yolo`
    /// (nothing asks). Without a terminal, a call that would ask is refused.
    #[arg(long, value_enum, env = "ZIDANE_APPROVE", help_heading = "Tools and safety")]
    pub approve: Option<Approve>,
    /// A permission rule allowing calls for this run, e.g.
    /// `shell(cargo test:*)`, `edit(src/**)` (repeatable).
    #[arg(long, value_name = "RULE", help_heading = "Tools and safety")]
    pub allow: Vec<String>,
    /// A permission rule refusing calls for this run, e.g. `shell(rm:*)`,
    /// `read_file(.env)` (repeatable).
    #[arg(long, value_name = "RULE", help_heading = "Tools and safety")]
    pub deny: Vec<String>,
    /// How commands are confined (Linux, Landlock): `workspace-write`
    /// (writes only in the working folder and the temporary folder),
    /// `read-only` (no writes), `off`. Without the flag the program uses
    /// `workspace-write` where the machine can enforce it.
    #[arg(long, value_enum, value_name = "MODE", help_heading = "Tools and safety")]
    pub sandbox: Option<SandboxFlag>,
    /// With a sandbox: commands may not open network connections.
    #[arg(long, help_heading = "Tools and safety")]
    pub no_network: bool,
    /// Let commands see this secret-looking environment variable (repeatable).
    /// Provider keys and variables named `*_API_KEY`, `*_TOKEN`, `*_SECRET` or
    /// `*PASSWORD*` are removed from every command's environment otherwise.
    #[arg(long = "pass-env", value_name = "NAME", help_heading = "Tools and safety")]
    pub pass_env: Vec<String>,
    /// Let commands read this credential store or file the sandbox
    /// withholds (`~/.aws`, `~/.kube/config`, a `.env`; repeatable).
    /// Confined commands cannot read the home folder's credential stores,
    /// `.env` files near the project or the sessions file otherwise.
    #[arg(long = "sandbox-read", value_name = "PATH", help_heading = "Tools and safety")]
    pub sandbox_read: Vec<PathBuf>,
    /// MCP servers to use, in the common `{"mcpServers": {...}}` JSON shape
    /// (stdio servers by `command`; HTTP ones by `url`, `"type": "sse"` for
    /// the legacy HTTP + SSE transport). An HTTP server that wants an OAuth
    /// login: `zidane --mcp FILE mcp login SERVER`.
    #[arg(long, help_heading = "Tools and safety")]
    pub mcp: Option<PathBuf>,
    /// A folder of skills (`<dir>/<skill>/SKILL.md`), before the project's
    /// `.zidane/skills` and the user's; repeatable.
    #[arg(long = "skills", value_name = "DIR", help_heading = "Tools and safety")]
    pub skills: Vec<PathBuf>,

    /// Use the settings of `[profiles.NAME]` of the configuration files.
    #[arg(long, env = "ZIDANE_PROFILE", value_name = "NAME", help_heading = "Configuration")]
    pub profile: Option<String>,
    /// Use this folder's project files (`.zidane/config.toml`, `.mcp.json`,
    /// custom commands) without asking whether it is trusted.
    #[arg(long, help_heading = "Configuration")]
    pub trust: bool,
    /// Send traces of the run (OpenTelemetry GenAI spans, OTLP/HTTP JSON) to
    /// this collector, e.g. `http://localhost:4318`. Without the flag the
    /// standard `OTEL_EXPORTER_OTLP_ENDPOINT` /
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` are read.
    #[arg(long, value_name = "URL", help_heading = "Configuration")]
    pub otlp: Option<String>,
    /// With traces: attach prompts, tool arguments and results and the
    /// model's text to the spans (off by default: they may hold secrets).
    #[arg(long, help_heading = "Configuration")]
    pub otlp_payloads: bool,
}

macro_rules! later_flags {
    ($self:ident, $later:ident, $given:ident, values [$($value:ident),* $(,)?], lists [$($list:ident),* $(,)?], switches [$($switch:ident),* $(,)?]) => {
        $( if $given.on_command_line(stringify!($value)) { $self.$value = $later.$value; } )*
        $( $self.$list.extend($later.$list); )*
        $( $self.$switch |= $later.$switch; )*
    };
}

impl Flags {
    /// These flags with `later`'s (given after a sub-command's name) over
    /// them: a value given later on the command line wins (a variable's
    /// value is the same at both levels), lists add up, switches add up.
    pub fn merged(mut self, later: Flags, later_given: &Given) -> Flags {
        later_flags!(
            self,
            later,
            later_given,
            values [
                provider, model, base_url, thinking, system, context_window, max_tokens, idle_timeout, lsp_wait,
                retries, max_turns, max_cost, session, store, cwd, max_checkpoints, approve, sandbox, mcp, profile, otlp,
                goal, goal_check, goal_max_checks,
            ],
            lists [images, allow, deny, pass_env, sandbox_read, skills],
            switches [text_tool_calls, resume, plan, no_checkpoints, no_network, trust, otlp_payloads, goal_evaluate]
        );
        self
    }
}

/// Which flags came from the command line or the environment (by their
/// argument id, which is the field's name).
#[derive(Debug, Default, Clone)]
pub struct Given {
    pub(crate) sources: BTreeMap<String, Source>,
}

impl Given {
    /// What `matches` (of `command`) say was given.
    pub fn from_matches(matches: &clap::ArgMatches, command: &clap::Command) -> Given {
        let mut sources = BTreeMap::new();
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            let source = match matches.try_contains_id(id).ok().and(matches.value_source(id)) {
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

    /// These, with `later`'s over them: a flag given later wins; a
    /// variable (read at every level) does not undo an earlier flag.
    pub fn merged(mut self, later: Given) -> Given {
        for (id, source) in later.sources {
            match source {
                Source::Flag => {
                    self.sources.insert(id, source);
                }
                _ => {
                    self.sources.entry(id).or_insert(source);
                }
            }
        }
        self
    }

    /// Whether the flag `id` was given on the command line.
    pub fn on_command_line(&self, id: &str) -> bool {
        matches!(self.sources.get(id), Some(Source::Flag))
    }

    /// Whether the flag `id` was given (on the command line or in its
    /// variable).
    pub fn has(&self, id: &str) -> bool {
        self.sources.contains_key(id)
    }
}

/// The settings in effect: the defaults, the user's file, the project's
/// (once trusted), the profile, the environment and the flags, in that
/// order, each value with where it came from ([`Settings::sources`]).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The working folder.
    pub cwd: PathBuf,
    /// Where the user's and the project's files are.
    pub paths: Paths,
    /// Whether the project's files that can run programs take effect.
    pub trusted: bool,
    /// Project files left out because the folder is not trusted.
    pub untrusted: Vec<PathBuf>,
    /// The configuration files in effect, in order.
    pub files: Vec<PathBuf>,
    /// Where each value set by something other than the defaults came from.
    pub sources: BTreeMap<String, Source>,
    /// Lines for the person about the configuration (a project's files
    /// ignored, an answer that could not be remembered).
    pub notes: Vec<String>,

    /// The provider (`None`: from the environment).
    pub provider: Option<ProviderKind>,
    /// The model (`None`: the provider's default).
    pub model: Option<String>,
    /// Models tried after `model`, in order, when it fails.
    pub fallback_models: Vec<String>,
    /// Another API root.
    pub base_url: Option<String>,
    /// The environment variable holding the provider's key.
    pub api_key_env: Option<String>,
    /// Tool calls described in the prompt and read from the text.
    pub text_tool_calls: bool,
    /// The model's context window in tokens (`None`: discovered).
    pub context_window: Option<u32>,
    /// Seconds a model may stay silent.
    pub idle_timeout: Option<u64>,
    /// Seconds to wait for a language server's diagnostics after an edit.
    pub lsp_wait: Option<u64>,
    /// Attempts per model request.
    pub retries: Option<u32>,
    /// Whether the model takes images (`None`: yes, except on
    /// openai-compatible servers).
    pub images: Option<bool>,
    /// Text appended to the system prompt.
    pub system: Option<String>,
    /// Extended thinking.
    pub thinking: Thinking,
    /// Each request's output cap.
    pub max_tokens: Option<u32>,
    /// Most assistant turns.
    pub max_turns: Option<u32>,
    /// Spend cap in USD.
    pub max_cost: Option<f64>,

    /// What runs without asking.
    pub approve: Approve,
    /// How commands are confined (`None`: `workspace-write` where the
    /// machine can enforce it).
    pub sandbox: Option<SandboxFlag>,
    /// Whether confined commands may open network connections.
    pub network: bool,
    /// Secret-looking variables commands may see.
    pub pass_env: Vec<String>,
    /// Withheld paths commands may read all the same (`~` expanded).
    pub sandbox_read: Vec<PathBuf>,
    /// Whether command output is reduced before the model reads it.
    pub reduce_output: bool,
    /// The share of the window the tools' schemas may take before some are
    /// deferred.
    pub defer_tools_above: f64,
    /// Permission rules, from every layer.
    pub rules: Vec<RuleText>,
    /// Command hooks, from every layer.
    pub hooks: Vec<HookCommand>,
    /// MCP servers by name, in the `mcpServers` shape, with where each came
    /// from.
    pub mcp: Vec<(String, serde_json::Value, String)>,
    /// Language servers, in order of preference for a language: the known
    /// ones (`built in`) as the configuration files change them, then the
    /// files' own, with where each came from.
    pub lsp: Vec<(zidane::lsp::ServerConfig, String)>,
    /// Skill folders given before the project's and the user's.
    pub skills: Vec<PathBuf>,
    /// The trace collector.
    pub otlp: Option<String>,
    /// Whether traces carry prompts and results.
    pub otlp_payloads: bool,

    /// The sessions file (`None`: the default place).
    pub store: Option<PathBuf>,
    /// The session to run in.
    pub session: Option<String>,
    /// Continue the latest (or the named) session.
    pub resume: bool,
    /// Open in plan mode.
    pub plan: bool,
    /// The goal the runs work toward (`--goal`).
    pub goal: Option<zidane::agent::Goal>,
    /// Images given with `--image`.
    pub attach_images: Vec<PathBuf>,
    /// Whether folder checkpoints are taken.
    pub checkpoints: bool,
    /// Checkpoints kept per session.
    pub max_checkpoints: Option<u32>,

    /// Whether the terminal session notifies.
    pub notifications: Notifications,
    /// The terminal session's colours.
    pub theme: Theme,
    /// The command that draws the status line.
    pub status_line: Option<StatusLine>,
}

/// Whether the terminal session notifies when a turn ends or a question
/// waits while the terminal is not focused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Notifications {
    /// It does (OSC 9 / OSC 777 where the terminal shows them, else the
    /// bell).
    #[default]
    On,
    /// It does not.
    Off,
}

/// The terminal session's colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Theme {
    /// From the terminal's background (asked with OSC 11; dark when it
    /// does not answer).
    #[default]
    Auto,
    /// For a dark background.
    Dark,
    /// For a light background.
    Light,
}

impl Theme {
    /// Its name in files.
    pub fn name(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Dark => "dark",
            Theme::Light => "light",
        }
    }
}

/// `status_line = { command = "…" }`: a command given the session's state
/// as JSON on standard input (Claude Code's `statusLine` contract), whose
/// first line of output is shown.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusLine {
    /// Run with `sh -c`.
    pub command: String,
    /// How long it may take, in milliseconds (default 1000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl Settings {
    /// Whether the value of `key` was given on the command line or in the
    /// environment (not by a file or a default).
    pub fn given(&self, key: &str) -> bool {
        matches!(self.sources.get(key), Some(Source::Flag | Source::Env(_)))
    }

    /// The choice of provider these settings make.
    pub fn provider_choice(&self) -> zidane::providers::ProviderChoice {
        zidane::providers::ProviderChoice {
            kind: self.provider,
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key_env: self.api_key_env.clone(),
            idle_timeout: self.idle_timeout.map(std::time::Duration::from_secs),
            context_window: self.context_window,
            text_tool_calls: self.text_tool_calls,
            ..Default::default()
        }
    }
}
