//! The field's conventions: instruction files, the layered configuration,
//! trust, permission rules, `.mcp.json` and custom commands, against the
//! loopback model.

use std::path::Path;

use serde_json::Value;
use zidane_bench::loopback::{answer_sse, call_sse};

use super::{in_terminal, server_with, text, zidane};

/// Replies that call `calls` one per turn (by how many results the body
/// holds), then answer `Done.`.
pub(super) fn scripted(
    calls: &'static [(&'static str, &'static str)],
) -> impl Fn(&str) -> String + Send + Sync + Copy + 'static {
    move |body: &str| {
        let n = body.matches("\"type\":\"tool_result\"").count();
        match calls.get(n) {
            Some((name, input)) => call_sse(
                &format!("toolu_{n}"),
                name,
                &serde_json::from_str::<Value>(input).unwrap(),
                50,
            ),
            None => answer_sse("Done.", 50),
        }
    }
}

pub(super) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub(super) const KEY: (&str, &str) = ("ANTHROPIC_API_KEY", "sk-test");

/// The rules block runs from the user's file to the working folder's, a
/// folder without `AGENTS.md` gives its `CLAUDE.md`, and a sub-folder's
/// file reaches the model with the first result under it, once.
#[tokio::test]
async fn instruction_files_from_general_to_specific_and_a_sub_folder_file_on_first_read() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    write(&home.path().join("AGENTS.md"), "USER-RULE");
    write(&repo.path().join("AGENTS.md"), "ROOT-RULE");
    write(&repo.path().join("mid/CLAUDE.md"), "MID-RULE");
    write(&repo.path().join("mid/cwd/AGENTS.md"), "CWD-RULE");
    write(&repo.path().join("mid/cwd/CLAUDE.md"), "SHADOWED-RULE");
    write(&repo.path().join("mid/cwd/sub/AGENTS.md"), "SUB-RULE");
    write(&repo.path().join("mid/cwd/sub/a.txt"), "alpha");
    write(&repo.path().join("mid/cwd/sub/b.txt"), "beta");
    let cwd = repo.path().join("mid/cwd");
    let (url, bodies) = server_with(
        None,
        scripted(&[
            ("read_file", r#"{"path": "sub/a.txt"}"#),
            ("read_file", r#"{"path": "sub/b.txt"}"#),
        ]),
    )
    .await;
    let out = zidane(home.path(), &cwd, &[KEY], &["--base-url", &url, "Read the files."]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let root = repo.path().display();
    let user = home.path().display();
    assert!(
        stderr.contains(&format!(
            "zidane: instructions: {user}/AGENTS.md (~3 tokens), {root}/AGENTS.md (~3 tokens), {root}/mid/CLAUDE.md (~2 tokens), {root}/mid/cwd/AGENTS.md (~2 tokens)\n"
        )),
        "{stderr}"
    );
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 3);
    let first: Value = serde_json::from_str(&bodies[0]).unwrap();
    let system = first["system"].to_string();
    let at = |s: &str| system.find(s).unwrap_or_else(|| panic!("{s} missing from {system}"));
    assert!(at("USER-RULE") < at("ROOT-RULE") && at("ROOT-RULE") < at("MID-RULE") && at("MID-RULE") < at("CWD-RULE"));
    assert!(
        !system.contains("SHADOWED-RULE") && !system.contains("SUB-RULE"),
        "{system}"
    );
    assert!(system.contains(&format!("## {root}/mid/cwd/AGENTS.md")), "{system}");
    assert_eq!(bodies[1].matches("SUB-RULE").count(), 1, "{}", bodies[1]);
    assert!(bodies[1].contains(&format!("<instructions file=\\\"{root}/mid/cwd/sub/AGENTS.md\\\">")));
    assert_eq!(bodies[2].matches("SUB-RULE").count(), 1, "offered once: {}", bodies[2]);
    // The system prompt is the same in every request: the cache holds.
    let last: Value = serde_json::from_str(&bodies[2]).unwrap();
    assert_eq!(first["system"], last["system"]);
}

/// `zidane context` lists the instruction files with their real paths.
#[tokio::test]
async fn the_context_report_names_the_instruction_files() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(&work.path().join("AGENTS.md"), "Be brief.");
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--base-url", "http://127.0.0.1:9", "context"],
    )
    .await;
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stdout.contains("  rules  "), "{stdout}");
    assert!(
        stdout.contains(&format!("  rules file {}/AGENTS.md ", work.path().display())),
        "{stdout}"
    );
}

fn config_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// Later wins: the user's file, the project's, the profile (the user's
/// table, then the project's), the environment, the flags; each value
/// shown with its source, secrets masked.
#[tokio::test]
async fn layers_and_profiles_take_effect_in_order_with_their_sources() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let user = home.path().join("config.toml");
    let project = work.path().join(".zidane/config.toml");
    write(
        &user,
        "model = \"user-model\"\nmax_turns = 5\napprove = \"auto-edit\"\nretries = 2\npass_env = [\"A_TOKEN\"]\nimages = false\n\n\
         [profiles.fast]\nmodel = \"fast-model\"\n\n[permissions]\ndeny = [\"shell(rm:*)\"]\n",
    );
    write(
        &project,
        "model = \"project-model\"\nmax_turns = 7\nbase_url = \"http://me:pw@127.0.0.1:9/v1\"\n\n\
         [profiles.fast]\nmax_turns = 9\n\n[permissions]\nallow = [\"shell(cargo test:*)\"]\n\n\
         [mcp_servers.gh]\ncommand = \"gh-mcp\"\nenv = { GITHUB_TOKEN = \"secret-value\" }\n",
    );
    let env = [("ZIDANE_RETRIES", "3")];
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &[
            "--trust",
            "--profile",
            "fast",
            "--approve",
            "yolo",
            "--pass-env",
            "B_TOKEN",
            "config",
        ],
    )
    .await;
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (u, p) = (user.display(), project.display());
    let lines = config_lines(&stdout);
    for want in [
        format!("model = \"fast-model\" # profile `fast`, {u}:9"),
        format!("images = false # {u}:6"),
        format!("max_turns = 9 # profile `fast`, {p}:6"),
        format!("base_url = \"http://me:***@127.0.0.1:9/v1\" # {p}:3"),
        "retries = 3 # $ZIDANE_RETRIES".to_owned(),
        "approve = yolo # flag".to_owned(),
        "pass_env = [\"A_TOKEN\", \"B_TOKEN\"] # flag".to_owned(),
        "thinking = off # default".to_owned(),
        "trust = true # flag".to_owned(),
        format!("deny = \"shell(rm:*)\" # {u}:12"),
        format!("allow = \"shell(cargo test:*)\" # {p}:9"),
        format!("[mcp_servers.gh] # {p}:11"),
        "env = {\"GITHUB_TOKEN\":\"***\"}".to_owned(),
    ] {
        assert!(lines.contains(&want), "missing `{want}` in:\n{stdout}");
    }
    assert!(!stdout.contains("secret-value") && !stdout.contains(":pw@"));

    // Not trusted (no terminal to ask): the project's file is left out.
    let out = zidane(home.path(), work.path(), &[], &["config"]).await;
    let stdout = text(&out.stdout);
    let lines = config_lines(&stdout);
    assert!(lines.contains(&format!("model = \"user-model\" # {u}:1")), "{stdout}");
    assert!(
        stdout.contains(&format!("# ignored (the folder is not trusted): {p}")),
        "{stdout}"
    );
}

/// A key the program does not know, a value of the wrong kind, a bad rule
/// and a missing profile stop the program before anything runs, naming the
/// file, the line and the key.
#[tokio::test]
async fn configuration_errors_name_the_file_line_and_key() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server_with(None, scripted(&[])).await;
    let user = home.path().join("config.toml");
    let shown = user.display().to_string();
    for (file, args, want) in [
        (
            "model = \"m\"\nmodle = \"x\"\n",
            vec![],
            format!("zidane: {shown}:2:1: unknown field `modle`, expected one of"),
        ),
        (
            "[profiles.x]\nmax_turns = 0\n",
            vec![],
            format!("zidane: {shown}:2:13: `profiles.x.max_turns`: 0 is not a positive whole number\n"),
        ),
        (
            "approve = \"always\"\n",
            vec![],
            format!(
                "zidane: {shown}:1:11: `approve`: unknown variant `always`, expected one of `ask`, `auto-edit`, `yolo`\n"
            ),
        ),
        (
            "[permissions]\n\nallow = [\"shell(cargo test\"]\n",
            vec![],
            format!("zidane: {shown}:3: `permissions.allow`: `shell(cargo test`: the specifier must end with `)`\n"),
        ),
        (
            "[mcp_servers.a]\ncommand = 3\n",
            vec![],
            format!("zidane: {shown}:1: `mcp_servers.a`: `mcpServers.a.command` must be a string\n"),
        ),
        (
            "",
            vec!["--profile", "nope"],
            "zidane: no profile `nope` in the configuration (none is defined; a profile is a [profiles.nope] table)\n"
                .to_owned(),
        ),
    ] {
        write(&user, file);
        let mut all = vec!["--base-url", url.as_str()];
        all.extend(args);
        all.push("Hello.");
        let out = zidane(home.path(), work.path(), &[KEY], &all).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.starts_with(&want), "want `{want}`, got `{stderr}`");
    }
    // A project cannot trust itself.
    write(&user, "");
    write(&work.path().join(".zidane/config.toml"), "trust = true\n");
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--trust", "--base-url", &url, "Hello."],
    )
    .await;
    assert!(text(&out.stderr).contains("config.toml:1: `trust`: a project cannot trust itself"));
    assert!(bodies.lock().unwrap().is_empty(), "nothing ran");
}

pub(super) fn everything() -> String {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers/node_modules/.bin/mcp-server-everything");
    assert!(
        bin.exists(),
        "{} is missing: `cargo xtask mcp-servers` installs the real MCP servers the tests use",
        bin.display()
    );
    bin.display().to_string()
}

/// `.mcp.json` (with `${VAR:-default}`) is a project file: without a
/// terminal to ask, an untrusted folder's server is not started; with
/// `--trust` it is, and the model calls its tool.
#[tokio::test]
async fn an_untrusted_projects_mcp_server_starts_only_with_trust() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(
        &work.path().join(".mcp.json"),
        r#"{"mcpServers": {"everything": {"command": "${EVERYTHING_BIN:-mcp-server-everything}", "env": {"GREETING": "${NOT_SET_ANYWHERE:-hello}"}}}}"#,
    );
    let bin = everything();
    let env = [KEY, ("EVERYTHING_BIN", bin.as_str())];
    let (url, bodies) = server_with(None, scripted(&[("mcp_everything_echo", r#"{"message": "hi there"}"#)])).await;
    let out = zidane(home.path(), work.path(), &env, &["--base-url", &url, "Echo."]).await;
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "zidane: ignoring .mcp.json in {} (the folder is not trusted; answer the question on a terminal, or pass --trust)",
            work.path().display()
        )),
        "{stderr}"
    );
    {
        let bodies = bodies.lock().unwrap();
        assert!(!bodies[0].contains("mcp_everything_echo"), "not offered");
        bodies.iter().for_each(|b| assert!(!b.contains("Echo: hi there")));
    }
    bodies.lock().unwrap().clear();
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--trust", "--base-url", &url, "Echo."],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("ignoring"), "{stderr}");
    let bodies = bodies.lock().unwrap().clone();
    assert!(bodies[0].contains("\"name\":\"mcp_everything_echo\""), "{}", bodies[0]);
    assert!(bodies[1].contains("Echo: hi there"), "{}", bodies[1]);
}

/// Rules from the configuration and the flags, with no terminal to ask:
/// an allowed command runs, a denied one and a denied read are refused
/// with the rule named to the model, and one no rule covers is refused for
/// want of a person to ask.
#[tokio::test]
async fn permission_rules_allow_and_deny_without_asking() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(
        &home.path().join("config.toml"),
        "[permissions]\nallow = [\"shell(echo:*)\"]\ndeny = [\"read_file(.env)\"]\n",
    );
    write(&work.path().join(".env"), "SECRET=1");
    let (url, bodies) = server_with(
        None,
        scripted(&[
            ("shell", r#"{"command": "echo one > one.txt && echo two >> one.txt"}"#),
            ("shell", r#"{"command": "echo ok && rm one.txt"}"#),
            ("read_file", r#"{"path": ".env"}"#),
            ("shell", r#"{"command": "touch two.txt"}"#),
        ]),
    )
    .await;
    let env = [KEY, ("ZIDANE_APPROVE", "ask")];
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--deny", "shell(rm:*)", "--base-url", &url, "Make files."],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(work.path().join("one.txt")).unwrap(),
        "one\ntwo\n"
    );
    assert!(!work.path().join("two.txt").exists());
    let bodies = bodies.lock().unwrap().clone();
    assert!(
        bodies[2].contains("Blocked: denied by the permission rule `shell(rm:*)` (--deny)"),
        "{}",
        bodies[2]
    );
    let config = home.path().join("config.toml");
    assert!(
        bodies[3].contains(&format!(
            "Blocked: denied by the permission rule `read_file(.env)` ({}:3)",
            config.display()
        )),
        "{}",
        bodies[3]
    );
    assert!(!bodies[3].contains("SECRET=1"));
    assert!(bodies[4].contains("there is no terminal to ask on"), "{}", bodies[4]);
}

/// At the question, `p` allows the command's prefix in the project's
/// configuration (and trusts the folder): the next run, with no terminal,
/// runs it without asking.
#[tokio::test]
async fn an_answer_saved_as_a_project_rule_holds_in_the_next_run() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, _bodies) = server_with(None, scripted(&[("shell", r#"{"command": "touch made.txt"}"#)])).await;
    let out = in_terminal(
        home.path(),
        work.path(),
        &[],
        &format!("--base-url {url} 'Make a file.'"),
        b"p\n",
    )
    .await;
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("always in this [p]roject / always for this [u]ser (`shell(touch:*)`)"),
        "{shown}"
    );
    assert!(work.path().join("made.txt").exists());
    let project = std::fs::read_to_string(work.path().join(".zidane/config.toml")).unwrap();
    assert_eq!(project, "[permissions]\nallow = [\"shell(touch:*)\"]\n");
    let user = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert_eq!(
        user,
        format!("[projects.\"{}\"]\ntrust = true\n", work.path().display())
    );

    std::fs::remove_file(work.path().join("made.txt")).unwrap();
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY, ("ZIDANE_APPROVE", "ask")],
        &["--base-url", &url, "Make a file."],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(work.path().join("made.txt").exists(), "{}", text(&out.stdout));
}

/// `zidane -p /NAME args`: the template with its arguments is the prompt,
/// its model is used, its `allowed-tools` allow; an untrusted project's
/// commands are not offered.
#[tokio::test]
async fn a_custom_command_runs_with_its_arguments() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(
        &work.path().join(".zidane/commands/release/notes.md"),
        "---\ndescription: Draft release notes\nargument-hint: <version> <audience>\nmodel: small-model\n\
         allowed-tools: Bash(git log:*)\n---\nDraft the notes of version $1 for $2. (Asked: $ARGUMENTS)\n",
    );
    let (url, bodies) = server_with(None, scripted(&[])).await;
    let env = [KEY, ("ZIDANE_APPROVE", "ask")];
    let out = zidane(home.path(), work.path(), &env, &["--trust", "--list-commands"]).await;
    assert_eq!(
        text(&out.stdout),
        format!(
            "/release:notes <version> <audience>  Draft release notes  ({})\n",
            work.path().join(".zidane/commands/release/notes.md").display()
        )
    );
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &[
            "--trust",
            "--base-url",
            &url,
            "-p",
            "/release:notes",
            "2.0",
            "'power users'",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let first: Value = serde_json::from_str(&bodies.lock().unwrap()[0]).unwrap();
    assert_eq!(first["model"], "small-model");
    assert_eq!(
        first["messages"][0]["content"][0]["text"],
        "Draft the notes of version 2.0 for power users. (Asked: 2.0 'power users')\n"
    );
    let out = zidane(
        home.path(),
        work.path(),
        &env,
        &["--base-url", &url, "-p", "/release:notes", "2.0"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no command `/release:notes` (there are none;"),
        "{}",
        text(&out.stderr)
    );
}

/// Plan then act: the planning run offers only the read-only tools and
/// refuses a write; the plan is approved after an edit, and the session
/// goes on with every tool and the edited plan.
fn plan_then_act(body: &str) -> String {
    let results = body.matches("\"type\":\"tool_result\"").count();
    if !body.contains("The plan is approved") {
        return match results {
            0 => call_sse(
                "toolu_p",
                "write_file",
                &serde_json::json!({"path": "hello.txt", "content": "hi"}),
                50,
            ),
            _ => answer_sse("1. Write hello.txt.", 50),
        };
    }
    match results {
        1 => call_sse(
            "toolu_a",
            "write_file",
            &serde_json::json!({"path": "bye.txt", "content": "bye"}),
            50,
        ),
        _ => answer_sse("Done.", 50),
    }
}

fn tool_names(body: &str) -> Vec<String> {
    let body: Value = serde_json::from_str(body).unwrap();
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn plan_mode_refuses_writes_until_the_plan_is_approved() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server_with(None, plan_then_act).await;
    // No terminal: the plan waits for `--resume`.
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--plan", "--base-url", &url, "Say hello."],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("zidane: plan mode changed nothing; to carry out the plan: zidane --resume --session "),
        "{stderr}"
    );
    assert!(!work.path().join("hello.txt").exists());
    {
        let bodies = bodies.lock().unwrap();
        assert_eq!(bodies.len(), 2);
        assert_eq!(
            tool_names(&bodies[0]),
            [
                "read_file",
                "list_files",
                "glob",
                "grep",
                "todowrite",
                "todoread",
                "web_fetch",
                "skill"
            ]
        );
        assert!(bodies[0].contains("Plan mode: investigate with the read-only tools"));
        assert!(
            bodies[1].contains("Blocked: plan mode: `write_file` is not available while planning"),
            "{}",
            bodies[1]
        );
    }
    bodies.lock().unwrap().clear();

    // On a terminal: `e` edits the plan (the editor turns hello into bye),
    // and the session goes on with every tool.
    let out = in_terminal(
        home.path(),
        work.path(),
        &[("ZIDANE_APPROVE", "yolo"), ("EDITOR", "sed -i s/hello/bye/")],
        &format!("--plan --base-url {url} 'Say hello.'"),
        b"e\n",
    )
    .await;
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("Carry out this plan? [y]es / [e]dit it first / [n]o"),
        "{shown}"
    );
    assert!(!work.path().join("hello.txt").exists());
    assert_eq!(std::fs::read_to_string(work.path().join("bye.txt")).unwrap(), "bye");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 4);
    assert!(
        bodies[2].contains("<plan>\\n1. Write bye.txt.\\n</plan>"),
        "{}",
        bodies[2]
    );
    assert!(tool_names(&bodies[2]).contains(&"write_file".to_owned()));
    assert!(tool_names(&bodies[2]).contains(&"shell".to_owned()));
}

/// A few bytes that start like a PNG (the providers check no more here).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR tiny";

fn png_base64() -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(PNG)
}

/// `--image` and `@path` attach images in both wire formats (one block per
/// file); a file that is not an image, one past the provider's limit and a
/// model set not to take images are refused before anything runs.
#[tokio::test]
async fn images_reach_the_request_in_both_formats() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("shot.png"), PNG).unwrap();
    let mut big = PNG.to_vec();
    big.resize(6 * 1024 * 1024, 0);
    std::fs::write(work.path().join("big.png"), big).unwrap();
    std::fs::write(work.path().join("notes.txt"), "text").unwrap();
    let (url, bodies) = server_with(None, scripted(&[])).await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--image", "shot.png", "--base-url", &url, "What is in @shot.png?"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let first: Value = serde_json::from_str(&bodies.lock().unwrap()[0]).unwrap();
    let content = first["messages"][0]["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "one block per file: {content:?}");
    assert_eq!(content[0]["text"], "What is in @shot.png?");
    assert_eq!(
        content[1]["source"],
        serde_json::json!({"type": "base64", "media_type": "image/png", "data": png_base64()})
    );

    let (url, bodies) = super::server(super::Wire::OpenAi, None).await;
    let out = zidane(
        home.path(),
        work.path(),
        &[("OPENAI_API_KEY", "sk-test")],
        &[
            "--provider",
            "openai",
            "--base-url",
            &format!("{url}/v1"),
            "Describe @shot.png.",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let first: Value = serde_json::from_str(&bodies.lock().unwrap()[0]).unwrap();
    let user = first["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(
        user["content"][1],
        serde_json::json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", png_base64())}})
    );

    for (args, want) in [
        (
            vec!["What is in @big.png?"],
            "zidane: @big.png: 6.0 MB is over the 5.0 MB Anthropic take per image\n",
        ),
        (
            vec!["--image", "notes.txt", "Read it."],
            "zidane: --image notes.txt: not a PNG, JPEG, GIF or WebP image\n",
        ),
        (
            vec!["--provider", "openai-compatible", "--model", "m", "See @shot.png"],
            "zidane: @shot.png: this model is set not to take images (`images = false`, the default for openai-compatible servers; set `images = true` in the configuration if it does)\n",
        ),
    ] {
        let mut all = vec!["--base-url", "http://127.0.0.1:9"];
        all.extend(args);
        let out = zidane(home.path(), work.path(), &[KEY], &all).await;
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).ends_with(want), "{}", text(&out.stderr));
    }
}

/// `read_file` on an image returns the image to a model that takes images,
/// and a note to one that does not.
#[tokio::test]
async fn read_file_returns_an_image_to_models_that_take_images() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("shot.png"), PNG).unwrap();
    let (url, bodies) = server_with(None, scripted(&[("read_file", r#"{"path": "shot.png"}"#)])).await;
    let out = zidane(home.path(), work.path(), &[KEY], &["--base-url", &url, "Look."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let second: Value = serde_json::from_str(&bodies.lock().unwrap()[1]).unwrap();
    let result = &second["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(
        result["content"],
        serde_json::json!([
            {"type": "text", "text": format!("`shot.png` is an image (PNG, {} bytes):", PNG.len())},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_base64()}},
        ])
    );
    bodies.lock().unwrap().clear();
    write(&home.path().join("config.toml"), "images = false\n");
    let out = zidane(home.path(), work.path(), &[KEY], &["--base-url", &url, "Look."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let second = bodies.lock().unwrap()[1].clone();
    assert!(
        second.contains("[the image is not shown: this model is set not to take images]"),
        "{second}"
    );
    assert!(!second.contains(&png_base64()));
}

/// A loopback web server: `/page` (HTML), `/r1` (a redirect to it),
/// `/loop` (a redirect to itself); it keeps every request head.
async fn web_server() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let heads: std::sync::Arc<std::sync::Mutex<Vec<String>>> = std::sync::Arc::default();
    let seen = std::sync::Arc::clone(&heads);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let seen = std::sync::Arc::clone(&seen);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut head = String::new();
                while !head.contains("\r\n\r\n") {
                    let Ok(n) = stream.read(&mut buf).await else { return };
                    if n == 0 {
                        return;
                    }
                    head.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
                seen.lock().unwrap().push(head.clone());
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let response = match path.as_str() {
                    "/page" => {
                        let body = "<html><head><title>T</title><script>track()</script></head><body><h1>Release notes</h1><p>Version <b>2.0</b> is out.</p></body></html>";
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    }
                    "/r1" => "HTTP/1.1 302 Found\r\nlocation: /page\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        .to_owned(),
                    _ => "HTTP/1.1 302 Found\r\nlocation: /loop\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        .to_owned(),
                };
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    (base, heads)
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// `web_fetch` refuses a loopback address unless a rule allows the host;
/// allowed, it returns the page as Markdown, follows a redirect, gives up on
/// a redirect loop, and sends no credentials.
#[tokio::test]
async fn web_fetch_reads_pages_as_markdown_within_its_limits() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (base, heads) = web_server().await;
    let calls: &'static [(&'static str, &'static str)] = Box::leak(Box::new([
        ("web_fetch", leak(format!(r#"{{"url": "{base}/page"}}"#))),
        ("web_fetch", leak(format!(r#"{{"url": "{base}/r1"}}"#))),
        ("web_fetch", leak(format!(r#"{{"url": "{base}/loop"}}"#))),
    ]));
    let (url, bodies) = server_with(None, scripted(calls)).await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--base-url", &url, "Read the notes."],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    {
        let bodies = bodies.lock().unwrap();
        assert!(
            bodies[1].contains("is at 127.0.0.1, a loopback or private address; web_fetch reaches only public addresses unless a rule allows the host (`web_fetch(domain:127.0.0.1)`)"),
            "{}",
            bodies[1]
        );
        assert!(heads.lock().unwrap().is_empty(), "nothing was fetched");
    }
    bodies.lock().unwrap().clear();
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &[
            "--allow",
            "web_fetch(domain:127.0.0.1)",
            "--base-url",
            &url,
            "Read the notes.",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = bodies.lock().unwrap().clone();
    let result = |i: usize| -> String {
        let body: Value = serde_json::from_str(&bodies[i]).unwrap();
        let messages = body["messages"].as_array().unwrap();
        messages.last().unwrap()["content"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(
        result(1),
        format!("{base}/page\n\n# Release notes\n\nVersion **2.0** is out.")
    );
    assert_eq!(
        result(2),
        format!("{base}/page (redirected from {base}/r1)\n\n# Release notes\n\nVersion **2.0** is out.")
    );
    assert!(
        bodies[3].contains(&format!("more than 5 redirects from {base}/loop")),
        "{}",
        bodies[3]
    );
    let heads = heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 1 + 2 + 6, "one, two, then six hops before giving up");
    for head in heads {
        let lower = head.to_ascii_lowercase();
        assert!(
            !lower.contains("authorization")
                && !lower.contains("x-api-key")
                && !lower.contains("cookie")
                && !lower.contains("sk-test"),
            "{head}"
        );
    }
}

/// On a terminal, the first start in a folder with project files shows
/// what they would add and asks; a yes is remembered in the user's file,
/// and the project's configuration takes effect.
#[tokio::test]
async fn the_first_start_on_a_terminal_asks_to_trust_the_folder() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(
        &work.path().join(".zidane/config.toml"),
        "system = \"PROJECT-SYSTEM-NOTE\"\n\n[mcp_servers.tools]\ncommand = \"my-mcp-server\"\n",
    );
    write(&work.path().join(".zidane/commands/hi.md"), "Say hi.");
    let (url, bodies) = server_with(None, scripted(&[])).await;
    // The server cannot start (no such program): its failure is named and
    // the run goes on; what matters is that the project's keys were used.
    let out = in_terminal(
        home.path(),
        work.path(),
        &[],
        &format!("--base-url {url} 'Hello.'"),
        b"y\n",
    )
    .await;
    let shown = text(&out.stdout);
    let root = work.path().display();
    assert!(
        shown.contains(&format!(
            "This folder ({root}) has files that can run programs on your behalf:"
        )),
        "{shown}"
    );
    assert!(
        shown.contains("  .zidane/config.toml: sets system; MCP server `tools`: my-mcp-server"),
        "{shown}"
    );
    assert!(
        shown.contains("  .zidane/commands: 1 custom command file(s)"),
        "{shown}"
    );
    assert!(
        shown.contains("Trust this folder and use them? [y]es / [n]o: "),
        "{shown}"
    );
    let user = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert_eq!(user, format!("[projects.\"{root}\"]\ntrust = true\n"));
    assert!(bodies.lock().unwrap()[0].contains("PROJECT-SYSTEM-NOTE"));
    // `zidane config` says where the answer is kept.
    let out = zidane(home.path(), work.path(), &[], &["config"]).await;
    let lines = config_lines(&text(&out.stdout));
    let user_file = home.path().join("config.toml");
    assert!(
        lines.contains(&format!("trust = true # {}:1", user_file.display())),
        "{lines:?}"
    );
    // Asked once: the next run, even without a terminal, uses the files.
    bodies.lock().unwrap().clear();
    let out = zidane(home.path(), work.path(), &[KEY], &["--base-url", &url, "Hello."]).await;
    assert!(!text(&out.stderr).contains("ignoring"), "{}", text(&out.stderr));
    assert!(bodies.lock().unwrap()[0].contains("PROJECT-SYSTEM-NOTE"));
}

/// Past a share of the window the MCP server's tools wait for
/// `tool_search`; one the model finds is offered from the next request on,
/// after the tools it already had.
#[tokio::test]
async fn deferred_tools_come_in_through_tool_search() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("servers.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"everything": {"command": everything()}}}).to_string(),
    )
    .unwrap();
    let (url, bodies) = server_with(
        None,
        scripted(&[
            ("tool_search", r#"{"query": "echo"}"#),
            ("mcp_everything_echo", r#"{"message": "hi"}"#),
        ]),
    )
    .await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &[
            "--mcp",
            config.to_str().unwrap(),
            "--context-window",
            "8192",
            "--base-url",
            &url,
            "Echo hi.",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = bodies.lock().unwrap().clone();
    let first = tool_names(&bodies[0]);
    assert!(first.contains(&"tool_search".to_owned()), "{first:?}");
    assert!(!first.iter().any(|n| n.starts_with("mcp_everything_")), "{first:?}");
    assert!(bodies[1].contains("- mcp_everything_echo: "), "{}", bodies[1]);
    let second = tool_names(&bodies[1]);
    assert_eq!(&second[..first.len()], &first[..], "the stable tools keep their place");
    assert_eq!(second.last().unwrap(), "mcp_everything_echo");
    assert!(bodies[2].contains("Echo: hi"), "{}", bodies[2]);
}

/// A test run's passing lines are left out of what the model reads, the
/// whole output is kept where it can read it, and the summary counts what
/// was left out.
#[tokio::test]
async fn a_test_runs_output_reaches_the_model_reduced() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../zidane-tools/tests/fixtures/output/cargo-test.txt");
    std::fs::copy(&fixture, work.path().join("run.txt")).unwrap();
    // `cargo test` here prints the recorded run (and fails, as it did).
    let (url, bodies) = server_with(
        None,
        scripted(&[(
            "shell",
            r#"{"command": "cat run.txt; false || cargo test --offline --no-run 2>/dev/null"}"#,
        )]),
    )
    .await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--summary", "--base-url", &url, "Run the tests."],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = bodies.lock().unwrap().clone();
    assert!(!bodies[1].contains("test tests::p01 ... ok"), "{}", bodies[1]);
    assert!(bodies[1].contains("test result: FAILED. 60 passed; 2 failed; 1 ignored"));
    assert!(
        bodies[1].contains("[61 passing and progress lines omitted; full output: "),
        "{}",
        bodies[1]
    );
    let summary: Value = serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
    assert!(
        summary["contextSavings"]["reducedOutputTokens"].as_u64().unwrap() > 300,
        "{summary}"
    );
}

/// `reduce_output = false` gives command output as it is; `api_key_env`
/// names the variable holding the provider's key.
#[tokio::test]
async fn reduce_output_and_api_key_env_keys() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../zidane-tools/tests/fixtures/output/cargo-test.txt");
    std::fs::copy(&fixture, work.path().join("run.txt")).unwrap();
    write(
        &home.path().join("config.toml"),
        "provider = \"anthropic\"\napi_key_env = \"MY_TEAM_KEY\"\nreduce_output = false\n",
    );
    let (url, bodies) = server_with(
        None,
        scripted(&[(
            "shell",
            r#"{"command": "cat run.txt; false || cargo test --offline --no-run 2>/dev/null"}"#,
        )]),
    )
    .await;
    // Without the variable the key names, the program says which it wants.
    let out = zidane(home.path(), work.path(), &[], &["--base-url", &url, "Run the tests."]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("needs MY_TEAM_KEY in the environment"),
        "{}",
        text(&out.stderr)
    );
    let out = zidane(
        home.path(),
        work.path(),
        &[("MY_TEAM_KEY", "sk-team")],
        &["--base-url", &url, "Run the tests."],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = bodies.lock().unwrap().clone();
    assert!(
        bodies[1].contains("test tests::p01 ... ok"),
        "the raw output: {}",
        bodies[1]
    );
    assert!(!bodies[1].contains("omitted"));
}
