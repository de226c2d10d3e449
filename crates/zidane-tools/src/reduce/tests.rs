use super::*;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/output/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn commands_find_their_rule() {
    let name = |c: &str| rule_for(c).map(|i| RULES[i].commands[0]);
    assert_eq!(name("cargo test -p x"), Some("cargo test"));
    assert_eq!(name("cd crates/a && RUST_BACKTRACE=0 cargo test"), Some("cargo test"));
    assert_eq!(name("python -m pytest -q tests/"), Some("pytest"));
    assert_eq!(name("npx jest --verbose"), Some("jest"));
    assert_eq!(name("cargo clippy --all-targets"), Some("cargo build"));
    assert_eq!(name("make -j4"), Some("make"));
    assert_eq!(name("ls -la"), Some("ls"));
    assert_eq!(name("cargo testing-tool"), None);
    assert_eq!(name("echo make"), None);
}

/// A failing `cargo test` run: the two failures with their messages and
/// the summary stay; the 60 passing lines and the ignored one go.
#[test]
fn cargo_test() {
    let out = fixture("cargo-test.txt");
    let r = reduce("cargo test", &out).unwrap();
    assert_eq!(r.omitted, 61);
    assert!(!r.text.contains("... ok"));
    for kept in [
        "test tests::adds_negative_numbers ... FAILED",
        "test tests::parses_a_port ... FAILED",
        "assertion `left == right` failed: sum of negatives",
        "test result: FAILED. 60 passed; 2 failed; 1 ignored",
    ] {
        assert!(r.text.contains(kept), "{kept} missing from\n{}", r.text);
    }
}

#[test]
fn pytest_quiet_and_verbose() {
    let quiet = fixture("pytest.txt");
    let r = reduce("pytest", &quiet).unwrap();
    // The progress line with the failures (`FFs`) stays.
    assert_eq!(r.omitted, 1, "{}", r.text);
    assert!(
        r.text
            .contains("FAILED test_calc.py::test_add_negative - assert -5 == -6")
    );
    let verbose = fixture("pytest-v.txt");
    let r = reduce("pytest -v", &verbose).unwrap();
    assert_eq!(r.omitted, 121, "{}", r.text);
    assert!(r.text.contains("test_calc.py::test_divide FAILED"));
    assert!(r.text.contains("KeyError: 'b'"));
    assert!(r.text.contains("2 failed, 120 passed, 1 skipped"));
}

/// `go test -v` over two packages: the failures (a nested subtest's
/// too) with their messages and the package lines stay; the 101
/// `=== RUN`, `--- PASS` and bare `PASS` lines go.
#[test]
fn go_test() {
    let r = reduce("go test -v ./...", &fixture("go-test-v.txt")).unwrap();
    assert_eq!(r.omitted, 101, "{}", r.text);
    assert!(!r.text.contains("=== RUN"));
    for kept in [
        "calc_test.go:247: Clamp(15, 0, 10) = 0, want 10\n--- FAIL: TestClampHigh",
        "--- FAIL: TestDivByZero",
        "    --- FAIL: TestSubTable/#02",
        "calc_test.go:271: Sub(1, 4) = -3",
        "FAIL\texample.com/calc",
        "ok  \texample.com/calc/strutil",
    ] {
        assert!(r.text.contains(kept), "{kept} missing from\n{}", r.text);
    }
}

#[test]
fn jest() {
    let r = reduce("npx jest --verbose", &fixture("jest.txt")).unwrap();
    assert_eq!(r.omitted, 60);
    assert!(r.text.contains("✕ adds negatives"));
    assert!(r.text.contains("Tests:       2 failed, 60 passed, 62 total"));
}

/// A build keeps its error with the location and drops the 22
/// `Compiling` lines; short outputs (gcc through make, tsc) are left as
/// they are.
#[test]
fn builds() {
    let r = reduce("cargo build", &fixture("cargo-build.txt")).unwrap();
    assert_eq!(r.omitted, 22);
    assert!(
        r.text
            .starts_with("error[E0308]: mismatched types\n --> src/main.rs:2:18\n")
    );
    assert!(r.text.contains("error: could not compile `bld`"));
    assert_eq!(reduce("make", &fixture("make-gcc.txt")), None);
    assert_eq!(reduce("npx tsc --noEmit", &fixture("tsc.txt")), None);
}

#[test]
fn long_listings_keep_head_and_tail() {
    let listing: String = (1..=500).map(|i| format!("file{i}.rs\n")).collect();
    let r = reduce("ls", &listing).unwrap();
    assert_eq!(r.omitted, 360);
    assert!(r.text.starts_with("file1.rs\n"));
    assert!(r.text.contains("file100.rs\n[… 360 lines …]\nfile461.rs\n"));
    assert!(r.text.ends_with("file500.rs\n"));
}
