//! `zidane`: a coding agent at the command line.
//!
//! Runs an agent with the basic preset in the current folder: the answer
//! streams as it arrives, each tool call is shown with its outcome, and the
//! session is saved (resumable with `--resume`).
//!
//! Architecture invariant: the program uses only the `zidane` facade.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line program prints

mod acp;
mod approve;
mod attach;
mod checkpoints;
mod command_hooks;
mod commands;
mod config;
mod deferred;
mod instructions;
mod logging;
mod output;
mod permissions;
mod plan;
mod savings;
mod session;
mod setup;
mod window;

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches};
use zidane::agent::{
    AgentError, AgentOptions, AgentRunOptions, RunSummaryCollectorOptions, SessionStore, create_agent,
    create_run_summary_collector,
};
use zidane::durable::{DurableOptions, DurableResumeOptions, OnInterrupted, SuspendOptions};

use crate::output::{Printer, describe_failure};
use crate::setup::{Args, Failure, mcp_servers, open_runtime, provider, session_id, skill_folders};

fn main() -> ExitCode {
    let command = Args::command();
    let matches = command.clone().get_matches();
    let args = Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let given = config::Given::from_matches(&matches, &command);
    if let Err(Failure { message, code }) = logging::init() {
        eprintln!("zidane: {message}");
        return ExitCode::from(code);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("zidane: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(args, given)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure { message, code }) => {
            if !message.is_empty() {
                eprintln!("zidane: {message}");
            }
            ExitCode::from(code)
        }
    }
}

/// Ctrl-C, SIGTERM and SIGHUP, listened for from the moment this is made
/// (so a signal that arrives while the run starts is not lost).
pub(crate) struct StopSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    pub(crate) fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            StopSignals {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// The next stop signal (`false` when none can be listened for).
    pub(crate) async fn next(&mut self) -> bool {
        #[cfg(unix)]
        {
            let term = async {
                match self.term.as_mut() {
                    Some(s) => s.recv().await.is_some(),
                    None => std::future::pending().await,
                }
            };
            let hup = async {
                match self.hup.as_mut() {
                    Some(s) => s.recv().await.is_some(),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                r = tokio::signal::ctrl_c() => r.is_ok(),
                r = term => r,
                r = hup => r,
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await.is_ok()
        }
    }
}

/// `zidane --mcp FILE mcp login SERVER`: the OAuth login of one HTTP MCP
/// server. The URL to open is printed (and handed to the desktop's opener
/// when there is one); the tokens go to the sessions file, never to the
/// screen.
async fn mcp_login(loaded: &config::Loaded, rest: &[String], store: zidane::agent::SqliteStore) -> Result<(), Failure> {
    let [name] = rest else {
        return Err(Failure::usage("usage: zidane --mcp <config.json> mcp login <server>"));
    };
    let servers = mcp_servers(loaded)?;
    let Some(mut config) = servers.into_iter().find(|s| &s.name == name) else {
        return Err(Failure::usage(format!(
            "no MCP server `{name}` in the configuration (pass it with --mcp <config.json>)"
        )));
    };
    config.oauth_store = Some(Arc::new(store.clone()) as Arc<dyn zidane::mcp::oauth::OAuthStore>);
    let hooks = zidane::hooks::HookBus::new();
    hooks.on_sync::<zidane::agent::events::McpAuthUrl, _>(|ev, _| {
        eprintln!("Open this URL to log in to `{}`:\n\n  {}\n", ev.name(), ev.url());
        // A desktop opens it; without one the printed URL is the way.
        for opener in ["xdg-open", "open"] {
            if std::process::Command::new(opener)
                .arg(ev.url())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .is_ok()
            {
                break;
            }
        }
        eprintln!("Waiting for the browser to come back…");
        Ok(())
    });
    zidane::mcp::login_mcp_server(&config, &hooks)
        .await
        .map_err(|e| Failure::run(format!("the login to `{name}` failed: {e}")))?;
    eprintln!(
        "zidane: logged in to `{name}`; its tokens are kept in {}",
        store.path().display()
    );
    Ok(())
}

/// After a planning run: the person approves the plan (or edits it) and the
/// session goes on in the normal mode; without a terminal the plan waits
/// for `--resume`.
async fn carry_out_plan(
    agent: &zidane::agent::Agent,
    args: &Args,
    session: &str,
    printer: &Printer,
    planning: &std::sync::atomic::AtomicBool,
    stats: zidane::agent::AgentStats,
) -> Result<zidane::agent::AgentStats, AgentError> {
    let plan = agent
        .turns()
        .iter()
        .rev()
        .find(|t| t.role == zidane::providers::Role::Assistant)
        .map(|t| {
            t.content
                .iter()
                .filter_map(|b| match b {
                    zidane::providers::ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    printer.pause();
    match crate::plan::ask(&plan) {
        Some(crate::plan::Verdict::Approved(plan)) => {
            planning.store(false, std::sync::atomic::Ordering::SeqCst);
            let mut options = AgentRunOptions::prompt(crate::plan::go_ahead(&plan));
            options.thinking = args.thinking.into();
            agent.run_stats(options).await
        }
        Some(crate::plan::Verdict::Rejected) => {
            eprintln!("zidane: the plan was not carried out; nothing was changed");
            Ok(stats)
        }
        None => {
            eprintln!(
                "zidane: plan mode changed nothing; to carry out the plan: zidane --resume --session {session} \"Go ahead with the plan.\""
            );
            Ok(stats)
        }
    }
}

/// `zidane context`: what the session's context holds before the next
/// request, by category and chunk, the instruction files with their paths.
async fn context_report(
    agent: &zidane::agent::Agent,
    instructions: &instructions::Instructions,
    window: Option<u32>,
) -> String {
    let mut options = instructions.context_options();
    options.effective_window = window.map(u64::from);
    let mut out = String::from("The context before the next request (estimated tokens):\n");
    if let Some(breakdown) = agent.get_context_breakdown(&options).await {
        for c in &breakdown.categories {
            out.push_str(&format!("  {:<20} {:>8}\n", c.name, c.tokens));
        }
        out.push_str(&format!("  {:<20} {:>8}\n", "in all", breakdown.used));
    }
    out.push_str("\nWhere it comes from:\n");
    for segment in agent.get_context_segments(&options).into_iter().flatten() {
        use zidane::agent::SegmentSource;
        let what = match &segment.source {
            SegmentSource::System => "system prompt".to_owned(),
            SegmentSource::RulesFile { path } => format!("rules file {path}"),
            SegmentSource::Tool { name } => format!("tool {name}"),
            SegmentSource::Turn { id, role } => format!("turn {id} ({role:?})"),
        };
        out.push_str(&format!("  {:<60} {:>8}\n", what, segment.text.len().div_ceil(4)));
    }
    out
}

/// Writes `text` to standard output; a closed pipe (`zidane … | head`) is a
/// quiet end, not a panic.
fn emit(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure {
            message: String::new(),
            code: 0,
        }),
        Err(e) => Err(Failure::run(format!("cannot write the output: {e}"))),
    }
}

/// The prompt: the words given, or standard input for `-` (or when no words
/// are given and input is piped).
fn read_prompt(args: &Args) -> Result<String, Failure> {
    let words = args.prompt.join(" ");
    let from_stdin = words == "-" || (words.trim().is_empty() && !std::io::stdin().is_terminal());
    if !from_stdin {
        return Ok(words);
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| Failure::usage(format!("cannot read the prompt from standard input: {e}")))?;
    Ok(text)
}

async fn run(mut args: Args, given: config::Given) -> Result<(), Failure> {
    if let Some(dir) = &args.cwd
        && !dir.is_dir()
    {
        return Err(Failure::usage(format!("--cwd {}: no such folder", dir.display())));
    }
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| Failure::usage(format!("cannot read the current folder: {e}")))?,
    };
    if args.prompt.len() == 1 && args.prompt[0] == "acp" {
        return acp::serve(args, given).await;
    }
    let showing_config = args.prompt.len() == 1 && args.prompt[0] == "config";
    let showing_context = args.prompt.len() == 1 && args.prompt[0] == "context";
    // The trust question is for a run, not for a listing.
    let asks = !(showing_config
        || args.list_sessions
        || args.list_skills
        || args.list_commands
        || args.list_checkpoints
        || args.delete_session.is_some()
        || args.prune_older_than.is_some());
    let mut loaded = config::load(&mut args, &given, &cwd, asks)?;
    if showing_config {
        return emit(&config::show(&args, &loaded));
    }
    let command_folders = commands::folders(&loaded.paths, loaded.trusted);
    if args.list_commands {
        let (found, problems) = commands::list(&command_folders);
        let mut listing = String::new();
        for c in &found {
            let hint = c.argument_hint.as_deref().map(|h| format!(" {h}")).unwrap_or_default();
            let about = c.description.as_deref().unwrap_or("");
            listing.push_str(&format!("/{}{hint}  {about}  ({})\n", c.name, c.path.display()));
        }
        if found.is_empty() {
            listing.push_str("No custom commands (put them in .zidane/commands/<name>.md).\n");
        }
        for problem in problems {
            eprintln!("zidane: skipped {problem}");
        }
        return emit(&listing);
    }
    let runtime = open_runtime(&args)?;
    let store = runtime.sqlite().clone();
    if let [first, second, rest @ ..] = args.prompt.as_slice()
        && first == "mcp"
        && second == "login"
    {
        return mcp_login(&loaded, rest, store).await;
    }
    if let Some(id) = &args.delete_session {
        return crate::checkpoints::delete(&args, &store, id).await;
    }
    if let Some(age) = args.prune_older_than {
        return crate::checkpoints::prune(&args, &store, age).await;
    }
    if args.list_sessions {
        let sessions = store
            .list()
            .await
            .map_err(|e| Failure::run(format!("cannot read the sessions: {e}")))?;
        let mut listing = String::new();
        if sessions.is_empty() {
            listing.push_str(&format!("No sessions yet ({}).\n", store.path().display()));
        }
        // A sub-agent's session is part of its parent's.
        for s in sessions
            .into_iter()
            .filter(|s| !s.id.contains(zidane::agent::CHILD_SESSION_MARK))
        {
            listing.push_str(&format!("{}  {:>3} messages  {}", s.id, s.turns, s.title));
            if s.interrupted {
                listing.push_str(&format!("  [interrupted: `zidane --resume --session {}`]", s.id));
            }
            listing.push('\n');
        }
        emit(&listing)?;
        // On standard error: standard output stays one line per session.
        if let Ok(bytes) = zidane::checkpoints::CheckpointStore::storage_bytes(&store).await
            && bytes > 0
        {
            eprintln!(
                "Checkpoints take {} in {}.",
                crate::checkpoints::size(bytes),
                store.path().display()
            );
        }
        return Ok(());
    }
    let checkpoints = crate::checkpoints::open(&args, &cwd, &store);
    if args.list_checkpoints {
        return crate::checkpoints::list(&args, &store, &checkpoints).await;
    }
    if args.undo {
        return crate::checkpoints::rewind(&args, &store, &checkpoints, None).await;
    }
    if let Some(n) = args.rewind {
        return crate::checkpoints::rewind(&args, &store, &checkpoints, Some(n)).await;
    }
    let folders = skill_folders(&args, &cwd);
    if args.list_skills {
        let (skills, problems) = zidane::agent::load_skill_folders(&folders);
        let mut listing = String::new();
        for skill in &skills {
            let at = skill
                .folder
                .as_ref()
                .map(|f| f.display().to_string())
                .unwrap_or_default();
            listing.push_str(&format!("{}  {}  ({at})\n", skill.name, skill.description));
        }
        if skills.is_empty() {
            listing.push_str("No skills found (put them in .zidane/skills/<name>/SKILL.md, or pass --skills <dir>).\n");
        }
        for problem in problems {
            eprintln!("zidane: skipped {problem}");
        }
        return emit(&listing);
    }
    let mut prompt = read_prompt(&args)?;
    if let Some((name, rest)) = commands::invocation(&prompt).filter(|_| !showing_context) {
        let command = commands::find(&command_folders, name)?;
        let rest = rest.to_owned();
        prompt = command.expand(&rest);
        // The command's model over the configuration's, not over `--model`.
        if command.model.is_some() && !given.has("model") {
            args.model.clone_from(&command.model);
        }
        for rule in &command.allowed_tools {
            loaded.rules.push(config::RuleText {
                kind: config::RuleKind::Allow,
                rule: rule.clone(),
                origin: format!("the command /{}", command.name),
            });
        }
    }
    let forked = match &args.fork {
        Some(spec) => {
            let new_id = session_id(&args, &store).await?;
            let id = crate::checkpoints::fork(&args, spec, &store, &checkpoints, &new_id).await?;
            if prompt.trim().is_empty() {
                return Ok(());
            }
            Some(id)
        }
        None => None,
    };
    if prompt.trim().is_empty() && !args.resume && !session::wanted(&args) {
        return Err(Failure::usage(
            "give a prompt, e.g. `zidane \"list the files here\"` (see --help)",
        ));
    }
    let session = match forked {
        Some(id) => id,
        None => session_id(&args, &store).await?,
    };
    let interactive = session::wanted(&args) && !showing_context;
    let context = Context::new(args, loaded, cwd, runtime, interactive).await?;
    let images = crate::attach::images(
        &context.args.images,
        &prompt,
        &context.cwd,
        context.kind,
        context.takes_images,
    )?;
    let built = build(&context, &session, true).await?;
    for note in &built.notes {
        eprintln!("zidane: {note}");
    }
    if showing_context {
        let report = context_report(
            &built.agent,
            &context.instructions,
            context.window.as_ref().map(|w| w.tokens),
        )
        .await;
        built.agent.destroy().await;
        return emit(&report);
    }
    if interactive {
        return session::run(context, built, session, prompt, images).await;
    }
    one_shot(&context, built, &session, prompt, images).await
}

/// What every agent of this process is built from: the arguments, the
/// configuration, and what was found out about the provider and the folder.
pub(crate) struct Context {
    pub(crate) args: Args,
    pub(crate) loaded: config::Loaded,
    pub(crate) cwd: std::path::PathBuf,
    pub(crate) store: zidane::agent::SqliteStore,
    pub(crate) runtime: Arc<zidane::durable::CheckpointRuntime>,
    pub(crate) checkpoints: Arc<zidane::checkpoints::Checkpoints>,
    pub(crate) kind: crate::setup::ProviderKind,
    pub(crate) window: Option<crate::window::Window>,
    pub(crate) takes_images: bool,
    pub(crate) instructions: instructions::Instructions,
    pub(crate) printer: Printer,
    /// `--approve`, changeable from the interactive session.
    pub(crate) approve_mode: Arc<parking_lot::Mutex<crate::setup::Approve>>,
    pub(crate) interactive: bool,
    /// Where the approvals go in the interactive session.
    pub(crate) asks: session::AskLine,
    /// Wraps where the tools run (an ACP client's files).
    pub(crate) wrap_execution: Option<ExecutionWrap>,
}

/// What [`Context::wrap_execution`] holds.
pub(crate) type ExecutionWrap =
    Arc<dyn Fn(Arc<dyn zidane::tools::ExecutionContext>) -> Arc<dyn zidane::tools::ExecutionContext> + Send + Sync>;

impl Context {
    /// The context of a folder: what the provider's window is, the
    /// instruction files (both said on standard error), the checkpoints.
    pub(crate) async fn new(
        args: Args,
        loaded: config::Loaded,
        cwd: std::path::PathBuf,
        runtime: Arc<zidane::durable::CheckpointRuntime>,
        interactive: bool,
    ) -> Result<Context, Failure> {
        let store = runtime.sqlite().clone();
        let checkpoints = crate::checkpoints::open(&args, &cwd, &store);
        let kind = crate::setup::provider_kind(&args)?;
        let takes_images = loaded
            .images
            .unwrap_or(kind != crate::setup::ProviderKind::OpenaiCompatible);
        let (window, window_line) = crate::window::resolve(
            args.context_window,
            kind,
            args.model.as_deref(),
            args.base_url.as_deref(),
        )
        .await;
        if let Some(line) = window_line {
            eprintln!("{line}");
        }
        let instructions = crate::instructions::discover(&loaded.paths);
        if let Some(line) = instructions.summary() {
            eprintln!("{line}");
        }
        let approve_mode = Arc::new(parking_lot::Mutex::new(args.approve));
        let printer = Printer::new(args.json, std::io::stderr().is_terminal() && !args.json);
        Ok(Context {
            args,
            loaded,
            cwd,
            store,
            runtime,
            checkpoints,
            kind,
            window,
            takes_images,
            instructions,
            printer,
            approve_mode,
            interactive,
            asks: session::AskLine::default(),
            wrap_execution: None,
        })
    }
}

/// An agent and what lives as long as it does.
pub(crate) struct Built {
    pub(crate) agent: zidane::agent::Agent,
    pub(crate) hooks: Arc<crate::command_hooks::CommandHooks>,
    pub(crate) savings: crate::savings::Savings,
    pub(crate) planning: Arc<std::sync::atomic::AtomicBool>,
    pub(crate) traces: Option<zidane::otel::OtelExporter>,
    /// Lines for the person (the sandbox, skipped skills).
    pub(crate) notes: Vec<String>,
    /// Hook subscriptions, dropped with the agent.
    pub(crate) guards: Vec<Box<dyn std::any::Any + Send + Sync>>,
}

/// Builds the agent of `session`, with everything installed on its bus but
/// the way it is shown.
pub(crate) async fn build(context: &Context, session: &str, first: bool) -> Result<Built, Failure> {
    let args = &context.args;
    let loaded = &context.loaded;
    let cwd = &context.cwd;
    let store = &context.store;
    let kind = context.kind;
    let window = context.window.as_ref();
    let mcp = mcp_servers(loaded)?;
    let provider = provider(args, loaded.api_key_env.as_deref(), window)?;
    let permissions = crate::permissions::Permissions::new(&loaded.rules, args.approve, cwd)
        .map_err(|e| Failure::usage(format!("a permission rule: {e}")))?
        .with_mode(Arc::clone(&context.approve_mode));
    let mut preset_options = zidane::presets::BasicOptions::in_folder(cwd);
    preset_options.pass_env = args.pass_env.clone();
    preset_options.reduce_output = loaded.reduce_output.unwrap_or(true);
    // The program confines commands itself (`--sandbox`, below), with its
    // own notes; the preset's context is not used.
    preset_options.sandbox = zidane::tools::Sandbox::off();
    let preset = zidane::presets::basic(preset_options);
    // Background commands' output lives beside the sessions, per session.
    let task_dir = store.path().parent().map(|dir| dir.join("tasks").join(session));
    let (execution, sandbox_note) = crate::setup::execution(args, cwd, task_dir)?;
    let mut notes = Vec::new();
    if first {
        notes.push(sandbox_note);
    }
    // Hook commands run in the sandbox commands run in.
    let launcher = if loaded.hooks.is_empty() {
        None
    } else {
        execution
            .launcher()
            .map_err(|e| Failure::usage(format!("cannot confine the hook commands: {e}")))?
    };
    let hooks = crate::command_hooks::CommandHooks::new(
        loaded.hooks.clone(),
        &loaded.paths,
        session,
        args.approve,
        args.pass_env.clone(),
        launcher,
    );
    let savings = crate::savings::Savings::default();
    // Past a share of the window, the least used tools wait for
    // `tool_search`.
    let deferral = crate::deferred::Deferral::new(
        window.map_or(u32::MAX, |w| w.tokens),
        loaded.defer_tools_above.unwrap_or(crate::deferred::DEFAULT_SHARE),
        preset
            .tools
            .names()
            .map(str::to_owned)
            .chain(["web_fetch".to_owned(), "skill".to_owned()]),
        savings.clone(),
    );
    let mut system = context.instructions.system_prompt(&preset.system);
    if let Some(extra) = &args.system {
        system.push_str("\n\n");
        system.push_str(extra);
    }
    let mut behavior = zidane::agent::Behavior {
        // A background command silent this long is pointed out to the model.
        background_stall_watchdog: Some(std::time::Duration::from_secs(120)),
        ..Default::default()
    };
    if let Some(max) = args.max_turns {
        behavior.max_turns = Some(max);
    }
    behavior.max_cost_usd = args.max_cost;
    if let Some(n) = args.retries {
        behavior.retry.max_attempts = n;
        behavior.retry.transport_max_attempts = n;
    }
    // What runs without a yes depends on `--approve`; the answer comes from
    // the terminal (none: refused).
    let terminal = crate::approve::Terminal::new(
        context.printer.clone(),
        loaded.paths.clone(),
        Arc::clone(&hooks),
        context.asks.clone(),
    );
    let planning = Arc::new(std::sync::atomic::AtomicBool::new(args.plan));
    let mut interceptors: Vec<Arc<dyn zidane::agent::ToolCallInterceptor>> =
        vec![Arc::new(crate::plan::PlanGate(Arc::clone(&planning)))];
    if !hooks.is_empty() {
        interceptors.push(Arc::new(crate::command_hooks::PreToolUse(Arc::clone(&hooks))));
    }
    interceptors.push(Arc::new(permissions.with_hooks(Arc::clone(&hooks))));
    let approver = Some(Arc::clone(&terminal) as Arc<dyn zidane::agent::ToolCallApprover>);
    // A server's questions go to the person when there is one to ask: in
    // the session, or on the terminal line by line.
    let elicitation = if context.interactive || context.asks.connected() {
        Some(context.asks.elicitation())
    } else {
        terminal.interactive().then(|| terminal.elicitation())
    };
    let traces = crate::setup::tracing_export(args)?;
    let mut spawn = zidane::agent::SpawnConfig::default();
    if let Some(traces) = &traces {
        // Sub-agents continue the run's trace.
        spawn.hooks = traces.hooks();
    }
    let agent = create_agent(AgentOptions {
        provider: vec![provider],
        spawn,
        hooks: traces.as_ref().map(|t| t.hooks()).unwrap_or_default(),
        name: Some("zidane".into()),
        interceptors,
        approve_tool_call: approver,
        system: Some(system),
        model: args
            .model
            .iter()
            .chain(&loaded.fallback_models)
            .map(|m| m.as_str().into())
            .collect(),
        tools: preset
            .tools
            .clone()
            .with(zidane::tools::web_fetch(zidane::tools::WebFetchOptions {
                network: !args.no_network,
                allow_private: crate::permissions::private_hosts(&loaded.rules),
                ..Default::default()
            }))
            .with(deferral.tool()),
        behavior,
        // Every format gets a cap (OpenAI-compatible servers otherwise write
        // until their own limit).
        max_tokens: Some(
            args.max_tokens
                .unwrap_or(zidane::providers::anthropic::DEFAULT_MAX_TOKENS),
        ),
        execution: Some(match &context.wrap_execution {
            Some(wrap) => wrap(execution as Arc<dyn zidane::tools::ExecutionContext>),
            None => execution as Arc<dyn zidane::tools::ExecutionContext>,
        }),
        session_id: Some(session.to_owned()),
        skills: Some(zidane::agent::SkillsConfig {
            folders: skill_folders(args, cwd),
            ..Default::default()
        }),
        durable: Some(DurableOptions {
            runtime: context.runtime.clone(),
            // The interactive session continues an interrupted run itself
            // (at start) and heals one Esc left before the next prompt.
            on_interrupted: if args.resume && !context.interactive {
                OnInterrupted::Resume
            } else {
                OnInterrupted::Heal
            },
        }),
        mcp_servers: mcp,
        // Logins (`zidane mcp login`) keep their tokens in the sessions file.
        mcp_oauth_store: Some(Arc::new(store.clone()) as Arc<dyn zidane::mcp::oauth::OAuthStore>),
        mcp_elicitation: elicitation,
        checkpoints: (!args.no_checkpoints).then(|| Arc::clone(&context.checkpoints)),
        // Older turns are summarized before the window fills.
        auto_compact: Some(zidane::agent::AutoCompact {
            context_window: window.map(|w| w.tokens),
            ..Default::default()
        }),
        ..Default::default()
    })
    .map_err(|e| Failure::usage(e.to_string()))?;

    // A skill that cannot be read is named, never a failed run.
    agent.skills().await;
    for problem in agent.skill_problems() {
        notes.push(format!("skipped a skill: {problem}"));
    }
    let mut guards: Vec<Box<dyn std::any::Any + Send + Sync>> = vec![
        Box::new(context.instructions.offer_nested(agent.hooks(), cwd)),
        Box::new(deferral.install(agent.hooks())),
        Box::new(savings.install(agent.hooks())),
    ];
    if let Some(w) = window {
        guards.push(Box::new(crate::window::clamp_output(agent.hooks(), w.tokens)));
    }
    if let (Some(url), crate::setup::ProviderKind::OpenaiCompatible) = (&args.base_url, kind)
        && crate::setup::is_local_url(url)
    {
        guards.push(Box::new(crate::window::wait_for_free_slots(agent.hooks(), url)));
    }
    if !context.takes_images {
        guards.push(Box::new(crate::attach::without_images(agent.hooks())));
    }
    if !hooks.is_empty() {
        guards.push(Box::new(hooks.install(&agent)));
    }
    Ok(Built {
        agent,
        hooks,
        savings,
        planning,
        traces,
        notes,
        guards,
    })
}

/// `zidane -p "…"` (and any run without a terminal): one prompt, printed as
/// it streams, then the tally.
async fn one_shot(
    context: &Context,
    built: Built,
    session: &str,
    prompt: String,
    images: Vec<zidane::providers::ContentBlock>,
) -> Result<(), Failure> {
    let Built {
        agent,
        hooks,
        savings,
        planning,
        traces,
        guards: _guards,
        ..
    } = built;
    let args = &context.args;
    let printer = &context.printer;
    let _printing = printer.install(agent.hooks());
    let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
    let _collecting = collector.install(agent.hooks());

    // Ctrl-C (or SIGTERM, SIGHUP) suspends the run: the model stream stops,
    // a running tool call is cut off and stays pending, and `--resume`
    // continues from there. A second one exits at once (the session is
    // consistent either way: every saved write is a whole step).
    let interrupted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = Arc::clone(&interrupted);
    let stopping = agent.clone();
    let mut signals = StopSignals::listen();
    tokio::spawn(async move {
        if signals.next().await {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
            eprintln!("\nzidane: suspending the run (press Ctrl-C again to quit now)");
            let suspending = stopping.clone();
            tokio::spawn(async move {
                crate::suspend_now(&suspending).await;
            });
            if signals.next().await {
                std::process::exit(130);
            }
        }
    });

    let started_ms = now_ms();
    let outcome = if prompt.trim().is_empty() {
        // `--resume` alone: continue the interrupted run, if any.
        match agent.resume(DurableResumeOptions::default()).await {
            Ok(Some(output)) => Ok(output.into_stats()),
            Ok(None) => {
                eprintln!("zidane: session {session} has no interrupted run to continue");
                return Ok(());
            }
            Err(e) => Err(e),
        }
    } else {
        let source = if args.resume { "resume" } else { "startup" };
        let hook_context = hooks.session_start(source).await;
        let prompt = match hooks.submit(&prompt).await {
            Ok(prompt) => crate::command_hooks::with_context(&prompt, &hook_context),
            Err(reason) => {
                agent.destroy().await;
                return Err(Failure::run(format!(
                    "a UserPromptSubmit hook blocked the prompt: {reason}"
                )));
            }
        };
        let mut options = AgentRunOptions::prompt(prompt);
        options.thinking = args.thinking.into();
        options.parts = images;
        if args.plan {
            options.hooks = crate::plan::hooks();
            options.system_notes.push(crate::plan::NOTE.into());
        }
        // The answer streamed as it came: its text is not copied out again.
        let outcome = agent.run_stats(options).await;
        session::remember_folder(&agent, &context.cwd).await;
        match outcome {
            Ok(stats) if args.plan && stats.completed() => {
                carry_out_plan(&agent, args, session, printer, &planning, stats).await
            }
            other => other,
        }
    };
    hooks
        .tell("SessionEnd", "other", serde_json::json!({ "reason": "other" }))
        .await;
    // Background commands end with the program, each reported as it goes.
    agent.destroy().await;
    if let Some(traces) = &traces
        && let Err(e) = traces.flush().await
    {
        eprintln!("⚠ {e}");
    }
    if !args.no_checkpoints {
        crate::checkpoints::after_run(args.json, session, &context.checkpoints, started_ms).await;
    }
    let summary = collector.latest().map(|mut s| {
        s.context_savings = savings.snapshot();
        s
    });
    match outcome {
        Ok(stats) => {
            if stats.completed()
                && agent
                    .turns()
                    .last()
                    .is_some_and(|t| t.role == zidane::providers::Role::User)
            {
                eprintln!("zidane: the model ended its turn without an answer");
            }
            printer.finish(&stats, session);
            if args.summary
                && let Some(summary) = summary
            {
                // One line, so `--json --summary` stays JSON lines.
                emit(&format!("{}\n", serde_json::to_string(&summary).unwrap_or_default()))?;
            }
            if interrupted.load(std::sync::atomic::Ordering::SeqCst) || stats.suspended {
                return Err(Failure::interrupted(format!(
                    "interrupted; the session is saved and the run suspended (continue with `zidane --resume --session {session}`)"
                )));
            }
            Ok(())
        }
        Err(error @ AgentError::RunLeaseHeld(_)) => Err(Failure::usage(format!(
            "{error}; wait for it to finish, or stop it, then try again"
        ))),
        Err(error) => {
            let message = describe_failure(&error, args);
            printer.failed(&message, session);
            Err(Failure::run(message))
        }
    }
}

/// Stops `agent`'s run now: the model stream stops and a running call is
/// cut off and stays pending, for a resume (or healed by the next run).
pub(crate) async fn suspend_now(agent: &zidane::agent::Agent) {
    agent
        .suspend(SuspendOptions {
            grace: Some(std::time::Duration::ZERO),
        })
        .await;
}

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
