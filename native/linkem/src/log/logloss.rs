//! What one direction's log lost: rows, and the gaps they make in the series (runs of
//! consecutive lost rows), each reported as it opens and as it closes, and summed up in
//! linkem-stats.json at exit.

use serde::Serialize;

/// Gaps listed in full in the stats; more are only counted.
pub const MAX_LISTED_GAPS: usize = 256;

/// Lost rows: how many, and the start times (t_ns) of the first and the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub rows: u64,
    pub first: u64,
    pub last: u64,
}

impl Span {
    /// From `logfile::row_span`; None if there are no rows or their times do not parse.
    pub fn of(span: (u64, Option<u64>, Option<u64>)) -> Option<Span> {
        match span {
            (rows, Some(first), Some(last)) if rows > 0 => Some(Span { rows, first, last }),
            _ => None,
        }
    }

    pub fn merge(a: Option<Span>, b: Span) -> Span {
        match a {
            None => b,
            Some(a) => Span { rows: a.rows + b.rows, first: a.first, last: b.last },
        }
    }
}

/// Rows missing from the log: those of the intervals from `from_ns` to `to_ns` (end
/// excluded), and why the first of them could not be written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Gap {
    pub from_ns: u64,
    pub to_ns: u64,
    pub rows: u64,
    pub error: String,
}

/// Added to the direction's block of linkem-stats.json.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LogReport {
    pub log_rows: u64,
    pub log_rows_lost: u64,
    pub log_gaps_total: u64,
    pub log_gaps: Vec<Gap>,
}

pub type Events = Box<dyn FnMut(&str) + Send>;

pub struct Account {
    dir: String,
    interval_ns: u64,
    report: LogReport,
    open: Option<Gap>,
    events: Events,
}

fn now_ns() -> u64 {
    crate::sock::now_ns()
}

impl Account {
    pub fn new(dir: String, interval_ns: u64, events: Events) -> Account {
        Account { dir, interval_ns, report: LogReport::default(), open: None, events }
    }

    /// Rows that reached the file: they end the open gap, if any.
    pub fn written(&mut self, rows: u64) {
        if rows == 0 {
            return;
        }
        self.report.log_rows += rows;
        if let Some(g) = self.open.take() {
            self.close(g, true);
        }
    }

    /// Rows that did not: they open a gap (reported at once) or extend the open one.
    pub fn lost(&mut self, span: Span, error: &str) {
        self.report.log_rows_lost += span.rows;
        let to_ns = span.last + self.interval_ns;
        if let Some(g) = self.open.as_mut() {
            g.to_ns = to_ns;
            g.rows += span.rows;
            return;
        }
        let g = Gap { from_ns: span.first, to_ns, rows: span.rows, error: error.to_string() };
        let ev = serde_json::json!({"event": "log_error", "dir": self.dir, "t_ns": now_ns(),
                                    "from_ns": g.from_ns, "error": g.error});
        (self.events)(&ev.to_string());
        self.open = Some(g);
    }

    fn close(&mut self, g: Gap, resumed: bool) {
        let ev = serde_json::json!({"event": "log_gap", "dir": self.dir, "t_ns": now_ns(),
                                    "from_ns": g.from_ns, "to_ns": g.to_ns, "rows": g.rows,
                                    "error": g.error, "resumed": resumed});
        (self.events)(&ev.to_string());
        self.report.log_gaps_total += 1;
        if self.report.log_gaps.len() < MAX_LISTED_GAPS {
            self.report.log_gaps.push(g);
        }
    }

    /// At exit: a gap still open ends with the log.
    pub fn finish(mut self) -> LogReport {
        if let Some(g) = self.open.take() {
            self.close(g, false);
        }
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn account() -> (Account, Arc<Mutex<Vec<serde_json::Value>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let a =
            Account::new("ab".into(), 10, Box::new(move |l| s.lock().unwrap().push(serde_json::from_str(l).unwrap())));
        (a, seen)
    }

    #[test]
    fn a_gap_opens_grows_and_closes_with_one_event_each_way() {
        let (mut a, seen) = account();
        a.written(3);
        a.lost(Span { rows: 2, first: 30, last: 40 }, "No space left on device");
        assert_eq!(seen.lock().unwrap().len(), 1, "reported as soon as it opens");
        a.lost(Span { rows: 1, first: 50, last: 50 }, "Input/output error");
        a.written(0);
        a.written(4);
        a.lost(Span { rows: 1, first: 100, last: 100 }, "EIO");
        let r = a.finish();
        assert_eq!((r.log_rows, r.log_rows_lost, r.log_gaps_total), (7, 4, 2));
        assert_eq!(r.log_gaps[0], Gap { from_ns: 30, to_ns: 60, rows: 3, error: "No space left on device".into() });
        assert_eq!(r.log_gaps[1].to_ns, 110);
        let ev = seen.lock().unwrap();
        let kinds: Vec<&str> = ev.iter().map(|e| e["event"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["log_error", "log_gap", "log_error", "log_gap"]);
        assert_eq!(ev[1]["from_ns"], 30);
        assert_eq!(ev[1]["to_ns"], 60);
        assert_eq!(ev[1]["resumed"], true);
        assert_eq!(ev[3]["resumed"], false);
        assert_eq!(ev[0]["dir"], "ab");
    }

    #[test]
    fn only_the_first_gaps_are_listed() {
        let (mut a, _) = account();
        for i in 0..(MAX_LISTED_GAPS as u64 + 5) {
            a.lost(Span { rows: 1, first: i * 100, last: i * 100 }, "x");
            a.written(1);
        }
        let r = a.finish();
        assert_eq!(r.log_gaps.len(), MAX_LISTED_GAPS);
        assert_eq!(r.log_gaps_total, MAX_LISTED_GAPS as u64 + 5);
    }
}
