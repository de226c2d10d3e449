//! One configured server: its live client, connected (again) on demand.

use parking_lot::Mutex;
use std::sync::Arc;

use zidane_core::events::McpConnect;
use zidane_hooks::HookBus;

use crate::config::McpServerConfig;
use crate::error::McpError;
use crate::handler::{Client, Progress, observe};
use crate::transport::spawn;
use zidane_core::events::McpConnectInit;

/// One configured server: its client (when connected) and its tools.
pub(crate) struct Server {
    pub(crate) config: McpServerConfig,
    pub(crate) hooks: HookBus,
    pub(crate) client: tokio::sync::Mutex<Option<Arc<Client>>>,
    pub(crate) progress: Progress,
    /// Where the HTTP transport leaves a 401's challenge.
    pub(crate) challenge: Mutex<Option<Arc<Mutex<Option<String>>>>>,
}

impl Server {
    /// The challenge of a 401 the server answered since connecting.
    pub(crate) fn challenge(&self) -> Option<String> {
        let slot = self.challenge.lock();
        slot.as_ref().and_then(|c| c.lock().take())
    }
}

impl Server {
    /// The live client, connecting (again) when there is none.
    pub(crate) async fn client(&self) -> Result<Arc<Client>, McpError> {
        self.connect(true).await
    }

    /// The live client; `on_demand` says whether a connection made now
    /// was deferred to the first call (`mcp:connect`'s `lazy`) rather than
    /// made by the bootstrap.
    pub(crate) async fn connect(&self, on_demand: bool) -> Result<Arc<Client>, McpError> {
        let mut slot = self.client.lock().await;
        if let Some(client) = slot.as_ref().filter(|c| !c.is_transport_closed()) {
            return Ok(Arc::clone(client));
        }
        let challenge = Arc::new(Mutex::new(None));
        *self.challenge.lock() = Some(Arc::clone(&challenge));
        let client = Arc::new(spawn(&self.config, &self.hooks, Arc::clone(&self.progress), challenge).await?);
        let lazy = on_demand;
        *slot = Some(Arc::clone(&client));
        drop(slot);
        let tools = client
            .list_all_tools()
            .await
            .map(|t| t.iter().map(|t| t.name.to_string()).collect())
            .unwrap_or_default();
        let mut ev = McpConnect::new(McpConnectInit {
            lazy,
            name: self.config.name.clone(),
            tools,
            transport: self.config.transport.kind(),
        });
        observe(&self.hooks, &mut ev).await;
        Ok(client)
    }

    /// Forgets a client whose server died, so the next call reconnects.
    pub(crate) async fn forget(&self) {
        *self.client.lock().await = None;
    }
}

trait TransportState {
    fn is_transport_closed(&self) -> bool;
}

impl TransportState for Client {
    fn is_transport_closed(&self) -> bool {
        self.is_closed()
    }
}
