//! The terminal, inline: what is finished goes into the normal scrollback
//! (never touched again), and only the area under it — the live line, the
//! input and the status line — is redrawn.

use std::io::Write;

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::{QueueableCommand, terminal};
use unicode_width::UnicodeWidthChar;

/// How text is coloured: not at all under `NO_COLOR`, with 256 colours
/// unless the terminal says it has true colour (or only sixteen), for a
/// dark or a light background.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Paint {
    pub(crate) color: bool,
    pub(crate) truecolor: bool,
    /// Only the sixteen colours (`TERM=xterm`, `linux`, …).
    pub(crate) basic: bool,
    /// A light background: code is highlighted for it.
    pub(crate) light: bool,
}

/// The sixteen colours the interface uses for its own marks.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Hue {
    Red,
    Green,
    Yellow,
    Magenta,
    Cyan,
}

impl Paint {
    pub(crate) fn from_env() -> Paint {
        let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let truecolor = std::env::var("COLORTERM").is_ok_and(|v| v == "truecolor" || v == "24bit");
        let term = std::env::var("TERM").unwrap_or_default();
        let basic = !truecolor && sixteen_colours(&term);
        Paint {
            color: color && term != "dumb",
            truecolor,
            basic,
            light: false,
        }
    }

    fn wrap(&self, on: &str, off: &str, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{on}m{text}\x1b[{off}m")
        } else {
            text.to_owned()
        }
    }

    pub(crate) fn dim(&self, text: &str) -> String {
        self.wrap("2", "22", text)
    }

    pub(crate) fn bold(&self, text: &str) -> String {
        self.wrap("1", "22", text)
    }

    pub(crate) fn hue(&self, hue: Hue, text: &str) -> String {
        let code = match hue {
            Hue::Red => "31",
            Hue::Green => "32",
            Hue::Yellow => "33",
            Hue::Magenta => "35",
            Hue::Cyan => "36",
        };
        self.wrap(code, "39", text)
    }

    /// A foreground colour given as red, green and blue: as is on a
    /// true-colour terminal, else the nearest of the 256.
    pub(crate) fn rgb(&self, (r, g, b): (u8, u8, u8), text: &str) -> String {
        if !self.color {
            return text.to_owned();
        }
        if self.basic {
            format!("\x1b[{}m{text}\x1b[39m", ansi16(r, g, b))
        } else if self.truecolor {
            format!("\x1b[38;2;{r};{g};{b}m{text}\x1b[39m")
        } else {
            format!("\x1b[38;5;{}m{text}\x1b[39m", ansi256(r, g, b))
        }
    }
}

/// Whether `$TERM` names a terminal of sixteen colours.
fn sixteen_colours(term: &str) -> bool {
    let rich = [
        "256",
        "direct",
        "kitty",
        "ghostty",
        "alacritty",
        "foot",
        "wezterm",
        "iterm",
        "truecolor",
    ];
    !term.is_empty() && !rich.iter().any(|r| term.contains(r))
}

/// The nearest of the sixteen colours, as its SGR code.
fn ansi16(r: u8, g: u8, b: u8) -> u8 {
    let max = r.max(g).max(b);
    let bright = max > 170;
    let on = |c: u8| u8::from(u16::from(c) * 2 > u16::from(max) && c > 60);
    let index = on(r) | (on(g) << 1) | (on(b) << 2);
    if bright { 90 + index } else { 30 + index }
}

/// The nearest colour of the 6×6×6 cube (or the grey ramp).
fn ansi256(r: u8, g: u8, b: u8) -> u8 {
    let level = |c: u8| -> u8 {
        match c {
            0..=47 => 0,
            48..=114 => 1,
            _ => (c - 35) / 40,
        }
    };
    if r.abs_diff(g) < 10 && g.abs_diff(b) < 10 {
        let grey = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
        return match grey {
            0..=7 => 16,
            248.. => 231,
            g => 232 + ((g - 8) / 10).min(23) as u8,
        };
    }
    16 + 36 * level(r) + 6 * level(g) + level(b)
}

/// The columns `text` takes, escape sequences left out.
pub(crate) fn width(text: &str) -> usize {
    let mut cols = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            skip_escape(&mut chars);
            continue;
        }
        cols += c.width().unwrap_or(0);
    }
    cols
}

fn skip_escape(chars: &mut std::str::Chars<'_>) -> String {
    let mut seq = String::from('\x1b');
    if let Some(next) = chars.next() {
        seq.push(next);
        if next == '[' {
            for c in chars.by_ref() {
                seq.push(c);
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    seq
}

/// `text` cut to `cols` columns (escape sequences kept, styles closed).
pub(crate) fn fit(text: &str, cols: usize) -> String {
    if width(text) <= cols {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            out.push_str(&skip_escape(&mut chars));
            continue;
        }
        let w = c.width().unwrap_or(0);
        if used + w + 1 > cols {
            out.push('…');
            break;
        }
        used += w;
        out.push(c);
    }
    if out.contains('\x1b') {
        out.push_str("\x1b[0m");
    }
    out
}

/// `text` broken into rows of at most `cols` columns (plain text).
pub(crate) fn wrap(text: &str, cols: usize) -> Vec<String> {
    let cols = cols.max(1);
    let mut rows = vec![String::new()];
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > cols {
            rows.push(String::new());
            used = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
        used += w;
    }
    rows
}

/// The terminal in raw mode, with the area under the scrollback drawn.
pub(crate) struct Screen {
    out: std::io::Stdout,
    pub(crate) cols: u16,
    pub(crate) rows: u16,
    /// The cursor's row within the area drawn.
    cursor_row: u16,
    /// The cursor's column.
    cursor_col: u16,
    /// The columns each row of the area took when drawn: a terminal that
    /// reflows on resize (VTE, kitty, tmux) wraps a row wider than its new
    /// width onto several, and the next frame must climb over all of them.
    drawn: Vec<usize>,
    active: bool,
}

impl Screen {
    /// Raw mode, bracketed paste, and keys reported unambiguously where the
    /// terminal can (so Shift-Enter and a lone Esc are told apart; other
    /// terminals ignore the request).
    pub(crate) fn enter() -> std::io::Result<Screen> {
        terminal::enable_raw_mode()?;
        restore_on_panic();
        let (cols, rows) = match terminal::size() {
            Ok((c, r)) if c > 0 && r > 0 => (c, r),
            _ => (80, 24),
        };
        let mut out = std::io::stdout();
        out.queue(EnableBracketedPaste)?;
        // Focus reports (mode 1004): notifications only while elsewhere.
        out.queue(EnableFocusChange)?;
        out.queue(PushKeyboardEnhancementFlags(
            KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES,
        ))?;
        out.flush()?;
        Ok(Screen {
            out,
            cols,
            rows,
            cursor_row: 0,
            cursor_col: 0,
            drawn: Vec::new(),
            active: true,
        })
    }

    pub(crate) fn resize(&mut self, cols: u16, rows: u16) {
        self.cols = cols.max(10);
        self.rows = rows.max(3);
    }

    /// Prints `commit` into the scrollback and draws `area` under it, the
    /// cursor at `cursor` (row, column) within the area.
    pub(crate) fn frame(&mut self, commit: &[String], area: &[String], cursor: (u16, u16)) -> std::io::Result<()> {
        let mut buf: Vec<u8> = Vec::with_capacity(1024);
        buf.extend_from_slice(b"\r");
        let up = self.rows_above_cursor();
        if up > 0 {
            buf.extend_from_slice(format!("\x1b[{up}A").as_bytes());
        }
        buf.extend_from_slice(b"\x1b[J");
        for line in commit {
            buf.extend_from_slice(line.as_bytes());
            buf.extend_from_slice(b"\x1b[0m\r\n");
        }
        // One column is left free: a full row would leave the cursor in the
        // pending-wrap state and the arithmetic below would be off by one.
        let cols = usize::from(self.cols.saturating_sub(1)).max(1);
        let most = usize::from(self.rows.saturating_sub(1)).max(1);
        let skip = area.len().saturating_sub(most);
        let shown = &area[skip..];
        self.drawn.clear();
        for (i, row) in shown.iter().enumerate() {
            let row = fit(row, cols);
            self.drawn.push(width(&row));
            buf.extend_from_slice(row.as_bytes());
            buf.extend_from_slice(b"\x1b[0m");
            if i + 1 < shown.len() {
                buf.extend_from_slice(b"\r\n");
            }
        }
        let last = shown.len().saturating_sub(1) as u16;
        let row = cursor.0.saturating_sub(skip as u16).min(last);
        if last > row {
            buf.extend_from_slice(format!("\x1b[{}A", last - row).as_bytes());
        }
        buf.extend_from_slice(b"\r");
        let col = cursor.1.min(self.cols.saturating_sub(1));
        if col > 0 {
            buf.extend_from_slice(format!("\x1b[{col}C").as_bytes());
        }
        self.cursor_row = row;
        self.cursor_col = col;
        self.out.write_all(&buf)?;
        self.out.flush()
    }

    /// Writes `bytes` as they are (a notification's escape sequence).
    pub(crate) fn raw(&mut self, bytes: &str) {
        let _ = self.out.write_all(bytes.as_bytes());
        let _ = self.out.flush();
    }

    /// The terminal rows between the area's top and the cursor at the
    /// current width: each row drawn above the cursor takes as many rows
    /// as it now wraps onto, and the cursor's own row as many as its
    /// column does.
    fn rows_above_cursor(&self) -> usize {
        rows_above(&self.drawn, self.cursor_row, self.cursor_col, self.cols)
    }

    /// Clears the area and gives the terminal back as it was.
    pub(crate) fn leave(&mut self) {
        if !self.active {
            return;
        }
        self.active = false;
        let mut buf = String::from("\r");
        let up = self.rows_above_cursor();
        if up > 0 {
            buf.push_str(&format!("\x1b[{up}A"));
        }
        buf.push_str("\x1b[J");
        let _ = self.out.write_all(buf.as_bytes());
        let _ = self.out.queue(PopKeyboardEnhancementFlags);
        let _ = self.out.queue(DisableBracketedPaste);
        let _ = self.out.queue(DisableFocusChange);
        let _ = self.out.flush();
        let _ = terminal::disable_raw_mode();
    }
}

/// The rows from the top of rows drawn `drawn` columns wide to the cursor
/// (on row `row`, column `col`) on a terminal `cols` wide.
pub(crate) fn rows_above(drawn: &[usize], row: u16, col: u16, cols: u16) -> usize {
    let cols = usize::from(cols.max(1));
    let above: usize = drawn
        .iter()
        .take(usize::from(row))
        .map(|w| w.div_ceil(cols).max(1))
        .sum();
    above + usize::from(col) / cols
}

/// A panic gives the terminal back before its message is printed.
fn restore_on_panic() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = terminal::disable_raw_mode();
            let mut out = std::io::stdout();
            let _ = out.write_all(b"\x1b[<1u\x1b[?2004l\x1b[?1004l\r\n");
            let _ = out.flush();
            previous(info);
        }));
    });
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.leave();
    }
}

#[cfg(test)]
mod tests;
