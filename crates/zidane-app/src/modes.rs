//! The modes a person chooses between: what runs without asking, how
//! commands are confined, how much the model thinks.

use serde::Deserialize;
use zidane::providers::ThinkingLevel;

/// What the program asks before doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Approve {
    /// Before commands, MCP tools and file writes.
    #[default]
    Ask,
    /// File writes in the working folder go through; commands and MCP
    /// tools ask.
    AutoEdit,
    /// Nothing asks.
    Yolo,
}

impl Approve {
    /// Its name on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            Approve::Ask => "ask",
            Approve::AutoEdit => "auto-edit",
            Approve::Yolo => "yolo",
        }
    }

    /// The mode by its name.
    pub fn from_name(name: &str) -> Option<Approve> {
        [Approve::Ask, Approve::AutoEdit, Approve::Yolo]
            .into_iter()
            .find(|a| a.name() == name)
    }
}

/// How commands are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxFlag {
    /// Unconfined.
    Off,
    /// Writes only in the working folder and the temporary folder.
    WorkspaceWrite,
    /// No writes.
    ReadOnly,
}

impl SandboxFlag {
    /// Its name on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            SandboxFlag::Off => "off",
            SandboxFlag::WorkspaceWrite => "workspace-write",
            SandboxFlag::ReadOnly => "read-only",
        }
    }
}

/// Extended thinking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Thinking {
    /// None.
    #[default]
    Off,
    /// The least.
    Minimal,
    /// A little.
    Low,
    /// Some.
    Medium,
    /// The most.
    High,
}

impl Thinking {
    /// Its name on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            Thinking::Off => "off",
            Thinking::Minimal => "minimal",
            Thinking::Low => "low",
            Thinking::Medium => "medium",
            Thinking::High => "high",
        }
    }
}

impl From<Thinking> for ThinkingLevel {
    fn from(t: Thinking) -> Self {
        match t {
            Thinking::Off => ThinkingLevel::Off,
            Thinking::Minimal => ThinkingLevel::Minimal,
            Thinking::Low => ThinkingLevel::Low,
            Thinking::Medium => ThinkingLevel::Medium,
            Thinking::High => ThinkingLevel::High,
        }
    }
}
