use super::*;

#[test]
fn widths_leave_escapes_out() {
    let p = Paint {
        color: true,
        truecolor: false,
        basic: false,
        light: false,
    };
    assert_eq!(width(&p.bold("abc")), 3);
    assert_eq!(width("日本"), 4);
    let cut = fit(&p.bold("abcdefgh"), 5);
    assert_eq!(width(&cut), 5);
    assert!(cut.ends_with("\x1b[0m"));
}

#[test]
fn without_colour_nothing_is_escaped() {
    let p = Paint {
        color: false,
        truecolor: false,
        basic: false,
        light: false,
    };
    assert_eq!(p.rgb((1, 2, 3), &p.dim("x")), "x");
}

#[test]
fn near_colours() {
    assert_eq!(ansi256(0, 0, 0), 16);
    assert_eq!(ansi256(255, 0, 0), 196);
    assert_eq!(ansi256(128, 128, 128), 244);
}
