//! virtio_net_hdr handling and header rewriting for GSO chunks.
//!
//! A chunk is a contiguous range of the wire segments of one TCP GSO
//! super-packet. Its headers are derived like the kernel's tcp_gso_segment /
//! inet_gso_segment do for a segment, except that the chunk stays a GSO
//! packet (NEEDS_CSUM with the pseudo-header partial checksum in th->check).
//! All functions here are pure.

pub const VNET_HDR_LEN: usize = 10;
pub const F_NEEDS_CSUM: u8 = 1;
pub const GSO_NONE: u8 = 0;
pub const GSO_TCPV4: u8 = 1;
pub const GSO_TCPV6: u8 = 4;
pub const GSO_ECN: u8 = 0x80;
/// Headers longer than this are never rewritten (chunk kept whole).
pub const MAX_HDR: usize = 256;

const TCP_CWR: u8 = 0x80;
const TCP_PSH: u8 = 0x08;
const TCP_FIN: u8 = 0x01;

/// struct virtio_net_hdr, little endian as PACKET_VNET_HDR uses on x86/arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub hdr_len: u16,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHdr {
    pub fn from_bytes(b: &[u8; VNET_HDR_LEN]) -> Self {
        let u = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        VnetHdr { flags: b[0], gso_type: b[1], hdr_len: u(2), gso_size: u(4), csum_start: u(6), csum_offset: u(8) }
    }

    pub fn to_bytes(self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
        b
    }

    pub fn gso_kind(&self) -> u8 {
        self.gso_type & !GSO_ECN
    }
}

/// Offsets of a TCP/IP frame (Ethernet, optional single VLAN tag).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpLayout {
    pub l3_off: u16,
    pub l4_off: u16,
    pub hdr_len: u16,
    pub v6: bool,
}

#[inline]
fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

/// Offset of the L3 header and its ethertype.
#[inline]
pub fn l3(frame: &[u8]) -> Option<(usize, u16)> {
    if frame.len() < 14 {
        return None;
    }
    let et = be16(frame, 12);
    if et == 0x8100 || et == 0x88a8 {
        if frame.len() < 18 {
            return None;
        }
        return Some((18, be16(frame, 16)));
    }
    Some((14, et))
}

/// Locate the TCP header; None if the frame is not plain TCP over IPv4/IPv6
/// (IPv6 extension headers and IPv4 fragments are not split).
pub fn parse_tcp(frame: &[u8]) -> Option<TcpLayout> {
    let (l3o, et) = l3(frame)?;
    let (l4o, v6) = match et {
        0x0800 => {
            let ip = frame.get(l3o..l3o + 20)?;
            let ihl = (ip[0] & 0x0f) as usize * 4;
            if ip[0] >> 4 != 4 || ihl < 20 || ip[9] != 6 || be16(ip, 6) & 0x3fff != 0 {
                return None;
            }
            (l3o + ihl, false)
        }
        0x86dd => {
            let ip = frame.get(l3o..l3o + 40)?;
            if ip[0] >> 4 != 6 || ip[6] != 6 {
                return None;
            }
            (l3o + 40, true)
        }
        _ => return None,
    };
    let th = frame.get(l4o..l4o + 20)?;
    let doff = (th[12] >> 4) as usize * 4;
    if doff < 20 {
        return None;
    }
    let hdr_len = l4o + doff;
    if hdr_len > MAX_HDR || hdr_len > frame.len() {
        return None;
    }
    Some(TcpLayout { l3_off: l3o as u16, l4_off: l4o as u16, hdr_len: hdr_len as u16, v6 })
}

/// What the pipeline needs to know about a received frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PktMeta {
    pub frame_len: u32,
    /// Number of wire segments (1 for plain frames).
    pub nseg: u32,
    pub hdr_len: u32,
    pub gso_size: u32,
    /// Bytes after hdr_len.
    pub payload: u32,
    /// TCP GSO with NEEDS_CSUM and parsable headers: may be cut into chunks.
    pub splittable: bool,
    pub tcp: TcpLayout,
}

impl PktMeta {
    /// Wire size of segment i (headers are replicated on every segment).
    #[inline]
    pub fn seg_wire(&self, i: u32) -> u32 {
        if self.nseg <= 1 {
            return self.frame_len;
        }
        let off = i * self.gso_size;
        self.hdr_len + self.gso_size.min(self.payload - off)
    }

    /// Wire size of a full-size segment.
    pub fn full_seg_wire(&self) -> u32 {
        if self.nseg <= 1 {
            self.frame_len
        } else {
            self.hdr_len + self.gso_size
        }
    }

    /// Total wire bytes of all segments.
    pub fn wire_total(&self) -> u64 {
        if self.nseg <= 1 {
            self.frame_len as u64
        } else {
            self.payload as u64 + self.nseg as u64 * self.hdr_len as u64
        }
    }

    /// Payload byte range [start, end) (relative to hdr_len) of segments
    /// [first, first + n).
    #[inline]
    pub fn payload_range(&self, first: u32, n: u32) -> (u32, u32) {
        let s = first * self.gso_size;
        let e = ((first + n) * self.gso_size).min(self.payload);
        (s, e)
    }
}

/// Classify a received frame given its vnet header and its first bytes.
pub fn classify(v: &VnetHdr, head: &[u8], frame_len: u32) -> PktMeta {
    let plain = PktMeta { frame_len, nseg: 1, hdr_len: frame_len, ..Default::default() };
    let kind = v.gso_kind();
    if kind == GSO_NONE || v.gso_size == 0 {
        return plain;
    }
    let gso_size = v.gso_size as u32;
    let tcp = if kind == GSO_TCPV4 || kind == GSO_TCPV6 { parse_tcp(head) } else { None };
    let (hdr_len, splittable, tcp) = match tcp {
        Some(t) if (kind == GSO_TCPV6) == t.v6 && v.flags & F_NEEDS_CSUM != 0 => (t.hdr_len as u32, true, t),
        _ => {
            // Indivisible (UDP GSO, odd headers): trust the kernel's hdr_len.
            let h = if v.hdr_len as u32 > 0 && (v.hdr_len as u32) < frame_len {
                v.hdr_len as u32
            } else {
                return plain;
            };
            (h, false, TcpLayout::default())
        }
    };
    if frame_len <= hdr_len {
        return plain;
    }
    let payload = frame_len - hdr_len;
    let nseg = payload.div_ceil(gso_size);
    if nseg <= 1 {
        return plain;
    }
    PktMeta { frame_len, nseg, hdr_len, gso_size, payload, splittable, tcp }
}

/// Ones-complement sum of big-endian 16-bit words (odd tail padded).
pub fn csum_add(mut sum: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [x] = chunks.remainder() {
        sum += (*x as u64) << 8;
    }
    sum
}

pub fn csum_fold(mut sum: u64) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// Folded (not complemented) pseudo-header sum: what th->check holds under
/// CHECKSUM_PARTIAL (= ~tcp_v4_check(len, s, d, 0) in the kernel).
pub fn tcp_pseudo_partial(frame: &[u8], t: &TcpLayout, tcp_len: u32) -> u16 {
    let l3 = t.l3_off as usize;
    let mut s = 6u64 + (tcp_len >> 16) as u64 + (tcp_len & 0xffff) as u64;
    s = if t.v6 { csum_add(s, &frame[l3 + 8..l3 + 40]) } else { csum_add(s, &frame[l3 + 12..l3 + 20]) };
    csum_fold(s)
}

/// Build the headers of the chunk [first, first+n) of a splittable packet
/// into `out` (at least m.hdr_len bytes). `orig` holds the original headers.
/// Returns the chunk's payload length.
pub fn rewrite_headers(orig: &[u8], m: &PktMeta, first: u32, n: u32, out: &mut [u8]) -> u32 {
    let h = m.hdr_len as usize;
    let t = &m.tcp;
    out[..h].copy_from_slice(&orig[..h]);
    let (ps, pe) = m.payload_range(first, n);
    let plen = pe - ps;
    let frame_len = m.hdr_len + plen;
    let l3 = t.l3_off as usize;
    let l4 = t.l4_off as usize;
    let l3_len = frame_len - l3 as u32;
    if t.v6 {
        out[l3 + 4..l3 + 6].copy_from_slice(&((l3_len - 40) as u16).to_be_bytes());
    } else {
        out[l3 + 2..l3 + 4].copy_from_slice(&(l3_len as u16).to_be_bytes());
        let id = be16(orig, l3 + 4).wrapping_add(first as u16);
        out[l3 + 4..l3 + 6].copy_from_slice(&id.to_be_bytes());
        out[l3 + 10..l3 + 12].copy_from_slice(&[0, 0]);
        let ihl = l4 - l3;
        let c = !csum_fold(csum_add(0, &out[l3..l3 + ihl]));
        out[l3 + 10..l3 + 12].copy_from_slice(&c.to_be_bytes());
    }
    let seq = u32::from_be_bytes([orig[l4 + 4], orig[l4 + 5], orig[l4 + 6], orig[l4 + 7]]);
    out[l4 + 4..l4 + 8].copy_from_slice(&seq.wrapping_add(ps).to_be_bytes());
    let mut flags = orig[l4 + 13];
    if first != 0 {
        flags &= !TCP_CWR;
    }
    if first + n < m.nseg {
        flags &= !(TCP_FIN | TCP_PSH);
    }
    out[l4 + 13] = flags;
    let tcp_len = frame_len - l4 as u32;
    let c = tcp_pseudo_partial(out, t, tcp_len);
    out[l4 + 16..l4 + 18].copy_from_slice(&c.to_be_bytes());
    plen
}

/// vnet header for the chunk [first, first+n).
pub fn chunk_vnet(orig: &VnetHdr, m: &PktMeta, n: u32) -> VnetHdr {
    VnetHdr {
        flags: F_NEEDS_CSUM,
        gso_type: if n > 1 { orig.gso_type } else { GSO_NONE },
        hdr_len: m.hdr_len as u16,
        gso_size: if n > 1 { m.gso_size as u16 } else { 0 },
        csum_start: m.tcp.l4_off,
        csum_offset: 16,
    }
}

/// vnet header for forwarding a frame unchanged (DATA_VALID is rx-only).
pub fn forward_vnet(orig: &VnetHdr) -> VnetHdr {
    VnetHdr { flags: orig.flags & F_NEEDS_CSUM /* drop DATA_VALID */, ..*orig }
}

#[cfg(test)]
pub mod testpkt {
    //! Hand-built TCP GSO packets as the kernel's TCP sender would hand them
    //! to a device: th->check = pseudo-header partial sum for the full length.
    use super::*;

    pub const SEQ: u32 = 0xfffff000; // wraps inside the packet
    pub const ID: u16 = 0xfffe;

    pub fn build(v6: bool, payload: usize, mss: u16, flags: u8) -> (VnetHdr, Vec<u8>) {
        let mut f = vec![0u8; 14];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        let l3 = 14;
        if v6 {
            f[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
            let mut ip = vec![0u8; 40];
            ip[0] = 0x60;
            ip[4..6].copy_from_slice(&((32 + payload) as u16).to_be_bytes());
            ip[6] = 6;
            ip[7] = 64;
            ip[8..24].copy_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
            ip[24..40].copy_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
            f.extend_from_slice(&ip);
        } else {
            f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
            let mut ip = vec![0u8; 20];
            ip[0] = 0x45;
            ip[2..4].copy_from_slice(&((20 + 32 + payload) as u16).to_be_bytes());
            ip[4..6].copy_from_slice(&ID.to_be_bytes());
            ip[6] = 0x40; // DF
            ip[8] = 64;
            ip[9] = 6;
            ip[12..16].copy_from_slice(&[198, 18, 0, 1]);
            ip[16..20].copy_from_slice(&[198, 18, 0, 2]);
            let c = !csum_fold(csum_add(0, &ip));
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            f.extend_from_slice(&ip);
        }
        let l4 = f.len();
        let mut th = vec![0u8; 32]; // 12 bytes of options (timestamps)
        th[0..2].copy_from_slice(&40000u16.to_be_bytes());
        th[2..4].copy_from_slice(&5201u16.to_be_bytes());
        th[4..8].copy_from_slice(&SEQ.to_be_bytes());
        th[8..12].copy_from_slice(&0x01020304u32.to_be_bytes());
        th[12] = 8 << 4;
        th[13] = flags;
        th[14..16].copy_from_slice(&1000u16.to_be_bytes());
        th[20..32].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        f.extend_from_slice(&th);
        for i in 0..payload {
            f.push((i * 7 + i / 251) as u8);
        }
        let t = parse_tcp(&f).unwrap();
        let tcp_len = (f.len() - l4) as u32;
        let c = tcp_pseudo_partial(&f, &t, tcp_len);
        f[l4 + 16..l4 + 18].copy_from_slice(&c.to_be_bytes());
        let v = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: if v6 { GSO_TCPV6 } else { GSO_TCPV4 },
            hdr_len: (l4 + 32) as u16,
            gso_size: mss,
            csum_start: l4 as u16,
            csum_offset: 16,
        };
        let _ = l3;
        (v, f)
    }

    /// Complete a CHECKSUM_PARTIAL frame as a NIC would.
    pub fn complete_csum(frame: &mut [u8], csum_start: usize, csum_offset: usize) {
        let c = !csum_fold(csum_add(0, &frame[csum_start..]));
        frame[csum_start + csum_offset..csum_start + csum_offset + 2].copy_from_slice(&c.to_be_bytes());
    }

    /// Full TCP checksum verification over pseudo-header + segment.
    pub fn tcp_csum_ok(frame: &[u8]) -> bool {
        let t = parse_tcp(frame).unwrap();
        let l3 = t.l3_off as usize;
        let l4 = t.l4_off as usize;
        let tcp_len = (frame.len() - l4) as u64;
        let mut s = 6 + (tcp_len >> 16) + (tcp_len & 0xffff);
        s = if t.v6 { csum_add(s, &frame[l3 + 8..l3 + 40]) } else { csum_add(s, &frame[l3 + 12..l3 + 20]) };
        csum_fold(csum_add(s, &frame[l4..])) == 0xffff
    }

    pub fn ipv4_csum_ok(frame: &[u8]) -> bool {
        let ihl = (frame[14] & 0xf) as usize * 4;
        csum_fold(csum_add(0, &frame[14..14 + ihl])) == 0xffff
    }
}

#[cfg(test)]
mod tests {
    use super::testpkt::*;
    use super::*;

    #[test]
    fn vnet_roundtrip() {
        let v = VnetHdr { flags: 1, gso_type: 0x81, hdr_len: 66, gso_size: 1448, csum_start: 34, csum_offset: 16 };
        assert_eq!(VnetHdr::from_bytes(&v.to_bytes()), v);
        assert_eq!(v.gso_kind(), GSO_TCPV4);
    }

    #[test]
    fn classify_plain_and_gso() {
        let (v, f) = build(false, 10_000, 1448, 0x18);
        let m = classify(&v, &f, f.len() as u32);
        assert!(m.splittable);
        assert_eq!(m.hdr_len, 66);
        assert_eq!(m.nseg, 7); // 6 * 1448 = 8688, 7th has 1312
        assert_eq!(m.seg_wire(0), 66 + 1448);
        assert_eq!(m.seg_wire(6), 66 + 1312);
        let total: u64 = (0..m.nseg).map(|i| m.seg_wire(i) as u64).sum();
        assert_eq!(total, m.wire_total());
        let plain = VnetHdr::default();
        let m = classify(&plain, &f, f.len() as u32);
        assert_eq!((m.nseg, m.splittable, m.seg_wire(0)), (1, false, f.len() as u32));
        // GSO with payload <= gso_size is one segment
        let (v, f) = build(true, 1000, 1448, 0x18);
        assert_eq!(classify(&v, &f, f.len() as u32).nseg, 1);
    }

    #[test]
    fn original_packet_checksum_completes() {
        for v6 in [false, true] {
            let (v, mut f) = build(v6, 5000, 1448, 0x18);
            complete_csum(&mut f, v.csum_start as usize, v.csum_offset as usize);
            assert!(tcp_csum_ok(&f));
        }
    }

    /// Segment the packet into every possible chunking and check each field
    /// against the expected per-segment values, then that the payloads
    /// concatenate back to the original.
    #[test]
    fn rewrite_every_chunking() {
        for v6 in [false, true] {
            for flags in [0x18u8, 0x19, 0x98 /* CWR|ACK|PSH */] {
                let payload = 9000;
                let mss = 1448u32;
                let (v, f) = build(v6, payload, mss as u16, flags);
                let m = classify(&v, &f, f.len() as u32);
                assert!(m.splittable);
                let h = m.hdr_len as usize;
                for csize in 1..=m.nseg {
                    let mut rebuilt_payload = Vec::new();
                    let mut first = 0;
                    while first < m.nseg {
                        let n = csize.min(m.nseg - first);
                        let mut hdr = [0u8; MAX_HDR];
                        let plen = rewrite_headers(&f, &m, first, n, &mut hdr);
                        let (ps, pe) = m.payload_range(first, n);
                        assert_eq!(plen, pe - ps);
                        let mut seg = hdr[..h].to_vec();
                        seg.extend_from_slice(&f[h + ps as usize..h + pe as usize]);
                        rebuilt_payload.extend_from_slice(&seg[h..]);
                        let t = parse_tcp(&seg).unwrap();
                        let l3 = t.l3_off as usize;
                        let l4 = t.l4_off as usize;
                        if v6 {
                            assert_eq!(be16(&seg, l3 + 4) as usize, seg.len() - l3 - 40);
                        } else {
                            assert_eq!(be16(&seg, l3 + 2) as usize, seg.len() - l3);
                            assert_eq!(be16(&seg, l3 + 4), ID.wrapping_add(first as u16));
                            assert!(ipv4_csum_ok(&seg));
                        }
                        let seq = u32::from_be_bytes(seg[l4 + 4..l4 + 8].try_into().unwrap());
                        assert_eq!(seq, SEQ.wrapping_add(first * mss));
                        let fl = seg[l4 + 13];
                        let last = first + n == m.nseg;
                        assert_eq!(fl & TCP_CWR != 0, first == 0 && flags & TCP_CWR != 0);
                        assert_eq!(fl & TCP_PSH != 0, last && flags & TCP_PSH != 0);
                        assert_eq!(fl & TCP_FIN != 0, last && flags & TCP_FIN != 0);
                        assert_eq!(fl & 0x10, 0x10); // ACK kept
                                                     // everything else in the headers is unchanged
                        assert_eq!(seg[..l3], f[..l3]);
                        assert_eq!(seg[l4..l4 + 4], f[l4..l4 + 4]);
                        assert_eq!(seg[l4 + 8..l4 + 13], f[l4 + 8..l4 + 13]);
                        assert_eq!(seg[l4 + 18..h], f[l4 + 18..h]);
                        let cv = chunk_vnet(&v, &m, n);
                        assert_eq!(cv.gso_type, if n > 1 { v.gso_type } else { GSO_NONE });
                        assert_eq!(cv.csum_start as usize, l4);
                        // completing the partial checksum gives a valid segment
                        complete_csum(&mut seg, cv.csum_start as usize, cv.csum_offset as usize);
                        assert!(tcp_csum_ok(&seg), "v6={v6} first={first} n={n}");
                        first += n;
                    }
                    assert_eq!(rebuilt_payload, f[h..]);
                }
            }
        }
    }

    #[test]
    fn whole_range_rewrite_equals_original() {
        for v6 in [false, true] {
            let (v, f) = build(v6, 4000, 1000, 0x19);
            let m = classify(&v, &f, f.len() as u32);
            let mut hdr = [0u8; MAX_HDR];
            rewrite_headers(&f, &m, 0, m.nseg, &mut hdr);
            assert_eq!(hdr[..m.hdr_len as usize], f[..m.hdr_len as usize]);
        }
    }

    #[test]
    fn non_tcp_gso_is_indivisible() {
        let (mut v, f) = build(false, 5000, 1000, 0x18);
        v.gso_type = 5; // UDP_L4
        let m = classify(&v, &f, f.len() as u32);
        assert!(!m.splittable);
        assert_eq!(m.nseg, 5);
        assert_eq!(m.hdr_len, 66);
        // no NEEDS_CSUM: not splittable either
        let (mut v, f) = build(false, 5000, 1000, 0x18);
        v.flags = 0;
        assert!(!classify(&v, &f, f.len() as u32).splittable);
    }
}
