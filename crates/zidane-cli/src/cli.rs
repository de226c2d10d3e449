//! The command line: a run's options and the sub-commands, parsed once.
//!
//! `zidane [OPTIONS] [PROMPT]...` runs a prompt (or opens the interactive
//! session); a first word that names a sub-command is the sub-command.
//! `zidane -- config` sends the word as a prompt, and so does
//! `zidane -p config`: with `-p`, the words are always the prompt. The
//! operations that were flags (`--list-sessions`, `--undo`, …) are kept as
//! hidden aliases of their sub-commands.

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};
use zidane_app::Flags;
use zidane_app::checkpoints::Restore;

/// zidane: a coding agent in the current folder.
#[derive(Debug, Parser)]
#[command(name = "zidane", version, about, long_version = crate::version::long())]
pub(crate) struct Cli {
    /// What to do: a prompt (read from standard input with `-`, or when
    /// input is piped and no words are given).
    pub(crate) prompt: Vec<String>,
    #[command(flatten)]
    pub(crate) output: Output,
    #[command(flatten)]
    pub(crate) flags: Flags,
    #[command(flatten)]
    pub(crate) served: Served,
    #[command(flatten)]
    pub(crate) legacy: Legacy,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// How a run is shown.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct Output {
    /// Run the prompt once and print (what happens anyway when standard
    /// input or output is not a terminal); without it, a terminal opens the
    /// interactive session.
    #[arg(short = 'p', long = "print", help_heading = "Output")]
    pub(crate) print: bool,
    /// Print events as JSON lines instead of text (sub-commands: their
    /// results; before or after the sub-command's name).
    #[arg(long, global = true, help_heading = "Output")]
    pub(crate) json: bool,
    /// Print the run summary (JSON) at the end.
    #[arg(long, help_heading = "Output")]
    pub(crate) summary: bool,
}

/// Where a run happens: a served session, a worktree of its own.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct Served {
    /// Start the session at a running `zidane serve` (its URL, `ws://…/acp`,
    /// or `local` for this user's server) and drive it from here.
    #[arg(long, value_name = "URL", help_heading = "Session")]
    pub(crate) remote: Option<String>,
    /// Work in a new git worktree of this folder (`.zidane/worktrees/NAME`,
    /// on a branch `zidane/NAME`), so parallel sessions never touch each
    /// other's files.
    #[arg(long, value_name = "NAME", help_heading = "Session")]
    pub(crate) worktree: Option<String>,
    /// The server's token (default: $ZIDANE_SERVE_TOKEN, else this user's
    /// server's).
    #[arg(long, value_name = "TOKEN", help_heading = "Session")]
    pub(crate) token: Option<String>,
}

/// The operations that were flags, kept for scripts (hidden from `--help`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct Legacy {
    #[arg(long, hide = true)]
    pub(crate) list_sessions: bool,
    #[arg(long, hide = true)]
    pub(crate) list_skills: bool,
    #[arg(long, hide = true)]
    pub(crate) list_commands: bool,
    #[arg(long, hide = true)]
    pub(crate) list_checkpoints: bool,
    #[arg(long, hide = true, conflicts_with_all = ["rewind", "fork"])]
    pub(crate) undo: bool,
    #[arg(long, hide = true, value_name = "N", num_args = 0..=1, default_missing_value = "0", conflicts_with = "fork")]
    pub(crate) rewind: Option<usize>,
    #[arg(long, hide = true, value_name = "SESSION[:N]")]
    pub(crate) fork: Option<String>,
    #[arg(long, hide = true, requires = "fork")]
    pub(crate) with_files: bool,
    #[arg(long, hide = true, value_name = "ID")]
    pub(crate) delete_session: Option<String>,
    #[arg(long, hide = true, value_name = "AGE", value_parser = age)]
    pub(crate) prune_older_than: Option<std::time::Duration>,
    #[arg(long, hide = true, value_enum, value_name = "WHAT")]
    pub(crate) restore: Option<Restore>,
    #[arg(long, hide = true)]
    pub(crate) force: bool,
    #[arg(long, short = 'y', hide = true)]
    pub(crate) yes: bool,
}

/// Where an operation acts: the sessions file, the folder, the session.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct Place {
    /// The sessions file (default: $ZIDANE_HOME/sessions.db, else the
    /// user's data folder).
    #[arg(long)]
    pub(crate) store: Option<PathBuf>,
    /// The working folder (default: the current one).
    #[arg(long)]
    pub(crate) cwd: Option<PathBuf>,
    /// The session (default: this folder's latest with checkpoints).
    #[arg(long)]
    pub(crate) session: Option<String>,
}

impl Place {
    /// `flags` with this place's values over them.
    pub(crate) fn over(&self, mut flags: Flags) -> Flags {
        if self.store.is_some() {
            flags.store.clone_from(&self.store);
        }
        if self.cwd.is_some() {
            flags.cwd.clone_from(&self.cwd);
        }
        if self.session.is_some() {
            flags.session.clone_from(&self.session);
        }
        flags
    }
}

/// What a rewind takes back, and how it asks.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct RewindArgs {
    #[command(flatten)]
    pub(crate) place: Place,
    /// What to take back: `files`, `conversation` or `both` (default:
    /// `files` for `undo`, `both` for `rewind`).
    #[arg(long, value_enum, value_name = "WHAT")]
    pub(crate) restore: Option<Restore>,
    /// Restore the other files when some changed since the agent left them
    /// (those are left alone and listed); without it a conflict changes
    /// nothing.
    #[arg(long)]
    pub(crate) force: bool,
    /// Do not ask before changing anything.
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
}

/// The sub-commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve editors over the Agent Client Protocol (JSON-RPC on standard
    /// input and output); with `--connect URL`, bridge to a running
    /// `zidane serve` instead.
    Acp(AcpArgs),
    /// Drive a served session from this terminal: the same screen as a
    /// local session; Ctrl-\\ (or Ctrl-D) detaches and the run goes on.
    Attach(AttachArgs),
    /// Show the configuration in effect, each value with where it comes from.
    Config(SettingsArgs),
    /// Host sessions that outlive the terminal, for `zidane attach`, editors
    /// and scripts: ACP over WebSocket at `ws://ADDR/acp`, with a token.
    Serve(ServeArgs),
    /// Show what the session's context holds before the next request, by
    /// category and piece.
    Context(SettingsArgs),
    /// MCP servers: `mcp login NAME` logs in to an HTTP server that wants
    /// OAuth (the tokens are kept in the sessions file).
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// The saved sessions: list (the default), delete, prune.
    Sessions {
        #[command(subcommand)]
        action: Option<SessionsAction>,
        #[command(flatten)]
        place: Place,
    },
    /// List a session's checkpoints: each prompt with the files it
    /// created, modified and deleted.
    Checkpoints {
        #[command(flatten)]
        place: Place,
    },
    /// Take back the last prompt's changes to the files (the conversation
    /// stays; `--restore both` rewinds it too).
    Undo(RewindArgs),
    /// Go back to checkpoint N (before its prompt): the files the later
    /// prompts changed go back and the conversation keeps the turns before
    /// it. Without N, a list to pick from (on a terminal).
    Rewind {
        /// The checkpoint.
        n: Option<usize>,
        #[command(flatten)]
        args: RewindArgs,
    },
    /// Start a new session from SESSION's checkpoint N (its turns before
    /// that prompt; all of them without N); a prompt given runs in it.
    Fork {
        /// `SESSION` or `SESSION:N`.
        #[arg(value_name = "SESSION[:N]")]
        spec: String,
        /// A prompt to run in the new session.
        prompt: Vec<String>,
        /// Restore the folder to checkpoint N too.
        #[arg(long)]
        with_files: bool,
        /// With `--with-files`: restore the other files when some changed.
        #[arg(long)]
        force: bool,
        /// The new session's id (default: a new one).
        #[arg(long = "as", value_name = "ID")]
        new_id: Option<String>,
        #[command(flatten)]
        place: Place,
    },
    /// List the skills the agent would offer (and any that cannot be read).
    Skills {
        #[command(flatten)]
        place: Place,
    },
    /// List the custom commands (`/NAME`: `.zidane/commands/NAME.md` and
    /// the user's).
    Commands {
        #[command(flatten)]
        place: Place,
    },
    /// Review a change (read-only): findings by priority on the terminal,
    /// as JSON (`--json`), SARIF (`--sarif FILE`) and Markdown
    /// (`--markdown FILE`); `--fail-on P1` exits 3 when a finding at or
    /// above P1 exists.
    Review(ReviewArgs),
    /// Prompts that run on a schedule, fired by `zidane serve`: `add CRON
    /// PROMPT`, `list`, `remove NAME`.
    Schedule {
        #[command(subcommand)]
        action: ScheduleAction,
        /// The sessions file the schedules are kept in (the server's).
        #[arg(long, global = true)]
        store: Option<PathBuf>,
    },
    /// Say how this copy was installed and how to get a newer one (it
    /// never replaces itself).
    Update,
}

/// `zidane schedule …`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum ScheduleAction {
    /// Add a schedule: PROMPT runs in FOLDER each time CRON comes due
    /// (minute hour day-of-month month day-of-week, local time), while a
    /// `zidane serve` runs on the same sessions file.
    Add(ScheduleAddArgs),
    /// List the schedules: each one's next firing and its last ones.
    List,
    /// Remove a schedule (the sessions its firings ran in stay).
    Remove {
        /// The schedule's name.
        name: String,
    },
}

/// `zidane schedule add`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ScheduleAddArgs {
    /// When: a cron expression, quoted (`"0 9 * * 1-5"`, `@daily`).
    pub(crate) cron: String,
    /// What each firing runs.
    #[arg(required = true, num_args = 1..)]
    pub(crate) prompt: Vec<String>,
    /// The folder its runs work in (default: the current one).
    #[arg(long, value_name = "PATH")]
    pub(crate) folder: Option<PathBuf>,
    /// Its name (default: from the prompt's first words).
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// Run every firing in this session (default: a new one each time).
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// A goal each firing works toward (see `zidane --help`, "Goal").
    #[arg(long, value_name = "CONDITION")]
    pub(crate) goal: Option<String>,
    /// The goal's check command.
    #[arg(long, value_name = "COMMAND", requires = "goal")]
    pub(crate) goal_check: Option<String>,
    /// Checks each firing's goal may take.
    #[arg(long, value_name = "N", requires = "goal", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) goal_max_checks: Option<u32>,
    /// With `--goal-check`: the model judges too once the command passes.
    #[arg(long, requires = "goal_check")]
    pub(crate) goal_evaluate: bool,
    /// Most turns of one firing (default 50).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_turns: Option<u32>,
    /// Most all its firings may spend together, in USD; once spent, it
    /// fires no more.
    #[arg(long, value_name = "USD")]
    pub(crate) max_cost: Option<f64>,
}

/// The options of a run, for a sub-command that reads the settings.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct SettingsArgs {
    #[command(flatten)]
    pub(crate) flags: Flags,
}

/// `zidane review`: exactly one of `--uncommitted`, `--base BRANCH`,
/// `--commit SHA` or a range `A..B`.
#[derive(Debug, Clone, Default, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["range", "uncommitted", "base", "commit"])))]
pub(crate) struct ReviewArgs {
    /// A range of commits: the changes from A to B (`main..HEAD`).
    #[arg(value_name = "A..B")]
    pub(crate) range: Option<String>,
    /// The staged, unstaged and untracked changes.
    #[arg(long)]
    pub(crate) uncommitted: bool,
    /// The changes on HEAD since its merge base with BRANCH.
    #[arg(long, value_name = "BRANCH")]
    pub(crate) base: Option<String>,
    /// One commit (against its first parent).
    #[arg(long, value_name = "SHA")]
    pub(crate) commit: Option<String>,
    /// What to look at most (`security`, or any text).
    #[arg(long, value_name = "TEXT")]
    pub(crate) focus: Option<String>,
    /// A file of instructions for the reviewer.
    #[arg(long, value_name = "FILE")]
    pub(crate) instructions: Option<PathBuf>,
    /// Let the review fetch web pages (`web_fetch`); without it a review
    /// reaches no network.
    #[arg(long)]
    pub(crate) network: bool,
    /// Write the findings as SARIF 2.1.0 to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) sarif: Option<PathBuf>,
    /// Write the review as Markdown (a pull-request comment) to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) markdown: Option<PathBuf>,
    /// Exit with code 3 when a finding at PRIORITY or above exists (P0 is
    /// the most urgent, P3 a nit).
    #[arg(long, value_name = "PRIORITY")]
    pub(crate) fail_on: Option<String>,
    #[command(flatten)]
    pub(crate) flags: Flags,
}

/// `zidane acp`: a server of its own, or a bridge to a running one.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct AcpArgs {
    /// Bridge standard input and output to the `zidane serve` at URL
    /// (`local`: this user's), for a client that speaks ACP only over a
    /// process's pipes.
    #[arg(long, value_name = "URL")]
    pub(crate) connect: Option<String>,
    /// With `--connect`: the server's token.
    #[arg(long, value_name = "TOKEN", requires = "connect")]
    pub(crate) token: Option<String>,
    #[command(flatten)]
    pub(crate) flags: Flags,
}

/// `zidane attach`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct AttachArgs {
    /// The server (default: this user's, from $ZIDANE_HOME/serve.json).
    #[arg(value_name = "URL")]
    pub(crate) url: Option<String>,
    /// The session (default: the server's most recent in this folder).
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// The server's token (default: $ZIDANE_SERVE_TOKEN, else this user's
    /// server's).
    #[arg(long, value_name = "TOKEN")]
    pub(crate) token: Option<String>,
}

/// `zidane serve`: where to listen, and the options of its sessions.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on (default: 127.0.0.1 on a free port, printed
    /// and written to $ZIDANE_HOME/serve.json).
    #[arg(long, value_name = "ADDR", conflicts_with = "socket")]
    pub(crate) listen: Option<String>,
    /// A Unix socket to listen on instead (mode 0600).
    #[arg(long, value_name = "PATH")]
    pub(crate) socket: Option<PathBuf>,
    /// TLS: the certificate chain (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub(crate) tls_cert: Option<PathBuf>,
    /// TLS: the private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,
    /// Listen on a non-loopback address without TLS: the token and every
    /// message travel in clear.
    #[arg(long)]
    pub(crate) insecure_no_tls: bool,
    /// Print the token clients present (made on the first start) and exit.
    #[arg(long)]
    pub(crate) print_token: bool,
    /// Seconds a question (an approval, a form) waits for a client's answer
    /// before it is declined (default 3600).
    #[arg(long, value_name = "SECS")]
    pub(crate) question_timeout: Option<u64>,
    /// Most scheduled runs at once (`zidane schedule`; default 2): a
    /// schedule due while that many run fires when one ends.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_scheduled_runs: u32,
    #[command(flatten)]
    pub(crate) flags: Flags,
}

/// `zidane mcp …`.
#[derive(Debug, Subcommand)]
pub(crate) enum McpAction {
    /// Log in to an HTTP MCP server that wants OAuth: the URL to open is
    /// printed (and opened when there is a browser).
    Login {
        /// The server's name in the configuration.
        server: String,
    },
}

/// `zidane sessions …`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum SessionsAction {
    /// List the saved sessions (an interrupted one is marked).
    List,
    /// Delete a session: its turns, runs and checkpoints (contents no other
    /// session uses are removed).
    Delete {
        /// The session.
        id: String,
        /// Do not ask first.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Delete the sessions unchanged for AGE (`30d`, `12h`, `90m`, `2w`)
    /// and the checkpoint contents only they used.
    Prune {
        /// The age.
        #[arg(value_parser = age)]
        age: std::time::Duration,
        /// Do not ask first.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

/// An age: a number and a unit (`s`, `m`, `h`, `d`, `w`).
fn age(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not an age like 30d, 12h, 90m or 2w"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" | "" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(format!("`{text}`: the unit is one of s, m, h, d, w")),
    };
    Ok(std::time::Duration::from_secs(n.saturating_mul(secs)))
}

/// The command line as given, with one rule applied: after `-p` /
/// `--print`, the first word is the start of the prompt, even one that
/// names a sub-command (`zidane -p config` asks about "config").
pub(crate) fn argv(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut args: Vec<String> = args.into_iter().collect();
    let command = Cli::command();
    let takes_value = |token: &str| -> bool {
        let found = if let Some(long) = token.strip_prefix("--") {
            command.get_arguments().find(|a| a.get_long() == Some(long))
        } else {
            let short = token.chars().last();
            command.get_arguments().find(|a| a.get_short() == short)
        };
        found.is_some_and(|a| a.get_action().takes_values() && a.get_num_args().is_none_or(|n| n.min_values() > 0))
    };
    let mut print = false;
    let mut i = 1;
    while i < args.len() {
        let token = args[i].as_str();
        if token == "--" {
            return args;
        }
        if token.starts_with('-') && token.len() > 1 {
            if token == "--print"
                || (!token.starts_with("--")
                    && token[1..].contains('p')
                    && token[1..].chars().all(|c| c.is_ascii_alphabetic()))
            {
                print = true;
            }
            if !token.contains('=') && takes_value(token) {
                i += 1;
            }
            i += 1;
            continue;
        }
        if print {
            args.insert(i, "--".to_owned());
        }
        return args;
    }
    args
}
