//! Skills: resolution from folders, the catalog in the system prompt's
//! dynamic half, activation by the model (the `skill` tool), by the host
//! and under a policy.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use zidane_agent::{
    AgentError, AgentOptions, AgentRunOptions, SkillDefinition, SkillError, SkillPolicy, SkillsConfig, create_agent,
    load_skill_folders,
};
use zidane_core::events::{DeactivationReason, SkillsDeactivate};
use zidane_core::session::MemoryStore;
use zidane_provider::scripted::Script;
use zidane_provider::{ContentBlock, SYSTEM_PROMPT_BOUNDARY, ToolResultContent};

use crate::support::{options, provider, record};

fn write(dir: &Path, rel: &str, text: &[u8]) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A skills folder: two valid skills, and one of each kind of problem.
fn skills_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "release/SKILL.md",
        b"---\nname: release\ndescription: Cut a release of this project\n---\n# Releasing\n\n1. Read CHECKLIST.md.\n2. Tag it.\n",
    );
    write(root, "release/CHECKLIST.md", b"- bump the version\n");
    write(
        root,
        "review/SKILL.md",
        b"---\nname: review\ndescription: \"Review a change: tests, naming, docs\"\n---\nLook at the tests first.\n",
    );
    write(
        root,
        "broken/SKILL.md",
        b"---\nname: [unclosed\ndescription: x\n---\nbody\n",
    );
    write(root, "nodesc/SKILL.md", b"---\nname: nodesc\n---\nbody\n");
    write(
        root,
        "binary/SKILL.md",
        b"---\nname: binary\ndescription: \xff\xfe bad\n---\n",
    );
    dir
}

#[test]
fn folders_resolve_to_skills_and_each_bad_file_is_named_with_its_field() {
    let dir = skills_folder();
    let (skills, problems) = load_skill_folders(&[dir.path().to_path_buf()]);
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["release", "review"]);
    assert_eq!(skills[1].description, "Review a change: tests, naming, docs");
    assert_eq!(
        skills[0].instructions,
        "# Releasing\n\n1. Read CHECKLIST.md.\n2. Tag it."
    );
    let shown: Vec<String> = problems
        .iter()
        .map(|p| {
            format!(
                "{}: {}",
                p.path.parent().unwrap().file_name().unwrap().to_string_lossy(),
                p.message.split(" at ").next().unwrap()
            )
        })
        .collect();
    assert_eq!(shown.len(), 3, "{shown:?}");
    assert!(shown.contains(&"binary: not UTF-8 text".to_owned()), "{shown:?}");
    assert!(
        shown.contains(&"nodesc: front matter: `description` is missing".to_owned()),
        "{shown:?}"
    );
    assert!(
        shown.iter().any(|s| s.starts_with("broken: front matter:")),
        "{shown:?}"
    );
}

fn config(dir: &Path) -> SkillsConfig {
    SkillsConfig {
        folders: vec![dir.to_path_buf()],
        ..Default::default()
    }
}

#[tokio::test]
async fn the_model_loads_a_skill_and_reads_a_file_it_names_while_the_static_half_stays_put() {
    let dir = skills_folder();
    let checklist = dir.path().join("release/CHECKLIST.md").display().to_string();
    let p = provider(vec![
        Script::call("c1", "skill", json!({"name": "release"})),
        Script::call("c2", "echo", json!({"text": checklist})),
        Script::answer("released"),
        Script::answer("second run"),
    ]);
    let agent = create_agent(AgentOptions {
        system: Some(format!(
            "You help with releases.{SYSTEM_PROMPT_BOUNDARY}Today is Tuesday."
        )),
        skills: Some(config(dir.path())),
        session_id: Some("s".into()),
        store: Some(Arc::new(MemoryStore::new())),
        ..options(&p)
    })
    .unwrap();
    let log = record(&agent);
    agent.run(AgentRunOptions::prompt("Cut the release.")).await.unwrap();
    agent.run(AgentRunOptions::prompt("Thanks.")).await.unwrap();

    let requests = p.requests();
    let system = requests[0].system.clone().unwrap();
    assert_eq!(
        system,
        format!(
            "You help with releases.{SYSTEM_PROMPT_BOUNDARY}Today is Tuesday.\n\n<skills>\nSkills hold instructions for particular tasks. When a task matches one, load it with the `skill` tool before you start.\n- release: Cut a release of this project\n- review: Review a change: tests, naming, docs\n</skills>"
        )
    );
    let ContentBlock::ToolResult {
        content: ToolResultContent::Text(loaded),
        is_error: false,
        ..
    } = &requests[1].messages[2].content()[0]
    else {
        panic!("a tool result");
    };
    assert_eq!(
        loaded,
        &format!(
            "Instructions of the skill `release`:\n\n# Releasing\n\n1. Read CHECKLIST.md.\n2. Tag it.\n\nIts files (in {}; read them with the file tools when the instructions refer to them):\n- CHECKLIST.md\n",
            dir.path().join("release").display()
        )
    );
    // The next run's catalog marks the skill active; the static half and
    // the tool list are the same bytes.
    let later = requests[3].system.clone().unwrap();
    let static_half = |s: &str| s.split(SYSTEM_PROMPT_BOUNDARY).next().unwrap().to_owned();
    assert_eq!(static_half(&later), static_half(&system));
    assert!(later.contains("- release (active): Cut a release of this project"));
    assert_eq!(requests[3].tools, requests[0].tools);
    assert_eq!(
        agent
            .active_skills()
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>(),
        vec!["release"]
    );
    assert_eq!(agent.session().unwrap().metadata["skills.active"], json!(["release"]));
    let skill_hooks: Vec<&str> = log
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|n| n.starts_with("skills:"))
        .collect();
    insta::assert_debug_snapshot!(skill_hooks);
}

#[tokio::test]
async fn the_cache_diff_names_only_the_skills_section_after_an_activation() {
    use zidane_cache_telemetry::{diff_cache_dimensions, snapshot_cache_dimensions};
    let dir = skills_folder();
    let p = provider(vec![
        Script::call("c1", "skill", json!({"name": "review"})),
        Script::answer("ok"),
        Script::answer("again"),
    ]);
    let agent = create_agent(AgentOptions {
        system: Some("Static rules.".into()),
        skills: Some(config(dir.path())),
        ..options(&p)
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("Review it.")).await.unwrap();
    agent.run(AgentRunOptions::prompt("Again.")).await.unwrap();
    let requests = p.requests();
    let before = snapshot_cache_dimensions(&requests[1], None);
    let after = snapshot_cache_dimensions(&requests[2], None);
    let diff = diff_cache_dimensions(&before, &after);
    assert_eq!(
        diff.system_sections,
        Some(vec![zidane_core::events::CacheSystemSection::SkillsCatalog]),
        "{diff:?}"
    );
    assert!(
        !diff.changed.iter().any(|d| format!("{d:?}").contains("Tools")),
        "{diff:?}"
    );
}

#[tokio::test]
async fn host_activation_policies_and_reset() {
    let dir = skills_folder();
    let p = provider(vec![Script::answer("ok"), Script::answer("ok")]);
    let agent = create_agent(AgentOptions {
        skills: Some(SkillsConfig {
            folders: vec![dir.path().to_path_buf()],
            skills: vec![SkillDefinition {
                name: "inline".into(),
                description: "A skill the host gave".into(),
                instructions: "Answer in haiku.".into(),
                folder: None,
            }],
            policy: SkillPolicy {
                deny: vec!["review".into()],
                max_active: Some(2),
                ..Default::default()
            },
        }),
        ..options(&p)
    })
    .unwrap();
    let deactivated: Arc<std::sync::Mutex<Vec<DeactivationReason>>> = Arc::default();
    let d = Arc::clone(&deactivated);
    agent.hooks().on_sync::<SkillsDeactivate, _>(move |ev, _| {
        d.lock().unwrap().push(ev.reason());
        Ok(())
    });
    assert!(matches!(
        agent.activate_skill("nope").await,
        Err(AgentError::Skill(SkillError::Unknown(_)))
    ));
    assert!(matches!(
        agent.activate_skill("review").await,
        Err(AgentError::Skill(SkillError::Denied(_)))
    ));
    agent.activate_skill("inline").await.unwrap();
    agent.activate_skill("inline").await.unwrap(); // a no-op
    agent.activate_skill("release").await.unwrap();
    assert!(matches!(
        agent.activate_skill("binary").await,
        Err(AgentError::Skill(SkillError::Unknown(_)))
    ));
    agent.run(AgentRunOptions::prompt("Go.")).await.unwrap();
    let first = &p.requests()[0];
    let prompt: Vec<String> = first.messages[0]
        .content()
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.clone(),
            _ => String::new(),
        })
        .collect();
    assert_eq!(prompt[0], "Go.");
    assert!(
        prompt[1]
            .starts_with("The skill `inline` is now active. Instructions of the skill `inline`:\n\nAnswer in haiku.")
    );
    assert!(prompt[2].starts_with("The skill `release` is now active."));
    assert!(
        !first.system.clone().unwrap_or_default().contains("review"),
        "a denied skill is not listed"
    );

    agent.deactivate_skill("inline").await.unwrap();
    agent.run(AgentRunOptions::prompt("Next.")).await.unwrap();
    let second = &p.requests()[1];
    assert!(second.messages.last().unwrap().content().iter().any(
        |b| matches!(b, ContentBlock::Text { text } if text == "The skill `inline` is no longer active: its instructions no longer apply.")
    ));
    agent.reset().await.unwrap();
    assert!(agent.active_skills().is_empty());
    assert_eq!(
        *deactivated.lock().unwrap(),
        vec![DeactivationReason::Explicit, DeactivationReason::Reset]
    );
    let off = create_agent(options(&p)).unwrap();
    assert!(matches!(
        off.activate_skill("release").await,
        Err(AgentError::Skill(SkillError::Off))
    ));
}

#[tokio::test]
async fn the_context_breakdown_counts_skills_before_the_first_run() {
    let dir = skills_folder();
    let p = provider(vec![]);
    let agent = create_agent(AgentOptions {
        skills: Some(config(dir.path())),
        ..options(&p)
    })
    .unwrap();
    let breakdown = agent
        .get_context_breakdown(&zidane_agent::ContextOptions::default())
        .await
        .unwrap();
    let skills = breakdown.categories.iter().find(|c| c.name == "skills").unwrap();
    assert!(skills.tokens > 20, "the catalog is counted: {}", skills.tokens);
    assert_eq!(agent.skill_problems().len(), 3);
}

#[tokio::test]
async fn active_skills_come_back_with_the_session() {
    let dir = skills_folder();
    let store = Arc::new(MemoryStore::new());
    let p = provider(vec![Script::answer("ok"), Script::answer("ok")]);
    let make = || {
        create_agent(AgentOptions {
            skills: Some(config(dir.path())),
            session_id: Some("kept".into()),
            store: Some(store.clone()),
            ..options(&p)
        })
        .unwrap()
    };
    let first = make();
    first.activate_skill("review").await.unwrap();
    first.run(AgentRunOptions::prompt("Go.")).await.unwrap();
    let second = make();
    second.run(AgentRunOptions::prompt("Again.")).await.unwrap();
    assert_eq!(
        second
            .active_skills()
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>(),
        vec!["review"]
    );
    assert!(p.requests()[1].system.clone().unwrap().contains("- review (active):"));
}

#[tokio::test]
async fn a_duplicate_name_keeps_the_first_and_names_the_other() {
    let first = skills_folder();
    let second = tempfile::tempdir().unwrap();
    write(
        second.path(),
        "release/SKILL.md",
        b"---\nname: release\ndescription: Another release skill\n---\nOther steps.\n",
    );
    let p = provider(vec![]);
    let agent = create_agent(AgentOptions {
        skills: Some(SkillsConfig {
            folders: vec![first.path().to_path_buf(), second.path().to_path_buf()],
            skills: vec![SkillDefinition {
                name: "review".into(),
                description: "The host's review".into(),
                instructions: "Host steps.".into(),
                folder: None,
            }],
            ..Default::default()
        }),
        ..options(&p)
    })
    .unwrap();
    let skills = agent.skills().await;
    let found: Vec<(&str, &str)> = skills
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![
            ("review", "The host's review"),
            ("release", "Cut a release of this project")
        ],
        "host skills first, then folders in order; the first of a name wins"
    );
    let problems = agent.skill_problems();
    let duplicates = problems.iter().filter(|p| p.message.contains("is taken")).count();
    assert_eq!(
        duplicates, 2,
        "the folder's `review` and the second `release`: {problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.path == second.path().join("release/SKILL.md") && p.message.contains("`release` is taken"))
    );
}

#[tokio::test]
async fn an_allow_list_offers_only_the_skills_it_names() {
    let dir = skills_folder();
    let p = provider(vec![
        Script::call("c1", "skill", json!({"name": "review"})),
        Script::answer("ok"),
    ]);
    let agent = create_agent(AgentOptions {
        skills: Some(SkillsConfig {
            folders: vec![dir.path().to_path_buf()],
            policy: SkillPolicy {
                allow: Some(vec!["release".into()]),
                ..Default::default()
            },
            ..Default::default()
        }),
        ..options(&p)
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("Review.")).await.unwrap();
    let requests = p.requests();
    let system = requests[0].system.clone().unwrap();
    assert!(
        system.contains("- release:") && !system.contains("- review:"),
        "{system}"
    );
    assert_eq!(
        requests[1].messages[2].content()[0],
        ContentBlock::ToolResult {
            tool_use_id: "c1".into(),
            content: ToolResultContent::Text("the skill `review` is not allowed here".into()),
            is_error: true,
        }
    );
    assert!(agent.active_skills().is_empty());
}
