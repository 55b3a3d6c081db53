//! The progress bar's time left: the plan's item estimates (engine::estimate), call by
//! call, scaled by how the finished calls compared with theirs.

use super::estimate::{Mode, PlanEstimate};
use super::sampler::ROUNDS;
use std::time::Instant;

/// The time left, from the item estimates, call by call: the plan runs in passes, and a
/// spread item's estimate is shared among its [`ROUNDS`] calls (a once item's is all in the
/// first pass). Left = the calls not run yet, plus what the current call has left (never
/// below zero: a call over its estimate counts as about to end), all scaled by how the
/// finished calls compared with their estimates (so a slow machine's ETA grows as soon as the
/// first call shows it).
#[derive(Debug, Clone)]
pub struct Eta {
    /// Expected seconds of each call, by pass then item; 0 once run or cancelled.
    calls: Vec<f64>,
    /// Expected seconds of the make-up rounds, until the passes are over.
    make_up: f64,
    items: usize,
    done_expected: f64,
    done_actual: f64,
    current: Option<(usize, Instant)>,
}

impl Eta {
    pub fn new(est: &PlanEstimate, modes: &[Mode]) -> Eta {
        let items = est.items.len();
        let mut calls = vec![0.0; items * ROUNDS];
        for (i, (e, m)) in est.items.iter().zip(modes).enumerate() {
            match m {
                Mode::Spread => {
                    for pass in 0..ROUNDS {
                        calls[pass * items + i] = e.expected_s / ROUNDS as f64;
                    }
                }
                Mode::Once => calls[i] = e.expected_s,
            }
        }
        Eta {
            calls,
            make_up: est.make_up.expected_s,
            items,
            done_expected: 0.0,
            done_actual: 0.0,
            current: None,
        }
    }

    /// Item `item`'s call in pass `pass` starts now.
    pub fn start(&mut self, pass: usize, item: usize, now: Instant) {
        self.current = Some((pass * self.items + item, now));
    }

    /// The current call finished after `elapsed_s`. `whole`: it took all of its item's
    /// rounds (it ran its own loop), so its later calls are expected in it and will not run.
    pub fn finish(&mut self, elapsed_s: f64, whole: bool) {
        let Some((id, _)) = self.current.take() else {
            return;
        };
        let mut expected = std::mem::take(&mut self.calls[id]);
        if whole {
            let item = id % self.items;
            for c in self.calls.iter_mut().skip(item).step_by(self.items) {
                expected += std::mem::take(c);
            }
        }
        self.done_expected += expected;
        self.done_actual += elapsed_s;
    }

    /// The passes and their make-up rounds are over; these took `elapsed_s`.
    pub fn make_up_over(&mut self, elapsed_s: f64) {
        self.done_expected += std::mem::take(&mut self.make_up);
        self.done_actual += elapsed_s;
    }

    /// Item `item` takes no call after pass `pass` (skipped, or an error in a later round).
    pub fn cancel_after(&mut self, pass: usize, item: usize) {
        for p in pass + 1..ROUNDS {
            self.calls[p * self.items + item] = 0.0;
        }
    }

    /// Seconds left if the current call has run for `running_s`.
    pub fn remaining_s(&self, running_s: f64) -> f64 {
        let speed = if self.done_expected > 0.0 && self.done_actual > 0.0 {
            (self.done_actual / self.done_expected).clamp(0.25, 4.0)
        } else {
            1.0
        };
        let cur = self.current.map(|(id, _)| self.calls[id]).unwrap_or(0.0);
        let rest: f64 = self.calls.iter().sum::<f64>() - cur + self.make_up;
        speed * rest + (speed * cur - running_s).max(0.0)
    }

    /// Seconds left now.
    pub fn remaining_now(&self, now: Instant) -> f64 {
        let running = self
            .current
            .map(|(_, s)| now.duration_since(s).as_secs_f64())
            .unwrap_or(0.0);
        self.remaining_s(running)
    }
}

/// "1m 05s" / "42s": the ETA as the bar shows it.
pub fn format_eta(s: f64) -> String {
    let s = s.round().max(0.0) as u64;
    if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::estimate::ItemEstimate;

    #[test]
    fn eta_counts_calls_left_and_learns_the_pace() {
        let est = PlanEstimate {
            items: [9.0, 1.0, 3.0]
                .iter()
                .map(|&s| ItemEstimate {
                    label: "x".into(),
                    bound_s: s,
                    expected_s: s,
                    from_runs: 0,
                })
                .collect(),
            make_up: ItemEstimate::default(),
        };
        // Item 0 runs once (all 9 s in the first pass); items 1 and 2 spread over 3 passes.
        let modes = [Mode::Once, Mode::Spread, Mode::Spread];
        let mut eta = Eta::new(&est, &modes);
        let t0 = Instant::now();
        eta.start(0, 0, t0);
        assert!((eta.remaining_s(0.0) - 13.0).abs() < 1e-9);
        // Four seconds into the long item: 5 s of it and 4 s of the others left — not
        // 2/3 of the run, as a count of items would say.
        assert!((eta.remaining_s(4.0) - 9.0).abs() < 1e-9);
        // A call over its estimate is about to end: only what follows counts.
        assert!((eta.remaining_s(30.0) - 4.0).abs() < 1e-9);
        // It took twice its estimate: the rest is expected at that pace.
        eta.finish(18.0, false);
        eta.start(0, 1, t0);
        assert!((eta.remaining_s(0.0) - 8.0).abs() < 1e-9);
        // Item 1 is skipped after its first call: its later calls are not waited for.
        eta.finish(2.0 / 3.0, false);
        eta.cancel_after(0, 1);
        eta.start(0, 2, t0);
        assert!((eta.remaining_s(0.0) - 6.0).abs() < 1e-9);
        // Item 2 turns out to take all its rounds in its first call.
        eta.finish(6.0, true);
        assert!(eta.remaining_s(0.0).abs() < 1e-9);
        assert_eq!(format_eta(65.4), "1m 05s");
        assert_eq!(format_eta(9.6), "10s");
    }

    #[test]
    fn the_make_up_rounds_are_waited_for_until_the_passes_are_over() {
        let one = |s: f64| ItemEstimate {
            label: "x".into(),
            bound_s: s,
            expected_s: s,
            from_runs: 0,
        };
        let est = PlanEstimate {
            items: vec![one(3.0), one(6.0)],
            make_up: one(0.2),
        };
        let mut eta = Eta::new(&est, &[Mode::Spread, Mode::Once]);
        assert!((eta.remaining_s(0.0) - 9.2).abs() < 1e-9);
        eta.make_up_over(0.2);
        assert!((eta.remaining_s(0.0) - 9.0).abs() < 1e-9);
    }
}
