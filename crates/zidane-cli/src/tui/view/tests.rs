use super::*;
use serde_json::json;

const PLAIN: Paint = Paint {
    color: false,
    truecolor: false,
    basic: false,
    light: false,
};

#[test]
fn a_long_output_shows_its_ends() {
    let output: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let out = outcome(&PLAIN, 0, "shell", &json!({"command": "x"}), &output, false);
    assert_eq!(out.len(), 5);
    assert!(out[0].ends_with("line 1"));
    assert!(out[2].contains("… 26 lines"));
    assert!(out[4].ends_with("line 30"));
}

#[test]
fn an_edit_is_a_diff() {
    let input = json!({"path": "a.rs", "old_string": "let a = 1;\n", "new_string": "let a = 2;\n"});
    let out = outcome(&PLAIN, 0, "edit", &input, "ok", false);
    assert!(out.iter().any(|l| l.ends_with("- let a = 1;")));
    assert!(out.iter().any(|l| l.ends_with("+ let a = 2;")));
}

#[test]
fn a_read_is_its_range() {
    let out = outcome(
        &PLAIN,
        0,
        "read_file",
        &json!({"path": "src/lib.rs"}),
        "     3\ta\n     4\tb\n",
        false,
    );
    assert_eq!(out, ["  ⎿ read src/lib.rs lines 3–4"]);
}
