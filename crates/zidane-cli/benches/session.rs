//! The interactive session's resources, measured on the real binary in a
//! pseudo-terminal against the loopback model: `cargo bench -p zidane-cli
//! --bench session`.
//!
//! - memory: the resident set after 10, 100 and `BENCH_TURNS` (default
//!   1,000) prompts, each answered with a few lines of Markdown;
//! - keystrokes: how long a typed character takes to reach the screen
//!   (the median and the slowest of 200);
//! - idle: the CPU the session uses over `BENCH_IDLE_SECS` (default 60)
//!   seconds of waiting for input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, missing_docs)]

use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use zidane_bench::loopback::{answer_sse, scripted_server};

const ANSWER: &str = "## Done\n\nThe change is in `src/lib.rs`:\n\n- the parser keeps its **state**\n- the tests pass\n\n```rust\nfn main() {}\n```\n";

/// Bytes the program wrote, read on a thread.
struct Output {
    rx: mpsc::Receiver<Vec<u8>>,
    seen: Vec<u8>,
}

impl Output {
    /// Reads until `count` occurrences of `needle` have arrived in all.
    fn until(&mut self, needle: &[u8], count: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while occurrences(&self.seen, needle) < count {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(bytes) => self.seen.extend_from_slice(&bytes),
                Err(_) => panic!(
                    "no {:?} from the session; it wrote:\n{}",
                    String::from_utf8_lossy(needle),
                    String::from_utf8_lossy(&self.seen[self.seen.len().saturating_sub(2000)..])
                ),
            }
        }
        // What was counted is not counted again.
        let keep = self.seen.len().saturating_sub(needle.len());
        self.seen.drain(..keep);
    }
}

fn occurrences(haystack: &[u8], needle: &[u8]) -> usize {
    haystack.windows(needle.len()).filter(|w| *w == needle).count()
}

/// `VmRSS` of `pid`, in kilobytes.
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// User and system CPU of `pid` and its threads, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    // `cargo test --all-targets` runs this too: then a short pass, to keep
    // it working, not a figure.
    let measuring = std::env::args().any(|a| a == "--bench");
    let turns = env_number("BENCH_TURNS", if measuring { 1000 } else { 20 }) as usize;
    let idle_secs = env_number("BENCH_IDLE_SECS", if measuring { 60 } else { 1 });
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let url = runtime.block_on(async { scripted_server(|_, _| answer_sse(ANSWER, 200)).await.unwrap() });
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(zidane_bench::program("zidane", env!("CARGO_BIN_EXE_zidane")));
    cmd.env("ANTHROPIC_API_KEY", "sk-bench");
    cmd.env("ZIDANE_HOME", home.path());
    cmd.env("ZIDANE_APPROVE", "yolo");
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("OPENAI_API_KEY");
    cmd.cwd(work.path());
    cmd.args(["--base-url", &url]);
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let pid = child.process_id().unwrap();
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut writer = pair.master.take_writer().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16384];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                return;
            }
        }
    });
    let mut out = Output { rx, seen: Vec::new() };
    out.until("› ".as_bytes(), 1);
    let started = Instant::now();
    let mut marks = Vec::new();
    for n in 1..=turns {
        writer.write_all(format!("prompt number {n}\r").as_bytes()).unwrap();
        writer.flush().unwrap();
        out.until("─ 1 turn".as_bytes(), 1);
        if [10, 100, turns].contains(&n) && n <= turns {
            marks.push((n, rss_kb(pid)));
        }
    }
    let elapsed = started.elapsed();
    println!(
        "session: {turns} prompts in {:.1}s ({:.1} ms a prompt)",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1000.0 / turns as f64
    );
    for (n, kb) in &marks {
        println!("session: RSS after {n:>5} prompts: {:.1} MB", *kb as f64 / 1024.0);
    }

    // Keystrokes: each typed character is on the screen in the next frame.
    let mut latencies = Vec::new();
    let mut typed = String::new();
    for i in 0..200 {
        if typed.len() == 80 {
            // The input stays on one row: cleared every 80 characters.
            writer.write_all(b"\x15").unwrap();
            writer.flush().unwrap();
            out.until("› \x1b[0m".as_bytes(), 1);
            typed.clear();
        }
        let c = char::from(b'a' + (i % 26) as u8);
        typed.push(c);
        let sent = Instant::now();
        writer.write_all(c.to_string().as_bytes()).unwrap();
        writer.flush().unwrap();
        out.until(format!("› {typed}").as_bytes(), 1);
        latencies.push(sent.elapsed());
    }
    latencies.sort();
    println!(
        "session: a keystroke on the screen in {:.2} ms (median), {:.2} ms (slowest of 200)",
        latencies[latencies.len() / 2].as_secs_f64() * 1000.0,
        latencies[latencies.len() - 1].as_secs_f64() * 1000.0
    );
    writer.write_all(b"\x15").unwrap();
    writer.flush().unwrap();

    let ticks_per_sec = 100.0;
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(idle_secs));
    let used = (cpu_ticks(pid) - before) as f64 / ticks_per_sec;
    println!(
        "session: idle for {idle_secs}s: {:.2}s of CPU ({:.3}% of one core), RSS {:.1} MB",
        used,
        used * 100.0 / idle_secs as f64,
        rss_kb(pid) as f64 / 1024.0
    );
    writer.write_all(b"\x04").unwrap();
    writer.flush().unwrap();
    let _ = child.wait();
}
