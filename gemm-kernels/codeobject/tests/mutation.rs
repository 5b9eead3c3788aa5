//! Seeded mutation test: thousands of corrupted code objects (bit flips, byte overwrites
//! with boundary values, field-sized overwrites, insertions, deletions, truncations) go
//! through the reader and the msgpack/metadata decoders. Any outcome but a panic is
//! acceptable; a parse that succeeds must describe kernels that lie inside the input.
//! The seeds are our own objects for both processors and two clang-22 objects kept in
//! `tests/data` (v5 and v6). Runs in about a second; the libFuzzer target in `fuzz/`
//! explores further.

mod common;

use common::Rng;
use gemm_codeobject::metadata::Metadata;
use gemm_codeobject::msgpack;
use gemm_codeobject::{write_code_object, Arch, CodeObject, KernelArg, KernelSpec, RegisterUsage, Target, WorkitemIds};

fn our_object(arch: Arch) -> Vec<u8> {
    let mut specs = Vec::new();
    for i in 0..3u32 {
        let code: Vec<u8> =
            (0..=i).flat_map(|_| 0xbf80_0000u32.to_le_bytes()).chain(0xbf81_0000u32.to_le_bytes()).collect();
        let mut k = KernelSpec::new(format!("k{i}"), code);
        k.registers = RegisterUsage { vgprs: 8 * (i + 1), agprs: 4 * i, sgprs: 10 + i, ..Default::default() };
        k.kernarg_size = 16;
        k.args = vec![KernelArg::global_buffer("a", 0), KernelArg::by_value("n", 8, 4)];
        k.user_sgprs.kernarg_segment_ptr = true;
        k.workitem_ids = WorkitemIds::Xy;
        k.group_segment_fixed_size = 1024 * i;
        specs.push(k);
    }
    write_code_object(&Target::new(arch), &specs).unwrap()
}

fn seeds() -> Vec<Vec<u8>> {
    let dir = common::crate_dir().join("tests/data");
    vec![
        our_object(Arch::Gfx942),
        our_object(Arch::Gfx950),
        std::fs::read(dir.join("clang22-hip-gfx942-v5.hsaco")).unwrap(),
        std::fs::read(dir.join("clang22-hip-gfx950-v6.hsaco")).unwrap(),
    ]
}

const INTERESTING_U64: [u64; 10] =
    [0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fff_ffff, 0xffff_ffff, 0x8000_0000_0000_0000, u64::MAX];

fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        if data.is_empty() {
            data.push(rng.next_u64() as u8);
            continue;
        }
        // Half the edits land in the headers and tables at the front, where the
        // structure is; the rest anywhere.
        let span = if rng.bool() { data.len().min(0x600) } else { data.len() };
        let at = rng.below(span as u64) as usize;
        match rng.below(7) {
            0 => data[at] ^= 1 << rng.below(8),
            1 => data[at] = INTERESTING_U64[rng.below(10) as usize] as u8,
            2 => {
                let v = INTERESTING_U64[rng.below(10) as usize];
                let width = [2usize, 4, 8][rng.below(3) as usize];
                let bytes = v.to_le_bytes();
                for (i, b) in bytes.iter().take(width).enumerate() {
                    if let Some(d) = data.get_mut(at + i) {
                        *d = *b;
                    }
                }
            }
            3 => {
                let n = 1 + rng.below(16) as usize;
                let ins: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
                data.splice(at..at, ins);
            }
            4 => {
                let n = (1 + rng.below(64) as usize).min(data.len() - at);
                data.drain(at..at + n);
            }
            5 => data.truncate(at),
            _ => {
                // Copy a chunk from elsewhere (duplicates plausible structures).
                let from = rng.below(data.len() as u64) as usize;
                let n = (rng.below(32) as usize).min(data.len() - from).min(data.len() - at);
                let chunk = data[from..from + n].to_vec();
                data[at..at + n].copy_from_slice(&chunk);
            }
        }
    }
}

fn check(data: &[u8]) -> bool {
    match CodeObject::parse(data) {
        Ok(co) => {
            for k in &co.kernels {
                assert!(k.code.len() <= data.len());
            }
            true
        }
        Err(e) => {
            // Errors render without panicking.
            let _ = e.to_string();
            false
        }
    }
}

#[test]
fn seeds_parse() {
    for s in seeds() {
        let co = CodeObject::parse(&s).unwrap();
        assert!(!co.kernels.is_empty());
        // Re-encoding the decoded note gives LLVM's (or our) exact bytes: the encoder
        // picks the forms LLVM's msgpack writer picks.
        let note = common::section_bytes(&s, ".note").unwrap();
        let notes = gemm_codeobject::elf::parse_notes(&gemm_codeobject::elf::Bytes::new(&note, "note")).unwrap();
        assert_eq!(notes[0].desc, msgpack::encode(co.raw_metadata.as_ref().unwrap()));
    }
}

#[test]
fn mutated_code_objects_never_panic() {
    let seeds = seeds();
    let mut rng = Rng(0x5eed_c0de);
    let (mut ok, mut err) = (0u32, 0u32);
    for i in 0..20000 {
        let mut data = seeds[i % seeds.len()].clone();
        mutate(&mut rng, &mut data);
        if check(&data) {
            ok += 1;
        } else {
            err += 1;
        }
    }
    // Both outcomes must be exercised, or the mutations are too weak or too strong.
    assert!(ok > 100 && err > 100, "ok {ok}, err {err}");
}

#[test]
fn mutated_metadata_never_panics() {
    let seeds = seeds();
    let notes: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| {
            let co = CodeObject::parse(s).unwrap();
            msgpack::encode(co.raw_metadata.as_ref().unwrap())
        })
        .collect();
    let mut rng = Rng(0x6d70);
    let (mut ok, mut err) = (0u32, 0u32);
    for i in 0..10000 {
        let mut data = notes[i % notes.len()].clone();
        mutate(&mut rng, &mut data);
        match msgpack::decode(&data) {
            Ok(v) => match Metadata::from_value(&v) {
                Ok(_) => ok += 1,
                Err(e) => {
                    let _ = e.to_string();
                    err += 1
                }
            },
            Err(e) => {
                let _ = e.to_string();
                err += 1
            }
        }
    }
    assert!(ok > 50 && err > 50, "ok {ok}, err {err}");
}
