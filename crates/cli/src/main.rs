//! The `jucode` binary: argument parsing and the thin adapters (serve, exec,
//! acp) over the engine's op/event channels.

mod acp;
mod args;
mod exec;
mod serve;
mod setup;

use clap::Parser;

use args::{Cli, Command};

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Some(Command::Serve(ref serve_args)) if serve_args.print_schema => {
            let schema = jucode_protocol::protocol_schema();
            println!(
                "{}",
                serde_json::to_string_pretty(&schema).expect("schema serializes")
            );
            0
        }
        Some(Command::Serve(ref serve_args)) => serve::run(&cli.global, serve_args),
        Some(Command::Exec(ref exec_args)) => exec::run(&cli.global, exec_args),
        Some(Command::Acp(ref acp_args)) => acp::run(&cli.global, acp_args),
        None if cli.headless.is_some() => {
            let exec_args = args::ExecArgs {
                json: true,
                resume: None,
                prompt: cli.headless.clone().unwrap_or_default(),
            };
            exec::run(&cli.global, &exec_args)
        }
        None => {
            eprintln!("jucode: no subcommand given; try `jucode serve` or `jucode --help`");
            2
        }
    };
    std::process::exit(code);
}
