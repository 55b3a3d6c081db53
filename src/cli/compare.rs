//! `oscost compare A B` (files or history ids), or `--last 2`: medians, ratio with a 95%
//! interval and a verdict per probe; `--fail-above 5%` makes it a CI regression gate (exit 1).

use super::outputs::{CompareOut, Outputs};
use super::store_opts::{load_id, load_run, DbOpts};
use crate::compare::compare;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
}

impl From<Format> for super::outputs::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Text => Self::Text,
            Format::Markdown => Self::Markdown,
            Format::Json => Self::Json,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The baseline run A and the run B compared against it (files or history ids).
    #[arg(value_name = "RUN", num_args = 0..=2)]
    pub runs: Vec<String>,
    /// Compare the oldest and newest of the last N saved runs of the newest run's kind
    /// (N ≥ 2), e.g. --last 2; runs of other kinds in between are skipped.
    #[arg(long, value_name = "N", conflicts_with = "runs")]
    pub last: Option<usize>,
    /// Exit 1 when any valid probe is significantly slower by more than this, e.g. 5%.
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold)]
    pub fail_above: Option<f64>,
    /// Smallest change that counts as a difference: a statistically significant change below
    /// it (run-to-run drift of a shared machine) is reported as no meaningful difference.
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold, default_value = "2")]
    pub min_effect: f64,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the comparison figure (ratio per probe, interval, thresholds) as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<std::path::PathBuf>,
    /// Also write an HTML page with the machine differences, the figure and the table.
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub db: DbOpts,
}

/// Runs of the history a change is held against (the newest, on the same machine).
const HISTORY_RUNS: usize = 30;

/// The newest runs of the history (at most [`HISTORY_RUNS`]), without `exclude` (ids of
/// runs compared). Empty when there is no history yet: nothing is created to find out.
pub fn history_runs(db: &DbOpts, exclude: &[String]) -> Vec<crate::model::Run> {
    let Ok(Some(store)) = db.open_existing() else {
        return Vec::new();
    };
    store
        .last(HISTORY_RUNS)
        .unwrap_or_default()
        .into_iter()
        .filter(|id| !exclude.contains(&id.to_string()))
        .filter_map(|id| store.get(id).ok())
        .collect()
}

/// The kind of run (`run`, `ctx`, `ctx sweep`, ...), if its command line was recorded: the
/// one rule `history list` shows and `compare --last` picks by (history::kind_of), so an
/// explicit `compare A B` judges kinds as they do.
pub fn kind(run: &crate::model::Run) -> Option<String> {
    (run.command.len() > 1).then(|| super::history::kind_of(&run.command.join(" ")))
}

/// The two runs `compare --last N` compares: the oldest and newest of the last `n` runs of
/// the newest run's kind (the kind `history list` shows).
#[derive(Debug, PartialEq, Eq)]
pub struct LastPair {
    pub a: i64,
    pub b: i64,
    pub kind: String,
    /// Runs of other kinds were passed over to find them.
    pub skipped: bool,
}

/// Runs named in the refusal when the newest run has no partner of its kind.
const RUNS_NAMED: usize = 5;

/// Picks the pair from `recent` (id and command line, newest first, at least one run). Runs
/// of different kinds cannot be compared, so when the newest two differ, the newest run's kind
/// decides; with no second run of that kind, the refusal names the newest runs found and
/// what to do instead.
pub fn last_of_kind(recent: &[(i64, String)], n: usize) -> std::result::Result<LastPair, String> {
    let kind = super::history::kind_of(&recent[0].1);
    let same: Vec<(usize, i64)> = recent
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| super::history::kind_of(c) == kind)
        .map(|(i, (id, _))| (i, *id))
        .take(n)
        .collect();
    if same.len() < 2 {
        let found: Vec<String> = recent
            .iter()
            .take(RUNS_NAMED)
            .map(|(id, c)| format!("{id} {}", super::history::kind_of(c)))
            .collect();
        let more = if recent.len() > RUNS_NAMED {
            ", …"
        } else {
            ""
        };
        return Err(format!(
            "--last {n}: run {} is the only `oscost {kind}` run in the history (newest runs: \
             {}{more}); see `oscost history list` and compare two of one kind with \
             `oscost compare ID ID`",
            recent[0].0,
            found.join(", ")
        ));
    }
    let (first, last) = (same[same.len() - 1], same[0]);
    Ok(LastPair {
        a: first.1,
        b: last.1,
        kind,
        skipped: first.0 != same.len() - 1,
    })
}

/// "5%" or "5": a slowdown threshold in percent, 0 to 1000.
pub fn parse_threshold(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage (e.g. 5%)"))?;
    if !(0.0..=1000.0).contains(&v) {
        return Err(format!("'{s}' is out of range: use 0% to 1000%"));
    }
    Ok(v)
}

pub fn run(a: CompareArgs) -> Result<i32> {
    use super::outputs::Format as Out;
    let outputs = Outputs::new()
        .with(Out::Svg, a.svg.as_deref())
        .with(Out::Html, a.html.as_deref());
    let inputs: Vec<&std::path::Path> = a.runs.iter().map(std::path::Path::new).collect();
    outputs.check(&[], &inputs, a.db.path().ok().as_deref())?;
    let (specs, [(ra, na), (rb, nb)]) = match a.last {
        Some(n) if n < 2 => return Err(Error::usage(format!("--last {n}: need at least 2 runs"))),
        Some(n) => {
            let recent = match a.db.open_existing()? {
                Some(store) => store.newest_first()?,
                None => Vec::new(),
            };
            // One run: no partner of its kind, named with the way out below.
            if recent.is_empty() {
                return Err(Error::usage(format!(
                    "--last {n}: the history holds 0 run(s); need 2"
                )));
            }
            let pick = last_of_kind(&recent, n).map_err(Error::usage)?;
            if pick.skipped {
                eprintln!(
                    "oscost: comparing runs {} and {}, the last `oscost {}` runs \
                     (other kinds skipped)",
                    pick.a, pick.b, pick.kind
                );
            }
            // Loaded as ids: a file named like an id does not stand in for the run.
            (
                vec![pick.a.to_string(), pick.b.to_string()],
                [load_id(pick.a, &a.db)?, load_id(pick.b, &a.db)?],
            )
        }
        None if a.runs.len() == 2 => (
            a.runs.clone(),
            [load_run(&a.runs[0], &a.db)?, load_run(&a.runs[1], &a.db)?],
        ),
        None => {
            return Err(Error::usage(
                "compare needs two runs (files or history ids), or --last N",
            ))
        }
    };
    if let (Some(ka), Some(kb)) = (kind(&ra), kind(&rb)) {
        if ka != kb {
            return Err(Error::usage(format!(
                "runs of different kinds cannot be compared: A is `oscost {ka}`, B is \
                 `oscost {kb}`; `oscost history list` shows each run's kind, and \
                 `oscost compare --last 2` picks the newest two of one kind"
            )));
        }
    }
    let mut c = compare(&ra, &na, &rb, &nb);
    if c.pairs.is_empty() {
        return Err(Error::usage(format!(
            "nothing to compare: no measurement of A has a partner in B with the same probe \
             and inputs ({} only in A, {} only in B)",
            c.only_in_a.len(),
            c.only_in_b.len()
        )));
    }
    c.apply_history_drift(&crate::compare::history_drift(
        &history_runs(&a.db, &specs),
        &rb.machine,
    ));
    c.apply_min_effect(a.min_effect);
    let shown = CompareOut {
        comparison: &c,
        fail_above: a.fail_above,
        min_effect: a.min_effect,
    };
    // The files first: a failed standard output does not cost them.
    outputs.write(&shown)?;
    super::outputs::print(&shown, a.format.into())?;
    if let Some(x) = a.fail_above {
        // A gate that compared nothing has passed nothing: every pair invalid in A or B.
        if !c.pairs.iter().any(|p| p.valid) {
            eprintln!(
                "oscost: the gate compared nothing: each of the {} measurement(s) paired is                  invalid in A or B, so no change can be ruled out",
                c.pairs.len()
            );
            return Ok(1);
        }
        let bad = c.regressions(x);
        if !bad.is_empty() {
            for p in &bad {
                eprintln!(
                    "oscost: regression: {} {} is {:+.1}% slower (threshold {x}%)",
                    p.probe,
                    p.params,
                    p.change_pct.unwrap_or(0.0)
                );
            }
            return Ok(1);
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recent(runs: &[(i64, &str)]) -> Vec<(i64, String)> {
        runs.iter().map(|(i, c)| (*i, c.to_string())).collect()
    }

    /// `compare A B` and `compare --last` judge kinds by one rule: `ctx` and `ctx sweep` are
    /// two kinds (the first word alone called them one).
    #[test]
    fn an_explicit_pair_is_judged_by_the_kind_history_list_shows() {
        let run = |cmd: &str| {
            let mut r = crate::input::parse_run(
                include_str!("../../tests/fixtures/run-quick.json"),
                "fixture",
            )
            .unwrap();
            r.command = cmd.split(' ').map(String::from).collect();
            r
        };
        let sweep = run("oscost ctx sweep --quick");
        let ctx = run("oscost ctx --quick");
        assert_eq!(kind(&sweep).as_deref(), Some("ctx sweep"));
        assert_eq!(kind(&ctx).as_deref(), Some("ctx"));
        assert_ne!(kind(&sweep), kind(&ctx));
        let r = recent(&[(2, "oscost ctx sweep --quick"), (1, "oscost ctx --quick")]);
        assert!(last_of_kind(&r, 2).unwrap_err().contains("ctx sweep"));
        assert_eq!(kind(&run("oscost")), None);
    }

    #[test]
    fn last_two_of_one_kind_are_compared_as_they_are() {
        let r = recent(&[(4, "oscost run -q"), (3, "oscost run"), (2, "oscost c2c")]);
        let p = last_of_kind(&r, 2).unwrap();
        assert_eq!((p.a, p.b, p.kind.as_str(), p.skipped), (3, 4, "run", false));
    }

    #[test]
    fn other_kinds_in_between_are_skipped_and_said() {
        let r = recent(&[
            (9, "oscost ctx sweep --quick"),
            (8, "oscost mem latency"),
            (7, "oscost ctx --quick"),
            (6, "oscost ctx sweep"),
            (5, "oscost ctx sweep"),
        ]);
        let p = last_of_kind(&r, 2).unwrap();
        assert_eq!(
            (p.a, p.b, p.kind.as_str(), p.skipped),
            (6, 9, "ctx sweep", true)
        );
        // --last 3: the oldest and newest of the last three of that kind.
        let p = last_of_kind(&r, 3).unwrap();
        assert_eq!((p.a, p.b), (5, 9));
    }

    #[test]
    fn no_partner_names_the_runs_and_the_way_out() {
        let r = recent(&[
            (7, "oscost mem latency"),
            (6, "oscost c2c"),
            (5, "oscost run"),
            (4, "oscost run"),
            (3, "oscost run"),
            (2, "oscost run"),
        ]);
        let e = last_of_kind(&r, 2).unwrap_err();
        assert!(
            e.contains("run 7 is the only `oscost mem latency` run"),
            "{e}"
        );
        assert!(
            e.contains("7 mem latency, 6 c2c, 5 run, 4 run, 3 run, …"),
            "{e}"
        );
        assert!(e.contains("`oscost history list`"), "{e}");
        assert!(e.contains("`oscost compare ID ID`"), "{e}");
        // A history of one run: the same refusal, naming it.
        let e = last_of_kind(&r[..1], 2).unwrap_err();
        assert!(e.contains("(newest runs: 7 mem latency)"), "{e}");
    }
}
