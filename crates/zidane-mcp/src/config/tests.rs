use super::*;

#[test]
fn oauth_is_read_from_its_three_spellings() {
    let text = r#"{"mcpServers": {
        "a": {"url": "http://h/mcp", "auth": "oauth"},
        "b": {"url": "http://h/mcp", "authMethod": "mcpOAuth"},
        "c": {"url": "http://h/mcp", "oauth": {"clientId": "id", "clientSecret": "s", "scopes": ["x"], "callbackPort": 8976}},
        "d": {"url": "http://h/mcp"}
    }}"#;
    let servers = parse_mcp_config(text).unwrap();
    let oauth: Vec<_> = servers.iter().map(|s| s.oauth.clone()).collect();
    assert_eq!(oauth[0], Some(crate::oauth::OAuthConfig::default()));
    assert_eq!(oauth[1], Some(crate::oauth::OAuthConfig::default()));
    let c = oauth[2].clone().unwrap();
    assert_eq!(c.client_id.as_deref(), Some("id"));
    assert_eq!(c.callback_port, Some(8976));
    assert!(!format!("{c:?}").contains("\"s\""), "the secret never prints");
    assert_eq!(oauth[3], None);
}

#[test]
fn server_timeouts_come_from_the_configuration_and_bad_ones_are_named() {
    let text = r#"{"mcpServers": {"slow": {"command": "srv", "startupTimeoutSec": 90, "callTimeoutSec": 1.5}}}"#;
    let configs = parse_mcp_config(text).unwrap();
    assert_eq!(configs[0].connect_timeout, Duration::from_secs(90));
    assert_eq!(configs[0].call_timeout, Duration::from_millis(1500));
    let defaults = parse_mcp_config(r#"{"mcpServers": {"s": {"command": "srv"}}}"#).unwrap();
    assert_eq!(defaults[0].connect_timeout, Duration::from_secs(30));
    let bad = parse_mcp_config(r#"{"mcpServers": {"s": {"command": "srv", "startupTimeoutSec": -1}}}"#).unwrap_err();
    assert!(
        bad.to_string()
            .contains("`mcpServers.s.startupTimeoutSec` must be a positive number of seconds"),
        "{bad}"
    );
}
