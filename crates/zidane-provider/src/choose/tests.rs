use super::*;

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

/// The environment, the kind asked for, and the kind chosen (or the error).
type KindCase<'a> = (&'a [(&'a str, &'a str)], Option<&'a str>, Result<ProviderKind, &'a str>);

#[test]
fn the_kind_comes_from_the_first_key_in_the_environment() {
    let cases: &[KindCase<'_>] = &[
        (
            &[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")],
            None,
            Ok(ProviderKind::Anthropic),
        ),
        (&[("ANTHROPIC_AUTH_TOKEN", "t")], None, Ok(ProviderKind::Anthropic)),
        (
            &[("OPENAI_API_KEY", "o"), ("OPENROUTER_API_KEY", "r")],
            None,
            Ok(ProviderKind::Openai),
        ),
        (&[("OPENROUTER_API_KEY", "r")], None, Ok(ProviderKind::Openrouter)),
        (
            &[],
            Some("http://127.0.0.1:8080/v1"),
            Ok(ProviderKind::OpenaiCompatible),
        ),
        (&[], None, Err("no provider is configured")),
    ];
    for (env, base, expected) in cases {
        let got = ProviderKind::from_vars(*base, &vars(env)).map_err(|e| e.to_string());
        match (got, expected) {
            (Ok(kind), Ok(want)) => assert_eq!(kind, *want, "{env:?}"),
            (Err(e), Err(want)) => assert!(e.starts_with(want), "{e}"),
            (got, want) => panic!("{env:?}: {got:?} against {want:?}"),
        }
    }
}

#[test]
fn kinds_read_and_write_their_names() {
    for kind in ProviderKind::ALL {
        assert_eq!(kind.name().parse::<ProviderKind>().unwrap(), kind);
    }
    let e = "gemini".parse::<ProviderKind>().unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown provider `gemini` (one of anthropic, openai, openai-responses, openrouter, openai-compatible)"
    );
}

#[test]
fn a_compatible_server_needs_its_url_and_model() {
    let choice = |base: Option<&str>, model: Option<&str>| ProviderChoice {
        kind: Some(ProviderKind::OpenaiCompatible),
        base_url: base.map(str::to_owned),
        model: model.map(str::to_owned),
        ..Default::default()
    };
    let none = vars(&[]);
    let missing_url = choice(None, Some("m")).build_with(&none).err().unwrap();
    assert!(matches!(missing_url, ChoiceError::MissingBaseUrl), "{missing_url}");
    let missing_model = choice(Some("http://127.0.0.1:1/v1"), None)
        .build_with(&none)
        .err()
        .unwrap();
    assert!(matches!(missing_model, ChoiceError::MissingModel), "{missing_model}");
    let built = choice(Some("http://127.0.0.1:1/v1"), Some("m"))
        .build_with(&none)
        .unwrap();
    assert_eq!(built.name(), "openai-compatible");
}

#[test]
fn a_missing_key_names_its_variable() {
    let choice = ProviderChoice {
        kind: Some(ProviderKind::Openrouter),
        api_key_env: Some("MY_ROUTER_KEY".into()),
        ..Default::default()
    };
    let e = choice.build_with(&vars(&[])).err().unwrap();
    assert_eq!(
        e.to_string(),
        "--provider openrouter needs MY_ROUTER_KEY in the environment"
    );
    assert!(choice.build_with(&vars(&[("MY_ROUTER_KEY", "k")])).is_ok());
}

#[test]
fn base_urls_are_checked_and_shown_without_passwords() {
    for good in [
        "http://localhost:8080",
        "https://api.example.com/v1",
        "http://u:p@10.0.0.2:1/v1",
    ] {
        assert!(check_base_url(good).is_ok(), "{good}");
    }
    for bad in ["localhost:8080", "ftp://x", "http://", "http://:80/v1", "http://a b/"] {
        assert!(check_base_url(bad).is_err(), "{bad}");
    }
    assert_eq!(
        check_base_url("http//user:secret@h").unwrap_err().to_string(),
        "--base-url `http//user:secret@h` is not a valid URL: give the server's address, e.g. http://localhost:8080/v1"
    );
    assert_eq!(
        shown_url("https://user:secret@gw.example/v1"),
        "https://user:***@gw.example/v1"
    );
    assert_eq!(shown_url("https://token@gw.example/v1"), "https://***@gw.example/v1");
    assert_eq!(shown_url("https://gw.example/v1"), "https://gw.example/v1");
}

#[test]
fn local_base_urls() {
    for url in [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1",
        "http://192.168.1.20:1234/v1",
        "http://[::1]:8000/v1",
        "http://gpu-box.local:8080/v1",
    ] {
        assert!(is_local_url(url), "{url}");
    }
    for url in [
        "https://api.openai.com/v1",
        "https://openrouter.ai/api/v1",
        "http://8.8.8.8/v1",
    ] {
        assert!(!is_local_url(url), "{url}");
    }
}
