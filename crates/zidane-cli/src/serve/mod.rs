//! `zidane serve`: sessions that outlive the terminal. One process holds
//! any number of sessions, in any folders, and serves them to clients over
//! WebSocket at `ws://ADDR/acp`: the Agent Client Protocol, one JSON-RPC
//! message per text frame (the same methods, updates and errors as
//! `zidane acp`), with the program's own extensions under `_zidane/` and
//! `_meta.zidane`.
//!
//! - Where: `127.0.0.1` on a free port (printed, and written to
//!   `$ZIDANE_HOME/serve.json`), `--listen ADDR`, or `--socket PATH` (a
//!   Unix socket, mode 0600). A non-loopback address needs TLS
//!   (`--tls-cert`, `--tls-key`) or `--insecure-no-tls`.
//! - Who: every connection presents the token (`$ZIDANE_HOME/serve-token`,
//!   made on the first start, mode 0600; `--print-token` prints it) in
//!   `Authorization: Bearer TOKEN`, or, from a browser, as the WebSocket
//!   subprotocol `zidane.token.TOKEN` beside `zidane.v1`. A connection
//!   without it, from a web page of another origin, or naming another host
//!   (DNS rebinding) is refused before any method runs (`http.rs`).
//! - When: the schedules of its sessions file (`zidane schedule add`) fire
//!   as served sessions (`schedules.rs`).
//! - How long: a run goes on when its client goes; a question waits for
//!   the next client (up to `--question-timeout`); `kill -9` of the server
//!   loses nothing written, and at the next start every interrupted run
//!   continues.

mod http;
mod listen;
mod page;
mod pump;
mod schedules;
mod token;

use std::path::PathBuf;
use std::sync::Arc;

pub(crate) use self::pump::config as ws_config;
use crate::acp::Hub;
use crate::cli::ServeArgs;
use crate::out::Failure;

/// Runs the server until it is stopped (Ctrl-C, SIGTERM, SIGHUP).
pub(crate) async fn run(args: ServeArgs, flags: zidane_app::Flags, given: zidane_app::Given) -> Result<(), Failure> {
    let home = zidane_app::paths::user_dir().ok_or_else(|| Failure::usage("no home folder for the server's token"))?;
    let token = token::load_or_create(&home).map_err(|e| Failure::run(format!("the server's token: {e}")))?;
    if args.print_token {
        println!("{token}");
        return Ok(());
    }
    let runtime = zidane_app::open_runtime(flags.store.as_deref())?;
    let mut hub = Hub::new(flags, given, runtime, true);
    if let Some(secs) = args.question_timeout
        && let Some(hub) = Arc::get_mut(&mut hub)
    {
        hub.question_timeout = std::time::Duration::from_secs(secs);
    }
    let listener = listen::Listener::open(&args).await?;
    let address = listener.describe();
    let state = Arc::new(http::State {
        hub: Arc::clone(&hub),
        token,
        host: listener.host(),
    });
    write_state_file(&home, &listener)?;
    eprintln!(
        "zidane serve: listening on {} ({address}); clients present the token `zidane serve --print-token` prints",
        listener.url()
    );
    if let Some(warning) = listener.warning() {
        eprintln!("zidane serve: {warning}");
    }
    let continued = hub.continue_interrupted().await;
    if !continued.is_empty() {
        eprintln!(
            "zidane serve: continuing {} interrupted run(s): {}",
            continued.len(),
            continued.join(", ")
        );
    }
    // The server outlives the terminal it started in: SIGHUP does not stop it.
    let mut signals = crate::signals::StopSignals::listen_past_hangup();
    tokio::select! {
        () = listener.accept_loop(state) => {}
        () = schedules::run(Arc::clone(&hub), args.max_scheduled_runs) => {}
        () = end_idle(&hub) => {}
        _ = signals.next() => eprintln!("zidane serve: stopping; running turns are suspended (they continue at the next start)"),
    }
    hub.end_all().await;
    // The address stays for the next start; clients read it is stopped.
    mark_stopped(&home);
    Ok(())
}

/// How long a session may sit with no client and nothing going on before
/// the server ends it (it opens again from the sessions file when loaded).
const IDLE: std::time::Duration = std::time::Duration::from_secs(600);

/// Ends idle sessions now and then, so that a server browsed through many
/// sessions holds only those in use.
async fn end_idle(hub: &Hub) {
    let mut sweep = tokio::time::interval(IDLE);
    sweep.tick().await;
    loop {
        sweep.tick().await;
        hub.end_idle().await;
    }
}

/// `$ZIDANE_HOME/serve.json`: where the server listens (never the token),
/// for `zidane attach` and `zidane acp --connect` to find it.
fn write_state_file(home: &std::path::Path, listener: &listen::Listener) -> Result<(), Failure> {
    let state = serde_json::json!({
        "url": listener.url(),
        "address": listener.describe(),
        "socket": listener.socket_path(),
        "tls": listener.tls(),
        "pid": std::process::id(),
    });
    zidane::tools::private_dir(home).map_err(|e| Failure::run(format!("cannot create {}: {e}", home.display())))?;
    let path = home.join("serve.json");
    // Written whole, then renamed over: a client never reads half of it.
    let partial = home.join(format!("serve.json.{}", std::process::id()));
    token::write_private(&partial, format!("{state:#}\n").as_bytes())
        .and_then(|()| std::fs::rename(&partial, &path))
        .map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display())))
}

fn mark_stopped(home: &std::path::Path) {
    let path = home.join("serve.json");
    let Some(mut state) = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
    else {
        return;
    };
    // Another server may have started since, and written its own.
    if state["pid"] != std::process::id() {
        return;
    }
    state["stopped"] = serde_json::Value::Bool(true);
    let _ = token::write_private(&path, format!("{state:#}\n").as_bytes());
}

/// The URL of the server this user runs, from `$ZIDANE_HOME/serve.json`
/// (`None` once it stopped).
pub(crate) fn running_url() -> Option<String> {
    let home: PathBuf = zidane_app::paths::user_dir()?;
    let text = std::fs::read_to_string(home.join("serve.json")).ok()?;
    let state: serde_json::Value = serde_json::from_str(&text).ok()?;
    if state["stopped"] == true {
        return None;
    }
    state["url"].as_str().map(str::to_owned)
}
