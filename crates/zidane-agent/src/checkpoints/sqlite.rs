//! Checkpoints in the sessions file: contents, manifests and snapshots in
//! four tables beside the sessions (one file to keep, back up and delete,
//! and a snapshot written in the same transaction as its manifest).

use rusqlite::{OptionalExtension, params};
use zidane_core::checkpoint::{
    CheckpointStore, CheckpointStoreError, NewSnapshot, PruneReport, Snapshot, SnapshotKind, StoredManifest,
};
use zidane_provider::BoxFuture;

use crate::sqlite::{SqliteStore, err};

const SNAPSHOT_COLUMNS: &str = "id, session_id, run_id, kind, step, turn_index, label, root, created_at, manifest";

fn snapshot_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Snapshot> {
    let kind: String = r.get(3)?;
    Ok(Snapshot {
        id: r.get(0)?,
        session_id: r.get(1)?,
        run_id: r.get(2)?,
        kind: SnapshotKind::parse(&kind).unwrap_or(SnapshotKind::Tool),
        step: r.get::<_, i64>(4)? as u32,
        turn_index: r.get::<_, i64>(5)? as u32,
        label: r.get(6)?,
        root: r.get(7)?,
        created_at: zidane_provider::Timestamp::from_millis(r.get::<_, i64>(8)? as u64),
        manifest: r.get(9)?,
    })
}

impl SqliteStore {
    /// Removes a session: its turns, runs, step records, tool state,
    /// artifacts, lease and checkpoints, and its sub-agents' sessions; then
    /// the checkpoint contents nothing refers to any more. `false` when
    /// there was no such session.
    pub async fn delete_session(&self, id: &str) -> Result<bool, CheckpointStoreError> {
        let id = id.to_owned();
        let found = self
            .blocking(move |conn| {
                let tx = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(err)?;
                // A sub-agent's session is `<parent>/spawn-<call>`.
                let children = format!("{id}{}%", crate::CHILD_SESSION_MARK);
                let found = tx
                    .execute(
                        "DELETE FROM sessions WHERE id = ?1 OR id LIKE ?2",
                        params![id, children],
                    )
                    .map_err(err)?;
                for table in ["steps", "tool_state", "artifacts", "leases", "checkpoints"] {
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE session_id = ?1 OR session_id LIKE ?2"),
                        params![id, children],
                    )
                    .map_err(err)?;
                }
                for table in ["turn_content", "turns", "runs"] {
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE session_id = ?1 OR session_id LIKE ?2"),
                        params![id, children],
                    )
                    .map_err(err)?;
                }
                tx.commit().map_err(err)?;
                Ok(found > 0)
            })
            .await?;
        self.prune().await?;
        Ok(found)
    }

    /// The sessions last changed before `before_ms` (epoch ms), sub-agents'
    /// left out.
    pub async fn sessions_older_than(&self, before_ms: u64) -> Result<Vec<String>, CheckpointStoreError> {
        self.blocking(move |conn| {
            let mut stmt = conn
                .prepare("SELECT id FROM sessions WHERE updated_at < ?1 ORDER BY updated_at")
                .map_err(err)?;
            let ids = stmt
                .query_map([before_ms as i64], |r| r.get::<_, String>(0))
                .map_err(err)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(err)?;
            Ok(ids.into_iter().filter(|id| crate::is_conversation(id)).collect())
        })
        .await
    }
}

impl CheckpointStore for SqliteStore {
    fn put_blobs(&self, blobs: Vec<(String, Vec<u8>)>) -> BoxFuture<'_, Result<(), CheckpointStoreError>> {
        self.blocking(move |conn| {
            if blobs.is_empty() {
                return Ok(());
            }
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            {
                let mut stmt = tx
                    .prepare_cached("INSERT OR IGNORE INTO checkpoint_blobs (hash, size, data) VALUES (?1, ?2, ?3)")
                    .map_err(err)?;
                for (hash, data) in &blobs {
                    stmt.execute(params![hash, data.len() as i64, data]).map_err(err)?;
                }
            }
            tx.commit().map_err(err)
        })
    }

    fn blob<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, CheckpointStoreError>> {
        let hash = hash.to_owned();
        self.blocking(move |conn| {
            conn.prepare_cached("SELECT data FROM checkpoint_blobs WHERE hash = ?1")
                .map_err(err)?
                .query_row([&hash], |r| r.get::<_, Vec<u8>>(0))
                .optional()
                .map_err(err)
        })
    }

    fn save_snapshot(
        &self,
        snapshot: NewSnapshot,
        manifest: StoredManifest,
    ) -> BoxFuture<'_, Result<Snapshot, CheckpointStoreError>> {
        self.blocking(move |conn| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            if let Some(run_id) = &snapshot.run_id {
                let found = tx
                    .prepare_cached(&format!(
                        "SELECT {SNAPSHOT_COLUMNS} FROM checkpoints WHERE session_id = ?1 AND run_id = ?2 AND kind = ?3 AND step = ?4"
                    ))
                    .map_err(err)?
                    .query_row(
                        params![snapshot.session_id, run_id, snapshot.kind.as_str(), snapshot.step as i64],
                        snapshot_row,
                    )
                    .optional()
                    .map_err(err)?;
                if let Some(found) = found {
                    return Ok(found);
                }
            }
            let inserted = tx
                .prepare_cached("INSERT OR IGNORE INTO checkpoint_manifests (id, base, body) VALUES (?1, ?2, ?3)")
                .map_err(err)?
                .execute(params![manifest.id, manifest.base, manifest.body])
                .map_err(err)?;
            if inserted > 0 {
                let mut stmt = tx
                    .prepare_cached("INSERT OR IGNORE INTO checkpoint_manifest_blobs (manifest, hash) VALUES (?1, ?2)")
                    .map_err(err)?;
                for hash in &manifest.blobs {
                    stmt.execute(params![manifest.id, hash]).map_err(err)?;
                }
            }
            tx.prepare_cached(
                "INSERT INTO checkpoints (session_id, run_id, kind, step, turn_index, label, root, created_at, manifest)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .map_err(err)?
            .execute(params![
                snapshot.session_id,
                snapshot.run_id,
                snapshot.kind.as_str(),
                snapshot.step as i64,
                snapshot.turn_index as i64,
                snapshot.label,
                snapshot.root,
                snapshot.created_at.as_millis() as i64,
                snapshot.manifest,
            ])
            .map_err(err)?;
            let id = tx.last_insert_rowid();
            tx.commit().map_err(err)?;
            Ok(snapshot.stored(id))
        })
    }

    fn find_snapshot<'a>(
        &'a self,
        session_id: &'a str,
        run_id: &'a str,
        kind: SnapshotKind,
        step: u32,
    ) -> BoxFuture<'a, Result<Option<Snapshot>, CheckpointStoreError>> {
        let (session_id, run_id) = (session_id.to_owned(), run_id.to_owned());
        self.blocking(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {SNAPSHOT_COLUMNS} FROM checkpoints WHERE session_id = ?1 AND run_id = ?2 AND kind = ?3 AND step = ?4"
            ))
            .map_err(err)?
            .query_row(params![session_id, run_id, kind.as_str(), step as i64], snapshot_row)
            .optional()
            .map_err(err)
        })
    }

    fn snapshots<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Vec<Snapshot>, CheckpointStoreError>> {
        let session_id = session_id.to_owned();
        self.blocking(move |conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {SNAPSHOT_COLUMNS} FROM checkpoints WHERE session_id = ?1 ORDER BY id"
                ))
                .map_err(err)?;
            let rows = stmt
                .query_map([&session_id], snapshot_row)
                .map_err(err)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(err)?;
            Ok(rows)
        })
    }

    fn manifest<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredManifest>, CheckpointStoreError>> {
        let id = id.to_owned();
        self.blocking(move |conn| {
            conn.prepare_cached("SELECT base, body FROM checkpoint_manifests WHERE id = ?1")
                .map_err(err)?
                .query_row([&id], |r| Ok((r.get::<_, Option<String>>(0)?, r.get::<_, Vec<u8>>(1)?)))
                .optional()
                .map_err(err)
                .map(|row| {
                    row.map(|(base, body)| StoredManifest {
                        id,
                        base,
                        body,
                        blobs: Vec::new(),
                    })
                })
        })
    }

    fn rewrite_manifest(&self, manifest: StoredManifest) -> BoxFuture<'_, Result<(), CheckpointStoreError>> {
        self.blocking(move |conn| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            tx.execute(
                "UPDATE checkpoint_manifests SET base = ?2, body = ?3 WHERE id = ?1",
                params![manifest.id, manifest.base, manifest.body],
            )
            .map_err(err)?;
            tx.execute(
                "DELETE FROM checkpoint_manifest_blobs WHERE manifest = ?1",
                [&manifest.id],
            )
            .map_err(err)?;
            {
                let mut stmt = tx
                    .prepare_cached("INSERT OR IGNORE INTO checkpoint_manifest_blobs (manifest, hash) VALUES (?1, ?2)")
                    .map_err(err)?;
                for hash in &manifest.blobs {
                    stmt.execute(params![manifest.id, hash]).map_err(err)?;
                }
            }
            tx.commit().map_err(err)
        })
    }

    fn delete_snapshots(&self, ids: Vec<i64>) -> BoxFuture<'_, Result<(), CheckpointStoreError>> {
        self.blocking(move |conn| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            {
                let mut stmt = tx
                    .prepare_cached("DELETE FROM checkpoints WHERE id = ?1")
                    .map_err(err)?;
                for id in &ids {
                    stmt.execute([id]).map_err(err)?;
                }
            }
            tx.commit().map_err(err)
        })
    }

    fn delete_session_snapshots<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), CheckpointStoreError>> {
        let session_id = session_id.to_owned();
        self.blocking(move |conn| {
            conn.execute("DELETE FROM checkpoints WHERE session_id = ?1", [&session_id])
                .map_err(err)?;
            Ok(())
        })
    }

    fn prune(&self) -> BoxFuture<'_, Result<PruneReport, CheckpointStoreError>> {
        self.blocking(move |conn| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            // A manifest is kept while a snapshot, or a kept manifest built
            // on it, refers to it.
            let manifests = tx
                .execute(
                    "DELETE FROM checkpoint_manifests WHERE id NOT IN (
                        WITH RECURSIVE kept(id) AS (
                            SELECT manifest FROM checkpoints
                            UNION SELECT m.base FROM checkpoint_manifests m JOIN kept ON m.id = kept.id WHERE m.base IS NOT NULL
                        ) SELECT id FROM kept)",
                    [],
                )
                .map_err(err)?;
            tx.execute(
                "DELETE FROM checkpoint_manifest_blobs WHERE manifest NOT IN (SELECT id FROM checkpoint_manifests)",
                [],
            )
            .map_err(err)?;
            let (blobs, bytes): (i64, i64) = tx
                .query_row(
                    "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM checkpoint_blobs
                     WHERE hash NOT IN (SELECT hash FROM checkpoint_manifest_blobs)",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .map_err(err)?;
            tx.execute(
                "DELETE FROM checkpoint_blobs WHERE hash NOT IN (SELECT hash FROM checkpoint_manifest_blobs)",
                [],
            )
            .map_err(err)?;
            tx.commit().map_err(err)?;
            Ok(PruneReport {
                manifests: manifests as u64,
                blobs: blobs as u64,
                bytes: bytes as u64,
            })
        })
    }

    fn storage_bytes(&self) -> BoxFuture<'_, Result<u64, CheckpointStoreError>> {
        self.blocking(move |conn| {
            conn.query_row(
                "SELECT (SELECT COALESCE(SUM(size), 0) FROM checkpoint_blobs)
                      + (SELECT COALESCE(SUM(length(body)), 0) FROM checkpoint_manifests)",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(err)
        })
    }
}
