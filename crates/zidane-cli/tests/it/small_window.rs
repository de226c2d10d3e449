//! A long answer that fills a small window, then the next prompt, against
//! a loopback server that enforces its window as llama.cpp does.

use super::{text, zidane};

/// An essay longer than the window, a summary when asked for one, and
/// what the question was about while the conversation still says it.
fn essayist(body: &str) -> String {
    if body.contains("Summarize the conversation so far") {
        return "SUMMARY: the person asked for an essay about lighthouses, and got a long one.".into();
    }
    if body.contains("What topic did I ask about?") {
        let knows = body.contains("lighthouses");
        return if knows {
            "You asked about lighthouses."
        } else {
            "I do not know."
        }
        .into();
    }
    "Lighthouses stand where the land ends and the sea begins. ".repeat(1000)
}

/// The essay fills the 8,192-token window (prompt and answer together);
/// `zidane -p --resume --max-turns 1 "what topic…"` then compacts before
/// its request instead of sending one past the window, and answers.
#[tokio::test]
async fn the_prompt_after_an_answer_that_filled_the_window_is_answered() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, requests) = zidane_bench::loopback::windowed_server(8192, essayist).await.unwrap();
    let base = [
        "-p",
        "--provider",
        "openai-compatible",
        "--base-url",
        &url,
        "--model",
        "m",
    ];
    let essay = zidane(
        home.path(),
        work.path(),
        &[],
        &[&base[..], &["Write an essay about lighthouses."]].concat(),
    )
    .await;
    assert_eq!(essay.status.code(), Some(0), "{}", text(&essay.stderr));
    let filled = requests.lock().unwrap().last().cloned().unwrap();
    assert!(!filled.refused);

    let asked = zidane(
        home.path(),
        work.path(),
        &[],
        &[
            &base[..],
            &["--resume", "--max-turns", "1", "What topic did I ask about?"],
        ]
        .concat(),
    )
    .await;
    let requests = requests.lock().unwrap().clone();
    assert_eq!(asked.status.code(), Some(0), "{}", text(&asked.stderr));
    assert!(
        text(&asked.stdout).contains("You asked about lighthouses."),
        "{}",
        text(&asked.stdout)
    );
    assert!(
        requests.iter().all(|r| !r.refused),
        "no request past the window: {:?}",
        requests.iter().map(|r| r.prompt_tokens).collect::<Vec<_>>()
    );
}

/// The first request on a window under 16k tokens carries the compact
/// system prompt and tool descriptions; on a larger window, the full ones.
#[tokio::test]
async fn a_window_under_16k_gets_the_compact_prompt() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, requests) = zidane_bench::loopback::windowed_server(65_536, |_| "Done.".to_owned())
        .await
        .unwrap();
    let mut first = Vec::new();
    for window in ["8192", "15999", "16000", "32768"] {
        let out = zidane(
            home.path(),
            work.path(),
            &[],
            &[
                "-p",
                "--provider",
                "openai-compatible",
                "--base-url",
                &url,
                "--model",
                "m",
                "--context-window",
                window,
                "Say done.",
            ],
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let request = requests.lock().unwrap().last().cloned().unwrap();
        println!(
            "window {window}: first request {} bytes, about {} tokens",
            request.body.len(),
            request.prompt_tokens
        );
        first.push(request);
    }
    let compact = zidane_app::compact::COMPACT_SYSTEM_LEAD;
    let full = "You are a capable coding agent";
    for small in &first[..2] {
        assert!(small.body.contains(compact), "{}", small.body);
        assert!(!small.body.contains(full));
        assert!(
            small.body.contains(r#""description":"List a folder.""#),
            "{}",
            small.body
        );
    }
    for large in &first[2..] {
        assert!(!large.body.contains(compact));
        assert!(large.body.contains(full), "{}", large.body);
    }
    // About half (9.0 KB to 4.4 KB when this was written).
    assert!(
        first[0].body.len() * 10 < first[3].body.len() * 6,
        "{} against {}",
        first[0].body.len(),
        first[3].body.len()
    );
}
