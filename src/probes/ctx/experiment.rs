//! Experiment switches of `ctx sweep` (issue 27): the sweep reads about 12% above lat_ctx's
//! definition at small working sets, and each candidate cause is changed alone by one
//! environment variable, without rebuilding (docs/SWEEP.md, bench/sweep-variants.sh). They
//! are for that experiment, not options a user needs: a run with any of them set carries
//! `experiment` in its points' parameters, so it is never compared as a default run.
//!
//! - `OSCOST_SWEEP_SPAWN=exec`: ring members exec a fresh, small copy of the binary instead
//!   of running in a fork of oscost's large process (its mappings and page tables).
//! - `OSCOST_SWEEP_SAMPLE_MS=N`: samples of N ms, so ring and overhead alternate in longer
//!   batches (lat_ctx times long batches; the default alternates every 20 ms).
//! - `OSCOST_SWEEP_CANARY=off`: no core-speed canary reading (a ~50 µs loop every 5 ms)
//!   between the sweep's samples.

use crate::engine::sampler::SamplingConfig;
use crate::error::{Error, Result};

/// How ring members come to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Spawn {
    /// A fork of the measuring process (the default).
    #[default]
    Fork,
    /// A fork that at once execs the binary as a small ring member (`ring::MEMBER_ARG`).
    Exec,
}

/// The switches as set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Experiment {
    pub spawn: Spawn,
    /// Sample length in ms (None: the command's).
    pub sample_ms: Option<u64>,
    /// Whether the core-speed canary tags the samples.
    pub canary: bool,
}

pub const SPAWN_VAR: &str = "OSCOST_SWEEP_SPAWN";
pub const SAMPLE_VAR: &str = "OSCOST_SWEEP_SAMPLE_MS";
pub const CANARY_VAR: &str = "OSCOST_SWEEP_CANARY";

/// Longest sample the switch accepts: a sample is one auto-scaled batch of laps.
const MAX_SAMPLE_MS: u64 = 10_000;

/// Every switch off: the sweep as it always runs.
impl Default for Experiment {
    fn default() -> Self {
        Experiment {
            spawn: Spawn::Fork,
            sample_ms: None,
            canary: true,
        }
    }
}

impl Experiment {
    /// The switches from the environment; a value that is not one of the documented ones is
    /// a usage error (exit 2), never silently the default.
    pub fn from_env() -> Result<Experiment> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// The switches from `get` (the environment, or a test's table).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Experiment> {
        let bad =
            |var: &str, v: &str, want: &str| Error::usage(format!("{var}={v:?}: expected {want}"));
        let spawn = match get(SPAWN_VAR).as_deref() {
            None | Some("") | Some("fork") => Spawn::Fork,
            Some("exec") => Spawn::Exec,
            Some(v) => return Err(bad(SPAWN_VAR, v, "fork or exec")),
        };
        let sample_ms = match get(SAMPLE_VAR).as_deref() {
            None | Some("") => None,
            Some(v) => match v.parse::<u64>() {
                Ok(ms) if (1..=MAX_SAMPLE_MS).contains(&ms) => Some(ms),
                _ => {
                    return Err(bad(
                        SAMPLE_VAR,
                        v,
                        &format!("a whole number of ms from 1 to {MAX_SAMPLE_MS}"),
                    ))
                }
            },
        };
        let canary = match get(CANARY_VAR).as_deref() {
            None | Some("") | Some("on") => true,
            Some("off") => false,
            Some(v) => return Err(bad(CANARY_VAR, v, "on or off")),
        };
        Ok(Experiment {
            spawn,
            sample_ms,
            canary,
        })
    }

    /// Whether any switch differs from the default.
    pub fn is_set(&self) -> bool {
        *self != Experiment::default()
    }

    /// The sampling of a sweep point: the command's, with the sample length switched.
    pub fn sampling(&self, cfg: &SamplingConfig) -> SamplingConfig {
        match self.sample_ms {
            Some(ms) => SamplingConfig {
                target_sample_ns: ms * 1_000_000,
                ..cfg.clone()
            },
            None => cfg.clone(),
        }
    }

    /// The `experiment` parameter of a point: the switches that differ, e.g.
    /// "spawn=exec sample_ms=200" (empty when none does).
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if self.spawn == Spawn::Exec {
            parts.push("spawn=exec".to_string());
        }
        if let Some(ms) = self.sample_ms {
            parts.push(format!("sample_ms={ms}"));
        }
        if !self.canary {
            parts.push("canary=off".to_string());
        }
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> Result<Experiment> {
        let table: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Experiment::from_lookup(move |k| {
            table
                .iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn unset_switches_are_the_default_and_carry_no_label() {
        let e = with(&[]).unwrap();
        assert!(!e.is_set());
        assert_eq!(e.label(), "");
        let cfg = SamplingConfig::standard();
        assert_eq!(e.sampling(&cfg), cfg);
        assert_eq!(with(&[(SPAWN_VAR, "fork"), (CANARY_VAR, "on")]).unwrap(), e);
    }

    #[test]
    fn each_switch_changes_what_it_names() {
        let e = with(&[(SPAWN_VAR, "exec")]).unwrap();
        assert_eq!((e.spawn, e.canary, e.sample_ms), (Spawn::Exec, true, None));
        assert_eq!(e.label(), "spawn=exec");
        let e = with(&[(SAMPLE_VAR, "200")]).unwrap();
        let s = e.sampling(&SamplingConfig::standard());
        assert_eq!(s.target_sample_ns, 200_000_000);
        assert_eq!(s.budget_ns, SamplingConfig::standard().budget_ns);
        assert_eq!(e.label(), "sample_ms=200");
        let e = with(&[(CANARY_VAR, "off"), (SPAWN_VAR, "exec")]).unwrap();
        assert!(e.is_set() && !e.canary);
        assert_eq!(e.label(), "spawn=exec canary=off");
    }

    #[test]
    fn a_value_outside_the_documented_ones_is_refused() {
        for (k, v) in [
            (SPAWN_VAR, "vfork"),
            (SAMPLE_VAR, "0"),
            (SAMPLE_VAR, "20ms"),
            (SAMPLE_VAR, "99999"),
            (CANARY_VAR, "no"),
        ] {
            let e = with(&[(k, v)]).unwrap_err();
            assert!(
                matches!(&e, Error::Usage(m) if m.starts_with(k)),
                "{k}={v}: {e:?}"
            );
        }
    }
}
