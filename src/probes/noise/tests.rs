//! The attribution of a recorded window (tests/fixtures/noise, made by
//! examples/noise_fixture.rs: 200 ms on both CPUs of a VM, a competitor spinning on CPU 0),
//! and the checks' failing inputs made from it.

use super::*;

/// A noise check's bound, in the words the probe gave it.
/// The report's words for a check, which these tests compare with the probe's old sentences.
#[cfg(test)]
mod words {
    pub use crate::report::checks::{expected, line, name, observed};
}

fn expected(c: &Check) -> String {
    words::expected(c)
}

/// A noise check's reading, in the words the probe gave it.
fn observed(c: &Check) -> String {
    words::observed(c)
}
use crate::evidence::interrupts::{ProcText, Snapshot};
use crate::evidence::trace::{parse_fixture, tracefs, RawRecord, NOISE_EVENTS};
use crate::model::noise::Cause;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{DIR}/{name}")).unwrap()
}

/// The decoder of the kernel the fixture was recorded on (its format and id files).
fn decoder() -> Decoder {
    let formats = NOISE_EVENTS
        .iter()
        .filter_map(|(name, _)| {
            let short = name.split(':').nth(1).unwrap();
            let id = std::fs::read_to_string(format!("{DIR}/trace/{short}.id")).ok()?;
            let text = read(&format!("trace/{short}.format"));
            Some(tracefs::parse_format(name, id.trim().parse().unwrap(), &text).unwrap())
        })
        .collect();
    Decoder { formats }
}

fn snapshot(dir: &str, times: (u64, u64), when: &str) -> Snapshot {
    let text = ProcText {
        interrupts: read(&format!("{dir}/interrupts.{when}")),
        softirqs: read(&format!("{dir}/softirqs.{when}")),
        stat: read(&format!("{dir}/stat.{when}")),
    };
    Snapshot::from_text(times, text, 100)
}

/// The times a snapshot's /proc/interrupts and /proc/softirqs were read.
fn times(v: &serde_json::Value) -> (u64, u64) {
    (v[0].as_u64().unwrap(), v[1].as_u64().unwrap())
}

/// The recorded window, and the CPU the competitor was pinned to.
pub(crate) fn recorded() -> (Window, usize) {
    recorded_in("noise")
}

/// The window recorded in `tests/fixtures/<dir>` (its counters where it has them).
fn recorded_in(dir: &str) -> (Window, usize) {
    let j: serde_json::Value = serde_json::from_str(&read(&format!("{dir}/readers.json"))).unwrap();
    let readers = serde_json::from_value(j["readers"].clone()).unwrap();
    let records: Vec<RawRecord> = parse_fixture(&read(&format!("{dir}/noise.records"))).unwrap();
    let counted = match j.get("counted") {
        Some(c) => serde_json::from_value(c.clone()).unwrap(),
        None => Vec::new(),
    };
    let w = Window {
        readers,
        before: snapshot(dir, times(&j["before_ns"]), "before"),
        after: snapshot(dir, times(&j["after_ns"]), "after"),
        records,
        counted,
        tracing: Tracing::Recorded(decoder()),
    };
    (w, j["competitor_cpu"].as_u64().unwrap() as usize)
}

/// The window recorded while the kernel counted tracepoint entries it wrote no sample of
/// (tests/fixtures/noise-unwritten): its CPUs with such entries.
#[test]
fn entries_counted_unwritten_are_found_from_the_counters_and_the_records() {
    let (w, _) = recorded_in("noise-unwritten");
    let cs = conclude(&w);
    let short: Vec<&NoiseCpu> = cs
        .iter()
        .filter(|n| !traced(n).unwritten.is_empty())
        .collect();
    assert!(!short.is_empty(), "the fixture holds unwritten entries");
    for n in &short {
        for u in &traced(n).unwritten {
            // The counter against the samples of that tracepoint in the records.
            let d = decoder();
            let written = w
                .records
                .iter()
                .filter(|r| r.ty == PERF_RECORD_SAMPLE)
                .filter(|r| d.decode(&r.body).is_some_and(|e| e.cpu as usize == n.cpu))
                .filter(|r| d.event_of(&r.body) == Some(u.event.as_str()))
                .count() as u64;
            assert_eq!(u.recorded, written, "{u:?}");
            assert!(u.counted > u.recorded, "{u:?}");
        }
        // No lost record says so: only the counter does.
        assert_eq!(traced(n).lost_records, 0);
    }
}

/// CPU 1 of that window: the tick's /proc row is 64, 62 ticks were written and the tick's
/// counter says 64 (and RCU's softirq row 12, 10 written). Records alone fail the rows (2
/// short, beyond ±2% and 1); with the counters they are accounted for, the measurement valid
/// and its causes partial.
#[test]
fn a_row_short_by_what_the_kernel_counted_unwritten_is_valid_and_partial() {
    let (w, _) = recorded_in("noise-unwritten");
    let n = conclude(&w).into_iter().find(|n| n.cpu == 1).unwrap();
    let loc = traced(&n).counts.iter().find(|c| c.row == "LOC").unwrap();
    assert_eq!((loc.proc_delta, loc.traced, loc.unwritten), (64, 62, 2));
    assert!(!loc.whole() && loc.agrees(), "{loc:?}");
    let r = w.readers.iter().find(|r| r.cpu == 1).unwrap();
    let m = measurement(n.clone(), r, None).unwrap();
    let proc: Vec<&Check> = m
        .checks
        .iter()
        .filter(|c| words::name(c).contains("/proc"))
        .collect();
    assert!(!proc.is_empty() && proc.iter().all(|c| c.ok), "{proc:?}");
    let c = proc
        .iter()
        .find(|c| words::name(c).contains("LOC"))
        .unwrap();
    assert_eq!(observed(c), "62 traced + 2 the kernel counted unwritten");
    let p = partial(&n).expect("a partial remark");
    // The tick's entry counted 65 and wrote 63, its exit 64 and 62 (one tick under way when
    // the counters stopped); the softirqs' entry and exit 25 and 23 each: 4 interrupts whose
    // entry and exit went unwritten, 4 pairs and not the 8 events of the four summed.
    assert_eq!(
        p.values.iter().map(|v| v.lo).collect::<Vec<_>>(),
        [2.0, 0.0, 4.0, 0.0]
    );
    // The kernel says of none of them that its ring was full.
    assert!(traced(&n)
        .unwritten
        .iter()
        .all(|u| u.silent() == u.missing()));
    assert!(m.warnings.contains(&p));
}

/// The same window without its counters (what the recording alone says): the short rows
/// fail, naming both numbers, and the measurement is invalid.
#[test]
fn without_the_counters_the_short_row_fails_the_measurement() {
    let (mut w, _) = recorded_in("noise-unwritten");
    w.counted.clear();
    let n = conclude(&w).into_iter().find(|n| n.cpu == 1).unwrap();
    assert!(traced(&n).unwritten.is_empty());
    let r = w.readers.iter().find(|r| r.cpu == 1).unwrap();
    let m = measurement(n, r, None).unwrap();
    let failed: Vec<&Check> = m.checks.iter().filter(|c| !c.ok).collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(failed[0].subject.contains("LOC") && failed[1].subject.contains("softirq RCU"));
    assert!(expected(failed[0]).starts_with("64 ") && observed(failed[0]) == "62 traced");
    assert!(expected(failed[1]).starts_with("12 ") && observed(failed[1]) == "10 traced");
    assert!(!m.valid);
}

fn traced(n: &NoiseCpu) -> &Traced {
    match &n.attribution {
        Attribution::Traced(t) => t,
        a => panic!("not traced: {a:?}"),
    }
}

#[test]
fn the_competitor_is_found_and_named_on_its_cpu_only() {
    let (w, on) = recorded();
    let cs = conclude(&w);
    assert_eq!(cs.len(), 2);
    let named = |n: &NoiseCpu| {
        traced(n)
            .causes
            .iter()
            .find(|r| matches!(&r.cause, Cause::Task { comm } if comm == "competitor"))
            .cloned()
    };
    let here = cs.iter().find(|n| n.cpu == on).unwrap();
    let row = named(here).expect("the competitor is among the causes");
    assert!(row.count > 0 && row.total_ns > 0, "{row:?}");
    let other = cs.iter().find(|n| n.cpu != on).unwrap();
    assert!(named(other).is_none());
}

#[test]
fn recorded_counts_agree_with_proc_and_the_causes_add_up() {
    let (w, _) = recorded();
    for n in conclude(&w) {
        let t = traced(&n);
        assert!(!t.counts.is_empty());
        for c in &t.counts {
            assert!(c.agrees(), "CPU {}: {c:?}", n.cpu);
        }
        let loc = t.counts.iter().find(|c| c.row == "LOC").unwrap();
        assert!(loc.proc_delta > 0);
        // Each gap's parts add up to it: the causes hold all of the time lost.
        let sum: u64 = t.causes.iter().map(|r| r.total_ns).sum();
        assert_eq!(sum, n.lost_ns, "CPU {}", n.cpu);
        assert!(t.covered_ns <= n.lost_ns);
        assert!(t.causes.iter().any(|r| r.cause == Cause::Timer));
        assert!(t.causes.windows(2).all(|p| p[0].total_ns >= p[1].total_ns));
        assert_eq!(t.lost_records, 0);
        // The gaps hold the time the reader was off its CPU.
        assert!(clock_check(&n).ok, "{:?}", clock_check(&n));
        assert!(count_check_list(&n).iter().all(|c| c.ok));
        assert_eq!(n.longest.len(), LONGEST);
        assert!(n.histogram.iter().map(|b| b.count).sum::<u64>() == n.gaps);
    }
}

#[test]
fn a_proc_delta_the_trace_does_not_match_fails_naming_both() {
    let (mut w, _) = recorded();
    let before = w.before.interrupts.count("LOC", 1).unwrap();
    let after = w.after.interrupts.count("LOC", 1).unwrap();
    let row = w
        .after
        .interrupts
        .rows
        .iter_mut()
        .find(|r| r.key == "LOC")
        .unwrap();
    let col = w
        .after
        .interrupts
        .cpus
        .iter()
        .position(|&c| c == 1)
        .unwrap();
    row.counts[col] += 100;
    let n = conclude(&w).into_iter().find(|n| n.cpu == 1).unwrap();
    let failed: Vec<Check> = count_check_list(&n).into_iter().filter(|c| !c.ok).collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    let c = &failed[0];
    assert!(words::name(c).contains("LOC"), "{c:?}");
    let delta = after + 100 - before;
    assert!(
        expected(c).contains(&crate::units::fmt_thousands(delta)),
        "{c:?}"
    );
    let t = traced(&n)
        .counts
        .iter()
        .find(|c| c.row == "LOC")
        .unwrap()
        .traced;
    assert!(
        observed(c).contains(&crate::units::fmt_thousands(t)),
        "{c:?}"
    );
    // Neither traced nor counted unwritten: the measurement fails on it, and says the causes
    // are partial.
    let r = w.readers.iter().find(|r| r.cpu == 1).unwrap();
    let m = measurement(n.clone(), r, None).unwrap();
    assert!(m.checks.iter().any(|x| x == c), "{:?}", m.checks);
    assert!(!m.valid);
    let p = partial(&n).expect("a partial remark");
    assert!(p.is_family(PARTIAL));
    assert_eq!(
        (p.values[0].lo, p.values[1].lo, p.values[2].lo),
        (1.0, 0.0, 0.0)
    );
    assert!(m.warnings.contains(&p));
}

#[test]
fn whole_counts_make_no_partial_remark_and_dropped_records_do() {
    let (w, _) = recorded();
    let mut n = conclude(&w).into_iter().find(|n| n.cpu == 1).unwrap();
    assert!(partial(&n).is_none(), "{:?}", partial(&n));
    let r = w.readers.iter().find(|r| r.cpu == 1).unwrap();
    assert!(measurement(n.clone(), r, None)
        .unwrap()
        .warnings
        .iter()
        .all(|x| !x.is_family(PARTIAL)));
    if let Attribution::Traced(t) = &mut n.attribution {
        t.lost_records = 3;
    }
    let p = partial(&n).expect("dropped records make the causes partial");
    assert_eq!((p.values[0].lo, p.values[1].lo), (0.0, 3.0));
    if let Attribution::Traced(t) = &mut n.attribution {
        t.lost_records = 0;
        t.unwritten.push(crate::model::noise::Unwritten {
            event: "irq:softirq_entry".into(),
            counted: 10,
            recorded: 7,
            ring_full: 0,
        });
    }
    let p = partial(&n).expect("entries counted unwritten make the causes partial");
    // An entry without its exit is events, not pairs.
    assert_eq!(
        (p.values[1].lo, p.values[2].lo, p.values[3].lo),
        (0.0, 0.0, 3.0)
    );
    if let Attribution::Traced(t) = &mut n.attribution {
        t.unwritten.push(crate::model::noise::Unwritten {
            event: "irq:softirq_exit".into(),
            counted: 10,
            recorded: 7,
            ring_full: 0,
        });
    }
    // With its exit counted alike: 3 pairs, not 6 events.
    let p = partial(&n).unwrap();
    assert_eq!((p.values[2].lo, p.values[3].lo), (3.0, 0.0));
    // Untraced: nothing to be partial.
    n.attribution = Attribution::NotAsked;
    assert!(partial(&n).is_none());
}

#[test]
fn gaps_short_of_the_time_off_the_cpu_fail_the_clock_check() {
    let (w, _) = recorded();
    let mut n = conclude(&w).remove(0);
    assert!(clock_check(&n).ok);
    // A thread clock that says the reader ran for a tenth of what the gaps leave it.
    n.thread_cpu_ns = (n.wall_ns - n.lost_ns) / 10;
    let c = clock_check(&n);
    assert!(!c.ok, "{c:?}");
    assert!(expected(&c).starts_with('≥') && observed(&c).ends_with("in gaps"));
}

#[test]
fn without_events_every_gap_is_outside_the_kernel() {
    let (mut w, _) = recorded();
    w.records.clear();
    for n in conclude(&w) {
        let t = traced(&n);
        assert_eq!(t.causes.len(), 1);
        assert_eq!(t.causes[0].cause, Cause::Outside);
        assert_eq!(t.covered_ns, 0);
        assert_eq!(n.coverage(), Some(0.0));
        // No event traced against a /proc delta: every count check beyond ±1 fails.
        let t = traced(&n);
        assert!(t.counts.iter().any(|c| c.proc_delta > 1));
        for (c, check) in t.counts.iter().zip(count_check_list(&n)) {
            assert_eq!(check.ok, c.proc_delta <= 1, "{check:?}");
        }
    }
}

#[test]
fn dropped_records_are_counted_by_cpu() {
    let (mut w, _) = recorded();
    // PERF_RECORD_LOST: id, lost, then the sample id (pid, tid, time, cpu, res).
    let mut body = Vec::new();
    for v in [7u64, 42] {
        body.extend(v.to_le_bytes());
    }
    body.extend([0u8; 16]);
    body.extend(1u32.to_le_bytes());
    body.extend(0u32.to_le_bytes());
    w.records.push(RawRecord {
        ty: PERF_RECORD_LOST,
        misc: 0,
        body,
    });
    let cs = conclude(&w);
    let lost = |cpu| traced(cs.iter().find(|n| n.cpu == cpu).unwrap()).lost_records;
    assert_eq!((lost(0), lost(1)), (0, 42));
}

#[test]
fn untraced_windows_say_why() {
    let (mut w, _) = recorded();
    w.tracing = Tracing::NotPermitted { paranoid: 2 };
    let cs = conclude(&w);
    assert!(matches!(
        cs[0].attribution,
        Attribution::NotPermitted { paranoid: 2 }
    ));
    assert!(count_check_list(&cs[0]).is_empty());
    assert!(cs[0].longest.iter().all(|g| g.causes.is_empty()));
    assert_eq!(cs[0].coverage(), None);
}

#[test]
fn a_measurement_carries_the_window_and_its_checks() {
    let (w, _) = recorded();
    let n = conclude(&w).remove(0);
    let m = measurement(n, &w.readers[0], Some(ONE_CPU)).unwrap();
    assert!(m.is(PROBE), "{}", m.probe);
    assert_eq!(m.unit, crate::units::Unit::Percent);
    assert!(m.noise.is_some());
    assert!(m.notes.iter().any(|x| x == ONE_CPU));
    assert!(m
        .checks
        .iter()
        .any(|c| words::name(c).contains("stayed on its CPU")));
    // The count checks are among the figure's checks.
    assert!(m
        .checks
        .iter()
        .any(|c| words::name(c).contains("LOC traced against /proc") && c.ok));
    let back: Measurement = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back.noise, m.noise);
}

/// The line a check renders, after a JSON write and re-read too.
fn both_lines(c: &Check) -> [String; 2] {
    let back: Check = serde_json::from_str(&serde_json::to_string(c).unwrap()).unwrap();
    assert_eq!(&back, c);
    [words::line(c), words::line(&back)]
}

#[test]
fn the_noise_checks_read_as_their_sentences_did() {
    let t = crate::units::fmt_time;
    let k = crate::units::fmt_thousands;
    let (w, _) = recorded();
    for n in conclude(&w) {
        let old = format!(
            "CPU {} gaps hold the time off the CPU: expected ≥ {} (wall {} − the reader's CPU \
             time {}), observed {} in gaps",
            n.cpu,
            t(n.clock_lost_ns() as f64),
            t(n.wall_ns as f64),
            t(n.thread_cpu_ns as f64),
            t(n.lost_ns as f64)
        );
        assert_eq!(both_lines(&clock_check(&n)), [old.clone(), old]);
        let Attribution::Traced(tr) = &n.attribution else {
            continue;
        };
        for (c, row) in count_check_list(&n).iter().zip(&tr.counts) {
            let seen = if row.unwritten > 0 {
                format!(
                    "{} traced + {} the kernel counted unwritten",
                    k(row.traced),
                    k(row.unwritten)
                )
            } else {
                format!("{} traced", k(row.traced))
            };
            let old = format!(
                "CPU {} {} traced against /proc: expected {} (the /proc delta) ±2%, observed \
                 {seen}",
                n.cpu,
                row.row,
                k(row.proc_delta)
            );
            assert_eq!(both_lines(c), [old.clone(), old]);
        }
    }
    let mut r = w.readers[0].clone();
    let c = placement_check(&r);
    assert!(c.ok);
    let old = format!(
        "CPU {0} reader stayed on its CPU: expected CPU {0} at start and end, observed CPU {0} \
         and {0}",
        r.cpu
    );
    assert_eq!(both_lines(&c), [old.clone(), old]);
    r.start_cpu = Some(r.cpu + 1);
    r.end_cpu = None;
    let c = placement_check(&r);
    assert!(!c.ok);
    let old = format!(
        "CPU {0} reader stayed on its CPU: expected CPU {0} at start and end, observed CPU {1} \
         and ?",
        r.cpu,
        r.cpu + 1
    );
    assert_eq!(both_lines(&c), [old.clone(), old]);
}
