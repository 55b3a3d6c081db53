//! What the kernel recorded at the switches of one `ctx.anatomy` rung (its trace pass: the
//! `tlb:tlb_flush` and `x86_fpu` records of both sides' tasks over a few round trips each),
//! per switch of each side. Evidence, not an input: it is kept beside the measurement's
//! parameters, never among them, so two runs of the same rung compare as the same figure.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A rung's trace pass: recorded, or the one line why it could not be.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum SwitchTrace {
    Recorded(TracedSides),
    NotRecorded(String),
}

/// The records of both sides' tasks, each over `round_trips` round trips.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TracedSides {
    pub round_trips: u64,
    pub measured: SideTrace,
    pub baseline: SideTrace,
}

/// One side's records per switch of its tasks, or per round trip where the side does not
/// switch (its task runs alone).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SideTrace {
    /// Whether the side's tasks switch: the figures are then per switch (2 a round trip),
    /// else per round trip.
    pub switching: bool,
    /// `tlb_flush` records per switch, by the kernel's reason.
    pub tlb_flush_per_switch: BTreeMap<String, f64>,
    /// Register-state saves (`x86_fpu_regs_deactivated`) per switch.
    pub fpu_saves_per_switch: f64,
    /// The XSAVE components live in every save (their AND; 0 without a save).
    pub fpu_live_in_every_save: u64,
    /// Records the kernel reported lost (a full ring).
    pub lost: u64,
}

/// The parameter a `ctx.anatomy` rung carried its trace in before it had this type.
pub const LEGACY_PARAM: &str = "trace";

/// A trace read from the `trace` parameter of a run written before [`SwitchTrace`] existed:
/// `{"round_trips", "measured", "baseline"}` with each side's live components written in hex,
/// or "not recorded: why". None when the value is neither. `baseline_switching`: whether the
/// rung's baseline side switches (its counts were then per switch; else totals of the pass,
/// made per round trip here).
pub fn from_legacy(v: &serde_json::Value, baseline_switching: bool) -> Option<SwitchTrace> {
    if let Some(s) = v.as_str() {
        let why = s.strip_prefix("not recorded: ").unwrap_or(s);
        return Some(SwitchTrace::NotRecorded(why.to_string()));
    }
    let n = v.get("round_trips").and_then(|n| n.as_u64());
    let side = |s: &serde_json::Value, switching: bool| -> Option<SideTrace> {
        let per = if switching { 1.0 } else { n?.max(1) as f64 };
        let live = s.get("fpu_live_in_every_save")?;
        let live = match live.as_str() {
            Some(h) => u64::from_str_radix(h.trim_start_matches("0x"), 16).ok()?,
            None => live.as_u64()?,
        };
        Some(SideTrace {
            switching,
            tlb_flush_per_switch: s
                .get("tlb_flush_per_switch")?
                .as_object()?
                .iter()
                .map(|(k, x)| Some((k.clone(), x.as_f64()? / per)))
                .collect::<Option<_>>()?,
            fpu_saves_per_switch: s.get("fpu_saves_per_switch")?.as_f64()? / per,
            fpu_live_in_every_save: live,
            lost: s.get("lost")?.as_u64()?,
        })
    };
    Some(SwitchTrace::Recorded(TracedSides {
        round_trips: n?,
        measured: side(v.get("measured")?, true)?,
        baseline: side(v.get("baseline")?, baseline_switching)?,
    }))
}

/// The anatomy's probe: the one whose measurements carry a switch trace.
pub const ANATOMY: super::ProbeId = super::ProbeId("ctx.anatomy");

/// Moves a legacy `trace` parameter of a `ctx.anatomy` measurement into its typed field.
pub fn lift_legacy(m: &mut super::Measurement) {
    if !m.is(ANATOMY) || m.switch_trace.is_some() {
        return;
    }
    // The base and direct rungs' baselines are one task alone (probes::ctx::anatomy).
    let rung = m.param_str("rung");
    let baseline_switching = !matches!(rung, Some("base" | "all"));
    if let Some(t) = m
        .params
        .get(LEGACY_PARAM)
        .and_then(|v| from_legacy(v, baseline_switching))
    {
        m.params.remove(LEGACY_PARAM);
        m.switch_trace = Some(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_legacy_trace_parameter_reads_back_typed_and_a_stray_one_stays() {
        let v = serde_json::json!({
            "round_trips": 200,
            "measured": {"fpu_live_in_every_save": "0x2e7", "fpu_saves_per_switch": 1.0025,
                "lost": 0, "tlb_flush_per_switch": {"flush on task switch, all flushed": 0.5}},
            "baseline": {"fpu_live_in_every_save": "0x2a2", "fpu_saves_per_switch": 10.0,
                "lost": 3, "tlb_flush_per_switch": {}},
        });
        let Some(SwitchTrace::Recorded(t)) = from_legacy(&v, false) else {
            panic!("not read: {v}");
        };
        assert_eq!(t.round_trips, 200);
        assert_eq!(t.measured.fpu_live_in_every_save, 0x2e7);
        assert_eq!(t.baseline.lost, 3);
        // A task alone: the pass's total made per round trip.
        assert_eq!(t.baseline.fpu_saves_per_switch, 0.05);
        assert!(t.measured.switching && !t.baseline.switching);
        assert_eq!(
            from_legacy(&"not recorded: no tracefs".into(), true),
            Some(SwitchTrace::NotRecorded("no tracefs".into()))
        );
        // A value of another shape is not a trace: it stays where it was.
        let odd = serde_json::json!({"round_trips": 1});
        assert_eq!(from_legacy(&odd, true), None);
        assert_eq!(from_legacy(&serde_json::json!(7), true), None);
        // A rung written with the parameter (as runs before the field were): its trace moves
        // to its field.
        let mut run: crate::model::Run =
            serde_json::from_str(include_str!("../../tests/fixtures/runs/anatomy.json")).unwrap();
        let mut m = run.measurements.pop().unwrap();
        assert_eq!(m.params["rung"], "all");
        m.switch_trace = None;
        m.params.insert(LEGACY_PARAM.into(), v.clone());
        lift_legacy(&mut m);
        assert!(!m.params.contains_key(LEGACY_PARAM));
        let Some(SwitchTrace::Recorded(t)) = &m.switch_trace else {
            panic!("{:?}", m.switch_trace);
        };
        assert!(!t.baseline.switching && t.measured.switching);
        m.params.insert(LEGACY_PARAM.into(), odd.clone());
        m.switch_trace = None;
        lift_legacy(&mut m);
        assert_eq!(m.params[LEGACY_PARAM], odd);
    }
}
