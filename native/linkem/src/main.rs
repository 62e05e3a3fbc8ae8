//! linkem: user-space bottleneck-link emulator (L2 bump in the wire).
//! See docs/linkem.md for the model, config and log formats.

use clap::Parser;
use linkem::config::{Config, DirConfig, Update};
use linkem::pairs::PairTable;
use linkem::pipeline::Pipeline;
use linkem::pool::Pool;
use linkem::sock::{eventfd, eventfd_signal, now_ns, PacketSocket};
use linkem::worker::{Ctl, Worker};
use linkem::{emit, logfile, logsink, monitor};
use std::io::BufRead;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Parser, Debug)]
#[command(name = "linkem", version, about = "User-space link emulator for ITB")]
struct Cli {
    /// Run the emulator with this JSON config.
    #[arg(long, value_name = "FILE.json", conflicts_with = "check")]
    config: Option<PathBuf>,
    /// Validate this JSON config and exit.
    #[arg(long, value_name = "FILE.json")]
    check: Option<PathBuf>,
}

static STOP: AtomicBool = AtomicBool::new(false);
const DIRS: [&str; 2] = ["ab", "ba"];
/// Rate assumed for sizing the pool of an unlimited direction.
const UNLIMITED_SIZING_BPS: u64 = 20_000_000_000;
const MIB: u64 = 1 << 20;

/// Virtual size of a direction's packet pool. Only touched blocks become
/// resident, so generous headroom costs address space, not memory.
fn pool_bytes(d: &DirConfig, max_extra_us: u64) -> u64 {
    let rate = d.rate_bps.unwrap_or(UNLIMITED_SIZING_BPS) as u128;
    let inflight = rate * (d.delay_us + max_extra_us) as u128 / 8_000_000;
    let queue = match (d.queue_bytes, d.queue_packets) {
        (Some(b), _) => b as u128,
        (None, Some(p)) => p as u128 * 9100,
        (None, None) if d.rate_bps.is_some() => rate / 8, // unlimited queue: 1 s of rate
        (None, None) => 0,
    };
    let b = (inflight + queue) * 2 + 64 * MIB as u128;
    b.min(64 << 30) as u64
}

fn rusage() -> (f64, f64) {
    // SAFETY: getrusage fills the struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        })
        .unwrap_or(0)
        * 1024
}

fn block_signals() -> libc::sigset_t {
    // SAFETY: sigset manipulation on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        // A closed stdout must not kill us; writes just fail.
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        set
    }
}

fn run(cfg: Config) -> Result<(), String> {
    let t_start = std::time::Instant::now();
    std::fs::create_dir_all(&cfg.log_dir)
        .map_err(|e| format!("cannot create log_dir {}: {e}", cfg.log_dir.display()))?;
    let sigset = block_signals();
    let ifs = &cfg.interfaces;
    let open = |i: usize, rx: bool| {
        PacketSocket::open(&ifs[i], rx, 64 << 20).map_err(|e| format!("socket on {}: {e}", ifs[i]))
    };
    // ab: interfaces[0] -> interfaces[1]; ba: the reverse.
    let socks = [(open(0, true)?, open(1, false)?), (open(1, true)?, open(0, false)?)];
    let dcfg = [cfg.directions.ab.clone(), cfg.directions.ba.clone()];
    let t0 = now_ns();
    let pairs = PairTable::new(&cfg.pair_delays);
    let mut total_pool = 0u64;
    let mut ctls = Vec::new();
    let mut handles = Vec::new();
    let mut writers = Vec::new();
    for (i, (rx, tx)) in socks.into_iter().enumerate() {
        let d = &dcfg[i];
        let pool = Pool::new(pool_bytes(d, cfg.max_extra_us()) as usize)
            .map_err(|e| format!("cannot map packet pool: {e}"))?;
        total_pool += pool.bytes() as u64;
        let files = logfile::LogFiles {
            dir: cfg.log_dir.clone(),
            stem: format!("linkem-{}", DIRS[i]),
            header: monitor::CSV_HEADER,
            segment_bytes: cfg.log_segment_bytes,
            keep_bytes: cfg.log_keep_bytes,
            interval_ns: cfg.interval_us * 1000,
        };
        let live = files.live();
        let (csv, wh) = logsink::LogSink::spawn(files, DIRS[i], Box::new(|line: &str| emit(line)))
            .map_err(|e| format!("cannot create {}: {e}", live.display()))?;
        writers.push(wh);
        let ctl = Arc::new(Ctl {
            flag: AtomicBool::new(false),
            pending: Mutex::new(Vec::new()),
            evfd: eventfd().map_err(|e| e.to_string())?,
        });
        ctls.push(ctl.clone());
        let pipe = Pipeline::new(
            d,
            pairs.clone(),
            cfg.seed ^ (0x9E37_79B9_7F4A_7C15u64.wrapping_mul(i as u64 + 1)),
            t0,
            cfg.interval_us * 1000,
            cfg.chunk_us * 1000,
            cfg.late_threshold_us * 1000,
        );
        let w = Worker {
            name: DIRS[i],
            rx,
            tx,
            cfg: d.clone(),
            pipe,
            pool,
            ctl,
            stop: &STOP,
            csv,
            spin_ns: cfg.spin_us * 1000,
        };
        let h = std::thread::Builder::new()
            .name(format!("linkem-{}", DIRS[i]))
            .spawn(move || w.run())
            .map_err(|e| e.to_string())?;
        handles.push(h);
    }
    emit(&format!("{{\"event\":\"ready\",\"pid\":{}}}", std::process::id()));

    let ctl_in = ctls.clone();
    std::thread::Builder::new()
        .name("linkem-stdin".into())
        .spawn(move || {
            // EOF just ends this thread: the emulator keeps running.
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                match Update::parse(&line) {
                    Ok(u) => {
                        let c = &ctl_in[u.dir];
                        c.pending.lock().unwrap().push(u);
                        c.flag.store(true, Ordering::Release);
                        eventfd_signal(c.evfd.as_raw_fd());
                    }
                    Err(e) => emit(&serde_json::json!({"event": "error", "error": e, "line": line}).to_string()),
                }
            }
        })
        .map_err(|e| e.to_string())?;

    // Wait for SIGINT/SIGTERM, or for a worker to die.
    loop {
        let ts = libc::timespec { tv_sec: 0, tv_nsec: 200_000_000 };
        // SAFETY: sigset built above; info may be null.
        let s = unsafe { libc::sigtimedwait(&sigset, std::ptr::null_mut(), &ts) };
        if s > 0 || handles.iter().any(|h| h.is_finished()) {
            break;
        }
    }
    STOP.store(true, Ordering::SeqCst);
    for c in &ctls {
        eventfd_signal(c.evfd.as_raw_fd());
    }
    let mut stats = serde_json::Map::new();
    let mut err = None;
    for (i, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(Ok(st)) => {
                stats.insert(DIRS[i].into(), serde_json::to_value(st).unwrap());
            }
            Ok(Err(e)) => err = Some(format!("direction {}: {e}", DIRS[i])),
            Err(_) => err = Some(format!("direction {} panicked", DIRS[i])),
        }
    }
    for (i, h) in writers.into_iter().enumerate() {
        match h.join() {
            Ok(report) => {
                if let Some(g) = report.log_gaps.first() {
                    eprintln!(
                        "linkem: log {}: {} rows lost in {} gap(s), the first from {} to {} ns: {}",
                        DIRS[i], report.log_rows_lost, report.log_gaps_total, g.from_ns, g.to_ns, g.error
                    );
                }
                let block = stats.entry(DIRS[i]).or_insert_with(|| serde_json::json!({}));
                if let (Some(b), serde_json::Value::Object(r)) =
                    (block.as_object_mut(), serde_json::to_value(report).unwrap())
                {
                    b.extend(r);
                }
            }
            Err(_) => err = Some(format!("log writer {} panicked", DIRS[i])),
        }
    }
    let (u, s) = rusage();
    stats.insert("peak_rss_bytes".into(), peak_rss_bytes().into());
    stats.insert("cpu_user_s".into(), u.into());
    stats.insert("cpu_sys_s".into(), s.into());
    stats.insert("wall_s".into(), t_start.elapsed().as_secs_f64().into());
    stats.insert("pool_bytes".into(), total_pool.into());
    let path = cfg.log_dir.join("linkem-stats.json");
    let text = serde_json::to_string_pretty(&serde_json::Value::Object(stats)).unwrap();
    std::fs::write(&path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn main() {
    itb_lifetime::die_with_parent();
    let cli = Cli::parse();
    let res = match (&cli.config, &cli.check) {
        (_, Some(p)) => Config::load(p).map(|_| emit("{\"event\":\"config_ok\"}")),
        (Some(p), None) => Config::load(p).and_then(run),
        (None, None) => Err("one of --config FILE.json or --check FILE.json is required".into()),
    };
    if let Err(e) = res {
        eprintln!("linkem: {e}");
        std::process::exit(2);
    }
}
