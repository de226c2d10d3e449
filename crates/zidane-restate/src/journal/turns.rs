//! A run's turns in the journal: written as references to the step
//! values already journaled (a tool result, a model's answer), and made
//! whole again on a replay.

use super::*;

impl Driver {
    /// `turns` as a `Turns` entry holds them: a model's answer whose
    /// content a model step journaled refers to that step, and a tool
    /// result that is a journaled tool step's output refers to that step.
    pub(super) fn journal_turns(&self, turns: &[SessionTurn]) -> Vec<JournalTurn> {
        turns
            .iter()
            .map(|turn| {
                if let Some(results) = self.journal_results(turn) {
                    return JournalTurn::Results(results);
                }
                let answered = (turn.role == zidane_provider::Role::Assistant)
                    .then(|| {
                        self.answer_candidates()
                            .into_iter()
                            .rev()
                            .find(|(_, content)| **content == *turn.content)
                    })
                    .flatten();
                match answered {
                    Some((key, _)) => JournalTurn::Answer(AnswerTurn {
                        id: turn.id.clone(),
                        role: turn.role,
                        content_of: (*key).clone(),
                        created_at: turn.created_at,
                        usage: turn.usage.clone(),
                    }),
                    None => JournalTurn::Whole(turn.clone()),
                }
            })
            .collect()
    }

    /// The values held now, in the order they will be journaled (in front
    /// of the next entry, and applied before it).
    pub(super) fn held_values(&self) -> impl Iterator<Item = (&Key, &StepValue)> {
        self.held.iter().filter_map(|entry| match entry {
            Entry::Done { key, value } => Some((key, &**value)),
            _ => None,
        })
    }

    /// The model steps' contents an entry written now may refer to: those
    /// the driver keeps, then the held ones, as many as it keeps once the
    /// entry is applied.
    pub(super) fn answer_candidates(&self) -> Vec<(&Key, &[zidane_provider::ContentBlock])> {
        let kept = self.answers.iter().map(|(key, content)| (key, &content[..]));
        let held = self.held_values().filter_map(|(key, value)| match value {
            StepValue::Model(message) => Some((key, &message.content[..])),
            _ => None,
        });
        last(kept.chain(held).collect(), ANSWERS_KEPT)
    }

    /// The tool steps' outputs an entry written now may refer to, as for
    /// [`answer_candidates`](Self::answer_candidates).
    pub(super) fn result_candidates(&self) -> Vec<(&Key, &zidane_core::ToolOutput)> {
        let kept = self.results.iter().map(|(key, output)| (key, output));
        let held = self.held_values().filter_map(|(key, value)| match value {
            StepValue::Tool(ToolStep {
                outcome: ToolStepOutcome::Output(output),
                ..
            }) => Some((key, output)),
            _ => None,
        });
        last(kept.chain(held).collect(), RESULTS_KEPT)
    }

    /// A turn of tool results with each result that is a journaled tool
    /// step's output referring to that step (`None`: not such a turn, or
    /// none of its results is).
    pub(super) fn journal_results(&self, turn: &SessionTurn) -> Option<ResultsTurn> {
        if turn.role != zidane_provider::Role::User {
            return None;
        }
        let candidates = self.result_candidates();
        let mut referred = false;
        let mut results = Vec::with_capacity(turn.content.len());
        for block in turn.content.iter() {
            let zidane_provider::ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } = block
            else {
                return None;
            };
            let step = candidates.iter().rev().find(|(key, output)| {
                key.name == *tool_use_id && output.content == *content && output.is_error == *is_error
            });
            results.push(match step {
                Some((key, _)) => {
                    referred = true;
                    JournalBlock::Output {
                        tool_use_id: tool_use_id.clone(),
                        output_of: (*key).clone(),
                    }
                }
                None => JournalBlock::Whole(block.clone()),
            });
        }
        referred.then(|| ResultsTurn {
            id: turn.id.clone(),
            role: turn.role,
            results,
            created_at: turn.created_at,
            usage: turn.usage.clone(),
        })
    }

    /// The whole turn a `Turns` entry holds (`None`: it refers to a step
    /// this attempt has not read).
    pub(super) fn whole(&self, turn: JournalTurn) -> Option<SessionTurn> {
        match turn {
            JournalTurn::Whole(turn) => Some(turn),
            JournalTurn::Results(ResultsTurn {
                id,
                role,
                results,
                created_at,
                usage,
            }) => {
                let mut content = Vec::with_capacity(results.len());
                for block in results {
                    content.push(match block {
                        JournalBlock::Whole(block) => block,
                        JournalBlock::Output { tool_use_id, output_of } => {
                            let (_, output) = self.results.iter().rev().find(|(key, _)| *key == output_of)?;
                            zidane_provider::ContentBlock::ToolResult {
                                tool_use_id,
                                content: output.content.clone(),
                                is_error: output.is_error,
                            }
                        }
                    });
                }
                Some(SessionTurn {
                    id,
                    role,
                    content: content.into(),
                    created_at,
                    usage,
                })
            }
            JournalTurn::Answer(AnswerTurn {
                id,
                role,
                content_of,
                created_at,
                usage,
            }) => {
                let (_, content) = self.answers.iter().rev().find(|(key, _)| *key == content_of)?;
                Some(SessionTurn {
                    id,
                    role,
                    content: content.clone(),
                    created_at,
                    usage,
                })
            }
        }
    }
}
