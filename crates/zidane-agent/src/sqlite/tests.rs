use super::*;

#[test]
fn synchronous_sets_how_commits_are_synced() {
    let dir = tempfile::tempdir().unwrap();
    for (mode, want) in [(Synchronous::Full, 2), (Synchronous::Normal, 1)] {
        let store = SqliteStore::open_with(dir.path().join(format!("{want}.db")), mode).unwrap();
        let conn = store.connection();
        let level: i64 = conn.lock().query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
        assert_eq!(level, want, "{mode:?}");
    }
}
