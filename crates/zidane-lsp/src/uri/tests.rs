use super::*;

#[test]
fn paths_round_trip_through_uris() {
    for p in ["/tmp/a b/c.py", "/x/é#1.rs", "/plain/file.ts"] {
        let uri = from_path(Path::new(p));
        assert!(uri.as_str().starts_with("file:///"), "{}", uri.as_str());
        assert_eq!(to_path(&uri).unwrap(), PathBuf::from(p));
    }
    assert_eq!(from_path(Path::new("/tmp/a b")).as_str(), "file:///tmp/a%20b");
}

#[test]
fn columns_count_utf16_units() {
    let line = "é😀x = 1";
    assert_eq!(utf16_column(line, 1), 0);
    assert_eq!(utf16_column(line, 3), 3, "the emoji is two units");
    assert_eq!(char_column(line, 3), 3);
    assert_eq!(char_column(line, 0), 1);
    assert_eq!(char_column("ab", 10), 3);
}
