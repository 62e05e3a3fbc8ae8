//! Extra delay per (src IP, dst IP) pair: maps a frame to its delay class.

use crate::config::PairDelay;
use crate::gso::l3;
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct PairTable {
    map: HashMap<([u8; 16], [u8; 16]), usize>,
    /// Extra delay (ns) of each class; class 0 is "no extra".
    extras_ns: Vec<u64>,
}

fn key16(ip: &std::net::IpAddr) -> [u8; 16] {
    match ip {
        std::net::IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        std::net::IpAddr::V6(a) => a.octets(),
    }
}

impl Default for PairTable {
    fn default() -> Self {
        PairTable::new(&[])
    }
}

impl PairTable {
    pub fn new(pairs: &[PairDelay]) -> Self {
        let mut extras_ns = vec![0u64];
        let mut map = HashMap::new();
        for p in pairs {
            let ns = p.extra_us * 1000;
            let class = match extras_ns.iter().position(|&e| e == ns) {
                Some(c) => c,
                None => {
                    extras_ns.push(ns);
                    extras_ns.len() - 1
                }
            };
            map.insert((key16(&p.src), key16(&p.dst)), class);
        }
        PairTable { map, extras_ns }
    }

    pub fn nclasses(&self) -> usize {
        self.extras_ns.len()
    }

    pub fn extra_ns(&self, class: usize) -> u64 {
        self.extras_ns[class]
    }

    /// Delay class of an Ethernet frame (0 when no pair matches).
    #[inline]
    pub fn class_of(&self, frame: &[u8]) -> usize {
        if self.map.is_empty() {
            return 0;
        }
        let Some((o, et)) = l3(frame) else { return 0 };
        let mut s = [0u8; 16];
        let mut d = [0u8; 16];
        match et {
            0x0800 if frame.len() >= o + 20 => {
                s[10] = 0xff;
                s[11] = 0xff;
                d[10] = 0xff;
                d[11] = 0xff;
                s[12..].copy_from_slice(&frame[o + 12..o + 16]);
                d[12..].copy_from_slice(&frame[o + 16..o + 20]);
            }
            0x86dd if frame.len() >= o + 40 => {
                s.copy_from_slice(&frame[o + 8..o + 24]);
                d.copy_from_slice(&frame[o + 24..o + 40]);
            }
            _ => return 0,
        }
        self.map.get(&(s, d)).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gso::testpkt::build;

    #[test]
    fn matches_exact_pairs_both_families() {
        let pairs = vec![
            PairDelay { src: "198.18.0.1".parse().unwrap(), dst: "198.18.0.2".parse().unwrap(), extra_us: 5000 },
            PairDelay { src: "2001:db8::1".parse().unwrap(), dst: "2001:db8::2".parse().unwrap(), extra_us: 7 },
            PairDelay { src: "198.18.0.9".parse().unwrap(), dst: "198.18.0.2".parse().unwrap(), extra_us: 5000 },
        ];
        let t = PairTable::new(&pairs);
        assert_eq!(t.nclasses(), 3);
        let (_, f4) = build(false, 100, 1448, 0x10);
        let (_, f6) = build(true, 100, 1448, 0x10);
        assert_eq!(t.extra_ns(t.class_of(&f4)), 5_000_000);
        assert_eq!(t.extra_ns(t.class_of(&f6)), 7_000);
        // reversed direction does not match
        let mut r = f4.clone();
        r.swap(14 + 15, 14 + 19);
        assert_eq!(t.class_of(&r), 0);
        assert_eq!(t.class_of(&[0u8; 10]), 0);
        let arp = {
            let mut a = vec![0u8; 42];
            a[12] = 0x08;
            a[13] = 0x06;
            a
        };
        assert_eq!(t.class_of(&arp), 0);
        assert_eq!(PairTable::new(&[]).class_of(&f4), 0);
    }
}
