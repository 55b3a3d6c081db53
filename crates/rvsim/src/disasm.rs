//! A disassembler for what the machine runs (RV32I + M + A + C + Zicsr and the machine-mode
//! system instructions), printing each instruction the way GNU objdump 2.40 prints it by default
//! (`riscv64-unknown-elf-objdump -d`), so a listing a student already has and the pipeline view
//! read alike.
//!
//! Following objdump means following its choices:
//!
//! * **Pseudo-instructions** where one applies: `nop`, `li`, `mv`, `not`, `neg`, `seqz`, `snez`,
//!   `sltz`, `sgtz`, `zext.b`, `j`, `jal target` (ra implied), `jr`, `ret`, `jalr rs`, `beqz`,
//!   `bnez`, `blez`, `bgez`, `bltz`, `bgtz`, `csrr`, `csrw`, `csrs`, `csrc`, `rdcycle`/`rdtime`/
//!   `rdinstret` (+`h`), `frflags`/`fsflags`/`frrm`/`fsrm`/`frcsr`/`fscsr`, `unimp`, `fence`.
//! * **Immediate forms under the register form's name**: `addi sp,sp,-16` prints as
//!   `add sp,sp,-16`, `andi` as `and`, `ori` as `or`, `xori` as `xor`, `slli`/`srli`/`srai` as
//!   `sll`/`srl`/`sra` (shift amounts in hex), and the immediate CSR forms under the register
//!   forms' names (`csrwi mstatus,8` prints as `csrw mstatus,8`).
//! * **Compressed instructions as their 32-bit expansion** (objdump's default, one choice for
//!   every `c.` form): `c.addi a0,1` prints as `add a0,a0,1`, `c.jr ra` as `ret`, `c.li a0,5`
//!   as `li a0,5`. The instruction's length is the only difference, and the pipeline view shows
//!   addresses, so the length stays visible.
//! * Jump and branch targets as absolute hexadecimal addresses (without objdump's `<symbol>`
//!   suffix, which callers add when they have a symbol table); `lui`/`auipc` immediates in hex;
//!   registers by their ABI names; CSRs by name when objdump knows one, else in hex.
//! * Encodings that are not instructions of this machine print as objdump prints unknown words:
//!   `.word 0x........` (32-bit) or `.short 0x....` (16-bit). The supervisor instructions
//!   `sret` and `sfence.vma` are named (the machine traps on them as illegal).

use crate::decode::{decode16, decode32, instruction_len, Decoded, Op};

/// ABI register names, as objdump prints them (x8 is `s0`, not `fp`).
pub const REGS: [&str; 32] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6",
];

fn reg(r: u8) -> &'static str {
    REGS[(r & 31) as usize]
}

/// Disassembles the instruction whose bits are `bits` (only the low 16 bits are read for a
/// compressed one) at address `pc` (for pc-relative targets).
pub fn disassemble(bits: u32, pc: u32) -> String {
    let (d, len) = if instruction_len(bits & 0xffff) == 2 {
        (decode16(bits & 0xffff), 2)
    } else {
        (decode32(bits), 4)
    };
    if d.op == Op::Illegal || d.op == Op::Undecoded {
        return unknown(bits, len);
    }
    // Encodings whose decoded record loses what objdump prints.
    if len == 4 {
        if bits == 0xc000_1073 {
            return "unimp".into();
        }
        if d.op == Op::Fence {
            return fence(bits);
        }
        if d.op.is_atomic() {
            return atomic(d, bits);
        }
    }
    if len == 2 {
        if let Some(text) = compressed_hint(bits & 0xffff, d) {
            return text;
        }
        if d.op == Op::Add && d.rs1 == 0 {
            // c.mv: `mv` (a 32-bit `add rd,zero,rs2` keeps its name).
            return format!("mv {},{}", reg(d.rd), reg(d.rs2));
        }
    }
    instruction(d, pc)
}

/// The compressed encodings that are HINTs (or shift by 0): objdump names them by their `c.`
/// form, as their expansion would misread (`c.li zero,5` is no `li`).
fn compressed_hint(h: u32, d: Decoded) -> Option<String> {
    let (rd, rs2, imm) = (reg(d.rd), reg(d.rs2), d.imm);
    Some(match (h & 3, h >> 13, d.op) {
        (1, 0, Op::Addi) if d.rd == 0 && imm != 0 => format!("c.nop {imm}"),
        (1, 0, Op::Addi) if d.rd != 0 && imm == 0 => format!("add {rd},{rd},0"),
        (1, 2, Op::Addi) if d.rd == 0 => format!("c.li zero,{imm}"),
        (1, 3, Op::Lui) if d.rd == 0 => format!("c.lui zero,0x{:x}", (imm as u32) >> 12),
        (2, 0, Op::Slli) if imm == 0 => format!("c.slli64 {rd}"),
        (2, 0, Op::Slli) if d.rd == 0 => format!("c.slli zero,0x{imm:x}"),
        (1, 4, Op::Srli) if imm == 0 => format!("c.srli64 {rd}"),
        (1, 4, Op::Srai) if imm == 0 => format!("c.srai64 {rd}"),
        // c.mv and c.add differ in bit 12; with rd = x0 both expand to add x0, x0, rs2.
        (2, 4, Op::Add) if d.rd == 0 && h & 0x1000 == 0 => format!("c.mv zero,{rs2}"),
        (2, 4, Op::Add) if d.rd == 0 => format!("c.add zero,{rs2}"),
        _ => return None,
    })
}

/// How objdump prints an encoding it does not know (or one outside this machine's ISA that
/// it does: the names of a few supervisor instructions are kept for trap handlers' sake).
fn unknown(bits: u32, len: u8) -> String {
    if len == 2 {
        return format!(".short 0x{:04x}", bits & 0xffff);
    }
    match bits {
        0x1020_0073 => "sret".into(),
        w if w & 0xfe00_7fff == 0x1200_0073 => {
            let (rs1, rs2) = ((w >> 15) & 31, (w >> 20) & 31);
            match (rs1, rs2) {
                (0, 0) => "sfence.vma".into(),
                (_, 0) => format!("sfence.vma {}", REGS[rs1 as usize]),
                _ => format!("sfence.vma {},{}", REGS[rs1 as usize], REGS[rs2 as usize]),
            }
        }
        _ => format!(".word 0x{bits:08x}"),
    }
}

/// A pc-relative target as objdump prints it: the absolute address in hex.
fn target(pc: u32, imm: i32) -> String {
    format!("{:x}", pc.wrapping_add(imm as u32))
}

fn instruction(d: Decoded, pc: u32) -> String {
    let (rd, rs1, rs2, imm) = (reg(d.rd), reg(d.rs1), reg(d.rs2), d.imm);
    let name = mnemonic(d.op);
    match d.op {
        Op::Lui | Op::Auipc => format!("{name} {rd},0x{:x}", (imm as u32) >> 12),
        Op::Jal => match d.rd {
            0 => format!("j {}", target(pc, imm)),
            1 => format!("jal {}", target(pc, imm)),
            _ => format!("jal {rd},{}", target(pc, imm)),
        },
        Op::Jalr => match (d.rd, d.rs1, imm) {
            (0, 1, 0) => "ret".into(),
            (0, _, 0) => format!("jr {rs1}"),
            (0, _, _) => format!("jr {imm}({rs1})"),
            (1, _, 0) => format!("jalr {rs1}"),
            (1, _, _) => format!("jalr {imm}({rs1})"),
            (_, _, 0) => format!("jalr {rd},{rs1}"),
            _ => format!("jalr {rd},{imm}({rs1})"),
        },
        Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
            let t = target(pc, imm);
            match (d.op, d.rs1, d.rs2) {
                (Op::Beq, _, 0) => format!("beqz {rs1},{t}"),
                (Op::Bne, _, 0) => format!("bnez {rs1},{t}"),
                (Op::Blt, _, 0) => format!("bltz {rs1},{t}"),
                (Op::Blt, 0, _) => format!("bgtz {rs2},{t}"),
                (Op::Bge, _, 0) => format!("bgez {rs1},{t}"),
                (Op::Bge, 0, _) => format!("blez {rs2},{t}"),
                _ => format!("{name} {rs1},{rs2},{t}"),
            }
        }
        Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu => format!("{name} {rd},{imm}({rs1})"),
        Op::Sb | Op::Sh | Op::Sw => format!("{name} {rs2},{imm}({rs1})"),
        Op::Addi => match (d.rd, d.rs1, imm) {
            (0, 0, 0) => "nop".into(),
            (_, 0, _) => format!("li {rd},{imm}"),
            (_, _, 0) => format!("mv {rd},{rs1}"),
            _ => format!("add {rd},{rs1},{imm}"),
        },
        Op::Sltiu if imm == 1 => format!("seqz {rd},{rs1}"),
        Op::Xori if imm == -1 => format!("not {rd},{rs1}"),
        Op::Andi if imm == 255 => format!("zext.b {rd},{rs1}"),
        Op::Slti => format!("slti {rd},{rs1},{imm}"),
        Op::Sltiu => format!("sltiu {rd},{rs1},{imm}"),
        Op::Xori | Op::Ori | Op::Andi => format!("{name} {rd},{rs1},{imm}"),
        Op::Slli | Op::Srli | Op::Srai => format!("{name} {rd},{rs1},0x{imm:x}"),
        Op::Sub if d.rs1 == 0 => format!("neg {rd},{rs2}"),
        Op::Sltu if d.rs1 == 0 => format!("snez {rd},{rs2}"),
        Op::Slt if d.rs2 == 0 => format!("sltz {rd},{rs1}"),
        Op::Slt if d.rs1 == 0 => format!("sgtz {rd},{rs2}"),
        Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci => csr(d),
        _ if d.op.is_atomic() => atomic(d, 0),
        Op::Fence => "fence".into(),
        Op::FenceI | Op::Ecall | Op::Ebreak | Op::Mret | Op::Wfi => name.into(),
        _ => format!("{name} {rd},{rs1},{rs2}"),
    }
}

/// The printed name of an operation (immediate forms under their register form's name).
fn mnemonic(op: Op) -> &'static str {
    match op {
        Op::Undecoded | Op::Illegal => "unknown",
        Op::Lui => "lui",
        Op::Auipc => "auipc",
        Op::Jal => "jal",
        Op::Jalr => "jalr",
        Op::Beq => "beq",
        Op::Bne => "bne",
        Op::Blt => "blt",
        Op::Bge => "bge",
        Op::Bltu => "bltu",
        Op::Bgeu => "bgeu",
        Op::Lb => "lb",
        Op::Lh => "lh",
        Op::Lw => "lw",
        Op::Lbu => "lbu",
        Op::Lhu => "lhu",
        Op::Sb => "sb",
        Op::Sh => "sh",
        Op::Sw => "sw",
        Op::Addi | Op::Add => "add",
        Op::Slti | Op::Slt => "slt",
        Op::Sltiu | Op::Sltu => "sltu",
        Op::Xori | Op::Xor => "xor",
        Op::Ori | Op::Or => "or",
        Op::Andi | Op::And => "and",
        Op::Slli | Op::Sll => "sll",
        Op::Srli | Op::Srl => "srl",
        Op::Srai | Op::Sra => "sra",
        Op::Sub => "sub",
        Op::Mul => "mul",
        Op::Mulh => "mulh",
        Op::Mulhsu => "mulhsu",
        Op::Mulhu => "mulhu",
        Op::Div => "div",
        Op::Divu => "divu",
        Op::Rem => "rem",
        Op::Remu => "remu",
        Op::Fence => "fence",
        Op::FenceI => "fence.i",
        Op::Ecall => "ecall",
        Op::Ebreak => "ebreak",
        Op::Mret => "mret",
        Op::Wfi => "wfi",
        Op::Csrrw | Op::Csrrwi => "csrrw",
        Op::Csrrs | Op::Csrrsi => "csrrs",
        Op::Csrrc | Op::Csrrci => "csrrc",
        Op::LrW => "lr.w",
        Op::ScW => "sc.w",
        Op::AmoSwapW => "amoswap.w",
        Op::AmoAddW => "amoadd.w",
        Op::AmoXorW => "amoxor.w",
        Op::AmoAndW => "amoand.w",
        Op::AmoOrW => "amoor.w",
        Op::AmoMinW => "amomin.w",
        Op::AmoMaxW => "amomax.w",
        Op::AmoMinuW => "amominu.w",
        Op::AmoMaxuW => "amomaxu.w",
    }
}

/// LR/SC and the AMOs, with their ordering suffix (`.aq`, `.rl`, `.aqrl`) from the raw bits.
fn atomic(d: Decoded, bits: u32) -> String {
    let order = match (bits >> 25) & 3 {
        0 => "",
        1 => ".rl",
        2 => ".aq",
        _ => ".aqrl",
    };
    let name = mnemonic(d.op);
    let (rd, rs1, rs2) = (reg(d.rd), reg(d.rs1), reg(d.rs2));
    if d.op == Op::LrW {
        format!("{name}{order} {rd},({rs1})")
    } else {
        format!("{name}{order} {rd},{rs2},({rs1})")
    }
}

/// `fence` with its predecessor and successor sets (omitted when both are `iorw`), and the
/// two encodings objdump names: `fence.tso` and `pause`.
fn fence(bits: u32) -> String {
    let fm = bits >> 28;
    let pred = (bits >> 24) & 15;
    let succ = (bits >> 20) & 15;
    let set = |s: u32| -> String {
        ["i", "o", "r", "w"]
            .iter()
            .enumerate()
            .filter(|(i, _)| s & (8 >> i) != 0)
            .map(|(_, c)| *c)
            .collect()
    };
    if fm == 8 && pred == 3 && succ == 3 {
        return "fence.tso".into();
    }
    if fm == 0 && pred == 1 && succ == 0 && bits & 0x000f_8f80 == 0 {
        return "pause".into();
    }
    if pred == 15 && succ == 15 {
        return "fence".into();
    }
    format!("fence {},{}", set(pred), set(succ))
}

/// The Zicsr instructions and their pseudo-instructions.
fn csr(d: Decoded) -> String {
    let num = (d.imm & 0xfff) as u32;
    let uimm = (d.imm >> 12) & 31;
    let immediate = matches!(d.op, Op::Csrrwi | Op::Csrrsi | Op::Csrrci);
    let src = if immediate {
        uimm.to_string()
    } else {
        reg(d.rs1).to_string()
    };
    let rd = reg(d.rd);
    let name = csr_name(num);
    // Reads: csrrs rd, csr, zero.
    if d.op == Op::Csrrs && d.rs1 == 0 {
        if let Some(alias) = counter_alias(num) {
            return format!("{alias} {rd}");
        }
        return match num {
            1 => format!("frflags {rd}"),
            2 => format!("frrm {rd}"),
            3 => format!("frcsr {rd}"),
            _ => format!("csrr {rd},{name}"),
        };
    }
    // The floating-point status swaps objdump names even without an FPU.
    if matches!(d.op, Op::Csrrw | Op::Csrrwi) && (1..=3).contains(&num) {
        let alias = match (num, immediate) {
            (1, false) => "fsflags",
            (2, false) => "fsrm",
            (3, false) => "fscsr",
            (1, true) => "fsflagsi",
            (2, true) => "fsrmi",
            _ => "",
        };
        if !alias.is_empty() {
            return if d.rd == 0 && !immediate {
                format!("{alias} {src}")
            } else {
                format!("{alias} {rd},{src}")
            };
        }
    }
    if d.rd == 0 {
        let short = match d.op {
            Op::Csrrw | Op::Csrrwi => "csrw",
            Op::Csrrs | Op::Csrrsi => "csrs",
            _ => "csrc",
        };
        return format!("{short} {name},{src}");
    }
    format!("{} {rd},{name},{src}", mnemonic(d.op))
}

/// `rdcycle` & co.: the user counters read with `csrrs rd, csr, zero`.
fn counter_alias(num: u32) -> Option<&'static str> {
    Some(match num {
        0xc00 => "rdcycle",
        0xc01 => "rdtime",
        0xc02 => "rdinstret",
        0xc80 => "rdcycleh",
        0xc81 => "rdtimeh",
        0xc82 => "rdinstreth",
        _ => return None,
    })
}

/// A CSR's name as objdump 2.40 prints it, or its number in hex when it has none.
pub fn csr_name(num: u32) -> String {
    let numbered = |base: u32, first: u32, last: u32, prefix: &str, suffix: &str| {
        (num >= base + first && num <= base + last)
            .then(|| format!("{prefix}{}{suffix}", num - base))
    };
    let family = numbered(0x3a0, 0, 15, "pmpcfg", "")
        .or_else(|| numbered(0x3b0, 0, 63, "pmpaddr", ""))
        .or_else(|| numbered(0x320, 3, 31, "mhpmevent", ""))
        .or_else(|| numbered(0x720, 3, 31, "mhpmevent", "h"))
        .or_else(|| numbered(0xb00, 3, 31, "mhpmcounter", ""))
        .or_else(|| numbered(0xb80, 3, 31, "mhpmcounter", "h"))
        .or_else(|| numbered(0xc00, 3, 31, "hpmcounter", ""))
        .or_else(|| numbered(0xc80, 3, 31, "hpmcounter", "h"));
    if let Some(name) = family {
        return name;
    }
    match CSR_NAMES.binary_search_by_key(&num, |&(n, _)| n) {
        Ok(i) => CSR_NAMES[i].1.to_string(),
        Err(_) => format!("0x{num:x}"),
    }
}

/// Named CSRs outside the numbered families, sorted by number (objdump 2.40's table).
const CSR_NAMES: &[(u32, &str)] = &[
    (0x001, "fflags"),
    (0x002, "frm"),
    (0x003, "fcsr"),
    (0x008, "vstart"),
    (0x009, "vxsat"),
    (0x00a, "vxrm"),
    (0x00f, "vcsr"),
    (0x015, "seed"),
    (0x100, "sstatus"),
    (0x104, "sie"),
    (0x105, "stvec"),
    (0x106, "scounteren"),
    (0x10a, "senvcfg"),
    (0x10c, "sstateen0"),
    (0x10d, "sstateen1"),
    (0x10e, "sstateen2"),
    (0x10f, "sstateen3"),
    (0x114, "sieh"),
    (0x140, "sscratch"),
    (0x141, "sepc"),
    (0x142, "scause"),
    (0x143, "stval"),
    (0x144, "sip"),
    (0x14d, "stimecmp"),
    (0x150, "siselect"),
    (0x151, "sireg"),
    (0x154, "siph"),
    (0x15c, "stopei"),
    (0x15d, "stimecmph"),
    (0x180, "satp"),
    (0x200, "vsstatus"),
    (0x204, "vsie"),
    (0x205, "vstvec"),
    (0x214, "vsieh"),
    (0x240, "vsscratch"),
    (0x241, "vsepc"),
    (0x242, "vscause"),
    (0x243, "vstval"),
    (0x244, "vsip"),
    (0x24d, "vstimecmp"),
    (0x250, "vsiselect"),
    (0x251, "vsireg"),
    (0x254, "vsiph"),
    (0x25c, "vstopei"),
    (0x25d, "vstimecmph"),
    (0x280, "vsatp"),
    (0x300, "mstatus"),
    (0x301, "misa"),
    (0x302, "medeleg"),
    (0x303, "mideleg"),
    (0x304, "mie"),
    (0x305, "mtvec"),
    (0x306, "mcounteren"),
    (0x308, "mvien"),
    (0x309, "mvip"),
    (0x30a, "menvcfg"),
    (0x30c, "mstateen0"),
    (0x30d, "mstateen1"),
    (0x30e, "mstateen2"),
    (0x30f, "mstateen3"),
    (0x310, "mstatush"),
    (0x313, "midelegh"),
    (0x314, "mieh"),
    (0x318, "mvienh"),
    (0x319, "mviph"),
    (0x31a, "menvcfgh"),
    (0x31c, "mstateen0h"),
    (0x31d, "mstateen1h"),
    (0x31e, "mstateen2h"),
    (0x31f, "mstateen3h"),
    (0x320, "mcountinhibit"),
    (0x340, "mscratch"),
    (0x341, "mepc"),
    (0x342, "mcause"),
    (0x343, "mtval"),
    (0x344, "mip"),
    (0x34a, "mtinst"),
    (0x34b, "mtval2"),
    (0x350, "miselect"),
    (0x351, "mireg"),
    (0x354, "miph"),
    (0x35c, "mtopei"),
    (0x5a8, "scontext"),
    (0x600, "hstatus"),
    (0x602, "hedeleg"),
    (0x603, "hideleg"),
    (0x604, "hie"),
    (0x605, "htimedelta"),
    (0x606, "hcounteren"),
    (0x607, "hgeie"),
    (0x608, "hvien"),
    (0x609, "hvictl"),
    (0x60a, "henvcfg"),
    (0x60c, "hstateen0"),
    (0x60d, "hstateen1"),
    (0x60e, "hstateen2"),
    (0x60f, "hstateen3"),
    (0x613, "hidelegh"),
    (0x615, "htimedeltah"),
    (0x618, "hvienh"),
    (0x61a, "henvcfgh"),
    (0x61c, "hstateen0h"),
    (0x61d, "hstateen1h"),
    (0x61e, "hstateen2h"),
    (0x61f, "hstateen3h"),
    (0x643, "htval"),
    (0x644, "hip"),
    (0x645, "hvip"),
    (0x646, "hviprio1"),
    (0x647, "hviprio2"),
    (0x64a, "htinst"),
    (0x655, "hviph"),
    (0x656, "hviprio1h"),
    (0x657, "hviprio2h"),
    (0x680, "hgatp"),
    (0x6a8, "hcontext"),
    (0x747, "mseccfg"),
    (0x757, "mseccfgh"),
    (0x7a0, "tselect"),
    (0x7a1, "tdata1"),
    (0x7a2, "tdata2"),
    (0x7a3, "tdata3"),
    (0x7a4, "tinfo"),
    (0x7a5, "tcontrol"),
    (0x7a8, "mcontext"),
    (0x7aa, "mscontext"),
    (0x7b0, "dcsr"),
    (0x7b1, "dpc"),
    (0x7b2, "dscratch0"),
    (0x7b3, "dscratch1"),
    (0xb00, "mcycle"),
    (0xb02, "minstret"),
    (0xb80, "mcycleh"),
    (0xb82, "minstreth"),
    (0xc00, "cycle"),
    (0xc01, "time"),
    (0xc02, "instret"),
    (0xc20, "vl"),
    (0xc21, "vtype"),
    (0xc22, "vlenb"),
    (0xc80, "cycleh"),
    (0xc81, "timeh"),
    (0xc82, "instreth"),
    (0xda0, "scountovf"),
    (0xdb0, "stopi"),
    (0xe12, "hgeip"),
    (0xeb0, "vstopi"),
    (0xf11, "mvendorid"),
    (0xf12, "marchid"),
    (0xf13, "mimpid"),
    (0xf14, "mhartid"),
    (0xf15, "mconfigptr"),
    (0xfb0, "mtopi"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudo_instructions_as_objdump_prints_them() {
        let pc = 0x8000_0000;
        // addi a0,zero,5 / addi a0,a1,0 / addi x0,x0,0 / addi sp,sp,-16
        assert_eq!(disassemble(0x0050_0513, pc), "li a0,5");
        assert_eq!(disassemble(0x0005_8513, pc), "mv a0,a1");
        assert_eq!(disassemble(0x0000_0013, pc), "nop");
        assert_eq!(disassemble(0xff01_0113, pc), "add sp,sp,-16");
        // jalr x0,0(ra) / jal x0,+0x50 / beq t5,x0,+8
        assert_eq!(disassemble(0x0000_8067, pc), "ret");
        assert_eq!(disassemble(0x0500_006f, pc), "j 80000050");
        assert_eq!(disassemble(0x000f_0463, pc + 0x24), "beqz t5,8000002c");
        // Compressed: c.addi sp,-16 / c.jr ra / c.li a0,0 / c.j -0x0a
        assert_eq!(disassemble(0x1141, pc), "add sp,sp,-16");
        assert_eq!(disassemble(0x8082, pc), "ret");
        assert_eq!(disassemble(0x4501, pc), "li a0,0");
        assert_eq!(disassemble(0xbfdd, 0x8000_0032), "j 80000028");
        // csrrs t5,mcause,x0 / csrrw x0,mtvec,t0 / csrrwi x0,0x744,8 / rdcycle
        assert_eq!(disassemble(0x3420_2f73, pc), "csrr t5,mcause");
        assert_eq!(disassemble(0x3052_9073, pc), "csrw mtvec,t0");
        assert_eq!(disassemble(0x7444_5073, pc), "csrw 0x744,8");
        assert_eq!(disassemble(0xc000_2573, pc), "rdcycle a0");
        assert_eq!(disassemble(0xc000_1073, pc), "unimp");
        assert_eq!(disassemble(0x0000_0000, pc), ".short 0x0000");
        assert_eq!(disassemble(0x0000_007f, pc), ".word 0x0000007f");
    }
}
