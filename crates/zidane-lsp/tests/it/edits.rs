//! Diagnostics after edits, from real servers.

use crate::support::{edit, folder, installed_bus, lsp, pylsp, pyright};

const GOOD: &str = "def total(xs: list[int]) -> int:\n    return sum(xs)\n\n\ncount: int = total([1, 2])\n";
const TYPE_ERROR: &str = "def total(xs: list[int]) -> int:\n    return sum(xs)\n\n\ncount: int = total([1, 2])\nname: int = \"not a number\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_reports_the_type_error_an_edit_introduces_and_then_that_it_is_fixed() {
    let dir = folder(&[("pyproject.toml", "[project]\nname = \"demo\"\n"), ("app.py", GOOD)]);
    let lsp = lsp(dir.path(), pyright());
    let bus = installed_bus(&lsp);

    let (text, meta) = edit(&bus, dir.path(), "c1", "app.py", TYPE_ERROR).await;
    assert!(
        text.starts_with("Wrote app.py\n\n<diagnostics server=\"pyright\" file=\"app.py\">"),
        "{text}"
    );
    assert!(
        text.contains(
            "app.py:6:13 error (new) Type \"Literal['not a number']\" is not assignable to declared type \"int\""
        ),
        "{text}"
    );
    assert_eq!(meta["errors"], 1, "{meta}");
    assert_eq!(meta["new"], 1);

    let (text, meta) = edit(&bus, dir.path(), "c2", "app.py", GOOD).await;
    assert!(
        text.contains("No errors or warnings now: this edit fixed 1 problem."),
        "{text}"
    );
    assert_eq!(meta["fixed"], 1, "{meta}");
    assert_eq!(lsp.counts().reported, 1);
    assert_eq!(lsp.counts().fixed, 1);

    // A clean edit of a clean file leaves the result as it was.
    let (text, _) = edit(&bus, dir.path(), "c3", "app.py", &format!("{GOOD}# done\n")).await;
    assert_eq!(text, "Wrote app.py");
    lsp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pylsp_tells_an_error_already_there_from_the_new_one() {
    // pylsp publishes (it offers no pull); pyflakes reports undefined names.
    let dir = folder(&[("tool.py", "print(undefined_one)\n")]);
    let lsp = lsp(dir.path(), pylsp());
    let bus = installed_bus(&lsp);
    let (text, meta) = edit(
        &bus,
        dir.path(),
        "c1",
        "tool.py",
        "print(undefined_one)\nprint(undefined_two)\n",
    )
    .await;
    assert!(
        text.contains("<diagnostics server=\"pylsp\" file=\"tool.py\">"),
        "{text}"
    );
    assert!(
        text.contains("tool.py:2:7 error (new) undefined name 'undefined_two'"),
        "{text}"
    );
    assert!(
        text.contains("tool.py:1:7 error undefined name 'undefined_one'"),
        "{text}"
    );
    assert_eq!(
        (meta["errors"].as_u64(), meta["new"].as_u64()),
        (Some(2), Some(1)),
        "{meta}"
    );
    lsp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_no_server_takes_and_a_folder_without_servers_are_left_as_they_are() {
    let dir = folder(&[("notes.md", "# notes\n")]);
    let lsp = lsp(dir.path(), pylsp());
    let bus = installed_bus(&lsp);
    let (text, meta) = edit(&bus, dir.path(), "c1", "notes.md", "# more\n").await;
    assert_eq!(text, "Wrote notes.md");
    assert!(meta.is_null());

    let none = zidane_lsp::Lsp::new(zidane_lsp::LspOptions {
        root: Some(dir.path().to_path_buf()),
        servers: vec![zidane_lsp::ServerConfig::new(
            "ghost",
            "no-such-language-server-here",
            Vec::<String>::new(),
            ["python"],
        )],
        ..Default::default()
    });
    assert!(!none.available());
    let bus = installed_bus(&none);
    let (text, _) = edit(&bus, dir.path(), "c2", "a.py", "x: int = 'no'\n").await;
    assert_eq!(text, "Wrote a.py");
    assert_eq!(none.status()[0].state, zidane_lsp::ServerState::NotFound);
}
