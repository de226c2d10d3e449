//! Sessions and durable runs in a PostgreSQL database: the store and the
//! checkpoint backend several processes, on several hosts, share.
//!
//! The tables are those of the SQLite store (sessions, turns, runs, step
//! records, leases, tool state, artifacts), created on first use in the
//! database's `public` schema or in [`PostgresOptions::schema`]. JSON
//! bodies are kept as text, except a run's, which is `jsonb` so a flush can
//! move its position in place.

mod runtime;

pub use runtime::PostgresRuntime;

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_postgres::{Client, Config, GenericClient};
use zidane_core::events::{MessageError, ToolStateOp};
use zidane_core::session::{Session, SessionConflict, SessionInfo, SessionRun, SessionStore, StoreError, title};
use zidane_core::tool::ToolStateStore;
use zidane_provider::{BoxFuture, ContentBlock, Role, SessionTurn, Timestamp};

type Failure = zidane_core::tool::ToolFailure;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    idx BIGINT NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    usage TEXT,
    PRIMARY KEY (session_id, idx)
);
CREATE TABLE IF NOT EXISTS runs (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    seq BIGSERIAL,
    body JSONB NOT NULL,
    started_at BIGINT NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE TABLE IF NOT EXISTS steps (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    turn BIGINT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    seq BIGSERIAL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, turn, kind, name)
);
CREATE TABLE IF NOT EXISTS leases (
    session_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    pid BIGINT NOT NULL,
    host TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    released BOOLEAN NOT NULL DEFAULT FALSE
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
    seq BIGSERIAL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
);
";

/// How a PostgreSQL store connects and keeps its leases.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// The schema the tables live in (created when missing); `None`: the
    /// connection's search path (`public` by default). Several deployments
    /// can share one database, each in its own schema.
    pub schema: Option<String>,
    /// How many idle connections the store keeps open.
    pub idle_connections: usize,
    /// How often a lease holder writes its heartbeat and checks that its
    /// lock connection is alive.
    pub heartbeat: Duration,
    /// How long taking a lease waits for a holder whose connection is
    /// closing (a killed process) before it reports the lease held.
    pub acquire_wait: Duration,
    /// The name this process gives its host in the leases table (the
    /// machine's host name by default).
    pub host: Option<String>,
    /// How long a connection is quiet before TCP keepalive probes start,
    /// on both ends (the client's socket, and the server's for the lock
    /// connection): a host that vanished without closing its sockets is
    /// found by the probes. Default 10 s.
    pub keepalive_idle: Duration,
    /// Time between keepalive probes. Default 5 s.
    pub keepalive_interval: Duration,
    /// Unanswered probes before the connection is dropped. Default 3.
    pub keepalive_retries: u32,
    /// How long sent data may stay unacknowledged before the connection is
    /// dropped (`TCP_USER_TIMEOUT`, on both ends as above). Default 30 s.
    pub tcp_user_timeout: Duration,
    /// How long the server keeps the lock connection of a holder it hears
    /// nothing from before it ends that session, and with it the lease's
    /// lock (PostgreSQL's `idle_session_timeout`, 14 and later; at least
    /// twice the [`heartbeat`](Self::heartbeat), which speaks on it); also
    /// how long the holder waits for the heartbeat's answer before it
    /// takes the lock connection, and its sessions, for lost. Default 30 s.
    pub lock_idle_timeout: Duration,
}

impl PostgresOptions {
    /// The idle-session timeout the lock connection gets: never less than
    /// two heartbeats.
    pub(crate) fn lock_idle(&self) -> Duration {
        self.lock_idle_timeout.max(self.heartbeat * 2)
    }
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            schema: None,
            idle_connections: 4,
            heartbeat: Duration::from_secs(10),
            acquire_wait: Duration::from_secs(1),
            host: None,
            keepalive_idle: Duration::from_secs(10),
            keepalive_interval: Duration::from_secs(5),
            keepalive_retries: 3,
            tcp_user_timeout: Duration::from_secs(30),
            lock_idle_timeout: Duration::from_secs(30),
        }
    }
}

/// Why a PostgreSQL store could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PostgresError {
    /// The connection string did not parse.
    #[error("not a PostgreSQL connection string: {0}")]
    Url(#[source] tokio_postgres::Error),
    /// The schema name is not a plain identifier.
    #[error("schema `{0}` is not a plain name (letters, digits and `_`)")]
    SchemaName(String),
    /// The server could not be reached, or refused the login.
    #[error("cannot connect to PostgreSQL")]
    Connect(#[source] tokio_postgres::Error),
    /// The tables could not be created (rights, a read-only server).
    #[error("cannot set up the sessions tables")]
    Schema(#[source] tokio_postgres::Error),
    /// The TLS set-up failed.
    #[error("cannot set up TLS: {0}")]
    Tls(String),
}

impl From<PostgresError> for StoreError {
    fn from(e: PostgresError) -> StoreError {
        Arc::new(e)
    }
}

pub(crate) fn err(e: impl std::fmt::Display) -> StoreError {
    Arc::new(MessageError(e.to_string()))
}

/// A database error as a store error, with the server's message.
pub(crate) fn db(e: tokio_postgres::Error) -> StoreError {
    match e.as_db_error() {
        Some(d) => err(format!("PostgreSQL: {}", d.message())),
        None => err(format!("PostgreSQL: {e}")),
    }
}

/// Connections to one database, kept open between uses.
struct Pool {
    config: Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    schema: Option<String>,
    idle: Mutex<Vec<Client>>,
    keep: usize,
}

impl Pool {
    async fn connect(&self) -> Result<Client, tokio_postgres::Error> {
        let (client, connection) = self.config.connect(self.tls.clone()).await?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(target: "zidane", "a PostgreSQL connection ended: {e}");
            }
        });
        if let Some(schema) = &self.schema {
            client
                .batch_execute(&format!("SET search_path TO \"{schema}\""))
                .await?;
        }
        Ok(client)
    }

    async fn get(self: &Arc<Self>) -> Result<Conn, StoreError> {
        loop {
            let idle = self.idle.lock().pop();
            match idle {
                Some(client) if !client.is_closed() => {
                    return Ok(Conn {
                        pool: Arc::clone(self),
                        client: Some(client),
                    });
                }
                Some(_) => continue,
                None => break,
            }
        }
        let client = self.connect().await.map_err(db)?;
        Ok(Conn {
            pool: Arc::clone(self),
            client: Some(client),
        })
    }
}

/// A connection taken from the pool; it goes back when dropped.
struct Conn {
    pool: Arc<Pool>,
    client: Option<Client>,
}

impl std::ops::Deref for Conn {
    type Target = Client;
    fn deref(&self) -> &Client {
        match &self.client {
            Some(client) => client,
            None => unreachable!("a connection leaves its guard only when dropped"),
        }
    }
}

impl std::ops::DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut Client {
        match &mut self.client {
            Some(client) => client,
            None => unreachable!("a connection leaves its guard only when dropped"),
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(client) = self.client.take()
            && !client.is_closed()
        {
            let mut idle = self.pool.idle.lock();
            if idle.len() < self.pool.keep {
                idle.push(client);
            }
        }
    }
}

/// A [`SessionStore`] in a PostgreSQL database.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Arc<Pool>,
    key: String,
    /// The schema the tables are in (what keeps leases of equal session
    /// ids in two schemas apart).
    space: String,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").field("key", &self.key).finish()
    }
}

fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect, PostgresError> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| PostgresError::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

impl PostgresStore {
    /// Connects to the database `url` names (`postgres://user:pass@host/db`
    /// or `host=… dbname=…`; TLS as its `sslmode` says, with the Mozilla
    /// roots) and creates the tables when missing.
    pub async fn connect(url: &str, options: &PostgresOptions) -> Result<Self, PostgresError> {
        let mut config: Config = url.parse().map_err(PostgresError::Url)?;
        // A peer that vanishes without closing the connection (a lost
        // machine, a dropped route) is noticed in bounded time.
        config
            .keepalives(true)
            .keepalives_idle(options.keepalive_idle)
            .keepalives_interval(options.keepalive_interval)
            .keepalives_retries(options.keepalive_retries)
            .tcp_user_timeout(options.tcp_user_timeout);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.tcp_user_timeout);
        }
        if let Some(schema) = &options.schema
            && (schema.is_empty() || !schema.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(PostgresError::SchemaName(schema.clone()));
        }
        let key = format!(
            "postgres://{}:{}/{}#{}",
            config
                .get_hosts()
                .first()
                .map(|h| match h {
                    tokio_postgres::config::Host::Tcp(h) => h.clone(),
                    tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
                })
                .unwrap_or_default(),
            config.get_ports().first().copied().unwrap_or(5432),
            config.get_dbname().or(config.get_user()).unwrap_or_default(),
            options.schema.as_deref().unwrap_or("public"),
        );
        let pool = Arc::new(Pool {
            config,
            tls: tls()?,
            schema: options.schema.clone(),
            idle: Mutex::new(Vec::new()),
            keep: options.idle_connections.max(1),
        });
        let mut client = pool.connect().await.map_err(PostgresError::Connect)?;
        // Two processes creating the tables at once would collide on the
        // catalog: one at a time, under a transaction-scoped lock.
        let tx = client.transaction().await.map_err(PostgresError::Schema)?;
        tx.batch_execute("SELECT pg_advisory_xact_lock(hashtext('zidane:schema'))")
            .await
            .map_err(PostgresError::Schema)?;
        if let Some(schema) = &options.schema {
            tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\""))
                .await
                .map_err(PostgresError::Schema)?;
        }
        tx.batch_execute(SCHEMA).await.map_err(PostgresError::Schema)?;
        tx.commit().await.map_err(PostgresError::Schema)?;
        let space: String = client
            .query_one("SELECT current_schema()::text", &[])
            .await
            .map_err(PostgresError::Schema)?
            .get(0);
        pool.idle.lock().push(client);
        Ok(PostgresStore { pool, key, space })
    }

    /// A connection from the pool.
    async fn conn(&self) -> Result<Conn, StoreError> {
        self.pool.get().await
    }

    /// A connection of its own, outside the pool (a lease's lock).
    async fn dedicated(&self) -> Result<Client, StoreError> {
        self.pool.connect().await.map_err(db)
    }

    /// Appends turns; with `expected`, only onto a session of that many.
    async fn append_checked(
        &self,
        id: &str,
        expected: Option<usize>,
        turns: &[SessionTurn],
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        let tx = conn.transaction().await.map_err(db)?;
        // Locks the session's row: appends to one session take turns.
        let found = tx
            .query_opt("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", &[&id])
            .await
            .map_err(db)?;
        if found.is_none() {
            return Err(err(format!("no session `{id}`")));
        }
        let next = next_index(&tx, id).await?;
        if let Some(expected) = expected
            && next as usize != expected
        {
            return Err(Arc::new(SessionConflict {
                session_id: id.to_owned(),
                expected,
                found: next as usize,
            }));
        }
        write_turns(&tx, id, Some(next), turns, now_ms as i64).await?;
        tx.commit().await.map_err(db)
    }
}

async fn next_index(tx: &impl GenericClient, id: &str) -> Result<i64, StoreError> {
    tx.query_one(
        "SELECT COALESCE(MAX(idx) + 1, 0) FROM turns WHERE session_id = $1",
        &[&id],
    )
    .await
    .map(|r| r.get(0))
    .map_err(db)
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// Writes `turns` from index `first` (`None`: in place of every turn the
/// session holds) and moves the session's `updated_at` to `now_ms`.
pub(crate) async fn write_turns(
    tx: &impl GenericClient,
    id: &str,
    first: Option<i64>,
    turns: &[SessionTurn],
    now_ms: i64,
) -> Result<(), StoreError> {
    if first.is_none() {
        tx.execute("DELETE FROM turns WHERE session_id = $1", &[&id])
            .await
            .map_err(db)?;
    }
    insert_turns(tx, id, first.unwrap_or(0), turns).await?;
    tx.execute("UPDATE sessions SET updated_at = $2 WHERE id = $1", &[&id, &now_ms])
        .await
        .map_err(db)?;
    Ok(())
}

async fn insert_turns(tx: &impl GenericClient, id: &str, first: i64, turns: &[SessionTurn]) -> Result<(), StoreError> {
    if turns.is_empty() {
        return Ok(());
    }
    let stmt = tx
        .prepare(
            "INSERT INTO turns (session_id, idx, id, role, content, created_at, usage) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .await
        .map_err(db)?;
    for (i, turn) in turns.iter().enumerate() {
        let content = serde_json::to_string(&turn.content).map_err(err)?;
        let usage = turn
            .usage
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(err)?;
        tx.execute(
            &stmt,
            &[
                &id,
                &(first + i as i64),
                &turn.id,
                &role_name(turn.role),
                &content,
                &(turn.created_at.as_millis() as i64),
                &usage,
            ],
        )
        .await
        .map_err(db)?;
    }
    Ok(())
}

fn turn_of(row: &tokio_postgres::Row) -> Result<SessionTurn, StoreError> {
    let role: &str = row.get(1);
    let content: &str = row.get(2);
    let usage: Option<&str> = row.get(4);
    Ok(SessionTurn {
        id: row.get(0),
        role: if role == "assistant" {
            Role::Assistant
        } else {
            Role::User
        },
        content: serde_json::from_str(content).map_err(err)?,
        created_at: Timestamp::from_millis(row.get::<_, i64>(3) as u64),
        usage: usage.map(serde_json::from_str).transpose().map_err(err)?,
    })
}

impl SessionStore for PostgresStore {
    fn key(&self) -> Option<String> {
        Some(self.key.clone())
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        Box::pin(async move {
            let mut conn = self.conn().await?;
            // One snapshot for the session, its turns and its runs.
            let tx = conn
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(db)?;
            let Some(row) = tx
                .query_opt(
                    "SELECT created_at, updated_at, metadata FROM sessions WHERE id = $1",
                    &[&id],
                )
                .await
                .map_err(db)?
            else {
                return Ok(None);
            };
            let turns = tx
                .query(
                    "SELECT id, role, content, created_at, usage FROM turns WHERE session_id = $1 ORDER BY idx",
                    &[&id],
                )
                .await
                .map_err(db)?
                .iter()
                .map(turn_of)
                .collect::<Result<Vec<_>, _>>()?;
            let runs = tx
                .query(
                    "SELECT body::text FROM runs WHERE session_id = $1 ORDER BY started_at, seq",
                    &[&id],
                )
                .await
                .map_err(db)?
                .iter()
                .map(|r| serde_json::from_str::<SessionRun>(r.get(0)).map_err(err))
                .collect::<Result<Vec<_>, _>>()?;
            tx.commit().await.map_err(db)?;
            let metadata: &str = row.get(2);
            Ok(Some(Session {
                id: id.to_owned(),
                turns,
                metadata: serde_json::from_str(metadata).unwrap_or_default(),
                runs,
                created_at: Timestamp::from_millis(row.get::<_, i64>(0) as u64),
                updated_at: Timestamp::from_millis(row.get::<_, i64>(1) as u64),
            }))
        })
    }

    fn create<'a>(&'a self, id: &'a str, now_ms: u64) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let conn = self.conn().await?;
            conn.execute(
                "INSERT INTO sessions (id, created_at, updated_at) VALUES ($1, $2, $2) ON CONFLICT (id) DO NOTHING",
                &[&id, &(now_ms as i64)],
            )
            .await
            .map_err(db)?;
            Ok(())
        })
    }

    fn append_turns<'a>(
        &'a self,
        id: &'a str,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.append_checked(id, None, turns, now_ms))
    }

    fn append_turns_after<'a>(
        &'a self,
        id: &'a str,
        expected: usize,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.append_checked(id, Some(expected), turns, now_ms))
    }

    fn replace_turns<'a>(
        &'a self,
        id: &'a str,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut conn = self.conn().await?;
            let tx = conn.transaction().await.map_err(db)?;
            tx.execute("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", &[&id])
                .await
                .map_err(db)?;
            write_turns(&tx, id, None, turns, now_ms as i64).await?;
            tx.commit().await.map_err(db)
        })
    }

    fn set_meta<'a>(&'a self, id: &'a str, key: &'a str, value: &'a Value) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut conn = self.conn().await?;
            let tx = conn.transaction().await.map_err(db)?;
            let raw: String = tx
                .query_one("SELECT metadata FROM sessions WHERE id = $1 FOR UPDATE", &[&id])
                .await
                .map_err(db)?
                .get(0);
            let mut meta: BTreeMap<String, Value> = serde_json::from_str(&raw).unwrap_or_default();
            meta.insert(key.to_owned(), value.clone());
            let text = serde_json::to_string(&meta).map_err(err)?;
            tx.execute("UPDATE sessions SET metadata = $2 WHERE id = $1", &[&id, &text])
                .await
                .map_err(db)?;
            tx.commit().await.map_err(db)
        })
    }

    fn save_run<'a>(&'a self, id: &'a str, run: &'a SessionRun) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let conn = self.conn().await?;
            upsert_run(&*conn, id, run).await
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<SessionInfo>, StoreError>> {
        Box::pin(async move {
            let conn = self.conn().await?;
            let rows = conn
                .query(
                    "SELECT s.id, s.created_at, s.updated_at,
                            (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id),
                            (SELECT content FROM turns t WHERE t.session_id = s.id AND t.role = 'user' ORDER BY idx LIMIT 1),
                            EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id
                                    AND COALESCE((r.body->>'resumable')::boolean, FALSE)
                                    AND r.body->>'status' IN ('running', 'suspended'))
                     FROM sessions s ORDER BY s.updated_at DESC, s.id",
                    &[],
                )
                .await
                .map_err(db)?;
            Ok(rows
                .iter()
                .map(|r| {
                    let first: Option<&str> = r.get(4);
                    let first_turn = first
                        .and_then(|c| serde_json::from_str::<Vec<ContentBlock>>(c).ok())
                        .map(|content| SessionTurn {
                            id: String::new(),
                            role: Role::User,
                            content: content.into(),
                            created_at: Timestamp::EPOCH,
                            usage: None,
                        });
                    #[allow(deprecated)]
                    let info = SessionInfo {
                        id: r.get(0),
                        messages: r.get::<_, i64>(3) as u32,
                        turns: r.get::<_, i64>(3) as u32,
                        created_at: Timestamp::from_millis(r.get::<_, i64>(1) as u64),
                        updated_at: Timestamp::from_millis(r.get::<_, i64>(2) as u64),
                        title: first_turn.map(|t| title(&[t])).unwrap_or_default(),
                        interrupted: r.get(5),
                    };
                    info
                })
                .collect())
        })
    }

    fn tool_state(&self, id: &str) -> Arc<dyn ToolStateStore> {
        Arc::new(PostgresToolState {
            store: self.clone(),
            session_id: id.to_owned(),
        })
    }

    fn add_artifacts<'a>(
        &'a self,
        id: &'a str,
        artifacts: &'a [zidane_core::events::SessionArtifact],
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut conn = self.conn().await?;
            let tx = conn.transaction().await.map_err(db)?;
            for artifact in artifacts {
                let body = serde_json::to_string(artifact).map_err(err)?;
                // A known id keeps its place (its sequence) and takes the new body.
                tx.execute(
                    "INSERT INTO artifacts (session_id, id, body) VALUES ($1, $2, $3)
                     ON CONFLICT (session_id, id) DO UPDATE SET body = excluded.body",
                    &[&id, &artifact.id, &body],
                )
                .await
                .map_err(db)?;
            }
            tx.commit().await.map_err(db)?;
            Ok(true)
        })
    }

    fn artifacts<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<zidane_core::events::SessionArtifact>, StoreError>> {
        Box::pin(async move {
            let conn = self.conn().await?;
            conn.query("SELECT body FROM artifacts WHERE session_id = $1 ORDER BY seq", &[&id])
                .await
                .map_err(db)?
                .iter()
                .map(|r| serde_json::from_str(r.get(0)).map_err(err))
                .collect()
        })
    }
}

/// One write of a fenced `write_session`, inside its transaction.
pub(crate) async fn apply_write(
    tx: &impl GenericClient,
    write: zidane_core::durable::SessionWrite,
    now_ms: i64,
) -> Result<(), StoreError> {
    use zidane_core::durable::SessionWrite;
    match write {
        SessionWrite::Create { id } => {
            let created = tx
                .execute(
                    "INSERT INTO sessions (id, created_at, updated_at) VALUES ($1, $2, $2) ON CONFLICT (id) DO NOTHING",
                    &[&id, &now_ms],
                )
                .await
                .map_err(db)?;
            if created == 0 {
                return Err(Arc::new(MessageError(format!("a session `{id}` exists already"))));
            }
        }
        SessionWrite::AppendTurns { id, turns } => {
            let next = next_index(tx, &id).await?;
            write_turns(tx, &id, Some(next), &turns, now_ms).await?;
        }
        SessionWrite::Truncate { id, keep } => {
            tx.execute(
                "DELETE FROM turns WHERE session_id = $1 AND idx >= $2",
                &[&id, &(keep as i64)],
            )
            .await
            .map_err(db)?;
            tx.execute("UPDATE sessions SET updated_at = $2 WHERE id = $1", &[&id, &now_ms])
                .await
                .map_err(db)?;
        }
        SessionWrite::SetMeta { id, key, value } => {
            let raw: String = tx
                .query_one("SELECT metadata FROM sessions WHERE id = $1 FOR UPDATE", &[&id])
                .await
                .map_err(db)?
                .get(0);
            let mut meta: BTreeMap<String, Value> = serde_json::from_str(&raw).unwrap_or_default();
            meta.insert(key, value);
            let text = serde_json::to_string(&meta).map_err(err)?;
            tx.execute("UPDATE sessions SET metadata = $2 WHERE id = $1", &[&id, &text])
                .await
                .map_err(db)?;
        }
        SessionWrite::SaveRun { id, run } => {
            upsert_run(tx, &id, &run).await?;
            if !run.resumable {
                tx.execute("DELETE FROM steps WHERE run_id = $1", &[&run.id])
                    .await
                    .map_err(db)?;
            }
        }
    }
    Ok(())
}

/// Inserts or updates a run's record.
async fn upsert_run(client: &impl GenericClient, id: &str, run: &SessionRun) -> Result<(), StoreError> {
    let body = serde_json::to_string(run).map_err(err)?;
    client
        .execute(
            "INSERT INTO runs (session_id, id, body, started_at) VALUES ($1, $2, $3::text::jsonb, $4)
             ON CONFLICT (session_id, id) DO UPDATE SET body = excluded.body",
            &[&id, &run.id, &body, &(run.started_at.as_millis() as i64)],
        )
        .await
        .map_err(db)?;
    Ok(())
}

/// The tool state of one session in the database.
#[derive(Debug)]
struct PostgresToolState {
    store: PostgresStore,
    session_id: String,
}

fn failure(e: StoreError) -> Failure {
    Box::new(MessageError(e.to_string()))
}

impl ToolStateStore for PostgresToolState {
    fn load(&self) -> BoxFuture<'_, Result<BTreeMap<String, Value>, Failure>> {
        Box::pin(async move {
            let conn = self.store.conn().await.map_err(failure)?;
            let rows = conn
                .query(
                    "SELECT key, value FROM tool_state WHERE session_id = $1",
                    &[&self.session_id],
                )
                .await
                .map_err(|e| failure(db(e)))?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), serde_json::from_str(r.get(1)).unwrap_or(Value::Null)))
                .collect())
        })
    }

    fn commit<'a>(&'a self, ops: &'a [ToolStateOp]) -> BoxFuture<'a, Result<(), Failure>> {
        Box::pin(async move {
            let work = async {
                let mut conn = self.store.conn().await?;
                let tx = conn.transaction().await.map_err(db)?;
                apply_tool_state(&tx, &self.session_id, ops).await?;
                tx.commit().await.map_err(db)
            };
            work.await.map_err(failure)
        })
    }
}

/// Applies tool-state writes inside a transaction.
pub(crate) async fn apply_tool_state(tx: &impl GenericClient, id: &str, ops: &[ToolStateOp]) -> Result<(), StoreError> {
    for op in ops {
        match op {
            ToolStateOp::Set { key, value } => {
                let text = serde_json::to_string(value).map_err(err)?;
                tx.execute(
                    "INSERT INTO tool_state (session_id, key, value) VALUES ($1, $2, $3)
                     ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                    &[&id, key, &text],
                )
                .await
                .map_err(db)?;
            }
            ToolStateOp::Delete { key } => {
                tx.execute("DELETE FROM tool_state WHERE session_id = $1 AND key = $2", &[&id, key])
                    .await
                    .map_err(db)?;
            }
        }
    }
    Ok(())
}
