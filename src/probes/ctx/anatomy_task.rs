//! One side of an anatomy rung: two tasks (threads of this process or forked processes)
//! handing a futex turn word back and forth, each doing before every switch what the side
//! says (make a register state live, walk a working set), under the speculation control it
//! asks for. The first task, the timer, times `n` round trips on command and writes the ns
//! into the shared page, so the measuring thread never takes on the tasks' register state or
//! speculation control: everything a side changes dies with its tasks.

use super::anatomy_regs::{self as regs, Regs};
use super::Mode;
use crate::engine::partner::{
    futex, partner_error, spawn_ready_child, Child, SharedPage, ThreadPartner,
};
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::Participant;
use crate::probes::workset::{walk_raw, Access, Pages, WorkingSet};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// Bytes of a cache line, the stride of a packed walk.
pub const LINE: usize = 64;
/// The stride of a page-stride walk: one page and one line, so walk step i lands in its own
/// page (page i + i/64) at line i mod 64, and the P touched lines spread over every cache set
/// as the packed walk's do (a stride of exactly one page would put them all in one set).
pub const PAGE_STRIDE: usize = 4096 + LINE;

/// What a task walks on every turn: the sweep's walk (`workset::walk_raw`, one word per
/// stride, read), over lines packed together or one line per page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    None,
    /// `lines` consecutive cache lines.
    Packed {
        lines: usize,
    },
    /// One line in each of `pages` distinct pages.
    PageStride {
        pages: usize,
    },
}

impl Walk {
    pub fn stride(self) -> usize {
        match self {
            Walk::PageStride { .. } => PAGE_STRIDE,
            _ => LINE,
        }
    }

    /// Lines touched per walk.
    pub fn lines(self) -> usize {
        match self {
            Walk::None => 0,
            Walk::Packed { lines } => lines,
            Walk::PageStride { pages } => pages,
        }
    }

    /// Bytes of the mapping the walk covers.
    pub fn bytes(self) -> usize {
        self.lines() * self.stride()
    }
}

/// Slots of the shared page (32-bit view).
const TURN: usize = 0;
const STOP: usize = 16;
const CMD: usize = 32;
const DONE: usize = 48;
const READY_T: usize = 64;
const READY_P: usize = 80;
const SCRATCH: usize = 96;
/// Slots of the 64-bit view (from 32-bit slot 256 on, so the views do not overlap).
const N: usize = 128;
const NS: usize = 136;
const AND_T: usize = 144;
const OR_T: usize = 152;
const AND_P: usize = 160;
const OR_P: usize = 168;
const SPEC_T: usize = 176;
const SPEC_P: usize = 184;

/// One side of a rung.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    pub mode: Mode,
    /// false: the timer makes the same futex calls alone, returning at once (no switch).
    pub switching: bool,
    /// The register state both tasks load before every switch (Sse: none loaded).
    pub regs: Regs,
    /// Return the components `regs` adds to their initial state after loading them, so the
    /// same instructions run and only the state's liveness at the switch differs.
    pub release: bool,
    /// Both tasks ask for the indirect-branch barrier (PR_SPEC_FORCE_DISABLE).
    pub barrier: bool,
    /// What each task walks on every turn.
    pub walk: Walk,
    /// What the timer walks twice per round trip without switching (the walks' hot cost).
    pub hot: Walk,
    pub cpu: usize,
    pub partner_cpu: usize,
}

impl Side {
    /// Two threads on `cpu` switching with nothing more: the ladder's floor.
    pub fn threads(cpu: usize) -> Side {
        Side {
            mode: Mode::Thread,
            switching: true,
            regs: Regs::Sse,
            release: false,
            barrier: false,
            walk: Walk::None,
            hot: Walk::None,
            cpu,
            partner_cpu: cpu,
        }
    }

    pub fn processes(cpu: usize) -> Side {
        Side {
            mode: Mode::Process,
            ..Side::threads(cpu)
        }
    }
}

/// What a task does, copied into it before it starts (no allocation after fork).
#[derive(Clone, Copy)]
struct TaskCfg {
    regs: Regs,
    dirty: bool,
    release: bool,
    observe: bool,
    switching: bool,
    private: bool,
    walk: (usize, usize, usize),
    hot: (usize, usize, usize),
}

/// The liveness readings of a side (XINUSE, or arm64's read-back): per task, the AND (components live at every switch) and
/// the OR (components live at any switch) over every switch of every sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub and: [u64; 2],
    pub or: [u64; 2],
    pub samples: u64,
}

impl Default for Seen {
    fn default() -> Self {
        Seen {
            and: [!0; 2],
            or: [0; 2],
            samples: 0,
        }
    }
}

#[inline(always)]
fn walk(w: (usize, usize, usize)) -> u64 {
    if w.1 == 0 {
        return 0;
    }
    // SAFETY: the task's own live working set (address, length, stride), filled before.
    unsafe { walk_raw(w.0 as *mut u8, w.1, w.2, Access::Read) }
}

#[inline(always)]
fn prepare(c: &TaskCfg) -> u64 {
    regs::prepare(c.regs, c.dirty, c.release, c.observe)
}

fn stopped(page: &SharedPage) -> bool {
    page.slot(STOP).load(Ordering::Acquire) != 0
}

/// The timer: on each command, `n` round trips (or the same calls alone), timed.
fn timer_loop(page: &SharedPage, c: TaskCfg) -> i32 {
    let (turn, cmd, done, scratch) = (
        page.slot(TURN),
        page.slot(CMD),
        page.slot(DONE),
        page.slot(SCRATCH),
    );
    let mut last = 0;
    let mut sink = 0u64;
    loop {
        loop {
            let v = cmd.load(Ordering::Acquire);
            if stopped(page) {
                std::hint::black_box(sink);
                return 0;
            }
            if v != last {
                last = v;
                break;
            }
            futex::wait(cmd, last, c.private);
        }
        let n = page.slot64(N).load(Ordering::Acquire);
        let (mut and, mut or) = (!0u64, 0u64);
        let t0 = now_ns();
        for _ in 0..n {
            if c.switching {
                let x = prepare(&c);
                and &= x;
                or |= x;
                turn.store(1, Ordering::Release);
                futex::wake(turn, 1, c.private);
                while turn.load(Ordering::Acquire) == 1 {
                    futex::wait(turn, 1, c.private);
                }
                if stopped(page) {
                    return 0;
                }
            } else {
                for _ in 0..2 {
                    let x = prepare(&c);
                    and &= x;
                    or |= x;
                    scratch.store(1, Ordering::Release);
                    futex::wake(scratch, 1, c.private);
                    // Returns EAGAIN at once: the word is not 0.
                    futex::wait(scratch, 0, c.private);
                }
            }
            sink = sink.wrapping_add(walk(c.walk));
            sink = sink.wrapping_add(walk(c.hot)).wrapping_add(walk(c.hot));
        }
        let t = now_ns() - t0;
        page.slot64(NS).store(t, Ordering::Release);
        page.slot64(AND_T).store(and, Ordering::Release);
        page.slot64(OR_T).store(or, Ordering::Release);
        done.store(last, Ordering::Release);
        futex::wake(done, 1, c.private);
    }
}

/// The partner: wait for the turn, walk, load the state, hand the turn back.
fn partner_loop(page: &SharedPage, c: TaskCfg) -> i32 {
    let turn = page.slot(TURN);
    let (and, or) = (page.slot64(AND_P), page.slot64(OR_P));
    let mut sink = 0u64;
    loop {
        while turn.load(Ordering::Acquire) == 0 {
            if stopped(page) {
                std::hint::black_box(sink);
                return 0;
            }
            futex::wait(turn, 0, c.private);
        }
        if stopped(page) {
            return 0;
        }
        sink = sink.wrapping_add(walk(c.walk));
        let x = prepare(&c);
        and.fetch_and(x, Ordering::Relaxed);
        or.fetch_or(x, Ordering::Relaxed);
        turn.store(0, Ordering::Release);
        futex::wake(turn, 1, c.private);
    }
}

/// Tells both tasks of a thread side to return (a process side's are killed instead).
fn stop_tasks(page: &SharedPage) {
    page.slot(STOP).store(1, Ordering::Release);
    page.slot(TURN).store(2, Ordering::Release);
    futex::wake(page.slot(TURN), i32::MAX, true);
    page.slot(CMD).fetch_add(1, Ordering::AcqRel);
    futex::wake(page.slot(CMD), i32::MAX, true);
}

/// A running side. Dropping it ends both tasks and unmaps their working sets.
pub struct Pair {
    pub side: Side,
    page: Arc<SharedPage>,
    threads: Vec<ThreadPartner>,
    children: Vec<Child>,
    _sets: Vec<WorkingSet>,
    pub participants: Vec<Participant>,
    pub start_cpus: Vec<Option<usize>>,
    seq: i32,
    private: bool,
    pub seen: Seen,
}

/// A mapped working set for `w` (4 KiB pages, as the sweep's), or an empty one.
fn map_walk(w: Walk) -> Result<WorkingSet> {
    WorkingSet::map(w.bytes(), Some(Pages::Small))
}

fn triple(ws: &WorkingSet, w: Walk) -> (usize, usize, usize) {
    (ws.as_ptr() as usize, ws.len(), w.stride())
}

impl Pair {
    /// Start both tasks of `side`, ready; `observe`: read XINUSE (arm64: the read-back) before every switch.
    /// `dirty`: whether the tasks load `side.regs` (false only where a test plants a task that
    /// forgets to).
    pub fn start(side: Side, observe: bool, dirty: bool) -> Result<Pair> {
        let page = Arc::new(SharedPage::new()?);
        let private = side.mode == Mode::Thread;
        for s in [AND_T, AND_P] {
            page.slot64(s).store(!0, Ordering::Relaxed);
        }
        let sets = [
            map_walk(side.walk)?,
            map_walk(side.walk)?,
            map_walk(side.hot)?,
        ];
        let base = TaskCfg {
            regs: side.regs,
            dirty: dirty && side.regs != Regs::Sse,
            release: side.release,
            observe,
            switching: side.switching,
            private,
            walk: (0, 0, LINE),
            hot: (0, 0, LINE),
        };
        let timer_cfg = TaskCfg {
            walk: triple(&sets[0], side.walk),
            hot: triple(&sets[2], side.hot),
            ..base
        };
        let partner_cfg = TaskCfg {
            walk: triple(&sets[1], side.walk),
            ..base
        };
        let mut pair = Pair {
            side,
            page: page.clone(),
            threads: Vec::new(),
            children: Vec::new(),
            _sets: Vec::new(),
            participants: Vec::new(),
            start_cpus: Vec::new(),
            seq: 0,
            private,
            seen: Seen::default(),
        };
        match side.mode {
            Mode::Process => pair.spawn_processes(&sets, [timer_cfg, partner_cfg])?,
            Mode::Thread => pair.spawn_threads(&sets, [timer_cfg, partner_cfg])?,
        }
        pair._sets = sets.into();
        Ok(pair)
    }

    /// Fork the timer and the partner, each filling its own working sets and asking for the
    /// barrier where the side does, before it reports ready.
    fn spawn_processes(&mut self, sets: &[WorkingSet; 3], cfgs: [TaskCfg; 2]) -> Result<()> {
        let (side, page, pair) = (self.side, self.page.clone(), self);
        let barrier = side.barrier;
        let [timer_cfg, partner_cfg] = cfgs;
        for (i, (cfg, cpu, ready, spec)) in [
            (timer_cfg, side.cpu, READY_T, SPEC_T),
            (partner_cfg, side.partner_cpu, READY_P, SPEC_P),
        ]
        .into_iter()
        .enumerate()
        {
            let (ws, hot) = (&sets[i], &sets[2]);
            let pg = &page;
            let (c, on) = spawn_ready_child(
                &page,
                ready,
                cpu,
                || {
                    ws.fill();
                    if i == 0 {
                        hot.fill();
                    }
                    if barrier {
                        let a = regs::force_disable_indirect_branch();
                        pg.slot64(spec).store(a.get as u64, Ordering::Release);
                    }
                },
                || {
                    if i == 0 {
                        timer_loop(pg, cfg)
                    } else {
                        partner_loop(pg, cfg)
                    }
                },
            )?;
            let role = if i == 0 { "timer" } else { "partner" };
            pair.participants.push(Participant {
                role: format!("{role} process"),
                pid: c.pid(),
                tid: c.pid(),
                requested: vec![cpu],
            });
            pair.start_cpus.push(on);
            pair.children.push(c);
        }
        Ok(())
    }

    /// Spawn the timer and the partner as threads of this process (their sets filled here).
    fn spawn_threads(&mut self, sets: &[WorkingSet; 3], cfgs: [TaskCfg; 2]) -> Result<()> {
        let (side, page, pair) = (self.side, self.page.clone(), self);
        let barrier = side.barrier;
        let [timer_cfg, partner_cfg] = cfgs;
        if barrier {
            return Err(Error::usage(
                "the speculation barrier is asked for by process tasks only",
            ));
        }
        for s in sets {
            s.fill();
        }
        for (i, (cfg, cpu)) in [(timer_cfg, side.cpu), (partner_cfg, side.partner_cpu)]
            .into_iter()
            .enumerate()
        {
            let (p, q) = (page.clone(), page.clone());
            let (t, tid, on) = ThreadPartner::spawn_ready(
                cpu,
                move || {
                    if i == 0 {
                        timer_loop(&p, cfg);
                    } else {
                        partner_loop(&p, cfg);
                    }
                },
                move || stop_tasks(&q),
            )?;
            let role = if i == 0 { "timer" } else { "partner" };
            pair.participants.push(Participant::thread(
                &format!("{role} thread"),
                tid,
                vec![cpu],
            ));
            pair.start_cpus.push(on);
            pair.threads.push(t);
        }

        Ok(())
    }

    /// `n` round trips of this side (or the same calls alone); the ns the timer took.
    pub fn run(&mut self, n: u64) -> Result<u64> {
        let page = &self.page;
        page.slot64(AND_P).store(!0, Ordering::Release);
        page.slot64(OR_P).store(0, Ordering::Release);
        page.slot64(N).store(n, Ordering::Release);
        self.seq = self.seq.wrapping_add(1).max(1);
        let done: &AtomicI32 = page.slot(DONE);
        page.slot(CMD).store(self.seq, Ordering::Release);
        futex::wake(page.slot(CMD), 1, self.private);
        while done.load(Ordering::Acquire) != self.seq {
            let seen = done.load(Ordering::Acquire);
            let e = futex::wait_for(done, seen, self.private, 200_000_000);
            if e == libc::EINTR || e == libc::ETIMEDOUT {
                crate::engine::interrupt::check()?;
                if self.children.iter_mut().any(|c| c.has_exited()) {
                    return Err(partner_error("anatomy task", 0));
                }
            }
        }
        let get = |s: usize| page.slot64(s).load(Ordering::Acquire);
        let s = &mut self.seen;
        s.and[0] &= get(AND_T);
        s.or[0] |= get(OR_T);
        s.and[1] &= get(AND_P);
        s.or[1] |= get(OR_P);
        s.samples += 1;
        Ok(get(NS))
    }

    /// The tasks' read-back answers to the barrier request (prctl's bits, or -errno; 0 when
    /// not asked).
    pub fn spec_answers(&self) -> [i64; 2] {
        [SPEC_T, SPEC_P].map(|s| self.page.slot64(s).load(Ordering::Acquire) as i64)
    }

    /// Each task's `SpeculationIndirectBranch:` status line.
    pub fn status_lines(&self) -> Vec<Option<String>> {
        self.participants
            .iter()
            .map(|p| regs::status_line(p.pid, p.tid))
            .collect()
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        stop_tasks(&self.page);
        // ThreadPartner's drop joins; Child's kills and reaps.
        self.threads.clear();
        self.children.clear();
    }
}

/// Pages a walk really touches, counted on a fresh mapping (untouched pages are not
/// resident): one write walk of its pattern, then mincore. (lines, resident pages).
pub fn pages_touched(w: Walk) -> Result<(usize, usize)> {
    let ws = WorkingSet::map(w.bytes(), Some(Pages::Small))?;
    if ws.is_empty() {
        return Ok((0, 0));
    }
    // SAFETY: our own fresh mapping, walked by this thread alone.
    unsafe { walk_raw(ws.as_ptr(), ws.len(), w.stride(), Access::Write) };
    let pages = ws.len().div_ceil(4096);
    let mut vec = vec![0u8; pages];
    // SAFETY: the mapping is page-aligned and `vec` has one byte per page.
    let rc = unsafe { libc::mincore(ws.as_ptr() as *mut libc::c_void, ws.len(), vec.as_mut_ptr()) };
    if rc != 0 {
        return Err(crate::probes::os_error("mincore"));
    }
    let lines = ws.len().div_ceil(w.stride());
    Ok((lines, vec.iter().filter(|b| *b & 1 != 0).count()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::placement::AffinityGuard;

    fn cpu() -> usize {
        *crate::machine::affinity::allowed_cpus().last().unwrap()
    }

    #[test]
    fn a_page_stride_walk_touches_one_page_per_line_and_packed_few() {
        let (lines, pages) = pages_touched(Walk::PageStride { pages: 300 }).unwrap();
        assert_eq!((lines, pages), (300, 300));
        let (lines, pages) = pages_touched(Walk::Packed { lines: 300 }).unwrap();
        assert_eq!(lines, 300);
        assert_eq!(pages, 300usize.div_ceil(64));
    }

    #[test]
    fn both_sides_run_and_leave_no_task_behind() {
        let c = cpu();
        let _pin = AffinityGuard::pin_current(&[c]).unwrap();
        for side in [
            Side::threads(c),
            Side {
                switching: false,
                ..Side::threads(c)
            },
            Side {
                walk: Walk::Packed { lines: 64 },
                hot: Walk::Packed { lines: 64 },
                ..Side::processes(c)
            },
        ] {
            let mut p = Pair::start(side, false, true).unwrap();
            assert!(p.run(100).unwrap() > 0);
            assert!(p.run(10).unwrap() > 0);
            assert_eq!(p.participants.len(), 2);
            let pids: Vec<i32> = p.children.iter().map(|c| c.pid()).collect();
            drop(p);
            for pid in pids {
                // SAFETY: signal 0 only checks existence.
                assert!(unsafe { libc::kill(pid, 0) } != 0, "{pid} survived");
            }
        }
    }
}
