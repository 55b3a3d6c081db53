//! The one place a family of probes says what it shows beyond what every measurement gets
//! (the row of the terminal table, the row of the HTML table, the generic figures, the CSV
//! row): the evidence column of its rows, its section under the terminal table, its own
//! figures in the HTML report, and what its measuring command prints and writes after
//! measuring. The terminal table, the HTML report and the commands ask report::family_of or
//! walk report::FAMILIES; none of them names a family.
//!
//! A new family writes one file in report/ with a type that implements [`Family`] (every
//! method has a default: it states only what it has), and names it in report/mod.rs (its
//! module and its place in FAMILIES). docs/ARCHITECTURE.md ("Adding a family") lists every
//! file a family touches.

use crate::error::Result;
use crate::model::{Measurement, Remark, Run};
use crate::report::figures::Size;

/// What the evidence column of the terminal table shows for a family's measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Context switches and migrations per operation (the probe hands the CPU over).
    Switches,
    /// Minor and major faults per operation and blocks read (the probe touches memory).
    Faults,
    /// The share of CPU time spent in the kernel.
    SysTime,
}

/// What a measuring command asks of its family after measuring.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// The data caches of the measured CPU (label, bytes), smallest first.
    pub caches: Vec<(String, u64)>,
    /// Knees of a memory-latency curve to mark on a sweep (bytes of one working set).
    pub mem_knees: Vec<f64>,
    /// lmbench's text format instead of the table (the sweep, for old scripts).
    pub lmbench: bool,
    /// Whether figures (and the tables written beside them) are wanted.
    pub figures: bool,
    /// `--verbose` (or `--explain`): the details the default leaves out (each warning under
    /// its row, why probes were skipped, the machine's warnings in full).
    pub verbose: bool,
}

/// What a measuring command prints and writes for its family, beyond the common way out.
#[derive(Debug, Clone, Default)]
pub struct Shown {
    /// Printed instead of the clock line, machine warnings and table.
    pub text: Option<String>,
    /// Printed after the table.
    pub after: String,
    /// Added to the `--json` output as `analysis`.
    pub analysis: Option<serde_json::Value>,
    /// Figures as (file stem, SVG document), when asked.
    pub figures: Vec<(String, String)>,
    /// Tables written beside the figures, as (file name, CSV text), when asked.
    pub tables: Vec<(String, String)>,
}

/// What a family is, as data: its section, its recorded run, its command, the probe it owns,
/// its evidence column and whether it prints and draws its own.
#[derive(Debug, Clone, Copy)]
pub struct About {
    /// The section of the HTML report its probes are listed in: the probe ids' first word
    /// ("ctx" for "ctx.pipe").
    pub section: &'static str,
    /// Its recorded run, `tests/fixtures/runs/NAME.json`: made by running its command with
    /// `--json` and pinned by `tests/fixtures/runs/record.sh NAME` (which re-records it from
    /// its own command line). None: none recorded.
    pub fixture: Option<&'static str>,
    /// Its measuring command in its smallest useful form (the words after `oscost`), which
    /// the output test runs with every output option. Empty: none of its own.
    pub quick: &'static [&'static str],
    /// Whether its measuring command prints [`Family::shown`] (its own text or sections
    /// after the table): the golden test pins it as `shown` of the fixture's golden.
    pub has_shown: bool,
    /// The one probe it owns; None: every probe of its section.
    pub probe: Option<&'static str>,
    /// The evidence column of its rows in the terminal table.
    pub evidence: Evidence,
    /// Whether its figures come from its own analysis: the HTML report then draws no generic
    /// figure for its probes and asks [`Family::own_figures`] run by run instead.
    pub draws_own_figures: bool,
}

impl About {
    /// A family of every probe of `section` that prints and draws nothing of its own.
    pub const fn of(section: &'static str) -> About {
        About {
            section,
            fixture: None,
            quick: &[],
            has_shown: false,
            probe: None,
            evidence: Evidence::SysTime,
            draws_own_figures: false,
        }
    }
}

/// A family of probes: what it is ([`About`]) and what it shows. The tests derive their lists
/// from [`crate::report::FAMILIES`]: the golden test renders every family's
/// [`About::fixture`] (and its [`Family::shown`] when [`About::has_shown`]), the width test
/// lays the same out at 80 and 100 columns, and the output test runs every family's
/// [`Family::quick`] command.
pub trait Family: Sync {
    fn about(&self) -> About;

    fn section(&self) -> &'static str {
        self.about().section
    }

    fn quick(&self) -> &'static [&'static str] {
        self.about().quick
    }

    /// Whether a probe is this family's: its one probe, else every probe of its section.
    fn owns(&self, probe: &str) -> bool {
        match self.about().probe {
            Some(p) => probe == p,
            None => section_of(probe) == self.section(),
        }
    }

    /// The words of one of its own remarks ([`crate::model::RemarkKind::Family`], told apart
    /// by [`Remark::is_family`]); None for a remark it does not know. A number that is a
    /// range (remarks folded over rounds or rows) is said with [`crate::report::remarks::span`].
    fn words(&self, _r: &Remark) -> Option<String> {
        None
    }

    /// Whether a measurement of the family is shown on its own: a row of the terminal table
    /// and a generic figure of the HTML report. A family whose own section and figures show
    /// some of its measurements in full keeps those out of both (said once, not twice); the
    /// JSON, the CSV and the HTML table keep every measurement.
    fn shown_alone(&self, _m: &Measurement) -> bool {
        true
    }

    /// Its section under the terminal table (empty when the run has none of its
    /// measurements); `verbose` (--verbose) adds the details the default leaves out.
    fn under_table(&self, _run: &Run, _verbose: bool) -> String {
        String::new()
    }

    /// The figures of its own analysis for one run (empty when the run has none of its
    /// measurements), each with its layout size.
    fn own_figures(&self, _run: &Run, _subtitle: &str) -> Vec<(Size, String)> {
        Vec::new()
    }

    /// Figures across all the runs of the HTML report, after the generic ones of its
    /// section (the cross-core matrices).
    fn section_figures(&self, _runs: &[Run]) -> Vec<String> {
        Vec::new()
    }

    /// The figure a measurement without a value carries instead, with why it has no value
    /// ("4.65 ±0.12 µs/page (36 major + 2,340 minor faults: not one kind)"); None where the
    /// family has none to give (the views then say "no value").
    fn instead_of_value(&self, _m: &Measurement) -> Option<String> {
        None
    }

    /// Figures the family derives from a run's counts, a sentence each that says how,
    /// shown under its table in the terminal, Markdown and HTML alike; their numbers are
    /// the fields of [`Family::analysis`].
    fn derived(&self, _run: &Run) -> Vec<String> {
        Vec::new()
    }

    /// What the family derives from a run as fields of the JSON `analysis`: its key and
    /// value (none by default).
    fn analysis(&self, _run: &Run) -> Option<(&'static str, serde_json::Value)> {
        None
    }

    /// What its measuring command prints and writes after measuring.
    fn shown(&self, _run: &Run, _ask: &Ask) -> Result<Shown> {
        Ok(Shown::default())
    }
}

/// The section a probe id is listed in: its first word ("ctx" for "ctx.pipe").
pub fn section_of(probe: &str) -> &str {
    probe.split('.').next().unwrap_or(probe)
}

/// The figure of a curve family's analysis of `run` (none without its `probe`'s
/// measurements), drawn by `svg` from the data caches of the CPU they ran on.
pub fn curve_figure(
    run: &Run,
    probe: &str,
    svg: impl FnOnce(&[(String, u64)]) -> Result<String>,
) -> Vec<(Size, String)> {
    if !run.measurements.iter().any(|m| m.probe == probe) {
        return Vec::new();
    }
    let caches = run.machine.data_cache_sizes(measured_cpu(run, probe));
    svg(&caches)
        .ok()
        .map(|s| (Size::Wide, s))
        .into_iter()
        .collect()
}

/// The CPU a family's measurements ran on (its caches are the ones that matter), from the
/// first measurement's `cpus` parameter; CPU 0 when unrecorded.
pub fn measured_cpu(run: &Run, probe: &str) -> usize {
    run.measurements
        .iter()
        .find(|m| m.probe == probe)
        .and_then(|m| m.params.get("cpus"))
        .and_then(|v| {
            v.as_array()
                .and_then(|a| a.first().cloned())
                .or(Some(v.clone()))
        })
        .and_then(|v| v.as_u64())
        .unwrap_or(0) as usize
}
