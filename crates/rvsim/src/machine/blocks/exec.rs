//! Running blocks: the run loop of the block engine, the op interpreter, and the accounting
//! of a block that ran to its end (all at once) or stopped early (op by op).

use super::{
    Block, BlockCache, BlockOp, Kind, LEN_DEAD, LEN_REFERENCE, MAX_LEFT, NO_BLOCK, NO_EXIT,
};
use crate::cache::Cache;
use crate::machine::{Machine, Stats, CHUNK_SHIFT};
use crate::pipeline::Pipeline;
use crate::stop::Stop;

/// How a block ended: the next pc, the exit it left by (its index in [`BlockCache::exits`]),
/// how the next pc was reached (the `way` of [`Machine::follow`]: each op's return site
/// knows it, so the chain needs no comparison of addresses), and the D-cache misses of its
/// ops.
#[derive(Clone, Copy)]
struct Done {
    next: u32,
    exit: u32,
    way: u8,
    dmiss: u32,
}

/// [`Done::way`]: fell through to the block's or a branch's next instruction. (The first two
/// ways index an exit's `chain`.)
const WAY_FALL: u8 = 0;
/// [`Done::way`]: took a branch's or a jal's static target.
const WAY_TAKEN: u8 = 1;
/// [`Done::way`]: an indirect jump.
const WAY_INDIRECT: u8 = 2;

/// Why a block stopped before its end: the op that must run on the reference engine, and
/// the D-cache misses of the ops before it.
#[derive(Clone, Copy)]
struct Cut {
    op: u32,
    dmiss: u32,
}

/// What the fast path must stay within: stores it may write without the reference engine's
/// checks, and jump targets it may take without a trap.
struct Plain<'a> {
    base: u32,
    /// A jump target must satisfy `target & align_mask == 0`.
    align_mask: u32,
    /// The reference's map of the chunks of memory that ever held a decoded instruction
    /// (`Machine::code_chunks`): a store into any other chunk changes no instruction.
    code_chunks: &'a [u8],
    /// Chunks wholly inside memory (at most `code_chunks.len()`): a store into one of them
    /// needs no test against the end of memory. A memory whose size is not a whole number
    /// of chunks leaves its last, partial chunk to the reference engine.
    full_chunks: usize,
    tohost: u32,
}

impl Plain<'_> {
    /// The memory offset of a `size`-byte store at `addr` when nothing but the store itself
    /// has to happen: inside one chunk of memory wholly in memory (so all `size` bytes are
    /// in memory), a chunk that never held a decoded instruction, and not to `tohost`.
    #[inline(always)]
    fn offset(&self, addr: u32, size: u32) -> Option<usize> {
        let off = addr.wrapping_sub(self.base) as usize;
        let inside = off & ((1 << CHUNK_SHIFT) - 1) <= (1 << CHUNK_SHIFT) - size as usize;
        let chunk = off >> CHUNK_SHIFT;
        debug_assert!(self.full_chunks <= self.code_chunks.len());
        // SAFETY: `chunk < full_chunks <= code_chunks.len()` (`run_chained` sets
        // `full_chunks` from the memory's size, which the map covers).
        let plain = inside
            && chunk < self.full_chunks
            && *unsafe { self.code_chunks.get_unchecked(chunk) } == 0
            && addr & !3 != self.tohost;
        plain.then_some(off)
    }
}

/// What the chained loop uses of the machine, borrowed field by field.
struct Core<'a> {
    regs: &'a mut [u32; 32],
    ram: &'a mut [u8],
    plain: Plain<'a>,
    icache: Option<&'a mut Cache>,
    dcache: Option<&'a mut Cache>,
    pipeline: Option<&'a mut Pipeline>,
    stats: &'a mut Stats,
}

/// Why the chained loop returned.
enum Why {
    /// The block at `pc` is not known from where the run came (exit `from`, by `way`: see
    /// [`Machine::follow`]), or is dead.
    Lookup { from: u32, way: usize },
    /// The block at `pc` cannot run now: it is longer than the steps left, or an entry for
    /// the reference engine, or there is no block at `pc`.
    Step,
    /// The block at `pc`, block `id`, stopped before one of its ops.
    Cut { id: u32, cut: Cut },
}

/// Where the chained loop stopped: the pc of the block it could not run or finish, and why.
struct Leave {
    pc: u32,
    why: Why,
}

impl Machine {
    /// The block engine's run loop, compiled once per model combination (`IC` I-cache, `DC`
    /// D-cache, `PIPE` pipeline). Batches are those of the reference loop
    /// ([`Machine::batch_budget`]): within one, chained blocks run while they fit in the
    /// steps left before the batch's checked step, and single steps of the reference engine
    /// do the rest.
    pub(in crate::machine) fn run_blocks<const IC: bool, const DC: bool, const PIPE: bool>(
        &mut self,
    ) -> Stop {
        loop {
            if self.stats.steps >= self.max_steps {
                return Stop::Limit {
                    limit: self.max_steps,
                    pc: self.pc,
                };
            }
            if self.stats.steps >= self.next_time_check {
                if let Some(stop) = self.check_time() {
                    return stop;
                }
            }
            let mut left = (self.start_batch() - 1).min(MAX_LEFT as u64) as u32;
            let mut pc = self.pc;
            let mut id = self.block_at(pc);
            while left > 0 {
                let leave = self.run_chained::<IC, DC, PIPE>(pc, id, &mut left);
                pc = leave.pc;
                self.pc = pc;
                match leave.why {
                    Why::Lookup { from, way } => {
                        id = self.follow(pc, from, way);
                        continue;
                    }
                    Why::Step => {}
                    Why::Cut { id, cut } => {
                        pc = self.retire_prefix::<IC, PIPE>(id, cut);
                        self.pc = pc;
                        left -= cut.op;
                    }
                }
                // Instructions on the reference engine, as long as the block at the next pc
                // is an entry for it (CSR accesses and traps in a handler, code that keeps
                // changing): without a return to the chained loop for each.
                loop {
                    if left == 0 {
                        break;
                    }
                    self.blocks.reference_steps += 1;
                    left -= 1;
                    self.stats.steps += 1;
                    pc = match self.execute_next::<IC, PIPE>(pc) {
                        Ok(next) => next,
                        Err(stop) => return stop,
                    };
                    if self.recheck {
                        break;
                    }
                    id = self.block_at(pc);
                    if self.blocks.block(id).len != LEN_REFERENCE {
                        break;
                    }
                }
                if self.recheck {
                    break;
                }
            }
            if !self.recheck {
                if let Some(stop) = self.step_with::<IC, PIPE>() {
                    return stop;
                }
            }
        }
    }

    /// Runs blocks from block `id` at `pc`, each followed by its chained successor, while
    /// they fit in `left` steps (which it decreases).
    #[inline(always)]
    fn run_chained<const IC: bool, const DC: bool, const PIPE: bool>(
        &mut self,
        pc: u32,
        id: u32,
        left: &mut u32,
    ) -> Leave {
        let full_chunks = (self.ram.len() >> CHUNK_SHIFT).min(self.code_chunks.len());
        let mut core = Core {
            regs: &mut self.regs,
            ram: &mut self.ram,
            plain: Plain {
                base: self.base,
                align_mask: self.align_mask,
                code_chunks: &self.code_chunks,
                full_chunks,
                tohost: self.tohost,
            },
            icache: self.icache.as_mut(),
            dcache: self.dcache.as_mut(),
            pipeline: self.pipeline.as_mut(),
            stats: &mut self.stats,
        };
        run_chain::<IC, DC, PIPE>(&mut core, &self.blocks, pc, id, left)
    }

    /// Accounts for the ops of block `id` before `cut.op`, one by one as the reference
    /// engine would have. Returns the address of the op that stopped the block.
    #[cold]
    #[inline(never)]
    fn retire_prefix<const IC: bool, const PIPE: bool>(&mut self, id: u32, cut: Cut) -> u32 {
        self.blocks.cuts += 1;
        let first = self.blocks.blocks[id as usize].ops as usize;
        for i in first..first + cut.op as usize {
            let (pc, d) = self.blocks.sources[i];
            self.stats.steps += 1;
            let imiss = self.fetch::<IC>(pc, d.len);
            // The D-cache misses are a sum: all of them go with the last op.
            self.dmiss = if i + 1 == first + cut.op as usize {
                cut.dmiss
            } else {
                0
            };
            // The next op's address: the instruction after, or a jump's target inside a
            // superblock.
            let next = self.blocks.sources[i + 1].0;
            self.retire::<PIPE>(d, pc, next, imiss);
        }
        self.blocks.sources[first + cut.op as usize].0
    }
}

/// The chained loop: block after block through their chains (and the indirect-jump table),
/// each block's counts added when it ends. Returns at the first block it cannot run.
#[inline(always)]
fn run_chain<const IC: bool, const DC: bool, const PIPE: bool>(
    core: &mut Core,
    bc: &BlockCache,
    pc: u32,
    id: u32,
    left: &mut u32,
) -> Leave {
    let mut budget = *left;
    let mut compressed = 0u64;
    let mut straddles = 0u64;
    // The cache misses of the blocks run, for the pipeline's stalls (added once at the end):
    // the D-cache's summed, the I-cache's as the growth of its count of misses.
    let mut dmisses = 0u64;
    let imisses_before = match core.icache.as_deref() {
        Some(ic) if IC && PIPE => ic.misses(),
        _ => 0,
    };
    // The pc is not carried from block to block: a block that runs knows its own (`b.pc`),
    // and the address of a successor that cannot run is at hand where that is found.
    let mut b = bc.block(id);
    let (pc, why) = if b.len > budget {
        (pc, stuck(b, id, NO_EXIT, WAY_INDIRECT as usize))
    } else {
        loop {
            let done = match run_ops::<DC, IC, PIPE>(
                core.regs,
                core.ram,
                &mut b,
                core.dcache.as_deref_mut(),
                Loop {
                    bc,
                    plain: &core.plain,
                    budget: &mut budget,
                    compressed: &mut compressed,
                },
            ) {
                Ok(done) => done,
                Err(cut) => {
                    let id = bc.id_of(b);
                    break (b.pc, Why::Cut { id, cut });
                }
            };
            let x = done.exit;
            debug_assert!((x as usize) < bc.exits.len());
            // SAFETY: a block that runs was built from at least one instruction, so it has
            // exits `exits..=last_exit` in the arena, and `run_ops` reports one of them (a
            // branch's exit index is set by `build::new_block` among its block's exits).
            let e = unsafe { bc.exits.get_unchecked(x as usize) };
            budget -= e.len;
            compressed += e.compressed as u64;
            let next = done.next;
            if IC {
                if let Some(ic) = core.icache.as_deref_mut() {
                    let lines = b.lines as usize..e.lines_end as usize;
                    debug_assert!(lines.start <= lines.end && lines.end <= bc.lines.len());
                    // SAFETY: an exit's lines are a prefix of its block's, appended to
                    // `lines` when the block was built (`build::new_block`): `b.lines <=
                    // e.lines_end <= lines.len()`.
                    let lines = unsafe { bc.lines.get_unchecked(lines) };
                    ic.fetch_lines(lines, e.fetches);
                }
                straddles += e.straddles as u64;
            }
            if PIPE {
                if let Some(p) = core.pipeline.as_deref_mut() {
                    p.retire_block(&e.timing, next != e.fall);
                    dmisses += done.dmiss as u64;
                }
            }
            let way = done.way as usize;
            // An unknown successor is NO_BLOCK, a dead block: the test of the length below
            // stops there.
            let id = match e.chain.get(way) {
                Some(&id) => id,
                None => bc.jump_target(next),
            };
            b = bc.block(id);
            if b.len > budget {
                break (next, stuck(b, id, x, way));
            }
        }
    };
    let retired = (*left - budget) as u64;
    let s = &mut *core.stats;
    s.steps += retired;
    s.instret += retired;
    s.compressed_retired += compressed;
    s.straddling_fetches += straddles;
    if PIPE {
        if let Some(p) = core.pipeline.as_deref_mut() {
            let imisses = match core.icache.as_deref() {
                Some(ic) if IC => ic.misses() - imisses_before,
                _ => 0,
            };
            p.retire_blocks(retired, imisses, dmisses);
        }
    }
    *left = budget;
    Leave { pc, why }
}

/// Why block `b` (`id`), reached from exit `from` by `way`, cannot run in the steps left:
/// it is dead and can be looked up (and linked), or it must be stepped.
#[inline(always)]
fn stuck(b: &Block, id: u32, from: u32, way: usize) -> Why {
    if b.len == LEN_DEAD && (id != NO_BLOCK || from != NO_EXIT) {
        Why::Lookup { from, way }
    } else {
        Why::Step
    }
}

impl BlockCache {
    /// The id of block `b`, one of `blocks` (found from its address, so that the chained loop
    /// need not keep the id of the block running).
    #[cold]
    fn id_of(&self, b: &Block) -> u32 {
        let at = b as *const Block as usize - self.blocks.as_ptr() as usize;
        (at / std::mem::size_of::<Block>()) as u32
    }

    /// Block `id`, unchecked.
    #[inline(always)]
    fn block(&self, id: u32) -> &Block {
        debug_assert!((id as usize) < self.blocks.len());
        // SAFETY: every block id the run can hold is an index into `blocks`: it comes from
        // `block_at`/`follow` (a slot, a chain, the jump table or a block just built) or from
        // a chain or the jump table in `run_chain`, and the arena only grows except in
        // `BlockCache::clear`, which empties every table and chain holding ids.
        unsafe { self.blocks.get_unchecked(id as usize) }
    }
}

/// `N` bytes of memory at `off`, if they are all inside it.
#[inline(always)]
fn read<const N: usize>(ram: &[u8], off: usize) -> Option<[u8; N]> {
    ram.get(off..off + N)
        .map(|b| b.try_into().unwrap_or([0; N]))
}

/// What a taken branch needs to go on at its target without leaving the op interpreter (to
/// its own block's start, or to the block chained to it): the blocks, their exits' counts,
/// and the chained loop's steps left and compressed count, which it adds them to.
struct Loop<'a, 'b> {
    bc: &'b BlockCache,
    plain: &'a Plain<'a>,
    budget: &'a mut u32,
    compressed: &'a mut u64,
}

/// The op interpreter. Free of `self` so the compiler knows the registers, the memory and the
/// ops do not overlap, and keeps their addresses in registers. Without the I-cache and the
/// pipeline (the D-cache counts its accesses op by op), a taken branch to the block's own
/// start, or to the block chained to its exit, adds its exit's counts and goes on there,
/// while the steps left hold that whole block (as the chained loop would: the same test of
/// its length, a dead or missing block failing it); `block` is then the block running, for
/// the caller's accounting of the exit or the cut it ends with. A loop that is one block or a
/// few never leaves the op interpreter.
#[inline(always)]
fn run_ops<'b, const DC: bool, const IC: bool, const PIPE: bool>(
    regs: &mut [u32; 32],
    ram: &mut [u8],
    running: &mut &'b Block,
    mut dcache: Option<&mut Cache>,
    lp: Loop<'_, 'b>,
) -> Result<Done, Cut> {
    let (ops, plain): (&[BlockOp], &Plain<'_>) = (&lp.bc.ops, lp.plain);
    let mut dmiss = 0;
    let base = plain.base;
    let mut block: &Block = running;
    debug_assert!((block.ops as usize) < ops.len());
    // SAFETY: `block.ops` is the index of a block's first op in the arena.
    let mut start = unsafe { ops.as_ptr().add(block.ops as usize) };
    // The op running, as a pointer advanced at the end of each op's own code (so the
    // compiler keeps one pointer, not the op's and the next op's; an index cost an address
    // computation per dispatch). Its index in the block, for a cut, is its distance from
    // `start`. Every `at.add(k)` below stays inside the block's ops: an op reads its fused
    // second half or steps past itself only when the block goes on after it (every block's
    // ops end with a terminator, which returns or restarts the block, see `build::new_block`).
    let mut at: *const BlockOp = start;
    macro_rules! step {
        ($k:expr) => {
            // SAFETY: see `at`.
            at = unsafe { at.add($k) }
        };
    }
    // SAFETY (every use): the register fields of an op are masked to 0..32 when it is built
    // (`build::op_for`, `build::load_x0`), and `regs` has 32 entries.
    macro_rules! r {
        ($i:expr) => {
            *unsafe { regs.get_unchecked_mut($i as usize) }
        };
    }
    macro_rules! cut {
        ($k:expr) => {
            return Err(Cut {
                // SAFETY: `at` and `start` point into the same block's ops (see `at`).
                op: unsafe { $k.offset_from(start) } as u32,
                dmiss,
            })
        };
    }
    macro_rules! load {
        ($k:expr, $op:expr, $n:literal) => {{
            let addr = r!($op.rs1).wrapping_add($op.imm);
            let Some(bytes) = read::<$n>(ram, addr.wrapping_sub(base) as usize) else {
                cut!($k)
            };
            if DC {
                if let Some(dc) = dcache.as_deref_mut() {
                    dmiss += dc.access_bytes(addr, $n, false);
                }
            }
            bytes
        }};
    }
    macro_rules! store {
        ($k:expr, $op:expr, $n:literal) => {{
            let addr = r!($op.rs1).wrapping_add($op.imm);
            let Some(off) = plain.offset(addr, $n) else {
                cut!($k)
            };
            if DC {
                if let Some(dc) = dcache.as_deref_mut() {
                    dmiss += dc.access_bytes(addr, $n, true);
                }
            }
            let value = rs2!().to_le_bytes();
            debug_assert!(ram.get(off..off + $n).is_some());
            // SAFETY: `Plain::offset` gives only offsets whose `$n` bytes lie in a page wholly
            // inside memory.
            unsafe { ram.get_unchecked_mut(off..off + $n) }.copy_from_slice(&value[..$n]);
        }};
    }
    // A block's end: the last exit.
    macro_rules! done {
        ($next:expr, $way:expr) => {
            Done {
                next: $next,
                exit: block.last_exit,
                way: $way,
                dmiss,
            }
        };
    }
    // A branch: taken, the block leaves by the branch's exit; not taken, it goes on `$step`
    // ops further (past the branch; after a block's last instruction that is its `End`).
    macro_rules! branch {
        ($op:expr, $taken:expr, $step:expr) => {{
            if $taken {
                let exit = block.exits + $op.rd as u32;
                if !IC && !PIPE {
                    debug_assert!((exit as usize) < lp.bc.exits.len());
                    // SAFETY: as for the exit `run_chain` reads after a block: a branch's
                    // exit index is one of its block's exits (`build::new_block`).
                    let e = unsafe { lp.bc.exits.get_unchecked(exit as usize) };
                    // The block fitted in the steps left when it started: `e.len` of them
                    // are there to take.
                    let left = *lp.budget - e.len;
                    if $op.imm == block.pc {
                        if left >= block.len {
                            *lp.budget = left;
                            *lp.compressed += e.compressed as u64;
                            at = start;
                            continue;
                        }
                    } else {
                        // A successor not known yet is NO_BLOCK, a dead block, which fails
                        // the test of its length.
                        let next = lp.bc.block(e.chain[WAY_TAKEN as usize]);
                        if left >= next.len {
                            *lp.budget = left;
                            *lp.compressed += e.compressed as u64;
                            block = next;
                            *running = next;
                            debug_assert!((next.ops as usize) < ops.len());
                            // SAFETY: `next.ops` is the index of a block's first op in the
                            // arena.
                            start = unsafe { ops.as_ptr().add(next.ops as usize) };
                            at = start;
                            continue;
                        }
                    }
                }
                return Ok(Done {
                    next: $op.imm,
                    exit,
                    way: WAY_TAKEN,
                    dmiss,
                });
            }
            step!($step);
            continue;
        }};
    }
    loop {
        // SAFETY: `at` points into `ops` (see `at`).
        debug_assert!(unsafe { at.offset_from(ops.as_ptr()) } < ops.len() as isize);
        // SAFETY: every block's ops end with a terminator (a branch, a jump or `End`: see
        // `build::new_block`), which returns from this loop before `at` passes it.
        let op = unsafe { *at };
        let imm = op.imm;
        macro_rules! rs1 {
            () => {
                r!(op.rs1)
            };
        }
        // Read from the op in memory where it is used, not with the others before the
        // dispatch: most ops have no second source register.
        macro_rules! rs2 {
            () => {{
                // SAFETY: as for `op` above.
                let rs2 = unsafe { (*at).rs2 };
                r!(rs2)
            }};
        }
        // A fused pair (see `Kind::LiBeq`): writes the first half's `$value`, then runs the
        // branch in the next slot, comparing its registers unsigned with `$cmp`.
        macro_rules! fused {
            ($value:expr, $cmp:tt) => {{
                let value = $value;
                r!(op.rd) = value;
                // SAFETY: a fused op is always followed by its branch in the same block
                // (`build::new_block` fuses an op only when it pushes a branch after it).
                step!(1);
                let branch = unsafe { *at };
                branch!(branch, r!(branch.rs1) $cmp r!(branch.rs2), 1)
            }};
        }
        // A fused pair of ops that are not branches (see `Kind::AddiAdd`): the first half
        // writes `$value` (if it writes a register), then the second half runs `$second` with
        // its op as `$n` and `at` its index, and writes the value that gives (if any).
        macro_rules! pair {
            ($value:expr, |$n:ident| $second:expr) => {{
                r!(op.rd) = $value;
                pair!(|$n| $second)
            }};
            (|$n:ident| $second:expr) => {{
                // SAFETY: a fused op is always followed by its second half in the same block
                // (`build::new_block` fuses an op only with the op it pushes after it).
                step!(1);
                let $n = unsafe { *at };
                r!($n.rd) = $second;
                step!(1);
                continue;
            }};
        }
        // On to the next op, for an op that writes no register.
        macro_rules! next {
            () => {{
                step!(1);
                continue;
            }};
        }
        let value = match op.kind {
            Kind::Nop => next!(),
            Kind::Li => imm,
            Kind::Mv => rs1!(),
            Kind::Addi => rs1!().wrapping_add(imm),
            Kind::Slti => ((rs1!() as i32) < imm as i32) as u32,
            Kind::Sltiu => (rs1!() < imm) as u32,
            Kind::Xori => rs1!() ^ imm,
            Kind::Ori => rs1!() | imm,
            Kind::Andi => rs1!() & imm,
            Kind::Slli => rs1!() << (imm & 31),
            Kind::Srli => rs1!() >> (imm & 31),
            Kind::Srai => ((rs1!() as i32) >> (imm & 31)) as u32,
            Kind::Add => rs1!().wrapping_add(rs2!()),
            Kind::Sub => rs1!().wrapping_sub(rs2!()),
            Kind::Sll => rs1!() << (rs2!() & 31),
            Kind::Slt => ((rs1!() as i32) < (rs2!() as i32)) as u32,
            Kind::Sltu => (rs1!() < rs2!()) as u32,
            Kind::Xor => rs1!() ^ rs2!(),
            Kind::Srl => rs1!() >> (rs2!() & 31),
            Kind::Sra => ((rs1!() as i32) >> (rs2!() & 31)) as u32,
            Kind::Or => rs1!() | rs2!(),
            Kind::And => rs1!() & rs2!(),
            Kind::Mul => rs1!().wrapping_mul(rs2!()),
            Kind::Mulh => ((rs1!() as i32 as i64 * rs2!() as i32 as i64) >> 32) as u32,
            Kind::Mulhsu => ((rs1!() as i32 as i64).wrapping_mul(rs2!() as i64) >> 32) as u32,
            Kind::Mulhu => ((rs1!() as u64 * rs2!() as u64) >> 32) as u32,
            Kind::Div => {
                if rs2!() == 0 {
                    u32::MAX
                } else {
                    (rs1!() as i32).wrapping_div(rs2!() as i32) as u32
                }
            }
            Kind::Divu => rs1!().checked_div(rs2!()).unwrap_or(u32::MAX),
            Kind::Rem => {
                if rs2!() == 0 {
                    rs1!()
                } else {
                    (rs1!() as i32).wrapping_rem(rs2!() as i32) as u32
                }
            }
            Kind::Remu => rs1!().checked_rem(rs2!()).unwrap_or(rs1!()),
            Kind::Lb => load!(at, op, 1)[0] as i8 as i32 as u32,
            Kind::Lbu => load!(at, op, 1)[0] as u32,
            Kind::Lh => i16::from_le_bytes(load!(at, op, 2)) as i32 as u32,
            Kind::Lhu => u16::from_le_bytes(load!(at, op, 2)) as u32,
            Kind::Lw => u32::from_le_bytes(load!(at, op, 4)),
            Kind::LoadX0 => {
                match op.rd {
                    1 => drop(load!(at, op, 1)),
                    2 => drop(load!(at, op, 2)),
                    _ => drop(load!(at, op, 4)),
                }
                next!();
            }
            Kind::Sb => {
                store!(at, op, 1);
                next!();
            }
            Kind::Sh => {
                store!(at, op, 2);
                next!();
            }
            Kind::Sw => {
                store!(at, op, 4);
                next!();
            }
            Kind::Beq => branch!(op, rs1!() == rs2!(), 1),
            Kind::Bne => branch!(op, rs1!() != rs2!(), 1),
            Kind::Blt => branch!(op, (rs1!() as i32) < (rs2!() as i32), 1),
            Kind::Bge => branch!(op, (rs1!() as i32) >= (rs2!() as i32), 1),
            Kind::Bltu => branch!(op, rs1!() < rs2!(), 1),
            Kind::Bgeu => branch!(op, rs1!() >= rs2!(), 1),
            Kind::Jal => {
                r!(op.rd) = block.fall;
                return Ok(done!(imm, WAY_TAKEN));
            }
            Kind::J => return Ok(done!(imm, WAY_TAKEN)),
            // Two arms, not one testing the kind: the kind then need not stay in a register
            // past the dispatch of every op.
            Kind::Jalr => {
                let target = rs1!().wrapping_add(imm) & !1;
                if target & plain.align_mask != 0 {
                    cut!(at)
                }
                r!(op.rd) = block.fall;
                return Ok(done!(target, WAY_INDIRECT));
            }
            Kind::Jr => {
                let target = rs1!().wrapping_add(imm) & !1;
                if target & plain.align_mask != 0 {
                    cut!(at)
                }
                return Ok(done!(target, WAY_INDIRECT));
            }
            Kind::End => return Ok(done!(block.fall, WAY_FALL)),
            Kind::LiBeq => fused!(imm, ==),
            Kind::LiBne => fused!(imm, !=),
            Kind::LiBltu => fused!(imm, <),
            Kind::LiBgeu => fused!(imm, >=),
            Kind::MvBeq => fused!(rs1!(), ==),
            Kind::MvBne => fused!(rs1!(), !=),
            Kind::AddBeq => fused!(rs1!().wrapping_add(rs2!()), ==),
            Kind::AddBne => fused!(rs1!().wrapping_add(rs2!()), !=),
            Kind::AddiBeq => fused!(rs1!().wrapping_add(imm), ==),
            Kind::AddiBne => fused!(rs1!().wrapping_add(imm), !=),
            Kind::AndiBeq => fused!(rs1!() & imm, ==),
            Kind::AndiBne => fused!(rs1!() & imm, !=),
            Kind::SrliBeq => fused!(rs1!() >> (imm & 31), ==),
            Kind::SrliBne => fused!(rs1!() >> (imm & 31), !=),
            Kind::LwBeq => fused!(u32::from_le_bytes(load!(at, op, 4)), ==),
            Kind::LwBne => fused!(u32::from_le_bytes(load!(at, op, 4)), !=),
            Kind::LhBeq => fused!(i16::from_le_bytes(load!(at, op, 2)) as i32 as u32, ==),
            Kind::LhBne => fused!(i16::from_le_bytes(load!(at, op, 2)) as i32 as u32, !=),
            Kind::LbuBeq => fused!(load!(at, op, 1)[0] as u32, ==),
            Kind::LbuBne => fused!(load!(at, op, 1)[0] as u32, !=),
            Kind::XorBne => fused!(rs1!() ^ rs2!(), !=),
            Kind::AddBltu => fused!(rs1!().wrapping_add(rs2!()), <),
            Kind::AddiAdd => pair!(rs1!().wrapping_add(imm), |n| r!(n.rs1)
                .wrapping_add(r!(n.rs2))),
            Kind::AndiAndi => pair!(rs1!() & imm, |n| r!(n.rs1) & n.imm),
            Kind::AndiLi => pair!(rs1!() & imm, |n| n.imm),
            Kind::SrliAndi => pair!(rs1!() >> (imm & 31), |n| r!(n.rs1) & n.imm),
            Kind::MulAdd => pair!(rs1!().wrapping_mul(rs2!()), |n| r!(n.rs1)
                .wrapping_add(r!(n.rs2))),
            Kind::AddMul => pair!(rs1!().wrapping_add(rs2!()), |n| r!(n.rs1)
                .wrapping_mul(r!(n.rs2))),
            Kind::MvLw => pair!(rs1!(), |n| u32::from_le_bytes(load!(at, n, 4))),
            Kind::LwSw => {
                r!(op.rd) = u32::from_le_bytes(load!(at, op, 4));
                step!(1);
                // SAFETY: as in `pair!`.
                let n = unsafe { *at };
                store!(at, n, 4);
                step!(1);
                continue;
            }
            Kind::LhAddi => pair!(i16::from_le_bytes(load!(at, op, 2)) as i32 as u32, |n| r!(
                n.rs1
            )
            .wrapping_add(n.imm)),
            Kind::LhLh => pair!(i16::from_le_bytes(load!(at, op, 2)) as i32 as u32, |n| {
                i16::from_le_bytes(load!(at, n, 2)) as i32 as u32
            }),
            Kind::SwMv => {
                store!(at, op, 4);
                pair!(|n| r!(n.rs1))
            }
            Kind::AndiSub => pair!(rs1!() & imm, |n| r!(n.rs1).wrapping_sub(r!(n.rs2))),
            Kind::SrliAnd => pair!(rs1!() >> (imm & 31), |n| r!(n.rs1) & r!(n.rs2)),
            Kind::SbAdd => {
                store!(at, op, 1);
                pair!(|n| r!(n.rs1).wrapping_add(r!(n.rs2)))
            }
        };
        r!(op.rd) = value;
        step!(1);
    }
}
