//! A conversation's agent, assembled from its folder's set-up: the
//! provider, the tools and where they run, the permission rules and
//! command hooks, the approver, and everything installed on its bus.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use parking_lot::Mutex;
use zidane::agent::{
    AgentOptions, RunSummaryCollectorOptions, ToolCallApprover, ToolCallInterceptor, create_agent,
    create_run_summary_collector,
};
use zidane::durable::{DurableOptions, OnInterrupted};
use zidane::providers::{ProviderKind, ThinkingLevel};

use super::{Conversation, Inner, State};
use crate::Error;
use crate::ask::Approver;
use crate::command_hooks::CommandHooks;
use crate::event::Events;
use crate::permissions::Permissions;
use crate::savings::Savings;
use crate::settings::{Settings, Thinking};
use crate::setup::{Setup, ShellCalls};

type Guard = Box<dyn std::any::Any + Send + Sync>;

pub(super) async fn open(setup: Arc<Setup>, id: &str, events: Events, first: bool) -> Result<Conversation, Error> {
    let settings = &setup.settings;
    let mut notes = Vec::new();
    let provider = provider(&setup, &events, first, &mut notes)?;
    let Execution {
        context: execution,
        shells,
        note: sandbox_note,
    } = execution(&setup, id)?;
    if first {
        notes.push(sandbox_note);
    }
    // Hooks are the user's own programs: they run with the user's
    // permissions (unconfined), without provider keys or variables named
    // like credentials.
    let hooks = CommandHooks::new(
        settings.hooks.clone(),
        &settings.paths,
        id,
        settings.approve,
        settings.pass_env.clone(),
        None,
        events.clone(),
    );
    let permissions = Arc::new(
        Permissions::new(&settings.rules, settings.approve, &settings.cwd)
            .map_err(|e| Error::usage(format!("a permission rule: {e}")))?
            .with_mode(Arc::clone(&setup.approve))
            .with_hooks(Arc::clone(&hooks)),
    );
    let approver = Approver::new(
        events.clone(),
        setup.answers,
        settings.paths.clone(),
        Arc::clone(&hooks),
    );
    let planning = Arc::new(AtomicBool::new(settings.plan));
    let review: crate::review::finding::Slot = Arc::default();
    let mut interceptors: Vec<Arc<dyn ToolCallInterceptor>> = vec![
        Arc::new(crate::plan::PlanGate(Arc::clone(&planning))),
        Arc::new(crate::review::ReviewGate(Arc::clone(&review))),
    ];
    if !hooks.is_empty() {
        interceptors.push(Arc::new(crate::command_hooks::PreToolUse(Arc::clone(&hooks))));
    }
    interceptors.push(Arc::clone(&permissions) as Arc<dyn ToolCallInterceptor>);
    let savings = Savings::default();
    let traces = crate::setup::tracing_export(settings)?;
    let parts = Parts {
        provider,
        execution,
        interceptors,
        approver,
        traces: traces.as_ref(),
        savings: &savings,
        review: &review,
        lsp: lsp(settings, &events),
    };
    let (agent, deferral) = agent(&setup, id, parts)?;
    // A skill that cannot be read is named, never a failed run.
    agent.skills().await;
    for problem in agent.skill_problems() {
        notes.push(format!("skipped a skill: {problem}"));
    }
    let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
    let mut guards = install(&setup, &agent, &events, &hooks, shells);
    // Before the deferral counts the tools: outside a review,
    // `report_finding` is not offered.
    guards.push(Box::new(crate::review::hide_outside_reviews(
        agent.hooks(),
        Arc::clone(&review),
    )));
    if crate::compact::is_small(setup.window_tokens()) {
        // Before the deferral weighs them.
        guards.push(Box::new(crate::compact::install(agent.hooks())));
    }
    guards.push(Box::new(deferral.install(agent.hooks())));
    guards.push(Box::new(savings.install(agent.hooks())));
    guards.push(Box::new(collector.install(agent.hooks())));
    Ok(Conversation {
        inner: Arc::new(Inner {
            id: id.to_owned(),
            agent,
            hooks,
            permissions,
            savings,
            planning,
            review,
            collector,
            traces,
            events,
            notes,
            state: Mutex::new(fresh_state(&setup.settings)),
            _guards: guards,
            setup,
        }),
    })
}

/// A conversation's state before its first prompt.
fn fresh_state(settings: &Settings) -> State {
    State {
        hook_context: None,
        model: None,
        thinking: ThinkingLevel::from(settings.thinking),
        running: false,
        ended: false,
        goal: settings.goal.clone(),
    }
}

/// The provider the settings choose, told the window and the server's
/// progress reports.
fn provider(
    setup: &Setup,
    events: &Events,
    first: bool,
    notes: &mut Vec<String>,
) -> Result<Arc<dyn zidane::providers::Provider>, Error> {
    let settings = &setup.settings;
    let mut choice = settings.provider_choice();
    choice.context_window = setup.window_tokens();
    // llama.cpp streams its progress through the prompt when asked.
    choice.prompt_progress = setup
        .window
        .as_ref()
        .is_some_and(zidane::providers::Window::is_llama_cpp);
    let notices = events.clone();
    choice.on_notice = Some(Arc::new(move |line: &str| notices.notice(line)));
    if first && setup.kind == ProviderKind::OpenaiCompatible && settings.thinking != Thinking::Off {
        notes.push(
            "--thinking is not sent in the openai-compatible format (servers differ in how they take a reasoning \
             effort); it is ignored"
                .to_owned(),
        );
    }
    choice.build().map_err(|e| match e {
        zidane::providers::ChoiceError::Build(e) => Error::usage(format!("cannot set up the provider: {e}")),
        e => Error::usage(e.to_string()),
    })
}

/// Where the conversation's commands run.
struct Execution {
    context: Arc<dyn zidane::tools::ExecutionContext>,
    /// The `shell` calls a wrapped context ties to commands.
    shells: Option<ShellCalls>,
    /// How commands are confined.
    note: String,
}

/// Where the conversation's commands run.
fn execution(setup: &Setup, id: &str) -> Result<Execution, Error> {
    // Background commands' output lives beside the sessions, per session.
    let task_dir = setup.store.path().parent().map(|dir| dir.join("tasks").join(id));
    let (execution, note) = crate::setup::execution(&setup.settings, task_dir)?;
    let execution = execution as Arc<dyn zidane::tools::ExecutionContext>;
    Ok(match &setup.wrap_execution {
        Some(wrap) => {
            let shells = ShellCalls::default();
            Execution {
                context: wrap(execution, shells.clone()),
                shells: Some(shells),
                note,
            }
        }
        None => Execution {
            context: execution,
            shells: None,
            note,
        },
    })
}

/// What the agent is made of beside the set-up.
struct Parts<'a> {
    provider: Arc<dyn zidane::providers::Provider>,
    execution: Arc<dyn zidane::tools::ExecutionContext>,
    interceptors: Vec<Arc<dyn ToolCallInterceptor>>,
    approver: Arc<Approver>,
    traces: Option<&'a zidane::otel::OtelExporter>,
    savings: &'a Savings,
    review: &'a crate::review::finding::Slot,
    lsp: Option<zidane::lsp::Lsp>,
}

/// The folder's language servers (the configuration's, the known ones
/// found on `PATH`); `None` when none is on.
fn lsp(settings: &Settings, events: &Events) -> Option<zidane::lsp::Lsp> {
    let servers: Vec<_> = settings.lsp.iter().map(|(s, _)| s.clone()).collect();
    if !servers.iter().any(|s| s.enabled) {
        return None;
    }
    let notices = events.clone();
    let mut options = zidane::lsp::LspOptions::default();
    if let Some(wait) = settings.lsp_wait {
        options.settle = std::time::Duration::from_secs(wait);
        options.request_timeout = options.request_timeout.max(options.settle);
    }
    Some(zidane::lsp::Lsp::new(zidane::lsp::LspOptions {
        root: Some(settings.cwd.clone()),
        servers,
        on_notice: Some(Arc::new(move |line: &str| notices.notice(line))),
        ..options
    }))
}

/// The agent, and the deferral of its tools.
fn agent(
    setup: &Setup,
    id: &str,
    parts: Parts<'_>,
) -> Result<(zidane::agent::Agent, crate::deferred::Deferral), Error> {
    let settings = &setup.settings;
    let mut preset_options = zidane::presets::BasicOptions::in_folder(&settings.cwd);
    preset_options.pass_env = settings.pass_env.clone();
    preset_options.reduce_output = settings.reduce_output;
    // The program confines commands itself (`Setup`'s execution), with its
    // own notes; the preset's context is not used.
    preset_options.sandbox = zidane::tools::Sandbox::off();
    let preset = zidane::presets::basic(preset_options);
    // Past a share of the window, the least used tools wait for
    // `tool_search`.
    let deferral = crate::deferred::Deferral::new(
        setup.window_tokens().unwrap_or(u32::MAX),
        settings.defer_tools_above,
        preset
            .tools
            .names()
            .map(str::to_owned)
            .chain(["web_fetch", "skill", crate::review::finding::TOOL].map(str::to_owned)),
        parts.savings.clone(),
    );
    // A small window gets the compact prompt.
    let base = if crate::compact::is_small(setup.window_tokens()) {
        crate::compact::system(&preset.system)
    } else {
        preset.system.clone()
    };
    let mut system = setup.instructions.system_prompt(&base);
    if let Some(extra) = &settings.system {
        system.push_str("\n\n");
        system.push_str(extra);
    }
    let elicitation = setup.answers.then(|| parts.approver.elicitation());
    let mut spawn = zidane::agent::SpawnConfig::default();
    if let Some(traces) = parts.traces {
        // Sub-agents continue the run's trace.
        spawn.hooks = traces.hooks();
    }
    let agent = create_agent(AgentOptions {
        provider: vec![parts.provider],
        spawn,
        hooks: parts.traces.map(|t| t.hooks()).unwrap_or_default(),
        name: Some("zidane".into()),
        interceptors: parts.interceptors,
        approve_tool_call: Some(parts.approver as Arc<dyn ToolCallApprover>),
        system: Some(system),
        model: settings
            .model
            .iter()
            .chain(&settings.fallback_models)
            .map(|m| m.as_str().into())
            .collect(),
        tools: preset
            .tools
            .clone()
            .with(zidane::tools::web_fetch(zidane::tools::WebFetchOptions {
                network: settings.network,
                allow_private: crate::permissions::private_hosts(&settings.rules),
                ..Default::default()
            }))
            .with(deferral.tool())
            .with(crate::review::finding::tool(Arc::clone(parts.review))),
        behavior: behavior(settings),
        // Every format gets a cap (OpenAI-compatible servers otherwise write
        // until their own limit).
        max_tokens: Some(
            settings
                .max_tokens
                .unwrap_or(zidane::providers::anthropic::DEFAULT_MAX_TOKENS),
        ),
        execution: Some(parts.execution),
        session_id: Some(id.to_owned()),
        skills: Some(zidane::agent::SkillsConfig {
            folders: crate::paths::skill_folders(&settings.skills, &settings.cwd),
            ..Default::default()
        }),
        durable: Some(durable(setup)),
        mcp_servers: crate::setup::mcp_servers(settings)?,
        // Logins (`zidane mcp login`) keep their tokens in the sessions file.
        mcp_oauth_store: Some(Arc::new(setup.store.clone()) as Arc<dyn zidane::mcp::oauth::OAuthStore>),
        mcp_elicitation: elicitation,
        checkpoints: settings.checkpoints.then(|| Arc::clone(&setup.checkpoints)),
        lsp: parts.lsp,
        // Older turns are summarized before the window fills.
        auto_compact: Some(zidane::agent::AutoCompact {
            context_window: setup.window_tokens(),
            ..Default::default()
        }),
        ..Default::default()
    })
    .map_err(|e| Error::usage(e.to_string()))?;
    Ok((agent, deferral))
}

/// The sessions file as the runtime: a run of its own continues an
/// interrupted one (`--resume`); a conversation that lives on continues it
/// when opened, and heals one an interruption left before the next prompt.
fn durable(setup: &Setup) -> DurableOptions {
    DurableOptions {
        runtime: setup.runtime.clone(),
        on_interrupted: if setup.settings.resume && !setup.answers {
            OnInterrupted::Resume
        } else {
            OnInterrupted::Heal
        },
    }
}

/// The run's behaviour: limits, retries, the background watchdog.
fn behavior(settings: &Settings) -> zidane::agent::Behavior {
    let mut behavior = zidane::agent::Behavior {
        // A background command silent this long is pointed out to the model.
        background_stall_watchdog: Some(std::time::Duration::from_secs(120)),
        ..Default::default()
    };
    if let Some(max) = settings.max_turns {
        behavior.max_turns = Some(max);
    }
    behavior.max_cost_usd = settings.max_cost;
    if let Some(n) = settings.retries {
        behavior.retry.max_attempts = n;
        behavior.retry.transport_max_attempts = n;
    }
    behavior
}

/// Everything installed on the agent's bus but the deferral, the savings
/// and the summary: the feed of events, nested instruction files, the
/// output cap and the local server's slot, images for a model that takes
/// none, the command hooks, the cache-break logger, the `shell` calls.
fn install(
    setup: &Setup,
    agent: &zidane::agent::Agent,
    events: &Events,
    hooks: &Arc<CommandHooks>,
    shells: Option<ShellCalls>,
) -> Vec<Guard> {
    let bus = agent.hooks();
    let settings = &setup.settings;
    let mut guards: Vec<Guard> = vec![
        Box::new(crate::feed::install(bus, events)),
        Box::new(setup.instructions.offer_nested(bus, &settings.cwd)),
        // Cache breaks become `cache:break` events; the logger's own lines
        // are not printed.
        Box::new(zidane::agent::install_cache_break_logger(
            bus,
            zidane::agent::CacheBreakLoggerOptions {
                log: Some(Arc::new(|_: &str| {})),
                ..Default::default()
            },
        )),
    ];
    if let Some(tokens) = setup.window_tokens() {
        guards.push(Box::new(crate::window::clamp_output(bus, tokens)));
    }
    if let (Some(url), ProviderKind::OpenaiCompatible) = (&settings.base_url, setup.kind)
        && zidane::providers::is_local_url(url)
    {
        guards.push(Box::new(crate::window::wait_for_free_slots(bus, url, events)));
    }
    if !setup.takes_images {
        guards.push(Box::new(crate::attach::without_images(bus)));
    }
    if !hooks.is_empty() {
        guards.push(Box::new(hooks.install(agent)));
    }
    if let Some(shells) = shells {
        // Each `shell` call's id, known before it runs (what a command run
        // elsewhere is tied to).
        guards.push(Box::new(bus.on_sync::<zidane::agent::events::ToolDispatched, _>(
            move |ev, _| {
                if ev.name() == "shell" && ev.input()["run_in_background"] != true {
                    let command = ev.input()["command"].as_str().unwrap_or_default().to_owned();
                    shells.push(command, ev.call_id().to_owned());
                }
                Ok(())
            },
        )));
    }
    guards
}
