//! `zidane-restate`: serves the `ZidaneAgent` Virtual Object over HTTP/2
//! for a Restate server to register as a deployment. Each session's agent
//! has the basic coding tools in a folder of its own under `--workspace`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use zidane_agent::{AgentOptions, AutoCompact};
use zidane_loop::Behavior;
use zidane_provider::{Provider, ProviderChoice, ProviderKind};
use zidane_restate::ZidaneAgent;

const USAGE: &str = "\
zidane-restate: zidane agents as a Restate service (Virtual Object `ZidaneAgent`, keyed by session id)

Usage: zidane-restate [OPTIONS]

Options:
  --bind ADDR         where the endpoint listens (default 127.0.0.1:9080)
  --provider NAME     anthropic (ANTHROPIC_API_KEY), openai (OPENAI_API_KEY), openai-responses,
                      openrouter (OPENROUTER_API_KEY), or openai-compatible (a local or other server
                      speaking OpenAI's format, with --base-url and --model; OPENAI_API_KEY if it wants
                      one); default: whichever key is set
  --base-url URL      the provider's base URL
  --model MODEL       the model
  --workspace DIR     each session works in DIR/<session id> (default: the current folder, shared)
  --max-turns N       a turn cap for every run (a run's request may lower it)
  --context-window N  the model's context window in tokens: when a request reaches 80% of it, older tool
                      results are left out, then older turns summarized (default: the provider's, 200,000
                      for Anthropic, 32,768 for openai-compatible; set a local server's)
  --ingress URL       the Restate ingress (http://127.0.0.1:8080): `spawn` then starts each sub-agent
                      as an invocation of its own, which a crash does not restart from scratch
  --identity-key KEY  answer only requests a Restate server signed with the private key of KEY
                      (`publickeyv1_…`; repeatable, e.g. while keys rotate)
  -h, --help          this text

Register it with a Restate server (`restate deployments register http://ADDR`), then start runs at
the ingress: POST /ZidaneAgent/<session>/run {\"prompt\": \"...\"}.";

struct Args {
    bind: SocketAddr,
    provider: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    workspace: Option<PathBuf>,
    max_turns: Option<u32>,
    context_window: Option<u32>,
    identity_keys: Vec<String>,
    ingress: Option<String>,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        bind: SocketAddr::from(([127, 0, 0, 1], 9080)),
        provider: None,
        base_url: None,
        model: None,
        workspace: None,
        max_turns: None,
        context_window: None,
        identity_keys: Vec::new(),
        ingress: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "-h" || flag == "--help" {
            return Err(String::new());
        }
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--bind" => {
                let v = value()?;
                args.bind = v
                    .parse()
                    .map_err(|_| format!("--bind: `{v}` is not an address like 127.0.0.1:9080"))?;
            }
            "--provider" => args.provider = Some(value()?),
            "--base-url" => args.base_url = Some(value()?),
            "--model" => args.model = Some(value()?),
            "--workspace" => args.workspace = Some(PathBuf::from(value()?)),
            "--identity-key" => args.identity_keys.push(value()?),
            "--ingress" => {
                let v = value()?;
                let valid = v
                    .parse::<http::Uri>()
                    .is_ok_and(|u| matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some());
                if !valid {
                    return Err(format!("--ingress: `{v}` is not a URL like http://127.0.0.1:8080"));
                }
                args.ingress = Some(v);
            }
            "--max-turns" => {
                let v = value()?;
                args.max_turns = Some(v.parse().map_err(|_| format!("--max-turns: `{v}` is not a number"))?);
            }
            "--context-window" => {
                let v = value()?;
                let tokens = v.parse().ok().filter(|n: &u32| *n > 0);
                args.context_window =
                    Some(tokens.ok_or_else(|| format!("--context-window: `{v}` is not a number of tokens"))?);
            }
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    Ok(args)
}

/// The provider the flags name, chosen by the rules the `zidane` program
/// follows (the environment's key, the `/v1` rule, a compatible server's
/// required flags and its fallback to tool calls in the text).
fn provider(args: &Args) -> Result<Arc<dyn Provider>, String> {
    let kind = match args.provider.as_deref() {
        Some(name) => Some(name.parse::<ProviderKind>().map_err(|e| e.to_string())?),
        None => None,
    };
    let choice = ProviderChoice {
        kind,
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        context_window: args.context_window,
        ..Default::default()
    };
    choice.build().map_err(|e| e.to_string())
}

/// A session's folder: its id made safe as one path component.
fn session_folder(root: &std::path::Path, session: &str) -> PathBuf {
    let safe: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = if safe.is_empty() || safe.chars().all(|c| c == '.') {
        "_".to_owned()
    } else {
        safe
    };
    root.join(safe)
}

/// Where checkpoint contents are kept: `DIR/.checkpoints.db` under
/// `--workspace`, else `.zidane/checkpoints.db` in the shared folder (which
/// its own checkpoints leave out).
fn checkpoint_contents(
    workspace: Option<&std::path::Path>,
    cwd: &std::path::Path,
) -> Result<zidane_agent::SqliteStore, String> {
    let path = match workspace {
        Some(root) => root.join(".checkpoints.db"),
        None => cwd.join(".zidane").join("checkpoints.db"),
    };
    zidane_agent::SqliteStore::open(&path).map_err(|e| format!("{}: {e}", path.display()))
}

#[allow(clippy::print_stderr)] // the program's own messages
fn fail(message: &str) -> ExitCode {
    if message.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    eprintln!("zidane-restate: {message}");
    ExitCode::from(2)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(message) => return fail(&message),
    };
    let provider = match provider(&args) {
        Ok(p) => p,
        Err(message) => return fail(&message),
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => return fail(&format!("the current folder cannot be read: {e}")),
    };
    let workspace = args.workspace.clone();
    let max_turns = args.max_turns;
    let context_window = args.context_window;
    let object = ZidaneAgent::new(move |session: &str| {
        let root = match &workspace {
            Some(root) => {
                let folder = session_folder(root, session);
                std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
                folder
            }
            None => cwd.clone(),
        };
        let preset = zidane_tools::basic(zidane_tools::BasicOptions::in_folder(&root));
        // Folder checkpoints: records in the object's state, contents in a
        // file of the workspace (outside every session's folder).
        let contents = checkpoint_contents(workspace.as_deref(), &cwd)?;
        let mut config = zidane_agent::checkpoints::CheckpointsConfig::new(&root);
        if workspace.is_none() {
            // The shared folder holds the contents file itself.
            let dir = cwd.join(".zidane");
            config.exclude.push(std::fs::canonicalize(&dir).unwrap_or(dir));
        }
        let checkpoints = zidane_agent::checkpoints::Checkpoints::new(
            Arc::new(contents) as Arc<dyn zidane_core::checkpoint::CheckpointStore>,
            config,
        );
        Ok(AgentOptions {
            checkpoints: Some(Arc::new(checkpoints)),
            provider: vec![Arc::clone(&provider)],
            name: Some("zidane".into()),
            system: Some(preset.system),
            tools: preset.tools,
            execution: Some(preset.execution),
            max_tokens: Some(zidane_provider::anthropic::DEFAULT_MAX_TOKENS),
            behavior: Behavior {
                max_turns,
                ..Default::default()
            },
            // Older results are left out and older turns summarized before
            // the window fills; the summary is journaled, so a replay does
            // not ask for it again.
            auto_compact: Some(AutoCompact {
                context_window,
                ..Default::default()
            }),
            ..Default::default()
        })
    });
    let object = match &args.ingress {
        Some(url) => object.with_ingress(url.clone()),
        None => object,
    };
    let endpoint = match zidane_restate::endpoint_with_identity_keys(object, &args.identity_keys) {
        Ok(endpoint) => endpoint,
        Err(e) => return fail(&format!("--identity-key: {e}")),
    };
    let listener = match tokio::net::TcpListener::bind(args.bind).await {
        Ok(l) => l,
        Err(e) => return fail(&format!("cannot listen on {}: {e}", args.bind)),
    };
    zidane_restate::serve_endpoint(endpoint, listener, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    ExitCode::SUCCESS
}
