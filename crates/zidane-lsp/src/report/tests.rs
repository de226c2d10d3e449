use lsp_types::{Position, Range};

use super::*;

fn diag(line: u32, severity: DiagnosticSeverity, message: &str) -> Diagnostic {
    Diagnostic {
        range: Range::new(Position::new(line, 4), Position::new(line, 6)),
        severity: Some(severity),
        message: message.into(),
        ..Default::default()
    }
}

#[test]
fn new_findings_are_told_from_those_already_there_and_fixed_ones_counted() {
    let before = [
        diag(0, DiagnosticSeverity::WARNING, "unused import"),
        diag(5, DiagnosticSeverity::ERROR, "old error"),
    ];
    let after = [
        // The line moved; it is the same warning.
        diag(1, DiagnosticSeverity::WARNING, "unused import"),
        diag(
            2,
            DiagnosticSeverity::ERROR,
            "\"str\" is not assignable to \"int\"\nmore detail",
        ),
        diag(3, DiagnosticSeverity::HINT, "a hint is left out"),
    ];
    let report = EditReport::compare("pyright", "a.py", Some(&before), &after, "x = 1\ny = 2\nz = 'é'\n", 20);
    assert_eq!((report.errors, report.warnings, report.new, report.fixed), (1, 1, 1, 1));
    assert_eq!(
        report.findings[0].line_text(),
        "a.py:3:5 error (new) \"str\" is not assignable to \"int\""
    );
    assert_eq!(report.findings[1].line_text(), "a.py:2:5 warning unused import");
    assert_eq!(report.summary(), "✗ 1 error, 1 warning (1 new)");
    let text = report.render();
    assert!(
        text.contains("1 error, 1 warning (1 new with this edit, 1 fixed):"),
        "{text}"
    );
}

#[test]
fn a_fix_is_reported_and_a_clean_file_says_nothing() {
    let before = [diag(2, DiagnosticSeverity::ERROR, "bad")];
    let fixed = EditReport::compare("pylsp", "a.py", Some(&before), &[], "", 20);
    assert!(!fixed.is_empty());
    assert!(
        fixed.render().contains("this edit fixed 1 problem"),
        "{}",
        fixed.render()
    );
    assert!(EditReport::compare("pylsp", "a.py", Some(&[]), &[], "", 20).is_empty());
}

#[test]
fn the_list_is_capped_and_unknown_before_marks_nothing_new() {
    let after: Vec<_> = (0..30)
        .map(|i| diag(i, DiagnosticSeverity::ERROR, &format!("e{i}")))
        .collect();
    let report = EditReport::compare("s", "f.ts", None, &after, "", 5);
    assert_eq!((report.findings.len(), report.omitted, report.new), (5, 25, 0));
    assert!(report.render().contains("… and 25 more"));
}
