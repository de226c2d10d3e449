//! Language servers in the program: the configuration names a real server
//! (pyright, installed by `cargo xtask lsp-servers` into
//! `target/lsp-servers`), the model's edit gets the server's diagnostics,
//! and its next request carries them.

use std::path::Path;

use super::conventions::{KEY, scripted, write};
use super::{server_with, text, zidane};

fn pylsp() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/lsp-servers/venv/bin/pylsp");
    assert!(
        path.exists(),
        "{} is missing: `cargo xtask lsp-servers` installs it (`cargo xtask ci` runs it first)",
        path.display()
    );
    path.display().to_string()
}

fn pyright() -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/lsp-servers/node_modules/.bin/pyright-langserver");
    assert!(
        path.exists(),
        "{} is missing: `cargo xtask lsp-servers` installs it (`cargo xtask ci` runs it first)",
        path.display()
    );
    path.canonicalize().unwrap().display().to_string()
}

const GOOD: &str = "def total(xs: list[int]) -> int:\n    return sum(xs)\n\n\ncount: int = total([1, 2])\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_s_type_error_reaches_the_model_s_next_request() {
    let home = tempfile::tempdir().unwrap();
    // Not a hidden folder: pyright leaves those out of the project.
    let work = tempfile::Builder::new().prefix("lsp-work").tempdir().unwrap();
    write(&work.path().join("pyproject.toml"), "[project]\nname = \"demo\"\n");
    write(&work.path().join("app.py"), GOOD);
    write(
        &home.path().join("config.toml"),
        &format!(
            // A loaded machine (the whole suite on two cores) is slow.
            "lsp_wait = 60\n\n[lsp.pyright]\ncommand = \"{}\"\n\n[lsp.pylsp]\nenabled = false\n",
            pyright()
        ),
    );
    let (url, bodies) = server_with(
        None,
        scripted(&[
            ("read_file", r#"{"path": "app.py"}"#),
            (
                "write_file",
                r#"{"path": "app.py", "content": "def total(xs: list[int]) -> int:\n    return sum(xs)\n\n\ncount: int = total([1, 2])\nname: int = \"not a number\"\n"}"#,
            ),
        ]),
    )
    .await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--trust", "--json", "--base-url", &url, "Add a name."],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    // The folder is a Python project with its server found: the tool is offered.
    assert!(bodies[0].contains("\"name\":\"lsp\""), "{}", bodies[0]);
    assert!(
        bodies[2].contains(
            r#"app.py:6:13 error (new) Type \"Literal['not a number']\" is not assignable to declared type \"int\""#
        ),
        "{}",
        bodies[2]
    );
    let stdout = text(&out.stdout);
    let result = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "tool_result" && v["name"] == "write_file")
        .unwrap();
    assert_eq!(result["diagnostics"]["errors"], 1, "{result}");
    assert_eq!(result["diagnostics"]["server"], "pyright");
    // The run's tally counts them.
    let done: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(
        done["diagnostics"],
        serde_json::json!({"results": 1, "reported": 1, "errors": 1, "fixed": 0}),
        "{done}"
    );

    let out = zidane(home.path(), work.path(), &[], &["config"]).await;
    let shown = text(&out.stdout);
    let user = home.path().join("config.toml");
    assert!(
        shown.contains(&format!(
            "[lsp.pyright]  # {}:3; found\ncommand = \"{}\"",
            user.display(),
            pyright()
        )),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("[lsp.pylsp]  # {}:6; off", user.display())),
        "{shown}"
    );
    assert!(shown.contains("[lsp.rust-analyzer]  # built in;"), "{shown}");
    assert!(shown.contains("lsp_wait = 60"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_a_command_changed_get_their_diagnostics_in_its_result() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::Builder::new().prefix("lsp-work").tempdir().unwrap();
    write(&work.path().join("setup.py"), "");
    write(&work.path().join("app.py"), "print(one)\n");
    write(&work.path().join("untouched.py"), "print(never_looked_at)\n");
    write(
        &home.path().join("config.toml"),
        &format!(
            "lsp_wait = 60\n\n[lsp.pylsp]\ncommand = \"{}\"\n\n[lsp.pyright]\nenabled = false\n",
            pylsp()
        ),
    );
    let (url, bodies) = server_with(
        None,
        scripted(&[
            // The server first sees app.py as it is (one error).
            ("lsp", r#"{"operation": "document_symbols", "path": "app.py"}"#),
            (
                "shell",
                r#"{"command": "printf 'print(one)\nprint(two)\n' > app.py && printf 'print(three)\n' > gen.py && echo made"}"#,
            ),
        ]),
    )
    .await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--trust", "--json", "--base-url", &url, "Make the files."],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    let last = &bodies[2];
    assert!(last.contains("made"), "{last}");
    assert!(
        last.contains(r#"<diagnostics server=\"pylsp\" file=\"app.py\">"#),
        "{last}"
    );
    assert!(last.contains("app.py:2:7 error (new) undefined name 'two'"), "{last}");
    assert!(last.contains("app.py:1:7 error undefined name 'one'"), "{last}");
    // A file the command made: everything in it is new.
    assert!(last.contains("gen.py:1:7 error (new) undefined name 'three'"), "{last}");
    assert!(!last.contains("untouched.py"), "{last}");

    let stdout = text(&out.stdout);
    let result = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "tool_result" && v["name"] == "shell")
        .unwrap();
    assert_eq!(result["diagnostics"]["errors"], 3, "{result}");
    assert_eq!(result["diagnostics"]["new"], 2, "{result}");
    assert_eq!(result["diagnostics"]["path"], "app.py, gen.py", "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_no_server_serves_runs_as_without_language_servers() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(&work.path().join("notes.md"), "# notes\n");
    // A server that would start for Python files, and a folder without any.
    write(
        &home.path().join("config.toml"),
        &format!("[lsp.pylsp]\ncommand = \"{}\"\n", pylsp()),
    );
    let (url, bodies) = server_with(
        None,
        scripted(&[
            ("write_file", r##"{"path": "notes.md", "content": "# more notes\n"}"##),
            ("shell", r##"{"command": "echo '# even more' >> notes.md && echo ok"}"##),
        ]),
    )
    .await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--trust", "--json", "--base-url", &url, "Edit the notes."],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    assert!(!bodies[0].contains("\"name\":\"lsp\""), "no lsp tool: {}", bodies[0]);
    assert!(!bodies[2].contains("<diagnostics"), "{}", bodies[2]);
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("\"diagnostics\""), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_server_without_languages_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(
        &home.path().join("config.toml"),
        "model = \"m\"\n\n[lsp.mine]\ncommand = \"my-ls\"\n",
    );
    let out = zidane(home.path(), work.path(), &[], &["config"]).await;
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr.contains(&format!(
            "{}:3: `lsp.mine`: a new language server needs `languages`",
            home.path().join("config.toml").display()
        )),
        "{stderr}"
    );
}
