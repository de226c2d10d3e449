#[test]
fn close_names() {
    assert_eq!(super::distance("compcat", "compact"), 2);
    assert_eq!(super::distance("", "new"), 3);
}
