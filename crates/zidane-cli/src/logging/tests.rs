use super::*;

#[test]
fn a_secret_in_a_line_is_masked_before_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let file = std::fs::File::create(&path).unwrap();
    let mut writer = Masked {
        sink: Sink::File(Arc::new(parking_lot::Mutex::new(file))),
        secrets: Arc::new(vec!["sk-live-0123456789".to_owned()]),
    };
    writer
        .write_all(b"DEBUG zidane: failed: invalid key sk-live-0123456789\n")
        .unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written, "DEBUG zidane: failed: invalid key [redacted]\n");
}
