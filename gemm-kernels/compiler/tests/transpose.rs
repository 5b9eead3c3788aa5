//! The transpose pre-pass (`ir::SplitK::Transpose`, `lower/transpose.rs`): the catalogue's
//! kernel of each arch in the emulator, bit for bit, with the race detector and hazard checker
//! on under every scheduling mode, on edge shapes: one row, one column, odd rows and columns,
//! sizes that are not multiples of the 128-byte block, padded leading dimensions. Y starts
//! filled with a sentinel: every byte outside the `cols x rows` block (the padding between
//! `cols` and `ldy`, and past the last column) must keep it.

use gemm_compiler::ir::{Arch, KernelConfig, SplitK};
use gemm_compiler::{catalogue, compile, kernel_args as ka, CompiledKernel};
use gemm_emu::{Device, LaunchOptions, Mode, Schedule};
use rand::{Rng, SeedableRng};

fn upload(dev: &Device, b: &[u8]) -> u64 {
    let p = dev.alloc((b.len() as u64).next_multiple_of(16).max(16)).unwrap();
    dev.copy_in(p, b).unwrap();
    p
}

/// Runs `k` on `rows x cols` with leading dimensions padded by `pad_x` and `pad_y` 16-byte
/// vectors, and checks Y and its padding.
fn run(k: &CompiledKernel, rows: usize, cols: usize, pad_x: usize, pad_y: usize, sched: Schedule) {
    let ldx = rows.next_multiple_of(16) + 16 * pad_x;
    let ldy = cols.next_multiple_of(16) + 16 * pad_y;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(sched.seed ^ (rows * 7919 + cols) as u64);
    // Whole columns, padding included: the kernel may read X's padding (it lands in Y's
    // columns past `rows`, never stored).
    let x: Vec<u8> = (0..ldx * cols).map(|_| rng.gen()).collect();
    const SENTINEL: u8 = 0xA5;
    let y0 = vec![SENTINEL; ldy * rows];
    let dev = Device::new(k.config.arch);
    let (px, py) = (upload(&dev, &x), upload(&dev, &y0));
    let args = ka::pack_transpose(px, py, rows as u32, cols as u32, ldx as u32, ldy as u32);
    let (grid, block) = ka::launch_workgroups(rows as u32, cols as u32, k.config.tile, k.config.threads());
    let opts = LaunchOptions { schedule: sched, threads: 2, ..Default::default() };
    let r = dev.launch_with(&k.code_object, &k.name, grid, block, &args, &opts).unwrap();
    let what = format!("{} {rows}x{cols} ldx {ldx} ldy {ldy} {sched:?}", k.name);
    assert!(r.reports.is_empty(), "{what}: checker findings:\n{r}");
    let mut y = vec![0u8; y0.len()];
    dev.copy_out(py, &mut y).unwrap();
    for i in 0..rows {
        for j in 0..ldy {
            let got = y[j + i * ldy];
            let want = if j < cols { x[i + j * ldx] } else { SENTINEL };
            assert_eq!(got, want, "{what}: Y[{j} + {i} ldy]");
        }
    }
}

fn kernels() -> Vec<CompiledKernel> {
    catalogue::configs().into_iter().filter(|c| c.split == SplitK::Transpose).map(|c| compile(c).unwrap()).collect()
}

/// One kernel per arch, named for its bytes and block.
#[test]
fn catalogue_has_one_transpose_per_arch() {
    let ks = kernels();
    assert_eq!(ks.len(), Arch::ALL.len());
    for (k, arch) in ks.iter().zip(Arch::ALL) {
        assert_eq!(k.config, KernelConfig::transpose(arch));
        assert_eq!(k.name, format!("gemm_{}_transpose_b8_128x128", arch.name()));
        assert_eq!(k.lds_bytes, 128 * 128);
    }
}

/// Edge shapes, bit for bit, the four scheduling modes rotating over them, both archs.
#[test]
fn transpose_edge_shapes_every_mode() {
    let shapes = [
        (1, 1, 0, 0),
        (1, 300, 1, 0),
        (300, 1, 0, 2),
        (17, 33, 1, 1),
        (128, 128, 0, 0),
        (129, 255, 2, 1),
        (200, 130, 0, 3),
    ];
    for (ki, k) in kernels().iter().enumerate() {
        for (si, &(rows, cols, px, py)) in shapes.iter().enumerate() {
            let mode = Mode::ALL[(ki + si) % Mode::ALL.len()];
            run(k, rows, cols, px, py, Schedule { mode, seed: 5 + (ki * 31 + si) as u64 });
        }
    }
}

/// A shape of several blocks each way with an edge both ways, under every mode.
#[test]
fn transpose_multi_block_every_mode() {
    for (ki, k) in kernels().iter().enumerate() {
        for (mi, mode) in Mode::ALL.into_iter().enumerate() {
            run(k, 257, 270, mi % 2, 1, Schedule { mode, seed: 70 + (ki * 4 + mi) as u64 });
        }
    }
}
