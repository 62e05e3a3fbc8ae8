//! flow: ITB's traffic endpoint. One transfer (or one UDP background flow)
//! per process; CSV logs with CLOCK_MONOTONIC timestamps and a summary JSON.
//! See docs/flow.md for the command line, formats and exit codes.

mod cli;
mod clock;
mod fail;
mod net;
mod output;
mod profile;
mod recv;
mod send;
mod signals;
mod tcpinfo;
mod udp;

use clap::error::ErrorKind;
use clap::Parser;
use cli::{Cli, Cmd};

fn main() {
    itb_lifetime::die_with_parent();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return;
        }
        Err(e) => {
            // One line, as for every other error: clap's report up to its usage
            // part, so a list of missing arguments stays in it.
            let text = e.render().to_string();
            let head: Vec<&str> = text.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
            let line = head.join(" ");
            let line = line.trim_start_matches("error: ");
            eprintln!("flow: {}", if line.is_empty() { "bad arguments" } else { line });
            std::process::exit(fail::USAGE);
        }
    };
    signals::install();
    clock::tight_timer_slack();
    let res = match &cli.cmd {
        Cmd::Recv(a) => recv::run(a),
        Cmd::Send(a) => send::run(a),
        Cmd::UdpSend(a) => udp::send(a),
        Cmd::UdpRecv(a) => udp::recv(a),
        Cmd::ProfileEval(a) => profile::eval(a),
    };
    if let Err(e) = res {
        eprintln!("flow: {}", e.msg);
        std::process::exit(e.code);
    }
}
