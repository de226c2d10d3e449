use super::*;

#[test]
fn every_gitleaks_rule_parses_and_compiles() {
    let rules = gitleaks::Rules::parse(include_str!("gitleaks.toml")).unwrap();
    let compiled = gitleaks::compile_all(&rules);
    assert!(compiled.len() > 200, "{}", compiled.len());
    let failed: Vec<_> = compiled.into_iter().filter(|(_, e)| e.is_some()).collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Variables and whether they hold a credential: `(name, value, secret)`.
/// Values are made up in the shapes of the real thing.
const TABLE: &[(&str, &str, bool)] = &[
    // Names that say so, whatever the value.
    ("ANTHROPIC_API_KEY", "x", true),
    ("OPENAI_API_KEY", "x", true),
    ("AWS_SECRET_ACCESS_KEY", "x", true),
    ("AWS_ACCESS_KEY_ID", "x", true),
    ("AWS_SESSION_TOKEN", "x", true),
    ("MINIO_ACCESS_KEY", "x", true),
    ("GITHUB_APP_PRIVATE_KEY", "x", true),
    ("GOOGLE_APPLICATION_CREDENTIALS", "/home/me/sa.json", true),
    ("AZURE_CREDENTIALS", "x", true),
    ("NPM_TOKEN", "x", true),
    ("GH_TOKEN", "x", true),
    ("HF_TOKEN", "x", true),
    ("CARGO_REGISTRY_TOKEN", "x", true),
    ("ANTHROPIC_AUTH_TOKEN", "x", true),
    ("DB_PASSWORD", "hunter2", true),
    ("PGPASSWORD", "hunter2", true),
    ("SMTP_PASS", "x", true),
    ("MYSQL_PWD", "x", true),
    ("CLIENT_SECRET", "x", true),
    ("django_secret", "x", true),
    ("githubToken", "x", true),
    ("DOCKER_CREDS", "x", true),
    ("NPM_CONFIG__AUTH", "x", true),
    ("SENTRY_DSN", "x", true),
    ("SESSION_COOKIE", "x", true),
    ("AZURE_STORAGE_CONNECTION_STRING", "x", true),
    ("GPG_PASSPHRASE", "x", true),
    ("STRIPE_APIKEY", "x", true),
    // Names that do not, with values that do.
    ("DATABASE_URL", "postgres://app:s3cr3t-Pw@db.internal:5432/app", true),
    ("REDIS_URL", "redis://:hunter2hunter2@cache:6379/0", true),
    ("BROKER", "amqp://guest:guest@localhost:5672/", true),
    (
        "LLM",
        "sk-ant-api03-PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA-2O76UMFxFkM-R5Kjp1vRt_1fjORS-6ilI8ihN5KXSc7Tvo-hBKqFYAA",
        true,
    ),
    (
        "OPENAI",
        "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",
        true,
    ),
    ("GITHUB", "ghp_Hx6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYr", true),
    ("GITLAB", "glpat-Zx9Kq2Wm4Np7Rt5Vb8Yc", true),
    (
        "SLACK",
        "xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        true,
    ),
    ("CLOUD", "AKIAZ5RT2MQ7XKB4WJ6N", true),
    (
        "SIGNING",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACB\n-----END OPENSSH PRIVATE KEY-----",
        true,
    ),
    ("STRIPE", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", true),
    // Not credentials.
    ("PATH", "/usr/local/bin:/usr/bin:/bin", false),
    ("HOME", "/home/me", false),
    ("PWD", "/home/me/project", false),
    ("OLDPWD", "/home/me", false),
    ("SSH_AUTH_SOCK", "/tmp/ssh-XXXXabcd/agent.1234", false),
    ("GIT_AUTHOR_NAME", "Ada Lovelace", false),
    ("TOKENIZERS_PARALLELISM", "false", false),
    ("STRIPE_PUBLISHABLE_KEY", "pk_test", false),
    ("JWT_PUBLIC_KEY", "x", false),
    ("OAUTH_TOKEN_URL", "https://auth.example.com/token", false),
    ("AWS_SECRET_NAME", "prod/app", false),
    ("KEYBOARD_LAYOUT", "us", false),
    ("LANG", "en_US.UTF-8", false),
    ("RUST_LOG", "info,zidane=debug", false),
    ("HTTP_PROXY", "http://proxy.internal:3128", false),
    ("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt", false),
    ("TERM", "xterm-256color", false),
    (
        "LS_COLORS",
        "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01",
        false,
    ),
    ("XDG_SESSION_ID", "c2", false),
    ("CI_COMMIT_SHA", "4f6b0f7c1d2e3a4b5c6d7e8f9a0b1c2d3e4f5a6b", false),
    ("NODE_OPTIONS", "--max-old-space-size=4096", false),
    ("DOCS_URL", "https://user@example.com/docs", false),
];

#[test]
fn credentials_by_name_and_by_value() {
    let wrong: Vec<String> = TABLE
        .iter()
        .filter(|(name, value, secret)| is_secret_var(name, value) != *secret)
        .map(|(name, value, secret)| format!("{name}={value} should be {}", if *secret { "secret" } else { "plain" }))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn a_value_rule_names_what_it_found() {
    let rules = gitleaks::Rules::parse(include_str!("gitleaks.toml")).unwrap();
    assert_eq!(
        rules.finding("X=ghp_Hx6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYr"),
        Some("github-pat")
    );
    assert_eq!(rules.finding("X=AKIAZ5RT2MQ7XKB4WJ6N"), Some("aws-access-token"));
    assert_eq!(rules.finding("GREETING=hello world"), None);
}
