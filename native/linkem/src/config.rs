//! Configuration file (JSON) and runtime updates (JSON lines on stdin).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::net::IpAddr;
use std::path::PathBuf;

#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LossModel {
    None,
    Bernoulli,
    GilbertElliott,
}

#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LossConfig {
    pub model: LossModel,
    #[serde(default)]
    pub p: f64,
    #[serde(default = "one_f")]
    pub r: f64,
    #[serde(default)]
    pub loss_good: f64,
    #[serde(default = "one_f")]
    pub loss_bad: f64,
}

impl Default for LossConfig {
    fn default() -> Self {
        LossConfig { model: LossModel::None, p: 0.0, r: 1.0, loss_good: 0.0, loss_bad: 1.0 }
    }
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DirConfig {
    #[serde(default)]
    pub rate_bps: Option<u64>,
    #[serde(default)]
    pub delay_us: u64,
    #[serde(default)]
    pub queue_bytes: Option<u64>,
    #[serde(default)]
    pub queue_packets: Option<u64>,
    #[serde(default)]
    pub loss: LossConfig,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Directions {
    pub ab: DirConfig,
    pub ba: DirConfig,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct PairDelay {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub extra_us: u64,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub interfaces: [String; 2],
    #[serde(default = "one_u")]
    pub seed: u64,
    #[serde(default = "d_interval")]
    pub interval_us: u64,
    #[serde(default = "d_chunk")]
    pub chunk_us: u64,
    #[serde(default = "d_late")]
    pub late_threshold_us: u64,
    #[serde(default)]
    pub spin_us: u64,
    pub log_dir: PathBuf,
    /// Start a new log segment once the live one holds this many bytes (0: never).
    #[serde(default)]
    pub log_segment_bytes: u64,
    /// Delete the oldest closed segments while they hold more than this (0: keep all).
    #[serde(default)]
    pub log_keep_bytes: u64,
    pub directions: Directions,
    #[serde(default)]
    pub pair_delays: Vec<PairDelay>,
}

fn one_f() -> f64 {
    1.0
}
fn one_u() -> u64 {
    1
}
fn d_interval() -> u64 {
    1000
}
fn d_chunk() -> u64 {
    100
}
fn d_late() -> u64 {
    200
}

/// One writer buffer: a segment holds at least one shipment of rows.
pub const MIN_SEGMENT_BYTES: u64 = 1 << 16;

/// Delays above this are surely a unit mistake (1000 s).
const MAX_DELAY_US: u64 = 1_000_000_000;

fn check_prob(name: &str, v: f64) -> Result<(), String> {
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("{name} must be within [0, 1], got {v}"));
    }
    Ok(())
}

pub fn validate_loss(l: &LossConfig, at: &str) -> Result<(), String> {
    check_prob(&format!("{at}.loss.p"), l.p)?;
    check_prob(&format!("{at}.loss.r"), l.r)?;
    check_prob(&format!("{at}.loss.loss_good"), l.loss_good)?;
    check_prob(&format!("{at}.loss.loss_bad"), l.loss_bad)?;
    Ok(())
}

pub fn validate_dir(d: &DirConfig, at: &str) -> Result<(), String> {
    if d.rate_bps == Some(0) {
        return Err(format!("{at}.rate_bps must be > 0 or null (unlimited)"));
    }
    if d.delay_us > MAX_DELAY_US {
        return Err(format!("{at}.delay_us too large: {}", d.delay_us));
    }
    validate_loss(&d.loss, at)
}

impl Config {
    pub fn parse(text: &str) -> Result<Config, String> {
        let c: Config = serde_json::from_str(text).map_err(|e| format!("bad config: {e}"))?;
        c.validate()?;
        Ok(c)
    }

    pub fn load(path: &std::path::Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read config {}: {e}", path.display()))?;
        Config::parse(&text)
    }

    pub fn validate(&self) -> Result<(), String> {
        for (i, name) in self.interfaces.iter().enumerate() {
            if name.is_empty() || name.len() >= libc::IF_NAMESIZE {
                return Err(format!("interfaces[{i}] is not a valid interface name: {name:?}"));
            }
        }
        if self.interfaces[0] == self.interfaces[1] {
            return Err("interfaces must be two different interfaces".into());
        }
        if self.interval_us == 0 {
            return Err("interval_us must be > 0".into());
        }
        if self.chunk_us == 0 {
            return Err("chunk_us must be > 0".into());
        }
        if self.log_segment_bytes != 0 && self.log_segment_bytes < MIN_SEGMENT_BYTES {
            return Err(format!("log_segment_bytes must be 0 (one file) or at least {MIN_SEGMENT_BYTES}"));
        }
        if self.log_keep_bytes != 0 && self.log_segment_bytes == 0 {
            return Err("log_keep_bytes needs log_segment_bytes (only closed segments are deleted)".into());
        }
        validate_dir(&self.directions.ab, "directions.ab")?;
        validate_dir(&self.directions.ba, "directions.ba")?;
        for (i, p) in self.pair_delays.iter().enumerate() {
            if p.src.is_ipv4() != p.dst.is_ipv4() {
                return Err(format!("pair_delays[{i}]: src and dst must be the same IP family"));
            }
            if p.extra_us > MAX_DELAY_US {
                return Err(format!("pair_delays[{i}].extra_us too large"));
            }
        }
        Ok(())
    }

    pub fn max_extra_us(&self) -> u64 {
        self.pair_delays.iter().map(|p| p.extra_us).max().unwrap_or(0)
    }
}

/// A runtime change for one direction; None = field absent (unchanged).
/// `rate_bps: Some(None)` means "set unlimited"; same for the queue limits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Update {
    pub dir: usize,
    pub rate_bps: Option<Option<u64>>,
    pub delay_us: Option<u64>,
    pub queue_bytes: Option<Option<u64>>,
    pub queue_packets: Option<Option<u64>>,
    pub loss: Option<LossConfig>,
}

fn opt_u64(v: &Value, key: &str) -> Result<Option<u64>, String> {
    match v {
        Value::Null => Ok(None),
        _ => v.as_u64().map(Some).ok_or_else(|| format!("{key} must be a non-negative integer or null")),
    }
}

impl Update {
    pub fn parse(line: &str) -> Result<Update, String> {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("bad JSON: {e}"))?;
        let obj = v.as_object().ok_or("update must be a JSON object")?;
        let mut u = Update::default();
        let mut dir_seen = false;
        for (k, val) in obj {
            match k.as_str() {
                "dir" => {
                    u.dir = match val.as_str() {
                        Some("ab") => 0,
                        Some("ba") => 1,
                        _ => return Err("dir must be \"ab\" or \"ba\"".into()),
                    };
                    dir_seen = true;
                }
                "rate_bps" => u.rate_bps = Some(opt_u64(val, k)?),
                "delay_us" => u.delay_us = Some(val.as_u64().ok_or("delay_us must be a non-negative integer")?),
                "queue_bytes" => u.queue_bytes = Some(opt_u64(val, k)?),
                "queue_packets" => u.queue_packets = Some(opt_u64(val, k)?),
                "loss" => {
                    let l: LossConfig = serde_json::from_value(val.clone()).map_err(|e| format!("bad loss: {e}"))?;
                    u.loss = Some(l)
                }
                _ => return Err(format!("unknown field {k:?}")),
            }
        }
        if !dir_seen {
            return Err("missing dir".into());
        }
        let mut probe = DirConfig::default();
        u.apply_to(&mut probe);
        validate_dir(&probe, "update")?;
        Ok(u)
    }

    pub fn apply_to(&self, d: &mut DirConfig) {
        if let Some(r) = self.rate_bps {
            d.rate_bps = r;
        }
        if let Some(x) = self.delay_us {
            d.delay_us = x;
        }
        if let Some(q) = self.queue_bytes {
            d.queue_bytes = q;
        }
        if let Some(q) = self.queue_packets {
            d.queue_packets = q;
        }
        if let Some(l) = &self.loss {
            d.loss = l.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"{
      "interfaces": ["a0", "b0"], "seed": 1, "interval_us": 1000, "chunk_us": 100,
      "late_threshold_us": 200, "spin_us": 0, "log_dir": "/tmp/x",
      "directions": {
        "ab": {"rate_bps": 1000000000, "delay_us": 10000, "queue_bytes": 2500000, "queue_packets": null,
               "loss": {"model": "bernoulli", "p": 0.01, "r": 1.0, "loss_good": 0.0, "loss_bad": 1.0}},
        "ba": {"rate_bps": null, "delay_us": 10000, "queue_bytes": null, "queue_packets": null,
               "loss": {"model": "none", "p": 0.0, "r": 1.0, "loss_good": 0.0, "loss_bad": 1.0}}
      },
      "pair_delays": [{"src": "198.18.1.2", "dst": "198.18.2.2", "extra_us": 5000}]
    }"#;

    #[test]
    fn parses_example() {
        let c = Config::parse(EXAMPLE).unwrap();
        assert_eq!(c.interfaces[1], "b0");
        assert_eq!(c.directions.ab.rate_bps, Some(1_000_000_000));
        assert_eq!(c.directions.ba.rate_bps, None);
        assert_eq!(c.directions.ab.loss.model, LossModel::Bernoulli);
        assert_eq!(c.max_extra_us(), 5000);
    }

    #[test]
    fn rejects_bad() {
        let bad = EXAMPLE.replace("\"p\": 0.01", "\"p\": 1.5");
        assert!(Config::parse(&bad).unwrap_err().contains("loss.p"));
        let bad = EXAMPLE.replace("\"b0\"", "\"a0\"");
        assert!(Config::parse(&bad).is_err());
        let tiny = EXAMPLE.replace("\"spin_us\": 0", "\"spin_us\": 0, \"log_segment_bytes\": 1000");
        assert!(Config::parse(&tiny).unwrap_err().contains("log_segment_bytes"));
        let keep = EXAMPLE.replace("\"spin_us\": 0", "\"spin_us\": 0, \"log_keep_bytes\": 9000000");
        assert!(Config::parse(&keep).unwrap_err().contains("log_keep_bytes needs"));
        let bad = EXAMPLE.replace("bernoulli", "weird");
        assert!(Config::parse(&bad).is_err());
        let bad = EXAMPLE.replace("\"seed\"", "\"sead\"");
        assert!(Config::parse(&bad).is_err());
    }

    #[test]
    fn parses_updates() {
        let u = Update::parse(r#"{"dir":"ab","rate_bps":500000000}"#).unwrap();
        assert_eq!(u.dir, 0);
        assert_eq!(u.rate_bps, Some(Some(500_000_000)));
        let u = Update::parse(r#"{"dir":"ba","rate_bps":null,"delay_us":5,"queue_packets":10}"#).unwrap();
        assert_eq!(u.dir, 1);
        assert_eq!(u.rate_bps, Some(None));
        assert_eq!(u.queue_packets, Some(Some(10)));
        assert!(u.queue_bytes.is_none());
        let u = Update::parse(r#"{"dir":"ab","loss":{"model":"bernoulli","p":0.1}}"#).unwrap();
        assert_eq!(u.loss.unwrap().p, 0.1);
        assert!(Update::parse(r#"{"rate_bps":1}"#).is_err());
        assert!(Update::parse(r#"{"dir":"ab","rate_bps":0}"#).is_err());
        assert!(Update::parse(r#"{"dir":"ab","bogus":0}"#).is_err());
        assert!(Update::parse("nope").is_err());
    }
}
