#[test]
fn times_in_rfc3339() {
    assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(super::rfc3339(1_798_156_800_123), "2026-12-25T00:00:00.123Z");
    assert_eq!(super::rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
}
