use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use zidane_core::tool::ToolContext;
use zidane_core::{ToolOutput, Workspace};
use zidane_provider::{AbortSignal, ToolResultContent};

use crate::ProcessContext;

#[path = "opaque.rs"]
mod opaque;

use opaque::Opaque;

/// Both ways to the same folder: the local walk and the walk through the
/// context.
fn workspaces(root: &Path) -> [(&'static str, Workspace); 2] {
    let local = Arc::new(ProcessContext::new(root));
    let handle = local.handle();
    let opaque = Workspace {
        execution: Arc::new(Opaque(ProcessContext::new(root))),
        handle,
        background: None,
    };
    [("local", local.workspace()), ("through the context", opaque)]
}

async fn call(ws: &Workspace, name: &str, input: Value) -> Result<String, String> {
    let tool = if name == "glob" { super::glob() } else { super::grep() };
    let cx = ToolContext::detached(name, "call", AbortSignal::never()).with_workspace(ws.clone());
    let out: ToolOutput = zidane_core::Tool::execute(&tool, input, cx)
        .await
        .map_err(|e| e.to_string())?;
    match out.content {
        ToolResultContent::Text(text) => Ok(text),
        ToolResultContent::Parts(_) => panic!("text expected"),
    }
}

fn write(root: &Path, rel: &str, body: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

/// A folder with ignore files at two levels, a negation, hidden entries, a
/// build folder and a binary file.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "*.log\ngen/\n!keep.log\n");
    write(root, "src/main.rs", "fn main() { needle(); }\n");
    write(root, "src/lib.rs", "pub fn needle() {}\n");
    write(root, "src/.gitignore", "secret.rs\n");
    write(root, "src/secret.rs", "needle\n");
    write(root, "src/trace.log", "needle\n");
    write(root, "gen/out.rs", "needle\n");
    write(root, "app.log", "needle\n");
    write(root, "keep.log", "needle\n");
    write(root, ".hidden/notes.rs", "needle\n");
    write(root, ".env", "needle=1\n");
    write(root, "node_modules/dep/index.rs", "needle\n");
    write(root, ".git/HEAD", "needle\n");
    std::fs::write(root.join("blob.bin"), b"needle\0\0\0needle").unwrap();
    dir
}

#[tokio::test]
async fn both_walks_skip_ignored_hidden_build_and_binary_files_unless_asked() {
    let dir = tree();
    for (how, ws) in workspaces(dir.path()) {
        let found = call(&ws, "glob", json!({"pattern": "**/*"})).await.unwrap();
        assert_eq!(
            found, "blob.bin\nkeep.log\nsrc/lib.rs\nsrc/main.rs",
            "{how}: hidden, ignored and build files are left out (a binary file is a file)"
        );
        let hidden = call(&ws, "glob", json!({"pattern": "**/.*", "hidden": true}))
            .await
            .unwrap();
        assert_eq!(
            hidden, ".env\n.gitignore\nsrc/.gitignore",
            "{how}: .git never comes back"
        );
        let hits = call(&ws, "grep", json!({"pattern": "needle"})).await.unwrap();
        assert_eq!(
            hits, "keep.log:1: needle\nsrc/lib.rs:1: pub fn needle() {}\nsrc/main.rs:1: fn main() { needle(); }",
            "{how}"
        );
        let all = call(
            &ws,
            "grep",
            json!({"pattern": "needle", "hidden": true, "include_ignored": true}),
        )
        .await
        .unwrap();
        assert_eq!(
            all,
            ".env:1: needle=1\n.hidden/notes.rs:1: needle\napp.log:1: needle\ngen/out.rs:1: needle\nkeep.log:1: needle\n\
             node_modules/dep/index.rs:1: needle\nsrc/lib.rs:1: pub fn needle() {}\nsrc/main.rs:1: fn main() { needle(); }\n\
             src/secret.rs:1: needle\nsrc/trace.log:1: needle",
            "{how}: asked, both come back; .git and binary files never do"
        );
        let rust = call(
            &ws,
            "grep",
            json!({"pattern": "NEEDLE", "ignore_case": true, "glob": "*.rs", "path": "src"}),
        )
        .await
        .unwrap();
        assert_eq!(
            rust, "lib.rs:1: pub fn needle() {}\nmain.rs:1: fn main() { needle(); }",
            "{how}"
        );
        let sub = call(&ws, "grep", json!({"pattern": "needle", "path": "src"}))
            .await
            .unwrap();
        assert_eq!(
            sub, "lib.rs:1: pub fn needle() {}\nmain.rs:1: fn main() { needle(); }",
            "{how}: the root's .gitignore (*.log) holds in a sub-folder's search, and the sub-folder's own"
        );
        for (path, want) in [("gen", "out.rs:1: needle"), (".hidden", "notes.rs:1: needle")] {
            let named = call(&ws, "grep", json!({"pattern": "needle", "path": path}))
                .await
                .unwrap();
            assert_eq!(named, want, "{how}: a folder asked for by name is searched");
        }
    }
}

#[tokio::test]
async fn a_path_that_is_not_there_is_an_error_and_empty_fields_are_absent() {
    let dir = tree();
    for (how, ws) in workspaces(dir.path()) {
        for tool in ["grep", "glob"] {
            let err = call(&ws, tool, json!({"pattern": "needle", "path": "src/nope.rs"}))
                .await
                .unwrap_err();
            assert_eq!(
                err,
                "`src/nope.rs` does not exist; give a folder or file inside the working folder, or leave `path` out",
                "{how} {tool}"
            );
        }
        let empty = call(&ws, "grep", json!({"pattern": "needle", "path": "", "glob": ""}))
            .await
            .unwrap();
        let none = call(&ws, "grep", json!({"pattern": "needle"})).await.unwrap();
        assert_eq!(empty, none, "{how}: empty optional fields are absent ones");
        let file = call(&ws, "grep", json!({"pattern": "needle", "path": "src/lib.rs"}))
            .await
            .unwrap();
        assert_eq!(
            file, "lib.rs:1: pub fn needle() {}",
            "{how}: a file can be searched alone"
        );
    }
}

#[tokio::test]
async fn ignore_files_above_the_working_folder_do_not_count() {
    let dir = tempfile::tempdir().unwrap();
    // A home folder kept in git with everything ignored but what is added.
    write(dir.path(), ".gitignore", "*\n");
    write(dir.path(), "project/src/lib.rs", "needle\n");
    for (how, ws) in workspaces(&dir.path().join("project")) {
        let hits = call(&ws, "grep", json!({"pattern": "needle"})).await.unwrap();
        assert_eq!(hits, "src/lib.rs:1: needle", "{how}");
    }
}

#[tokio::test]
async fn answers_are_sorted_and_capped_with_the_total() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..600 {
        write(dir.path(), &format!("d{}/f{i:03}.txt", i % 7), "one hit\n");
    }
    write(dir.path(), "many.txt", &"hit\n".repeat(300));
    for (how, ws) in workspaces(dir.path()) {
        let found = call(&ws, "glob", json!({"pattern": "**/*.txt"})).await.unwrap();
        let lines: Vec<&str> = found.lines().collect();
        assert_eq!(lines.len(), 501, "{how}");
        assert_eq!(lines[0], "d0/f000.txt", "{how}");
        assert_eq!(lines[1], "d0/f007.txt", "{how}");
        assert_eq!(lines[500], "[... 101 more files; 601 in all]", "{how}");
        let mut sorted = lines[..500].to_vec();
        sorted.sort_by(|a, b| a.split('/').cmp(b.split('/')));
        assert_eq!(
            sorted,
            lines[..500],
            "{how}: in path order, whatever order the walk found them"
        );

        let hits = call(&ws, "grep", json!({"pattern": "hit"})).await.unwrap();
        let lines: Vec<&str> = hits.lines().collect();
        assert_eq!(lines.len(), 201, "{how}");
        assert_eq!(lines[0], "d0/f000.txt:1: one hit", "{how}");
        assert_eq!(lines[199], "d2/f191.txt:1: one hit", "{how}");
        assert_eq!(lines[200], "[... 700 more matches]", "{how}");
    }
}

#[tokio::test]
async fn the_walk_through_a_context_says_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..30 {
        write(dir.path(), &format!("f{i:02}.txt"), "x\n");
    }
    let [_, (_, ws)] = workspaces(dir.path());
    let (files, stopped) = super::through::files(&ws, "", super::WalkRules::default(), 20).await;
    assert_eq!(files.len(), 20);
    assert!(stopped, "the limit is reported, not hidden");
    let (files, stopped) = super::through::files(&ws, "", super::WalkRules::default(), 30).await;
    assert_eq!((files.len(), stopped), (30, false));
}

/// This process's peak resident memory, in bytes.
#[cfg(target_os = "linux")]
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_huge_file_costs_a_buffer_not_its_size() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.txt", "needle\n");
    // A gigabyte without line breaks or NUL bytes at its start: a sparse
    // file of zeros after a first line of text.
    let big = std::fs::File::create(dir.path().join("big.dat")).unwrap();
    std::io::Write::write_all(&mut &big, b"text without a match\n").unwrap();
    big.set_len(1 << 30).unwrap();
    let before = peak_rss();
    let [(_, ws), _] = workspaces(dir.path());
    let hits = call(&ws, "grep", json!({"pattern": "needle"})).await.unwrap();
    assert_eq!(hits, "small.txt:1: needle");
    let grown = peak_rss().saturating_sub(before);
    assert!(grown < 128 << 20, "the search grew the peak by {grown} bytes");
}
