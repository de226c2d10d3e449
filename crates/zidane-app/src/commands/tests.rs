use super::*;

#[test]
fn a_command_with_front_matter_and_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("commands");
    std::fs::create_dir_all(dir.join("git")).unwrap();
    std::fs::write(
        dir.join("review.md"),
        "---\ndescription: Review a file\nargument-hint: <file> [focus]\nmodel: small-model\n\
         allowed-tools: Bash(git diff:*), Read\n---\nReview $1 with a focus on $2.\nAll: $ARGUMENTS\n",
    )
    .unwrap();
    std::fs::write(dir.join("git/log.md"), "Summarize the git log.").unwrap();
    let (commands, problems) = list(std::slice::from_ref(&dir));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        commands.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["git:log", "review"]
    );
    let review = &commands[1];
    assert_eq!(review.description.as_deref(), Some("Review a file"));
    assert_eq!(review.argument_hint.as_deref(), Some("<file> [focus]"));
    assert_eq!(review.model.as_deref(), Some("small-model"));
    assert_eq!(review.allowed_tools, ["Bash(git diff:*)", "Read"]);
    assert_eq!(
        review.expand("src/main.rs 'error handling'"),
        "Review src/main.rs with a focus on error handling.\nAll: src/main.rs 'error handling'\n"
    );
    assert_eq!(commands[0].expand("last week"), "Summarize the git log.\n\nlast week");
    assert_eq!(invocation("/review a b"), Some(("review", "a b")));
    assert_eq!(invocation("/git:log"), Some(("git:log", "")));
    assert_eq!(invocation("/usr/bin is slow"), None);
    assert_eq!(invocation("fix it"), None);
    let err = find(std::slice::from_ref(&dir), "nope").unwrap_err();
    assert!(
        err.message().contains("there are /git:log, /review"),
        "{}",
        err.message()
    );
}
