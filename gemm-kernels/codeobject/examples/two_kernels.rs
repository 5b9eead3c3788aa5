//! Writes a two-kernel code object for gfx942 or gfx950 and prints what the reader finds
//! in it. Also how the fuzz seeds in `fuzz/seeds/` are made:
//!
//! ```text
//! cargo run -p gemm-codeobject --example two_kernels -- gfx942 out.co
//! llvm-readelf-22 --notes out.co; llvm-objdump-22 -d --mcpu=gfx942 out.co
//! ```

use gemm_codeobject::{write_code_object, Arch, CodeObject, KernelArg, KernelSpec, RegisterUsage, Target, WorkitemIds};

fn dwords(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let arch = args.next().and_then(|a| a.parse::<Arch>().ok()).unwrap_or(Arch::Gfx942);
    let path = args.next().unwrap_or_else(|| "two_kernels.co".into());

    // s_load_dwordx2 s[0:1], s[4:5], 0x0 ; s_waitcnt lgkmcnt(0) ; v_mov_b32 v0, s0 ; s_endpgm
    let mut copy = KernelSpec::new("copy", dwords(&[0xc006_0002, 0x0000_0000, 0xbf8c_c07f, 0x7e00_0200, 0xbf81_0000]));
    copy.registers = RegisterUsage { vgprs: 1, sgprs: 6, ..Default::default() };
    copy.user_sgprs.kernarg_segment_ptr = true;
    copy.kernarg_size = 20;
    copy.args =
        vec![KernelArg::global_buffer("dst", 0), KernelArg::global_buffer("src", 8), KernelArg::by_value("n", 16, 4)];
    copy.max_flat_workgroup_size = 256;

    // s_nop 0 ; s_endpgm, with an MFMA-sized register budget.
    let mut mfma = KernelSpec::new("mfma", dwords(&[0xbf80_0000, 0xbf81_0000]));
    mfma.registers = RegisterUsage { vgprs: 128, agprs: 128, sgprs: 32, ..Default::default() };
    mfma.group_segment_fixed_size = 65536;
    mfma.workitem_ids = WorkitemIds::Xy;

    let bytes = write_code_object(&Target::new(arch), &[copy, mfma]).expect("valid kernels");
    std::fs::write(&path, &bytes).expect("write output");
    let co = CodeObject::parse(&bytes).expect("reads back");
    for k in &co.kernels {
        let md = k.metadata.as_ref().expect("metadata");
        println!(
            "{}: kd {:#x} entry {:#x} code {} bytes, vgpr granule {}, sgpr granule {}, accum_offset {}, {} args",
            k.name,
            k.descriptor_address,
            k.entry_address,
            k.code.len(),
            k.descriptor.vgpr_granule(),
            k.descriptor.sgpr_granule(),
            k.descriptor.accum_offset(),
            md.args.len()
        );
    }
    println!("wrote {} bytes to {path}", bytes.len());
}
