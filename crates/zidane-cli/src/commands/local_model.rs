//! A first run without a key: a model server on this machine offered at
//! the terminal (and its choice saved when the person says so), or named
//! in the error when there is no terminal to ask at.

use std::io::{BufRead, Write};

use zidane_app::Settings;
use zidane_app::local_model::{self, Found};

use super::Failure;

/// `settings`, with a local model server's model when none is configured
/// and one answers (and the person takes it, at a terminal).
pub(crate) async fn offer(mut settings: Settings, interactive: bool) -> Result<Settings, Failure> {
    if !local_model::needed(&settings) {
        return Ok(settings);
    }
    let found = local_model::find().await;
    // Nothing answers: the usual error follows.
    if found.is_empty() {
        return Ok(settings);
    }
    if !interactive {
        return Err(Failure::usage(local_model::hint(&found)));
    }
    let config = settings.paths.user_config();
    let shown = config
        .as_ref()
        .map_or_else(|| "your configuration".to_owned(), |p| p.display().to_string());
    let choices: Vec<(Found, String)> = found
        .iter()
        .flat_map(|f| f.models.iter().map(move |m| (f.clone(), m.clone())))
        .collect();
    if choices.is_empty() {
        return Err(Failure::usage(local_model::hint(&found)));
    }
    let mut question = String::from("zidane: no provider key is set, but a model server answers on this machine:\n");
    for (i, (f, model)) in choices.iter().enumerate() {
        question.push_str(&format!("  [{}] {model} ({} at {})\n", i + 1, f.name, f.base_url));
    }
    question.push_str(&format!(
        "Use [1]? Enter or a number: for this run · s or sN: also save it in {shown} · n: no\n> "
    ));
    let answer = tokio::task::spawn_blocking(move || {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(question.as_bytes());
        let _ = err.flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    })
    .await
    .map_err(|e| Failure::run(e.to_string()))?
    .map_err(|e| Failure::run(e.to_string()))?;
    let answer = answer.trim().to_lowercase();
    if answer == "n" || answer == "no" {
        return Err(Failure::usage(local_model::hint(&found)));
    }
    let (save, number) = match answer.strip_prefix('s') {
        Some(rest) => (true, rest.trim()),
        None => (false, answer.as_str()),
    };
    let index = if number.is_empty() {
        0
    } else {
        match number.parse::<usize>() {
            Ok(n) if (1..=choices.len()).contains(&n) => n - 1,
            _ => return Err(Failure::usage(format!("no choice `{answer}`"))),
        }
    };
    let (server, model) = &choices[index];
    local_model::apply(&mut settings, server, model);
    if save {
        match &config {
            Some(path) => match local_model::save(path, server, model) {
                Ok(()) => eprintln!("zidane: saved in {}", path.display()),
                Err(e) => eprintln!("zidane: could not save the choice: {e}"),
            },
            None => eprintln!("zidane: no user folder is known; the choice is for this run"),
        }
    }
    Ok(settings)
}
