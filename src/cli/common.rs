//! Options shared by every measuring subcommand, and turning them into a sampling config.

use crate::engine::sampler::SamplingConfig;
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How long and how precisely to measure, and where results go.
#[derive(Debug, Clone, clap::Args)]
pub struct MeasureOpts {
    /// Quick mode: short samples and a 0.3 s budget per measurement (a few seconds in all).
    #[arg(long)]
    pub quick: bool,
    /// Time budget per measurement, e.g. 2s, 500ms (default 2s, quick 300ms; `run` without
    /// it shares 10 s of sampling among its items).
    #[arg(long, value_parser = parse_duration)]
    pub budget: Option<Duration>,
    /// Stop sampling when the 95% interval is within ± this percent of the median.
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub ci: Option<f64>,
    /// Write the run as JSON (schema in docs/SCHEMA.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per measurement.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Exit with 1 when any measurement is invalid.
    #[arg(long)]
    pub strict: bool,
    /// No progress bar or notices on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print each probe's definition after the table (and everything --verbose prints).
    #[arg(long)]
    pub explain: bool,
    /// Print every detail the default leaves out: each probe's evidence lines, each round's
    /// reading of a failed check, each warning under its probe, why probes were skipped.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Also write the self-contained HTML report (tables and plots) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write the run in the Prometheus text exposition format to FILE (name it
    /// `*.prom` in node_exporter's textfile directory).
    #[arg(long, value_name = "FILE")]
    pub openmetrics: Option<PathBuf>,
    /// Do not save this run to the history database.
    #[arg(long)]
    pub no_save: bool,
    /// Tag the run, e.g. --label rack=b4 --label kernel=lts (repeatable). `host` defaults to
    /// the hostname; set it when several machines share one.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    #[command(flatten)]
    pub db: super::store_opts::DbOpts,
    /// Each measurement's share of a suite's sampling time in all, when the command shares
    /// one among its items (`oscost run`): the budget of a measurement is at most this,
    /// unless `--budget` sets it.
    #[arg(skip)]
    pub share: Option<Duration>,
}

impl MeasureOpts {
    pub fn sampling(&self) -> SamplingConfig {
        let mut cfg = if self.quick {
            SamplingConfig::quick()
        } else {
            SamplingConfig::standard()
        };
        if let Some(share) = self.share {
            cfg.budget_ns = cfg.budget_ns.min(share.as_nanos() as u64);
        }
        if let Some(b) = self.budget {
            cfg.budget_ns = b.as_nanos() as u64;
            // Short budgets need short samples, or a handful of samples eat the budget.
            cfg.target_sample_ns = cfg.target_sample_ns.min(cfg.budget_ns / 20).max(1_000_000);
            cfg.warmup_ns = cfg.warmup_ns.min(cfg.budget_ns / 10);
        }
        if let Some(p) = self.ci {
            cfg.rel_ci_target = p / 100.0;
        }
        cfg
    }

    /// The run's outputs: `--json`, `--csv`, `--html`, `--openmetrics`.
    pub fn outputs(&self) -> super::outputs::Outputs {
        use super::outputs::{Format, Outputs};
        Outputs::new()
            .with(Format::Json, self.json.as_deref())
            .with(Format::Csv, self.csv.as_deref())
            .with(Format::Html, self.html.as_deref())
            .with(Format::OpenMetrics, self.openmetrics.as_deref())
    }

    /// Fail early on output paths that cannot be written (see
    /// [`MeasureOpts::check_outputs_and`]).
    pub fn check_outputs(&self) -> Result<()> {
        self.check_outputs_and(&[], &[])
    }

    /// Before measuring: every output (`--json/--csv/--html` and a command's `extra` files
    /// such as `--svg`) passes the one output check (`outputs::check`: writable, none named
    /// twice, none the history database, none of the command's `inputs`), and the history can
    /// take the run (unless `--no-save`).
    pub fn check_outputs_and(
        &self,
        extra: &[&std::path::Path],
        inputs: &[&std::path::Path],
    ) -> Result<()> {
        let db = self.db.path().ok();
        self.outputs().check(extra, inputs, db.as_deref())?;
        // The history is checked before measuring, whichever it is: a database that cannot
        // take the run is found now, not after the measuring.
        if !self.no_save {
            if let Some(db) = &db {
                crate::store::check_can_save(db)?;
            }
        }
        Ok(())
    }
}

/// Drops repeated entries of a list option, keeping the first of each (`--which null,null`
/// measures null once).
pub fn dedup<T: PartialEq>(v: &mut Vec<T>) {
    let mut i = 0;
    while i < v.len() {
        if v[..i].contains(&v[i]) {
            v.remove(i);
        } else {
            i += 1;
        }
    }
}

/// The run's labels: the user's, plus `host` = the hostname unless given. A key given twice
/// is refused (which value was meant is unknowable).
pub fn labels(
    given: &[(String, String)],
    hostname: Option<&str>,
) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for (k, v) in given {
        if out.insert(k.clone(), v.clone()).is_some() {
            return Err(Error::usage(format!(
                "--label {k}: given more than once; give each key once"
            )));
        }
    }
    if !out.contains_key("host") {
        out.insert(
            "host".into(),
            hostname.unwrap_or("unknown-host").to_string(),
        );
    }
    Ok(out)
}

/// `KEY=VALUE` by the label rules (`input::check_label`): `--label` takes what a run file may
/// hold.
pub fn parse_label(s: &str) -> std::result::Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not KEY=VALUE (e.g. rack=b4)"))?;
    crate::input::check_label(k, v)?;
    Ok((k.to_string(), v.to_string()))
}

/// "2s", "500ms", "1m": between 10 ms and 1 hour.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let d = humantime::parse_duration(s.trim())
        .map_err(|e| format!("'{s}' is not a duration ({e}); use e.g. 500ms, 2s, 1m"))?;
    if d < Duration::from_millis(10) || d > Duration::from_secs(3600) {
        return Err(format!("'{s}' is out of range: use 10ms to 1h"));
    }
    Ok(d)
}

/// A percentage in (0, 50].
pub fn parse_percent(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage"))?;
    if !(v > 0.0 && v <= 50.0) {
        return Err(format!(
            "'{s}' is out of range: use a percentage above 0 and at most 50"
        ));
    }
    Ok(v)
}

/// The CPU for same-core probes: the user's choice (validated), else the last allowed CPU
/// (CPU 0 usually takes more interrupts).
pub fn pick_cpu(cpu: Option<usize>) -> Result<usize> {
    match cpu {
        Some(c) => crate::evidence::placement::validate_cpu(c),
        None => crate::machine::affinity::allowed_cpus()
            .last()
            .copied()
            .ok_or_else(|| Error::env("no CPU is in this process's allowed set")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_keep_the_first_of_each_value() {
        let mut v = vec![3, 1, 3, 2, 1];
        dedup(&mut v);
        assert_eq!(v, vec![3, 1, 2]);
    }

    #[test]
    fn durations_and_percentages() {
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse_duration("0s").unwrap_err().contains("out of range"));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("3h").unwrap_err().contains("out of range"));
        assert!(parse_duration("fast")
            .unwrap_err()
            .contains("not a duration"));
        assert_eq!(parse_percent("1%").unwrap(), 1.0);
        assert_eq!(
            parse_label("rack=b=4").unwrap(),
            ("rack".to_string(), "b=4".to_string())
        );
        assert!(parse_percent("0").is_err());
        assert!(parse_percent("x").is_err());
    }

    #[test]
    fn malformed_labels_are_refused() {
        for bad in [
            "rack",
            "=x",
            "Rack=x",
            "1rack=x",
            "ra ck=x",
            "rack=",
            "rack=  ",
            "rack=a\tb",
        ] {
            assert!(parse_label(bad).is_err(), "{bad} accepted");
        }
        assert!(parse_label(&format!("k={}", "v".repeat(257))).is_err());
        assert!(parse_label(&format!("{}=v", "k".repeat(65))).is_err());
        assert!(parse_label("host=node-1.rack_b").is_ok());
    }

    #[test]
    fn host_defaults_to_hostname_and_can_be_set() {
        let l = labels(&[("rack".into(), "b4".into())], Some("n1")).unwrap();
        assert_eq!(l["host"], "n1");
        assert_eq!(l["rack"], "b4");
        let l = labels(&[("host".into(), "vm-a".into())], Some("n1")).unwrap();
        assert_eq!(l["host"], "vm-a");
        assert_eq!(labels(&[], None).unwrap()["host"], "unknown-host");
        let e = labels(&[("a".into(), "1".into()), ("a".into(), "2".into())], None).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("more than once"), "{e}");
    }
}
