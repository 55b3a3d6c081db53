//! Cleanup that survives kill -9. Drop guards remove scratch files, restore kernel knobs and
//! unmount what oscost mounted on success, error, Ctrl-C and panic, but SIGKILL runs no code.
//! So everything left behind is named in one runtime directory with its owner's PID (and the
//! owner's start time, so a reused PID is not mistaken for the owner): scratch directories,
//! each kernel knob's old value and each mount, written *before* the change. Files oscost
//! keeps elsewhere (a scratch file in a user's `--dir`, an output being written) have no name
//! that outlives the process: they are unlinked at once or unnamed until renamed into place. Every oscost start calls [`recover`], which removes the
//! scratch of dead owners, writes back the knobs they changed and unmounts what they mounted,
//! saying so in one line each.
//!
//! Recovery runs as whoever starts oscost, root included, so nothing in the journal can steer
//! it: the directory must be this user's alone ([`dir`]), an entry is read only when it is
//! this user's regular file, and an entry names a knob or a mount from a fixed list
//! ([`knob`], [`mount`]), never a path to write.

pub mod dir;
pub mod knob;
pub mod mount;

use crate::error::{Error, Result};
use crate::units::name::Word;
use dir::{Missing, RuntimeDir};
pub use knob::{Knob, KnobGuard};
pub use mount::{Mount, MountGuard};
use std::path::{Path, PathBuf};

/// The runtime directory, created on first use; refused (one line, exit 2) when it is not
/// this user's alone.
pub fn runtime_dir() -> Result<RuntimeDir> {
    RuntimeDir::open(Missing::Create)?
        .ok_or_else(|| Error::env("the runtime directory could not be created"))
}

/// The directory of knob and mount entries ([`dir::journal_location`]), created on first
/// use; refused as the runtime directory is.
pub fn journal_dir() -> Result<RuntimeDir> {
    RuntimeDir::open_at(&dir::journal_location(), dir::euid(), Missing::Create)?
        .ok_or_else(|| Error::env("the journal directory could not be created"))
}

/// The runtime directory and, where it is another, the journal's.
fn locations() -> Vec<PathBuf> {
    let mut v = vec![dir::location(), dir::journal_location()];
    v.dedup();
    v
}

/// Removes the runtime directory when nothing is left in it, so a finished oscost leaves
/// nothing in the temp directory. A directory that is refused is left alone.
pub fn tidy() {
    for p in locations() {
        if let Ok(Some(d)) = RuntimeDir::open_at(&p, dir::euid(), Missing::Absent) {
            d.remove_if_empty();
        }
    }
}

/// This process's tag in file names: `<pid>-<start time in clock ticks>`.
pub fn owner_tag() -> String {
    let pid = std::process::id();
    format!("{pid}-{}", start_time(pid).unwrap_or(0))
}

/// A running process's start time since boot in clock ticks (/proc/PID/stat field 22);
/// None when there is no such process or it is a zombie (killed, not yet reaped: its guards
/// will never run).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields after the last ')'.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    if matches!(rest.next(), Some("Z") | Some("X") | None) {
        return None;
    }
    rest.nth(18)?.parse().ok()
}

/// Is the owner named by `tag` (`<pid>-<start>`) still running? Unparseable tags count as
/// alive, so nothing of unknown origin is touched.
pub fn owner_alive(tag: &str) -> bool {
    let mut it = tag.splitn(2, '-');
    let (Some(pid), Some(start)) = (it.next(), it.next()) else {
        return true;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return true;
    };
    match start_time(pid) {
        None => false,
        Some(s) => start == 0 || s == start,
    }
}

/// Runs `f` on the runtime directory; when another oscost removed the (then empty) directory
/// in between (`NotFound`), opens it again and retries.
fn with_dir<T>(
    dir: &RuntimeDir,
    mut f: impl FnMut(&RuntimeDir) -> std::io::Result<T>,
) -> Result<(RuntimeDir, T)> {
    let mut d = dir
        .duplicate()
        .map_err(|e| Error::io(dir.path().display(), e))?;
    for _ in 0..3 {
        match f(&d) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                d = RuntimeDir::open_at(d.path(), d.uid(), Missing::Create)?
                    .ok_or_else(|| Error::env("the runtime directory could not be created"))?;
            }
            r => {
                return r
                    .map(|t| (d, t))
                    .map_err(|e| Error::io(dir.path().display(), e))
            }
        }
    }
    let r = f(&d).map_err(|e| Error::io(dir.path().display(), e))?;
    Ok((d, r))
}

/// A new scratch directory `scratch-<owner>-<i>` in the runtime directory (mkdir is
/// exclusive: an existing name, also a symlink, fails and the next name is tried).
pub fn new_scratch_dir() -> Result<PathBuf> {
    new_scratch_dir_in(&runtime_dir()?)
}

fn new_scratch_dir_in(dir: &RuntimeDir) -> Result<PathBuf> {
    let tag = owner_tag();
    let (d, name) = with_dir(dir, |d| {
        for i in 0..1000u32 {
            let name = format!("scratch-{tag}-{i}");
            if d.create_dir(&name)? {
                return Ok(Some(name));
            }
        }
        Ok(None)
    })?;
    name.map(|n| d.join(&n)).ok_or_else(|| {
        Error::env(format!(
            "{}: cannot create a scratch directory (1000 names taken)",
            dir.path().display()
        ))
    })
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// A journal entry `<kind>-<owner>-<n>`, removed when the guard drops (unless kept).
pub struct Entry {
    dir: RuntimeDir,
    name: String,
    keep: bool,
}

impl Entry {
    /// Writes a new entry of `kind` holding `text`.
    fn write(dir: &RuntimeDir, kind: &str, text: &str) -> Result<Entry> {
        let name = format!("{kind}-{}-{}", owner_tag(), unique());
        let tmp = format!("tmp-{}-{name}", owner_tag());
        let (dir, ()) = with_dir(dir, |d| d.write_entry(&name, &tmp, text))?;
        Ok(Entry {
            dir,
            name,
            keep: false,
        })
    }

    /// Replaces the entry's text (atomically).
    fn rewrite(&self, text: &str) -> std::io::Result<()> {
        let tmp = format!("tmp-{}-{}-{}", owner_tag(), unique(), self.name);
        self.dir.write_entry(&self.name, &tmp, text)
    }

    /// Leaves the entry for the next start (what it records could not be undone now).
    fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if !self.keep {
            let _ = self.dir.remove(&self.name);
            self.dir.remove_if_empty();
        }
    }
}

/// What [`recover`] did: one line per knob restored, mount undone or entry ignored (and why),
/// and how many scratch items it removed.
#[derive(Debug, Default)]
pub struct Recovered {
    pub lines: Vec<String>,
    pub removed: usize,
}

/// Cleans up after oscost processes that died without running their guards: restores the
/// knobs they changed, unmounts what they mounted and removes their scratch. A start must not
/// fail because of an old leftover: problems become lines (a runtime directory that is
/// refused is one line, and nothing in it is touched).
pub fn recover() -> Recovered {
    let mut all = Recovered::default();
    for p in locations() {
        match RuntimeDir::open_at(&p, dir::euid(), Missing::Absent) {
            Ok(None) => {}
            Ok(Some(d)) => {
                let out = recover_in(&d, Path::new(knob::PROC_SYS));
                d.remove_if_empty();
                all.lines.extend(out.lines);
                all.removed += out.removed;
            }
            Err(e) => all.lines.push(format!("warning: {e}")),
        }
    }
    all
}

/// Recovery in `dir`, with knobs resolved under the sysctl tree `sysctl`.
fn recover_in(dir: &RuntimeDir, sysctl: &Path) -> Recovered {
    let mut out = Recovered::default();
    for name in dir.names() {
        let Some((kind, rest)) = name.split_once('-') else {
            continue;
        };
        // rest = "<pid>-<start>-<n>" (tmp: "<pid>-<start>-<entry name>").
        let mut parts = rest.splitn(3, '-');
        let (Some(pid), Some(start)) = (parts.next(), parts.next()) else {
            continue;
        };
        if owner_alive(&format!("{pid}-{start}")) {
            continue;
        }
        let ignored = |why: String| {
            format!(
                "ignored {} in the runtime directory: {why}",
                dir.join(&name).display()
            )
        };
        match kind {
            "scratch" if dir.is_own_dir(&name) && dir.still_here() => {
                out.removed += usize::from(std::fs::remove_dir_all(dir.join(&name)).is_ok());
            }
            "tmp" => {
                let _ = dir.remove(&name);
            }
            // Once written with a directory's path in it; no entry names a path now, so one
            // found is acted on never, removed when it is this user's own.
            "userdir" => match dir.read_entry(&name) {
                Ok(_) => {
                    out.lines.push(ignored(
                        "an entry that names a path is never acted on".into(),
                    ));
                    let _ = dir.remove(&name);
                }
                Err(why) => out.lines.push(ignored(why)),
            },
            "knob" | "mount" => {
                let text = match dir.read_entry(&name) {
                    Ok(t) => t,
                    // Not this user's regular file: not acted on, not removed.
                    Err(why) => {
                        out.lines.push(ignored(why));
                        continue;
                    }
                };
                let done = match kind {
                    "knob" => match knob::parse_entry(&text) {
                        Ok((k, old)) => {
                            let line = format!(
                                "{} to {old} (changed by oscost process {pid}, which died)",
                                k.word()
                            );
                            match knob::write_knob(&k.path_under(sysctl), &old) {
                                Ok(()) => {
                                    out.lines.push(format!("restored {line}"));
                                    true
                                }
                                Err(e) => {
                                    out.lines.push(format!("could not restore {line}: {e}"));
                                    false
                                }
                            }
                        }
                        Err(why) => {
                            out.lines.push(ignored(why));
                            true
                        }
                    },
                    _ => match mount::Record::parse(&text) {
                        Ok(r) => {
                            let (line, done) = mount::recover(&r, pid);
                            out.lines.extend(line);
                            done
                        }
                        Err(why) => {
                            out.lines.push(ignored(why));
                            true
                        }
                    },
                };
                if done {
                    let _ = dir.remove(&name);
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The owner tag of a process that has exited (a reaped child).
    fn dead_tag() -> String {
        let mut c = std::process::Command::new("sleep")
            .arg("0.2")
            .spawn()
            .unwrap();
        let pid = c.id();
        let tag = format!("{pid}-{}", start_time(pid).unwrap());
        c.wait().unwrap();
        tag
    }

    #[test]
    fn a_zombie_is_dead() {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        // Exited but not reaped yet.
        while std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(!owner_alive(&format!("{pid}-1")));
        c.wait().unwrap();
    }

    #[test]
    fn own_process_is_alive_and_a_reaped_child_is_not() {
        assert!(owner_alive(&owner_tag()));
        assert!(!owner_alive(&dead_tag()));
        // Same PID, other start time: a reused PID is not the owner.
        let pid = std::process::id();
        assert!(!owner_alive(&format!(
            "{pid}-{}",
            start_time(pid).unwrap() + 1
        )));
        assert!(owner_alive("not-a-tag"));
    }

    /// A runtime directory of this user in a temporary directory, and a fake sysctl tree
    /// holding the listed knob at 100.
    fn setup() -> (tempfile::TempDir, RuntimeDir, PathBuf, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let d = RuntimeDir::open_at(&t.path().join("rt"), dir::euid(), Missing::Create)
            .unwrap()
            .unwrap();
        let sysctl = t.path().join("sys");
        let knob = Knob::SchedRrTimesliceMs.path_under(&sysctl);
        std::fs::create_dir_all(knob.parent().unwrap()).unwrap();
        std::fs::write(&knob, "100\n").unwrap();
        (t, d, sysctl, knob)
    }

    fn names(d: &RuntimeDir) -> Vec<String> {
        let mut n = d.names();
        n.sort();
        n
    }

    #[test]
    fn dead_owners_leftovers_are_cleaned_and_knobs_restored() {
        let (_t, rt, sysctl, knob) = setup();

        // A live guard journals, changes and restores; its entry goes with it.
        {
            let g = KnobGuard::set_in(&rt, &sysctl, Knob::SchedRrTimesliceMs, "7").unwrap();
            assert_eq!(g.old(), "100");
            assert_eq!(std::fs::read_to_string(&knob).unwrap(), "7\n");
            assert!(
                names(&rt).iter().any(|n| n.starts_with("knob-")),
                "journaled before the change"
            );
            // Our own entries are left alone by recovery.
            assert!(recover_in(&rt, &sysctl).lines.is_empty());
            assert_eq!(std::fs::read_to_string(&knob).unwrap(), "7\n");
        }
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "100\n");
        assert!(!rt.path().exists(), "the emptied directory is removed");
        let rt = RuntimeDir::open_at(rt.path(), dir::euid(), Missing::Create)
            .unwrap()
            .unwrap();

        // What a process killed with SIGKILL leaves: a changed knob, a scratch directory with
        // a file, a scratch file in a user --dir, a half-written entry.
        let dead = dead_tag();
        let dead_pid = dead.split('-').next().unwrap().to_string();
        std::fs::write(&knob, "7\n").unwrap();
        std::fs::write(
            rt.join(&format!("knob-{dead}-0")),
            "kernel.sched_rr_timeslice_ms\n100\n",
        )
        .unwrap();
        let scratch = rt.join(&format!("scratch-{dead}-0"));
        std::fs::create_dir(&scratch).unwrap();
        std::fs::write(scratch.join(".oscost-x-lab-0"), vec![1u8; 4096]).unwrap();
        // An entry naming a user's directory (as oscost once wrote): the files it names stay.
        let user = tempfile::tempdir().unwrap();
        let named = user.path().join(format!(".oscost-{dead_pid}-fault-0"));
        std::fs::write(&named, b"x").unwrap();
        std::fs::write(
            rt.join(&format!("userdir-{dead}-0")),
            format!("{}\n", user.path().display()),
        )
        .unwrap();
        std::fs::write(rt.join(&format!("tmp-{dead}-knob-x")), b"half").unwrap();

        let mut r = recover_in(&rt, &sysctl);
        r.lines.sort();
        assert_eq!(r.lines.len(), 2, "{:?}", r.lines);
        assert_eq!(
            r.lines[1],
            format!(
                "restored kernel.sched_rr_timeslice_ms to 100 (changed by oscost process {dead_pid}, which died)"
            )
        );
        assert!(
            r.lines[0].contains("names a path is never acted on"),
            "{:?}",
            r.lines
        );
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "100\n");
        assert!(!scratch.exists() && named.exists());
        assert!(names(&rt).is_empty(), "{:?}", names(&rt));

        // New scratch directories live there, named for their owner.
        let d = new_scratch_dir_in(&rt).unwrap();
        assert!(d.starts_with(rt.path()));
        assert!(d
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(&format!("scratch-{}-", owner_tag())));
    }

    #[test]
    fn a_planted_entry_never_writes_where_it_says() {
        let (t, rt, sysctl, knob) = setup();
        // The campaign's entry: any path and a payload, under a PID that is not running.
        let target = t.path().join("victim");
        std::fs::write(&target, "keep\n").unwrap();
        let dead = dead_tag();
        let planted = [
            format!("{}\nPWNED\n", target.display()),
            format!("{}\n7\n", knob.display()),
            "kernel.sched_rr_timeslice_ms\n1; rm -rf /\n".to_string(),
            "kernel.core_pattern\n|/tmp/x\n".to_string(),
        ];
        for (i, text) in planted.iter().enumerate() {
            std::fs::write(rt.join(&format!("knob-{dead}-{i}")), text).unwrap();
        }
        std::fs::write(rt.join(&format!("mount-{dead}-9")), "/etc\nparent 1\n").unwrap();
        let r = recover_in(&rt, &sysctl);
        assert_eq!(r.lines.len(), planted.len() + 1, "{:?}", r.lines);
        assert!(
            r.lines.iter().all(|l| l.starts_with("ignored ")),
            "{:?}",
            r.lines
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "100\n");
        // The bad entries are this user's own: they are removed, not read again.
        assert!(names(&rt).is_empty(), "{:?}", names(&rt));
    }

    #[test]
    fn an_entry_of_another_user_is_not_acted_on_or_removed() {
        let (t, rt, sysctl, knob) = setup();
        let dead = dead_tag();
        let name = format!("knob-{dead}-0");
        std::fs::write(rt.join(&name), "kernel.sched_rr_timeslice_ms\n5\n").unwrap();
        let user = t.path().join("user");
        std::fs::create_dir(&user).unwrap();
        let victim = user.join(format!(".oscost-{}-x", dead.split('-').next().unwrap()));
        std::fs::write(&victim, "keep").unwrap();
        std::fs::write(
            rt.join(&format!("userdir-{dead}-1")),
            format!("{}\n", user.display()),
        )
        .unwrap();
        // Seen as the directory of another user, every entry in it is foreign.
        let foreign = RuntimeDir::open_at(rt.path(), dir::euid(), Missing::Absent)
            .unwrap()
            .unwrap();
        let foreign = dir::RuntimeDir::as_user(foreign, dir::euid() + 1);
        let r = recover_in(&foreign, &sysctl);
        assert_eq!(r.lines.len(), 2, "{:?}", r.lines);
        assert!(r.lines.iter().all(|l| l.contains("belongs to user")));
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "100\n");
        assert!(victim.exists());
        assert_eq!(names(&rt).len(), 2, "foreign entries are not removed");
    }
}
