//! The memory system as one CU sees it: its vector L1 (an LRU of 128-byte lines), its
//! share of the XCD's L2 bandwidth, of the L2-to-fabric links, of the Infinity Cache and
//! of HBM, each a first-come first-served server, and the latency of the level that
//! serves each line (params.rs has the figures and their sources).
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
    /// Line -> last use stamp (LRU).
    l1: HashMap<u64, u64>,
    stamp: u64,
    l1_return: Server,
    l2: Server,
    fabric: Server,
    mall: Server,
    hbm: Server,
    address: Server,
    hits: HitRates,
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
            address: Server::new(64.0 / p.vmem_issue_cycles as f64),
            hits,
            traffic: Traffic::default(),
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

    fn l1_lookup(&mut self, line: u64) -> bool {
        self.stamp += 1;
        let hit = self.l1.contains_key(&line);
        self.l1.insert(line, self.stamp);
        if self.l1.len() > self.l1_lines {
            if let Some((&old, _)) = self.l1.iter().min_by_key(|(_, &s)| s) {
                self.l1.remove(&old);
            }
        }
        hit
    }

    /// Distinct lines and bytes of the lanes' accesses.
    pub fn lines(&self, addrs: impl Iterator<Item = (u64, u64)>) -> (Vec<u64>, u64) {
        let mut lines = Vec::new();
        let mut bytes = 0;
        for (a, n) in addrs {
            bytes += n;
            let (first, last) = (a / self.line, (a + n.max(1) - 1) / self.line);
            for l in first..=last {
                if !lines.contains(&l) {
                    lines.push(l);
                }
            }
        }
        (lines, bytes)
    }

    /// A vector-memory load issued at `t` touching `lines` (`lanes` active lanes, `bytes`
    /// requested): returns the clock its data is in registers.
    pub fn load(&mut self, t: u64, lanes: u32, lines: &[u64], bytes: u64) -> u64 {
        let t0 = self.address.serve(t as f64, f64::from(lanes));
        let mut done = t0;
        for &l in lines {
            let lb = self.line as f64;
            let at = if self.l1_lookup(l) {
                self.traffic.l1_hit_bytes += lb;
                t0 + self.lat_l1 as f64
            } else {
                match self.level_below_l1(l) {
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
                }
            };
            done = done.max(at);
        }
        let ret = self.l1_return.serve(done, bytes as f64);
        ret.ceil() as u64
    }

    /// A store issued at `t`: written into L2 (write-back; the HBM write is charged to the
    /// HBM share without delaying the store's completion).
    pub fn store(&mut self, t: u64, lanes: u32, lines: &[u64], bytes: u64) -> u64 {
        let t0 = self.address.serve(t as f64, f64::from(lanes));
        for &l in lines {
            self.l1.remove(&l);
        }
        self.traffic.store_bytes += bytes as f64;
        let w = self.l2.serve(t0, bytes as f64);
        self.hbm.serve(t0, bytes as f64);
        (w + self.lat_l2 as f64).ceil() as u64
    }

    /// A scalar load: served at the scalar-load latency (params.rs).
    pub fn scalar(&self, t: u64, smem_lat: u64) -> u64 {
        t + smem_lat
    }
}
