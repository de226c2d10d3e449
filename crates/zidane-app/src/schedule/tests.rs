use super::*;

/// 2025-01-01T00:00:00 in this machine's local time, epoch ms.
fn new_year(year: i32) -> u64 {
    Local
        .with_ymd_and_hms(year, 1, 1, 0, 0, 0)
        .single()
        .map(|t| t.timestamp_millis() as u64)
        .unwrap()
}

#[test]
fn a_yearly_schedule_missed_three_times_is_due_once_at_the_latest() {
    let cron = parse_cron("0 0 1 1 *").unwrap();
    let made = new_year(2022) + 1000;
    let now = new_year(2025) + 3_600_000;
    assert_eq!(due_between(&cron, made, now), Some((new_year(2025), 3)));
    // Claimed: nothing more until next year.
    assert_eq!(due_between(&cron, new_year(2025), now), None);
    assert_eq!(next_after(&cron, now), Some(new_year(2026)));
}

#[test]
fn a_cron_expression_that_does_not_read_is_a_usage_error() {
    let error = parse_cron("every day").unwrap_err();
    assert!(
        error.message().contains("is not a cron expression"),
        "{}",
        error.message()
    );
    assert!(parse_cron("*/5 * * * *").is_ok());
    assert!(parse_cron("@daily").is_ok());
}

#[test]
fn names_are_short_and_plain() {
    assert!(valid_name("nightly-tests.v2"));
    assert!(!valid_name("a/b"));
    assert!(!valid_name(""));
    assert!(!valid_name(&"x".repeat(65)));
}

#[test]
fn a_spent_budget_stops_the_firings() {
    let schedule = Schedule {
        name: "n".into(),
        cron: "* * * * *".into(),
        folder: ".".into(),
        prompt: "p".into(),
        goal: None,
        session: None,
        max_turns: 5,
        max_cost: Some(1.0),
        created_ms: 0,
    };
    let mut state = ScheduleState {
        spent: 0.5,
        ..Default::default()
    };
    assert!(next_firing(&schedule, &state, 1_000).is_some());
    state.spent = 1.0;
    assert_eq!(next_firing(&schedule, &state, 1_000), None);
    assert_eq!(due(&schedule, &state, new_year(2025)), None);
}
