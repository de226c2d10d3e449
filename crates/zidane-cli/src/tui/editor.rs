//! The input: several lines, a history kept per project, collapsed pastes,
//! reverse search, and completion of `@path` mentions and slash commands.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_width::UnicodeWidthStr;

/// A paste longer than this many lines is shown as one placeholder.
const COLLAPSE_LINES: usize = 10;
/// Entries kept in a history file.
const HISTORY_KEEP: usize = 1000;

/// What a key did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Edit {
    /// Nothing more to do than draw.
    Changed,
    /// Enter: the text, with pastes put back whole.
    Submit(String),
    /// A key the editor does not take.
    Ignored,
}

/// The prompts sent before, newest last, kept in a file per project.
pub(crate) struct History {
    entries: Vec<String>,
    file: Option<PathBuf>,
}

impl History {
    /// The history of the project at `root`, kept under `dir`.
    pub(crate) fn open(dir: Option<&Path>, root: &Path) -> History {
        let file = dir.map(|d| {
            let name: String = root
                .to_string_lossy()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            let name = name.trim_matches('-');
            let short: String = name
                .chars()
                .rev()
                .take(60)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            d.join("history").join(format!(
                "{short}-{:08x}.jsonl",
                zidane::agent::fnv1a32(&root.to_string_lossy())
            ))
        });
        let entries = file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .map(|text| {
                text.lines()
                    .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                    .filter_map(|v| v["text"].as_str().map(str::to_owned))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        History { entries, file }
    }

    /// Keeps `text` (not twice in a row), in memory and in the file.
    pub(crate) fn add(&mut self, text: &str) {
        if text.trim().is_empty() || self.entries.last().is_some_and(|l| l == text) {
            return;
        }
        self.entries.push(text.to_owned());
        let Some(file) = &self.file else {
            return;
        };
        // What a person typed is theirs alone: the file 0600, its folder 0700.
        if let Some(dir) = file.parent() {
            let _ = zidane::tools::private_dir(dir);
        }
        let _ = zidane::tools::tighten(file, 0o600);
        let line = format!("{}\n", serde_json::json!({ "text": text }));
        use std::io::Write;
        let appended = zidane::tools::private_options()
            .create(true)
            .append(true)
            .open(file)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if appended.is_ok() && self.entries.len() > HISTORY_KEEP * 2 {
            self.entries.drain(..self.entries.len() - HISTORY_KEEP);
            let text: String = self
                .entries
                .iter()
                .map(|e| format!("{}\n", serde_json::json!({ "text": e })))
                .collect();
            let _ = zidane::tools::private_options()
                .write(true)
                .truncate(true)
                .open(file)
                .and_then(|mut f| f.write_all(text.as_bytes()));
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    fn get(&self, i: usize) -> Option<&str> {
        self.entries.get(i).map(String::as_str)
    }

    /// The newest entry before `before` holding `query`.
    fn search(&self, query: &str, before: usize) -> Option<usize> {
        (0..before.min(self.entries.len()))
            .rev()
            .find(|&i| self.entries[i].contains(query))
    }
}

struct Search {
    query: String,
    hit: Option<usize>,
}

/// The input being typed.
pub(crate) struct Editor {
    text: String,
    /// A byte offset on a character boundary.
    cursor: usize,
    pastes: Vec<(String, String)>,
    pub(crate) history: History,
    browsing: Option<usize>,
    draft: String,
    search: Option<Search>,
    /// Completions offered by the last Tab, and which is shown.
    pub(crate) offered: Vec<String>,
}

impl Editor {
    pub(crate) fn new(history: History) -> Editor {
        Editor {
            text: String::new(),
            cursor: 0,
            pastes: Vec::new(),
            history,
            browsing: None,
            draft: String::new(),
            search: None,
            offered: Vec::new(),
        }
    }

    #[cfg(test)]
    fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Sets the text, the cursor at its end.
    pub(crate) fn set(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
    }

    /// Empties the input; what it held goes to the history, so nothing
    /// typed is lost.
    pub(crate) fn clear(&mut self) {
        let text = self.expanded();
        self.history.add(&text);
        self.reset();
    }

    fn reset(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.pastes.clear();
        self.browsing = None;
        self.search = None;
        self.offered.clear();
    }

    /// The text with each paste placeholder replaced by the paste.
    pub(crate) fn expanded(&self) -> String {
        let mut text = self.text.clone();
        for (mark, content) in &self.pastes {
            text = text.replacen(mark.as_str(), content, 1);
        }
        text
    }

    fn insert(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
        self.browsing = None;
    }

    /// A bracketed paste: short ones as typed, long ones as a placeholder
    /// (sent whole).
    pub(crate) fn paste(&mut self, content: &str) {
        let content = content.replace("\r\n", "\n").replace('\r', "\n");
        let lines = content.lines().count();
        if lines > COLLAPSE_LINES {
            let n = self.pastes.len() + 1;
            let mark = if n == 1 {
                format!("[pasted {lines} lines]")
            } else {
                format!("[pasted {lines} lines #{n}]")
            };
            self.insert(&mark);
            self.pastes.push((mark, content));
        } else {
            self.insert(&content);
        }
    }

    fn prev_boundary(&self) -> usize {
        self.text[..self.cursor]
            .char_indices()
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self) -> usize {
        self.text[self.cursor..]
            .chars()
            .next()
            .map_or(self.cursor, |c| self.cursor + c.len_utf8())
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    /// Moves a line up or down, keeping the column; `false` at the edge.
    fn vertical(&mut self, up: bool) -> bool {
        let start = self.line_start();
        let col = self.text[start..self.cursor].chars().count();
        let target = if up {
            if start == 0 {
                return false;
            }
            let prev_end = start - 1;
            self.text[..prev_end].rfind('\n').map_or(0, |i| i + 1)
        } else {
            let end = self.line_end();
            if end == self.text.len() {
                return false;
            }
            end + 1
        };
        let line_end = self.text[target..].find('\n').map_or(self.text.len(), |i| target + i);
        let offset: usize = self.text[target..line_end].chars().take(col).map(char::len_utf8).sum();
        self.cursor = target + offset;
        true
    }

    fn history_step(&mut self, back: bool) {
        let len = self.history.len();
        let next = match (self.browsing, back) {
            (None, true) if len > 0 => {
                self.draft = self.text.clone();
                Some(len - 1)
            }
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i + 1 < len => Some(i + 1),
            (Some(_), false) => {
                let draft = std::mem::take(&mut self.draft);
                self.set(&draft);
                self.browsing = None;
                return;
            }
            _ => return,
        };
        if let Some(i) = next
            && let Some(entry) = self.history.get(i)
        {
            let entry = entry.to_owned();
            self.set(&entry);
            self.browsing = Some(i);
        }
    }

    fn delete_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        let start = trimmed.rfind(|c: char| c.is_whitespace()).map_or(0, |i| i + 1);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Whether reverse search is on.
    pub(crate) fn searching(&self) -> Option<(&str, Option<&str>)> {
        self.search
            .as_ref()
            .map(|s| (s.query.as_str(), s.hit.and_then(|i| self.history.get(i))))
    }

    fn search_key(&mut self, key: &KeyEvent) -> Edit {
        let Some(search) = &mut self.search else {
            return Edit::Ignored;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('r') if ctrl => {
                let before = search.hit.unwrap_or(self.history.len());
                if let Some(hit) = self.history.search(&search.query, before) {
                    search.hit = Some(hit);
                }
            }
            KeyCode::Char('g' | 'c') if ctrl => self.search = None,
            KeyCode::Esc => self.search = None,
            KeyCode::Enter | KeyCode::Right | KeyCode::Left | KeyCode::Tab => {
                let hit = search.hit.and_then(|i| self.history.get(i)).map(str::to_owned);
                self.search = None;
                if let Some(hit) = hit {
                    self.set(&hit);
                }
            }
            KeyCode::Backspace => {
                search.query.pop();
                search.hit = self.history.search(&search.query, self.history.len());
            }
            KeyCode::Char(c) if !ctrl => {
                search.query.push(c);
                search.hit = self.history.search(&search.query, self.history.len());
            }
            _ => {}
        }
        Edit::Changed
    }

    /// Takes a key.
    pub(crate) fn key(&mut self, key: &KeyEvent) -> Edit {
        if self.search.is_some() {
            return self.search_key(key);
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        if key.code != KeyCode::Tab {
            self.offered.clear();
        }
        match key.code {
            KeyCode::Enter if shift || alt || ctrl => self.insert("\n"),
            KeyCode::Char('j') if ctrl => self.insert("\n"),
            KeyCode::Enter => {
                // A trailing backslash continues the input on a new line.
                if self.cursor == self.text.len() && self.text.ends_with('\\') {
                    self.text.pop();
                    self.cursor = self.text.len();
                    self.insert("\n");
                    return Edit::Changed;
                }
                let text = self.expanded();
                self.history.add(&text);
                self.reset();
                return Edit::Submit(text);
            }
            KeyCode::Char('r') if ctrl => {
                self.search = Some(Search {
                    query: String::new(),
                    hit: None,
                });
            }
            KeyCode::Char('a') if ctrl => self.cursor = self.line_start(),
            KeyCode::Char('e') if ctrl => self.cursor = self.line_end(),
            KeyCode::Char('u') if ctrl => {
                let start = self.line_start();
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            KeyCode::Char('k') if ctrl => {
                let end = self.line_end();
                self.text.replace_range(self.cursor..end, "");
            }
            KeyCode::Char('w') if ctrl => self.delete_word(),
            KeyCode::Backspace if alt => self.delete_word(),
            KeyCode::Char(_) if ctrl => return Edit::Ignored,
            KeyCode::Char(c) => self.insert(c.encode_utf8(&mut [0; 4])),
            KeyCode::Backspace => {
                let start = self.prev_boundary();
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            KeyCode::Delete => {
                let end = self.next_boundary();
                self.text.replace_range(self.cursor..end, "");
            }
            KeyCode::Left => self.cursor = self.prev_boundary(),
            KeyCode::Right => self.cursor = self.next_boundary(),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Up => {
                if !self.vertical(true) {
                    self.history_step(true);
                }
            }
            KeyCode::Down => {
                if !self.vertical(false) {
                    self.history_step(false);
                }
            }
            _ => return Edit::Ignored,
        }
        Edit::Changed
    }

    /// The word the cursor ends, with where it starts.
    pub(crate) fn word(&self) -> (usize, &str) {
        let before = &self.text[..self.cursor];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        (start, &before[start..])
    }

    /// Replaces the word the cursor ends with `with`.
    pub(crate) fn replace_word(&mut self, with: &str) {
        let (start, _) = self.word();
        self.text.replace_range(start..self.cursor, with);
        self.cursor = start + with.len();
    }

    /// Rows to draw (the first with `prompt` before it) and where the
    /// cursor is among them, for `cols` columns.
    pub(crate) fn rows(&self, prompt: &str, cols: usize) -> (Vec<String>, (usize, usize)) {
        let pad = " ".repeat(prompt.width());
        let mut rows = Vec::new();
        let mut cursor = (0, 0);
        let mut offset = 0;
        let cols = cols.max(pad.len() + 2);
        for (n, line) in self.text.split('\n').enumerate() {
            let lead = if n == 0 { prompt } else { pad.as_str() };
            let mut row = lead.to_owned();
            let mut used = pad.len();
            let mut at = offset;
            for c in line.chars() {
                if at == self.cursor {
                    cursor = (rows.len(), used);
                }
                let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                if used + w >= cols {
                    rows.push(std::mem::take(&mut row));
                    row.push_str(&pad);
                    used = pad.len();
                    if at == self.cursor {
                        cursor = (rows.len(), used);
                    }
                }
                row.push(c);
                used += w;
                at += c.len_utf8();
            }
            if at == self.cursor {
                cursor = (rows.len(), used);
            }
            rows.push(row);
            offset = at + 1;
        }
        (rows, cursor)
    }
}

/// The longest start all of `items` share.
pub(crate) fn common_prefix(items: &[String]) -> String {
    let Some(first) = items.first() else {
        return String::new();
    };
    let mut end = first.len();
    for item in &items[1..] {
        end = first
            .char_indices()
            .zip(item.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, a), _)| i + a.len_utf8())
            .min(end);
    }
    first[..end].to_owned()
}

#[cfg(test)]
mod tests;
