use super::*;

fn src(text: &str) -> Vec<(String, String)> {
    vec![("lib.rs".to_owned(), text.to_owned())]
}

#[test]
fn construction_sites_are_found_directly_and_through_renames() {
    let none: &[String] = &[];
    assert!(constructs(
        "let mut ev = TurnAfter::new(a, b);\nself.observe(&mut ev).await;",
        "TurnAfter",
        none
    ));
    assert!(constructs(
        "hooks.emit(&mut TurnAfter::new(a)).await",
        "TurnAfter",
        none
    ));
    assert!(constructs(
        "use e::{McpError as McpErrorEvent};\nlet mut e = McpErrorEvent::new(x);\nobserve(&hooks, &mut e).await;",
        "McpError",
        none
    ));
    assert!(
        !constructs("let ev = TurnAfter::new(a, b);", "TurnAfter", none),
        "a value only built is not emitted"
    );
    assert!(
        !constructs("let mut ev = TurnAfter::new(a);\nkeep(&mut ev);", "TurnAfter", none),
        "handed to something that does not emit"
    );
    assert!(
        !constructs("let mut ev = ChildTurnAfter::new(a); emit(&mut ev);", "TurnAfter", none),
        "a longer name is another type"
    );
    assert!(
        !constructs("fn f(_: TurnAfter) {}", "TurnAfter", none),
        "a mention is not a construction"
    );
    // A builder function, emitted by its caller in another file.
    let sources = vec![
        (
            "a.rs".to_owned(),
            "fn adopted(t: &T) -> BackgroundAdopt { BackgroundAdopt::new(x) }".to_owned(),
        ),
        ("b.rs".to_owned(), "self.observe(&mut adopted(&task)).await;".to_owned()),
    ];
    assert!(has_emission_site(&sources, "BackgroundAdopt"));
    assert!(
        !has_emission_site(&sources[..1], "BackgroundAdopt"),
        "built, never emitted"
    );
    assert!(has_emission_site(
        &src("Child::new(id, 1, ev); let mut t = StreamText::new(); bus.emit(&mut t);"),
        "Child<StreamText>"
    ));
    assert!(!has_emission_site(
        &src("let mut t = StreamText::new(); bus.emit(&mut t);"),
        "Child<StreamText>"
    ));
    assert!(
        !has_emission_site(&src("Child::new(id, 1, ev)"), "Child<StreamText>"),
        "a bubble of an event nothing emits is not an emission"
    );
}

#[test]
fn the_catalogue_marks_hold_for_the_workspace() {
    let root = crate::root();
    let sources = library_sources(&root).unwrap();
    assert!(sources.len() > 20, "the sources were found");
    assert_eq!(wrong_marks(&sources), Vec::<String>::new());
}

#[test]
fn a_wrong_mark_is_reported_both_ways() {
    // With no sources, every hook marked emitted is wrong.
    let none = wrong_marks(&[]);
    let marked = CATALOGUE.iter().filter(|h| h.emitted).count();
    assert_eq!(none.len(), marked);
    // A source constructing a hook marked planned makes its mark wrong
    // (every hook is emitted now: one marked planned stands in).
    let mut planned = *CATALOGUE.iter().find(|h| !h.rust_type.starts_with("Child<")).unwrap();
    planned.emitted = false;
    let site = src(&format!(
        "let mut ev = {}::new(); bus.emit(&mut ev);",
        planned.rust_type
    ));
    let wrong = wrong_marks_in(std::slice::from_ref(&planned), &site);
    assert!(wrong.iter().any(|w| w.contains("marked not emitted")), "{wrong:?}");
    assert!(wrong_marks_in(std::slice::from_ref(&planned), &[]).is_empty());
}
