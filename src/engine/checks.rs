//! Declared expectations checked against evidence. Each check records what was expected,
//! what was observed and whether they agree; one failed check makes a measurement invalid.

use crate::model::{Check, Evidence, Placement};

/// observed within ±`tol` (fraction) of `expected`.
pub fn near(name: &str, expected: f64, tol: f64, observed: f64) -> Check {
    Check {
        name: name.into(),
        expected: format!("{expected:.2} ±{:.0}%", tol * 100.0),
        observed: format!("{observed:.3}"),
        ok: (observed - expected).abs() <= expected.abs() * tol,
    }
}

/// observed ≤ limit.
pub fn at_most(name: &str, limit: f64, observed: f64) -> Check {
    Check {
        name: name.into(),
        expected: format!("≤ {limit}"),
        observed: format!("{observed:.3}"),
        ok: observed <= limit,
    }
}

/// observed ≥ limit.
pub fn at_least(name: &str, limit: f64, observed: f64) -> Check {
    Check {
        name: name.into(),
        expected: format!("≥ {limit}"),
        observed: format!("{observed:.3}"),
        ok: observed >= limit,
    }
}

/// Every participant that was pinned was seen on a requested CPU at start and end.
pub fn placement(placements: &[Placement]) -> Check {
    let mut bad = Vec::new();
    let mut seen = Vec::new();
    for p in placements.iter().filter(|p| !p.requested.is_empty()) {
        for (when, cpu) in [("start", p.start), ("end", p.end)] {
            match cpu {
                Some(c) if p.requested.contains(&c) => seen.push(c),
                Some(c) => bad.push(format!("{} on CPU {c} at {when}", p.role)),
                None => bad.push(format!("{} not seen at {when}", p.role)),
            }
        }
    }
    seen.sort_unstable();
    seen.dedup();
    let requested: Vec<usize> = {
        let mut r: Vec<usize> = placements
            .iter()
            .flat_map(|p| p.requested.iter().copied())
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    };
    Check {
        name: "placement".into(),
        expected: format!(
            "all participants on CPU {}",
            crate::evidence::placement::format_cpu_list(&requested)
        ),
        observed: if bad.is_empty() {
            format!(
                "on CPU {}",
                crate::evidence::placement::format_cpu_list(&seen)
            )
        } else {
            bad.join("; ")
        },
        ok: bad.is_empty(),
    }
}

/// All participants were seen on one and the same CPU (same-core probes).
pub fn same_cpu(placements: &[Placement]) -> Check {
    let mut seen: Vec<usize> = placements
        .iter()
        .flat_map(|p| [p.start, p.end])
        .flatten()
        .collect();
    seen.sort_unstable();
    seen.dedup();
    Check {
        name: "same CPU".into(),
        expected: "all participants on one CPU".into(),
        observed: if seen.is_empty() {
            "no placement seen".into()
        } else {
            format!("CPU {}", crate::evidence::placement::format_cpu_list(&seen))
        },
        ok: seen.len() == 1,
    }
}

/// The participants held their CPU for at least `min_share` of the measured wall time;
/// less means other tasks (or the hypervisor) ran in their place and inflated the samples.
/// None when schedstat was not available to tell.
pub fn occupancy(ev: &Evidence, min_share: f64) -> Option<Check> {
    let o = ev.occupancy.as_ref()?;
    Some(Check {
        name: "CPU held by participants".into(),
        expected: format!("≥ {:.0}% of wall time", min_share * 100.0),
        observed: format!(
            "{:.1}% (run-queue wait {:.1}%)",
            o.share * 100.0,
            100.0 * o.run_delay_ns as f64 / o.wall_ns.max(1) as f64
        ),
        ok: o.share >= min_share,
    })
}

/// The share of CPU that must be the participants' for a figure to count.
pub const MIN_OCCUPANCY: f64 = 0.9;

/// Push the occupancy check and, when others took a noticeable share without failing it, a
/// warning that says so.
pub fn add_occupancy(ev: &Evidence, checks: &mut Vec<Check>, warnings: &mut Vec<String>) {
    if let Some(c) = occupancy(ev, MIN_OCCUPANCY) {
        let share = ev.occupancy.as_ref().map(|o| o.share).unwrap_or(1.0);
        if c.ok && share < 0.98 {
            warnings.push(format!(
                "other tasks held the CPU for {:.1}% of the measured time",
                (1.0 - share) * 100.0
            ));
        } else if !c.ok {
            warnings.push(format!(
                "other tasks ran in the participants' place {:.0}% of the time, inflating \
                 every sample: stop the competing load or pick an idle CPU with --cpu",
                (1.0 - share) * 100.0
            ));
        }
        checks.push(c);
    }
}

/// Context switches per raw iteration, summed over participants: from the perf event where
/// supported, else from rusage (voluntary + involuntary).
pub fn switches_per_op(ev: &Evidence) -> (f64, &'static str) {
    if let Some(per) = ev
        .events
        .get("context-switches")
        .filter(|e| e.supported)
        .and_then(|e| e.per_op)
    {
        return (per, "perf context-switches");
    }
    let it = ev.rusage.iterations.max(1) as f64;
    (
        (ev.rusage.total.nvcsw + ev.rusage.total.nivcsw) as f64 / it,
        "rusage nvcsw+nivcsw",
    )
}

/// The "no CPU migrations" check. The perf count is the evidence; but when every participant
/// was pinned to a single CPU and was seen on it at start and end, a non-zero count cannot be
/// a move between CPUs (the kernel may count a re-queue on the same CPU, seen here under
/// heavy parallel load), so the check then rests on placement and says what perf counted.
pub fn no_migrations(ev: &Evidence) -> Check {
    let counted = migrations(ev);
    let pinned_and_stayed = !ev.cpus.is_empty()
        && ev.cpus.iter().all(|p| {
            p.requested.len() == 1
                && p.start == Some(p.requested[0])
                && p.end == Some(p.requested[0])
        });
    let mut c = at_most("cpu migrations", 0.0, counted);
    if counted > 0.0 && pinned_and_stayed {
        c.ok = true;
        c.observed = format!(
            "0 (perf counted {counted:.0}, but every task is pinned to one CPU and stayed on it)"
        );
    }
    c
}

/// CPU migrations during the windows: perf event where supported, else placement changes.
pub fn migrations(ev: &Evidence) -> f64 {
    if let Some(t) = ev
        .events
        .get("cpu-migrations")
        .filter(|e| e.supported)
        .and_then(|e| e.total)
    {
        return t;
    }
    ev.cpus
        .iter()
        .filter(|p| p.start.is_some() && p.end.is_some() && p.start != p.end)
        .count() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(role: &str, req: usize, start: usize, end: usize) -> Placement {
        Placement {
            role: role.into(),
            pid: 1,
            tid: 1,
            requested: vec![req],
            start: Some(start),
            end: Some(end),
        }
    }

    #[test]
    fn near_and_bounds() {
        assert!(near("x", 2.0, 0.05, 2.08).ok);
        assert!(!near("x", 2.0, 0.05, 2.2).ok);
        assert!(!near("x", 2.0, 0.05, 0.0).ok);
        assert!(at_most("m", 0.0, 0.0).ok);
        assert!(!at_most("m", 0.0, 1.0).ok);
        assert!(at_least("f", 1.0, 3.0).ok);
    }

    #[test]
    fn placement_fails_when_a_partner_ran_elsewhere() {
        let ok = placement(&[placed("parent", 0, 0, 0), placed("child", 0, 0, 0)]);
        assert!(ok.ok, "{ok:?}");
        let bad = placement(&[placed("parent", 0, 0, 0), placed("child", 0, 1, 1)]);
        assert!(!bad.ok);
        assert!(bad.observed.contains("child on CPU 1"));
    }

    #[test]
    fn same_cpu_fails_across_cores() {
        assert!(same_cpu(&[placed("a", 0, 0, 0), placed("b", 0, 0, 0)]).ok);
        // Each on its own requested CPU: placement passes, same-CPU must not.
        let split = [placed("a", 0, 0, 0), placed("b", 1, 1, 1)];
        assert!(placement(&split).ok);
        let c = same_cpu(&split);
        assert!(!c.ok);
        assert_eq!(c.observed, "CPU 0-1");
    }

    #[test]
    fn occupancy_fails_when_others_held_the_cpu() {
        let mut ev = Evidence::default();
        assert!(occupancy(&ev, 0.9).is_none(), "no schedstat, no verdict");
        ev.occupancy = Some(crate::model::Occupancy {
            wall_ns: 1000,
            oncpu_ns: 990,
            run_delay_ns: 0,
            share: 0.99,
        });
        assert!(occupancy(&ev, 0.9).unwrap().ok);
        ev.occupancy.as_mut().unwrap().share = 0.7;
        let c = occupancy(&ev, 0.9).unwrap();
        assert!(!c.ok);
        assert!(c.observed.starts_with("70.0%"));
        let (mut checks, mut warnings) = (Vec::new(), Vec::new());
        ev.occupancy.as_mut().unwrap().share = 0.95;
        add_occupancy(&ev, &mut checks, &mut warnings);
        assert!(checks[0].ok && warnings[0].contains("5.0%"));
    }

    #[test]
    fn migrations_check_reconciles_perf_with_pinning() {
        let mut ev = Evidence {
            cpus: vec![placed("a", 1, 1, 1), placed("b", 1, 1, 1)],
            ..Default::default()
        };
        ev.events.insert(
            "cpu-migrations".into(),
            crate::model::EventReading {
                per_op: Some(0.01),
                total: Some(2.0),
                supported: true,
                ..Default::default()
            },
        );
        let c = no_migrations(&ev);
        assert!(c.ok && c.observed.contains("perf counted 2"), "{c:?}");
        // Unpinned (or moved) tasks: the perf count stands.
        ev.cpus[1] = placed("b", 1, 0, 1);
        assert!(!no_migrations(&ev).ok);
        ev.cpus[1].requested = vec![0, 1];
        ev.cpus[1].start = Some(1);
        assert!(!no_migrations(&ev).ok);
    }

    #[test]
    fn switches_fall_back_to_rusage() {
        let mut ev = Evidence::default();
        ev.rusage.iterations = 100;
        ev.rusage.total.nvcsw = 150;
        ev.rusage.total.nivcsw = 50;
        assert_eq!(switches_per_op(&ev), (2.0, "rusage nvcsw+nivcsw"));
        ev.events.insert(
            "context-switches".into(),
            crate::model::EventReading {
                per_op: Some(1.5),
                total: Some(150.0),
                supported: true,
                ..Default::default()
            },
        );
        assert_eq!(switches_per_op(&ev).0, 1.5);
    }
}
