//! The kernel knobs oscost may change, and the guard that changes one with its old value
//! journaled first. The journal names a knob from this fixed list, never a path: recovery
//! resolves the name under /proc/sys itself and writes back only a value of the knob's own
//! form, so an entry planted or altered by anyone cannot make oscost write anywhere else.

use super::dir::RuntimeDir;
use crate::error::{Error, Result};
use crate::units::name::Word;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Where sysctl knobs live.
pub const PROC_SYS: &str = "/proc/sys";

/// A kernel knob oscost changes; its words are its sysctl name, as the journal records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
pub enum Knob {
    /// `kernel.sched_rr_timeslice_ms`: the SCHED_RR time slice (`ctx timeslice --mech rr`).
    #[strum(serialize = "kernel.sched_rr_timeslice_ms")]
    SchedRrTimesliceMs,
}

impl Knob {
    pub const ALL: [Knob; 1] = [Knob::SchedRrTimesliceMs];

    /// The knob's file under a sysctl tree (`/proc/sys` in production).
    pub fn path_under(self, sysctl: &Path) -> PathBuf {
        sysctl.join(self.word().replace('.', "/"))
    }

    pub fn path(self) -> PathBuf {
        self.path_under(Path::new(PROC_SYS))
    }

    /// The knob a journal line names: its sysctl name, or (entries written before names were
    /// recorded) its exact /proc/sys path. Anything else is no knob of oscost's.
    pub fn from_journal(line: &str) -> Option<Knob> {
        Knob::ALL
            .into_iter()
            .find(|k| line == k.word() || Path::new(line) == k.path())
    }

    /// Is `v` a value of this knob's form (a decimal count of milliseconds)?
    pub fn valid_value(self, v: &str) -> bool {
        match self {
            Knob::SchedRrTimesliceMs => {
                !v.is_empty() && v.len() <= 10 && v.bytes().all(|b| b.is_ascii_digit())
            }
        }
    }
}

/// Writes `value` to the knob's file: an existing file only, never through a symlink.
pub fn write_knob(path: &Path, value: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    std::io::Write::write_all(&mut f, format!("{value}\n").as_bytes())
}

/// The journal text of a knob's entry: its name and its old value, one per line.
pub fn entry_text(knob: Knob, old: &str) -> String {
    format!("{}\n{old}\n", knob.word())
}

/// The knob and old value an entry holds, checked against the list and the knob's form.
pub fn parse_entry(text: &str) -> std::result::Result<(Knob, String), String> {
    let mut lines = text.lines();
    let (Some(first), Some(old)) = (lines.next(), lines.next()) else {
        return Err("not a knob entry (two lines expected)".into());
    };
    let knob = Knob::from_journal(first).ok_or_else(|| {
        format!(
            "names '{}', which is not a knob oscost changes",
            first.escape_debug()
        )
    })?;
    if !knob.valid_value(old) {
        return Err(format!(
            "'{}' is not a value of {}",
            old.escape_debug(),
            knob.word()
        ));
    }
    Ok((knob, old.to_string()))
}

/// A kernel knob set to a new value, with the old one journaled first; written back on drop,
/// or by the next oscost start if this process is killed.
pub struct KnobGuard {
    path: PathBuf,
    old: String,
    entry: Option<super::Entry>,
}

impl KnobGuard {
    /// Reads the old value, journals it, then writes `value`. If the write fails the journal
    /// entry is removed again.
    pub fn set(knob: Knob, value: &str) -> Result<KnobGuard> {
        let dir = super::journal_dir()?;
        Self::set_in(&dir, Path::new(PROC_SYS), knob, value)
    }

    pub(super) fn set_in(
        dir: &RuntimeDir,
        sysctl: &Path,
        knob: Knob,
        value: &str,
    ) -> Result<KnobGuard> {
        let path = knob.path_under(sysctl);
        let old = std::fs::read_to_string(&path).map_err(|e| Error::io(path.display(), e))?;
        let old = old.trim().to_string();
        if !knob.valid_value(&old) {
            return Err(Error::env(format!(
                "{}: reads '{}', not a value oscost can restore; leaving it alone",
                path.display(),
                old.escape_debug()
            )));
        }
        let entry = super::Entry::write(dir, "knob", &entry_text(knob, &old))?;
        write_knob(&path, value).map_err(|e| Error::io(path.display(), e))?;
        Ok(KnobGuard {
            path,
            old,
            entry: Some(entry),
        })
    }

    pub fn old(&self) -> &str {
        &self.old
    }
}

impl Drop for KnobGuard {
    fn drop(&mut self) {
        // The entry stays if the write fails, so the next start retries.
        if write_knob(&self.path, &self.old).is_err() {
            if let Some(e) = self.entry.take() {
                e.keep();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_knob_s_journal_word_is_its_sysctl_name_and_reads_back() {
        let words = ["kernel.sched_rr_timeslice_ms"];
        for (k, w) in Knob::ALL.into_iter().zip(words) {
            assert_eq!(k.word(), w);
            assert_eq!(Knob::from_journal(w), Some(k));
        }
        for wrong in [
            "kernel.sched_rr_timeslice",
            "KERNEL.SCHED_RR_TIMESLICE_MS",
            "",
        ] {
            assert_eq!(Knob::from_journal(wrong), None, "{wrong:?}");
        }
    }

    #[test]
    fn entries_name_only_listed_knobs_with_values_of_their_form() {
        let k = Knob::SchedRrTimesliceMs;
        assert_eq!(
            k.path(),
            Path::new("/proc/sys/kernel/sched_rr_timeslice_ms")
        );
        assert_eq!(
            parse_entry(&entry_text(k, "100")).unwrap(),
            (k, "100".into())
        );
        // Written by an oscost that recorded the path.
        assert_eq!(
            parse_entry("/proc/sys/kernel/sched_rr_timeslice_ms\n25\n").unwrap(),
            (k, "25".into())
        );
        for bad in [
            "/etc/passwd\nPWNED\n",
            "/tmp/x\n1\n",
            "kernel.core_pattern\n|/tmp/x\n",
            "/proc/sys/kernel/../kernel/sched_rr_timeslice_ms\n1\n",
            "kernel.sched_rr_timeslice_ms\nPWNED\n",
            "kernel.sched_rr_timeslice_ms\n-1\n",
            "kernel.sched_rr_timeslice_ms\n",
        ] {
            assert!(parse_entry(bad).is_err(), "{bad:?} accepted");
        }
    }
}
