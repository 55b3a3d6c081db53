//! The core clock, estimated from a chain of dependent additions (lmbench's `mhz` method):
//! each `add` waits for the one before it, and an integer add takes one cycle on every x86
//! and arm64 core, so the time per add is one cycle of the core as it ran. It needs neither
//! a PMU nor cpufreq, so every run has it; where either exists it is checked against it.
//! With it any ns figure can also be read in cycles.

use serde::{Deserialize, Serialize};

/// Dependent adds per iteration of the timed loop (the loop's own branch overlaps them).
const ADDS: u64 = 100;
/// Samples taken. A sample during which another task held the CPU reads slower, never
/// faster, so the estimate is the median of the fastest quarter and the spread their range.
const SAMPLES: usize = 41;
/// The fastest samples the estimate is made of.
const FASTEST: usize = SAMPLES / 4;
/// Length of one sample, in ns: short, so most fit between two preemptions of a busy CPU.
const SAMPLE_NS: u64 = 250_000;
/// A spread (range over median) under this is a clock that held still while it was timed.
pub const STEADY: f64 = 0.02;

/// What the chain said about the clock of the CPU it ran on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CoreClock {
    /// Median of the samples, in GHz; None where the chain cannot run (see `reason`).
    pub ghz: Option<f64>,
    /// The slowest and the fastest of the fastest quarter, in GHz.
    pub min_ghz: Option<f64>,
    pub max_ghz: Option<f64>,
    pub samples: u32,
    /// Samples more than 10% slower than the estimate (another task, an interrupt, a
    /// slower clock while they ran).
    pub slowed: u32,
    /// The CPU it ran on (None: it moved between samples).
    pub cpu: Option<usize>,
    /// cpufreq's current frequency of that CPU as the chain ended, in MHz.
    pub cpufreq_mhz: Option<f64>,
    /// PMU cycles per dependent add over one more sample (1.0: the chain's clock is the
    /// PMU's); None where no cycles counter opens.
    pub pmu_cycles_per_add: Option<f64>,
    /// Why there is no estimate or no check.
    pub reason: Option<String>,
}

impl CoreClock {
    /// Nothing was taken (a run recorded before the estimate existed).
    pub fn is_absent(&self) -> bool {
        *self == CoreClock::default()
    }

    /// The range of the samples over their median.
    pub fn spread(&self) -> Option<f64> {
        match (self.ghz, self.min_ghz, self.max_ghz) {
            (Some(g), Some(lo), Some(hi)) if g > 0.0 => Some((hi - lo) / g),
            _ => None,
        }
    }

    /// One line: the estimate, how steady it was, how it was taken and what it was checked
    /// against.
    pub fn describe(&self) -> String {
        let Some(ghz) = self.ghz else {
            return format!(
                "not estimated: {}",
                self.reason.as_deref().unwrap_or("unknown")
            );
        };
        let spread = self.spread().unwrap_or(0.0);
        let steady = if spread < STEADY {
            "steady"
        } else {
            "not steady"
        };
        let mut s = format!(
            "{ghz:.2} GHz ({steady}: {:.2}–{:.2} GHz), a chain of dependent adds (1 cycle \
             each): the median of the fastest {FASTEST} of {} samples of {} ms{} ({} over 10% \
             slower)",
            self.min_ghz.unwrap_or(ghz),
            self.max_ghz.unwrap_or(ghz),
            self.samples,
            SAMPLE_NS as f64 / 1e6,
            self.cpu.map_or(String::new(), |c| format!(" on CPU {c}")),
            self.slowed
        );
        // A check agrees when its ratio to the chain's clock is within 5% of 1.
        let agrees = |ratio: f64| {
            if (ratio - 1.0).abs() <= 0.05 {
                "agrees"
            } else {
                "disagrees"
            }
        };
        let mut checked = Vec::new();
        if let Some(c) = self.pmu_cycles_per_add {
            checked.push(format!("PMU cycles {c:.2} per add ({})", agrees(c)));
        }
        if let Some(mhz) = self.cpufreq_mhz {
            let f = mhz / 1000.0;
            checked.push(format!("cpufreq {f:.2} GHz ({})", agrees(f / ghz)));
        }
        if checked.is_empty() {
            s.push_str("; no PMU cycles or cpufreq to check it against");
        } else {
            s.push_str("; ");
            s.push_str(&checked.join(", "));
        }
        s
    }
}

/// The chain's instructions in this architecture's assembly: one dependent add, the loop
/// counter's decrement and the branch back while it is not zero.
#[cfg(target_arch = "x86_64")]
macro_rules! op {
    (add) => {
        "add {x}, {one}"
    };
    (count) => {
        "dec {n}"
    };
    (again) => {
        "jnz 2b"
    };
}
#[cfg(target_arch = "aarch64")]
macro_rules! op {
    (add) => {
        "add {x}, {x}, {one}"
    };
    (count) => {
        "subs {n}, {n}, #1"
    };
    (again) => {
        "b.ne 2b"
    };
}

/// `iters` iterations of `ADDS` dependent adds; returns the chain's result.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn chain(iters: u64) -> u64 {
    let mut x: u64 = 1;
    // SAFETY: register arithmetic and a counted loop; no memory, no stack.
    unsafe {
        std::arch::asm!(
            "2:",
            ".rept 100",
            op!(add),
            ".endr",
            op!(count),
            op!(again),
            x = inout(reg) x,
            one = in(reg) 1u64,
            n = inout(reg) iters.max(1) => _,
            options(nomem, nostack),
        );
    }
    x
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a timespec that lives across the call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// How far `read` (a clock, a counter) moved over `iters` iterations of the chain.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn timed(iters: u64, mut read: impl FnMut() -> u64) -> u64 {
    let t0 = read();
    std::hint::black_box(chain(std::hint::black_box(iters)));
    read().saturating_sub(t0)
}

/// The estimate on the CPU this thread runs on now (about 40 ms).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn estimate() -> CoreClock {
    // Scale: a 1 ms trial says how many iterations make a sample.
    let mut iters = 1000u64;
    loop {
        let t = timed(iters, now_ns);
        if t >= SAMPLE_NS / 4 || iters > 1 << 40 {
            iters = (iters as f64 * SAMPLE_NS as f64 / t.max(1) as f64).ceil() as u64;
            break;
        }
        iters *= 4;
    }
    let cpu0 = super::affinity::current_cpu();
    let per_add = |t: u64| t as f64 / (iters * ADDS) as f64;
    let mut ns: Vec<f64> = (0..SAMPLES)
        .map(|_| per_add(timed(iters, now_ns)))
        .collect();
    let cpu = super::affinity::current_cpu().filter(|c| Some(*c) == cpu0);
    ns.sort_by(f64::total_cmp);
    let ghz = |n: f64| (n > 0.0).then(|| 1.0 / n);
    let mid = ns[FASTEST / 2];
    CoreClock {
        ghz: ghz(mid),
        min_ghz: ghz(ns[FASTEST - 1]),
        max_ghz: ghz(ns[0]),
        samples: SAMPLES as u32,
        slowed: ns.iter().filter(|&&n| n > mid * 1.1).count() as u32,
        cpu,
        cpufreq_mhz: cpu.and_then(cpufreq_mhz),
        pmu_cycles_per_add: None,
        reason: None,
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn estimate() -> CoreClock {
    CoreClock {
        reason: Some("no dependent-add chain for this architecture".into()),
        ..Default::default()
    }
}

/// cpufreq's current frequency of `cpu` (scaling_cur_freq, else cpuinfo_cur_freq), in MHz.
fn cpufreq_mhz(cpu: usize) -> Option<f64> {
    ["scaling_cur_freq", "cpuinfo_cur_freq"]
        .iter()
        .find_map(|f| {
            std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/{f}")).ok()
        })
        .and_then(|s| s.trim().parse::<f64>().ok())
        .map(|khz| khz / 1000.0)
}

/// One more sample with a cycles counter on this thread: PMU cycles per add. Taken where the
/// run opens its other counters (after the figures' samples: a counter keeps the kernel's
/// perf hooks on for a while after it closes).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn check_with_pmu(c: &mut CoreClock) {
    if c.ghz.is_none() {
        return;
    }
    let built = perf_event::Builder::new(perf_event::events::Hardware::CPU_CYCLES)
        .exclude_kernel(true)
        .build();
    let mut counter = match built {
        Ok(counter) => counter,
        Err(e) => {
            c.reason = Some(format!("no PMU cycles counter: {e}"));
            return;
        }
    };
    let iters = ((SAMPLE_NS as f64 * c.ghz.unwrap_or(1.0) / ADDS as f64) as u64).max(1);
    if counter.enable().is_err() {
        return;
    }
    let n = timed(iters, || counter.read().unwrap_or(0));
    let _ = counter.disable();
    if n > 0 {
        c.pmu_cycles_per_add = Some(n as f64 / (iters * ADDS) as f64);
    } else {
        c.reason = Some("the PMU cycles counter read nothing (virtualized?)".into());
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn check_with_pmu(_c: &mut CoreClock) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_runs_every_add() {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        assert_eq!(chain(3), 1 + 3 * ADDS);
        let c = estimate();
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        {
            let (lo, g, hi) = (c.min_ghz.unwrap(), c.ghz.unwrap(), c.max_ghz.unwrap());
            assert!(lo <= g && g <= hi, "{c:?}");
            assert_eq!(c.samples, SAMPLES as u32);
        }
        assert!(!c.describe().is_empty());
    }

    #[test]
    fn the_line_says_steadiness_and_what_disagrees() {
        let mut c = CoreClock {
            ghz: Some(4.0),
            min_ghz: Some(3.99),
            max_ghz: Some(4.01),
            samples: 15,
            cpu: Some(1),
            ..Default::default()
        };
        let line = c.describe();
        assert!(line.contains("4.00 GHz (steady"), "{line}");
        assert!(line.contains("no PMU cycles or cpufreq"), "{line}");
        c.min_ghz = Some(3.0);
        c.cpufreq_mhz = Some(2000.0);
        c.pmu_cycles_per_add = Some(1.0);
        let line = c.describe();
        assert!(line.contains("not steady"), "{line}");
        assert!(line.contains("cpufreq 2.00 GHz (disagrees)"), "{line}");
        assert!(line.contains("PMU cycles 1.00 per add (agrees)"), "{line}");
        let none = CoreClock {
            reason: Some("no chain".into()),
            ..Default::default()
        };
        assert_eq!(none.describe(), "not estimated: no chain");
    }
}
