//! Language servers in the program: the configuration names a real server
//! (pyright, installed by `cargo xtask lsp-servers` into
//! `target/lsp-servers`), the model's edit gets the server's diagnostics,
//! and its next request carries them.

use std::path::Path;

use super::conventions::{KEY, scripted, write};
use super::{server_with, text, zidane};

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
