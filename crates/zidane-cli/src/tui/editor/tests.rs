use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn typed(e: &mut Editor, s: &str) {
    for c in s.chars() {
        e.key(&key(KeyCode::Char(c)));
    }
}

fn editor() -> Editor {
    Editor::new(History {
        entries: Vec::new(),
        file: None,
    })
}

#[test]
fn enter_sends_and_a_backslash_continues() {
    let mut e = editor();
    typed(&mut e, "one\\");
    assert_eq!(e.key(&key(KeyCode::Enter)), Edit::Changed);
    typed(&mut e, "two");
    e.key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    typed(&mut e, "three");
    assert_eq!(e.key(&key(KeyCode::Enter)), Edit::Submit("one\ntwo\nthree".into()));
    assert!(e.is_empty());
}

#[test]
fn history_and_search() {
    let mut e = editor();
    for p in ["first", "second", "third"] {
        typed(&mut e, p);
        e.key(&key(KeyCode::Enter));
    }
    typed(&mut e, "draft");
    e.key(&key(KeyCode::Up));
    assert_eq!(e.text(), "third");
    e.key(&key(KeyCode::Up));
    assert_eq!(e.text(), "second");
    e.key(&key(KeyCode::Down));
    e.key(&key(KeyCode::Down));
    assert_eq!(e.text(), "draft");
    e.key(&KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL));
    typed(&mut e, "fir");
    assert_eq!(e.searching().and_then(|s| s.1), Some("first"));
    e.key(&key(KeyCode::Enter));
    assert_eq!(e.text(), "first");
}

#[test]
fn a_long_paste_is_collapsed_and_sent_whole() {
    let mut e = editor();
    typed(&mut e, "look: ");
    let paste: String = (0..500).map(|i| format!("line {i}\n")).collect();
    e.paste(&paste);
    assert_eq!(e.text(), "look: [pasted 500 lines]");
    let Edit::Submit(sent) = e.key(&key(KeyCode::Enter)) else {
        panic!("not sent")
    };
    assert_eq!(sent, format!("look: {paste}"));
}

#[test]
fn rows_wrap_and_place_the_cursor() {
    let mut e = editor();
    typed(&mut e, "abcdefghij");
    let (rows, cursor) = e.rows("> ", 8);
    assert_eq!(rows, ["> abcde", "  fghij"]);
    assert_eq!(cursor, (1, 7));
}

#[test]
fn common_prefixes() {
    assert_eq!(common_prefix(&["src/main.rs".into(), "src/mod.rs".into()]), "src/m");
    assert_eq!(common_prefix(&["/compact".into()]), "/compact");
}
