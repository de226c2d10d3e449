//! The client side of a connection: what the client says of itself, and
//! the server's notifications and elicitation requests.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use serde_json::Value;
use tokio::sync::mpsc;
use zidane_hooks::{HookBus, HookEvent};

pub(crate) type Progress = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<ProgressNotificationParam>>>>;

/// Receives server notifications: progress goes to the call that asked.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) progress: Progress,
    pub(crate) server: String,
    pub(crate) elicitation: Option<crate::config::ElicitationHandler>,
}

/// What the client says of itself in `initialize`: a protocol version that
/// has the handshake (`2025-11-25`; rmcp's default names a version without
/// one), the capabilities it has (progress is a notification, not a
/// capability; roots, sampling and elicitation are not offered), and its own
/// name and version.
/// Form elicitation is offered when someone answers it.
pub(crate) fn client_info_with(elicitation: bool) -> rmcp::model::ClientConfig {
    let mut capabilities = rmcp::model::ClientCapabilities::default();
    if elicitation {
        let mut offered = rmcp::model::ElicitationCapability::new();
        offered.form = Some(rmcp::model::FormElicitationCapability::new());
        capabilities.elicitation = Some(offered);
    }
    rmcp::model::ClientConfig::new(
        capabilities,
        rmcp::model::Implementation::new("zidane", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(rmcp::model::ProtocolVersion::V_2025_11_25)
}

impl ClientHandler for Handler {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        client_info_with(self.elicitation.is_some())
    }

    fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<rmcp::model::ElicitResult, rmcp::ErrorData>> + Send + '_ {
        use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
        async move {
            let (
                Some(answer),
                ElicitRequestParams::FormElicitationParams {
                    message,
                    requested_schema,
                    ..
                },
            ) = (&self.elicitation, request)
            else {
                // Nobody to ask (or a URL to visit, which this client does not open).
                return Ok(ElicitResult::new(ElicitationAction::Decline));
            };
            let schema = serde_json::to_value(&requested_schema).unwrap_or(Value::Null);
            let asked = crate::config::ElicitationRequest {
                server: self.server.clone(),
                message,
                schema: schema.clone(),
            };
            Ok(match answer(asked).await {
                crate::config::ElicitationAnswer::Accept(mut content) => {
                    with_defaults(&mut content, &schema);
                    ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
                }
                crate::config::ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
                crate::config::ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
            })
        }
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let token = match &params.progress_token.0 {
            rmcp::model::NumberOrString::String(s) => s.to_string(),
            rmcp::model::NumberOrString::Number(n) => n.to_string(),
        };
        if let Some(tx) = self.progress.lock().get(&token) {
            let _ = tx.send(params);
        }
        std::future::ready(())
    }
}

/// Fills each property the answer left out with its schema `default`.
fn with_defaults(content: &mut serde_json::Map<String, Value>, schema: &Value) {
    let Some(properties) = schema["properties"].as_object() else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

pub(crate) type Client = RunningService<RoleClient, Handler>;

pub(crate) async fn observe<E: HookEvent>(hooks: &HookBus, event: &mut E) {
    hooks.observe(event).await;
}

#[cfg(test)]
mod tests;
