#[test]
fn image_mentions_in_a_prompt() {
    assert_eq!(
        super::mentions("What is in @shot.png, and @docs/a.JPEG? Not @notes.md or a@b.png."),
        ["shot.png", "docs/a.JPEG"]
    );
}
