//! What each fault case expects of the counters, as checks. Kept pure (numbers in, checks
//! out) so the tests can feed it the counts of a run where THP or fault-around changed the
//! number of faults, or where eviction silently did not happen.

use super::{Kind, Phase, Thp};
use crate::engine::checks::{at_least, at_most, near};
use crate::engine::measure::Verdict;
use crate::model::{Check, CheckKind, Reading, Remark, RemarkKind};

/// The counted facts of one case over its recorded rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    pub kind: Kind,
    pub thp: Thp,
    pub phase: Phase,
    /// Pages touched per round.
    pub pages: usize,
    pub rounds: usize,
    pub minflt: u64,
    pub majflt: u64,
    /// 512-byte blocks read from storage by this task.
    pub inblock: u64,
    /// (min, max) resident pages before the touch, over rounds (file kinds).
    pub resident_before: Option<(usize, usize)>,
    /// Fewest resident pages right after MAP_POPULATE (populate/map).
    pub resident_after_min: Option<usize>,
    pub system_thp: String,
    /// The perf page-faults event per round (mapping) in the samples that carried counters,
    /// where supported (a second opinion).
    pub perf_faults: Option<f64>,
}

impl Facts {
    fn touched(&self) -> f64 {
        (self.pages * self.rounds).max(1) as f64
    }
    fn faults_per_page(&self) -> f64 {
        (self.minflt + self.majflt) as f64 / self.touched()
    }
}

/// Checks and warnings for one case: the checks its kind and phase call for, then the
/// second opinion of perf's fault count.
pub fn verdict(f: &Facts) -> Verdict {
    let mut checks = Vec::new();
    let mut warnings = Vec::new();
    let fpp = f.faults_per_page();
    match (f.kind, f.phase) {
        (Kind::Anon, _) => anon(f, fpp, &mut checks, &mut warnings),
        (Kind::Populate, Phase::Map) => {
            if let Some(r) = f.resident_after_min {
                checks.push(at_least(
                    "resident pages right after MAP_POPULATE",
                    f.pages as f64,
                    r as f64,
                ));
            }
            checks.push(at_most("major faults", 0.0, f.majflt as f64));
        }
        (Kind::Populate, Phase::Touch) => {
            checks.push(at_most(
                "faults per page when touching a populated mapping",
                0.01,
                fpp,
            ));
        }
        (Kind::FileCached, _) => file_cached(f, fpp, &mut checks, &mut warnings),
        (Kind::FileEvicted, _) => file_evicted(f, &mut checks),
    }
    if let Some(p) = f.perf_faults {
        let r = (f.minflt + f.majflt) as f64 / f.rounds.max(1) as f64;
        if !(f.kind == Kind::Populate && f.phase == Phase::Map)
            && (p - r).abs() > 0.05 * r.max(20.0)
        {
            warnings.push(Remark::fault_counts_disagree(p, r));
        }
    }
    (checks, warnings)
}

/// Anonymous memory: one fault per 4 KiB page, or about one per 2 MiB with THP; no major
/// faults.
fn anon(f: &Facts, fpp: f64, checks: &mut Vec<Check>, warnings: &mut Vec<Remark>) {
    match f.thp {
        Thp::Never => checks.push(near(
            "faults per page (THP off: one per 4 KiB page)",
            1.0,
            0.10,
            fpp,
        )),
        Thp::Always => {
            checks.push(at_most(
                "faults per page (THP on: about one per 2 MiB, ≤ 1/64)",
                1.0 / 64.0,
                fpp,
            ));
            if f.system_thp == "never" {
                warnings.push(Remark::plain(RemarkKind::ThpNever));
            }
        }
    }
    checks.push(at_most("major faults", 0.0, f.majflt as f64));
}

/// A file already in the page cache: no major faults, fault-around mapping several pages per
/// fault, and what an unusual pages-per-fault ratio means.
fn file_cached(f: &Facts, fpp: f64, checks: &mut Vec<Check>, warnings: &mut Vec<Remark>) {
    if let Some((lo, _)) = f.resident_before {
        checks.push(at_least(
            "pages in the page cache before the touch (mincore)",
            f.pages as f64,
            lo as f64,
        ));
    }
    checks.push(at_most("major faults", 0.0, f.majflt as f64));
    checks.push(at_most(
        "faults per page (fault-around maps several per fault: ≤ 1)",
        1.0,
        fpp,
    ));
    if fpp > 0.0 && fpp < 1.0 / 16.0 {
        let page_kib = crate::machine::live_page_size().unwrap_or(4096).max(4096) as f64 / 1024.0;
        warnings.push(Remark::large_folios(1.0 / fpp, page_kib / fpp));
    }
    if fpp > 0.5 {
        warnings.push(Remark::few_neighbours(fpp));
    }
}

/// A file evicted from the page cache: eviction worked, the touch took major faults and read
/// from storage.
fn file_evicted(f: &Facts, checks: &mut Vec<Check>) {
    if let Some((_, hi)) = f.resident_before {
        let limit = (f.pages as f64 * 0.01).floor();
        checks.push(Check {
            reading: Reading::values(&[hi as f64, f.pages as f64]),
            ..Check::at_most(CheckKind::StillCached, limit, hi as f64)
        });
    }
    checks.push(at_least("major faults", 1.0, f.majflt as f64));
    checks.push(Check::at_least(
        CheckKind::BlocksReadIn,
        1.0,
        f.inblock as f64,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(kind: Kind, thp: Thp, minflt: u64, majflt: u64) -> Facts {
        Facts {
            kind,
            thp,
            phase: Phase::Touch,
            pages: 1000,
            rounds: 2,
            minflt,
            majflt,
            inblock: 0,
            resident_before: None,
            resident_after_min: None,
            system_thp: "madvise".into(),
            perf_faults: None,
        }
    }

    fn ok(v: &Verdict) -> bool {
        v.0.iter().all(|c| c.ok)
    }

    #[test]
    fn thp_off_expects_one_fault_per_page_and_catches_huge_pages() {
        assert!(ok(&verdict(&facts(Kind::Anon, Thp::Never, 2000, 0))));
        assert!(ok(&verdict(&facts(Kind::Anon, Thp::Never, 2050, 0))));
        // THP crept in: 2000 pages in 4 faults.
        let v = verdict(&facts(Kind::Anon, Thp::Never, 4, 0));
        assert!(!ok(&v));
        assert!(crate::report::checks::name(&v.0[0]).contains("THP off"));
    }

    #[test]
    fn thp_on_expects_few_faults_and_warns_when_the_system_forbids_it() {
        assert!(ok(&verdict(&facts(Kind::Anon, Thp::Always, 4, 0))));
        let mut f = facts(Kind::Anon, Thp::Always, 2000, 0);
        f.system_thp = "never".into();
        let v = verdict(&f);
        assert!(!ok(&v));
        assert!(v
            .1
            .iter()
            .any(|w| crate::report::remarks::words(w).contains("\"never\"")));
    }

    #[test]
    fn fault_around_keeps_faults_below_pages_and_a_page_cache_miss_is_caught() {
        let mut f = facts(Kind::FileCached, Thp::Never, 2000 / 8, 0);
        f.resident_before = Some((1000, 1000));
        let v = verdict(&f);
        assert!(ok(&v) && v.1.is_empty(), "{v:?}");
        // Fault-around off: one fault per page is allowed but said.
        f.minflt = 2000;
        let v = verdict(&f);
        assert!(ok(&v) && !v.1.is_empty());
        // Pages were not all cached: the run did not measure what it says.
        f.resident_before = Some((900, 1000));
        assert!(!ok(&verdict(&f)));
        f.resident_before = Some((1000, 1000));
        f.majflt = 3;
        assert!(!ok(&verdict(&f)));
    }

    #[test]
    fn eviction_must_show_in_mincore_major_faults_and_io() {
        let mut f = facts(Kind::FileEvicted, Thp::Never, 10, 100);
        f.inblock = 4000;
        f.resident_before = Some((0, 3));
        assert!(ok(&verdict(&f)));
        // Pages stayed cached: no major faults, no I/O, mincore says resident.
        let mut g = facts(Kind::FileEvicted, Thp::Never, 120, 0);
        g.resident_before = Some((1000, 1000));
        let v = verdict(&g);
        assert_eq!(v.0.iter().filter(|c| !c.ok).count(), 3, "{v:?}");
        assert!(crate::report::checks::observed(&v.0[0]).contains("eviction did not work"));
    }

    #[test]
    fn the_eviction_checks_read_as_their_sentences_did() {
        use crate::report::checks::line;
        let by = |v: &Verdict, name: &str| {
            v.0.iter()
                .find(|c| crate::report::checks::name(c) == name)
                .cloned()
                .unwrap()
        };
        let cached = "pages still in the page cache after eviction (mincore, ≤ 1%)";
        let read_in = "blocks read in (inblock)";
        let mut f = facts(Kind::FileEvicted, Thp::Never, 10, 100);
        f.inblock = 4000;
        f.resident_before = Some((0, 3));
        let v = verdict(&f);
        for (c, old) in [
            (
                by(&v, cached),
                format!("{cached}: expected ≤ 10, observed 3.000"),
            ),
            (
                by(&v, read_in),
                format!("{read_in}: expected ≥ 1, observed 4000.000"),
            ),
        ] {
            assert!(c.ok, "{c:?}");
            let back: Check = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
            assert_eq!([line(&c), line(&back)], [old.clone(), old]);
        }
        // The failing readings say what went wrong, as their sentences did.
        f.inblock = 0;
        f.resident_before = Some((1000, 1000));
        let v = verdict(&f);
        let (c, i) = (by(&v, cached), by(&v, read_in));
        assert!(!c.ok && !i.ok);
        assert_eq!(
            line(&c),
            format!("{cached}: expected ≤ 10, observed 1000 of 1000 pages resident: eviction did not work")
        );
        assert_eq!(
            line(&i),
            format!(
                "{read_in}: expected ≥ 1, observed 0: no storage reads were accounted to this task"
            )
        );
        // Eleven pages of 1000 is above 1%: the bound is the floor of 1% of the pages.
        f.resident_before = Some((0, 11));
        assert!(!by(&verdict(&f), cached).ok);
        f.resident_before = Some((0, 10));
        assert!(by(&verdict(&f), cached).ok);
    }

    #[test]
    fn populate_checks_residency_and_a_fault_free_touch() {
        let mut f = facts(Kind::Populate, Thp::Never, 1000, 0);
        f.phase = Phase::Map;
        f.resident_after_min = Some(1000);
        assert!(ok(&verdict(&f)));
        f.resident_after_min = Some(10);
        assert!(!ok(&verdict(&f)));
        assert!(ok(&verdict(&facts(Kind::Populate, Thp::Never, 3, 0))));
        assert!(!ok(&verdict(&facts(Kind::Populate, Thp::Never, 2000, 0))));
    }

    #[test]
    fn sources_that_disagree_are_warned_about() {
        // 2000 faults over 2 rounds: 1000 per round, compared with perf's count per round.
        let mut f = facts(Kind::Anon, Thp::Never, 2000, 0);
        f.perf_faults = Some(500.0);
        assert!(verdict(&f)
            .1
            .iter()
            .any(|w| crate::report::remarks::words(w).contains("disagree")));
        f.perf_faults = Some(1001.0);
        assert!(verdict(&f).1.is_empty());
        // The same totals over 4 rounds are 500 per round: perf's 1001 no longer agrees.
        f.rounds = 4;
        assert!(verdict(&f)
            .1
            .iter()
            .any(|w| crate::report::remarks::words(w).contains("disagree")));
    }
}
