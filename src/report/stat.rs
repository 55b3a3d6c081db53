//! `oscost stat`'s section: for each program measured, what `/usr/bin/time -v` prints (from
//! the runs' wait4 usage, a mean per run) and what `perf stat -r N` prints (each counter per
//! run with perf stat's ratio beside it: "8.58% of all cache refs", "1.20 insn per cycle").
//! A counter the PMU multiplexed is scaled and says so; hardware counters the machine does
//! not have are said once, not line by line.

use crate::model::{EventReading, Measurement, Run};
use crate::report::family::{About, Evidence, Family};
use crate::units::fmt_num;

/// The `stat` family.
pub struct Stat;

impl Family for Stat {
    fn about(&self) -> About {
        About {
            evidence: Evidence::Faults,
            ..About::of("stat")
        }
    }

    fn under_table(&self, run: &Run, _verbose: bool) -> String {
        run.measurements
            .iter()
            .filter(|m| self.owns(&m.probe))
            .map(|m| format!("\n{}\n{}", time_v(m), perf_stat(m)))
            .collect()
    }
}

/// The program's command line as recorded, made inert for the terminal and cut to `max`
/// characters (with "…") so the line that names it fits 80 columns.
fn command(m: &Measurement, max: usize) -> String {
    let c = crate::escape::terminal(m.param_str("command").unwrap_or("?"));
    super::term::cut(&c, max)
}

/// The `/usr/bin/time -v` block: every field wait4's usage fills on Linux, as a mean per
/// run (the peak resident set: the largest run's), in time's words and order.
pub fn time_v(m: &Measurement) -> String {
    let u = &m.evidence.rusage;
    let runs = u.iterations.max(1) as f64;
    let t = &u.total;
    let wall = u.wall_ns.unwrap_or(0) as f64 / 1e9 / runs;
    let user = t.utime_us as f64 / 1e6 / runs;
    let sys = t.stime_us as f64 / 1e6 / runs;
    let cpu = if wall > 0.0 {
        format!("{:.0}%", 100.0 * (user + sys) / wall)
    } else {
        "n/a".into()
    };
    // A count per run: whole when it is whole, as time prints it.
    let mean = |v: u64| {
        let per = v as f64 / runs;
        if per.fract() == 0.0 {
            format!("{per:.0}")
        } else {
            fmt_num(per)
        }
    };
    let rows: [(&str, String); 11] = [
        ("User time (seconds)", format!("{user:.4}")),
        ("System time (seconds)", format!("{sys:.4}")),
        ("Percent of CPU this job got", cpu),
        (
            "Elapsed (wall clock) time (h:mm:ss or m:ss)",
            super::timev::clock_style(wall),
        ),
        (
            "Maximum resident set size (kbytes)",
            t.maxrss_kb.to_string(),
        ),
        ("Major (requiring I/O) page faults", mean(t.majflt)),
        ("Minor (reclaiming a frame) page faults", mean(t.minflt)),
        ("Voluntary context switches", mean(t.nvcsw)),
        ("Involuntary context switches", mean(t.nivcsw)),
        ("File system inputs", mean(t.inblock)),
        ("File system outputs", mean(t.oublock)),
    ];
    let mut out = format!(
        "/usr/bin/time -v of {} runs (a mean per run; max RSS: the largest run's)\n\
         \tCommand being timed: \"{}\"\n",
        u.iterations,
        command(m, 48)
    );
    for (k, v) in rows {
        out.push_str(&format!("\t{k}: {v}\n"));
    }
    out.push_str("\t(sizes, swaps, socket messages, signals: never counted by Linux)\n");
    out
}

/// How perf stat relates a counter to another: the words after `#`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ratio {
    /// task-clock over the wall time: "0.832 CPUs utilized".
    CpusUtilized(f64),
    /// events per second of task-clock: "1.92 K/sec".
    PerSecond(f64),
    /// cycles per ns of task-clock: "2.10 GHz".
    GHz(f64),
    /// instructions per cycle: "1.20 insn per cycle".
    InsnPerCycle(f64),
    /// misses per access, in percent, and of what: "8.58% of all cache refs".
    OfAll(f64, &'static str),
}

impl Ratio {
    fn words(self) -> String {
        match self {
            Ratio::CpusUtilized(v) => format!("{v:.3} CPUs utilized"),
            Ratio::PerSecond(v) => {
                let (d, p) = if v >= 1e9 {
                    (1e9, "G")
                } else if v >= 1e6 {
                    (1e6, "M")
                } else if v >= 1e3 {
                    (1e3, "K")
                } else {
                    (1.0, "")
                };
                format!("{:.3} {p}/sec", v / d)
            }
            Ratio::GHz(v) => format!("{v:.3} GHz"),
            Ratio::InsnPerCycle(v) => format!("{v:.2} insn per cycle"),
            Ratio::OfAll(v, of) => format!("{v:.2}% of all {of}"),
        }
    }
}

/// One counter's line of perf stat's block.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterLine {
    pub name: String,
    /// Its count per run (task-clock: ms per run); None when it was not counted.
    pub per_run: Option<f64>,
    pub ratio: Option<Ratio>,
    /// Multiplexed on the PMU and scaled by enabled/running time.
    pub scaled: bool,
    /// Why it was not counted.
    pub reason: Option<String>,
}

/// The accesses a miss counter is a share of, with perf stat's words for them.
fn accesses_of(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "cache-misses" => Some(("cache-references", "cache refs")),
        "dTLB-load-misses" => Some(("dTLB-loads", "dTLB cache accesses")),
        "L1-dcache-load-misses" => Some(("L1-dcache-loads", "L1-dcache accesses")),
        "dTLB-store-misses" => Some(("dTLB-stores", "dTLB store accesses")),
        "L1-dcache-store-misses" => Some(("L1-dcache-stores", "L1-dcache stores")),
        _ => None,
    }
}

/// perf stat's lines from the recorded counters: each counter per run and its ratio.
/// `wall_ns` is the runs' summed wall time (for "CPUs utilized").
pub fn counter_lines(
    events: &std::collections::BTreeMap<String, EventReading>,
    wall_ns: f64,
) -> Vec<CounterLine> {
    let total = |n: &str| events.get(n).filter(|e| e.supported).and_then(|e| e.total);
    let task_ns = total("task-clock");
    let order = crate::machine::pmu::event_names();
    let mut names: Vec<&str> = order.filter(|n| events.contains_key(*n)).collect();
    // task-clock leads, as in perf stat.
    names.sort_by_key(|n| *n != "task-clock");
    names
        .into_iter()
        .map(|name| {
            let e = &events[name];
            let t = total(name);
            let ratio = t.and_then(|t| match name {
                "task-clock" => (wall_ns > 0.0).then(|| Ratio::CpusUtilized(t / wall_ns)),
                "cycles" => task_ns.filter(|&c| c > 0.0).map(|c| Ratio::GHz(t / c)),
                "instructions" => total("cycles")
                    .filter(|&c| c > 0.0)
                    .map(|c| Ratio::InsnPerCycle(t / c)),
                n if accesses_of(n).is_some() => {
                    let (of, words) = accesses_of(n)?;
                    total(of)
                        .filter(|&a| a > 0.0)
                        .map(|a| Ratio::OfAll(100.0 * t / a, words))
                }
                n if crate::machine::pmu::is_software(n) => task_ns
                    .filter(|&c| c > 0.0)
                    .map(|c| Ratio::PerSecond(t / (c / 1e9))),
                _ => None,
            });
            let per_run = e.per_op.filter(|_| e.supported).map(|v| {
                if name == "task-clock" {
                    v / 1e6
                } else {
                    v
                }
            });
            CounterLine {
                name: name.to_string(),
                per_run,
                ratio,
                scaled: e.scaled,
                reason: e.reason.clone().filter(|_| !e.supported),
            }
        })
        .collect()
}

/// The `perf stat -r N` block. Hardware counters that could not be opened for one reason
/// (no PMU) are said in one line.
pub fn perf_stat(m: &Measurement) -> String {
    let runs = m.evidence.rusage.iterations;
    let wall = m.evidence.rusage.wall_ns.unwrap_or(0) as f64;
    let lines = counter_lines(&m.evidence.events, wall);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "Performance counter stats for '{}' ({runs} runs, mean per run):\n",
        command(m, 80 - 55 - runs.to_string().len())
    );
    let mut missing: Vec<(&str, &str)> = Vec::new();
    for l in &lines {
        let Some(v) = l.per_run else {
            missing.push((&l.name, l.reason.as_deref().unwrap_or("not counted")));
            continue;
        };
        let (value, name) = if l.name == "task-clock" {
            (format!("{v:.2} msec"), l.name.clone())
        } else {
            (fmt_count_per_run(v), l.name.clone())
        };
        let mut line = format!("{value:>18}  {name:<22}");
        if let Some(r) = l.ratio {
            line.push_str(&format!(" # {}", r.words()));
        }
        if l.scaled {
            line.push_str(" (scaled)");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if lines.iter().any(|l| l.scaled) {
        out.push_str(
            "  (scaled): multiplexed on the PMU, the count scaled by time enabled / running\n",
        );
    }
    // Each reason once, with the counters it holds for.
    let mut reasons: Vec<&str> = missing.iter().map(|(_, r)| *r).collect();
    reasons.dedup();
    reasons.sort_unstable();
    reasons.dedup();
    for r in reasons {
        let names: Vec<&str> = missing
            .iter()
            .filter(|(_, x)| *x == r)
            .map(|(n, _)| *n)
            .collect();
        let what = if names.len() > 2 {
            format!("{} counters", names.len())
        } else {
            names.join(", ")
        };
        let line = format!("not counted ({what}): {}", crate::escape::terminal(r));
        let opts = textwrap::Options::new(80)
            .initial_indent("  ")
            .subsequent_indent("    ");
        out.push_str(&textwrap::fill(&line, opts));
        out.push('\n');
    }
    out
}

/// A count per run as perf stat prints it: whole numbers with thousands separators, a
/// fraction (a mean of runs) with two decimals.
fn fmt_count_per_run(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        crate::units::fmt_thousands(v as u64)
    } else if v >= 1000.0 {
        crate::units::fmt_thousands(v.round() as u64)
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn reading(total: f64, runs: f64, scaled: bool) -> EventReading {
        EventReading {
            per_op: Some(total / runs),
            total: Some(total),
            scaled,
            supported: true,
            reason: None,
        }
    }

    fn absent(reason: &str) -> EventReading {
        EventReading {
            supported: false,
            reason: Some(reason.into()),
            ..Default::default()
        }
    }

    /// Recorded counters of 10 runs on a machine with a PMU: 1 ms of task-clock each, in
    /// 1.25 ms of wall time; one counter multiplexed.
    fn recorded() -> BTreeMap<String, EventReading> {
        let mut e = BTreeMap::new();
        e.insert("task-clock".into(), reading(10_000_000.0, 10.0, false));
        e.insert("context-switches".into(), reading(20.0, 10.0, false));
        e.insert("cpu-migrations".into(), reading(0.0, 10.0, false));
        e.insert("page-faults".into(), reading(430.0, 10.0, false));
        e.insert("cycles".into(), reading(21_000_000.0, 10.0, false));
        e.insert("instructions".into(), reading(25_200_000.0, 10.0, false));
        e.insert("cache-references".into(), reading(100_000.0, 10.0, false));
        e.insert("cache-misses".into(), reading(8_580.0, 10.0, true));
        e.insert("dTLB-loads".into(), reading(400_000.0, 10.0, false));
        e.insert("dTLB-load-misses".into(), reading(2_000.0, 10.0, false));
        e
    }

    #[test]
    fn ratios_are_perf_stats() {
        let lines = counter_lines(&recorded(), 12_500_000.0);
        let ratio = |n: &str| lines.iter().find(|l| l.name == n).unwrap().ratio.unwrap();
        assert_eq!(lines[0].name, "task-clock");
        assert_eq!(ratio("task-clock").words(), "0.800 CPUs utilized");
        assert_eq!(ratio("context-switches").words(), "2.000 K/sec");
        assert_eq!(ratio("cpu-migrations").words(), "0.000 /sec");
        assert_eq!(ratio("cycles").words(), "2.100 GHz");
        assert_eq!(ratio("instructions").words(), "1.20 insn per cycle");
        assert_eq!(ratio("cache-misses").words(), "8.58% of all cache refs");
        assert_eq!(
            ratio("dTLB-load-misses").words(),
            "0.50% of all dTLB cache accesses"
        );
        // No accesses counted: no share of them.
        let mut e = recorded();
        e.insert("cache-references".into(), absent("no PMU"));
        let lines = counter_lines(&e, 12_500_000.0);
        let misses = lines.iter().find(|l| l.name == "cache-misses").unwrap();
        assert_eq!(misses.ratio, None);
    }

    fn measurement(events: BTreeMap<String, EventReading>) -> Measurement {
        let mut m: Measurement = serde_json::from_value(serde_json::json!({
            "probe": "stat.run", "params": {"command": "lat_ctx -s 64 2"}, "unit": "ns/run",
            "value": null, "raw": {"n": 0, "median": 0.0, "ci95": [0.0, 0.0], "mean": 0.0,
            "min": 0.0, "max": 0.0, "p95": 0.0, "mad": 0.0, "outliers": []},
            "baseline": null, "status": "ok", "samples": [], "iterations_per_sample": 1,
            "evidence": {"rusage": {"utime_us": 0, "stime_us": 0, "maxrss_kb": 0,
            "minflt": 0, "majflt": 0, "inblock": 0, "oublock": 0, "nvcsw": 0, "nivcsw": 0,
            "iterations": 10, "participants": []}, "events": {}, "cpus": []},
            "checks": [], "warnings": [], "valid": true
        }))
        .unwrap();
        m.evidence.events = events;
        m.evidence.rusage.wall_ns = Some(12_500_000);
        m
    }

    #[test]
    fn the_block_scales_multiplexed_counters_and_says_a_missing_pmu_once() {
        let b = perf_stat(&measurement(recorded()));
        assert!(b.starts_with("Performance counter stats for 'lat_ctx -s 64 2' (10 runs"));
        assert!(b.contains("1.00 msec  task-clock"), "{b}");
        assert!(
            b.contains("858  cache-misses           # 8.58% of all cache refs (scaled)"),
            "{b}"
        );
        assert_eq!(b.matches("multiplexed on the PMU").count(), 1, "{b}");
        assert!(b.lines().all(|l| l.chars().count() <= 80), "{b}");
        // No PMU: every hardware counter unopened for one reason, said once.
        let mut e = recorded();
        let why = "not supported: this CPU or VM exposes no such counter (no PMU?)";
        for n in crate::probes::stat::DEFAULT_HARDWARE {
            e.insert(n.to_string(), absent(why));
        }
        let b = perf_stat(&measurement(e));
        assert_eq!(b.matches("no PMU").count(), 1, "{b}");
        assert!(b.contains("not counted (6 counters): not supported"), "{b}");
        assert!(!b.contains("cycles"), "{b}");
        assert!(!b.contains("scaled"), "{b}");
    }

    #[test]
    fn the_time_v_block_is_a_mean_per_run() {
        let mut m = measurement(BTreeMap::new());
        let t = &mut m.evidence.rusage.total;
        t.utime_us = 5_000;
        t.stime_us = 5_000;
        t.minflt = 435;
        t.maxrss_kb = 1_536;
        let b = time_v(&m);
        assert!(
            b.starts_with("/usr/bin/time -v of 10 runs (a mean per run"),
            "{b}"
        );
        assert!(
            b.contains("\tCommand being timed: \"lat_ctx -s 64 2\"\n"),
            "{b}"
        );
        // A long command is cut to keep its line within 80 columns.
        let mut long = m.clone();
        long.evidence.events = recorded();
        long.params
            .insert("command".into(), serde_json::json!("x".repeat(200)));
        for b in [time_v(&long), perf_stat(&long)] {
            let width = |l: &str| l.replace('\t', "        ").chars().count();
            assert!(b.lines().all(|l| width(l) <= 80), "{b}");
            assert!(b.contains('…'), "{b}");
        }
        assert!(b.contains("\tUser time (seconds): 0.0005\n"), "{b}");
        assert!(b.contains("\tPercent of CPU this job got: 80%\n"), "{b}");
        assert!(
            b.contains("\tMinor (reclaiming a frame) page faults: 43.5\n"),
            "{b}"
        );
        assert!(
            b.contains("\tMaximum resident set size (kbytes): 1536\n"),
            "{b}"
        );
        assert!(b.contains("(h:mm:ss or m:ss): 0:00.00"), "{b}");
        assert!(b.lines().all(|l| l.chars().count() <= 80), "{b}");
    }
}
