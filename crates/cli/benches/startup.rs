//! `cargo bench -p jucode-cli --bench startup`: time from spawn to `hello`,
//! to the end of the startup batch, and the RSS once started.
//! Numbers go to docs/performance.md.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 40;

fn main() {
    let bin = env!("CARGO_BIN_EXE_jucode");
    let home = tempfile::tempdir().expect("temp home");
    std::fs::write(
        home.path().join("config.toml"),
        "model = \"gpt-5.5\"\nprovider = \"openai\"\n",
    )
    .unwrap();
    let mut hello = Vec::new();
    let mut batch = Vec::new();
    let mut rss_kb = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut child = Command::new(bin)
            .arg("serve")
            .env("JUCODE_HOME", home.path())
            .current_dir(home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn jucode");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        hello.push(start.elapsed());
        assert!(first.contains("\"hello\""));
        for line in lines.by_ref() {
            if line.unwrap().contains("\"mcp_servers\"") {
                break;
            }
        }
        batch.push(start.elapsed());
        rss_kb.push(rss_of(child.id()));
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(b"{\"op\":\"shutdown\"}\n");
        drop(stdin);
        let _ = child.wait();
    }
    report("spawn → hello", &mut hello);
    report("spawn → end of startup batch", &mut batch);
    rss_kb.sort_unstable();
    println!(
        "RSS after startup: median {:.1} MB, max {:.1} MB",
        rss_kb[RUNS / 2] as f64 / 1024.0,
        rss_kb[RUNS - 1] as f64 / 1024.0
    );
}

fn report(name: &str, samples: &mut [Duration]) {
    samples.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name}: median {:.2} ms, p90 {:.2} ms, min {:.2} ms ({} runs)",
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() * 9 / 10]),
        ms(samples[0]),
        samples.len()
    );
}

fn rss_of(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
