use serde_json::Value;

use super::{client_info_with, with_defaults};

#[test]
fn schema_defaults_fill_what_the_answer_left_out() {
    let schema = serde_json::json!({"type": "object", "properties": {
        "name": {"type": "string", "default": "Ada"},
        "age": {"type": "integer", "default": 36},
        "mail": {"type": "string"},
    }});
    let mut content = serde_json::Map::new();
    content.insert("age".into(), 40.into());
    with_defaults(&mut content, &schema);
    assert_eq!(Value::Object(content), serde_json::json!({"age": 40, "name": "Ada"}));
}

#[test]
fn initialize_names_a_handshake_version_and_this_client() {
    let info = serde_json::to_value(client_info_with(false)).unwrap_or_default();
    assert_eq!(
        info,
        serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "zidane", "version": env!("CARGO_PKG_VERSION")}
        })
    );
}
