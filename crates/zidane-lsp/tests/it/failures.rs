//! Servers that crash, never answer, or never start.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use zidane_lsp::{Lsp, LspError, LspOptions, ServerConfig, ServerState};

use crate::support::{edit, folder, installed_bus, lsp, pylsp};

fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_is_started_again_at_the_next_edit() {
    let dir = folder(&[("m.py", "a = 1\n")]);
    let lsp = lsp(dir.path(), pylsp());
    let bus = installed_bus(&lsp);
    let (text, _) = edit(&bus, dir.path(), "c1", "m.py", "a = 1\nprint(b)\n").await;
    assert!(text.contains("m.py:2:7 error (new) undefined name 'b'"), "{text}");
    let pid = lsp.pid_for(Path::new("m.py")).expect("running");

    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Until the kernel has ended it (a zombie, or gone).
    while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z ")) {
        tokio::task::yield_now().await;
    }

    let (text, _) = edit(&bus, dir.path(), "c2", "m.py", "a = 1\nprint(c)\n").await;
    assert!(text.contains("m.py:2:7 error (new) undefined name 'c'"), "{text}");
    let again = lsp.pid_for(Path::new("m.py")).expect("running again");
    assert_ne!(again, pid);
    assert!(matches!(lsp.status()[0].state, ServerState::Running { .. }));
    lsp.shutdown().await;
    assert_eq!(lsp.status()[0].state, ServerState::Ready);
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers_costs_a_bounded_wait_and_the_edit_goes_on() {
    let dir = folder(&[("m.py", "a = 1\n")]);
    // It reads everything and says nothing.
    let silent = script(dir.path(), "silent-ls", "while read -r line; do :; done");
    let lsp = Lsp::new(LspOptions {
        root: Some(dir.path().to_path_buf()),
        servers: vec![ServerConfig::new("silent", silent, Vec::<String>::new(), ["python"])],
        request_timeout: Duration::from_secs(5),
        settle: Duration::from_secs(3),
        ..Default::default()
    });
    let bus = installed_bus(&lsp);
    let started = tokio::time::Instant::now();
    let (text, meta) = edit(&bus, dir.path(), "c1", "m.py", "a = 2\n").await;
    let waited = started.elapsed();
    assert_eq!(text, "Wrote m.py", "no diagnostics, the result as it was");
    assert!(meta.is_null());
    assert!(waited >= Duration::from_secs(3), "{waited:?}");
    assert!(waited <= Duration::from_secs(11), "the wait is bounded: {waited:?}");

    let err = lsp.diagnostics(&dir.path().join("m.py"), "a = 3\n").await.unwrap_err();
    assert!(
        matches!(err, LspError::Timeout { ref method, .. } if method == "initialize")
            || matches!(err, LspError::Restarting(_) | LspError::Off { .. }),
        "{err}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_keeps_failing_is_turned_off_with_one_notice() {
    let dir = folder(&[("m.py", "a = 1\n")]);
    let dying = script(dir.path(), "dying-ls", "exit 3");
    let notices = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&notices);
    let lsp = Lsp::new(LspOptions {
        root: Some(dir.path().to_path_buf()),
        servers: vec![ServerConfig::new("dying", dying, Vec::<String>::new(), ["python"])],
        request_timeout: Duration::from_secs(5),
        backoff: Duration::from_secs(2),
        on_notice: Some(Arc::new(move |n: &str| seen.lock().push(n.to_owned()))),
        ..Default::default()
    });
    let file = dir.path().join("m.py");
    // The first failure, then an immediate second start.
    assert!(lsp.diagnostics(&file, "a\n").await.is_err());
    assert_eq!(lsp.status()[0].state, ServerState::Restarting { failures: 1 });
    assert!(lsp.diagnostics(&file, "a\n").await.is_err());
    assert_eq!(lsp.status()[0].state, ServerState::Restarting { failures: 2 });
    // The third waits its turn.
    assert!(matches!(
        lsp.diagnostics(&file, "a\n").await,
        Err(LspError::Restarting(_))
    ));
    tokio::time::advance(Duration::from_secs(2)).await;
    assert!(lsp.diagnostics(&file, "a\n").await.is_err());
    assert!(
        matches!(lsp.status()[0].state, ServerState::Off { .. }),
        "{:?}",
        lsp.status()
    );
    assert!(matches!(lsp.diagnostics(&file, "a\n").await, Err(LspError::Off { .. })));
    assert!(!lsp.available());
    let notices = notices.lock().clone();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("language server `dying` is off for this session after 3 failures"),
        "{notices:?}"
    );
}
