use super::*;

#[test]
fn a_hand_written_file_is_kept_and_the_generated_part_replaced() {
    let mine = "# Notes\n\nDeploy with `make ship`.\n";
    let first = merge(Some(mine), "## Build\n\n`cargo build`");
    assert!(first.starts_with(mine.trim_end()), "{first}");
    assert!(first.contains(&format!("{START}\n## Build")), "{first}");
    let edited = format!("{first}\n## Mine too\n");
    let second = merge(Some(&edited), "## Build\n\n`cargo test`");
    assert!(
        second.contains("Deploy with `make ship`.") && second.contains("## Mine too"),
        "{second}"
    );
    assert!(
        second.contains("`cargo test`") && !second.contains("`cargo build`"),
        "{second}"
    );
    assert_eq!(second.matches(START).count(), 1);
    assert_eq!(merge(None, "x"), format!("{START}\nx\n{END}\n"));
}

#[test]
fn the_answer_between_its_tags() {
    assert_eq!(extract("Here:\n<agents_md>\n# A\n</agents_md>").as_deref(), Some("# A"));
    assert_eq!(extract("# B").as_deref(), Some("# B"));
    assert_eq!(extract("  "), None);
    let p = prompt(Some(&merge(Some("# Mine"), "old part")));
    assert!(p.contains("old part") && p.contains("# Mine"), "{p}");
}
