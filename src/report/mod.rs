//! Everything that turns a Run into something a person or a script reads: terminal tables,
//! JSON/CSV export, plots, the HTML report, and the renderings of what `analysis` (curves)
//! and `compare` (run against run, host against host) found. Reports never measure and
//! never judge: they render.

pub mod anatomy;
pub mod c2c;
pub mod checks;
pub mod compare;
pub mod ctx;
pub mod cycles;
pub mod export;
pub mod family;
pub mod fault;
pub mod figures;
pub mod fleet;
pub mod footnotes;
pub mod formats;
pub mod html;
pub mod interrupts;
pub mod ipc;
pub mod lab;
pub mod markdown;
pub mod memlat;
pub mod noise;
pub mod params;
pub mod pipeview;
pub mod plot;
pub mod remarks;
pub mod rpc;
pub mod screen;
pub mod stat;
pub mod sweep;
pub mod table;
pub mod term;
pub mod timev;
pub mod untrusted;
pub mod write;

use crate::model::{Measurement, Run, Status};
use family::{Evidence, Family};

/// Every family, the ones that own single probes before the ones that own a whole section
/// (the first owner of a probe answers for it). The order of the sections under the
/// terminal table and of the cross-run figures follows this list.
pub static FAMILIES: &[&dyn Family] = &[
    &sweep::Sweep,
    &anatomy::Anatomy,
    &memlat::MemLatency,
    &lab::Lab,
    &fault::Fault,
    &ipc::Ipc,
    &c2c::C2c,
    &rpc::Rpc,
    &ctx::Ctx,
    &noise::Noise,
    &stat::Stat,
];

/// The family of a probe, if any family claims it (call and syscall probes have none).
pub fn family_of(probe: &str) -> Option<&'static dyn Family> {
    FAMILIES.iter().copied().find(|f| f.owns(probe))
}

/// What every view (terminal, Markdown, CSV, HTML) shows for a measurement that passed its
/// checks but has no value: its family's figure and reason ([`Family::instead_of_value`]),
/// or "no value".
pub fn instead_of_value(m: &Measurement) -> String {
    family_of(&m.probe)
        .and_then(|f| f.instead_of_value(m))
        .unwrap_or_else(|| "no value".into())
}

/// `items` grouped by `key`: the groups in first-seen order, each with its items in order.
pub(crate) fn grouped<T, K: PartialEq>(
    items: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> K,
) -> Vec<(K, Vec<T>)> {
    let mut out: Vec<(K, Vec<T>)> = Vec::new();
    for item in items {
        let k = key(&item);
        match out.iter_mut().find(|(x, _)| *x == k) {
            Some((_, v)) => v.push(item),
            None => out.push((k, vec![item])),
        }
    }
    out
}

/// The index of the first of `items` that `is` picks, pushing `new()` first when none is.
pub(crate) fn find_or_push<T>(
    items: &mut Vec<T>,
    is: impl FnMut(&T) -> bool,
    new: impl FnOnce() -> T,
) -> usize {
    items.iter().position(is).unwrap_or_else(|| {
        items.push(new());
        items.len() - 1
    })
}

/// A cell of a matrix or summary table for `m`: `none` without a measurement, INVALID, or
/// unstable (its spread is in the table above), else its value as `figure` writes it ("—"
/// without one).
pub(crate) fn figure_cell(
    m: Option<&Measurement>,
    none: &str,
    figure: impl Fn(&crate::model::Summary) -> String,
) -> String {
    match m {
        None => none.into(),
        Some(m) if m.status == Status::Invalid => "INVALID".into(),
        Some(m) if m.is_unstable() => "unstable".into(),
        Some(m) => m.value.as_ref().map_or_else(|| "—".into(), figure),
    }
}

/// Whether a measurement's raw reading is its figure, shown in the value cell: nothing
/// subtracted (no baseline), the same unit and the same summary (rpc parts, memory latency),
/// and a figure (or its "unstable" spread) standing in the value cell. Every view then leaves
/// the raw cell as "—" rather than repeat the figure as if it were a second reading. An
/// invalid row keeps its raw reading: it is the only place the rejected number is shown. The
/// JSON and the CSV's `raw_median` column keep the number, as data.
pub fn raw_is_the_figure(m: &Measurement) -> bool {
    m.valid
        && matches!(m.status, Status::Ok | Status::Unstable)
        && m.baseline.is_none()
        && m.raw_unit == m.unit
        && m.value.as_ref() == Some(&m.raw)
}

/// The evidence column for a measurement (the kernel share of CPU time when no family
/// claims its probe).
pub fn evidence_of(m: &Measurement) -> Evidence {
    family_of(&m.probe).map_or(Evidence::SysTime, |f| f.about().evidence)
}

/// Whether a measurement is shown on its own, as a row of the terminal table and in the
/// HTML report's generic figures (its family may show it in its own section instead).
pub fn shown_alone(m: &Measurement) -> bool {
    family_of(&m.probe).is_none_or(|f| f.shown_alone(m))
}

/// The sentences every family of the HTML section `section` derives from `run`'s counts
/// ([`Family::derived`]).
pub fn derived(run: &Run, section: &str) -> Vec<String> {
    FAMILIES
        .iter()
        .filter(|f| f.section() == section)
        .flat_map(|f| f.derived(run))
        .collect()
}

/// The run's JSON `analysis` of what the families derive from its counts, each under its
/// key ([`Family::analysis`]); None when none derives anything.
pub fn analysis_of(run: &Run) -> Option<serde_json::Value> {
    let fields: serde_json::Map<String, serde_json::Value> = FAMILIES
        .iter()
        .filter_map(|f| f.analysis(run))
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    (!fields.is_empty()).then_some(serde_json::Value::Object(fields))
}

/// Every family's section under the terminal table, in [`FAMILIES`] order.
pub fn under_table(run: &Run, verbose: bool) -> String {
    FAMILIES
        .iter()
        .map(|f| f.under_table(run, verbose))
        .collect()
}

/// The figures across runs of every family listed in the HTML report's section `section`.
pub fn section_figures(runs: &[Run], section: &str) -> Vec<String> {
    FAMILIES
        .iter()
        .filter(|f| f.section() == section)
        .flat_map(|f| f.section_figures(runs))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::family::*;
    use super::figures::Size;
    use super::*;

    #[test]
    fn a_probe_belongs_to_its_first_owner() {
        assert_eq!(
            family_of("ctx.sweep").unwrap().about().evidence,
            Evidence::Switches
        );
        assert!(family_of("ctx.sweep").unwrap().about().draws_own_figures);
        assert!(!family_of("ctx.pipe").unwrap().about().draws_own_figures);
        assert!(family_of("mem.latency").unwrap().about().draws_own_figures);
        assert!(family_of("mmap.lab").unwrap().about().draws_own_figures);
        assert_eq!(evidence_of_probe("fault.anon"), Evidence::Faults);
        assert_eq!(evidence_of_probe("mmap.lab"), Evidence::Faults);
        assert_eq!(evidence_of_probe("rpc.part"), Evidence::Switches);
        assert_eq!(evidence_of_probe("syscall.null"), Evidence::SysTime);
        assert!(family_of("syscall.null").is_none() && family_of("call.function").is_none());
    }

    #[test]
    fn only_owned_probes_with_measurements_have_figures() {
        let run = crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
            .unwrap();
        assert!(for_probe(&run, "ctx.pipe", "host").is_none());
        assert!(for_probe(&run, "ctx.sweep", "host").is_none());
    }

    /// The figures a probe's family draws from its own analysis, None when it draws none.
    fn for_probe(run: &Run, probe: &str, subtitle: &str) -> Option<Vec<(Size, String)>> {
        let f = family_of(probe).filter(|f| f.about().draws_own_figures)?;
        Some(f.own_figures(run, subtitle)).filter(|v| !v.is_empty())
    }

    fn evidence_of_probe(p: &str) -> Evidence {
        family_of(p).map_or(Evidence::SysTime, |f| f.about().evidence)
    }
}
