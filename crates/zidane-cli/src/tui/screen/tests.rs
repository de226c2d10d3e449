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

#[test]
fn rows_drawn_wide_count_as_the_rows_they_wrap_onto() {
    // A separator of 99 columns, the input, the cursor on the input.
    assert_eq!(rows_above(&[99, 40, 60], 1, 30, 100), 1);
    assert_eq!(rows_above(&[99, 40, 60], 1, 30, 40), 3);
    assert_eq!(rows_above(&[99, 40, 60], 2, 45, 40), 5);
    assert_eq!(rows_above(&[0, 10], 1, 0, 40), 1);
}
