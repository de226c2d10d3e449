//! Command-aware output: what a command printed, reduced by what the
//! command is before it reaches the model. Test runners keep their
//! failures and summary and drop passing lines; builds keep errors and
//! warnings with their locations and drop progress lines; long listings keep
//! their head and tail. The rules are data: [`RULES`], a table of command
//! prefixes and the lines each drops.

use std::sync::LazyLock;

use regex::RegexSet;

/// What a rule does with the output.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reducer {
    /// Drops the lines matching these patterns (passing tests, progress),
    /// named as `what` in the note.
    Drop {
        patterns: &'static [&'static str],
        what: &'static str,
    },
    /// Keeps the first and last lines of a long listing.
    HeadTail { head: usize, tail: usize },
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rule {
    /// Commands it applies to: a simple command of the line starting with
    /// one of these words.
    pub(crate) commands: &'static [&'static str],
    pub(crate) reducer: Reducer,
}

/// Cargo's progress lines.
const CARGO_PROGRESS: &str =
    r"^\s+(Compiling|Checking|Downloaded|Downloading|Fresh|Blocking|Locking|Adding|Updating|Documenting) ";

/// The table, first match wins.
pub(crate) const RULES: &[Rule] = &[
    Rule {
        commands: &["cargo test", "cargo nextest"],
        reducer: Reducer::Drop {
            patterns: &[
                r"^test .+ \.\.\. (ok|ignored)$",
                r"^\s+(PASS|SKIP|START) \[",
                CARGO_PROGRESS,
            ],
            what: "passing and progress lines",
        },
    },
    Rule {
        commands: &[
            "pytest",
            "python -m pytest",
            "python3 -m pytest",
            "uv run pytest",
            "poetry run pytest",
        ],
        reducer: Reducer::Drop {
            patterns: &[
                r"^\S+::\S+ (PASSED|SKIPPED|XFAIL)\b",
                r"^(\S+\.py )?[.sx]+\s*(\[\s*\d+%\])?$",
            ],
            what: "passing lines",
        },
    },
    Rule {
        commands: &["go test"],
        reducer: Reducer::Drop {
            patterns: &[r"^=== (RUN|PAUSE|CONT|NAME)\b", r"^\s*--- (PASS|SKIP):", r"^PASS$"],
            what: "passing lines",
        },
    },
    Rule {
        commands: &[
            "jest",
            "npx jest",
            "vitest",
            "npx vitest",
            "npm test",
            "npm run test",
            "yarn test",
            "pnpm test",
            "bun test",
        ],
        reducer: Reducer::Drop {
            patterns: &[r"^\s+[✓√✔] ", r"^\s+○ ", r"^ PASS "],
            what: "passing lines",
        },
    },
    Rule {
        commands: &["cargo build", "cargo check", "cargo clippy", "cargo run", "cargo doc"],
        reducer: Reducer::Drop {
            patterns: &[CARGO_PROGRESS],
            what: "progress lines",
        },
    },
    Rule {
        commands: &[
            "make",
            "gcc",
            "g++",
            "clang",
            "clang++",
            "cc",
            "c++",
            "cmake --build",
            "ninja",
            "tsc",
            "npx tsc",
        ],
        reducer: Reducer::Drop {
            patterns: &[
                r"^make(\[\d+\])?: (Entering|Leaving) directory",
                r"^\[\s*\d+%\] (Building|Linking)",
            ],
            what: "progress lines",
        },
    },
    Rule {
        commands: &["ls", "find", "tree", "git log", "rg --files", "fd", "du"],
        reducer: Reducer::HeadTail { head: 100, tail: 40 },
    },
];

/// Outputs shorter than this are left as they are.
pub(crate) const MIN_LINES: usize = 20;

/// The output reduced, and what was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reduced {
    pub(crate) text: String,
    pub(crate) omitted: usize,
    pub(crate) what: &'static str,
}

static COMPILED: LazyLock<Vec<Option<RegexSet>>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|rule| match rule.reducer {
            Reducer::Drop { patterns, .. } => RegexSet::new(patterns).ok(),
            Reducer::HeadTail { .. } => None,
        })
        .collect()
});

/// The simple commands of `command` (split on `&&`, `||`, `;`, `|`),
/// with whitespace collapsed and leading `VAR=value` words dropped.
fn parts(command: &str) -> Vec<String> {
    command
        .split(['\n', ';', '|', '&'])
        .map(|part| {
            part.split_whitespace()
                .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// The rule for `command`, if any (its index in [`RULES`]).
pub(crate) fn rule_for(command: &str) -> Option<usize> {
    let parts = parts(command);
    RULES.iter().position(|rule| {
        rule.commands.iter().any(|prefix| {
            parts
                .iter()
                .any(|p| p == prefix || p.starts_with(&format!("{prefix} ")))
        })
    })
}

/// `output` reduced by the rule for `command`; `None` when no rule applies,
/// the output is short, or nothing would be left out.
pub(crate) fn reduce(command: &str, output: &str) -> Option<Reduced> {
    let index = rule_for(command)?;
    let lines: Vec<&str> = output.lines().collect();
    if lines.len() < MIN_LINES {
        return None;
    }
    match RULES[index].reducer {
        Reducer::Drop { what, .. } => {
            let set = COMPILED[index].as_ref()?;
            let kept: Vec<&str> = lines.iter().copied().filter(|l| !set.is_match(l)).collect();
            let omitted = lines.len() - kept.len();
            (omitted > 0).then(|| Reduced {
                text: kept.join("\n") + "\n",
                omitted,
                what,
            })
        }
        Reducer::HeadTail { head, tail } => {
            if lines.len() <= head + tail {
                return None;
            }
            let omitted = lines.len() - head - tail;
            let mut text = lines[..head].join("\n");
            text.push_str(&format!("\n[… {omitted} lines …]\n"));
            text.push_str(&lines[lines.len() - tail..].join("\n"));
            text.push('\n');
            Some(Reduced {
                text,
                omitted,
                what: "listing lines",
            })
        }
    }
}

#[cfg(test)]
mod tests {
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
}
