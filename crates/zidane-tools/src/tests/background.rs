use super::*;

/// A sink that records what a context reports and wakes waiters.
#[derive(Default)]
struct Recorder {
    events: std::sync::Mutex<Vec<String>>,
    exited: tokio::sync::Notify,
}

impl zidane_core::execution::BackgroundSink for Recorder {
    fn started(&self, task: &zidane_core::execution::BackgroundTask) {
        self.events.lock().unwrap().push(format!("start {}", task.task_id));
    }

    fn exited(&self, task: &zidane_core::execution::BackgroundTask, exit: &zidane_core::events::TaskExitInfo) {
        self.events.lock().unwrap().push(format!(
            "exit {} {:?} {} {:?}",
            task.task_id, exit.status, exit.exit_code, exit.signal
        ));
        self.exited.notify_one();
    }
}

fn owned(ws: &Workspace, sink: &Arc<Recorder>) -> Workspace {
    Workspace {
        background: Some(zidane_core::execution::BackgroundOwner {
            owner: "me".into(),
            sink: Arc::clone(sink) as Arc<dyn zidane_core::execution::BackgroundSink>,
        }),
        ..ws.clone()
    }
}

/// Whether a process is gone (a zombie counts: it runs no more).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

#[tokio::test]
async fn a_background_command_streams_to_its_file_and_its_exit_is_reported_once() {
    let rig = rig();
    let sink = Arc::new(Recorder::default());
    let ws = owned(&rig.workspace, &sink);
    let task = ws
        .exec_background("echo one; echo two >&2; exit 3", None)
        .await
        .unwrap();
    assert_eq!(task.task_id, "t1");
    assert!(task.is_running());
    sink.exited.notified().await;
    let listed = ws.list_background().await;
    let exit = listed[0].exit.clone().unwrap();
    assert_eq!(
        (exit.exit_code, exit.status, exit.signal),
        (3, zidane_core::events::TaskStatus::Exited, None)
    );
    assert_eq!(std::fs::read_to_string(&task.output_path).unwrap(), "one\ntwo\n");
    assert_eq!(listed[0].bytes_written, 8);
    assert_eq!(*sink.events.lock().unwrap(), vec!["start t1", "exit t1 Exited 3 None"]);
    // Killing an ended task changes nothing and reports nothing again.
    assert!(ws.kill_background("t1").await);
    assert_eq!(sink.events.lock().unwrap().len(), 2);
    assert!(!ws.kill_background("t9").await);
    // The model may read the output file, not write there.
    let read = rig.call("read_file", json!({"path": task.output_path})).await.unwrap();
    assert!(text(&read).contains("one"), "{}", text(&read));
    let write = rig
        .call("write_file", json!({"path": task.output_path, "content": "x"}))
        .await;
    assert!(write.is_err(), "{write:?}");
}

#[tokio::test]
async fn killing_a_background_task_takes_its_whole_process_tree() {
    let rig = rig();
    let sink = Arc::new(Recorder::default());
    let ws = owned(&rig.workspace, &sink);
    let task = ws
        .exec_background("sleep 300 & echo $! > grandchild.pid; echo ready; wait", None)
        .await
        .unwrap();
    // The grandchild's pid is written before `ready`.
    let pid: u32 = loop {
        let chunk = ws.read_background("t1", 0, 100).await.unwrap();
        if chunk.bytes.starts_with(b"ready") {
            break std::fs::read_to_string(rig.root.join("grandchild.pid"))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
        }
        tokio::task::yield_now().await;
    };
    assert!(!gone(pid));
    assert!(ws.kill_background("t1").await);
    let exit = ws.list_background().await[0].exit.clone().unwrap();
    assert_eq!(exit.status, zidane_core::events::TaskStatus::Killed);
    assert_eq!(exit.signal.as_deref(), Some("SIGTERM"));
    assert!(gone(task.pid), "the shell survived");
    // The kill signal is on its way: the kernel ends the process shortly.
    let mut polls = 0;
    while !gone(pid) && polls < 1_000_000 {
        polls += 1;
        tokio::task::yield_now().await;
    }
    assert!(gone(pid), "the grandchild survived the kill");
}

#[tokio::test]
async fn the_tools_start_read_and_stop_a_background_task() {
    let rig = rig();
    let started = rig
        .call(
            "shell",
            json!({"command": "echo serving; sleep 300", "run_in_background": true}),
        )
        .await
        .unwrap();
    assert!(
        text(&started).starts_with("Started background task t1 (pid "),
        "{}",
        text(&started)
    );
    // Its first line arrives, then `wait_task` reads it.
    while rig
        .workspace
        .read_background("t1", 0, 10)
        .await
        .unwrap()
        .bytes
        .is_empty()
    {
        tokio::task::yield_now().await;
    }
    let read = rig.call("wait_task", json!({"task_id": "t1"})).await.unwrap();
    let shown = text(&read);
    assert!(
        shown.starts_with("task t1 (`echo serving; sleep 300`) is running ("),
        "{shown}"
    );
    assert!(shown.ends_with("[new output, 8 bytes]\nserving\n"), "{shown}");
    let stopped = rig.call("shell_kill", json!({"task_id": "t1"})).await.unwrap();
    assert!(
        text(&stopped).starts_with("Stopped: task t1 (`echo serving; sleep 300`) was killed after "),
        "{}",
        text(&stopped)
    );
    let missing = rig.call("wait_task", json!({"task_id": "t7"})).await.unwrap();
    assert!(missing.is_error);
    assert_eq!(text(&missing), "there is no background task `t7`");
    // A finished task: `wait_task` waits for its end and says how it ended.
    rig.call("shell", json!({"command": "echo done", "run_in_background": true}))
        .await
        .unwrap();
    let waited = rig
        .call("wait_task", json!({"task_id": "t2", "timeout_secs": 60}))
        .await
        .unwrap();
    let shown = text(&waited);
    assert!(
        shown.starts_with("task t2 (`echo done`) exited with code 0 after "),
        "{shown}"
    );
    assert!(shown.ends_with("[new output, 5 bytes]\ndone\n"), "{shown}");
}
