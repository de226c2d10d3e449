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
mod tests;
