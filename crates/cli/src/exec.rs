//! `jucode exec`: one turn, headless. With `--json` every event is printed
//! as a serve-protocol line; otherwise the answer goes to stdout as plain
//! text and tool activity to stderr. Nobody is there to approve, so gated
//! calls are denied (the approval mode decides what runs without asking).

use std::io::{Read, Write};

use jucode_engine::{Input, Resume};
use jucode_protocol::{event_line, ApproveOp, Decision, Event, NoFields, Op, UserMessageOp};

use crate::args::{ExecArgs, GlobalArgs};

pub fn run(global: &GlobalArgs, args: &ExecArgs) -> i32 {
    let prompt = if args.prompt == "-" {
        let mut text = String::new();
        if let Err(err) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("jucode exec: cannot read the prompt from stdin: {err}");
            return 2;
        }
        text
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        eprintln!("jucode exec: the prompt is empty");
        return 2;
    }
    let resume = args.resume.clone().map(Resume::Id);
    let options = match crate::setup::engine_options(global, false, resume) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("jucode exec: {message}");
            return 2;
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime starts");
    let json = args.json;
    runtime.block_on(async move {
        let mut engine = jucode_engine::start(options);
        let send = |op: Op| {
            let _ = engine.input.send(Input::Ok(op));
        };
        send(Op::UserMessage(UserMessageOp {
            content: prompt,
            images: Vec::new(),
            files: Vec::new(),
        }));
        let mut printer = Printer::new(json);
        if json {
            let hello = Event::Hello {
                protocol: jucode_protocol::PROTOCOL_VERSION,
                version: env!("CARGO_PKG_VERSION").to_string(),
            };
            printer.line(&event_line(&hello, None));
        }
        let mut in_turn = false;
        let mut failed = false;
        while let Some(emitted) = engine.events.recv().await {
            let event = &emitted.event;
            printer.event(event, &emitted.session);
            match event {
                Event::UserMessage { .. } => in_turn = true,
                Event::Error { .. } if in_turn => failed = true,
                Event::ApprovalRequest { call_id, .. } => send(Op::Approve(ApproveOp {
                    call_id: call_id.clone(),
                    decision: Decision::Deny,
                    always: false,
                    hunks: None,
                })),
                Event::Status { message } if message == "ready" && in_turn => {
                    send(Op::Shutdown(NoFields {}));
                }
                _ => {}
            }
        }
        printer.finish();
        if failed {
            1
        } else {
            0
        }
    })
}

/// Plain-text or JSON output of the event stream.
struct Printer {
    json: bool,
    stdout: std::io::Stdout,
    answered: bool,
}

impl Printer {
    fn new(json: bool) -> Printer {
        Printer {
            json,
            stdout: std::io::stdout(),
            answered: false,
        }
    }

    fn line(&mut self, line: &str) {
        let mut out = self.stdout.lock();
        let _ = out.write_all(line.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }

    fn event(&mut self, event: &Event, session: &str) {
        if self.json {
            self.line(&event_line(event, Some(session)));
            return;
        }
        match event {
            Event::AssistantDelta { delta } => {
                self.answered = true;
                let mut out = self.stdout.lock();
                let _ = out.write_all(delta.as_bytes());
                let _ = out.flush();
            }
            Event::ToolStart { name, .. } => eprintln!("[tool] {name}"),
            Event::ToolOutput {
                name,
                output,
                is_error,
                ..
            } => {
                let first = output.lines().next().unwrap_or_default();
                let mark = if *is_error { "failed" } else { "done" };
                eprintln!("[tool] {name} {mark}: {first}");
            }
            Event::ApprovalRequest { name, summary, .. } => {
                eprintln!("[denied] {name}: {summary} (no one to approve; see --approval-mode)")
            }
            Event::Retrying { attempt, max, .. } => eprintln!("[retrying {attempt}/{max}]"),
            Event::Error { message } => eprintln!("error: {message}"),
            Event::Info { message } => eprintln!("{message}"),
            _ => {}
        }
    }

    fn finish(&mut self) {
        if !self.json && self.answered {
            self.line("");
        }
    }
}
