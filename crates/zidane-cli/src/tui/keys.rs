//! Keys and pastes: the input, the question being answered, the list
//! being picked from, interrupting and quitting.

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::editor::{self, Edit};
use super::screen::Hue;
use zidane_app::Answer;

use super::{Picker, Session, view};

impl Session {
    pub(super) async fn on_event(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.on_key(key).await,
            Event::Paste(text) => {
                if let Some(reason) = &mut self.reason {
                    reason.push_str(&text.replace(['\r', '\n'], " "));
                } else {
                    self.editor.paste(&text);
                }
                self.draw(Vec::new());
            }
            Event::FocusGained => self.focused = true,
            Event::FocusLost => self.focused = false,
            Event::Resize(cols, rows) => {
                self.screen.resize(cols, rows);
                self.md.set_width(usize::from(self.screen.cols));
                self.draw(Vec::new());
            }
            _ => {}
        }
    }

    async fn on_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // Ctrl-\ detaches whatever is asked: a question shown stays with
        // the server for the next client.
        if ctrl && matches!(key.code, KeyCode::Char('\\' | '4')) && self.link.remote().is_some() {
            self.quit = true;
            return;
        }
        if !self.forms.is_empty() {
            self.form_key(key);
            self.draw(Vec::new());
            return;
        }
        if !self.asks.is_empty() {
            self.answer_key(key);
            self.draw(Vec::new());
            return;
        }
        if self.offer.is_some() {
            self.offer_key(key);
            self.draw(Vec::new());
            return;
        }
        if self.picker.is_some() {
            self.picker_key(key).await;
            self.draw(Vec::new());
            return;
        }
        match key.code {
            KeyCode::Char('c') if ctrl => self.ctrl_c(),
            KeyCode::Char('d') if ctrl && self.editor.is_empty() => self.quit = true,
            KeyCode::Char('g') if ctrl => self.outside = Some(super::outside::Outside::Editor),
            KeyCode::Char('z') if ctrl => self.outside = Some(super::outside::Outside::Suspend),
            // Ctrl-\ (the terminal sends 0x1c, read as Ctrl-4 by some).
            KeyCode::Char('\\' | '4') if ctrl => {
                if self.link.remote().is_some() {
                    self.quit = true;
                } else {
                    let line = self
                        .paint
                        .dim("(Ctrl-\\ detaches from a served session; this one is local)");
                    self.draw(vec![line]);
                    return;
                }
            }
            KeyCode::Char('t') if ctrl => {
                self.show_thinking = !self.show_thinking;
                let line = if self.show_thinking {
                    "thinking is shown in full (Ctrl-T collapses it)"
                } else {
                    "thinking is collapsed to one line (Ctrl-T shows it)"
                };
                let line = self.paint.dim(line);
                self.draw(vec![line]);
                return;
            }
            KeyCode::Esc if self.editor.searching().is_none() => {
                if self.run.is_some() {
                    self.interrupt();
                } else {
                    self.editor.offered.clear();
                }
            }
            KeyCode::Tab => self.complete(),
            KeyCode::BackTab => self.cycle_mode().await,
            _ => match self.editor.key(&key) {
                Edit::Submit(text) => {
                    self.quit_armed = None;
                    self.submit(text).await;
                }
                Edit::Changed | Edit::Ignored => {}
            },
        }
        self.draw(Vec::new());
    }

    /// Ctrl-C: clears the input, else interrupts, and a second one within
    /// two seconds quits.
    fn ctrl_c(&mut self) {
        if self.quit_armed.is_some_and(|at| at.elapsed() < Duration::from_secs(2)) {
            self.quit = true;
            return;
        }
        self.quit_armed = Some(Instant::now());
        if !self.editor.is_empty() {
            self.editor.clear();
        } else if self.run.is_some() {
            self.interrupt();
        } else {
            let line = self.paint.dim("(Ctrl-C again to quit)");
            self.draw(vec![line]);
        }
    }

    /// Esc while the model works: the run is suspended (the partial turn
    /// kept, a running command cut off), and the next message continues the
    /// session.
    pub(super) fn interrupt(&mut self) {
        if self.interrupting {
            return;
        }
        self.interrupting = true;
        let link = self.link.clone();
        tokio::spawn(async move {
            link.suspend().await;
        });
    }

    fn answer_key(&mut self, key: KeyEvent) {
        if let Some(reason) = &mut self.reason {
            match key.code {
                KeyCode::Enter => {
                    let why = std::mem::take(reason);
                    self.reason = None;
                    self.answer(Answer::No((!why.trim().is_empty()).then_some(why)), "declined");
                }
                KeyCode::Esc => {
                    self.reason = None;
                    self.answer(Answer::No(None), "declined");
                }
                KeyCode::Backspace => {
                    reason.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => reason.push(c),
                _ => {}
            }
            return;
        }
        match key.code {
            KeyCode::Char('y' | 'Y') => self.answer(Answer::Yes, "allowed"),
            KeyCode::Char('a' | 'A') => self.answer(Answer::Always, "allowed for this session"),
            KeyCode::Char(c @ ('p' | 'P' | 'u' | 'U')) => {
                let project = c.eq_ignore_ascii_case(&'p');
                self.answer(Answer::Save { project }, "allowed and saved");
            }
            KeyCode::Char('n' | 'N') => self.reason = Some(String::new()),
            KeyCode::Esc => self.answer(Answer::No(None), "declined"),
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.answer(Answer::No(None), "declined");
                self.interrupt();
            }
            _ => {}
        }
    }

    fn answer(&mut self, answer: Answer, said: &str) {
        let Some(ask) = self.asks.pop_front() else {
            return;
        };
        let p = self.paint;
        let mark = if matches!(answer, Answer::No(_)) {
            p.hue(Hue::Red, "✗")
        } else {
            p.hue(Hue::Green, "✓")
        };
        let why = match &answer {
            Answer::No(Some(why)) => format!(": {why}"),
            _ => String::new(),
        };
        let line = format!(
            "{mark} {said}{why} · {} {}",
            ask.call.name,
            view::brief(&ask.call.name, &ask.call.input)
        );
        ask.answer(answer);
        self.draw(vec![p.dim(&line)]);
    }

    async fn picker_key(&mut self, key: KeyEvent) {
        let Some(picker) = &mut self.picker else {
            return;
        };
        let (len, at) = match picker {
            Picker::Sessions(list, at) => (list.len(), at),
            Picker::Tasks(list, at) => (list.len(), at),
        };
        match key.code {
            KeyCode::Up => *at = at.saturating_sub(1),
            KeyCode::Down => *at = (*at + 1).min(len.saturating_sub(1)),
            KeyCode::Esc => self.picker = None,
            KeyCode::Enter => match self.picker.take() {
                Some(Picker::Sessions(list, at)) => {
                    if let Some((chosen, _)) = list.into_iter().nth(at) {
                        self.switch_session(chosen.id).await;
                    }
                }
                Some(Picker::Tasks(ids, at)) => {
                    if let Some(id) = ids.get(at) {
                        self.show_task(id);
                    }
                    self.picker = Some(Picker::Tasks(ids, at));
                }
                None => {}
            },
            KeyCode::Char('k') => {
                if let Some(Picker::Tasks(ids, at)) = &self.picker
                    && let Some(id) = ids.get(*at).cloned()
                {
                    self.picker = None;
                    self.kill_task(&id).await;
                }
            }
            _ => {}
        }
    }

    /// Tab: completes a slash command or an `@path`.
    fn complete(&mut self) {
        let (start, word) = self.editor.word();
        let word = word.to_owned();
        let candidates: Vec<String> = if let Some(partial) = word.strip_prefix('@') {
            zidane_app::attach::complete_path(&self.link.cwd(), partial)
                .into_iter()
                .map(|p| format!("@{p}"))
                .collect()
        } else if start == 0 && word.starts_with('/') {
            self.command_names()
                .into_iter()
                .map(|c| format!("/{c}"))
                .filter(|c| c.starts_with(&word))
                .collect()
        } else {
            return;
        };
        match candidates.as_slice() {
            [] => self.editor.offered.clear(),
            [one] => {
                let done = if one.ends_with('/') {
                    one.clone()
                } else {
                    format!("{one} ")
                };
                self.editor.replace_word(&done);
                self.editor.offered.clear();
            }
            many => {
                let prefix = editor::common_prefix(many);
                if prefix.len() > word.len() {
                    self.editor.replace_word(&prefix);
                }
                self.editor.offered = many.iter().take(12).cloned().collect();
            }
        }
    }

    /// A key for an MCP server's form: Enter takes the field (empty: its
    /// default), Esc declines the form, Ctrl-C cancels the operation.
    fn form_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let answer = match key.code {
            KeyCode::Enter => {
                let typed = std::mem::take(&mut self.field);
                let done = self.forms.front_mut().is_some_and(|f| f.take(&typed));
                if !done {
                    return;
                }
                self.forms
                    .front_mut()
                    .map(|f| zidane::mcp::ElicitationAnswer::Accept(std::mem::take(&mut f.answers)))
            }
            KeyCode::Esc => Some(zidane::mcp::ElicitationAnswer::Decline),
            KeyCode::Char('c') if ctrl => Some(zidane::mcp::ElicitationAnswer::Cancel),
            KeyCode::Backspace => {
                self.field.pop();
                None
            }
            KeyCode::Char(c) if !ctrl => {
                self.field.push(c);
                None
            }
            _ => None,
        };
        if let Some(answer) = answer
            && let Some(form) = self.forms.pop_front()
        {
            self.field.clear();
            let said = match &answer {
                zidane::mcp::ElicitationAnswer::Accept(_) => "answered",
                zidane::mcp::ElicitationAnswer::Decline => "declined",
                zidane::mcp::ElicitationAnswer::Cancel => "cancelled",
            };
            let line = self.paint.dim(&format!(
                "{said} · MCP server `{}`: {}",
                form.form.request.server, form.form.request.message
            ));
            form.form.answer(answer);
            self.draw(vec![line]);
        }
    }
}
