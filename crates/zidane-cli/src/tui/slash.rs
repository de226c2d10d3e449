//! The slash commands of the interactive session.

use zidane::agent::SessionStore;
use zidane_app::slash::BUILTINS;

use super::screen::Hue;
use super::{Picker, Session, first_lines};

/// Edit distance, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(row[j + 1])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

impl Session {
    /// The names Tab completes: the built-in commands and the folder's own.
    pub(super) fn command_names(&self) -> Vec<String> {
        let mut names: Vec<String> = BUILTINS.iter().map(|b| b.name.to_owned()).collect();
        names.extend(self.link.custom_commands().into_iter().map(|(name, _)| name));
        names.sort();
        names.dedup();
        names
    }

    pub(super) fn say(&mut self, lines: Vec<String>) {
        self.draw(lines);
    }

    pub(super) fn note(&mut self, line: &str) {
        let line = self.paint.dim(line);
        self.draw(vec![line]);
    }

    pub(super) fn busy(&mut self, what: &str) -> bool {
        if self.run.is_some() {
            self.note(&format!("{what} waits for the run to end (Esc interrupts it)"));
            return true;
        }
        false
    }

    pub(super) async fn command(&mut self, text: String) {
        let mut words = text[1..].splitn(2, char::is_whitespace);
        let name = words.next().unwrap_or_default().to_owned();
        let rest = words.next().unwrap_or_default().trim().to_owned();
        let p = self.paint;
        self.draw(vec![String::new(), p.hue(Hue::Cyan, &format!("› {}", text.trim()))]);
        match name.as_str() {
            "help" | "?" => {
                let mut lines: Vec<String> = BUILTINS
                    .iter()
                    .map(|b| {
                        let hint = b.hint.map(|h| format!("[{h}] ")).unwrap_or_default();
                        format!(
                            "  {} {}",
                            p.bold(&format!("/{}", b.name)),
                            p.dim(&format!("{hint}{}", b.about))
                        )
                    })
                    .collect();
                for (name, about) in self.link.custom_commands() {
                    lines.push(format!("  {} {}", p.bold(&format!("/{name}")), p.dim(&about)));
                }
                lines.push(p.dim(
                    "  Enter sends (while the model works: steers it); Shift-Enter, Alt-Enter or Ctrl-J: a new line; \
                     Esc interrupts; Ctrl-R searches the history; Tab completes /commands and @paths; Shift-Tab cycles ask, auto-edit and plan mode; Ctrl-T shows \
                     thinking; Ctrl-G edits the input in $VISUAL / $EDITOR; Ctrl-Z suspends to the shell (fg returns); Ctrl-D quits (attached: Ctrl-\\ or Ctrl-D detaches, the run goes on)",
                ));
                self.say(lines);
            }
            "quit" | "exit" | "q" => self.quit = true,
            "new" => {
                if !self.busy("/new") {
                    let id = zidane_app::new_session_id();
                    self.switch_session(id).await;
                }
            }
            "resume" => self.resume_picker().await,
            "compact" => self.compact(rest).await,
            "model" => self.model(rest).await,
            "thinking" => self.thinking(&rest).await,
            "context" => self.context_report().await,
            "cost" => self.cost().await,
            "goal" => self.goal(&rest).await,
            "loop" => self.loop_command(&rest).await,
            "skills" => self.skills(&rest).await,
            "tasks" => self.tasks(&rest).await,
            "mcp" => self.mcp(&rest).await,
            "review" => self.review(&rest).await,
            "lsp" => self.lsp().await,
            "approve" => self.approve(&rest).await,
            "plan" => self.plan_command(&rest).await,
            "init" => self.init(),
            "memory" => self.memory_command(&rest),
            "sandbox" => {
                let line = self.link.sandbox_line().await;
                self.note(&line);
            }
            "diff" => self.diff(&rest).await,
            "undo" => self.rewind(None).await,
            "rewind" => match rest.parse::<usize>() {
                Ok(n) => self.rewind(Some(n)).await,
                Err(_) if rest.is_empty() => self.rewind(Some(0)).await,
                Err(_) => self.note("usage: /rewind N (the checkpoint's number; /rewind alone lists them)"),
            },
            other => self.custom(other, &rest).await,
        }
    }

    /// `/goal`: through the conversation here; a served session answers
    /// it as a prompt.
    async fn goal(&mut self, rest: &str) {
        let keyword = matches!(rest, "" | "pause" | "resume" | "clear");
        if !keyword && self.busy("a new goal") {
            return;
        }
        let Some(conversation) = self.link.local().cloned() else {
            self.submit_prompt(format!("/goal {rest}").trim_end().to_owned()).await;
            return;
        };
        match conversation.goal_command(rest).await {
            zidane_app::GoalAction::Say(message) => {
                let lines = message.lines().map(|l| self.paint.dim(l)).collect();
                self.say(lines);
            }
            zidane_app::GoalAction::Run(submission) => self.submit_prompt(submission.text).await,
        }
    }

    async fn custom(&mut self, name: &str, rest: &str) {
        let known = self.link.custom_commands().into_iter().any(|(n, _)| n == name);
        match known {
            true if self.run.is_some() => match self.link.steering_text(&format!("/{name} {rest}")) {
                Ok(prompt) => self.steer(prompt),
                Err(e) => self.note(e.message()),
            },
            // The conversation's pipeline expands it (its model and allowed
            // tools with it).
            true => {
                self.submit_prompt(format!("/{name} {rest}").trim_end().to_owned())
                    .await
            }
            false => {
                let names = self.command_names();
                let closest = names.iter().min_by_key(|n| distance(n, name));
                let hint = closest
                    .filter(|n| distance(n, name) <= 3)
                    .map(|n| format!("; did you mean /{n}?"))
                    .unwrap_or_default();
                let line = self
                    .paint
                    .hue(Hue::Yellow, &format!("no command /{name}{hint} (/help lists them)"));
                self.say(vec![line]);
            }
        }
    }

    /// Ends this session's conversation and opens `id`'s in its place.
    pub(super) async fn switch_session(&mut self, id: String) {
        if self.busy("switching sessions") {
            return;
        }
        let (Some(setup), Some(current)) = (self.setup.clone(), self.link.local().cloned()) else {
            return self.note(super::link::LOCAL_ONLY);
        };
        let opened = if id == current.id() {
            // The same session again (its conversation may have changed
            // under it): what it said and set carries over.
            current.reopen().await
        } else {
            zidane_app::Conversation::open(setup, &id, self.events.clone(), false).await
        };
        let conversation = match opened {
            Ok(conversation) => conversation,
            Err(e) => {
                let line = self.paint.hue(Hue::Red, &format!("✗ {e}"));
                self.say(vec![line]);
                return;
            }
        };
        self.link = super::link::Link::Local(conversation);
        if current.id() == id {
            current.agent().destroy().await;
        } else {
            current.end().await;
            self.totals = Default::default();
        }
        self.tasks.clear();
        let (messages, asked, answered) = self.link.summary().await;
        let mut lines = vec![self.paint.dim(&format!("session {id} · {messages} messages"))];
        // The last exchange, to pick the thread up.
        if let Some(asked) = asked {
            lines.push(self.paint.dim(&format!("  last asked: {}", first_lines(asked.trim()))));
        }
        if let Some(answered) = answered {
            let short: String = answered.trim().chars().take(200).collect();
            lines.push(self.paint.dim(&format!("  last answer: {}", first_lines(&short))));
        }
        self.say(lines);
        self.refresh_context().await;
        if self.link.interrupted().await {
            self.note("this session's last run was interrupted; continuing it");
            self.continue_interrupted();
        }
    }

    async fn resume_picker(&mut self) {
        if self.busy("/resume") {
            return;
        }
        let Some(setup) = self.setup.clone() else {
            return self.note(super::link::LOCAL_ONLY);
        };
        let sessions = match setup.store.list().await {
            Ok(list) => list,
            Err(e) => {
                self.note(&format!("cannot read the sessions: {e}"));
                return;
            }
        };
        let folder = serde_json::Value::from(setup.cwd().to_string_lossy().into_owned());
        let current = self.link.id();
        let mut mine = Vec::new();
        let mut candidates: Vec<_> = sessions
            .into_iter()
            .filter(|s| zidane::agent::is_conversation(&s.id) && s.id != current)
            .collect();
        candidates.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        // This folder's sessions (each records its folder after a run), the
        // most recent first; a session that recorded none is listed too.
        for s in candidates.into_iter().take(200) {
            let (recorded, cost) = match setup.store.load(&s.id).await {
                Ok(Some(session)) => (
                    session.metadata.get(zidane_app::FOLDER_KEY).cloned(),
                    session
                        .turns
                        .iter()
                        .filter_map(|t| t.usage.as_ref().and_then(|u| u.cost))
                        .reduce(|a, b| a + b),
                ),
                _ => (None, None),
            };
            if recorded.is_none_or(|f| f == folder) {
                mine.push((s, cost));
            }
            if mine.len() == 50 {
                break;
            }
        }
        if mine.is_empty() {
            self.note("no other session of this folder to resume");
            return;
        }
        self.picker = Some(Picker::Sessions(mine, 0));
    }
}

#[cfg(test)]
mod tests;
