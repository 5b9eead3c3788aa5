//! gemm-compiler: GEMM kernels for gfx942 (CDNA3) and gfx950 (CDNA4), from a tile-level
//! IR to AMDHSA code objects, with no LLVM and no ROCm at build time.
//!
//! Pipeline ([`compile`]): [`ir::Kernel::naive`] -> passes ([`passes::run_all`]: buffer
//! ops, software pipelining, LDS swizzle, epilogue; each IR -> IR or a typed reason to
//! decline) -> [`lower::lower`] (machine instructions on virtual registers) ->
//! [`regalloc::allocate`] -> [`waitcnt::insert_waits`] -> [`hazard::insert_nops`] ->
//! branch resolution and encoding (gemm-isa) -> code object (gemm-codeobject).
//! Deterministic: no hashing with random state, no time, no environment.
#![forbid(unsafe_code)]

pub mod analysis;
pub mod catalogue;
pub mod fit;
pub mod grid;
pub mod hazard;
pub mod ir;
pub mod kernel_args;
pub mod lds;
pub mod lower;
pub mod passes;
pub mod plant;
pub mod program;
pub mod regalloc;
pub mod schedule;
pub mod waitcnt;

use gemm_codeobject::{KernelSpec, RegisterUsage, Target};
use gemm_isa::{Arch, Inst, Operand};
use ir::{Kernel, KernelConfig};
use program::Item;

/// Why a kernel could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("pass declined: {0}")]
    Declined(#[from] passes::Declined),
    #[error("lowering: {0}")]
    Lower(#[from] lower::LowerError),
    #[error("register allocation: {0}")]
    RegAlloc(#[from] regalloc::RegAllocError),
    #[error("encoding `{inst}`: {err}")]
    Encode { inst: String, err: gemm_isa::EncodeError },
    #[error("branch to label {0} out of range")]
    Branch(u32),
    #[error("code object: {0}")]
    CodeObject(#[from] gemm_codeobject::WriteError),
    #[error("planting a bug: {0}")]
    Plant(#[from] plant::PlantError),
}

/// A compiled kernel: its machine code, code object and the facts for the manifest.
#[derive(Clone, Debug)]
pub struct CompiledKernel {
    pub name: String,
    pub config: KernelConfig,
    /// The kernel after the passes.
    pub kernel: Kernel,
    /// Final instructions (physical registers, waits and NOPs in place).
    pub insts: Vec<Inst>,
    /// Machine code of `.text` for this kernel.
    pub code: Vec<u8>,
    /// A complete code object holding just this kernel.
    pub code_object: Vec<u8>,
    pub usage: regalloc::Usage,
    pub lds_bytes: u32,
    pub waits_inserted: usize,
    pub nop_wait_states: usize,
    pub stats: analysis::Stats,
}

/// Resolves labels into SOPP branch offsets (`PC_next + 4*simm16`, ISA.md §3.2) and
/// encodes: the final instruction list and the machine code.
pub fn resolve_branches(items: &[Item], arch: Arch) -> Result<(Vec<Inst>, Vec<u8>), CompileError> {
    let enc = |i: &Inst| i.encode(arch).map_err(|err| CompileError::Encode { inst: i.to_string(), err });
    let mut words: Vec<Option<Vec<u32>>> = Vec::with_capacity(items.len());
    let mut pc = 0u32;
    let mut labels = std::collections::BTreeMap::new();
    for it in items {
        match it {
            Item::I(i) => {
                let w = enc(i)?;
                pc += 4 * w.len() as u32;
                words.push(Some(w));
            }
            Item::Branch(..) => {
                pc += 4;
                words.push(None);
            }
            Item::Label(l) => {
                labels.insert(*l, pc);
                words.push(None);
            }
            Item::Note(_) => words.push(None),
        }
    }
    let mut out = vec![];
    let mut code = Vec::with_capacity(pc as usize);
    let mut pc = 0u32;
    for (it, w) in items.iter().zip(words) {
        match it {
            Item::I(i) => {
                let w = w.expect("encoded");
                pc += 4 * w.len() as u32;
                code.extend(w.iter().flat_map(|x| x.to_le_bytes()));
                out.push(i.clone());
            }
            Item::Branch(op, l) => {
                let t = *labels.get(l).ok_or(CompileError::Branch(*l))? as i64;
                let rel = (t - (pc as i64 + 4)) / 4;
                if !(-32768..=32767).contains(&rel) {
                    return Err(CompileError::Branch(*l));
                }
                let b = Inst::new(*op, &[Operand::Imm(rel as i16 as u16 as i64)]);
                code.extend(enc(&b)?.iter().flat_map(|x| x.to_le_bytes()));
                out.push(b);
                pc += 4;
            }
            Item::Label(_) | Item::Note(_) => {}
        }
    }
    Ok((out, code))
}

/// Runs the passes on the naive kernel of `config`.
pub fn optimise(config: KernelConfig) -> Result<Kernel, passes::Declined> {
    fit::check(&config)?;
    if config.is_decode() {
        // No LDS tiles: the lowering (`lower/decode.rs`) emits the whole kernel.
        let mut k = Kernel::naive(config);
        k.applied.push("decode");
        return Ok(k);
    }
    passes::run_all(Kernel::naive(config))
}

/// Compiles one kernel end to end.
pub fn compile(config: KernelConfig) -> Result<CompiledKernel, CompileError> {
    let kernel = optimise(config)?;
    compile_kernel(kernel)
}

/// Switches for negative tests: a kernel built without its waits or NOPs, or with one of
/// the ping-pong races planted (`plant.rs`), must be caught by the emulator's checkers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub insert_waits: bool,
    pub insert_nops: bool,
    pub plant: Option<plant::PlantedBug>,
}

impl CompiledKernel {
    /// Whether a workgroup of this kernel fits one CU's register files ([`fit::resident`]):
    /// the waves per SIMD, or why it cannot launch.
    pub fn resident(&self) -> Result<u32, fit::Unfit> {
        fit::resident(self.config.waves, self.usage.vgprs, self.usage.agprs)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options { insert_waits: true, insert_nops: true, plant: None }
    }
}

/// Lowers an already optimised kernel.
pub fn compile_kernel(kernel: Kernel) -> Result<CompiledKernel, CompileError> {
    compile_kernel_with(kernel, Options::default())
}

/// Lowers an already optimised kernel with explicit [`Options`].
pub fn compile_kernel_with(mut kernel: Kernel, opts: Options) -> Result<CompiledKernel, CompileError> {
    let config = kernel.config;
    let arch = config.arch;
    if let Some(bug) = opts.plant {
        plant::apply_schedule(&mut kernel.schedule, bug)?;
    }
    let mut prog = lower::lower(&kernel)?;
    let usage = regalloc::allocate(&mut prog)?;
    let waits = if opts.insert_waits { waitcnt::insert_waits(&mut prog.items) } else { 0 };
    if let Some(bug) = opts.plant {
        plant::apply_program(&mut prog.items, prog.iteration, bug)?;
    }
    prog.items.retain(|it| !matches!(it, Item::Note(_)));
    let nops = if opts.insert_nops { hazard::insert_nops(&mut prog.items, arch) } else { 0 };
    let stats = analysis::stats(&kernel, &prog);
    let (insts, code) = resolve_branches(&prog.items, arch)?;
    let name = config.name();
    let lds_bytes = if config.is_decode() {
        fit::decode_lds_bytes(&config)
    } else if config.split == ir::SplitK::Transpose {
        lower::TRANSPOSE_LDS_BYTES
    } else {
        kernel.lds_buffers * kernel.lds_buffer_bytes()
            + schedule::phase::lds_bytes(&kernel)
            + lower::mx_lds_bytes(&kernel)
    };
    let mut spec = KernelSpec::new(name.clone(), code.clone());
    spec.registers = RegisterUsage {
        vgprs: usage.vgprs,
        agprs: usage.agprs,
        accum_offset: None,
        sgprs: usage.sgprs,
        uses_vcc: true,
        uses_flat_scratch: false,
    };
    spec.group_segment_fixed_size = lds_bytes;
    spec.kernarg_size = kernel_args::size(&config);
    spec.args = kernel_args::metadata_args(&config);
    spec.user_sgprs.kernarg_segment_ptr = true;
    spec.system_sgprs.workgroup_id_x = true;
    spec.system_sgprs.workgroup_id_y = true;
    // Split-K partial kernels: the split index in s4 (`lower.rs`, `split_setup`).
    spec.system_sgprs.workgroup_id_z = config.split == ir::SplitK::Partial;
    spec.max_flat_workgroup_size = config.threads();
    let code_object = gemm_codeobject::write_code_object(&Target::new(arch), &[spec])?;
    Ok(CompiledKernel {
        name,
        config,
        kernel,
        insts,
        code,
        code_object,
        usage,
        lds_bytes,
        waits_inserted: waits,
        nop_wait_states: nops,
        stats,
    })
}

/// The assembly text of a compiled kernel (LLVM syntax), one instruction per line.
pub fn disassemble(k: &CompiledKernel) -> String {
    k.insts.iter().map(|i| format!("{i}\n")).collect()
}
