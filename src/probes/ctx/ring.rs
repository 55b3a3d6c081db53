//! A ring of N members on one CPU joined by pipes (lmbench lat_ctx): member 0 is the
//! measuring thread, members 1..N are forked processes or threads. A one-byte token goes
//! round; on every receive a member walks its own working set and passes the token on.
//!
//! Teardown is the point of this module: every forked member closes every pipe end except
//! its own two, so the death of any member shows up as EOF or EPIPE all the way round (no
//! member blocks forever), and dropping the ring kills and reaps processes or, for threads,
//! closes the head of the ring so the EOF cascades and every thread is joined.

use super::Mode;
use crate::engine::partner::{
    partner_error, read_byte, spawn_ready_child, write_byte, Child, Pipe, SharedPage, ThreadPartner,
};
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::Participant;
use crate::probes::workset::{walk_raw, Access, Pages, WorkingSet};
use crate::units::name::Named;

/// The most members a ring may have (perf evidence opens about a dozen counters per member).
pub const MAX_MEMBERS: usize = 256;

/// Scheduling policy of every member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Policy {
    /// SCHED_BATCH: a woken member does not preempt the sender, which blocks in its read
    /// first, so every hop is exactly one voluntary switch (what lat_ctx assumes).
    Batch,
    /// SCHED_OTHER as lat_ctx runs: a woken member may preempt the sender, which must later
    /// be scheduled again just to block, so a ring of more than two makes extra switches.
    Normal,
}

crate::units::name::named!(Policy);

/// Sets the calling thread's policy (forked members and threads inherit it) and restores
/// the old one when dropped.
pub struct PolicyGuard {
    old_policy: i32,
    old_prio: i32,
}

impl PolicyGuard {
    pub fn set(p: Policy) -> Result<PolicyGuard> {
        // SAFETY: querying and setting the calling thread's own policy with valid params.
        unsafe {
            let old_policy = libc::sched_getscheduler(0);
            let mut old = libc::sched_param { sched_priority: 0 };
            libc::sched_getparam(0, &mut old);
            let policy = match p {
                Policy::Batch => libc::SCHED_BATCH,
                Policy::Normal => libc::SCHED_OTHER,
            };
            let zero = libc::sched_param { sched_priority: 0 };
            if libc::sched_setscheduler(0, policy, &zero) != 0 {
                let what = format_args!("cannot set scheduling policy {}", p.name());
                return Err(crate::probes::os_error(what));
            }
            Ok(PolicyGuard {
                old_policy,
                old_prio: old.sched_priority,
            })
        }
    }
}

impl Drop for PolicyGuard {
    fn drop(&mut self) {
        let p = libc::sched_param {
            sched_priority: self.old_prio,
        };
        // SAFETY: restoring the calling thread's previous policy.
        unsafe { libc::sched_setscheduler(0, self.old_policy, &p) };
    }
}

/// What to build.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RingSpec {
    pub members: usize,
    pub size: usize,
    pub stride: usize,
    pub access: Access,
    pub mode: Mode,
    pub cpu: usize,
    pub policy: Policy,
}

/// A running ring. Dropping it leaves nothing behind.
pub struct Ring {
    spec: RingSpec,
    head_w: i32,
    tail_r: i32,
    children: Vec<Child>,
    threads: Vec<ThreadPartner>,
    /// Index 0 is the measuring thread's (filled after the members are spawned); in process
    /// mode the others are untouched here (each child filled its own pages after fork).
    sets: Vec<WorkingSet>,
    /// A private pipe for the no-switch overhead loop.
    own: Pipe,
    pub participants: Vec<Participant>,
    pub start_cpus: Vec<Option<usize>>,
    /// Keeps walks from being optimized away.
    pub sink: u64,
    /// Dropped last: the measuring thread's policy comes back after the members are gone.
    _policy: PolicyGuard,
}

/// A member's walk: `len` bytes of its working set at `addr`, one word per `stride` bytes,
/// as `access` says.
#[derive(Debug, Clone, Copy)]
struct MemberWalk {
    addr: usize,
    len: usize,
    stride: usize,
    access: Access,
}

/// Read, walk, pass on, until the ring breaks. Allocation-free (runs after fork).
fn member_loop(rfd: i32, wfd: i32, walk: MemberWalk) {
    let MemberWalk {
        addr,
        len,
        stride,
        access,
    } = walk;
    let ptr = addr as *mut u8;
    let mut b = 0u8;
    let mut sink = 0u64;
    loop {
        if read_byte(rfd, &mut b).is_err() {
            break;
        }
        // SAFETY: the member's own working set, live for the whole loop.
        sink = sink.wrapping_add(unsafe { walk_raw(ptr, len, stride, access) });
        if write_byte(wfd, &b).is_err() {
            break;
        }
    }
    std::hint::black_box(sink);
}

impl Ring {
    /// Build the ring: pipes, working sets, members pinned to `spec.cpu` and ready. The
    /// calling thread must already be pinned to the same CPU.
    pub fn start(spec: RingSpec) -> Result<Ring> {
        let n = spec.members;
        if !(2..=MAX_MEMBERS).contains(&n) {
            return Err(Error::usage(format!(
                "a ring needs 2 to {MAX_MEMBERS} members, not {n}"
            )));
        }
        if spec.stride < 8 || !spec.stride.is_multiple_of(8) {
            return Err(Error::usage(format!(
                "stride {} is not a positive multiple of 8 bytes",
                spec.stride
            )));
        }
        let mut pipes = Vec::with_capacity(n);
        for _ in 0..n {
            pipes.push(Pipe::new()?);
        }
        // 4 KiB pages on every host (MADV_NOHUGEPAGE), as lat_ctx's malloc'd arrays get in
        // practice: the kernel places an anonymous mapping whose length is a multiple of 2 MiB
        // on a 2 MiB boundary, so with THP "always" a 2m working set here would be one huge
        // page (one TLB entry), while malloc's 2 MiB + 4 KiB mapping mostly is not
        // (docs/SWEEP.md, "Pages").
        let mut sets = Vec::with_capacity(n);
        for _ in 0..n {
            sets.push(WorkingSet::map(spec.size, Some(Pages::Small))?);
        }
        let policy = PolicyGuard::set(spec.policy)?;
        let mut ring = Ring {
            spec,
            head_w: -1,
            tail_r: -1,
            children: Vec::new(),
            threads: Vec::new(),
            sets: Vec::new(),
            own: Pipe::new()?,
            participants: vec![Participant::this_thread(
                "ring member 0 (measuring thread)",
                vec![spec.cpu],
            )],
            start_cpus: vec![crate::evidence::placement::current_cpu()],
            sink: 0,
            _policy: policy,
        };
        match spec.mode {
            Mode::Process => ring.spawn_processes(&mut pipes, &sets)?,
            Mode::Thread => ring.spawn_threads(&mut pipes, &sets)?,
        }
        // Member 0's set is filled after the members exist, as lat_ctx allocates its own
        // array after forking: filled before the fork, its pages would be copy-on-write shared
        // with every forked member (copied mid-warm-up by a write walk's first pass), and the
        // members would take their pages after it, the opposite order to lat_ctx's.
        sets[0].fill();
        ring.sets = sets;
        // The measuring thread keeps the head's write end and the tail's read end.
        ring.head_w = std::mem::replace(&mut pipes[0].write, -1);
        ring.tail_r = std::mem::replace(&mut pipes[n - 1].read, -1);
        // Everything else in `pipes` is either a forked member's (closed here) or already
        // handed to a thread (set to -1): dropping closes what is left.
        drop(pipes);
        Ok(ring)
    }

    fn spawn_processes(&mut self, pipes: &mut [Pipe], sets: &[WorkingSet]) -> Result<()> {
        let n = self.spec.members;
        let page = SharedPage::new()?;
        let all_fds: Vec<i32> = pipes.iter().flat_map(|p| [p.read, p.write]).collect();
        let (stride, access, cpu) = (self.spec.stride, self.spec.access, self.spec.cpu);
        for i in 1..n {
            let (rfd, wfd) = (pipes[i - 1].read, pipes[i].write);
            let ws = &sets[i];
            let fds = &all_fds;
            let own = [self.own.read, self.own.write];
            let (c, started_on) = spawn_ready_child(
                &page,
                i,
                cpu,
                || {
                    for &fd in fds.iter().chain(own.iter()) {
                        if fd != rfd && fd != wfd {
                            // SAFETY: closing inherited descriptors this member does not use.
                            unsafe { libc::close(fd) };
                        }
                    }
                    ws.fill();
                },
                || {
                    let addr = ws.as_ptr() as usize;
                    let walk = MemberWalk {
                        addr,
                        len: ws.len(),
                        stride,
                        access,
                    };
                    member_loop(rfd, wfd, walk);
                    0
                },
            )?;
            let pid = c.pid();
            self.children.push(c);
            self.participants.push(Participant {
                role: format!("ring member {i}"),
                pid,
                tid: pid,
                requested: vec![cpu],
            });
            self.start_cpus.push(started_on);
        }
        Ok(())
    }

    fn spawn_threads(&mut self, pipes: &mut [Pipe], sets: &[WorkingSet]) -> Result<()> {
        let n = self.spec.members;
        let (stride, access, cpu) = (self.spec.stride, self.spec.access, self.spec.cpu);
        for i in 1..n {
            sets[i].fill();
            // The thread owns its two ends from now on and closes them when it returns.
            let rfd = std::mem::replace(&mut pipes[i - 1].read, -1);
            let wfd = std::mem::replace(&mut pipes[i].write, -1);
            let (addr, len) = (sets[i].as_ptr() as usize, sets[i].len());
            // Not ThreadPartner::spawn_ready: a member has no stop of its own (the ring's
            // drop ends them all), so it joins the ring before its readiness is awaited.
            let t = ThreadPartner::spawn(
                Some(cpu),
                move || {
                    let walk = MemberWalk {
                        addr,
                        len,
                        stride,
                        access,
                    };
                    member_loop(rfd, wfd, walk);
                    // SAFETY: this thread owns both descriptors.
                    unsafe {
                        libc::close(rfd);
                        libc::close(wfd);
                    }
                },
                || {},
            )?;
            let ready = t.wait_ready();
            self.threads.push(t);
            let (tid, c) = ready?;
            self.participants.push(Participant {
                role: format!("ring member {i} (thread)"),
                pid: std::process::id() as i32,
                tid,
                requested: vec![cpu],
            });
            self.start_cpus.push(c);
        }
        Ok(())
    }

    /// PIDs of forked members (empty for threads).
    #[cfg(test)]
    pub fn member_pids(&self) -> Vec<i32> {
        self.children.iter().map(|c| c.pid()).collect()
    }

    /// Send the token round `laps` times, walking member 0's working set on each receive;
    /// returns the elapsed ns.
    pub fn laps(&mut self, laps: u64) -> Result<u64> {
        let (stride, access) = (self.spec.stride, self.spec.access);
        let mut b = 0u8;
        let mut sink = 0u64;
        let t0 = now_ns();
        for _ in 0..laps {
            write_byte(self.head_w, &1).map_err(|e| partner_error("ring write", e))?;
            read_byte(self.tail_r, &mut b).map_err(|e| partner_error("ring read", e))?;
            sink = sink.wrapping_add(self.sets[0].walk(stride, access));
        }
        let t = now_ns() - t0;
        self.sink = self.sink.wrapping_add(sink);
        Ok(t)
    }

    /// lmbench's overhead: the same N pipe writes and reads and N walks per lap, inside the
    /// measuring thread (no switch, its own working set hot). Returns the elapsed ns.
    pub fn overhead(&mut self, laps: u64) -> Result<u64> {
        let (stride, access, n) = (self.spec.stride, self.spec.access, self.spec.members);
        let (w, r) = (self.own.write, self.own.read);
        let mut b = 0u8;
        let mut sink = 0u64;
        let t0 = now_ns();
        for _ in 0..laps {
            for _ in 0..n {
                write_byte(w, &1).map_err(|e| partner_error("pipe write", e))?;
                read_byte(r, &mut b).map_err(|e| partner_error("pipe read", e))?;
                sink = sink.wrapping_add(self.sets[0].walk(stride, access));
            }
        }
        let t = now_ns() - t0;
        self.sink = self.sink.wrapping_add(sink);
        Ok(t)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Closing the head makes member 1 read EOF; each member then closes its write end,
        // so the EOF travels round and every thread returns before it is joined.
        for fd in [&mut self.head_w, &mut self.tail_r] {
            if *fd >= 0 {
                // SAFETY: descriptors this ring owns, closed once.
                unsafe { libc::close(*fd) };
                *fd = -1;
            }
        }
        self.threads.clear();
        // Child's Drop kills and reaps.
        self.children.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::placement::AffinityGuard;

    fn alive(pid: i32) -> bool {
        // SAFETY: signal 0 only checks existence.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    fn spec(members: usize, mode: Mode) -> RingSpec {
        RingSpec {
            members,
            size: 16 << 10,
            stride: 64,
            access: Access::Write,
            mode,
            cpu: *crate::machine::affinity::allowed_cpus().last().unwrap(),
            policy: Policy::Batch,
        }
    }

    #[test]
    fn process_ring_runs_and_leaves_no_member_behind() {
        let s = spec(4, Mode::Process);
        let _pin = AffinityGuard::pin_current(&[s.cpu]).unwrap();
        let mut ring = Ring::start(s).unwrap();
        let pids = ring.member_pids();
        assert_eq!(pids.len(), 3);
        assert_eq!(ring.participants.len(), 4);
        assert!(ring.start_cpus.iter().all(|c| *c == Some(s.cpu)));
        assert!(ring.laps(50).unwrap() > 0);
        assert!(ring.overhead(50).unwrap() > 0);
        assert!(pids.iter().all(|&p| alive(p)));
        // Members inherited the batch policy; the measuring thread gets its own back.
        assert_eq!(
            // SAFETY: no preconditions; only reads or yields the calling task's state.
            unsafe { libc::sched_getscheduler(pids[0]) },
            libc::SCHED_BATCH
        );
        drop(ring);
        // SAFETY: no preconditions; only reads or yields the calling task's state.
        assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_OTHER);
        for p in pids {
            assert!(!alive(p), "member {p} survived the ring");
        }
    }

    #[test]
    fn a_member_dying_mid_run_breaks_the_ring_cleanly() {
        for victim in 0..3 {
            let s = spec(4, Mode::Process);
            let _pin = AffinityGuard::pin_current(&[s.cpu]).unwrap();
            let mut ring = Ring::start(s).unwrap();
            ring.laps(10).unwrap();
            let pids = ring.member_pids();
            // SAFETY: killing our own child.
            unsafe { libc::kill(pids[victim], libc::SIGKILL) };
            let err = ring.laps(1_000_000).unwrap_err();
            assert!(
                err.to_string().contains("partner exited"),
                "victim {victim}: {err}"
            );
            drop(ring);
            assert!(pids.iter().all(|&p| !alive(p)), "victim {victim}");
        }
    }

    #[test]
    fn thread_ring_joins_every_thread() {
        let s = spec(3, Mode::Thread);
        let _pin = AffinityGuard::pin_current(&[s.cpu]).unwrap();
        let mut ring = Ring::start(s).unwrap();
        assert!(ring.member_pids().is_empty());
        assert_eq!(ring.participants.len(), 3);
        assert!(ring.laps(50).unwrap() > 0);
        let tids: Vec<i32> = ring.participants[1..].iter().map(|p| p.tid).collect();
        drop(ring);
        // Joined threads no longer appear under /proc/self/task.
        for t in tids {
            assert!(!std::path::Path::new(&format!("/proc/self/task/{t}")).exists());
        }
    }

    #[test]
    fn working_sets_are_advised_to_small_pages_whatever_the_hosts_thp_setting() {
        // 2 MiB: the size the kernel aligns to a huge-page boundary, where THP "always"
        // would otherwise back the set with one huge page.
        let mut s = spec(2, Mode::Thread);
        s.size = 2 << 20;
        let _pin = AffinityGuard::pin_current(&[s.cpu]).unwrap();
        let ring = Ring::start(s).unwrap();
        for set in &ring.sets {
            let flags = crate::probes::workset::vm_flags(set.as_ptr()).unwrap();
            assert!(flags.iter().any(|f| f == "nh"), "{flags:?}");
        }
    }

    #[test]
    fn the_measuring_threads_pages_are_its_own_not_shared_with_a_forked_member() {
        // lat_ctx allocates its array after forking: none of its pages is mapped by a member.
        // Filled before the fork, all 64 pages of this set were shared with the member
        // (Shared_Dirty 256 kB in smaps).
        let mut s = spec(2, Mode::Process);
        s.size = 256 << 10;
        let _pin = AffinityGuard::pin_current(&[s.cpu]).unwrap();
        let ring = Ring::start(s).unwrap();
        let kb = |field: &str| -> u64 {
            let entry = crate::probes::workset::smaps_entry(ring.sets[0].as_ptr() as usize)
                .expect("the set's mapping is in smaps");
            entry
                .iter()
                .find_map(|l| l.strip_prefix(field))
                .map(|v| v.trim().trim_end_matches("kB").trim().parse().unwrap())
                .unwrap()
        };
        assert!(kb("Private_Dirty:") >= 256, "the set is filled");
        assert_eq!(kb("Shared_Dirty:") + kb("Shared_Clean:"), 0);
    }

    #[test]
    fn bad_shapes_are_usage_errors() {
        let mut s = spec(1, Mode::Process);
        assert_eq!(Ring::start(s).err().unwrap().exit_code(), 2);
        s.members = MAX_MEMBERS + 1;
        assert!(Ring::start(s).is_err());
        s.members = 2;
        s.stride = 12;
        assert!(Ring::start(s).err().unwrap().to_string().contains("stride"));
    }
}
