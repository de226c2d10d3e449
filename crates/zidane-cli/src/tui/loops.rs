//! `/loop EVERY PROMPT`: a prompt sent again at an interval while the
//! session is open (now, then every EVERY; a firing due during a run waits
//! for its end). `/loop` lists them, `/loop stop` ends them.

use std::time::{Duration, Instant};

use super::Session;

/// A prompt sent at an interval.
pub(super) struct Looped {
    every: Duration,
    prompt: String,
    next: Instant,
}

/// `/loop`'s usage line.
const USAGE: &str = "usage: /loop EVERY PROMPT (EVERY like 30s, 5m, 2h; a bare number is minutes) | /loop | /loop stop";

/// `30s`, `5m`, `2h` or a bare number of minutes (not zero).
fn interval(text: &str) -> Option<Duration> {
    let (number, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, "m"),
    };
    let n: u64 = number.parse().ok()?;
    let secs = match unit {
        "s" => n,
        "m" => n.checked_mul(60)?,
        "h" => n.checked_mul(3600)?,
        _ => return None,
    };
    (secs > 0).then(|| Duration::from_secs(secs))
}

fn shown(every: Duration) -> String {
    let secs = every.as_secs();
    match secs {
        s if s.is_multiple_of(3600) => format!("{}h", s / 3600),
        s if s.is_multiple_of(60) => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

impl Session {
    /// `/loop ARGUMENT`.
    pub(super) async fn loop_command(&mut self, rest: &str) {
        match rest.trim() {
            "" => {
                let lines = if self.loops.is_empty() {
                    vec![self.paint.dim(&format!("No loops. {USAGE}"))]
                } else {
                    self.loops
                        .iter()
                        .map(|l| {
                            let left = l.next.saturating_duration_since(Instant::now()).as_secs();
                            self.paint
                                .dim(&format!("every {}: {} (next in {}s)", shown(l.every), l.prompt, left))
                        })
                        .collect()
                };
                self.say(lines);
            }
            "stop" | "clear" => {
                let n = self.loops.len();
                self.loops.clear();
                self.note(&format!("{n} loop{} stopped", if n == 1 { "" } else { "s" }));
            }
            text => {
                let (every, prompt) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
                match (interval(every), prompt.trim()) {
                    (Some(every), prompt) if !prompt.is_empty() => {
                        self.note(&format!(
                            "every {}: {prompt} (until /loop stop or the session ends)",
                            shown(every)
                        ));
                        self.loops.push(Looped {
                            every,
                            prompt: prompt.to_owned(),
                            next: Instant::now(),
                        });
                        self.fire_loops().await;
                    }
                    _ => self.note(USAGE),
                }
            }
        }
    }

    /// Sends the loops that are due, when no run goes on (one per tick).
    pub(super) async fn fire_loops(&mut self) {
        if self.run.is_some() {
            return;
        }
        let now = Instant::now();
        let Some(due) = self.loops.iter_mut().find(|l| l.next <= now) else {
            return;
        };
        due.next = now + due.every;
        let prompt = due.prompt.clone();
        self.submit_prompt(prompt).await;
    }

    /// The status line's part: how many loops run.
    pub(super) fn loops_status(&self) -> Option<String> {
        match self.loops.len() {
            0 => None,
            1 => Some(format!("loop every {}", shown(self.loops[0].every))),
            n => Some(format!("{n} loops")),
        }
    }
}
