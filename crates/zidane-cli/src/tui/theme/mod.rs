//! Dark or light: `theme = "dark" | "light"`, or `auto` (the default),
//! which takes `$COLORFGBG` when the terminal sets it and otherwise asks
//! the terminal for its background (OSC 11, followed by a device-attributes
//! query every terminal answers, so one that does not know OSC 11 costs no
//! wait); dark when nothing answers within a second.

use std::time::{Duration, Instant};

use zidane_app::Theme;

/// How long the terminal has to answer.
const PATIENCE: Duration = Duration::from_millis(1000);

/// Whether the background is light, as configured or found.
pub(super) fn light(theme: Theme) -> bool {
    match theme {
        Theme::Dark => false,
        Theme::Light => true,
        Theme::Auto => {
            if let Some(light) = std::env::var("COLORFGBG").ok().and_then(|v| colorfgbg(&v)) {
                return light;
            }
            ask_background().is_some_and(|(r, g, b)| is_light(r, g, b))
        }
    }
}

/// `$COLORFGBG` (`fg;bg`, or `fg;default;bg`): the background's colour
/// number, light for 7 and 9–15.
pub(super) fn colorfgbg(value: &str) -> Option<bool> {
    let bg: u8 = value.rsplit(';').next()?.trim().parse().ok()?;
    Some(bg == 7 || (9..=15).contains(&bg))
}

/// Whether a colour (each channel 0–65535) is light (relative luminance
/// over one half).
pub(super) fn is_light(r: u16, g: u16, b: u16) -> bool {
    let y = 0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b);
    y / 65535.0 > 0.5
}

/// The background colour from an answer holding `ESC ] 11 ; rgb:R/G/B`
/// (each channel one to four hex digits).
pub(super) fn parse_answer(answer: &str) -> Option<(u16, u16, u16)> {
    let start = answer.find("]11;")? + 4;
    let rest = &answer[start..];
    let end = rest.find(['\x1b', '\x07']).unwrap_or(rest.len());
    let spec = rest[..end].strip_prefix("rgb:")?;
    let mut channels = spec.split('/').map(|hex| {
        let hex = hex.get(..hex.len().min(4))?;
        let n = u32::from_str_radix(hex, 16).ok()?;
        let max = (1u32 << (4 * hex.len() as u32)) - 1;
        Some((n * 65535 / max.max(1)) as u16)
    });
    Some((channels.next()??, channels.next()??, channels.next()??))
}

/// Asks the terminal (in raw mode) for its background.
#[cfg(unix)]
fn ask_background() -> Option<(u16, u16, u16)> {
    use std::io::{Read, Write};
    use std::os::fd::AsFd;
    let mut out = std::io::stdout();
    out.write_all(b"\x1b]11;?\x1b\\\x1b[c").ok()?;
    out.flush().ok()?;
    let stdin = std::io::stdin();
    let deadline = Instant::now() + PATIENCE;
    let mut got = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let timeout = rustix::event::Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let fd = stdin.as_fd();
        let mut fds = [rustix::event::PollFd::new(&fd, rustix::event::PollFlags::IN)];
        if rustix::event::poll(&mut fds, Some(&timeout)).ok()? == 0 {
            continue;
        }
        let mut buf = [0u8; 256];
        let n = stdin.lock().read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        // The device attributes' answer (`ESC [ ? … c`) comes last.
        let text = String::from_utf8_lossy(&got);
        if text.contains("\x1b[?") && text.trim_end().ends_with('c') {
            break;
        }
    }
    parse_answer(&String::from_utf8_lossy(&got))
}

#[cfg(not(unix))]
fn ask_background() -> Option<(u16, u16, u16)> {
    None
}

#[cfg(test)]
mod tests;
