//! The interactive session: the real binary in a pseudo-terminal, the
//! screen read back through a terminal emulator, keys typed.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use serde_json::{Value, json};
use zidane_bench::loopback::{answer_sse, call_sse};

use super::conventions::{KEY, write};
use super::{server_with, text};

/// How long a wait for the screen may take before the test fails (a
/// bound on a condition, not a sleep).
const PATIENCE: Duration = Duration::from_secs(30);

pub(super) struct Shared {
    pub(super) parser: vt100::Parser,
    /// Every byte the program wrote, for the scrollback's text.
    pub(super) raw: Vec<u8>,
    pub(super) done: bool,
}

/// `zidane` in a pseudo-terminal.
pub(super) struct Term {
    pub(super) shared: Arc<(Mutex<Shared>, Condvar)>,
    writer: Box<dyn Write + Send>,
    master: Box<dyn MasterPty + Send>,
    pub(super) child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Term {
    pub(super) fn start(home: &Path, work: &Path, env: &[(&str, &str)], args: &[&str], size: (u16, u16)) -> Term {
        Term::start_program(env!("CARGO_BIN_EXE_zidane"), home, work, env, args, size)
    }

    /// `program` (with `zidane`'s environment) in a pseudo-terminal.
    pub(super) fn start_program(
        program: &str,
        home: &Path,
        work: &Path,
        env: &[(&str, &str)],
        args: &[&str],
        size: (u16, u16),
    ) -> Term {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: size.1,
                cols: size.0,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(program);
        for var in [
            "OPENAI_API_KEY",
            "OPENROUTER_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
            "NO_COLOR",
            "ZIDANE_RETRIES",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("ANTHROPIC_API_KEY", "sk-test");
        cmd.env("ZIDANE_HOME", home);
        cmd.env("ZIDANE_APPROVE", "yolo");
        cmd.env("ZIDANE_LOCAL_MODEL_PORTS", "off");
        cmd.env("TERM", "xterm-256color");
        // A dark background, said up front: no terminal here answers the
        // background query (the theme test answers it itself).
        cmd.env("COLORFGBG", "15;0");
        cmd.cwd(work);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(args);
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let shared = Arc::new((
            Mutex::new(Shared {
                parser: vt100::Parser::new(size.1, size.0, 0),
                raw: Vec::new(),
                done: false,
            }),
            Condvar::new(),
        ));
        let feeding = Arc::clone(&shared);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                let n = reader.read(&mut buf).unwrap_or(0);
                let (lock, ready) = &*feeding;
                let mut s = lock.lock().unwrap();
                if n == 0 {
                    s.done = true;
                    ready.notify_all();
                    return;
                }
                s.parser.process(&buf[..n]);
                s.raw.extend_from_slice(&buf[..n]);
                ready.notify_all();
            }
        });
        Term {
            shared,
            writer,
            master: pair.master,
            child,
        }
    }

    /// How many bytes the program has written so far.
    pub(super) fn written(&self) -> usize {
        self.shared.0.lock().unwrap().raw.len()
    }

    /// What the program wrote after the first `from` bytes.
    pub(super) fn written_since(&self, from: usize) -> String {
        String::from_utf8_lossy(&self.shared.0.lock().unwrap().raw[from..]).into_owned()
    }

    /// Waits until no run is going (the working line is gone) and the
    /// status line is drawn.
    pub(super) fn idle(&self) -> String {
        self.wait_until(
            |s| !s.contains("Esc to interrupt") && s.contains("approve "),
            "an idle session",
        )
    }

    /// Waits until the screen shows `needle`; the screen then.
    pub(super) fn wait_for(&self, needle: &str) -> String {
        self.wait_until(|screen| screen.contains(needle), needle)
    }

    pub(super) fn wait_until(&self, ok: impl Fn(&str) -> bool, what: &str) -> String {
        let (lock, ready) = &*self.shared;
        let mut s = lock.lock().unwrap();
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            let screen = s.parser.screen().contents();
            if ok(&screen) {
                return screen;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(
                !left.is_zero() && !s.done,
                "the screen never showed {what:?}; it shows:\n{screen}"
            );
            s = ready.wait_timeout(s, left).unwrap().0;
        }
    }

    pub(super) fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Types `text` and Enter.
    pub(super) fn line(&mut self, text: &str) {
        self.send(text);
        self.send("\r");
    }

    pub(super) fn resize(&self, cols: u16, rows: u16) {
        self.shared.0.lock().unwrap().parser.screen_mut().set_size(rows, cols);
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    /// Types `keys` as they are.
    pub(super) fn type_keys(&mut self, keys: &str) {
        self.send(keys);
    }

    /// Waits for the program to end with code 0: all it wrote.
    pub(super) fn finish(mut self) -> String {
        self.wait_until_done();
        assert_eq!(self.child.wait().unwrap().exit_code(), 0);
        String::from_utf8_lossy(&self.shared.0.lock().unwrap().raw).into_owned()
    }

    fn wait_until_done(&self) {
        let (lock, ready) = &*self.shared;
        let mut s = lock.lock().unwrap();
        let deadline = std::time::Instant::now() + PATIENCE;
        while !s.done {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(!left.is_zero(), "the program did not end");
            s = ready.wait_timeout(s, left).unwrap().0;
        }
    }

    /// Ctrl-D on the empty input: the program ends, with code 0.
    pub(super) fn quit(mut self) {
        self.send("\x04");
        assert_eq!(self.child.wait().unwrap().exit_code(), 0);
    }

    pub(super) fn kill(mut self) {
        self.child.kill().unwrap();
        let _ = self.child.wait();
    }
}

/// A home, a working folder and the loopback model.
pub(super) struct Setup {
    pub(super) home: tempfile::TempDir,
    pub(super) work: tempfile::TempDir,
    pub(super) url: String,
    pub(super) bodies: Arc<Mutex<Vec<String>>>,
}

impl Setup {
    pub(super) async fn new() -> Setup {
        let (url, bodies) = server_with(None, by_prompt).await;
        Setup {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            url,
            bodies,
        }
    }

    /// A home and a working folder against the model at `url`.
    pub(super) async fn with_url(url: String) -> Setup {
        Setup {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            url,
            bodies: Arc::default(),
        }
    }

    /// The session open at its input, with `env` and `extra` flags.
    pub(super) fn open(&self, env: &[(&str, &str)], extra: &[&str], size: (u16, u16)) -> Term {
        let mut args = vec!["--base-url", self.url.as_str()];
        args.extend_from_slice(extra);
        let term = Term::start(self.home.path(), self.work.path(), env, &args, size);
        term.wait_for("› ");
        term
    }

    pub(super) fn last_body(&self) -> String {
        self.bodies.lock().unwrap().last().cloned().unwrap()
    }
}

/// A FIFO a command blocks on (`cat`) until the test writes to it.
pub(super) fn release_fifo(work: &Path) -> std::path::PathBuf {
    let release = work.join("release.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&release)
            .status()
            .unwrap()
            .success()
    );
    release
}

/// Answers by the last user message: a prompt naming a tool and its input
/// (`call TOOL INPUT`) gets that call, then `Answer: PROMPT`.
pub(super) fn by_prompt(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    let messages = v["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    let texts: Vec<String> = last["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_else(|| vec![last["content"].as_str().unwrap_or_default().to_owned()]);
    let after_tool = last["content"]
        .as_array()
        .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"));
    let said = texts.join(" ");
    if !after_tool && let Some(rest) = said.strip_prefix("call ") {
        let (tool, input) = rest.split_once(' ').unwrap();
        return call_sse(
            &format!("toolu_{}", messages.len()),
            tool,
            // The input, and nothing after it (a note the program adds to
            // the prompt, in plan mode).
            &serde_json::Deserializer::from_str(input)
                .into_iter::<Value>()
                .next()
                .unwrap()
                .unwrap(),
            50,
        );
    }
    if after_tool {
        let steered = if said.is_empty() {
            String::new()
        } else {
            format!(" (heard: {said})")
        };
        return answer_sse(&format!("Tool done{steered}."), 50);
    }
    answer_sse(&format!("Answer: {said}"), 50)
}

/// Two prompts in one process: the second reaches the model with the
/// first exchange, on the one MCP connection made at the start.
#[tokio::test(flavor = "multi_thread")]
async fn two_prompts_in_one_process_share_one_agent_and_mcp_connection() {
    let setup = Setup::new().await;
    let (home, work) = (&setup.home, &setup.work);
    let starts = work.path().join("starts.log");
    let wrapper = work.path().join("everything.sh");
    write(
        &wrapper,
        &format!(
            "#!/bin/sh\necho started >> {}\nexec {}\n",
            starts.display(),
            super::conventions::everything()
        ),
    );
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .unwrap();
    write(
        &home.path().join("config.toml"),
        &format!("[mcp_servers.everything]\ncommand = \"{}\"\n", wrapper.display()),
    );
    let bodies = &setup.bodies;
    let mut term = setup.open(&[KEY], &[], (100, 40));
    term.line("first question");
    term.wait_for("Answer: first question");
    term.line("second question");
    term.wait_for("Answer: second question");
    // The status line: the model, the tokens, the modes.
    let screen = term.idle();
    let status = screen.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(status.contains("approve yolo") && status.contains(" in / "), "{screen}");
    term.quit();
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies[1].contains("Answer: first question"),
        "the second request carries the first exchange"
    );
    assert!(bodies[1].contains("mcp_everything_echo"));
    assert_eq!(
        std::fs::read_to_string(&starts).unwrap().lines().count(),
        1,
        "one MCP connection"
    );
}

/// A steering message typed while a command runs reaches the next request;
/// Esc then interrupts a running command, and the next prompt continues the
/// same session.
#[tokio::test(flavor = "multi_thread")]
async fn steering_mid_run_and_esc_interrupting_a_command() {
    let setup = Setup::new().await;
    let work = &setup.work;
    let gate = super::started_fifo(work.path());
    let bodies = &setup.bodies;
    let mut term = setup.open(&[KEY], &[], (100, 40));
    let release = release_fifo(work.path());
    let command = json!({"command": format!("echo started > {} && cat {}", gate.display(), release.display())});
    term.line(&format!("call shell {command}"));
    // The command runs: type a steer meanwhile; it waits as queued.
    let started = tokio::fs::read_to_string(&gate).await.unwrap();
    assert_eq!(started.trim(), "started");
    term.line("also check the tests");
    term.wait_for("queued steer: also check the tests");
    tokio::fs::write(&release, "released\n").await.unwrap();
    term.wait_for("› (steer) also check the tests");
    term.wait_for("Answer: also check the tests");
    let steered = bodies.lock().unwrap()[1].clone();
    assert!(
        steered.contains("released") && steered.contains("also check the tests"),
        "{steered}"
    );

    let command = json!({"command": format!("echo started > {} && sleep 600", gate.display())});
    term.line(&format!("call shell {command}"));
    let started = tokio::fs::read_to_string(&gate).await.unwrap();
    assert_eq!(started.trim(), "started");
    term.send("\x1b");
    term.wait_for("interrupted");
    term.line("what now?");
    term.wait_for("Answer: what now?");
    let last = setup.last_body();
    // The same session: the cut-off call is in the history, answered.
    assert!(last.contains("sleep 600"), "{last}");
    assert!(last.contains("tool_result"), "{last}");
    term.quit();
}

/// A command that needs approval is shown with what it runs and answered
/// `always` with one key: the same command then runs without a question.
#[tokio::test(flavor = "multi_thread")]
async fn an_approval_answered_always_is_not_asked_again() {
    let setup = Setup::new().await;
    let bodies = &setup.bodies;
    let env = [KEY, ("ZIDANE_APPROVE", "ask")];
    let mut term = setup.open(&env, &[], (100, 40));
    let call = json!({"command": "echo approved-once"});
    term.line(&format!("call shell {call}"));
    let screen = term.wait_for("[a] always this session");
    assert!(
        screen.contains("⚠ zidane wants to:") && screen.contains("$ echo approved-once"),
        "{screen}"
    );
    term.send("a");
    term.wait_for("✓ allowed for this session");
    term.wait_for("Tool done.");
    term.idle();
    let before = term.written();
    term.line(&format!("call shell {call}"));
    term.wait_until(|s| s.matches("Tool done.").count() == 2, "a second answer");
    let after = term.written_since(before);
    assert!(!after.contains("wants to:"), "asked again:\n{after}");
    assert!(bodies.lock().unwrap()[3].contains("approved-once"));
    // `n` with a reason: the model reads it.
    term.idle();
    term.line(&format!("call shell {}", json!({"command": "rm -rf build"})));
    term.wait_for("[n] no");
    term.send("n");
    term.wait_for("why not?");
    term.line("keep the build");
    term.wait_for("✗ declined: keep the build");
    term.wait_until(|s| s.matches("Tool done.").count() == 3, "the answer after the refusal");
    let refused = setup.last_body();
    assert!(
        refused.contains("the user declined this call: keep the build"),
        "{refused}"
    );
    term.quit();
}

/// `/model` says what the switch re-reads, and the next request goes to
/// the new model; `/compact` with a focus summarizes the older turns with
/// the focus in the request.
#[tokio::test(flavor = "multi_thread")]
async fn model_switch_with_its_cache_impact_and_compact_with_a_focus() {
    let setup = Setup::new().await;
    let bodies = &setup.bodies;
    let mut term = setup.open(&[KEY], &[], (120, 40));
    for n in 1..=3 {
        term.line(&format!("question {n}"));
        term.wait_for(&format!("Answer: question {n}"));
        term.idle();
    }
    term.line("/model claude-haiku-4-5");
    term.wait_for("model: claude-sonnet-4-5 → claude-haiku-4-5");
    // The line says what the switch re-reads (drawn with the switch or
    // just after it).
    term.wait_for("tokens again instead of from the cache (model changes)");
    term.line("question 4");
    term.wait_for("Answer: question 4");
    term.idle();
    let last: Value = serde_json::from_str(bodies.lock().unwrap().last().unwrap()).unwrap();
    assert_eq!(last["model"], "claude-haiku-4-5");
    term.wait_until(
        |s| s.lines().last().is_some_and(|_| s.contains("claude-haiku-4-5 ·")),
        "the status line's model",
    );

    term.line("/compact the parser work");
    term.wait_for("turns replaced by a summary");
    let summary = setup.last_body();
    assert!(summary.contains("Keep in view above all: the parser work"), "{summary}");
    term.quit();
}

/// `/tasks` lists the background tasks; `k` kills the one chosen.
#[tokio::test(flavor = "multi_thread")]
async fn tasks_kills_a_background_task() {
    let setup = Setup::new().await;
    let mut term = setup.open(&[KEY], &[], (120, 40));
    let call = json!({"command": "echo begun && sleep 600", "run_in_background": true});
    term.line(&format!("call shell {call}"));
    term.wait_for("Tool done.");
    term.wait_for("1 task");
    term.line("/tasks");
    let screen = term.wait_for("Background tasks");
    assert!(screen.contains("running  echo begun && sleep 600"), "{screen}");
    term.send("k");
    term.wait_for("was stopped");
    term.wait_until(|s| !s.contains("1 task"), "no running task in the status line");
    term.quit();
}

/// `/resume` lists the folder's other sessions; the one picked continues,
/// its turns in the next request.
#[tokio::test(flavor = "multi_thread")]
async fn resume_picks_a_session() {
    let setup = Setup::new().await;
    let (home, work) = (&setup.home, &setup.work);
    let url = &setup.url;
    let out = super::zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--base-url", url, "-p", "earlier work"],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut term = setup.open(&[KEY], &[], (120, 40));
    term.line("/resume");
    let screen = term.wait_for("Resume which session?");
    assert!(
        screen.contains("❯ earlier work") && screen.contains("2 messages"),
        "{screen}"
    );
    term.send("\r");
    term.wait_for("last asked: earlier work");
    term.line("go on");
    term.wait_for("Answer: go on");
    let last = setup.last_body();
    assert!(last.contains("Answer: earlier work"), "{last}");
    term.quit();
}

/// A paste of 500 lines shows as one line in the input and is sent whole;
/// a resize while a command runs redraws the input at the new width, and a
/// 40-column terminal still shows the input and the status line.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_paste_and_a_resize_mid_run() {
    let setup = Setup::new().await;
    let work = &setup.work;
    let gate = super::started_fifo(work.path());
    let release = release_fifo(work.path());
    let bodies = &setup.bodies;
    let mut term = setup.open(&[KEY], &[], (100, 30));
    let paste: String = (1..=500).map(|i| format!("pasted line {i}\n")).collect();
    term.send("look at this: ");
    term.send(&format!("\x1b[200~{paste}\x1b[201~"));
    term.wait_for("› look at this: [pasted 500 lines]");
    term.send("\r");
    term.wait_for("─ 1 turn");
    term.idle();
    assert!(bodies.lock().unwrap()[0].contains("pasted line 500"));

    let command = json!({"command": format!("echo started > {} && cat {}", gate.display(), release.display())});
    term.line(&format!("call shell {command}"));
    assert_eq!(tokio::fs::read_to_string(&gate).await.unwrap().trim(), "started");
    term.resize(40, 20);
    // Once the program has drawn at the new width (what it drew at the
    // old width meanwhile stays above, as in any terminal)…
    term.wait_until(
        |s| s.lines().any(|l| l.starts_with('─') && l.chars().count() < 40),
        "the input redrawn at forty columns",
    );
    term.send("typed at forty columns");
    let screen = term.wait_for("› typed at forty columns");
    // The area under the scrollback is drawn at the new width.
    let area: Vec<&str> = screen.lines().rev().take_while(|l| !l.starts_with('─')).collect();
    for row in area {
        assert!(row.chars().count() < 40, "{row:?}");
    }
    tokio::fs::write(&release, "done\n").await.unwrap();
    let screen = term.wait_until(
        |s| s.contains("─ 2 turns") && s.contains("claude-sonnet-4-5 · "),
        "the end",
    );
    let after: Vec<&str> = screen.lines().skip_while(|l| !l.starts_with("─ 2 turns")).collect();
    let status = after.iter().filter(|l| l.starts_with("claude-sonnet-4-5 · ")).count();
    assert_eq!(status, 1, "one status line:\n{screen}");
    term.send("\x15");
    term.quit();
}

/// `NO_COLOR` leaves every colour out; without it the marks are coloured.
#[tokio::test(flavor = "multi_thread")]
async fn no_color_means_no_colour() {
    for no_color in [false, true] {
        let setup = Setup::new().await;
        let mut env = vec![KEY];
        if no_color {
            env.push(("NO_COLOR", "1"));
        }
        let mut term = setup.open(&env, &[], (100, 30));
        term.line("hello **bold** `code`");
        term.wait_for("Answer: hello bold code");
        let raw = String::from_utf8_lossy(&term.shared.0.lock().unwrap().raw).into_owned();
        let coloured = ["\x1b[36m", "\x1b[1m", "\x1b[2m", "\x1b[33m"]
            .iter()
            .any(|c| raw.contains(c));
        assert_eq!(coloured, !no_color, "NO_COLOR={no_color}");
        term.quit();
    }
}

/// `kill -9` of a session while a command runs loses nothing: `zidane
/// --resume` continues the interrupted run, in a fresh process.
#[tokio::test(flavor = "multi_thread")]
async fn killed_session_resumes() {
    let setup = Setup::new().await;
    let (home, work) = (&setup.home, &setup.work);
    let gate = super::started_fifo(work.path());
    let (url, bodies) = (&setup.url, &setup.bodies);
    let mut term = setup.open(&[KEY], &[], (100, 30));
    let command = json!({"command": format!("echo started > {} && sleep 600", gate.display())});
    term.line(&format!("call shell {command}"));
    assert_eq!(tokio::fs::read_to_string(&gate).await.unwrap().trim(), "started");
    let pid = term.child.process_id().unwrap();
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    term.kill();
    let requests = bodies.lock().unwrap().len();
    assert_eq!(requests, 1);

    let mut term = Term::start(
        home.path(),
        work.path(),
        &[KEY],
        &["--base-url", url, "--resume"],
        (100, 30),
    );
    term.wait_for("resumed with");
    term.wait_for("Tool done.");
    term.idle();
    term.line("and then?");
    term.wait_for("Answer: and then?");
    let last = setup.last_body();
    // The cut-off command is answered as interrupted, not run again.
    assert!(
        last.contains("call shell") && last.contains("this call was interrupted"),
        "{last}"
    );
    term.quit();
}

/// An MCP server's form (elicitation) is asked in the session, field by
/// field, and what was typed reaches the server.
#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_servers_form_is_filled_in_the_session() {
    let setup = Setup::new().await;
    write(
        &setup.home.path().join("config.toml"),
        &format!(
            "[mcp_servers.everything]\ncommand = \"{}\"\n",
            super::conventions::everything()
        ),
    );
    let mut term = setup.open(&[KEY], &[], (120, 50));
    term.line("call mcp_everything_trigger-elicitation-request {}");
    term.wait_for("? MCP server `everything` asks: Please provide inputs");
    term.line("Ada Lovelace");
    // The other fields keep their defaults.
    while term
        .wait_until(
            |s| s.contains("Tool done") || s.contains("Enter takes a field"),
            "the form or the answer",
        )
        .contains("Enter takes a field")
    {
        term.send("\r");
        if term.written_since(0).contains("answered · MCP server") {
            break;
        }
    }
    term.wait_for("Tool done");
    let body = setup.last_body();
    assert!(body.contains("Ada Lovelace"), "{body}");
    term.quit();
}

/// In a small window an `@file` mention attaches at most a quarter of it
/// (4 KB at 8,192 tokens), with a note where it was cut: a larger file
/// would make every next request overflow the window.
#[tokio::test(flavor = "multi_thread")]
async fn an_attachment_fits_a_small_window() {
    let setup = Setup::new().await;
    std::fs::write(setup.work.path().join("big.txt"), "x".repeat(20_000)).unwrap();
    let mut term = setup.open(&[KEY], &["--context-window", "8192"], (100, 30));
    term.line("Summarize @big.txt");
    term.wait_for("@ attached big.txt (4096 bytes)");
    // The answer echoes the 4 KB prompt, which scrolls past the screen.
    term.wait_for("─ 1 turn");
    let body = setup.last_body();
    assert!(
        body.contains("[cut at 4096 of 20000 bytes; read_file reads the rest]"),
        "{body}"
    );
    term.quit();
}

/// `/loop 1s PROMPT` sends the prompt now and again once the interval
/// passed (after the run before it ended); `/loop stop` ends it.
#[tokio::test(flavor = "multi_thread")]
async fn a_loop_sends_its_prompt_again_until_stopped() {
    let setup = Setup::new().await;
    let mut term = setup.open(&[KEY], &[], (120, 40));
    term.line("/loop 1s ping the build");
    term.wait_until(
        |s| s.matches("Answer: ping the build").count() >= 2,
        "the prompt answered twice",
    );
    term.wait_until(|s| s.contains("loop every 1s"), "the status line's loop");
    term.line("/loop stop");
    term.wait_for("1 loop stopped");
    term.idle();
    term.line("/loop");
    term.wait_for("No loops.");
    term.quit();
}
