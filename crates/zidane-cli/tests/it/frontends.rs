//! One prompt through each front end (the one-shot printer, the terminal
//! session, ACP): the same pipeline happens in each, because each submits
//! through the program's core. A folder's custom command expands, an `@`
//! mention attaches its file, and the `SessionStart`, `UserPromptSubmit`
//! and `SessionEnd` command hooks run, their context reaching the model.

use super::conventions::{KEY, write};
use super::session::Setup;
use super::{text, zidane};

/// What the prompt is in every front end.
const PROMPT: &str = "/greet Ada @notes.txt";

/// The folder: a trusted project with the command, the file and the hooks.
fn folder(setup: &Setup) {
    let work = setup.work.path();
    write(&setup.home.path().join("config.toml"), "trust = true\n");
    write(&work.join(".zidane/commands/greet.md"), "Greet $ARGUMENTS warmly.\n");
    write(&work.join("notes.txt"), "the note's text 42\n");
    write(
        &work.join(".zidane/config.toml"),
        r#"
[[hooks.SessionStart]]
command = "echo SessionStart >> hooks.log; echo started-context"

[[hooks.UserPromptSubmit]]
command = "echo UserPromptSubmit >> hooks.log; echo submit-context"

[[hooks.SessionEnd]]
command = "echo SessionEnd >> hooks.log"
"#,
    );
}

/// What every front end must have done: the model's request carries the
/// expanded command, the attached file and both hooks' context, and the
/// three hooks ran in order.
fn the_pipeline_ran(setup: &Setup, front_end: &str) {
    let bodies = setup.bodies.lock().unwrap().clone();
    let first = bodies
        .first()
        .unwrap_or_else(|| panic!("{front_end}: no request reached the model"));
    for want in [
        "Greet Ada @notes.txt warmly.",
        r#"<file path=\"notes.txt\">"#,
        "the note's text 42",
        "started-context",
        "submit-context",
    ] {
        assert!(
            first.contains(want),
            "{front_end}: the request lacks {want:?}:\n{first}"
        );
    }
    let log = std::fs::read_to_string(setup.work.path().join("hooks.log")).unwrap_or_default();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        ["SessionStart", "UserPromptSubmit", "SessionEnd"],
        "{front_end}: the hooks that ran"
    );
}

#[tokio::test]
async fn the_one_shot_printer_runs_the_pipeline() {
    let setup = Setup::new().await;
    folder(&setup);
    let out = zidane(
        setup.home.path(),
        setup.work.path(),
        &[KEY],
        &["--base-url", &setup.url, "-p", PROMPT],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    the_pipeline_ran(&setup, "one-shot");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_terminal_session_runs_the_pipeline() {
    let setup = Setup::new().await;
    folder(&setup);
    let mut term = setup.open(&[], &[], (120, 40));
    term.line(PROMPT);
    term.wait_for("Answer:");
    term.idle();
    term.quit();
    the_pipeline_ran(&setup, "terminal session");
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_runs_the_pipeline() {
    let setup = Setup::new().await;
    folder(&setup);
    let mut agent = super::acp::Agent::start(&setup, &[KEY]);
    let session = agent.open(setup.work.path()).await;
    let done = agent.call("session/prompt", super::acp::prompt(&session, PROMPT)).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let closed = agent
        .call("session/close", serde_json::json!({ "sessionId": session }))
        .await;
    assert!(closed.get("error").is_none(), "{closed}");
    the_pipeline_ran(&setup, "ACP");
}

/// The sub-commands and the words of a prompt: a first word naming a
/// sub-command runs it; after `--` or with `-p`, it is the prompt.
#[tokio::test]
async fn a_sub_commands_name_is_a_prompt_after_dashes_or_with_print() {
    let setup = Setup::new().await;
    let (home, work) = (setup.home.path(), setup.work.path());
    let shown = zidane(home, work, &[KEY], &["--base-url", &setup.url, "config"]).await;
    assert!(
        text(&shown.stdout).contains("# The configuration in effect"),
        "{}",
        text(&shown.stderr)
    );
    assert!(setup.bodies.lock().unwrap().is_empty(), "`config` is the sub-command");
    for args in [["--", "config"], ["-p", "config"]] {
        let mut all = vec!["--base-url", setup.url.as_str()];
        all.extend(args);
        let out = zidane(home, work, &[KEY], &all).await;
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("Answer: config"),
            "{args:?}: {}",
            text(&out.stdout)
        );
    }
    let listed = zidane(home, work, &[KEY], &["sessions", "list"]).await;
    assert_eq!(text(&listed.stdout).lines().count(), 2, "{}", text(&listed.stdout));
    let legacy = zidane(home, work, &[KEY], &["--list-sessions"]).await;
    assert_eq!(
        text(&legacy.stdout),
        text(&listed.stdout),
        "the old flag is the sub-command"
    );
    let help = zidane(home, work, &[], &["--help"]).await;
    let help = text(&help.stdout);
    for sub in ["acp", "config", "context", "sessions", "undo", "rewind", "fork"] {
        assert!(help.contains(&format!("  {sub}")), "--help lists `{sub}`:\n{help}");
    }
    assert!(!help.contains("--list-sessions"), "the old flags are hidden:\n{help}");
}

/// `zidane update` says how this copy was installed (a test build: from a
/// checkout) and what updates it; it changes nothing.
#[tokio::test]
async fn update_says_how_to_get_a_newer_copy() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = zidane(home.path(), work.path(), &[], &["update"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("from a checkout; update: git pull"), "{said}");
    assert!(
        said.contains("Releases: https://github.com/zidane-rs/zidane-rs/releases"),
        "{said}"
    );
    let version = zidane(home.path(), work.path(), &[], &["--version"]).await;
    assert!(
        text(&version.stdout).contains("debug build"),
        "{}",
        text(&version.stdout)
    );
}
