//! Arguments, the provider, the session store.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use zidane::agent::{SessionStore, SqliteStore};
use zidane::durable::{CheckpointOptions, CheckpointRuntime, Synchronous};
use zidane::providers::anthropic::{AnthropicConfig, AnthropicProvider};
use zidane::providers::openai::{OpenAiConfig, OpenAiProvider};
use zidane::providers::{ApiKey, HttpClient, Provider, ThinkingLevel};

/// zidane: a coding agent in the current folder.
#[derive(Debug, Clone, Parser)]
#[command(name = "zidane", version, about)]
pub(crate) struct Args {
    /// What to do.
    pub(crate) prompt: Vec<String>,
    /// Run the prompt once and print (what happens anyway when standard
    /// input or output is not a terminal); without it, a terminal opens the
    /// interactive session.
    #[arg(short = 'p', long = "print")]
    pub(crate) print: bool,
    /// Describe the tools in the prompt and read the model's calls from its
    /// text (`<tool_call>` tags or a bare `{"name", "arguments"}` object),
    /// for servers that do not parse tool calls. Without it an
    /// openai-compatible server switches to this when it fails to parse a
    /// call.
    #[arg(long)]
    pub(crate) text_tool_calls: bool,
    /// The model's context window in tokens (default: what the server says,
    /// else a built-in table, else 32768 for a compatible server).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(256..))]
    pub(crate) context_window: Option<u32>,
    /// Attach an image (PNG, JPEG, GIF, WebP) to the prompt (repeatable);
    /// `@path.png` in the prompt does the same.
    #[arg(long = "image", value_name = "PATH")]
    pub(crate) images: Vec<PathBuf>,
    /// Plan first: the model investigates with read-only tools and proposes
    /// a plan; nothing is written or run until you approve it (on a
    /// terminal; without one, continue with `--resume`).
    #[arg(long)]
    pub(crate) plan: bool,
    /// The provider (default: the first with a key among ANTHROPIC_API_KEY,
    /// OPENAI_API_KEY, OPENROUTER_API_KEY).
    #[arg(long, value_enum, env = "ZIDANE_PROVIDER")]
    pub(crate) provider: Option<ProviderKind>,
    /// The model id.
    #[arg(long, env = "ZIDANE_MODEL")]
    pub(crate) model: Option<String>,
    /// Use the settings of `[profiles.NAME]` of the configuration files.
    #[arg(long, env = "ZIDANE_PROFILE", value_name = "NAME")]
    pub(crate) profile: Option<String>,
    /// Use this folder's project files (`.zidane/config.toml`, `.mcp.json`,
    /// custom commands) without asking whether it is trusted.
    #[arg(long)]
    pub(crate) trust: bool,
    /// A permission rule allowing calls for this run, e.g.
    /// `shell(cargo test:*)`, `edit(src/**)` (repeatable).
    #[arg(long, value_name = "RULE")]
    pub(crate) allow: Vec<String>,
    /// A permission rule refusing calls for this run, e.g. `shell(rm:*)`,
    /// `read_file(.env)` (repeatable).
    #[arg(long, value_name = "RULE")]
    pub(crate) deny: Vec<String>,
    /// Another API root: `http://host:port` for Anthropic-compatible
    /// servers, `http://host:port/v1` for OpenAI-compatible ones (Ollama,
    /// vLLM, llama.cpp, LM Studio, gateways).
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// Text appended to the system prompt.
    #[arg(long)]
    pub(crate) system: Option<String>,
    /// Extended thinking.
    #[arg(long, value_enum, default_value = "off")]
    pub(crate) thinking: Thinking,
    /// Most assistant turns.
    #[arg(long)]
    pub(crate) max_turns: Option<u32>,
    /// Output token limit of each model request, in every wire format
    /// (default 8192).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_tokens: Option<u32>,
    /// Spend cap in USD (a positive, finite amount).
    #[arg(long, value_parser = positive_usd)]
    pub(crate) max_cost: Option<f64>,
    /// Run in (or create) this session.
    #[arg(long, value_parser = session_name)]
    pub(crate) session: Option<String>,
    /// Continue the session (`--session`, else the most recent one): a run
    /// that was interrupted (a crash, `kill -9`, Ctrl-C) is continued first,
    /// then the prompt, if one is given, runs. On a terminal the session
    /// opens interactively.
    #[arg(long, short = 'c', visible_alias = "continue")]
    pub(crate) resume: bool,
    /// List the saved sessions and exit.
    #[arg(long)]
    pub(crate) list_sessions: bool,
    /// A folder of skills (`<dir>/<skill>/SKILL.md`), before the project's
    /// `.zidane/skills` and the user's; repeatable.
    #[arg(long = "skills", value_name = "DIR")]
    pub(crate) skills: Vec<PathBuf>,
    /// List the skills the agent would offer (and any that cannot be read)
    /// and exit.
    #[arg(long)]
    pub(crate) list_skills: bool,
    /// List the custom commands (`/NAME`: `.zidane/commands/NAME.md` and
    /// the user's) and exit.
    #[arg(long)]
    pub(crate) list_commands: bool,
    /// The sessions file (default: $ZIDANE_HOME/sessions.db, else the user's
    /// data folder).
    #[arg(long)]
    pub(crate) store: Option<PathBuf>,
    /// The working folder (default: the current one).
    #[arg(long)]
    pub(crate) cwd: Option<PathBuf>,
    /// Give up on a model that sends nothing for this many seconds (default
    /// 120, 600 for a server on this machine or a private network; also
    /// `ZIDANE_IDLE_TIMEOUT`).
    #[arg(long, env = "ZIDANE_IDLE_TIMEOUT", value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) idle_timeout: Option<u64>,
    /// Attempts per model request before giving up (default 4 for errors the
    /// provider reports, 8 for dropped connections; also `ZIDANE_RETRIES`).
    /// Waits between attempts add up to at most 3 minutes.
    #[arg(long, env = "ZIDANE_RETRIES", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) retries: Option<u32>,
    /// Send traces of the run (OpenTelemetry GenAI spans, OTLP/HTTP JSON) to
    /// this collector, e.g. `http://localhost:4318`. Without the flag the
    /// standard `OTEL_EXPORTER_OTLP_ENDPOINT` /
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` are read.
    #[arg(long, value_name = "URL")]
    pub(crate) otlp: Option<String>,
    /// With traces: attach prompts, tool arguments and results and the
    /// model's text to the spans (off by default: they may hold secrets).
    #[arg(long)]
    pub(crate) otlp_payloads: bool,
    /// Let commands see this secret-looking environment variable (repeatable).
    /// Provider keys and variables named `*_API_KEY`, `*_TOKEN`, `*_SECRET` or
    /// `*PASSWORD*` are removed from every command's environment otherwise.
    #[arg(long = "pass-env", value_name = "NAME")]
    pub(crate) pass_env: Vec<String>,
    /// How commands are confined (Linux, Landlock): `workspace-write`
    /// (writes only in the working folder and the temporary folder),
    /// `read-only` (no writes), `off`. Without the flag the program uses
    /// `workspace-write` where the machine can enforce it.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) sandbox: Option<SandboxFlag>,
    /// With a sandbox: commands may not open network connections.
    #[arg(long)]
    pub(crate) no_network: bool,
    /// What the program asks you before doing: `ask` (before commands, MCP
    /// tools and file writes), `auto-edit` (file writes in the working
    /// folder go through; commands and MCP tools ask), `yolo` (nothing
    /// asks). Without a terminal, a call that would ask is refused.
    #[arg(long, value_enum, env = "ZIDANE_APPROVE", default_value = "ask")]
    pub(crate) approve: Approve,
    /// MCP servers to use, in the common `{"mcpServers": {...}}` JSON shape
    /// (stdio servers by `command`; HTTP ones by `url`, `"type": "sse"` for
    /// the legacy HTTP + SSE transport). An HTTP server that wants an OAuth
    /// login: `zidane --mcp FILE mcp login SERVER` (the tokens are kept in
    /// the sessions file).
    #[arg(long)]
    pub(crate) mcp: Option<PathBuf>,
    /// Print events as JSON lines instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print the run summary (JSON) at the end.
    #[arg(long)]
    pub(crate) summary: bool,
    /// List the checkpoints of the session (`--session`, else this folder's
    /// latest): each prompt with the files it created, modified and deleted.
    #[arg(long)]
    pub(crate) list_checkpoints: bool,
    /// Take back the last prompt's changes to the files (the conversation
    /// stays; `--rewind` also rewinds it).
    #[arg(long, conflicts_with_all = ["rewind", "fork"])]
    pub(crate) undo: bool,
    /// Rewind to checkpoint N (before its prompt): the files the later
    /// prompts changed go back and the conversation keeps the turns before
    /// it. Without N, a list to pick from (on a terminal).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "0", conflicts_with = "fork")]
    pub(crate) rewind: Option<usize>,
    /// What `--undo` / `--rewind` take back: `files`, `conversation` or
    /// `both` (default: `files` for `--undo`, `both` for `--rewind`).
    #[arg(long, value_enum, value_name = "WHAT")]
    pub(crate) restore: Option<Restore>,
    /// With `--undo` / `--rewind` / `--fork --with-files`: restore the other
    /// files when some changed since the agent left them (those are left
    /// alone and listed); without it a conflict changes nothing.
    #[arg(long)]
    pub(crate) force: bool,
    /// Do not ask before an undo, a rewind or a deletion.
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    /// A new session from SESSION's checkpoint N (its turns before that
    /// prompt; all of them without N); a prompt given runs in it.
    #[arg(long, value_name = "SESSION[:N]")]
    pub(crate) fork: Option<String>,
    /// With `--fork SESSION:N`: restore the folder to checkpoint N too.
    #[arg(long, requires = "fork")]
    pub(crate) with_files: bool,
    /// Delete a session: its turns, runs and checkpoints (contents no other
    /// session uses are removed).
    #[arg(long, value_name = "ID")]
    pub(crate) delete_session: Option<String>,
    /// Delete the sessions unchanged for this long (`30d`, `12h`, `90m`,
    /// `2w`) and the checkpoint contents only they used.
    #[arg(long, value_name = "AGE", value_parser = age)]
    pub(crate) prune_older_than: Option<std::time::Duration>,
    /// Take no folder checkpoints for this run.
    #[arg(long)]
    pub(crate) no_checkpoints: bool,
    /// Checkpoints kept per session (the oldest are dropped past it, with a
    /// note; default 100; also `ZIDANE_MAX_CHECKPOINTS`).
    #[arg(long, env = "ZIDANE_MAX_CHECKPOINTS", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_checkpoints: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Restore {
    Files,
    Conversation,
    Both,
}

/// `--prune-older-than`: a number and a unit (`s`, `m`, `h`, `d`, `w`).
fn age(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not an age like 30d, 12h, 90m or 2w"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" | "" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(format!("`{text}`: the unit is one of s, m, h, d, w")),
    };
    Ok(std::time::Duration::from_secs(n.saturating_mul(secs)))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum ProviderKind {
    Anthropic,
    Openai,
    /// OpenAI's Responses API (reasoning kept across turns).
    OpenaiResponses,
    Openrouter,
    OpenaiCompatible,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Approve {
    Ask,
    AutoEdit,
    Yolo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum SandboxFlag {
    Off,
    WorkspaceWrite,
    ReadOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Thinking {
    Off,
    Minimal,
    Low,
    Medium,
    High,
}

impl From<Thinking> for ThinkingLevel {
    fn from(t: Thinking) -> Self {
        match t {
            Thinking::Off => ThinkingLevel::Off,
            Thinking::Minimal => ThinkingLevel::Minimal,
            Thinking::Low => ThinkingLevel::Low,
            Thinking::Medium => ThinkingLevel::Medium,
            Thinking::High => ThinkingLevel::High,
        }
    }
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

/// A failure with its exit code: 2 for usage and configuration, 1 for runs,
/// 130 for an interrupted run (0 with no message: a closed output pipe).
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) code: u8,
}

impl Failure {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 2,
        }
    }

    pub(crate) fn run(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 1,
        }
    }

    /// An interrupted run (Ctrl-C, SIGTERM, SIGHUP): the shell's convention
    /// for a program stopped by SIGINT.
    pub(crate) fn interrupted(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 130,
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `--base-url` must be an `http` or `https` URL with a host.
fn check_base_url(url: &str) -> Result<(), Failure> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .filter(|rest| {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            let host = authority.rsplit('@').next().unwrap_or_default();
            !host.is_empty() && !host.starts_with(':') && !host.contains(char::is_whitespace)
        });
    match rest {
        Some(_) => Ok(()),
        None => Err(Failure::usage(format!(
            "--base-url `{}` is not a valid URL: give the server's address, e.g. http://localhost:8080/v1",
            shown_url(url)
        ))),
    }
}

/// A URL as it may be shown: a password in it is masked.
pub(crate) fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or_default();
            let masked = if userinfo.contains(':') {
                format!("{user}:***")
            } else {
                "***".to_owned()
            };
            format!("{scheme}://{masked}@{host}{path}")
        }
        None => url.to_owned(),
    }
}

/// How long a server on a loopback or private address may stay silent
/// (unless `--idle-timeout` says otherwise).
pub(crate) const LOCAL_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Whether `url`'s host is this machine or a private network (by name or
/// address).
pub(crate) fn is_local_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(v6) = host.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host.split(':').next().unwrap_or_default()
    };
    if host.eq_ignore_ascii_case("localhost") || host.ends_with(".local") || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback() || (ip.segments()[0] & 0xfe00) == 0xfc00,
        Err(_) => false,
    }
}

/// The provider from the flags and the environment.
/// Which provider the flags and the environment pick.
pub(crate) fn provider_kind(args: &Args) -> Result<ProviderKind, Failure> {
    Ok(match args.provider {
        Some(kind) => kind,
        None if env("ANTHROPIC_API_KEY").is_some() || env("ANTHROPIC_AUTH_TOKEN").is_some() => ProviderKind::Anthropic,
        None if env("OPENAI_API_KEY").is_some() => ProviderKind::Openai,
        None if env("OPENROUTER_API_KEY").is_some() => ProviderKind::Openrouter,
        None if args.base_url.is_some() => ProviderKind::OpenaiCompatible,
        None => {
            return Err(Failure::usage(
                "no provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY, \
                 or pass --provider openai-compatible --base-url http://localhost:11434/v1 for a local server",
            ));
        }
    })
}

pub(crate) fn provider(
    args: &Args,
    key_var: Option<&str>,
    served: Option<&crate::window::Window>,
) -> Result<Arc<dyn Provider>, Failure> {
    let window = served.map(|w| w.tokens);
    let kind = provider_kind(args)?;
    if let Some(url) = &args.base_url {
        check_base_url(url)?;
    }
    let missing = |var: &str, name: &str| Failure::usage(format!("--provider {name} needs {var} in the environment"));
    let built: Result<Arc<dyn Provider>, _> = match kind {
        ProviderKind::Anthropic => {
            let mut config = match key_var {
                Some(var) => AnthropicConfig::from_env()
                    .unwrap_or_else(|_| AnthropicConfig::new(""))
                    .with_api_key(env(var).ok_or_else(|| missing(var, "anthropic"))?),
                None => AnthropicConfig::from_env().map_err(|_| missing("ANTHROPIC_API_KEY", "anthropic"))?,
            };
            if let Some(url) = &args.base_url {
                // The Anthropic format adds `/v1/messages` itself: a base URL
                // given with its `/v1` (as OpenAI-style URLs are) is the root.
                let root = url.trim_end_matches('/');
                config = config.with_base_url(root.strip_suffix("/v1").unwrap_or(root).to_owned());
            }
            if let Some(model) = &args.model {
                config = config.with_model(model.clone());
            }
            if let Some(secs) = args.idle_timeout {
                config.timeouts.idle = std::time::Duration::from_secs(secs);
            }
            if let Some(window) = window {
                config.context_window = window;
            }
            AnthropicProvider::new(config).map(|p| Arc::new(p) as Arc<dyn Provider>)
        }
        ProviderKind::Openai | ProviderKind::OpenaiResponses | ProviderKind::Openrouter => {
            let (var, name) = match kind {
                ProviderKind::Openai => ("OPENAI_API_KEY", "openai"),
                ProviderKind::OpenaiResponses => ("OPENAI_API_KEY", "openai-responses"),
                _ => ("OPENROUTER_API_KEY", "openrouter"),
            };
            let var = key_var.unwrap_or(var);
            let key = env(var).ok_or_else(|| missing(var, name))?;
            let mut config = match kind {
                ProviderKind::Openai => OpenAiConfig::openai(key),
                ProviderKind::OpenaiResponses => OpenAiConfig::openai_responses(key),
                _ => OpenAiConfig::openrouter(key),
            };
            if let Some(url) = &args.base_url {
                config = config.with_base_url(url.clone());
            }
            if let Some(model) = &args.model {
                config = config.with_model(model.clone());
            }
            if let Some(secs) = args.idle_timeout {
                config.timeouts.idle = std::time::Duration::from_secs(secs);
            }
            if let Some(window) = window {
                config.context_window = window;
            }
            OpenAiProvider::new(config).map(|p| Arc::new(p) as Arc<dyn Provider>)
        }
        ProviderKind::OpenaiCompatible => {
            let url = args.base_url.clone().ok_or_else(|| {
                Failure::usage("--provider openai-compatible needs --base-url (e.g. http://localhost:11434/v1)")
            })?;
            let model = args.model.clone().ok_or_else(|| {
                Failure::usage("--provider openai-compatible needs --model (the server's model name)")
            })?;
            let key = env(key_var.unwrap_or("OPENAI_API_KEY")).map(ApiKey::new);
            if !matches!(args.thinking, Thinking::Off) {
                eprintln!(
                    "zidane: --thinking is not sent in the openai-compatible format (servers differ in how they take a reasoning effort); it is ignored"
                );
            }
            // A model on this machine or the local network may read a long
            // prompt (or hold back a tool call) for minutes on a CPU.
            let local = is_local_url(&url);
            let mut config = OpenAiConfig::compatible(url.clone(), key).with_model(model);
            match args.idle_timeout {
                Some(secs) => config.timeouts.idle = std::time::Duration::from_secs(secs),
                None if local => config.timeouts.idle = LOCAL_IDLE_TIMEOUT,
                None => {}
            }
            if let Some(window) = window {
                config.context_window = window;
            }
            // llama.cpp streams its progress through the prompt when asked.
            config.dialect.prompt_progress = served.is_some_and(crate::window::Window::is_llama_cpp);
            let client = HttpClient::new(config.timeouts).map(|client| {
                // A local server may be silent for minutes while it works.
                match crate::window::SlotLiveness::new(&url).filter(|_| local) {
                    Some(slots) => client.with_liveness(Arc::new(slots)),
                    None => client,
                }
            });
            client.map(|client| Arc::new(OpenAiProvider::with_client(config, client)) as Arc<dyn Provider>)
        }
    };
    let built = built.map_err(|e| Failure::usage(format!("cannot set up the provider: {e}")))?;
    // Tool calls in the text: always when asked; for a compatible server,
    // once it fails to parse one.
    let mode = match (args.text_tool_calls, kind) {
        (true, _) => Some(zidane::providers::TextToolMode::Always),
        (false, ProviderKind::OpenaiCompatible) => Some(zidane::providers::TextToolMode::Auto),
        (false, _) => None,
    };
    Ok(match mode {
        Some(mode) => Arc::new(zidane::providers::TextToolCalls::new(built, mode)),
        None => built,
    })
}

/// The durable runtime on the sessions file: every session runs on it.
///
/// Commits are synced to disk only before an effect outside the process
/// (a command or write starting, an approval given, a compaction's
/// summary): a crash of the process loses nothing written, and a power
/// loss can take a session back to the last of those, asking the model
/// again for the turns after it but never running a command twice or
/// asking a person twice. Syncing every commit would cost a sync per turn
/// even for turns that only read.
pub(crate) fn open_runtime(args: &Args) -> Result<Arc<CheckpointRuntime>, Failure> {
    let path = args.store.clone().unwrap_or_else(SqliteStore::default_path);
    let options = CheckpointOptions {
        synchronous: Synchronous::BeforeEffects,
        ..Default::default()
    };
    CheckpointRuntime::open_with(&path, options)
        .map(Arc::new)
        .map_err(|e| Failure::usage(format!("cannot open the sessions file: {e}")))
}

/// The session to run in: `--session`, the latest with `--resume`, else a
/// new one.
pub(crate) async fn session_id(args: &Args, store: &dyn SessionStore) -> Result<String, Failure> {
    if let Some(id) = &args.session {
        return Ok(id.clone());
    }
    if args.resume {
        let sessions = store
            .list()
            .await
            .map_err(|e| Failure::run(format!("cannot read the sessions: {e}")))?;
        return sessions
            .into_iter()
            .map(|s| s.id)
            .find(|id| !id.contains(zidane::agent::CHILD_SESSION_MARK))
            .ok_or_else(|| Failure::usage("there is no session to resume yet"));
    }
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    Ok(format!("s-{stamp:x}-{:x}", std::process::id()))
}

/// The MCP servers of the configuration, `.mcp.json` and `--mcp`, merged
/// by name.
pub(crate) fn mcp_servers(loaded: &crate::config::Loaded) -> Result<Vec<zidane::mcp::McpServerConfig>, Failure> {
    if loaded.mcp.is_empty() {
        return Ok(Vec::new());
    }
    let servers: serde_json::Map<String, serde_json::Value> = loaded
        .mcp
        .iter()
        .map(|(name, value, _)| (name.clone(), value.clone()))
        .collect();
    let text = serde_json::json!({ "mcpServers": servers }).to_string();
    zidane::mcp::parse_mcp_config(&text).map_err(|e| {
        let origins: Vec<String> = loaded.mcp.iter().map(|(n, _, o)| format!("`{n}` from {o}")).collect();
        Failure::usage(format!("the MCP servers ({}): {e}", origins.join(", ")))
    })
}

/// Where skills come from, first wins: `--skills` folders, the project's
/// `.zidane/skills` (and `.claude/skills`), the user's (`$ZIDANE_HOME/skills`;
/// without it `$XDG_CONFIG_HOME/zidane/skills` or `~/.config/zidane/skills`,
/// then `~/.claude/skills`).
pub(crate) fn skill_folders(args: &Args, cwd: &std::path::Path) -> Vec<PathBuf> {
    let env_path = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let mut folders = args.skills.clone();
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

/// Where commands run: this machine in `cwd`, confined as asked. An
/// explicit `--sandbox` the machine cannot enforce is an error; the default
/// falls back to unconfined commands and says so.
pub(crate) fn execution(
    args: &Args,
    cwd: &std::path::Path,
    task_dir: Option<PathBuf>,
) -> Result<(Arc<zidane::tools::ProcessContext>, String), Failure> {
    use zidane::tools::{ProcessContext, Sandbox, SandboxMode};
    let mut context = ProcessContext::new(cwd).pass_env(args.pass_env.clone());
    if let Some(dir) = task_dir {
        context = context.task_dir(dir);
    }
    let mode = match args.sandbox {
        Some(SandboxFlag::Off) => SandboxMode::Off,
        Some(SandboxFlag::ReadOnly) => SandboxMode::ReadOnly,
        Some(SandboxFlag::WorkspaceWrite) | None => SandboxMode::WorkspaceWrite,
    };
    if mode == SandboxMode::Off && args.no_network {
        return Err(Failure::usage("--no-network needs a sandbox (drop `--sandbox off`)"));
    }
    let sandbox = Sandbox {
        mode,
        network: !args.no_network,
        temp: true,
    };
    let network = if args.no_network { "no network" } else { "network on" };
    match (mode, context.clone().sandboxed(sandbox)) {
        (SandboxMode::Off, _) => Ok((
            Arc::new(context),
            "sandbox off: commands may write anywhere this user can".to_owned(),
        )),
        (_, Ok(confined)) => {
            let note = match mode {
                SandboxMode::ReadOnly => format!("sandbox read-only: commands and tools write nothing ({network})"),
                _ => format!(
                    "sandbox workspace-write: commands write only in {} and the temporary folder ({network})",
                    cwd.display()
                ),
            };
            Ok((Arc::new(confined), note))
        }
        (_, Err(e)) if args.sandbox.is_none() && !args.no_network => Ok((
            Arc::new(context),
            format!("{e}; commands run unconfined (`--sandbox off` says so without this note)"),
        )),
        (_, Err(e)) => Err(Failure::usage(e.to_string())),
    }
}

/// The trace exporter the flags or the standard variables ask for.
pub(crate) fn tracing_export(args: &Args) -> Result<Option<zidane::otel::OtelExporter>, Failure> {
    let options = match &args.otlp {
        Some(endpoint) => {
            let mut options =
                zidane::otel::OtelOptions::from_env().unwrap_or_else(|| zidane::otel::OtelOptions::new(""));
            options.endpoint = endpoint.clone();
            options.traces_endpoint = None;
            Some(options)
        }
        None => zidane::otel::OtelOptions::from_env(),
    };
    let Some(mut options) = options else {
        return Ok(None);
    };
    options.capture_payloads = args.otlp_payloads;
    zidane::otel::OtelExporter::new(options)
        .map(Some)
        .map_err(|e| Failure::usage(format!("--otlp: {e}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn local_base_urls() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "http://192.168.1.20:1234/v1",
            "http://[::1]:8000/v1",
            "http://gpu-box.local:8080/v1",
        ] {
            assert!(super::is_local_url(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "https://openrouter.ai/api/v1",
            "http://8.8.8.8/v1",
        ] {
            assert!(!super::is_local_url(url), "{url}");
        }
    }
}
