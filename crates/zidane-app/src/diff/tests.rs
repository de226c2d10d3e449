use super::*;

fn change(path: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
    FileChange {
        path: path.to_owned(),
        before: before.map(|s| s.as_bytes().to_vec()),
        after: after.map(|s| s.as_bytes().to_vec()),
    }
}

#[test]
fn counts_and_hunks() {
    let d = file_diff(&change(
        "a.txt",
        Some("one\ntwo\nthree\n"),
        Some("one\n2\nthree\nfour\n"),
    ));
    assert_eq!((d.status, d.added, d.removed), (FileStatus::Modified, 2, 1));
    assert!(matches!(&d.lines[0], DiffLine::Hunk(h) if h.starts_with("@@ -1,3 +1,4 @@")));
    let created = file_diff(&change("new.txt", None, Some("x\n")));
    assert_eq!((created.status, created.added), (FileStatus::Created, 1));
    let text = unified(&[created]);
    assert!(text.starts_with("--- /dev/null\n+++ b/new.txt\n"), "{text}");
    let binary = file_diff(&FileChange {
        path: "b.bin".into(),
        before: None,
        after: Some(vec![0, 159, 146]),
    });
    assert!(binary.binary);
}
