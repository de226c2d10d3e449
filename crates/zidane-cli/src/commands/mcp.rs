//! `zidane mcp login SERVER`: the OAuth login of one HTTP MCP server. The
//! URL to open is printed (and handed to the desktop's opener when there
//! is one); the tokens go to the sessions file, never to the screen.

use std::sync::Arc;

use zidane_app::{Flags, Given};

use super::Failure;

pub(crate) async fn login(flags: &Flags, given: &Given, name: &str) -> Result<(), Failure> {
    let settings = super::settings(flags, given, false)?;
    let runtime = zidane_app::open_runtime(settings.store.as_deref())?;
    let store = runtime.sqlite().clone();
    let servers = zidane_app::mcp_servers(&settings)?;
    let Some(mut config) = servers.into_iter().find(|s| s.name == name) else {
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
