//! flow: ITB's traffic endpoint. One transfer (or one UDP background flow)
//! per process; CSV logs with CLOCK_MONOTONIC timestamps and a summary JSON.
//! See docs/flow.md for the command line, formats and exit codes.

mod cli;
mod clock;
mod fail;
mod net;
mod output;
mod recv;
mod send;
mod signals;
mod tcpinfo;
mod udp;

use clap::error::ErrorKind;
use clap::Parser;
use cli::{Cli, Cmd};

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return;
        }
        Err(e) => {
            // One line, as for every other error: the first line of clap's report.
            let text = e.render().to_string();
            let line = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ");
            eprintln!("flow: {line}");
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
    };
    if let Err(e) = res {
        eprintln!("flow: {}", e.msg);
        std::process::exit(e.code);
    }
}
