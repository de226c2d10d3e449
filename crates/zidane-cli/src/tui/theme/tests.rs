use super::*;

#[test]
fn answers_and_variables() {
    assert_eq!(
        parse_answer("\x1b]11;rgb:ffff/ffff/ffff\x1b\\"),
        Some((65535, 65535, 65535))
    );
    assert_eq!(parse_answer("\x1b]11;rgb:00/00/00\x07\x1b[?62;c"), Some((0, 0, 0)));
    assert_eq!(parse_answer("\x1b[?62;c"), None);
    assert!(is_light(65535, 65535, 60000));
    assert!(!is_light(7000, 7000, 9000));
    assert_eq!(colorfgbg("0;15"), Some(true));
    assert_eq!(colorfgbg("15;default;0"), Some(false));
    assert_eq!(colorfgbg("nonsense"), None);
    assert!(light(Theme::Light) && !light(Theme::Dark));
}
