//! Machine programs between lowering and encoding: instructions (gemm-isa `Inst`, with
//! virtual registers before `regalloc.rs`), labels and branches, and the control-flow
//! graph the wait and hazard passes walk.

use gemm_isa::{Inst, Op, Operand, Reg, RegFile};

/// First index of the virtual register space (physical indices stay below 512).
pub const VIRT_BASE: u16 = 0x1000;

/// One program item.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    I(Inst),
    Label(u32),
    /// A SOPP branch (`s_branch`, `s_cbranch_*`) to a label.
    Branch(Op, u32),
    /// A fact for `waitcnt.rs` about the next instruction; removed after the waits are
    /// placed (it encodes to nothing).
    Note(Note),
}

/// What a schedule tells the wait pass (`schedule/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    /// The next `s_barrier` need not wait for this wave's LDS-DMA copies: the schedule
    /// guarantees no wave touches their LDS buffer before a later barrier without this
    /// note (the race detector checks the claim).
    DmaMayStayInFlight,
    /// The next LDS-DMA instruction writes LDS buffer `n` (three-stage pipeline,
    /// `passes/pipeline.rs`): the wait pass tags the copy with its buffer.
    DmaInto(u32),
    /// The next `s_barrier` publishes LDS buffer `n`: it waits for this wave's DS
    /// operations and for its LDS-DMA copies into `n` (and untagged ones); copies tagged
    /// with another buffer may stay in flight. The three-stage pipeline's copies of the tile
    /// after next go to a buffer no wave touches before the barrier that publishes it
    /// (the race detector checks the claim).
    Publishes(u32),
}

/// A virtual register: `count` dwords of `file`, aligned to `align`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VReg {
    pub file: RegFile,
    pub count: u8,
    pub align: u8,
    /// First index in the file's virtual space (>= VIRT_BASE).
    pub vbase: u16,
}

/// A program under construction.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub items: Vec<Item>,
    pub vregs: Vec<VReg>,
    next_virt: [u16; 3],
    next_label: u32,
    /// `(start label, end label)` of each loop (the back edge branches to start).
    pub loops: Vec<(u32, u32)>,
    /// `(label, branch target)`: one main-loop iteration runs from `Label(label)` to the
    /// first branch to `target` (for the static schedule figures).
    pub iteration: Option<(u32, u32)>,
    /// SGPRs the hardware initialises beyond `s[0:3]` (`s4`, the workgroup id z, of split-K
    /// partial kernels): the allocator starts above them.
    pub extra_system_sgprs: u16,
}

fn file_idx(f: RegFile) -> usize {
    match f {
        RegFile::Sgpr => 0,
        RegFile::Vgpr => 1,
        _ => 2,
    }
}

impl Program {
    /// A new virtual register tuple. Tuples of 2+ are even-aligned (ISA.md §1.5); SGPR
    /// tuples are naturally aligned up to 4.
    pub fn vreg(&mut self, file: RegFile, count: u8) -> Reg {
        let align = match (file, count) {
            (_, 1) => 1,
            (RegFile::Sgpr, 2) => 2,
            (RegFile::Sgpr, _) => 4,
            _ => 2,
        };
        let i = file_idx(file);
        let vbase = VIRT_BASE + self.next_virt[i];
        self.next_virt[i] += count as u16;
        self.vregs.push(VReg { file, count, align, vbase });
        Reg { file, index: vbase, count }
    }
    pub fn label(&mut self) -> u32 {
        self.next_label += 1;
        self.next_label
    }
    pub fn push(&mut self, i: Inst) {
        self.items.push(Item::I(i));
    }
    pub fn place(&mut self, label: u32) {
        self.items.push(Item::Label(label));
    }
    pub fn branch(&mut self, op: Op, label: u32) {
        self.items.push(Item::Branch(op, label));
    }
}

/// A sub-range of a register tuple as an operand.
pub fn sub(r: Reg, first: u16, count: u8) -> Operand {
    Operand::Reg(Reg { file: r.file, index: r.index + first, count })
}

/// The whole tuple as an operand.
pub fn whole(r: Reg) -> Operand {
    Operand::Reg(r)
}

/// Basic blocks over `items`: `(first, end)` item ranges and successor block indices.
#[derive(Clone, Debug)]
pub struct Cfg {
    pub blocks: Vec<(usize, usize)>,
    pub succs: Vec<Vec<usize>>,
    pub preds: Vec<Vec<usize>>,
}

/// Whether a branch op is unconditional.
pub fn is_unconditional(op: Op) -> bool {
    op == Op::S_BRANCH
}

impl Cfg {
    pub fn build(items: &[Item]) -> Cfg {
        let mut starts = vec![0usize];
        for (i, it) in items.iter().enumerate() {
            match it {
                Item::Label(_) => starts.push(i),
                Item::Branch(..) => starts.push(i + 1),
                Item::I(inst) if inst.op == Op::S_ENDPGM => starts.push(i + 1),
                _ => {}
            }
        }
        starts.push(items.len());
        starts.sort_unstable();
        starts.dedup();
        let blocks: Vec<(usize, usize)> = starts.windows(2).map(|w| (w[0], w[1])).filter(|(a, b)| a < b).collect();
        let block_of_label = |l: u32| {
            blocks.iter().position(|&(s, _)| matches!(items[s], Item::Label(x) if x == l)).expect("label placed")
        };
        let mut succs = vec![vec![]; blocks.len()];
        for (bi, &(_, e)) in blocks.iter().enumerate() {
            let last = &items[e - 1];
            let falls = match last {
                Item::Branch(op, l) => {
                    succs[bi].push(block_of_label(*l));
                    !is_unconditional(*op)
                }
                Item::I(i) => i.op != Op::S_ENDPGM,
                Item::Label(_) | Item::Note(_) => true,
            };
            if falls && bi + 1 < blocks.len() {
                succs[bi].push(bi + 1);
            }
        }
        let mut preds = vec![vec![]; blocks.len()];
        for (b, ss) in succs.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        Cfg { blocks, succs, preds }
    }
}

/// Registers (file, index) an operand covers.
pub fn regs_of(o: &Operand) -> Vec<(RegFile, u16)> {
    match o {
        Operand::Reg(r) => (0..r.count as u16).map(|i| (r.file, r.index + i)).collect(),
        Operand::Special(s) => {
            let code = s.code();
            if (102..128).contains(&code) {
                (0..s.count() as u16).map(|i| (RegFile::Ttmp, 1000 + code + i)).collect()
            } else {
                vec![]
            }
        }
        _ => vec![],
    }
}

/// A list of registers.
pub type Regs = Vec<(RegFile, u16)>;

/// Registers read and written by an instruction (explicit operands; VCC/M0/EXEC as
/// pseudo-registers in the `Ttmp` file at 1000+code).
pub fn reads_writes(i: &Inst) -> (Regs, Regs) {
    use gemm_isa::table::Access;
    let (mut r, mut w) = (vec![], vec![]);
    for (slot, o) in i.slots().iter().zip(&i.operands) {
        let rs = regs_of(o);
        match slot.access {
            Access::Read => r.extend(rs),
            Access::Write => w.extend(rs),
            Access::ReadWrite => {
                r.extend(rs.iter().copied());
                w.extend(rs);
            }
        }
    }
    (r, w)
}
