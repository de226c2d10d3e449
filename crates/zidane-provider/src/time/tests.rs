use super::*;

#[test]
fn a_timestamp_is_milliseconds_in_json_and_a_system_time_in_rust() {
    let t = Timestamp::from_millis(1_700_000_000_123);
    assert_eq!(serde_json::to_string(&t).unwrap(), "1700000000123");
    assert_eq!(serde_json::from_str::<Timestamp>("1700000000123").unwrap(), t);
    let system: SystemTime = t.into();
    assert_eq!(Timestamp::from(system), t);
    assert_eq!((t + Duration::from_secs(1)).since(t), Duration::from_secs(1));
    assert_eq!(t.since(t + Duration::from_secs(1)), Duration::ZERO);
}

#[test]
fn a_duration_field_is_whole_milliseconds() {
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Timed {
        #[serde(with = "millis", rename = "durationMs")]
        duration: Duration,
    }
    let timed = Timed {
        duration: Duration::from_millis(1500),
    };
    assert_eq!(serde_json::to_string(&timed).unwrap(), r#"{"durationMs":1500}"#);
    assert_eq!(serde_json::from_str::<Timed>(r#"{"durationMs":1500}"#).unwrap(), timed);
}
