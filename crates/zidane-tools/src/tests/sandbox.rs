use super::*;
use crate::{ProcessContext, Sandbox, SandboxMode};

fn confined(root: &std::path::Path, mode: SandboxMode, network: bool) -> Workspace {
    // The temporary folder stays closed: the test's folders are in it.
    let context = ProcessContext::new(root)
        .task_dir(root.join(".tasks"))
        .sandboxed(Sandbox {
            mode,
            network,
            temp: false,
        })
        .unwrap();
    Arc::new(context).workspace()
}

async fn run(ws: &Workspace, command: &str) -> zidane_core::execution::ExecOutput {
    ws.exec(command, zidane_core::execution::ExecOptions::default())
        .await
        .unwrap()
}

/// A folder outside the working folder.
fn elsewhere() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[tokio::test]
async fn a_confined_command_writes_inside_the_working_folder_only() {
    let root = tempfile::tempdir().unwrap();
    let outside = elsewhere();
    let ws = confined(root.path(), SandboxMode::WorkspaceWrite, true);
    let inside = run(&ws, "echo kept > inside.txt && cat inside.txt").await;
    assert_eq!((inside.exit_code, inside.stdout.as_str()), (Some(0), "kept\n"));
    let target = outside.path().join("escaped.txt");
    let out = run(&ws, &format!("echo x > {}", target.display())).await;
    assert_ne!(out.exit_code, Some(0));
    assert!(out.stderr.contains("Permission denied"), "{}", out.stderr);
    assert!(!target.exists(), "the file appeared outside the working folder");
    // What it starts is confined too, in the background as well.
    let task = ws
        .exec_background(&format!("sh -c 'echo x > {}'; echo $?", target.display()), None)
        .await
        .unwrap();
    while ws.list_background().await[0].is_running() {
        tokio::task::yield_now().await;
    }
    assert!(!target.exists());
    let output = std::fs::read_to_string(task.output_path).unwrap();
    assert!(output.contains("Permission denied"), "{output}");
    // The agent's own process is not confined.
    std::fs::write(outside.path().join("host.txt"), "free").unwrap();
}

/// What a prompt injection would ask for: the SSH key, a cloud tool's
/// credentials, the sessions file, a `.env` of the project beside.
/// Confined commands get a permission error
/// for each, the file tools refuse them, and what the host opens on
/// purpose becomes readable from the next command on.
#[tokio::test]
async fn confined_commands_and_tools_cannot_read_credentials() {
    let top = tempfile::tempdir().unwrap();
    let home = top.path().join("home");
    let projects = home.join("src");
    let root = projects.join("app");
    for dir in [
        home.join(".ssh"),
        home.join(".aws"),
        root.clone(),
        projects.join("other"),
    ] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let write = |p: &std::path::Path, text: &str| std::fs::write(p, text).unwrap();
    write(&home.join(".ssh/id_ed25519"), "PRIVATE KEY");
    write(&home.join(".aws/credentials"), "aws_secret_access_key = x");
    write(&home.join("notes.txt"), "plain notes");
    write(&home.join(".env"), "TOKEN=above");
    write(&projects.join("other/.env"), "TOKEN=beside");
    write(&projects.join("other/.env.example"), "TOKEN=");
    write(&root.join(".env"), "TOKEN=inside");
    let sessions = top.path().join("data/sessions.db");
    std::fs::create_dir_all(sessions.parent().unwrap()).unwrap();
    write(&sessions, "conversations and tokens");
    write(&top.path().join("data/other.txt"), "beside the sessions");

    let context = ProcessContext::new(&root)
        .task_dir(top.path().join("data/tasks"))
        .sandboxed(Sandbox {
            mode: SandboxMode::WorkspaceWrite,
            network: true,
            temp: false,
        })
        .unwrap();
    context.withhold(crate::credential_paths(&home));
    context.withhold([&sessions]);
    let context = Arc::new(context);
    let ws = context.workspace();
    let cat = |path: &std::path::Path| format!("cat {}", path.display());

    for secret in [
        home.join(".ssh/id_ed25519"),
        home.join(".aws/credentials"),
        sessions.clone(),
        home.join(".env"),
        projects.join("other/.env"),
    ] {
        let out = run(&ws, &cat(&secret)).await;
        assert_ne!(out.exit_code, Some(0), "read {}: {}", secret.display(), out.stdout);
        assert!(
            out.stderr.contains("Permission denied"),
            "{}: {}",
            secret.display(),
            out.stderr
        );
    }
    // A credential store made later is withheld as well.
    std::fs::create_dir_all(home.join(".kube")).unwrap();
    write(&home.join(".kube/config"), "token: x");
    assert_ne!(run(&ws, &cat(&home.join(".kube/config"))).await.exit_code, Some(0));
    // A link that leads there leads nowhere.
    std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
    assert_ne!(run(&ws, &cat(&home.join("keys/id_ed25519"))).await.exit_code, Some(0));
    // Nor does the agent's own environment (its provider keys).
    // Everything else reads as before.
    for plain in [
        home.join("notes.txt"),
        projects.join("other/.env.example"),
        root.join(".env"),
        top.path().join("data/other.txt"),
    ] {
        let out = run(&ws, &cat(&plain)).await;
        assert_eq!(out.exit_code, Some(0), "{}: {}", plain.display(), out.stderr);
    }
    assert_eq!(run(&ws, "ls /usr/bin/env").await.exit_code, Some(0));
    assert_eq!(run(&ws, "echo kept > new.txt && cat new.txt").await.stdout, "kept\n");

    // The file tools refuse a withheld path inside the working folder,
    // which commands can read (it is in a folder they may write).
    let inside = root.join("private.db");
    write(&inside, "x");
    context.withhold([&inside]);
    let refused = ws.read_file("private.db").await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "refused: `private.db` holds credentials, which commands and tools may not read here"
    );
    assert!(matches!(
        refused.downcast_ref::<zidane_core::execution::ExecutionError>(),
        Some(zidane_core::execution::ExecutionError::Withheld { .. })
    ));
    assert_eq!(context.exposed(), std::slice::from_ref(&inside));

    // Opened on purpose: readable from the next command on.
    context.open_path(home.join(".aws"));
    let out = run(&ws, &cat(&home.join(".aws/credentials"))).await;
    assert_eq!(out.stdout, "aws_secret_access_key = x");
    assert_ne!(run(&ws, &cat(&home.join(".ssh/id_ed25519"))).await.exit_code, Some(0));
    assert!(!context.withheld().contains(&home.join(".aws")));
}

#[tokio::test]
async fn workspace_write_may_open_the_temporary_folder() {
    let root = tempfile::tempdir().unwrap();
    // Outside the working folder, inside the temporary folder.
    let scratch = tempfile::tempdir().unwrap();
    let context = ProcessContext::new(root.path())
        .task_dir(root.path().join(".tasks"))
        .sandboxed(Sandbox {
            mode: SandboxMode::WorkspaceWrite,
            network: true,
            temp: true,
        })
        .unwrap();
    let ws = Arc::new(context).workspace();
    let target = scratch.path().join("scratch.txt");
    let out = run(&ws, &format!("echo x > {}", target.display())).await;
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
    assert!(target.exists());
}

#[tokio::test]
async fn read_only_refuses_every_write_and_network_off_refuses_connections() {
    let root = tempfile::tempdir().unwrap();
    let ws = confined(root.path(), SandboxMode::ReadOnly, false);
    let out = run(&ws, "echo x > inside.txt").await;
    assert_ne!(out.exit_code, Some(0));
    assert!(!root.path().join("inside.txt").exists());
    let written = ws.write_file("notes.md", b"x").await.unwrap_err();
    assert_eq!(written.to_string(), "cannot write `notes.md`: the sandbox is read-only");
    assert_eq!(
        run(&ws, "cat /etc/hostname > /dev/null; echo read").await.stdout,
        "read\n"
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = run(
        &ws,
        &format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\""),
    )
    .await;
    assert_ne!(out.exit_code, Some(0), "a confined command connected");
    assert!(out.stderr.contains("PermissionError"), "{}", out.stderr);
}
