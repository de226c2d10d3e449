use super::*;

#[test]
fn the_built_in_table() {
    assert_eq!(
        known_window(ProviderKind::Anthropic, "claude-sonnet-4-5"),
        Some(200_000)
    );
    assert_eq!(known_window(ProviderKind::Openai, "gpt-4.1-mini"), Some(1_047_576));
    assert_eq!(known_window(ProviderKind::Openrouter, "openai/gpt-4o"), Some(128_000));
    assert_eq!(known_window(ProviderKind::OpenaiCompatible, "qwen2.5-coder"), None);
    assert_eq!(known_window(ProviderKind::OpenaiCompatible, "gpt-4o"), Some(128_000));
    assert_eq!(root_of("http://h:8080/v1/"), "http://h:8080");
}

#[tokio::test]
async fn a_given_window_wins_and_a_silent_server_is_assumed() {
    let given = resolve_window(
        Some(4096),
        ProviderKind::OpenaiCompatible,
        Some("m"),
        Some("http://127.0.0.1:9/v1"),
    )
    .await;
    assert_eq!(given.window.map(|w| w.tokens), Some(4096));
    assert_eq!(given.note, None);
    // Nothing listens on the discard port: the default is assumed, and said.
    let assumed = resolve_window(
        None,
        ProviderKind::OpenaiCompatible,
        Some("m"),
        Some("http://127.0.0.1:9/v1"),
    )
    .await;
    assert_eq!(assumed.window.map(|w| w.tokens), Some(DEFAULT_LOCAL_WINDOW));
    assert!(
        assumed
            .note
            .unwrap()
            .starts_with("the server did not say its context window")
    );
    let table = resolve_window(None, ProviderKind::Anthropic, Some("claude-opus-4"), None).await;
    assert_eq!(table.window.map(|w| w.source), Some("built-in table".to_owned()));
}
