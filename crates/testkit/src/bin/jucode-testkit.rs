//! `jucode-testkit serve-model --script FILE.json [--port N] [--repeat]`
//!
//! Runs a [`ScriptedServer`] as a standalone process so benchmarks and manual runs can point
//! a real `jucode` (or any client) at a scripted model. Prints
//! `listening http://127.0.0.1:PORT/v1` once ready, then serves until killed.

use std::io::Write;
use std::process::ExitCode;

use jucode_testkit::{ScriptedResponse, ScriptedServer};

const USAGE: &str = "usage: jucode-testkit serve-model --script FILE.json [--port N] [--repeat]";

struct Options {
    script: String,
    port: u16,
    repeat: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    match args.next().as_deref() {
        Some("serve-model") => {}
        Some(other) => return Err(format!("unknown command {other:?}")),
        None => return Err("missing command".into()),
    }
    let mut script = None;
    let mut port = 0;
    let mut repeat = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--script" => script = Some(args.next().ok_or("--script needs a file")?),
            "--port" => {
                let value = args.next().ok_or("--port needs a number")?;
                port = value.parse().map_err(|_| format!("bad port {value:?}"))?;
            }
            "--repeat" => repeat = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Options {
        script: script.ok_or("--script is required")?,
        port,
        repeat,
    })
}

fn run(opts: Options) -> Result<(), String> {
    let text = std::fs::read_to_string(&opts.script)
        .map_err(|e| format!("cannot read {}: {e}", opts.script))?;
    let script: Vec<ScriptedResponse> =
        serde_json::from_str(&text).map_err(|e| format!("bad script {}: {e}", opts.script))?;
    if opts.repeat && script.is_empty() {
        return Err("--repeat needs a non-empty script".into());
    }
    let server = ScriptedServer::bind(opts.port)
        .map_err(|e| format!("cannot bind port {}: {e}", opts.port))?;
    // Nobody can read the recording of a standalone server; don't let it grow.
    server.set_recording(false);
    server.set_repeat(opts.repeat);
    server.push_all(script);
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening {}", server.base_url()).map_err(|e| e.to_string())?;
    stdout.flush().map_err(|e| e.to_string())?;
    loop {
        std::thread::park();
    }
}

fn main() -> ExitCode {
    let result = parse(std::env::args().skip(1)).and_then(run);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `--help` is reported as an empty error: usage, success.
        Err(msg) if msg.is_empty() => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("jucode-testkit: {msg}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
