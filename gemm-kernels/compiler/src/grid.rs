//! Workgroup order: which C tile a workgroup computes.
//!
//! The hardware hands workgroups of one dispatch to the 8 XCDs of MI300X/MI355X round
//! robin in dispatch order, x fastest (AMD's MI300X workload-optimisation guide; the
//! premise of HipKittens' chiplet transform), and each XCD has its own 4 MiB L2 (ARCH.md).
//! With the plain order, neighbouring tiles (which share A rows or B columns) land on
//! different XCDs and every XCD streams every panel. [`GridOrder`] remaps in two steps,
//! as HipKittens' kernels do (`chiplet_transform_chunked`, then a grouped raster):
//!
//! 1. **Chiplet transform**: dispatch id `pid` runs on XCD `pid % 8`; the ids are
//!    renumbered so that each XCD gets `chunk` consecutive logical ids per round
//!    (`logical = (pid/8/chunk)*8*chunk + (pid%8)*chunk + (pid/8)%chunk`), for the ids
//!    below the last whole round (`floor(total / (8*chunk)) * 8*chunk`); the rest keep
//!    their id. A bijection on `0..total`.
//! 2. **Grouped raster** of width `wgm`: logical ids walk down a band of `wgm` tile rows,
//!    column by column, before moving to the next band, so consecutive ids share B
//!    columns and the band's A rows stay hot: band `g = id / (wgm*tiles_n)`, its height
//!    `h = min(wgm, tiles_m - g*wgm)`, `r = id % (wgm*tiles_n)`,
//!    tile `(g*wgm + r % h, r / h)`. A bijection from `0..tiles_m*tiles_n` onto the tiles.
//!
//! The kernel computes the same function ([`crate::lower`]) from its workgroup id and
//! `m`, `n`; [`tile_of`] is the reference the tests check for covering every tile once.

/// XCDs per MI300X/MI355X (ARCH.md).
pub const XCDS: u32 = 8;

/// The remapping of a kernel (a configuration attribute).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GridOrder {
    /// Consecutive logical ids per XCD per round (power of two); 0: no chiplet transform.
    pub chunk: u32,
    /// Band height of the grouped raster in tiles; 0: plain column order.
    pub wgm: u32,
}

impl GridOrder {
    /// Workgroup `(x, y)` computes tile `(x, y)`.
    pub const PLAIN: GridOrder = GridOrder { chunk: 0, wgm: 0 };
    pub fn is_plain(&self) -> bool {
        *self == Self::PLAIN
    }
}

/// Step 1: the chiplet transform of dispatch id `pid` among `total`.
pub fn chiplet(pid: u32, total: u32, chunk: u32) -> u32 {
    if chunk == 0 {
        return pid;
    }
    let round = XCDS * chunk;
    let whole = total / round * round;
    if pid >= whole {
        return pid;
    }
    let (xcd, local) = (pid % XCDS, pid / XCDS);
    (local / chunk) * round + xcd * chunk + local % chunk
}

/// Step 2: the grouped raster, logical id -> `(tile row, tile column)`.
pub fn raster(id: u32, tiles_m: u32, tiles_n: u32, wgm: u32) -> (u32, u32) {
    if wgm == 0 {
        return (id % tiles_m, id / tiles_m);
    }
    let band = wgm * tiles_n;
    let g = id / band;
    let h = wgm.min(tiles_m - g * wgm);
    let r = id % band;
    (g * wgm + r % h, r / h)
}

/// The tile workgroup `(x, y)` of a `tiles_m x tiles_n` grid computes.
pub fn tile_of(order: GridOrder, tiles_m: u32, tiles_n: u32, x: u32, y: u32) -> (u32, u32) {
    if order.is_plain() {
        return (x, y);
    }
    let total = tiles_m * tiles_n;
    let pid = y * tiles_m + x;
    raster(chiplet(pid, total, order.chunk), tiles_m, tiles_n, order.wgm)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tile exactly once, for every grid up to 40x40 and several orders.
    #[test]
    fn every_tile_exactly_once() {
        for order in [
            GridOrder::PLAIN,
            GridOrder { chunk: 1, wgm: 0 },
            GridOrder { chunk: 4, wgm: 8 },
            GridOrder { chunk: 2, wgm: 3 },
            GridOrder { chunk: 0, wgm: 5 },
        ] {
            for tm in 1..=40u32 {
                for tn in 1..=40u32 {
                    let mut seen = vec![false; (tm * tn) as usize];
                    for y in 0..tn {
                        for x in 0..tm {
                            let (i, j) = tile_of(order, tm, tn, x, y);
                            assert!(i < tm && j < tn, "{order:?} {tm}x{tn}: ({x},{y}) -> ({i},{j})");
                            let s = &mut seen[(i + j * tm) as usize];
                            assert!(!*s, "{order:?} {tm}x{tn}: tile ({i},{j}) twice");
                            *s = true;
                        }
                    }
                }
            }
        }
    }

    /// The ids one XCD runs in a round are consecutive logical ids (they share panels).
    #[test]
    fn one_xcd_gets_consecutive_ids() {
        let (total, chunk) = (64 * 3 + 5, 4);
        for xcd in 0..XCDS {
            let ids: Vec<u32> = (0..32).map(|r| chiplet(xcd + XCDS * r, total, chunk)).collect();
            assert_eq!(ids[..4], [xcd * 4, xcd * 4 + 1, xcd * 4 + 2, xcd * 4 + 3]);
        }
        // The tail past the last whole round keeps its ids.
        assert_eq!(chiplet(total - 1, total, chunk), total - 1);
    }
}
