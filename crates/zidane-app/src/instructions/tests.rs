use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A user file, then the root's, then the middle folder's `CLAUDE.md`
/// (it has no `AGENTS.md`), then the working folder's; a file below the
/// working folder waits to be offered.
#[test]
fn the_rules_block_runs_from_general_to_specific() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    let user = tmp.path().join("home");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(&user.join("AGENTS.md"), "Answer in English.");
    write(&root.join("AGENTS.md"), "Run cargo test.");
    write(&root.join("crates/CLAUDE.md"), "Crates are small.");
    write(&root.join("crates/cli/AGENTS.md"), "The CLI prints.");
    write(&root.join("crates/cli/CLAUDE.md"), "Never read: AGENTS.md wins.");
    write(&root.join("crates/cli/src/AGENTS.md"), "Later.");
    let cwd = root.join("crates/cli");
    let paths = Paths {
        user: Some(user.clone()),
        root: crate::paths::project_root(&cwd),
        cwd: cwd.clone(),
    };
    let found = discover(&paths);
    let block = found.block.replace(&tmp.path().display().to_string(), "T");
    assert_eq!(
        block,
        "<instructions>\nInstructions from the user's and the project's instruction files, from the most general \
         to the most specific; where they differ, the later one wins.\n\n## T/home/AGENTS.md\n\nAnswer in \
         English.\n\n## T/repo/AGENTS.md\n\nRun cargo test.\n\n## T/repo/crates/CLAUDE.md\n\nCrates are \
         small.\n\n## T/repo/crates/cli/AGENTS.md\n\nThe CLI prints.\n</instructions>"
    );
    assert_eq!(found.system_prompt("Base."), format!("Base.\n\n{}", found.block));
    let options = found.context_options();
    assert_eq!(options.rules_files.len(), 4);
    assert_eq!(options.rules_files[3].0, cwd.join("AGENTS.md").display().to_string());
    assert_eq!(
        nested_files(&cwd, Path::new("src/main.rs")),
        vec![cwd.join("src/AGENTS.md")]
    );
    assert!(nested_files(&cwd, Path::new("../x/y.rs")).is_empty());
}

#[test]
fn big_files_are_cut_with_a_note_and_system_md_replaces_the_base() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().to_owned();
    write(&cwd.join("AGENTS.md"), &"x".repeat(FILE_CAP + 10));
    write(&cwd.join(".zidane/SYSTEM.md"), "You are terse.");
    let paths = Paths {
        user: None,
        root: cwd.clone(),
        cwd: cwd.clone(),
    };
    let found = discover(&paths);
    assert_eq!(found.files[0].cut, 10);
    assert!(found.files[0].text.ends_with(&format!(
        "\n[… 10 more bytes cut; read {} for the rest]",
        cwd.join("AGENTS.md").display()
    )));
    assert!(
        found
            .system_prompt("Base.")
            .starts_with("You are terse.\n\n<instructions>")
    );
    assert!(found.summary().unwrap().contains("10 bytes cut"));
}
