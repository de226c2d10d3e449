//! The embedded default store: sessions, turns, runs and tool state in one
//! SQLite file (write-ahead log, full sync: an acknowledged write survives a
//! crash of the process or the machine).

mod runtime;

pub use runtime::{CheckpointOptions, CheckpointRuntime, DEFAULT_GROUP_COMMIT};

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use zidane_core::events::{MessageError, ToolStateOp};
use zidane_core::tool::ToolStateStore;
use zidane_provider::{BoxFuture, Role, SessionTurn};

use zidane_core::private::Tightened;
use zidane_core::session::{Session, SessionConflict, SessionInfo, SessionRun, SessionStore, StoreError, title};

type Failure = zidane_core::tool::ToolFailure;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    usage TEXT,
    PRIMARY KEY (session_id, idx)
);
-- A turn's content written in pieces (past STREAMED_CONTENT): its `turns`
-- row holds ''. The blob is the record's last column, so SQLite keeps the
-- zeroblob it is created as unexpanded until the pieces fill it.
CREATE TABLE IF NOT EXISTS turn_content (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    content BLOB NOT NULL,
    PRIMARY KEY (session_id, idx)
);
CREATE TABLE IF NOT EXISTS runs (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE TABLE IF NOT EXISTS steps (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, turn, kind, name)
);
CREATE TABLE IF NOT EXISTS leases (
    session_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    released INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS tool_state (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);
CREATE TABLE IF NOT EXISTS artifacts (
    session_id TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE TABLE IF NOT EXISTS checkpoint_blobs (
    hash TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoint_manifests (
    id TEXT PRIMARY KEY,
    base TEXT,
    body BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoint_manifest_blobs (
    manifest TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (manifest, hash)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS checkpoint_manifest_blobs_hash ON checkpoint_manifest_blobs (hash);
CREATE TABLE IF NOT EXISTS checkpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    run_id TEXT,
    kind TEXT NOT NULL,
    step INTEGER NOT NULL,
    turn_index INTEGER NOT NULL,
    label TEXT NOT NULL,
    root TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    manifest TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS checkpoints_step ON checkpoints (session_id, run_id, kind, step) WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS checkpoints_session ON checkpoints (session_id, id);
CREATE TABLE IF NOT EXISTS mcp_oauth (
    server TEXT PRIMARY KEY,
    tokens TEXT NOT NULL
);
";

/// A [`SessionStore`] in one SQLite file.
#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
    tightened: Arc<[Tightened]>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.path).finish()
    }
}

/// How long a write waits for another connection's write lock.
pub(crate) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(5000);

/// How a commit is synced to disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Synchronous {
    /// Every commit is on disk when it returns: it survives a crash of the
    /// process or of the machine (the default).
    #[default]
    Full,
    /// A commit survives a crash of the process; the last ones may be lost
    /// when the machine loses power.
    Normal,
    /// A checkpoint runtime's commits that come before an effect outside
    /// the process (what leads to an `unsafe` tool call, written before
    /// the call starts; a person's approval; a compaction's summary) are
    /// synced, as under [`Full`](Self::Full), and with them every commit
    /// before; the others are written as under [`Normal`](Self::Normal).
    /// A power loss can take the session back to its last synced commit:
    /// turns after it are asked again and safe calls run again, but no
    /// `unsafe` call runs twice and no person is asked twice. The `zidane`
    /// program's choice. A plain store treats it as `Normal`.
    BeforeEffects,
}

/// Why a sessions file could not be opened.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Its folder could not be created.
    #[error("cannot create the folder {}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file could not be created, or kept to its owner.
    #[error("cannot make {} private to its owner", path.display())]
    Private {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file could not be opened as a database (missing rights, not a
    /// SQLite file, a locked or full disk).
    #[error("cannot open {}{}", path.display(), cause(source))]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rusqlite::Error,
    },
    /// The file opened, but its settings or tables could not be set up
    /// (not a database, a malformed one, a newer schema, a read-only file,
    /// a locked database).
    #[error("cannot set up the sessions tables in {}{}", path.display(), cause(source))]
    Schema {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rusqlite::Error,
    },
}

/// Reads as its message with its causes (`zidane::providers::write_report`),
/// which is what a `main` returning `Result<(), Box<dyn Error>>` prints.
impl std::fmt::Debug for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        zidane_provider::write_report(self, f)
    }
}

/// What went wrong with a sessions file, in words a person can act on
/// (`: it is not a database`); empty when SQLite's own message, the
/// error's source, is all there is to say.
fn cause(error: &rusqlite::Error) -> &'static str {
    use rusqlite::ffi::ErrorCode;
    match error.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => ": it is not a database (another kind of file, or an encrypted one)",
        Some(ErrorCode::DatabaseCorrupt) => ": the database is malformed (damaged)",
        Some(ErrorCode::ReadOnly) => ": it is read-only",
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => ": another process holds it locked",
        Some(ErrorCode::CannotOpen) => ": it cannot be opened (a missing folder, or no right to it)",
        Some(ErrorCode::PermissionDenied) => ": no right to it",
        Some(ErrorCode::DiskFull) => ": the disk is full",
        Some(ErrorCode::SystemIoFailure) => ": the disk failed to read or write it",
        _ => "",
    }
}

impl From<OpenError> for StoreError {
    fn from(e: OpenError) -> StoreError {
        Arc::new(e)
    }
}

pub(crate) fn err(e: impl std::fmt::Display) -> StoreError {
    Arc::new(MessageError(e.to_string()))
}

impl SqliteStore {
    /// Opens (or creates) the store at `path`, creating its folder.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OpenError> {
        Self::open_with(path, Synchronous::Full)
    }

    /// Opens (or creates) the store at `path`, syncing commits as
    /// `synchronous` says.
    pub fn open_with(path: impl AsRef<Path>, synchronous: Synchronous) -> Result<Self, OpenError> {
        let path = path.as_ref().to_path_buf();
        let mut tightened = Vec::new();
        // Conversations, tool output and OAuth tokens: the owner's alone.
        // The folder is made private when the store creates it, or when it
        // is the per-user default's; a folder named by the caller that
        // exists (a project folder) is left as it is.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let ours = !dir.is_dir() || Self::default_path().parent() == Some(dir);
            if ours {
                tightened.extend(
                    zidane_core::private::private_dir(dir).map_err(|source| OpenError::Folder {
                        path: dir.to_path_buf(),
                        source,
                    })?,
                );
            }
        }
        let private = |p: &Path| {
            zidane_core::private::private_file(p).map_err(|source| OpenError::Private {
                path: p.to_path_buf(),
                source,
            })
        };
        tightened.extend(private(&path)?);
        // SQLite gives the log and the shared-memory file the database's
        // mode when it creates them; ones left from before are narrowed.
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut side = path.clone().into_os_string();
            side.push(suffix);
            let side = PathBuf::from(side);
            tightened.extend(
                zidane_core::private::tighten(&side, zidane_core::private::FILE_MODE).map_err(|source| {
                    OpenError::Private {
                        path: side.clone(),
                        source,
                    }
                })?,
            );
        }
        let conn = Connection::open(&path).map_err(|source| OpenError::Open {
            path: path.clone(),
            source,
        })?;
        // A small write-ahead log (about 800 KB before it is checkpointed
        // and reused): a commit into a file that no longer grows syncs only
        // its own frames, so a turn's durable write costs the same at turn
        // 200 as at turn 10 (the default 1000-page log grows for hundreds of
        // turns, and each sync of a growing file costs more).
        let sync = match synchronous {
            Synchronous::Full => "FULL",
            Synchronous::Normal | Synchronous::BeforeEffects => "NORMAL",
        };
        conn.busy_timeout(BUSY_TIMEOUT)
            .and_then(|()| {
                conn.execute_batch(&format!(
                    "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync}; PRAGMA wal_autocheckpoint = 200; PRAGMA foreign_keys = ON;"
                ))
            })
            .and_then(|()| conn.execute_batch(SCHEMA))
        .map_err(|source| OpenError::Schema {
            path: path.clone(),
            source,
        })?;
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            path,
            tightened: tightened.into(),
        })
    }

    /// What opening the store narrowed to its owner (a file or folder
    /// other users of the machine could read, left by an earlier version
    /// or created by hand), for the host to tell the person; empty when
    /// everything was private already.
    pub fn tightened(&self) -> &[Tightened] {
        &self.tightened
    }

    /// The per-user default location: `$ZIDANE_HOME/sessions.db`, else
    /// `$XDG_DATA_HOME/zidane/sessions.db`, else
    /// `~/.local/share/zidane/sessions.db`.
    pub fn default_path() -> PathBuf {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(home) = env("ZIDANE_HOME") {
            return home.join("sessions.db");
        }
        let data = env("XDG_DATA_HOME")
            .or_else(|| env("HOME").map(|h| h.join(".local/share")))
            .unwrap_or_else(|| PathBuf::from("."));
        data.join("zidane").join("sessions.db")
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends turns; with `expected`, only onto a session of that many.
    fn append_checked(
        &self,
        id: &str,
        expected: Option<usize>,
        turns: &[SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'static, Result<(), StoreError>> {
        let (id, turns) = (id.to_owned(), turns.to_vec());
        self.blocking(move |conn| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            let next: i64 = tx
                .prepare_cached("SELECT COALESCE(MAX(idx) + 1, 0) FROM turns WHERE session_id = ?1")
                .map_err(err)?
                .query_row([&id], |r| r.get(0))
                .map_err(err)?;
            if let Some(expected) = expected
                && next as usize != expected
            {
                return Err(Arc::new(SessionConflict {
                    session_id: id,
                    expected,
                    found: next as usize,
                }) as StoreError);
            }
            insert_turns(&tx, &id, next, &turns)?;
            let updated = tx
                .prepare_cached("UPDATE sessions SET updated_at = ?2 WHERE id = ?1")
                .map_err(err)?
                .execute(params![id, now_ms as i64])
                .map_err(err)?;
            if updated == 0 {
                return Err(err(format!("no session `{id}`")));
            }
            tx.commit().map_err(err)
        })
    }

    /// The connection (for a synchronous write from `Drop`).
    pub(crate) fn connection(&self) -> Arc<Mutex<Connection>> {
        Arc::clone(&self.conn)
    }

    /// Runs `f` on the connection off the async threads.
    pub(crate) fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> BoxFuture<'static, Result<T, StoreError>> {
        let conn = Arc::clone(&self.conn);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let mut conn = conn.lock();
                f(&mut conn)
            })
            .await
            .map_err(|e| err(format!("store task failed: {e}")))?
        })
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// A turn's content past this size is not built as one JSON string: it is
/// written into its row in pieces (SQLite's incremental blob I/O), so a huge
/// answer costs the store a buffer, not two more copies of itself (the
/// string and the copy SQLite binds).
pub(crate) const STREAMED_CONTENT: usize = 1 << 20;

pub(crate) fn insert_turns(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    first: i64,
    turns: &[SessionTurn],
) -> Result<(), StoreError> {
    let mut stmt = tx
        .prepare_cached("INSERT INTO turns (session_id, idx, id, role, content, created_at, usage) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        .map_err(err)?;
    for (i, turn) in turns.iter().enumerate() {
        let usage = turn
            .usage
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(err)?;
        let mut insert = |content: &dyn rusqlite::ToSql| {
            stmt.execute(params![
                id,
                first + i as i64,
                turn.id,
                role_name(turn.role),
                content,
                turn.created_at.as_millis() as i64,
                usage
            ])
            .map_err(err)
        };
        let mut small = Capped(Vec::new());
        match serde_json::to_writer(&mut small, &turn.content) {
            Ok(()) => {
                let content = String::from_utf8(small.0).map_err(err)?;
                insert(&content)?;
            }
            Err(e) if e.is_io() => {
                let mut size = Counted(0);
                serde_json::to_writer(&mut size, &turn.content).map_err(err)?;
                insert(&"")?;
                tx.prepare_cached("INSERT INTO turn_content (session_id, idx, content) VALUES (?1, ?2, ?3)")
                    .map_err(err)?
                    .execute(params![
                        id,
                        first + i as i64,
                        rusqlite::blob::ZeroBlob(i32::try_from(size.0).map_err(err)?)
                    ])
                    .map_err(err)?;
                let mut blob = tx
                    .blob_open(
                        rusqlite::MAIN_DB,
                        "turn_content",
                        "content",
                        tx.last_insert_rowid(),
                        false,
                    )
                    .map_err(err)?;
                let mut out = std::io::BufWriter::with_capacity(64 << 10, &mut blob);
                serde_json::to_writer(&mut out, &turn.content).map_err(err)?;
                std::io::Write::flush(&mut out).map_err(err)?;
            }
            Err(e) => return Err(err(e)),
        }
    }
    Ok(())
}

/// A buffer that refuses to grow past [`STREAMED_CONTENT`].
struct Capped(Vec<u8>);

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > STREAMED_CONTENT {
            return Err(std::io::Error::other("past the inline bound"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Counts what is written.
pub(crate) struct Counted(pub(crate) usize);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A turn's content as stored in column `idx` of `row`: JSON text, or the
/// same bytes as a blob when it was written in pieces (`turn_content`).
fn content_json<'r>(row: &'r rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<&'r [u8]> {
    match row.get_ref(idx)? {
        rusqlite::types::ValueRef::Text(b) | rusqlite::types::ValueRef::Blob(b) => Ok(b),
        other => Err(rusqlite::Error::InvalidColumnType(
            idx,
            "content".into(),
            other.data_type(),
        )),
    }
}

impl SessionStore for SqliteStore {
    fn location(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        let id = id.to_owned();
        self.blocking(move |conn| {
            let row = conn
                .query_row(
                    "SELECT created_at, updated_at, metadata FROM sessions WHERE id = ?1",
                    [&id],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?)),
                )
                .optional()
                .map_err(err)?;
            let Some((created_at, updated_at, metadata)) = row else {
                return Ok(None);
            };
            let mut stmt = conn
                .prepare(
                    "SELECT t.id, t.role, COALESCE(c.content, t.content), t.created_at, t.usage FROM turns t
                     LEFT JOIN turn_content c ON c.session_id = t.session_id AND c.idx = t.idx
                     WHERE t.session_id = ?1 ORDER BY t.idx",
                )
                .map_err(err)?;
            let turns = stmt
                .query_map([&id], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        serde_json::from_slice(content_json(r, 2)?),
                        r.get::<_, i64>(3)?,
                        r.get::<_, Option<String>>(4)?,
                    ))
                })
                .map_err(err)?
                .map(|row| {
                    let (tid, role, content, created_at, usage) = row.map_err(err)?;
                    Ok(SessionTurn {
                        id: tid,
                        role: if role == "assistant" {
                            Role::Assistant
                        } else {
                            Role::User
                        },
                        content: content.map_err(err)?,
                        created_at: zidane_provider::Timestamp::from_millis(created_at as u64),
                        usage: usage.map(|u| serde_json::from_str(&u)).transpose().map_err(err)?,
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let mut stmt = conn
                .prepare("SELECT body FROM runs WHERE session_id = ?1 ORDER BY started_at, rowid")
                .map_err(err)?;
            let runs = stmt
                .query_map([&id], |r| r.get::<_, String>(0))
                .map_err(err)?
                .map(|body| serde_json::from_str::<SessionRun>(&body.map_err(err)?).map_err(err))
                .collect::<Result<Vec<_>, StoreError>>()?;
            Ok(Some(Session {
                id,
                turns,
                metadata: serde_json::from_str(&metadata).unwrap_or_default(),
                runs,
                created_at: zidane_provider::Timestamp::from_millis(created_at as u64),
                updated_at: zidane_provider::Timestamp::from_millis(updated_at as u64),
            }))
        })
    }

    fn create<'a>(&'a self, id: &'a str, now_ms: u64) -> BoxFuture<'a, Result<(), StoreError>> {
        let id = id.to_owned();
        self.blocking(move |conn| {
            conn.execute(
                "INSERT OR IGNORE INTO sessions (id, created_at, updated_at) VALUES (?1, ?2, ?2)",
                params![id, now_ms as i64],
            )
            .map_err(err)?;
            Ok(())
        })
    }

    fn append_turns<'a>(
        &'a self,
        id: &'a str,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.append_checked(id, None, turns, now_ms)
    }

    fn append_turns_after<'a>(
        &'a self,
        id: &'a str,
        expected: usize,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.append_checked(id, Some(expected), turns, now_ms)
    }

    fn replace_turns<'a>(
        &'a self,
        id: &'a str,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let (id, turns) = (id.to_owned(), turns.to_vec());
        self.blocking(move |conn| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            tx.execute("DELETE FROM turn_content WHERE session_id = ?1", [&id])
                .map_err(err)?;
            tx.execute("DELETE FROM turns WHERE session_id = ?1", [&id])
                .map_err(err)?;
            insert_turns(&tx, &id, 0, &turns)?;
            tx.execute(
                "UPDATE sessions SET updated_at = ?2 WHERE id = ?1",
                params![id, now_ms as i64],
            )
            .map_err(err)?;
            tx.commit().map_err(err)
        })
    }

    fn set_meta<'a>(&'a self, id: &'a str, key: &'a str, value: &'a Value) -> BoxFuture<'a, Result<(), StoreError>> {
        let (id, key, value) = (id.to_owned(), key.to_owned(), value.clone());
        self.blocking(move |conn| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            let raw: String = tx
                .query_row("SELECT metadata FROM sessions WHERE id = ?1", [&id], |r| r.get(0))
                .map_err(err)?;
            let mut meta: BTreeMap<String, Value> = serde_json::from_str(&raw).unwrap_or_default();
            meta.insert(key, value);
            tx.execute(
                "UPDATE sessions SET metadata = ?2 WHERE id = ?1",
                params![id, serde_json::to_string(&meta).map_err(err)?],
            )
            .map_err(err)?;
            tx.commit().map_err(err)
        })
    }

    fn save_run<'a>(&'a self, id: &'a str, run: &'a SessionRun) -> BoxFuture<'a, Result<(), StoreError>> {
        let (id, run) = (id.to_owned(), run.clone());
        self.blocking(move |conn| {
            let body = serde_json::to_string(&run).map_err(err)?;
            conn.execute(
                "INSERT INTO runs (session_id, id, body, started_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (session_id, id) DO UPDATE SET body = excluded.body",
                params![id, run.id, body, run.started_at.as_millis() as i64],
            )
            .map_err(err)?;
            Ok(())
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<SessionInfo>, StoreError>> {
        self.blocking(move |conn| {
            let mut stmt = conn
                .prepare(
                    "SELECT s.id, s.created_at, s.updated_at, (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id),
                            (SELECT COALESCE(c.content, t.content) FROM turns t
                             LEFT JOIN turn_content c ON c.session_id = t.session_id AND c.idx = t.idx
                             WHERE t.session_id = s.id AND t.role = 'user' ORDER BY t.idx LIMIT 1),
                            EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND json_extract(r.body, '$.resumable')
                                    AND json_extract(r.body, '$.status') IN ('running', 'suspended'))
                     FROM sessions s ORDER BY s.updated_at DESC, s.id",
                )
                .map_err(err)?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?, r.get_ref(4)?.as_bytes_or_null()?.map(<[u8]>::to_vec), r.get::<_, bool>(5)?))
                })
                .map_err(err)?;
            rows.map(|row| {
                let (id, created_at, updated_at, turns, first, interrupted) = row.map_err(err)?;
                let first_turn = first
                    .and_then(|c| serde_json::from_slice(&c).ok())
                    .map(|content: Vec<zidane_provider::ContentBlock>| SessionTurn { id: String::new(), role: Role::User, content: content.into(), created_at: zidane_provider::Timestamp::EPOCH, usage: None });
                #[allow(deprecated)]
                let info = SessionInfo {
                    id,
                    messages: turns as u32,
                    turns: turns as u32,
                    created_at: zidane_provider::Timestamp::from_millis(created_at as u64),
                    updated_at: zidane_provider::Timestamp::from_millis(updated_at as u64),
                    title: first_turn.map(|t| title(&[t])).unwrap_or_default(),
                    interrupted,
                };
                Ok(info)
            })
            .collect()
        })
    }

    fn tool_state(&self, id: &str) -> Arc<dyn ToolStateStore> {
        Arc::new(SqliteToolState {
            store: self.clone(),
            session_id: id.to_owned(),
        })
    }

    fn add_artifacts<'a>(
        &'a self,
        id: &'a str,
        artifacts: &'a [zidane_core::events::SessionArtifact],
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let id = id.to_owned();
        let bodies: Vec<(String, String)> = artifacts
            .iter()
            .map(|a| (a.id.clone(), serde_json::to_string(a).unwrap_or_default()))
            .collect();
        self.blocking(move |conn| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            for (artifact, body) in &bodies {
                // A known id keeps its place (its rowid) and takes the new body.
                tx.execute(
                    "INSERT INTO artifacts (session_id, id, body) VALUES (?1, ?2, ?3)
                     ON CONFLICT (session_id, id) DO UPDATE SET body = excluded.body",
                    params![id, artifact, body],
                )
                .map_err(err)?;
            }
            tx.commit().map_err(err)?;
            Ok(true)
        })
    }

    fn artifacts<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<zidane_core::events::SessionArtifact>, StoreError>> {
        let id = id.to_owned();
        self.blocking(move |conn| {
            let mut stmt = conn
                .prepare("SELECT body FROM artifacts WHERE session_id = ?1 ORDER BY rowid")
                .map_err(err)?;
            let rows = stmt.query_map([&id], |r| r.get::<_, String>(0)).map_err(err)?;
            let mut out = Vec::new();
            for row in rows {
                out.push(serde_json::from_str(&row.map_err(err)?).map_err(err)?);
            }
            Ok(out)
        })
    }
}

/// The tool state of one session in the store's file.
#[derive(Debug)]
struct SqliteToolState {
    store: SqliteStore,
    session_id: String,
}

impl ToolStateStore for SqliteToolState {
    fn load(&self) -> BoxFuture<'_, Result<BTreeMap<String, Value>, Failure>> {
        let id = self.session_id.clone();
        let work = self.store.blocking(move |conn| {
            let mut stmt = conn
                .prepare("SELECT key, value FROM tool_state WHERE session_id = ?1")
                .map_err(err)?;
            let rows = stmt
                .query_map([&id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .map_err(err)?;
            let mut map = BTreeMap::new();
            for row in rows {
                let (k, v) = row.map_err(err)?;
                map.insert(k, serde_json::from_str(&v).unwrap_or(Value::Null));
            }
            Ok(map)
        });
        Box::pin(async move { work.await.map_err(|e| Box::new(MessageError(e.to_string())) as Failure) })
    }

    fn commit<'a>(&'a self, ops: &'a [ToolStateOp]) -> BoxFuture<'a, Result<(), Failure>> {
        let (id, ops) = (self.session_id.clone(), ops.to_vec());
        let work = self.store.blocking(move |conn| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            apply_tool_state(&tx, &id, &ops)?;
            tx.commit().map_err(err)
        });
        Box::pin(async move { work.await.map_err(|e| Box::new(MessageError(e.to_string())) as Failure) })
    }
}

/// Applies tool-state writes inside a transaction.
pub(crate) fn apply_tool_state(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    ops: &[ToolStateOp],
) -> Result<(), StoreError> {
    for op in ops {
        match op {
            ToolStateOp::Set { key, value } => {
                tx.prepare_cached(
                    "INSERT INTO tool_state (session_id, key, value) VALUES (?1, ?2, ?3)
                     ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                )
                .map_err(err)?
                .execute(params![id, key, serde_json::to_string(value).map_err(err)?])
                .map_err(err)?;
            }
            ToolStateOp::Delete { key } => {
                tx.execute(
                    "DELETE FROM tool_state WHERE session_id = ?1 AND key = ?2",
                    params![id, key],
                )
                .map_err(err)?;
            }
        }
    }
    Ok(())
}

/// MCP servers' OAuth tokens in the same file as the sessions (table
/// `mcp_oauth`, one row per server name).
#[cfg(feature = "mcp")]
impl zidane_mcp::oauth::OAuthStore for SqliteStore {
    fn load(&self, server: &str) -> Result<Option<zidane_mcp::oauth::OAuthTokens>, String> {
        let conn = self.conn.lock();
        let text: Option<String> = conn
            .query_row(
                "SELECT tokens FROM mcp_oauth WHERE server = ?1",
                params![server],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| e.to_string())?;
        text.map(|t| serde_json::from_str(&t).map_err(|e| format!("unreadable tokens of `{server}`: {e}")))
            .transpose()
    }

    fn save(&self, server: &str, tokens: &zidane_mcp::oauth::OAuthTokens) -> Result<(), String> {
        let text = serde_json::to_string(tokens).map_err(|e| e.to_string())?;
        let mut conn = self.conn.lock();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| e.to_string())?;
        tx.execute(
            "INSERT INTO mcp_oauth (server, tokens) VALUES (?1, ?2)
             ON CONFLICT (server) DO UPDATE SET tokens = excluded.tokens",
            params![server, text],
        )
        .map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| e.to_string())
    }

    fn remove(&self, server: &str) -> Result<(), String> {
        let conn = self.conn.lock();
        conn.execute("DELETE FROM mcp_oauth WHERE server = ?1", params![server])
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests;
