//! The agent's skill methods: activate, deactivate, list, and the active
//! skills kept in the session's metadata.

use zidane_core::events::{ActivationVia, DeactivationReason};

use crate::agent::Agent;
use crate::error::AgentError;
use crate::skills::{ACTIVE_KEY, ActiveSkill, SkillDefinition, SkillError, SkillProblem};

impl Agent {
    /// Activates a skill by name (`skills:activate`, `via: explicit`); its
    /// instructions reach the model with the next prompt. Refused when skills
    /// are off, the name is unknown, the policy denies it or `max_active`
    /// skills are active; a no-op for an active skill.
    pub async fn activate_skill(&self, name: &str) -> Result<(), AgentError> {
        self.load_session().await?;
        self.inner.skills.resolve(&self.inner.hooks).await;
        self.inner
            .skills
            .activate(&self.inner.hooks, name, ActivationVia::Explicit)
            .await?;
        self.keep_active_skills().await;
        Ok(())
    }

    /// Deactivates a skill by name (`skills:deactivate`, `reason:
    /// explicit`); the model is told with the next prompt. Refused when
    /// skills are off; a no-op for a skill that is not active.
    pub async fn deactivate_skill(&self, name: &str) -> Result<(), AgentError> {
        if !self.inner.skills.enabled() {
            return Err(SkillError::Off.into());
        }
        self.inner
            .skills
            .deactivate(&self.inner.hooks, name, DeactivationReason::Explicit)
            .await;
        self.keep_active_skills().await;
        Ok(())
    }

    /// The active skills.
    pub fn active_skills(&self) -> Vec<ActiveSkill> {
        self.inner.skills.active()
    }

    /// The `SKILL.md` files that could not be used, and why (after the
    /// skills resolved).
    pub fn skill_problems(&self) -> Vec<SkillProblem> {
        self.inner.skills.problems()
    }

    /// Resolves the skills (once) and returns them.
    pub async fn skills(&self) -> Vec<SkillDefinition> {
        self.inner.skills.resolve(&self.inner.hooks).await
    }

    /// Deactivates every active skill (`reason`).
    pub(crate) async fn deactivate_all_skills(&self, reason: DeactivationReason) {
        for active in self.inner.skills.active() {
            self.inner
                .skills
                .deactivate(&self.inner.hooks, &active.name, reason)
                .await;
        }
    }

    /// Keeps the active skills in the session's metadata when they changed.
    pub(crate) async fn keep_active_skills(&self) {
        if !self.inner.skills.enabled() {
            return;
        }
        let names = self.inner.skills.active_names();
        let kept = self.inner.session.state().as_ref().map(|s| {
            s.metadata
                .get(ACTIVE_KEY)
                .cloned()
                .unwrap_or_else(|| serde_json::json!([]))
        });
        if kept.is_some_and(|kept| kept != names)
            && let Err(e) = self.set_session_meta(ACTIVE_KEY, names).await
        {
            tracing::warn!(target: "zidane", "the active skills could not be kept in the session: {e}");
        }
    }
}
