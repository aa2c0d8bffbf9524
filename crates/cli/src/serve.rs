//! `jucode serve`: protocol v2 on stdin/stdout.
//!
//! Three threads of control: a stdin reader thread (blocking reads, so a
//! 10 MB line is just a long read), the engine on a tokio runtime, and a
//! stdout writer thread — the only code that touches stdout, flushing after
//! every line.

use std::io::{BufRead, Write};

use jucode_protocol::{event_line, parse_op, Event, PROTOCOL_VERSION};
use tokio::sync::mpsc;

use crate::args::{GlobalArgs, ServeArgs};

pub fn run(global: &GlobalArgs, args: &ServeArgs) -> i32 {
    // `hello` goes out before anything else is set up, so a front-end learns
    // the protocol version within a few milliseconds of spawning us.
    let hello = Event::Hello {
        protocol: PROTOCOL_VERSION,
        version: env!("CARGO_PKG_VERSION").to_string(),
    };
    if write_line(&mut std::io::stdout().lock(), &event_line(&hello, None)).is_err() {
        return 0; // stdout closed: nobody is listening
    }
    crate::setup::init_logging();

    let resume = match (&args.resume, args.continue_latest) {
        (Some(id), _) => Some(jucode_engine::Resume::Id(id.clone())),
        (None, true) => Some(jucode_engine::Resume::Latest),
        (None, false) => None,
    };
    let options = match crate::setup::engine_options(global, args.chat, resume) {
        Ok(options) => options,
        Err(message) => {
            let line = event_line(&Event::error(message), Some(""));
            let _ = write_line(&mut std::io::stdout().lock(), &line);
            return 1;
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime starts");
    let _guard = runtime.enter();
    let engine = jucode_engine::start(options);

    let writer = std::thread::Builder::new()
        .name("stdout-writer".into())
        .spawn(move || write_events(engine.events))
        .expect("writer thread starts");
    let input = engine.input;
    std::thread::Builder::new()
        .name("stdin-reader".into())
        .spawn(move || read_ops(input))
        .expect("reader thread starts");

    let _ = runtime.block_on(engine.done);
    // Dropping the runtime drops the aborted workers and with them the last
    // event senders, which lets the writer drain what is queued and stop.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    let _ = writer.join();
    0
}

/// Reads stdin line by line until EOF. Empty lines are skipped; every other
/// line goes to the engine, parsed or with its parse error, in order.
fn read_ops(input: mpsc::UnboundedSender<jucode_engine::Input>) {
    let stdin = std::io::stdin();
    let mut reader = stdin.lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if input.send(parse_op(line)).is_err() {
            break; // engine stopped
        }
    }
}

fn write_events(mut events: mpsc::UnboundedReceiver<jucode_engine::Emitted>) {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    while let Some(emitted) = events.blocking_recv() {
        let line = event_line(&emitted.event, Some(&emitted.session));
        if write_line(&mut out, &line).is_err() {
            break;
        }
    }
}

fn write_line(out: &mut impl Write, line: &str) -> std::io::Result<()> {
    // One write per line: the line and its newline together, then flush.
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    out.write_all(&bytes)?;
    out.flush()
}
