use serde_json::json;

use super::diff::{Diff, parse};
use super::finding::{Category, Priority, check, merge};
use super::{Target, split};

const PATCH: &str = "diff --git a/src/a.rs b/src/a.rs
index 1..2 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -8,4 +8,5 @@ fn f() {
 let a = 1;
-let b = 2;
+let b = 3;
+let c = 4;
 let d = 5;
 let e = 6;
diff --git a/old.rs b/new.rs
similarity index 100%
rename from old.rs
rename to new.rs
diff --git a/logo.png b/logo.png
new file mode 100644
Binary files /dev/null and b/logo.png differ
";

fn diff() -> Diff {
    Diff {
        files: parse(PATCH),
        skipped: Vec::new(),
    }
}

#[test]
fn a_unified_diff_is_cut_into_files_with_their_new_lines() {
    let files = parse(PATCH);
    assert_eq!(files.len(), 3);
    let a = &files[0];
    assert_eq!(a.path, "src/a.rs");
    assert_eq!(a.ranges, [(8, 12)]);
    assert_eq!((a.added, a.removed), (2, 1));
    assert_eq!(a.lines.get(&9).map(String::as_str), Some("let b = 3;"));
    assert_eq!(a.lines.get(&12).map(String::as_str), Some("let e = 6;"));
    assert!(a.touches(12, 20) && !a.touches(13, 20) && !a.touches(1, 7));
    assert_eq!(files[1].path, "new.rs");
    assert_eq!(files[1].renamed_from.as_deref(), Some("old.rs"));
    assert!(files[1].ranges.is_empty());
    assert_eq!(files[2].path, "logo.png");
}

fn input(line: u64, reason: Option<&str>) -> serde_json::Value {
    let mut input = json!({ "priority": "p1", "category": "correctness", "title": "T", "body": "B",
        "path": "./src/a.rs", "start_line": line, "confidence": 0.5 });
    if let Some(reason) = reason {
        input["outside_diff_reason"] = json!(reason);
    }
    input
}

#[test]
fn a_finding_outside_the_diff_needs_a_reason() {
    let cwd = std::env::temp_dir();
    let finding = check(&input(9, None), &diff(), &cwd).unwrap();
    assert_eq!(
        (finding.priority, finding.category),
        (Priority::P1, Category::Correctness)
    );
    assert_eq!(
        (finding.path.as_str(), finding.start_line, finding.end_line),
        ("src/a.rs", 9, 9)
    );
    assert_eq!(finding.excerpt, "let b = 3;");
    let refused = check(&input(30, None), &diff(), &cwd).unwrap_err();
    assert!(refused.contains("outside the diff's hunks (8-12)"), "{refused}");
    assert!(check(&input(30, Some("the caller now passes 3")), &diff(), &cwd).is_ok());
    let mut elsewhere = input(1, None);
    elsewhere["path"] = json!("other.rs");
    assert!(
        check(&elsewhere, &diff(), &cwd)
            .unwrap_err()
            .contains("not in the diff")
    );
    let mut bad = input(9, None);
    bad["confidence"] = json!(2);
    assert!(check(&bad, &diff(), &cwd).is_err());
}

#[test]
fn duplicates_merge_and_fingerprints_ignore_line_numbers() {
    let cwd = std::env::temp_dir();
    let a = check(&input(9, None), &diff(), &cwd).unwrap();
    let mut b = check(&input(9, None), &diff(), &cwd).unwrap();
    b.priority = Priority::P0;
    b.body = "More.".into();
    b.confidence = 0.9;
    let merged = merge(vec![a.clone(), b]);
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].priority, Priority::P0);
    assert_eq!(merged[0].confidence, 0.9);
    assert_eq!(merged[0].body, "B\n\nMore.");
    // The same code elsewhere in the file: the same fingerprint.
    let moved_patch = PATCH.replace("@@ -8,4 +8,5 @@", "@@ -18,4 +18,5 @@");
    let moved = Diff {
        files: parse(&moved_patch),
        skipped: Vec::new(),
    };
    let later = check(&input(19, None), &moved, &cwd).unwrap();
    assert_eq!(later.fingerprint, a.fingerprint);
    let other = check(&input(10, None), &diff(), &cwd).unwrap();
    assert_ne!(other.fingerprint, a.fingerprint);
}

#[test]
fn a_diff_is_split_by_file_to_fit() {
    let d = diff();
    let (groups, large) = split(&d, usize::MAX);
    assert_eq!((groups.len(), large.len()), (1, 0));
    let budget = d.files[0].patch.len();
    let (groups, large) = split(&d, budget);
    assert!(groups.len() > 1 && large.is_empty());
    assert_eq!(groups[0].len(), 1);
    for group in &groups {
        assert!(group.iter().map(|f| f.patch.len()).sum::<usize>() <= budget);
    }
    let (_, large) = split(&d, 10);
    assert_eq!(large.len(), 3);
}

#[test]
fn review_arguments_name_one_target() {
    assert_eq!(Target::parse_args("").unwrap(), (Target::Uncommitted, None));
    assert_eq!(
        Target::parse_args("--base main --focus sql injection").unwrap(),
        (Target::Base("main".into()), Some("sql injection".into()))
    );
    assert_eq!(
        Target::parse_args("a..b").unwrap().0,
        Target::Range("a".into(), "b".into())
    );
    assert!(Target::parse_args("--base main --commit x").is_err());
    assert!(Target::parse_args("--base").is_err());
    assert!(Target::parse_args("--frobnicate").is_err());
    assert!(Target::range("a...b").is_err() && Target::range("..b").is_err());
}
