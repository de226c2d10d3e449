use super::*;

#[test]
fn a_long_result_is_cut_with_a_note_and_short_ones_pass() {
    let mut parts = vec![ContentBlock::text("a".repeat(80)), ContentBlock::text("b".repeat(80))];
    cap_text(&mut parts, 100);
    let texts: Vec<&str> = parts
        .iter()
        .map(|p| match p {
            ContentBlock::Text { text } => text.as_str(),
            _ => "",
        })
        .collect();
    assert_eq!(texts[0], "a".repeat(80));
    assert_eq!(
        texts[1],
        format!(
            "{}\n[... the server's result was 160 bytes; cut at 100: ask for less at a time]",
            "b".repeat(20)
        )
    );
    let mut short = vec![ContentBlock::text("ok")];
    cap_text(&mut short, 100);
    assert_eq!(short, vec![ContentBlock::text("ok")]);
}
