//! The `/usr/bin/time -v` block for a measurement: the figures a student compares against
//! `time -v ./lab`, computed from what the engine recorded (no measuring here). Elapsed and
//! CPU time come from one window, the one the rusage deltas cover: user and system time,
//! faults, block I/O and switches are those deltas, elapsed is that window's wall time, so
//! the CPU share is of the same work; max RSS is the peak resident set.

use crate::model::Measurement;

pub use crate::analysis::faults::window_s;

/// `m:ss.cc` as time(1) prints elapsed time.
pub(crate) fn clock_style(s: f64) -> String {
    let m = (s / 60.0).floor();
    format!("{}:{:05.2}", m as u64, s - m * 60.0)
}

/// The block, indented by a tab per line as time(1) does, under a header naming the case
/// and the window.
pub fn render(m: &Measurement) -> String {
    let t = &m.evidence.rusage.total;
    let (wall, exact) = window_s(m);
    let user = t.utime_us as f64 / 1e6;
    let sys = t.stime_us as f64 / 1e6;
    // CPU time is accounted in scheduler ticks: a share over a very short window means nothing.
    let cpu = if wall >= 0.05 {
        format!("{:.0}%", 100.0 * (user + sys) / wall)
    } else {
        "n/a (window under 50 ms)".into()
    };
    let how = if exact {
        "timed"
    } else {
        "estimated from the samples' mean"
    };
    let mut out = format!(
        "{} {} (over the {} iterations the counts cover, elapsed {how}; like /usr/bin/time \
         -v)\n",
        m.probe,
        m.params_label(),
        crate::units::fmt_thousands(m.evidence.rusage.iterations)
    );
    let rows: [(&str, String); 11] = [
        (
            "Elapsed (wall clock) time (h:mm:ss or m:ss)",
            clock_style(wall),
        ),
        ("User time (seconds)", format!("{user:.2}")),
        ("System time (seconds)", format!("{sys:.2}")),
        ("Percent of CPU this job got", cpu),
        (
            "Maximum resident set size (kbytes)",
            t.maxrss_kb.to_string(),
        ),
        ("Major (requiring I/O) page faults", t.majflt.to_string()),
        (
            "Minor (reclaiming a frame) page faults",
            t.minflt.to_string(),
        ),
        ("Voluntary context switches", t.nvcsw.to_string()),
        ("Involuntary context switches", t.nivcsw.to_string()),
        ("File system inputs", t.inblock.to_string()),
        ("File system outputs", t.oublock.to_string()),
    ];
    for (k, v) in rows {
        out.push_str(&format!("\t{k}: {v}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Evidence, Measurement, Status, Summary};

    fn measurement() -> Measurement {
        let s = Summary {
            n: 2,
            median: 1000.0,
            ci95: [900.0, 1100.0],
            mean: 1000.0,
            min: 900.0,
            max: 1100.0,
            p95: 1100.0,
            mad: 100.0,
            outliers: vec![],
            ci95_within_run: None,
        };
        let mut ev = Evidence::default();
        ev.rusage.iterations = 131072;
        ev.rusage.total.utime_us = 100_000;
        ev.rusage.total.stime_us = 400_000;
        ev.rusage.total.minflt = 131072;
        ev.rusage.total.maxrss_kb = 270_000;
        ev.rusage.total.inblock = 8;
        Measurement {
            probe: "fault.anon".into(),
            sample_rounds: Vec::new(),
            sample_canary: Vec::new(),
            canary_fastest: None,
            params: [("thp".to_string(), serde_json::json!("never"))].into(),
            unit: "ns/fault".into(),
            value: Some(s.clone()),
            raw: s,
            raw_unit: "ns/page".into(),
            baseline: None,
            difference: None,
            units_per_iteration: 1.0,
            status: Status::Ok,
            samples: vec![4000.0, 4000.0],
            baseline_samples: vec![],
            evidence_samples: vec![],
            iterations_per_sample: 65536,
            baseline_iterations_per_sample: 0,
            stop_reason: Some(crate::model::StopReason::Converged),
            evidence: ev,
            checks: vec![],
            warnings: vec![],
            notes: vec![],
            valid: true,
            additive: None,
            observer: None,
            noise: None,
            switch_trace: None,
        }
    }

    #[test]
    fn block_has_every_time_v_line_from_recorded_evidence() {
        let mut m = measurement();
        // The counts cover 2 × 65536 pages at 4000 ns each: 0.524288 s (estimated).
        let b = render(&m);
        assert!(b.contains("elapsed estimated"), "{b}");
        assert!(
            b.contains("Elapsed (wall clock) time (h:mm:ss or m:ss): 0:00.52"),
            "{b}"
        );
        assert!(b.contains("User time (seconds): 0.10"));
        assert!(b.contains("System time (seconds): 0.40"));
        assert!(b.contains("Percent of CPU this job got: 95%"));
        assert!(b.contains("Maximum resident set size (kbytes): 270000"));
        assert!(b.contains("Minor (reclaiming a frame) page faults: 131072"));
        assert!(b.contains("File system inputs: 8"));
        assert_eq!(b.lines().count(), 12);
        assert!(b.starts_with("fault.anon thp=never"));
        assert_eq!(clock_style(61.5), "1:01.50");
        // A recorded window is the one used, exactly.
        m.evidence.rusage.wall_ns = Some(1_000_000_000);
        let b = render(&m);
        assert!(
            b.contains("Elapsed (wall clock) time (h:mm:ss or m:ss): 0:01.00"),
            "{b}"
        );
        assert!(b.contains("Percent of CPU this job got: 50%"), "{b}");
        assert!(b.contains("elapsed timed"), "{b}");
    }

    /// The counts cover more iterations than the samples (the warm-up mappings too): elapsed
    /// must cover the same iterations, or one pinned thread "got 204% of a CPU".
    #[test]
    fn elapsed_and_cpu_time_come_from_one_window() {
        let mut m = measurement();
        // 2 samples of 65536 pages were kept, but the counts cover 5 mappings' loops.
        m.evidence.rusage.iterations = 5 * 65536;
        m.evidence.rusage.total.utime_us = 0;
        m.evidence.rusage.total.stime_us = 1_300_000;
        let b = render(&m);
        // 5 × 65536 × 4000 ns = 1.31 s of touching for 1.3 s of CPU: 99%, not 248%.
        assert!(b.contains("Percent of CPU this job got: 99%"), "{b}");
        assert!(b.contains("0:01.31"), "{b}");
    }
}
