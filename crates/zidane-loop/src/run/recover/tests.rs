use std::time::Duration;

use zidane_provider::{ErrorKind, ProviderError};

use super::{Attempts, Next, recover, retry_delay};
use crate::behavior::Behavior;

fn error(kind: ErrorKind) -> ProviderError {
    ProviderError::new(kind, "p", "failed")
}

fn attempts() -> Attempts {
    Attempts::default()
}

#[test]
fn each_failure_gets_its_recovery_in_order() {
    let behavior = Behavior::default();
    let rejected = ProviderError::new(
        ErrorKind::InvalidRequest,
        "p",
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    );
    let second = Duration::from_secs(1);
    let cases: Vec<(&str, ProviderError, Attempts, usize, Next)> = vec![
        (
            "an overflow elides first",
            error(ErrorKind::ContextExceeded),
            attempts(),
            0,
            Next::ElideResults { pass: 1 },
        ),
        (
            "the next overflow elides harder",
            error(ErrorKind::ContextExceeded),
            Attempts {
                overflow_passes: 2,
                ..attempts()
            },
            0,
            Next::ElideResults { pass: 3 },
        ),
        (
            "an overflow past the passes falls back",
            error(ErrorKind::ContextExceeded),
            Attempts {
                overflow_passes: 3,
                ..attempts()
            },
            1,
            Next::Fallback,
        ),
        (
            "an elision that changed nothing falls through",
            error(ErrorKind::ContextExceeded),
            Attempts {
                overflow_passes: 1,
                elided: true,
                ..attempts()
            },
            0,
            Next::Fail,
        ),
        (
            "an overflow eliding cannot save is compacted, before a fallback",
            error(ErrorKind::ContextExceeded),
            Attempts {
                overflow_passes: 1,
                elided: true,
                may_compact: true,
                ..attempts()
            },
            1,
            Next::Compact,
        ),
        (
            "an overflow past the passes is compacted",
            error(ErrorKind::ContextExceeded),
            Attempts {
                overflow_passes: 3,
                may_compact: true,
                ..attempts()
            },
            0,
            Next::Compact,
        ),
        (
            "eliding comes before compacting",
            error(ErrorKind::ContextExceeded),
            Attempts {
                may_compact: true,
                ..attempts()
            },
            0,
            Next::ElideResults { pass: 1 },
        ),
        (
            "rejected reasoning is stripped",
            rejected.clone(),
            attempts(),
            0,
            Next::StripReasoning,
        ),
        (
            "once per call",
            rejected,
            Attempts {
                repaired: true,
                ..attempts()
            },
            0,
            Next::Fail,
        ),
        (
            "a server error retries with backoff",
            error(ErrorKind::Server),
            attempts(),
            0,
            Next::Retry {
                transport: false,
                attempt: 1,
                max: 4,
                delay: second,
            },
        ),
        (
            "the third retry waits four times as long",
            error(ErrorKind::Overloaded),
            Attempts {
                provider: 2,
                ..attempts()
            },
            0,
            Next::Retry {
                transport: false,
                attempt: 3,
                max: 4,
                delay: second * 4,
            },
        ),
        (
            "provider retries stop at their cap, then the chain goes on",
            error(ErrorKind::Server),
            Attempts {
                provider: 3,
                ..attempts()
            },
            2,
            Next::Fallback,
        ),
        (
            "transport errors count apart, with their own cap",
            error(ErrorKind::Transport),
            Attempts {
                provider: 3,
                transport: 6,
                ..attempts()
            },
            0,
            Next::Retry {
                transport: true,
                attempt: 7,
                max: 8,
                delay: Duration::from_secs(60),
            },
        ),
        (
            "the total wait is capped",
            error(ErrorKind::RateLimited),
            Attempts {
                waited: Duration::from_millis(179_500),
                ..attempts()
            },
            0,
            Next::Fail,
        ),
        (
            "a silent provider is retried while another silence fits the budget",
            error(ErrorKind::Transport).with_silence(Duration::from_secs(120)),
            attempts(),
            0,
            Next::Retry {
                transport: true,
                attempt: 1,
                max: 8,
                delay: second,
            },
        ),
        (
            "then it is given up, attempts left or not",
            error(ErrorKind::Transport).with_silence(Duration::from_secs(120)),
            Attempts {
                transport: 1,
                silent: Duration::from_secs(120),
                ..attempts()
            },
            0,
            Next::Fail,
        ),
        (
            "or the chain goes on",
            error(ErrorKind::Transport).with_silence(Duration::from_secs(120)),
            Attempts {
                transport: 1,
                silent: Duration::from_secs(120),
                ..attempts()
            },
            1,
            Next::Fallback,
        ),
        (
            "a request the provider refuses is not retried",
            error(ErrorKind::InvalidRequest),
            attempts(),
            1,
            Next::Fallback,
        ),
        (
            "without a fallback it fails",
            error(ErrorKind::Auth),
            attempts(),
            0,
            Next::Fail,
        ),
    ];
    for (name, error, attempts, fallbacks, want) in cases {
        assert_eq!(recover(&error, &attempts, &behavior, 1.0, fallbacks), want, "{name}");
    }
}

#[test]
fn the_server_delay_wins_and_is_capped() {
    let behavior = Behavior::default();
    let asked = |secs| {
        let e = error(ErrorKind::RateLimited).with_retry_after(Some(Duration::from_secs(secs)));
        recover(&e, &attempts(), &behavior, 0.0, 0)
    };
    assert!(matches!(asked(7), Next::Retry { delay, .. } if delay == Duration::from_secs(7)));
    assert!(matches!(asked(600), Next::Retry { delay, .. } if delay == Duration::from_secs(60)));
}

#[test]
fn jitter_keeps_three_quarters_to_all_of_the_backoff() {
    let behavior = Behavior::default();
    assert_eq!(retry_delay(&behavior, 2, None, 0.0), Duration::from_millis(1500));
    assert_eq!(retry_delay(&behavior, 2, None, 1.0), Duration::from_millis(2000));
    assert_eq!(retry_delay(&behavior, 30, None, 1.0), Duration::from_secs(60));
}
