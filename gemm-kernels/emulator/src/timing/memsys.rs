//! The memory system as one CU sees it: its vector L1 (an LRU of 128-byte lines), its
//! share of the XCD's L2 bandwidth, of the L2-to-fabric links, of the Infinity Cache and
//! of HBM, each a first-come first-served server, and the latency of the level that
//! serves each line (params.rs has the figures and their sources).
//!
//! A vector-memory instruction passes the L1's front end in two pipelined stages that
//! start together (ROCm Compute Profiler's vL1D model: the address processor (TA)
//! coalesces the lanes' addresses into requests, the tag RAM looks each request's line
//! up): the address stage takes the TCP's processing time of the instruction's width
//! (4 clocks for up to a dword per lane, 16 for `dwordx2`..`dwordx4`: AMD's measurement,
//! params.rs), the tag RAM one lookup per clock (`l1_lookups_per_clk`), and the TA merges
//! a lane into the lookup before it when both fall in the same line, so the lookups of an
//! instruction are the number of times the line changes in lane order
//! ([`MemSystem::request`]). A coalesced `dword` load of 64 lanes is 2 lookups (the 4
//! clocks of address work bind), a `dwordx4` one 8 (its 16 clocks bind), and 64 lanes in
//! 64 different lines 64: the uncoalesced access costs 16 times the coalesced one.
//!
//! The TCP also bounds what a CU has in flight (params.rs, AMD's gfx950 tutorials): a load
//! holds its lines of the 32 KB TCP from acceptance until its data is back, and is not
//! accepted while the loads already in flight fill it; instructions issued but not yet
//! accepted wait in a per-CU queue of `vmem_queue_depth` entries, and while that is full
//! no wave of the CU issues a vector-memory instruction ([`MemSystem::can_issue`]).
//!
//! Which level serves an L1 miss comes from the grid (`grid.rs`): the L2 hit fraction of
//! the XCD's workgroups and the MALL hit fraction of the L2 misses, measured on the
//! addresses the grid's resident workgroups actually request. A line is assigned its
//! level by a fixed hash of its address against those fractions, so the same line always
//! goes to the same level and the mix follows the measured fractions.

use super::params::Params;
use std::collections::HashMap;

/// Hit fractions of the levels below L1, from the grid's traversal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HitRates {
    /// Of the L1 misses, the fraction served by L2.
    pub l2: f64,
    /// Of the L2 misses, the fraction served by the Infinity Cache.
    pub mall: f64,
}

impl Default for HitRates {
    fn default() -> Self {
        HitRates { l2: 0.0, mall: 0.0 }
    }
}

/// One vector-memory instruction as the L1 front end sees it ([`MemSystem::request`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Request {
    /// Lanes the address unit processes (all the instruction's lanes, live or not).
    pub lanes: u32,
    /// Tag lookups after the TA's coalescing of consecutive lanes in one line.
    pub lookups: u64,
    /// Distinct lines, in first-touch order.
    pub lines: Vec<u64>,
    /// Bytes the lanes asked for.
    pub bytes: u64,
    /// The widest access of a lane, in bytes (selects the TCP processing time).
    pub width: u64,
}

/// Which level served a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    L1,
    L2,
    Mall,
    Hbm,
}

/// A bandwidth server: `rate` bytes per clock, first come first served.
#[derive(Clone, Debug)]
struct Server {
    rate: f64,
    free_at: f64,
    bytes: f64,
}

impl Server {
    fn new(rate: f64) -> Server {
        Server { rate: rate.max(1e-9), free_at: 0.0, bytes: 0.0 }
    }
    /// Serves `bytes` arriving at `t`; returns when the last byte leaves.
    /// When work arriving at `t` would start.
    fn start(&self, t: f64) -> f64 {
        self.free_at.max(t)
    }
    fn serve(&mut self, t: f64, bytes: f64) -> f64 {
        let start = self.free_at.max(t);
        self.free_at = start + bytes / self.rate;
        self.bytes += bytes;
        self.free_at
    }
}

/// Bytes each level delivered, for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Traffic {
    pub l1_hit_bytes: f64,
    pub l2_bytes: f64,
    pub mall_bytes: f64,
    pub hbm_bytes: f64,
    pub store_bytes: f64,
}

/// One CU's view of the memory system.
pub struct MemSystem {
    lat_l1: u64,
    lat_l2: u64,
    lat_mall: u64,
    lat_hbm: u64,
    line: u64,
    l1_lines: usize,
    /// Line -> (last use stamp for LRU, clock its fill reaches the L1). A request for a
    /// line whose fill is still in flight is a "hit-on-miss" (ROCm Compute Profiler, vL1D
    /// hit-rate footnote): counted as a hit, but its data cannot leave before the fill.
    l1: HashMap<u64, (u64, f64)>,
    stamp: u64,
    l1_return: Server,
    l2: Server,
    fabric: Server,
    mall: Server,
    hbm: Server,
    address: Server,
    tags: Server,
    /// TCP processing clocks of 64 lanes, up to a dword each and wider.
    issue_narrow: f64,
    issue_wide: f64,
    /// Loads in flight in the TCP: (clock their data is back, bytes of lines held).
    inflight: Vec<(f64, f64)>,
    inflight_cap: f64,
    /// Clocks at which the instructions in the request queue leave it (their TCP start).
    queue: Vec<f64>,
    queue_depth: usize,
    /// The TCP takes instructions in order: the last one's start.
    last_start: f64,
    hits: HitRates,
    /// Lines this CU has fetched from below its L1, with `fetched_bytes` at the fetch. A line
    /// the L1 evicted and the CU asks for again is served by L2 when fewer than `l2_share`
    /// bytes were fetched since (its share of the XCD's L2: the line is still there, LRU);
    /// the footprint pass's hit fractions (`grid.rs`: sharing between workgroups) decide only
    /// first requests.
    fetched: HashMap<u64, f64>,
    fetched_bytes: f64,
    l2_share: f64,
    pub traffic: Traffic,
}

fn hash01(line: u64, salt: u64) -> f64 {
    let mut x = line ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

impl MemSystem {
    /// A CU at `mhz` sharing the XCD's L2 with `cus_sharing_xcd` busy CUs and the chip's
    /// MALL and HBM with `cus_sharing_chip` busy CUs.
    pub fn new(p: &Params, mhz: f64, hits: HitRates, cus_sharing_xcd: f64, cus_sharing_chip: f64) -> MemSystem {
        let per_clk = |tbps: f64| tbps * 1e12 / (mhz * 1e6);
        let xcd = cus_sharing_xcd.max(1.0);
        let chip = cus_sharing_chip.max(1.0);
        MemSystem {
            lat_l1: p.cycles(p.l1_latency_ns, mhz),
            lat_l2: p.cycles(p.l2_latency_ns, mhz),
            lat_mall: p.cycles(p.mall_latency_ns, mhz),
            lat_hbm: p.cycles(p.hbm_latency_ns, mhz),
            line: u64::from(p.line_bytes),
            l1_lines: (p.l1_bytes / p.line_bytes) as usize,
            l1: HashMap::new(),
            stamp: 0,
            l1_return: Server::new(p.l1_bytes_per_clk),
            l2: Server::new(p.l2_bytes_per_clk_per_xcd / xcd),
            fabric: Server::new(p.fabric_bytes_per_clk_per_xcd / xcd),
            mall: Server::new(per_clk(p.mall_tbps) / chip),
            hbm: Server::new(per_clk(p.hbm_tbps * p.hbm_efficiency) / chip),
            address: Server::new(1.0),
            tags: Server::new(p.l1_lookups_per_clk),
            issue_narrow: p.vmem_issue_cycles as f64,
            issue_wide: p.vmem_wide_issue_cycles as f64,
            inflight: Vec::new(),
            inflight_cap: f64::from(p.tcp_inflight_bytes),
            queue: Vec::new(),
            queue_depth: p.vmem_queue_depth as usize,
            last_start: 0.0,
            hits,
            fetched: HashMap::new(),
            fetched_bytes: 0.0,
            l2_share: p.l2_bytes_per_xcd as f64 / xcd,
            traffic: Traffic::default(),
        }
    }

    /// Whether this CU fetched `line` recently enough that L2 still holds it (`fetched`).
    fn refetch(&self, line: u64) -> bool {
        self.fetched.get(&line).is_some_and(|&at| self.fetched_bytes - at < self.l2_share)
    }

    /// Records a fetch of `line` from below the L1; forgets fetches older than the L2 share.
    fn note_fetch(&mut self, line: u64) {
        self.fetched.insert(line, self.fetched_bytes);
        self.fetched_bytes += self.line as f64;
        if self.fetched.len() as f64 * self.line as f64 > 4.0 * self.l2_share {
            let (now, share) = (self.fetched_bytes, self.l2_share);
            self.fetched.retain(|_, at| now - *at < share);
        }
    }

    /// The level that serves `line` after an L1 miss.
    fn level_below_l1(&self, line: u64) -> Level {
        if hash01(line, 1) < self.hits.l2 {
            Level::L2
        } else if hash01(line, 2) < self.hits.mall {
            Level::Mall
        } else {
            Level::Hbm
        }
    }

    /// Looks `line` up and marks it most recently used: on a hit, the clock its fill
    /// reached (or will reach) the L1; on a miss `None`, and the line is allocated (its fill
    /// clock set by [`MemSystem::load`]), evicting the least recently used line when full.
    fn l1_lookup(&mut self, line: u64) -> Option<f64> {
        self.stamp += 1;
        if let Some(e) = self.l1.get_mut(&line) {
            e.0 = self.stamp;
            return Some(e.1);
        }
        self.l1.insert(line, (self.stamp, 0.0));
        if self.l1.len() > self.l1_lines {
            if let Some((&old, _)) = self.l1.iter().min_by_key(|(_, &(s, _))| s) {
                self.l1.remove(&old);
            }
        }
        None
    }

    /// What the L1 front end makes of one instruction's accesses (`(address, bytes)` of
    /// its live lanes, in lane order): the distinct lines, the tag lookups (a new lookup
    /// each time the line changes from the previous access's), the lanes and the bytes.
    pub fn request(&self, lanes: u32, addrs: impl Iterator<Item = (u64, u64)>) -> Request {
        let mut r = Request { lanes, ..Request::default() };
        let mut prev: Option<u64> = None;
        for (a, n) in addrs {
            r.bytes += n;
            r.width = r.width.max(n);
            let (first, last) = (a / self.line, (a + n.max(1) - 1) / self.line);
            for l in first..=last {
                if prev != Some(l) {
                    r.lookups += 1;
                    prev = Some(l);
                }
                if !r.lines.contains(&l) {
                    r.lines.push(l);
                }
            }
        }
        r
    }

    /// Whether a wave may issue a vector-memory instruction at `t`: the CU's request queue
    /// (instructions issued and not yet started by the TCP) has room.
    pub fn can_issue(&mut self, t: u64) -> bool {
        let t = t as f64;
        self.queue.retain(|&leave| leave > t);
        self.queue.len() < self.queue_depth
    }

    /// The first clock at or after `t` at which `bytes` more fit in the TCP beside the
    /// loads in flight.
    fn tcp_room(&mut self, t: f64, bytes: f64) -> f64 {
        self.inflight.retain(|&(done, _)| done > t);
        let need = bytes.min(self.inflight_cap);
        let mut held: f64 = self.inflight.iter().map(|e| e.1).sum();
        if held + need <= self.inflight_cap {
            return t;
        }
        self.inflight.sort_by(|a, b| a.0.total_cmp(&b.0));
        for &(done, b) in &self.inflight {
            held -= b;
            if held + need <= self.inflight_cap {
                return done.max(t);
            }
        }
        t
    }

    /// When the instruction's lines leave the L1 front end. The TCP takes instructions in
    /// order; a load waits for room for its lines; then its address work (the TCP
    /// processing time of its width) and its tag lookups run, each on its own first-come
    /// first-served unit (two pipelined stages). Until its address work starts it holds an
    /// entry of the request queue.
    fn front_end(&mut self, t: u64, r: &Request, load: bool) -> f64 {
        let mut at = (t as f64).max(self.last_start);
        if load {
            at = self.tcp_room(at, (r.lines.len() as u64 * self.line) as f64);
        }
        let start = self.address.start(at);
        self.last_start = start;
        self.queue.push(start);
        let per_lane = if r.width > 4 { self.issue_wide } else { self.issue_narrow } / 64.0;
        let a = self.address.serve(at, per_lane * f64::from(r.lanes));
        let g = self.tags.serve(at, r.lookups as f64);
        a.max(g)
    }

    /// A vector-memory load issued at `t`: returns the clock its data is in registers.
    pub fn load(&mut self, t: u64, r: &Request) -> u64 {
        let t0 = self.front_end(t, r, true);
        let mut done = t0;
        for &l in &r.lines {
            let lb = self.line as f64;
            let at = if let Some(fill) = self.l1_lookup(l) {
                self.traffic.l1_hit_bytes += lb;
                (t0 + self.lat_l1 as f64).max(fill)
            } else {
                let level = if self.refetch(l) { Level::L2 } else { self.level_below_l1(l) };
                self.note_fetch(l);
                let fill = match level {
                    Level::L2 | Level::L1 => {
                        self.traffic.l2_bytes += lb;
                        self.l2.serve(t0, lb) + self.lat_l2 as f64
                    }
                    Level::Mall => {
                        self.traffic.mall_bytes += lb;
                        let f = self.fabric.serve(t0, lb);
                        let m = self.mall.serve(t0, lb);
                        self.l2.serve(t0, lb);
                        f.max(m) + self.lat_mall as f64
                    }
                    Level::Hbm => {
                        self.traffic.hbm_bytes += lb;
                        let f = self.fabric.serve(t0, lb);
                        let m = self.hbm.serve(t0, lb);
                        self.l2.serve(t0, lb);
                        f.max(m) + self.lat_hbm as f64
                    }
                };
                if let Some(e) = self.l1.get_mut(&l) {
                    e.1 = fill;
                }
                fill
            };
            done = done.max(at);
        }
        let ret = self.l1_return.serve(done, r.bytes as f64);
        self.inflight.push((ret, (r.lines.len() as u64 * self.line) as f64));
        ret.ceil() as u64
    }

    /// A store issued at `t`: written into L2 (write-back; the HBM write is charged to the
    /// HBM share without delaying the store's completion).
    pub fn store(&mut self, t: u64, r: &Request) -> u64 {
        let t0 = self.front_end(t, r, false);
        for &l in &r.lines {
            self.l1.remove(&l);
        }
        let bytes = r.bytes as f64;
        self.traffic.store_bytes += bytes;
        let w = self.l2.serve(t0, bytes);
        self.hbm.serve(t0, bytes);
        (w + self.lat_l2 as f64).ceil() as u64
    }

    /// A scalar load: served at the scalar-load latency (params.rs).
    pub fn scalar(&self, t: u64, smem_lat: u64) -> u64 {
        t + smem_lat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Arch;

    fn mem() -> MemSystem {
        MemSystem::new(&Params::for_arch(Arch::Gfx942), 1207.0, HitRates { l2: 1.0, mall: 0.0 }, 1.0, 1.0)
    }

    #[test]
    fn the_ta_merges_consecutive_lanes_of_one_line_into_one_lookup() {
        let m = mem();
        // 64 lanes x 4 bytes, consecutive: 2 lines, 2 lookups.
        let r = m.request(64, (0..64u64).map(|l| (4 * l, 4)));
        assert_eq!((r.lookups, r.lines.len(), r.bytes), (2, 2, 256));
        // 64 lanes x 16 bytes (dwordx4), consecutive: 8 lines, 8 lookups.
        let r = m.request(64, (0..64u64).map(|l| (16 * l, 16)));
        assert_eq!((r.lookups, r.lines.len()), (8, 8));
        // Lane l in line l % 16 (the naive GEMM's B rows): 16 lines, but the line changes
        // at every lane: 64 lookups.
        let r = m.request(64, (0..64u64).map(|l| (4096 * (l % 16), 1)));
        assert_eq!((r.lookups, r.lines.len()), (64, 16));
        // Lanes 16q..16q+15 share one address (the naive GEMM's A rows): 4 lookups.
        let r = m.request(64, (0..64u64).map(|l| (4096 * (l / 16), 1)));
        assert_eq!((r.lookups, r.lines.len()), (4, 4));
        // A 16-byte access straddling two lines looks both up.
        let r = m.request(1, std::iter::once((120, 16)));
        assert_eq!((r.lookups, r.lines.len()), (2, 2));
    }

    #[test]
    fn a_dwordx4_takes_16_clocks_of_the_tcp_and_a_dword_4() {
        // 64 lanes x 16 bytes, one 1 KB run: 8 lines, 8 lookups, but 16 clocks of TCP
        // processing bind. Lines leave at 16 + k/16 (L2 2048 B/clk), arrive 103 later
        // (85 ns at 1207 MHz), the last at 119.5; 1 KB returned at 128 B/clk: 127.5 -> 128.
        let mut m = mem();
        let r = m.request(64, (0..64u64).map(|l| (16 * l, 16)));
        assert_eq!((r.width, r.lookups), (16, 8));
        assert_eq!(m.load(0, &r), 128);
        // A coalesced dword load: 4 clocks (2 lookups), after the dwordx4's 16: lines leave
        // at 20.06/20.13, arrive 123.13, 256 bytes after the return unit frees at 127.5:
        // 129.5 -> 130.
        let r = m.request(64, (0..64u64).map(|l| ((1 << 20) + 4 * l, 4)));
        assert_eq!(m.load(0, &r), 130);
    }

    #[test]
    fn the_tcp_holds_32_kb_of_loads_in_flight_and_the_queue_12_instructions() {
        // From HBM (no L2 or MALL hits): 426 clocks (353 ns at 1207 MHz). Each load: 64
        // lanes in 64 lines, 8 KB of lines, 64 lookups; four fill the 32 KB. Load k's lines
        // leave at 64(k+1), pass the fabric (1024 B/clk: 8 clocks), arrive 426 later and
        // return 64 bytes in half a clock: 499, 563, 627, 691.
        let mut m = MemSystem::new(&Params::for_arch(Arch::Gfx942), 1207.0, HitRates::default(), 1.0, 1.0);
        let lanes = |m: &MemSystem, base: u64| m.request(64, (0..64u64).map(move |l| (base + 128 * l, 1)));
        let rs: Vec<Request> = (0..5u64).map(|k| lanes(&m, k << 20)).collect();
        let done: Vec<u64> = rs[..4].iter().map(|r| m.load(0, r)).collect();
        assert_eq!(done, vec![499, 563, 627, 691]);
        // The fifth is accepted when the first's data is back (498.5), its lookups run to
        // 562.5, and it arrives 8 + 426 later: 996.5 + 0.5 = 997 (755 without the bound).
        assert_eq!(m.load(0, &rs[4]), 997);
        // It waited in the request queue until 498.5: one entry. Eleven more behind it fill
        // the queue's 12 entries; no wave issues until the queue drains.
        assert!(m.can_issue(13));
        for k in 0..11u64 {
            let r = lanes(&m, (8 + k) << 20);
            m.load(13, &r);
        }
        assert!(!m.can_issue(13));
        assert!(m.can_issue(100_000));
    }

    #[test]
    fn a_hit_on_a_line_still_in_flight_waits_for_its_fill() {
        // From HBM: 426 clocks (353 ns at 1207 MHz). One lane: its lookup (one clock)
        // binds, the line leaves at 1, passes the fabric (1024 B/clk: 1/8 clock) and
        // arrives at 427.125; 4 bytes returned: 427.16 -> 428.
        let mut m = MemSystem::new(&Params::for_arch(Arch::Gfx942), 1207.0, HitRates::default(), 1.0, 1.0);
        let r = m.request(1, std::iter::once((0, 4)));
        assert_eq!(m.load(0, &r), 428);
        // Another wave asks for the same line at clock 10: the tag RAM finds it (a hit, no
        // new traffic) but its data is the fill's, at 427.125, not 11 + the L1 latency
        // (80 clocks, 66 ns) = 91: 428 again.
        let r2 = m.request(1, std::iter::once((64, 4)));
        assert_eq!(m.load(10, &r2), 428);
        assert_eq!(m.traffic.l1_hit_bytes, 128.0);
        assert_eq!(m.traffic.hbm_bytes, 128.0);
        // Once the fill is in, a hit costs the L1 latency: looked up at 1001, back at 1081.03
        // -> 1082.
        assert_eq!(m.load(1000, &r2), 1082);
    }

    #[test]
    fn the_tag_ram_and_the_address_unit_run_side_by_side() {
        // 64 lookups at one per clock from t = 0 bind (the address unit needs 4 clocks);
        // the 16 distinct lines leave for L2 at 64 + k/16 and arrive 103 clocks later (85 ns
        // at 1207 MHz); the last at 65 + 103 = 168; the L1 returns 64 bytes in half a clock:
        // 168.5 -> 169.
        let mut m = mem();
        let r = m.request(64, (0..64u64).map(|l| (4096 * (l % 16), 1)));
        assert_eq!(m.load(0, &r), 169);
        // The next coalesced load issued at 0 waits for the tag RAM: lookups 64..66, lines
        // leave at 66.06/66.13, arrive 169.13, 256 bytes returned after the previous 64:
        // the return unit is free at 168.5, so 169.13 + 2 = 171.13 -> 172.
        let r = m.request(64, (0..64u64).map(|l| (1 << 20) + 4 * l).map(|a| (a, 4)));
        assert_eq!(m.load(0, &r), 172);
    }
}
