use super::*;

#[test]
fn facts_go_under_their_heading() {
    assert_eq!(add("", "a"), "## Remembered\n\n- a\n");
    assert_eq!(add("# Project\n", "a"), "# Project\n\n## Remembered\n\n- a\n");
    let once = add("# P\n\n## Remembered\n\n- a\n\n## Build\n\nmake\n", "b");
    assert_eq!(once, "# P\n\n## Remembered\n\n- a\n- b\n\n## Build\n\nmake\n");
}

#[test]
fn the_shortcut_is_one_line_with_one_mark() {
    assert_eq!(shortcut("# always use pnpm"), Some("always use pnpm"));
    assert_eq!(shortcut("## a heading"), None);
    assert_eq!(shortcut("#no space"), None);
    assert_eq!(shortcut("# two\nlines"), None);
}

#[test]
fn remember_makes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/AGENTS.md");
    remember(&path, "use pnpm").unwrap();
    remember(&path, "tabs, not spaces").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "## Remembered\n\n- use pnpm\n- tabs, not spaces\n"
    );
    assert!(remember(&path, "  ").is_err());
}
