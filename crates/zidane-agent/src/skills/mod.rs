//! Skills: folders of instructions in the Agent Skills format (a `SKILL.md`
//! with YAML front matter — `name`, `description` — then Markdown, and
//! files beside it) that the model loads when a task calls for one.
//!
//! The model sees a short catalog in the dynamic half of the system prompt
//! (after the boundary, so the cached static half never changes) and loads
//! a skill with the `skill` tool, whose result carries the instructions and
//! the skill's files. The host activates and deactivates skills too; their
//! instructions (or the note that one no longer applies) reach the model as
//! a note on the next prompt. Active skills are kept in the session's
//! metadata (`skills.active`) and come back with it.

use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use zidane_core::events::{
    ActivationVia, DeactivationReason, SkillConfig, SkillsActivate, SkillsActivateInit, SkillsCatalog,
    SkillsCatalogInit, SkillsDeactivate, SkillsDeactivateInit, SkillsResolve, SkillsResolveInit,
};
use zidane_core::tool::{FnTool, ToolOutput};
use zidane_hooks::HookBus;

/// The metadata key active skills are kept under in the session.
pub(crate) const ACTIVE_KEY: &str = "skills.active";

/// The largest `SKILL.md` read (a skill is instructions, not data).
const MAX_SKILL_BYTES: u64 = 256 << 10;

/// `AgentOptions::skills`: where skills come from and what may be active.
#[derive(Debug, Clone, Default)]
pub struct SkillsConfig {
    /// Folders of skill folders (`<folder>/<skill>/SKILL.md`), in
    /// precedence order: for a name found twice, the earlier folder wins.
    pub folders: Vec<PathBuf>,
    /// Skills given by the host; they win over the folders' on a name.
    pub skills: Vec<SkillDefinition>,
    /// What may be active.
    pub policy: SkillPolicy,
}

/// A skill: its name, what it is for, its instructions and where its files
/// are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDefinition {
    /// The name the model and the host use.
    pub name: String,
    /// What it is for (the catalog line).
    pub description: String,
    /// The Markdown instructions (the `SKILL.md` body).
    pub instructions: String,
    /// The skill's folder, when it came from one.
    pub folder: Option<PathBuf>,
}

impl SkillDefinition {
    fn config(&self) -> SkillConfig {
        SkillConfig {
            name: self.name.clone(),
            description: self.description.clone(),
            path: self.folder.as_ref().map(|p| p.display().to_string()),
        }
    }
}

/// Which skills may be active, and how many at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillPolicy {
    /// Only these may be activated (`None`: any).
    pub allow: Option<Vec<String>>,
    /// These may never be activated (and are left out of the catalog).
    pub deny: Vec<String>,
    /// At most this many active at once.
    pub max_active: Option<usize>,
}

impl SkillPolicy {
    fn permits(&self, name: &str) -> bool {
        !self.deny.iter().any(|d| d == name) && self.allow.as_ref().is_none_or(|a| a.iter().any(|n| n == name))
    }
}

/// An active skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveSkill {
    /// Its name.
    pub name: String,
    /// What activated it.
    pub via: ActivationVia,
}

/// A `SKILL.md` that could not be used: which file, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillProblem {
    /// The file.
    pub path: PathBuf,
    /// What is wrong (naming the field).
    pub message: String,
}

impl std::fmt::Display for SkillProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// Why a skill could not be activated or deactivated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The agent has no `skills` configuration.
    #[error("skills are off for this agent")]
    Off,
    /// No resolved skill has this name.
    #[error("there is no skill `{0}`")]
    Unknown(String),
    /// The policy does not allow it.
    #[error("the skill `{0}` is not allowed here")]
    Denied(String),
    /// `max_active` skills are active already.
    #[error("{0} skills are active already, the most allowed; deactivate one first")]
    Full(usize),
}

/// Reads the skills of `folders`, in order (for a name found twice, the
/// first wins and the other is a problem); problems are returned beside the
/// skills, never as a failure.
pub fn load_skill_folders(folders: &[PathBuf]) -> (Vec<SkillDefinition>, Vec<SkillProblem>) {
    let (found, mut problems) = read_skill_folders(folders);
    let skills = first_of_each_name(Vec::new(), found, &mut problems);
    (skills, problems)
}

/// `taken` followed by those of `more` whose name is still free; the others
/// are reported.
fn first_of_each_name(
    taken: Vec<SkillDefinition>,
    more: Vec<SkillDefinition>,
    problems: &mut Vec<SkillProblem>,
) -> Vec<SkillDefinition> {
    let mut seen: BTreeSet<String> = taken.iter().map(|s| s.name.clone()).collect();
    let mut skills = taken;
    for skill in more {
        if seen.insert(skill.name.clone()) {
            skills.push(skill);
        } else if let Some(folder) = &skill.folder {
            problems.push(SkillProblem {
                path: folder.join("SKILL.md"),
                message: format!(
                    "`name` `{}` is taken by a skill found earlier; this one is left out",
                    skill.name
                ),
            });
        }
    }
    skills
}

fn read_skill_folders(folders: &[PathBuf]) -> (Vec<SkillDefinition>, Vec<SkillProblem>) {
    let mut skills = Vec::new();
    let mut problems = Vec::new();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(folder) else {
            continue; // a folder that does not exist has no skills
        };
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("SKILL.md").is_file())
            .collect();
        dirs.sort();
        for dir in dirs {
            let file = dir.join("SKILL.md");
            match parse_skill_file(&file) {
                Ok(mut skill) => {
                    skill.folder = Some(dir);
                    skills.push(skill);
                }
                Err(message) => problems.push(SkillProblem { path: file, message }),
            }
        }
    }
    (skills, problems)
}

fn parse_skill_file(file: &Path) -> Result<SkillDefinition, String> {
    let size = std::fs::metadata(file).map_err(|e| e.to_string())?.len();
    if size > MAX_SKILL_BYTES {
        return Err(format!(
            "{size} bytes, more than the {MAX_SKILL_BYTES} a SKILL.md may have"
        ));
    }
    let bytes = std::fs::read(file).map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())?;
    parse_skill(&text)
}

/// Parses a `SKILL.md`: `---` front matter (YAML) with `name` and
/// `description`, then the instructions.
pub fn parse_skill(text: &str) -> Result<SkillDefinition, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---")
        .and_then(|r| r.strip_prefix('\n').or_else(|| r.strip_prefix("\r\n")))
        .ok_or("no front matter: the file must start with a `---` line")?;
    let (front, body) = match rest.find("\n---") {
        Some(end) => {
            let after = &rest[end + 4..];
            let body = after.split_once('\n').map_or("", |(_, b)| b);
            (&rest[..end], body)
        }
        None => return Err("the front matter has no closing `---` line".into()),
    };
    let docs = yaml_rust2::YamlLoader::load_from_str(front).map_err(|e| format!("front matter: {e}"))?;
    let Some(yaml_rust2::Yaml::Hash(map)) = docs.first() else {
        return Err("front matter: expected `key: value` lines".into());
    };
    let field = |key: &str| -> Result<String, String> {
        match map.get(&yaml_rust2::Yaml::String(key.to_owned())) {
            Some(yaml_rust2::Yaml::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
            Some(yaml_rust2::Yaml::String(_)) | None => Err(format!("front matter: `{key}` is missing")),
            Some(_) => Err(format!("front matter: `{key}` must be text")),
        }
    };
    let name = field("name")?;
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(format!(
            "front matter: `name` `{name}` may hold only letters, digits, `-` and `_`"
        ));
    }
    let description = field("description")?;
    Ok(SkillDefinition {
        name,
        description,
        instructions: body.trim().to_owned(),
        folder: None,
    })
}

/// The agent's skills: the configuration, what resolved, what is active.
pub(crate) struct Skills {
    config: Option<SkillsConfig>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    resolved: Option<Vec<SkillDefinition>>,
    problems: Vec<SkillProblem>,
    active: Vec<ActiveSkill>,
    /// Notes for the model about host activations, sent with the next prompt.
    notes: Vec<String>,
}

impl Skills {
    pub(crate) fn new(config: Option<SkillsConfig>) -> Arc<Self> {
        Arc::new(Skills {
            config,
            state: Mutex::default(),
        })
    }

    pub(crate) fn enabled(&self) -> bool {
        self.config.is_some()
    }

    /// Resolves the skills once (`skills:resolve`); later calls return the
    /// same list.
    pub(crate) async fn resolve(&self, hooks: &HookBus) -> Vec<SkillDefinition> {
        let Some(config) = &self.config else {
            return Vec::new();
        };
        if let Some(done) = self.state.lock().resolved.clone() {
            return done;
        }
        let folders = config.folders.clone();
        let (from_folders, mut problems) = tokio::task::spawn_blocking(move || load_skill_folders(&folders))
            .await
            .unwrap_or_default();
        // Host skills first, then folders in order: the first of a name wins.
        let skills = first_of_each_name(config.skills.clone(), from_folders, &mut problems);
        {
            let mut state = self.state.lock();
            if let Some(done) = state.resolved.clone() {
                return done; // a concurrent caller got there first
            }
            state.resolved = Some(skills.clone());
            state.problems = problems;
        }
        let mut ev = SkillsResolve::new(SkillsResolveInit {
            skills: skills.iter().map(SkillDefinition::config).collect(),
        });
        hooks.observe(&mut ev).await;
        skills
    }

    pub(crate) fn problems(&self) -> Vec<SkillProblem> {
        self.state.lock().problems.clone()
    }

    pub(crate) fn active(&self) -> Vec<ActiveSkill> {
        self.state.lock().active.clone()
    }

    /// The catalog for the system prompt's dynamic half, and the skills it
    /// lists (`None` without skills).
    pub(crate) fn catalog(&self) -> Option<(String, Vec<SkillConfig>)> {
        let config = self.config.as_ref()?;
        let state = self.state.lock();
        let skills: Vec<&SkillDefinition> = state
            .resolved
            .as_ref()?
            .iter()
            .filter(|s| config.policy.permits(&s.name))
            .collect();
        if skills.is_empty() {
            return None;
        }
        let mut text = String::from(
            "<skills>\nSkills hold instructions for particular tasks. When a task matches one, load it with the `skill` tool before you start.\n",
        );
        for skill in &skills {
            let active = state.active.iter().any(|a| a.name == skill.name);
            text.push_str(&format!(
                "- {}{}: {}\n",
                skill.name,
                if active { " (active)" } else { "" },
                skill.description
            ));
        }
        text.push_str("</skills>");
        Some((text, skills.iter().map(|s| s.config()).collect()))
    }

    /// Emits `skills:catalog` for a catalog about to be sent.
    pub(crate) async fn announce(&self, hooks: &HookBus, catalog: &str, skills: Vec<SkillConfig>) {
        let mut ev = SkillsCatalog::new(SkillsCatalogInit {
            catalog: catalog.to_owned(),
            skills,
        });
        hooks.observe(&mut ev).await;
    }

    fn find(&self, name: &str) -> Result<SkillDefinition, SkillError> {
        let config = self.config.as_ref().ok_or(SkillError::Off)?;
        let state = self.state.lock();
        let skill = state
            .resolved
            .as_ref()
            .and_then(|r| r.iter().find(|s| s.name == name))
            .cloned()
            .ok_or_else(|| SkillError::Unknown(name.to_owned()))?;
        if !config.policy.permits(name) {
            return Err(SkillError::Denied(name.to_owned()));
        }
        Ok(skill)
    }

    /// Activates `name`; `Ok(None)` when it was active already.
    pub(crate) async fn activate(
        &self,
        hooks: &HookBus,
        name: &str,
        via: ActivationVia,
    ) -> Result<Option<SkillDefinition>, SkillError> {
        let skill = self.find(name)?;
        {
            let mut state = self.state.lock();
            if state.active.iter().any(|a| a.name == name) {
                return Ok(None);
            }
            if let Some(max) = self.config.as_ref().and_then(|c| c.policy.max_active)
                && state.active.len() >= max
            {
                return Err(SkillError::Full(max));
            }
            state.active.push(ActiveSkill {
                name: name.to_owned(),
                via,
            });
            if via != ActivationVia::Model {
                state.notes.push(instructions_note(&skill));
            }
        }
        let mut ev = SkillsActivate::new(SkillsActivateInit {
            skill: skill.config(),
            via,
        });
        hooks.observe(&mut ev).await;
        Ok(Some(skill))
    }

    /// Deactivates `name`; `false` when it was not active.
    pub(crate) async fn deactivate(&self, hooks: &HookBus, name: &str, reason: DeactivationReason) -> bool {
        let skill = {
            let mut state = self.state.lock();
            let Some(at) = state.active.iter().position(|a| a.name == name) else {
                return false;
            };
            state.active.remove(at);
            let skill = state
                .resolved
                .as_ref()
                .and_then(|r| r.iter().find(|s| s.name == name))
                .cloned();
            if reason != DeactivationReason::Reset {
                state.notes.push(format!(
                    "The skill `{name}` is no longer active: its instructions no longer apply."
                ));
            }
            skill
        };
        let config = skill.map_or_else(
            || SkillConfig {
                name: name.to_owned(),
                description: String::new(),
                path: None,
            },
            |s| s.config(),
        );
        let mut ev = SkillsDeactivate::new(SkillsDeactivateInit { reason, skill: config });
        hooks.observe(&mut ev).await;
        true
    }

    /// Restores active skills from the session (no hook: nothing changed).
    pub(crate) fn restore(&self, names: &[String]) {
        let mut state = self.state.lock();
        state.active = names
            .iter()
            .map(|n| ActiveSkill {
                name: n.clone(),
                via: ActivationVia::Explicit,
            })
            .collect();
    }

    /// Active names, for the session's metadata.
    pub(crate) fn active_names(&self) -> Value {
        json!(
            self.state
                .lock()
                .active
                .iter()
                .map(|a| a.name.clone())
                .collect::<Vec<_>>()
        )
    }

    /// The notes for the model the host's changes left, taken.
    pub(crate) fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut self.state.lock().notes)
    }

    /// Text of the catalog and the active skills' instructions (the
    /// context breakdown's skills bucket).
    pub(crate) fn context_text(&self) -> String {
        let mut text = self.catalog().map(|(c, _)| c).unwrap_or_default();
        let state = self.state.lock();
        for active in &state.active {
            if let Some(skill) = state
                .resolved
                .as_ref()
                .and_then(|r| r.iter().find(|s| s.name == active.name))
            {
                text.push_str(&skill.instructions);
            }
        }
        text
    }
}

fn instructions_note(skill: &SkillDefinition) -> String {
    format!("The skill `{}` is now active. {}", skill.name, loaded_text(skill))
}

/// What the model reads when a skill loads: its instructions and files.
fn loaded_text(skill: &SkillDefinition) -> String {
    let mut text = format!(
        "Instructions of the skill `{}`:\n\n{}\n",
        skill.name, skill.instructions
    );
    if let Some(folder) = &skill.folder {
        let mut files = Vec::new();
        list_files(folder, folder, &mut files, 0);
        files.sort();
        if !files.is_empty() {
            text.push_str(&format!(
                "\nIts files (in {}; read them with the file tools when the instructions refer to them):\n",
                folder.display()
            ));
            for f in files.iter().take(200) {
                text.push_str(&format!("- {f}\n"));
            }
        }
    }
    text
}

fn list_files(root: &Path, dir: &Path, out: &mut Vec<String>, depth: usize) {
    if depth > 4 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            list_files(root, &path, out, depth + 1);
        } else if kind.is_file()
            && path.file_name().is_some_and(|n| n != "SKILL.md")
            && let Ok(rel) = path.strip_prefix(root)
        {
            out.push(rel.display().to_string());
        }
    }
}

/// The `skill` tool: the model loads a skill by name.
pub(crate) fn skill_tool(skills: Arc<Skills>, hooks: HookBus) -> FnTool {
    FnTool::new(
        "skill",
        "Load a skill listed under <skills> in the system prompt: returns its instructions and its files. Load one \
         before a task it covers.",
        json!({
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The skill's name, as the catalog lists it."}},
            "required": ["name"]
        }),
        move |input, _cx| {
            let (skills, hooks) = (Arc::clone(&skills), hooks.clone());
            async move {
                let name = input["name"].as_str().unwrap_or_default().to_owned();
                match skills.activate(&hooks, &name, ActivationVia::Model).await {
                    Ok(Some(skill)) => Ok(ToolOutput::text(loaded_text(&skill))),
                    Ok(None) => {
                        let skill = skills
                            .find(&name)
                            .map_err(|e| Box::new(e) as zidane_core::tool::ToolFailure)?;
                        Ok(ToolOutput::text(format!(
                            "The skill `{name}` is active already.\n\n{}",
                            loaded_text(&skill)
                        )))
                    }
                    Err(e) => Ok(ToolOutput::error(e.to_string())),
                }
            }
        },
    )
}
