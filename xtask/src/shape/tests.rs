use std::path::PathBuf;

use super::{blank, cycles, imports, long_functions, module_of};

fn body(lines: usize) -> String {
    (0..lines).map(|i| format!("    let x{i} = {i};\n")).collect()
}

#[test]
fn a_function_over_the_limit_is_named_with_its_line() {
    let source = format!("fn short() {{\n{}}}\n\nfn long() {{\n{}}}\n", body(3), body(10));
    assert_eq!(long_functions(&source, 8), vec![("long".to_owned(), 7, 12)]);
    assert!(long_functions(&source, 12).is_empty());
}

#[test]
fn braces_in_strings_comments_and_characters_do_not_count() {
    let source = "fn f() {\n    let s = \"}}}\";\n    // }\n    let c = '}';\n    let r = r#\"}\"#;\n    g::<'a>();\n}\nfn h() {\n}\n";
    let text = blank(source);
    assert!(!text.contains("}}}"));
    assert!(text.contains("<'a>"), "a lifetime stays");
    assert_eq!(long_functions(source, 6), vec![("f".to_owned(), 1, 7)]);
}

#[test]
fn test_modules_are_left_out() {
    let source = format!("#[cfg(test)]\nmod tests {{\n    fn long() {{\n{}    }}\n}}\n", body(20));
    assert!(long_functions(&source, 5).is_empty());
}

#[test]
fn modules_are_named_from_their_files() {
    assert_eq!(module_of(&PathBuf::from("lib.rs")), "");
    assert_eq!(module_of(&PathBuf::from("agent/mod.rs")), "agent");
    assert_eq!(module_of(&PathBuf::from("run/stream.rs")), "run::stream");
}

#[test]
fn an_import_cycle_between_files_is_found() {
    let files = vec![
        (PathBuf::from("lib.rs"), "mod a; mod b; mod c;".to_owned()),
        (PathBuf::from("a.rs"), "use crate::b::B;".to_owned()),
        (PathBuf::from("b.rs"), "use crate::{c::C, a};".to_owned()),
        (PathBuf::from("c.rs"), "pub struct C;".to_owned()),
        (PathBuf::from("d/mod.rs"), "mod e; use self::e::E;".to_owned()),
        (PathBuf::from("d/e.rs"), "use super::D; pub struct E;".to_owned()),
    ];
    let graph = imports(&files);
    assert_eq!(graph["a"].iter().collect::<Vec<_>>(), ["b"]);
    assert_eq!(graph["b"].iter().collect::<Vec<_>>(), ["a", "c"]);
    // A child naming its parent module (or the parent its child) is no
    // edge: the parent declares the child.
    assert!(graph["d::e"].is_empty());
    assert!(graph["d"].is_empty());
    assert_eq!(cycles(&graph), vec![vec!["a".to_owned(), "b".to_owned()]]);
}
