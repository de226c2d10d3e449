//! The session's comforts, on the real binary in a pseudo-terminal:
//! `/diff`, plan mode, the external editor, `/init`, `/memory`, Ctrl-Z,
//! notifications, the status-line command, themes, a local model found on
//! the first run, and a resize in tmux.

use serde_json::json;

use super::conventions::{KEY, write};
use super::session::{Setup, Term};

/// Waits until what the program wrote after `from` bytes holds `needle`.
fn wait_written(term: &Term, from: usize, needle: &str) -> String {
    let (lock, ready) = &*term.shared;
    let mut s = lock.lock().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let text = String::from_utf8_lossy(&s.raw[from.min(s.raw.len())..]).into_owned();
        if text.contains(needle) {
            return text;
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        assert!(
            !left.is_zero() && !s.done,
            "the program never wrote {needle:?}; it wrote:\n{text}"
        );
        s = ready.wait_timeout(s, left).unwrap().0;
    }
}

/// Sends `call TOOL INPUT` and waits for its run to end.
fn call(term: &mut Term, tool: &str, input: &serde_json::Value) {
    let from = term.written();
    term.line(&format!("call {tool} {input}"));
    wait_written(term, from, "─ 2 turns");
    term.idle();
}

/// `/diff` after a write, an edit and a shell change: every file with its
/// counts, coloured; `/diff 4` only the shell's change.
#[tokio::test(flavor = "multi_thread")]
async fn diff_shows_the_sessions_changes_with_the_shells() {
    let setup = Setup::new().await;
    write(&setup.work.path().join("notes.txt"), "one\ntwo\nthree\n");
    let mut term = setup.open(&[KEY], &[], (100, 50));
    call(&mut term, "read_file", &json!({"path": "notes.txt"}));
    call(
        &mut term,
        "write_file",
        &json!({"path": "hello.txt", "content": "hello\nworld\n"}),
    );
    call(
        &mut term,
        "edit",
        &json!({"path": "notes.txt", "old_string": "two", "new_string": "TWO"}),
    );
    call(
        &mut term,
        "shell",
        &json!({"command": "printf 'from the shell\\n' > shell.txt"}),
    );
    let from = term.written();
    term.line("/diff");
    let screen = term.wait_for("3 files changed");
    assert!(screen.contains("3 files changed, +4 -1"), "{screen}");
    assert!(screen.contains("hello.txt (new) +2 -0"), "{screen}");
    assert!(screen.contains("notes.txt +1 -1"), "{screen}");
    assert!(screen.contains("shell.txt (new) +1 -0"), "{screen}");
    assert!(screen.contains("-two") && screen.contains("+TWO"), "{screen}");
    let raw = term.written_since(from);
    assert!(raw.contains("\x1b[32m+TWO") && raw.contains("\x1b[31m-two"), "coloured");
    term.line("/diff 4");
    let screen = term.wait_for("1 file changed");
    let after: Vec<&str> = screen.lines().skip_while(|l| !l.contains("/diff 4")).collect();
    let after = after.join("\n");
    assert!(
        after.contains("shell.txt (new) +1 -0") && after.contains("+from the shell"),
        "{after}"
    );
    assert!(!after.contains("hello.txt"), "{after}");
    term.line("/diff 9");
    term.wait_for("no checkpoint 9 (this session has 4)");
    term.quit();
}

/// The tools a request offered.
fn tools(body: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    v["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// The status line's last row.
fn status(screen: &str) -> String {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_owned()
}

/// `--plan` opens the session in plan mode: a write is refused; leaving
/// plan mode offers the plan, carried out with all tools; Shift-Tab cycles
/// ask → auto-edit → plan → ask on the status line.
#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_in_the_session_and_shift_tab() {
    let setup = Setup::new().await;
    let mut term = setup.open(&[KEY], &["--plan"], (120, 40));
    let screen = term.idle();
    assert!(status(&screen).contains("⏸ plan mode"), "{screen}");
    let from = term.written();
    term.line(r#"call write_file {"path": "planned.txt", "content": "no"}"#);
    wait_written(&term, from, "plan ready");
    let screen = term.idle();
    assert!(screen.contains("not available while planning"), "{screen}");
    assert!(!setup.work.path().join("planned.txt").exists());
    assert!(
        !tools(&setup.last_body()).contains(&"write_file".to_owned()),
        "read-only tools only"
    );

    // Leaving plan mode offers the plan.
    term.send("\x1b[Z");
    term.wait_for("Carry out the plan now");
    let from = term.written();
    term.send("y");
    wait_written(&term, from, "─ 1 turn");
    let screen = term.wait_until(|s| status(s).contains("approve ask"), "the status line in ask mode");
    assert!(screen.contains("Answer: The plan is approved"), "{screen}");
    assert!(!status(&screen).contains("plan mode"), "{screen}");
    assert!(
        tools(&setup.last_body()).contains(&"write_file".to_owned()),
        "all tools again"
    );

    // The cycle.
    for expected in ["approve auto-edit", "⏸ plan mode", "approve ask"] {
        term.send("\x1b[Z");
        term.wait_until(|s| status(s).contains(expected), expected);
    }
    // `/plan` turns it on again, and off.
    term.line("/plan");
    term.wait_until(|s| status(s).contains("⏸ plan mode"), "plan mode by /plan");
    term.line("/plan");
    term.wait_until(|s| !status(s).contains("plan mode"), "plan mode left by /plan");
    term.quit();
}

/// A script made executable.
fn script(path: &std::path::Path, body: &str) -> String {
    write(path, body);
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// Ctrl-G opens `$EDITOR` with the input; what it saves is sent.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_g_sends_what_the_editor_saved() {
    let setup = Setup::new().await;
    let editor = script(
        &setup.home.path().join("editor.sh"),
        "#!/bin/sh\nwas=$(cat \"$1\")\nprintf 'written in the editor\\nafter: %s\\n' \"$was\" > \"$1\"\n",
    );
    let mut term = setup.open(&[KEY, ("EDITOR", &editor), ("VISUAL", "")], &[], (100, 30));
    term.send("typed first");
    term.wait_for("› typed first");
    term.send("\x07");
    term.wait_for("Answer: written in the editor");
    term.idle();
    let body = setup.last_body();
    assert!(body.contains("written in the editor\\nafter: typed first"), "{body}");
    // The input is empty again and the session goes on.
    term.line("next");
    term.wait_for("Answer: next");
    term.quit();
}

/// `/init`'s model: a write attempted (refused: the run is read-only), then
/// the file.
fn explorer(body: &str) -> String {
    if !body.contains("<agents_md>") {
        return super::session::by_prompt(body);
    }
    if !body.contains("tool_result") {
        let input = json!({"path": "sneaky.txt", "content": "no"});
        return zidane_bench::loopback::call_sse("toolu_init", "write_file", &input, 50);
    }
    zidane_bench::loopback::answer_sse(
        "I looked around.\n<agents_md>\n## Build\n\nRun `cargo test --workspace`.\n</agents_md>",
        50,
    )
}

/// `/init` explores read-only, shows the change to `AGENTS.md`, and writes
/// it after a yes, keeping the hand-written part.
#[tokio::test(flavor = "multi_thread")]
async fn init_writes_agents_md_after_a_yes_keeping_what_a_person_wrote() {
    let (url, bodies) = super::server_with(None, explorer).await;
    let setup = Setup::with_url(url).await;
    let agents = setup.work.path().join("AGENTS.md");
    write(&agents, "# Notes\n\nDeploy with `make ship`.\n");
    let mut term = setup.open(&[KEY], &[], (100, 40));
    term.line("/init");
    let screen = term.wait_for("Write ");
    assert!(screen.contains("+Run `cargo test --workspace`."), "{screen}");
    assert!(screen.contains("AGENTS.md +"), "{screen}");
    assert!(
        !setup.work.path().join("sneaky.txt").exists(),
        "the exploring run is read-only"
    );
    assert!(
        !std::fs::read_to_string(&agents).unwrap().contains("cargo test"),
        "not before the yes"
    );
    let first = bodies.lock().unwrap()[0].clone();
    assert!(
        first.contains("Deploy with `make ship`."),
        "the prompt names the hand-written part"
    );
    term.send("y");
    term.wait_for("wrote ");
    let text = std::fs::read_to_string(&agents).unwrap();
    assert!(text.starts_with("# Notes\n\nDeploy with `make ship`.\n"), "{text}");
    assert!(text.contains("Run `cargo test --workspace`."), "{text}");
    term.quit();
}

/// `# FACT` asks where and appends it to the chosen file; `/memory user
/// FACT` goes to the person's own; the next start reads both.
#[tokio::test(flavor = "multi_thread")]
async fn memory_appends_to_the_chosen_file() {
    let setup = Setup::new().await;
    let mut term = setup.open(&[KEY], &[], (120, 30));
    term.line("# always use pnpm");
    term.wait_for("Remember \"always use pnpm\" where?");
    term.send("p");
    term.wait_for("remembered in");
    let project = std::fs::read_to_string(setup.work.path().join("AGENTS.md")).unwrap();
    assert_eq!(project, "## Remembered\n\n- always use pnpm\n");
    term.line("/memory user tabs, not spaces");
    term.wait_until(|s| s.matches("remembered in").count() == 2, "the second fact");
    let own = std::fs::read_to_string(setup.home.path().join("AGENTS.md")).unwrap();
    assert_eq!(own, "## Remembered\n\n- tabs, not spaces\n");
    term.line("/memory");
    term.wait_for("(1 remembered)");
    assert!(setup.bodies.lock().unwrap().is_empty(), "nothing reached the model");
    term.quit();
    // The next start reads them.
    let mut term = setup.open(&[KEY], &[], (120, 30));
    term.line("hello");
    term.wait_for("Answer: hello");
    let body = setup.last_body();
    assert!(
        body.contains("always use pnpm") && body.contains("tabs, not spaces"),
        "{body}"
    );
    term.quit();
}

/// A FIFO at `path`.
fn fifo(path: &std::path::Path) -> std::path::PathBuf {
    assert!(
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
    path.to_owned()
}

/// Ctrl-Z in a shell with job control: the terminal is given back (the
/// shell says the job stopped) while the run's command goes on; `fg` brings
/// the session back, redrawn, and the run ends.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_z_suspends_to_the_shell_and_fg_redraws() {
    let setup = Setup::new().await;
    let work = setup.work.path();
    let started = fifo(&work.join("started.fifo"));
    let release = fifo(&work.join("release.fifo"));
    let finished = fifo(&work.join("finished.fifo"));
    let mut term = super::session::Term::start_program(
        "bash",
        setup.home.path(),
        work,
        &[KEY, ("PS1", "$ "), ("HISTFILE", "/dev/null")],
        &["--norc", "--noprofile", "-i"],
        (100, 30),
    );
    term.wait_for("$ ");
    term.line(&format!("'{}' --base-url {}", env!("CARGO_BIN_EXE_zidane"), setup.url));
    term.wait_for("› ");
    let command = format!(
        "echo started > {} && cat {} && echo finished > {}",
        started.display(),
        release.display(),
        finished.display()
    );
    term.line(&format!("call shell {}", json!({ "command": command })));
    assert_eq!(tokio::fs::read_to_string(&started).await.unwrap().trim(), "started");
    term.send("\x1a");
    let screen = term.wait_for("Stopped");
    // The terminal is the shell's: no status line is left under its prompt.
    assert!(!status(&screen).contains("approve "), "{screen}");
    // The command goes on while the program is stopped.
    tokio::fs::write(&release, "go\n").await.unwrap();
    assert_eq!(tokio::fs::read_to_string(&finished).await.unwrap().trim(), "finished");
    term.line("fg");
    let screen = term.wait_until(
        |s| s.contains("Tool done") && status(s).contains("approve "),
        "the session back, redrawn, and the run's end",
    );
    assert!(screen.contains("exit code: 0"), "{screen}");
    term.line("after fg");
    term.wait_for("Answer: after fg");
    term.send("\x04");
    term.wait_for("zidane --resume --session");
    term.line("exit");
    term.finish();
}

/// Focus reporting is asked for; a turn that ends while the terminal
/// reported focus-out notifies (OSC 9 on WezTerm) and tells the
/// `Notification` hook; focused, or with `notifications = "off"`, nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_notification_when_focus_is_elsewhere_and_none_when_focused() {
    let setup = Setup::new().await;
    let heard = fifo(&setup.work.path().join("heard.fifo"));
    write(
        &setup.home.path().join("config.toml"),
        &format!("[[hooks.Notification]]\ncommand = \"cat > {}\"\n", heard.display()),
    );
    let mut term = setup.open(&[KEY, ("TERM_PROGRAM", "WezTerm")], &[], (100, 30));
    assert!(term.written_since(0).contains("\x1b[?1004h"), "focus reports asked for");
    term.send("\x1b[O");
    let from = term.written();
    term.line("while away");
    wait_written(&term, from, "\x1b]9;zidane: the turn ended");
    let told = tokio::fs::read_to_string(&heard).await.unwrap();
    assert!(told.contains("\"notification_type\":\"idle_prompt\""), "{told}");
    term.send("\x1b[I");
    let from = term.written();
    term.line("while here");
    wait_written(&term, from, "─ 1 turn");
    term.idle();
    assert!(
        !term.written_since(from).contains("\x1b]9;"),
        "no notification while focused"
    );
    term.quit();

    // An approval that waits while the terminal is elsewhere.
    let setup = Setup::new().await;
    let env = [KEY, ("TERM_PROGRAM", "WezTerm"), ("ZIDANE_APPROVE", "ask")];
    let mut term = setup.open(&env, &[], (100, 30));
    term.send("\x1b[O");
    let from = term.written();
    term.line(r#"call shell {"command": "true"}"#);
    wait_written(&term, from, "\x1b]9;zidane needs your permission to use shell");
    term.send("y");
    wait_written(&term, from, "─ 2 turns");
    term.quit();

    let setup = Setup::new().await;
    write(&setup.home.path().join("config.toml"), "notifications = \"off\"\n");
    let mut term = setup.open(&[KEY, ("TERM_PROGRAM", "WezTerm")], &[], (100, 30));
    term.send("\x1b[O");
    let from = term.written();
    term.line("while away");
    wait_written(&term, from, "─ 1 turn");
    term.idle();
    let raw = term.written_since(from);
    assert!(
        !raw.contains("\x1b]9;") && !raw.contains('\x07'),
        "notifications are off"
    );
    term.quit();
}

/// A status-line command reads the session's state as JSON and its first
/// line is shown; one that hangs is cut off at its timeout and says so.
#[tokio::test(flavor = "multi_thread")]
async fn a_status_line_command_is_shown_and_a_hanging_one_times_out() {
    let setup = Setup::new().await;
    let command = script(
        &setup.home.path().join("status.sh"),
        "#!/bin/sh\ncat > state.json\necho 'custom status · first line'\necho 'second line'\n",
    );
    write(
        &setup.home.path().join("config.toml"),
        &format!("status_line = {{ command = \"{command}\" }}\n"),
    );
    let term = setup.open(&[KEY], &[], (100, 30));
    let screen = term.wait_for("custom status · first line");
    assert!(!screen.contains("second line"), "{screen}");
    assert_eq!(status(&screen), "custom status · first line");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(setup.work.path().join("state.json")).unwrap()).unwrap();
    assert_eq!(state["model"]["id"], "claude-sonnet-4-5");
    assert!(state["session_id"].as_str().unwrap().starts_with("s-"), "{state}");
    assert_eq!(
        state["workspace"]["current_dir"].as_str().unwrap(),
        setup.work.path().canonicalize().unwrap().display().to_string()
    );
    for key in ["cost", "context_window", "cache", "version"] {
        assert!(state.get(key).is_some(), "{key} in {state}");
    }
    term.quit();

    let setup = Setup::new().await;
    write(
        &setup.home.path().join("config.toml"),
        "status_line = { command = \"sleep 30; echo never\", timeout_ms = 300 }\n",
    );
    let term = setup.open(&[KEY], &[], (100, 30));
    term.wait_for("status line command timed out after 300 ms");
    term.quit();
}

/// The highlighted line of `fn main() {}` in an answer, as written.
fn highlighted(raw: &str) -> String {
    raw.split("\r\n")
        .filter(|l| l.contains("main") && l.contains("\x1b["))
        .last()
        .unwrap_or_else(|| panic!("no highlighted line in {raw:?}"))
        .to_owned()
}

/// A session with `env` and the home's `config`, asked for an answer with
/// a Rust code block: the code's line as highlighted. `background`: the
/// terminal's answer to the background query.
async fn code_line(env: &[(&str, &str)], config: &str, background: Option<&str>) -> String {
    let setup = Setup::new().await;
    write(&setup.home.path().join("config.toml"), config);
    let mut env = env.to_vec();
    env.push(KEY);
    let args = ["--base-url", setup.url.as_str()];
    let mut term = Term::start(setup.home.path(), setup.work.path(), &env, &args, (100, 30));
    if let Some(answer) = background {
        wait_written(&term, 0, "\x1b]11;?");
        term.send(&format!("\x1b]11;{answer}\x1b\\\x1b[?62;22c"));
    }
    term.wait_for("› ");
    let from = term.written();
    // Ctrl-J: a new line in the input.
    term.send("code:\n```rust\nfn main() {}\n```\r");
    wait_written(&term, from, "─ 1 turn");
    let line = highlighted(&term.written_since(from));
    term.quit();
    line
}

/// The background asked with OSC 11: a light answer highlights code as
/// `theme = "light"` does (not as `theme = "dark"`); sixteen-colour
/// terminals get only the sixteen colours.
#[tokio::test(flavor = "multi_thread")]
async fn a_light_theme_chosen_from_the_terminals_answer() {
    let auto = [("COLORFGBG", "")];
    let light_answer = code_line(&auto, "", Some("rgb:ffff/ffff/fafa")).await;
    let light = code_line(&[], "theme = \"light\"\n", None).await;
    let dark = code_line(&[], "theme = \"dark\"\n", None).await;
    assert_eq!(light_answer, light);
    assert_ne!(light, dark);
    assert!(light.contains("\x1b[38;5;"), "{light:?}");
    let sixteen = code_line(&[("TERM", "xterm")], "", None).await;
    assert!(!sixteen.contains("38;5;") && !sixteen.contains("38;2;"), "{sixteen:?}");
    assert!(sixteen.contains("\x1b[3") || sixteen.contains("\x1b[9"), "{sixteen:?}");
}

/// A loopback server that answers like Ollama: its model list, and chat
/// completions; its port.
async fn ollama_like() -> u16 {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some((head_end, len)) = zidane_bench::loopback::read_request(&mut stream, &mut buf).await {
                    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                    buf.drain(..head_end + len);
                    let path = head.split_whitespace().nth(1).unwrap_or_default().to_owned();
                    let (status, kind, body) = match path.as_str() {
                        "/api/tags" => (
                            200,
                            "application/json",
                            json!({"models": [{"name": "qwen2.5-coder:1.5b", "model": "qwen2.5-coder:1.5b"}]}).to_string(),
                        ),
                        "/v1/chat/completions" => (
                            200,
                            "text/event-stream",
                            [
                                json!({"id": "c1", "model": "qwen2.5-coder:1.5b", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello from the local model."}}]}),
                                json!({"id": "c1", "model": "qwen2.5-coder:1.5b", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                            ]
                            .iter()
                            .map(|c| format!("data: {c}\n\n"))
                            .chain(std::iter::once("data: [DONE]\n\n".to_owned()))
                            .collect(),
                        ),
                        _ => (404, "application/json", "{}".to_owned()),
                    };
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// Without a key: the error names the loopback server found and its flags;
/// on a terminal it is offered, saved, and used.
#[tokio::test(flavor = "multi_thread")]
async fn a_first_run_without_a_key_finds_a_local_model() {
    let port = ollama_like().await.to_string();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let ports = ("ZIDANE_LOCAL_MODEL_PORTS", port.as_str());
    let out = super::zidane(home.path(), work.path(), &[ports], &["-p", "hello"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let base = format!("http://127.0.0.1:{port}/v1");
    assert!(
        stderr.contains(&format!("Ollama at {base} (qwen2.5-coder:1.5b)")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "--provider openai-compatible --base-url {base} --model qwen2.5-coder:1.5b"
        )),
        "{stderr}"
    );

    let mut term = Term::start(
        home.path(),
        work.path(),
        &[ports, ("ANTHROPIC_API_KEY", "")],
        &[],
        (100, 30),
    );
    term.wait_for("[1] qwen2.5-coder:1.5b (Ollama at");
    term.line("s");
    term.wait_for("› ");
    let config = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert!(config.contains("provider = \"openai-compatible\""), "{config}");
    assert!(config.contains(&format!("base_url = \"{base}\"")), "{config}");
    assert!(config.contains("model = \"qwen2.5-coder:1.5b\""), "{config}");
    term.line("hello");
    term.wait_for("Hello from the local model.");
    term.quit();
}

/// The pane tmux shows, read back with `capture-pane`.
fn capture(socket: &std::path::Path) -> String {
    let out = std::process::Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(["capture-pane", "-p"])
        .output()
        .expect("tmux (the CI installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Narrowing a tmux window (which reflows what it shows) leaves no piece of
/// the old input area: one separator, one input, one status line.
#[tokio::test(flavor = "multi_thread")]
async fn a_resize_in_tmux_leaves_no_fragment() {
    let setup = Setup::new().await;
    let socket = setup.home.path().join("tmux.sock");
    let command = format!("'{}' --base-url {}", env!("CARGO_BIN_EXE_zidane"), setup.url);
    let socket_arg = socket.display().to_string();
    let mut term = Term::start_program(
        "tmux",
        setup.home.path(),
        setup.work.path(),
        &[KEY],
        &[
            "-S",
            &socket_arg,
            "-f",
            "/dev/null",
            "new-session",
            &command,
            ";",
            "set",
            "status",
            "off",
        ],
        (100, 20),
    );
    term.wait_until(|s| status(s).starts_with("claude-sonnet-4-5 · "), "the session in tmux");
    term.send("hello this is a fairly long line of typed input that goes on");
    term.wait_for("that goes on");
    for cols in [40u16, 30] {
        term.resize(cols, 20);
        term.wait_until(
            |s| {
                s.lines().any(|l| {
                    l.starts_with("claude-sonnet-4-5")
                        && l.trim_end().ends_with('…')
                        && l.chars().count() < usize::from(cols)
                })
            },
            "the status line redrawn at the new width",
        );
        // The redraw may still be on its way to tmux: read the pane until
        // it holds one input area (fragments, once left, never go).
        let settled = |pane: &str| {
            let count = |f: &dyn Fn(&str) -> bool| pane.lines().filter(|l| f(l)).count();
            count(&|l| !l.is_empty() && l.chars().all(|c| c == '─')) == 1
                && count(&|l| l.starts_with("› ")) == 1
                && count(&|l| l.starts_with("claude-sonnet-4-5")) == 1
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut pane = capture(&socket);
        while !settled(&pane) && std::time::Instant::now() < deadline {
            pane = capture(&socket);
        }
        let count = |f: &dyn Fn(&str) -> bool| pane.lines().filter(|l| f(l)).count();
        assert_eq!(
            count(&|l| !l.is_empty() && l.chars().all(|c| c == '─')),
            1,
            "{cols} columns:\n{pane}"
        );
        assert_eq!(count(&|l| l.starts_with("› ")), 1, "{cols} columns:\n{pane}");
        assert_eq!(
            count(&|l| l.starts_with("claude-sonnet-4-5")),
            1,
            "{cols} columns:\n{pane}"
        );
        assert_eq!(count(&|l| l.contains("approve yolo")), 0, "{cols} columns:\n{pane}");
    }
    let _ = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .arg("kill-server")
        .status();
    term.kill();
}
