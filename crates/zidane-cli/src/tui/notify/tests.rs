use super::*;

fn on(program: &str, term: &str) -> Terminal {
    Terminal {
        program: program.to_owned(),
        term: term.to_owned(),
        ..Default::default()
    }
}

#[test]
fn each_terminal_its_sequence() {
    for program in ["iTerm.app", "WezTerm", "ghostty"] {
        assert_eq!(sequence(&on(program, "xterm-256color"), "done"), "\x1b]9;done\x07");
    }
    assert_eq!(sequence(&on("", "xterm-kitty"), "done"), "\x1b]9;done\x07");
    assert_eq!(sequence(&on("", "foot"), "a; b"), "\x1b]777;notify;zidane;a b\x07");
    assert_eq!(sequence(&on("", "xterm-256color"), "done"), "\x07");
    let tmux = Terminal {
        tmux: true,
        ..on("WezTerm", "tmux-256color")
    };
    assert_eq!(sequence(&tmux, "done"), "\x07");
}
