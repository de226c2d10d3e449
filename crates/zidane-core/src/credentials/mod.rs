//! What counts as a credential in an environment variable: by its name, and
//! by the shape of its value.
//!
//! Values are checked against the rules gitleaks publishes
//! (`gitleaks.toml` beside this file, the default configuration of
//! gitleaks v8.30.1, kept as released under its MIT licence in
//! `LICENSE-gitleaks`): some 220 shapes of cloud keys, provider tokens
//! (`sk-…`, `ghp_…`, `xox…`, `AKIA…`), private-key blocks and keyword
//! assignments, each with its keywords, entropy floor and allow lists, as
//! gitleaks applies them to a `NAME=value` line of a `.env` file. To update
//! it, replace the file with a newer release's `config/gitleaks.toml`. A
//! URL carrying a password (`postgres://user:pass@host/db`) is ours: no
//! gitleaks rule covers it in general.
//!
//! Names follow gitleaks' keywords for a generic credential (`key`,
//! `secret`, `token`, `password`, `credential`, `auth`…), matched as words
//! of the name, less the names gitleaks itself says are not secrets (a
//! public or primary key, a token's URL, a secret's name).

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::Mutex;

/// Whether an environment variable's name says it holds a credential:
/// provider keys and any name with a word such as `KEY`, `TOKEN`, `SECRET`,
/// `PASSWORD`, `PASS`, `CREDENTIALS`, `CREDS`, `AUTH` (last), `COOKIE` or
/// `DSN` in it (`AWS_SECRET_ACCESS_KEY`, `GITHUB_PRIVATE_KEY`,
/// `GOOGLE_APPLICATION_CREDENTIALS`, `NPM_TOKEN`, `PGPASSWORD`), except the
/// ones that name something public (`STRIPE_PUBLISHABLE_KEY`,
/// `JWT_PUBLIC_KEY`, `OAUTH_TOKEN_URL`, `SECRET_NAME`).
pub fn is_secret_name(name: &str) -> bool {
    let words = words(name);
    if public_name(&words) {
        return false;
    }
    // Inside a single word too: `PGPASSWORD`, `MYSQL_ROOTPASSWORD`,
    // `CLIENTSECRET` (never `SECRETARY`).
    let upper = name.to_ascii_uppercase();
    if ["PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL"]
        .iter()
        .any(|w| upper.contains(w))
        || words
            .iter()
            .any(|w| w.ends_with("SECRET") || (w.starts_with("SECRET") && !w.starts_with("SECRETAR")))
    {
        return true;
    }
    let last = words.len().saturating_sub(1);
    words.iter().enumerate().any(|(i, w)| match w.as_str() {
        "KEY" | "APIKEY" | "PRIVATEKEY" | "ACCESSKEY" | "SECRETKEY" | "TOKEN" | "PASS" | "CREDS" | "COOKIE" | "DSN" => {
            true
        }
        // `DB_PWD`, never `PWD` or `OLDPWD` (folders).
        "PWD" => words.len() > 1,
        // `NPM_CONFIG__AUTH`, never `SSH_AUTH_SOCK` (a socket's path).
        "AUTH" => i == last,
        "CONNECTION" => words.get(i + 1).is_some_and(|n| n == "STRING"),
        _ => false,
    })
}

/// Names that hold something public, as gitleaks' allow list for its
/// generic rule has them.
fn public_name(words: &[String]) -> bool {
    words.windows(2).any(|pair| {
        let (a, b) = (pair[0].as_str(), pair[1].as_str());
        matches!(
            (a, b),
            (
                "PUBLIC" | "PUB" | "PUBLISHABLE" | "PRIMARY" | "FOREIGN" | "SORT" | "PARTITION",
                "KEY"
            ) | (
                "KEY" | "TOKEN" | "SECRET",
                "NAME" | "SIZE" | "LENGTH" | "ALIAS" | "TYPE"
            ) | ("TOKEN" | "CREDENTIALS" | "API", "URL" | "URI" | "ENDPOINT")
        )
    })
}

/// The words of a name: split at `_`, `-`, `.` and lower-to-upper case
/// changes, upper-cased.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_ascii_lowercase();
        word.push(c.to_ascii_uppercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether a value has the shape of a credential: a key or token of a
/// known service, a private-key block, a keyword assignment gitleaks flags,
/// or a URL with a password in it. `name` gives the value its context, as
/// the line `NAME=value` would in a `.env` file.
pub fn is_secret_value(name: &str, value: &str) -> bool {
    if value.len() < 8 {
        return false;
    }
    url_with_password(value) || rules().is_some_and(|r| r.matches(&format!("{name}={value}")))
}

/// Whether an environment variable holds a credential, by its name or its
/// value ([`is_secret_name`], [`is_secret_value`]). Commands the model
/// runs, hooks and the MCP servers an agent starts never see these unless
/// passed by name: a command's output goes to the provider and into the
/// session, and `env` would hand them the keys. Answers are remembered per
/// variable, so checking a whole environment per command costs little.
pub fn is_secret_var(name: &str, value: &str) -> bool {
    if is_secret_name(name) {
        return true;
    }
    static SEEN: OnceLock<Mutex<HashMap<(String, String), bool>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Mutex::default);
    let key = (name.to_owned(), value.to_owned());
    if let Some(known) = seen.lock().get(&key) {
        return *known;
    }
    let secret = is_secret_value(name, value);
    let mut seen = seen.lock();
    if seen.len() > 4096 {
        seen.clear();
    }
    seen.insert(key, secret);
    secret
}

/// The variables of this process's environment that hold credentials
/// ([`is_secret_var`]; a name or value that is not UTF-8 is checked as far
/// as it is).
pub fn secret_vars_of_env() -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(name, value)| {
            let name = name.to_string_lossy().into_owned();
            is_secret_var(&name, &value.to_string_lossy()).then_some(name)
        })
        .collect()
}

/// `scheme://user:password@…` with a non-empty password.
fn url_with_password(value: &str) -> bool {
    let Some((scheme, rest)) = value.split_once("://") else {
        return false;
    };
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let Some((userinfo, _host)) = authority.rsplit_once('@') else {
        return false;
    };
    userinfo
        .split_once(':')
        .is_some_and(|(_, password)| !password.is_empty())
}

/// gitleaks' rules, compiled on first use (`None`: the embedded file did
/// not parse, which its test rules out).
fn rules() -> Option<&'static Rules> {
    static RULES: OnceLock<Option<Rules>> = OnceLock::new();
    RULES
        .get_or_init(|| Rules::parse(include_str!("gitleaks.toml")).ok())
        .as_ref()
}

mod gitleaks;
use gitleaks::Rules;

#[cfg(test)]
mod tests;
