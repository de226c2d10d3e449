//! What the engine sees of the journal: the [`ReplayRuntime`] its steps go
//! through, the [`ReplayClock`] its ids and jitter come from, and the
//! [`ReplayTracker`] that says when a replay reached new work.

use super::*;

/// Fires `replay:done` once per invocation attempt, when the first step that
/// is not in the journal starts its work (a model stream or a tool body);
/// never when the journal replays to the end.
#[derive(Clone)]
pub struct ReplayTracker {
    hooks: HookBus,
    fired: Arc<AtomicBool>,
}

impl ReplayTracker {
    /// A tracker that emits on `hooks`.
    pub fn new(hooks: HookBus) -> Self {
        ReplayTracker {
            hooks,
            fired: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The invocation went live: the first call emits `replay:done`.
    pub async fn live(&self) {
        if self.fired.swap(true, Ordering::AcqRel) {
            return;
        }
        self.hooks.observe(&mut ReplayDone::new()).await;
    }

    /// Whether `replay:done` fired.
    pub fn went_live(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }
}

/// The runtime an agent runs on inside a Restate handler: each step asks
/// the invocation's driver, which answers it from the journal or lets it
/// run and journals its value.
pub struct ReplayRuntime {
    pub(super) requests: mpsc::UnboundedSender<Request>,
}

impl std::fmt::Debug for ReplayRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayRuntime").finish_non_exhaustive()
    }
}

impl ReplayRuntime {
    async fn ask<T>(&self, request: impl FnOnce(Reply<T>) -> Request) -> Result<T, JournalError> {
        let (reply, answer) = oneshot::channel();
        self.requests.send(request(reply)).map_err(|_| JournalError::Closed)?;
        answer.await.map_err(|_| JournalError::Closed)?
    }

    pub(crate) async fn append(&self, turns: Vec<SessionTurn>) -> Result<(), JournalError> {
        self.ask(|reply| Request::Append { turns, reply }).await
    }

    pub(crate) async fn replace(&self, turns: Vec<SessionTurn>) -> Result<(), JournalError> {
        self.ask(|reply| Request::Replace { turns, reply }).await
    }

    pub(crate) async fn meta(&self, key: String, value: Value) -> Result<(), JournalError> {
        self.ask(|reply| Request::Meta { key, value, reply }).await
    }
}

fn shared(error: JournalError) -> SharedError {
    Arc::new(error)
}

impl DurableRuntime for ReplayRuntime {
    fn mode(&self) -> DurableMode {
        DurableMode::Replay
    }

    fn sync<'a>(&'a self, _run_id: &'a str) -> BoxFuture<'a, Result<(), SharedError>> {
        Box::pin(async move { self.ask(|reply| Request::Sync { reply }).await.map_err(shared) })
    }

    fn step<'a>(
        &'a self,
        step: Step,
        work: BoxFuture<'a, Result<StepValue, SharedError>>,
    ) -> BoxFuture<'a, Result<StepValue, StepError>> {
        Box::pin(async move {
            let key = Key::from(&step.key);
            let unsafe_call = step.key.kind == StepKind::ToolCall && step.durability == Durability::Unsafe;
            let begun = self
                .ask(|reply| Request::Begin {
                    key: key.clone(),
                    unsafe_call,
                    reply,
                })
                .await
                .map_err(|e| StepError::Work(shared(e)))?;
            match begun {
                Begun::Recorded(value) => Ok(*value),
                Begun::Interrupted => Ok(interrupted()),
                Begun::Live => {
                    let value = work.await.map_err(StepError::Work)?;
                    // A value the journal did not take stops the run: going
                    // on would run steps a retry cannot find.
                    let value = self
                        .ask(|reply| Request::Done {
                            key,
                            value: Box::new(value),
                            reply,
                        })
                        .await
                        .map_err(|e| StepError::Work(shared(e)))?;
                    Ok(*value)
                }
            }
        })
    }
}

/// What an unsafe call whose earlier attempt died in it answers.
pub(super) fn interrupted() -> StepValue {
    StepValue::Tool(ToolStep {
        outcome: ToolStepOutcome::Failed(INTERRUPTED_CALL_MESSAGE.to_owned()),
        state: Vec::new(),
        resume_state: serde_json::Map::new(),
    })
}

/// Ids that repeat on every attempt of one invocation (derived from its
/// id), and the wall clock for times. Step keys carry the run id, so a
/// replay must mint the same ids in the same order.
#[derive(Debug)]
pub struct ReplayClock {
    prefix: String,
    next: AtomicU64,
}

impl ReplayClock {
    /// Ids `{invocation_id}-{n}`.
    pub fn new(invocation_id: &str) -> Self {
        ReplayClock {
            prefix: invocation_id.to_owned(),
            next: AtomicU64::new(0),
        }
    }
}

impl Clock for ReplayClock {
    fn now_ms(&self) -> u64 {
        zidane_core::clock::SystemClock::default().now_ms()
    }

    fn id(&self) -> String {
        format!("{}-{}", self.prefix, self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn jitter(&self) -> f64 {
        0.5
    }
}
