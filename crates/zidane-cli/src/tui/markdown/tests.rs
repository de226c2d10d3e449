use super::*;

fn plain() -> Markdown {
    Markdown::new(
        Paint {
            color: false,
            truecolor: false,
            basic: false,
            light: false,
        },
        60,
    )
}

#[test]
fn lines_go_out_as_they_end() {
    let mut md = plain();
    assert!(md.push("# Ti").is_empty());
    assert_eq!(md.partial(), "# Ti");
    assert_eq!(md.push("tle\n- one **two**\n"), ["Title", "• one two"]);
    assert_eq!(md.push("see [docs](http://x)"), Vec::<String>::new());
    assert_eq!(md.finish(), ["see docs (http://x)"]);
}

#[test]
fn code_blocks_are_framed_and_kept_verbatim() {
    let mut md = plain();
    let out = md.push("```rust\nfn main() {}\n```\nafter\n");
    assert_eq!(out, ["  ┌ rust", "  │ fn main() {}", "  └", "after"]);
}

#[test]
fn code_is_highlighted_in_colour() {
    let mut md = Markdown::new(
        Paint {
            color: true,
            truecolor: true,
            basic: false,
            light: false,
        },
        60,
    );
    let out = md.push("```rust\nfn main() {}\n```\n");
    assert!(out[1].contains("\x1b[38;2;"), "{:?}", out[1]);
}

#[test]
fn tables_fit_or_degrade() {
    let mut md = plain();
    let out = md.push("| a | bb |\n|---|---|\n| 1 | 2 |\n\n");
    assert_eq!(out[0], "  a │ bb");
    assert_eq!(out[2], "  1 │ 2 ");
    let mut narrow = Markdown::new(
        Paint {
            color: false,
            truecolor: false,
            basic: false,
            light: false,
        },
        10,
    );
    let out = narrow.push("| alpha | beta gamma |\n|--|--|\n| 1 | 2 |\n");
    assert!(out.is_empty());
    assert_eq!(narrow.finish(), ["  alpha · beta gamma", "  1 · 2"]);
}
