//! The file systems oscost mounts (tracefs, when it is not mounted and oscost runs as root),
//! journaled before the mount so that the next start unmounts what a killed process left.
//!
//! The journal names the mount from a fixed list, never a path, and records which mount it
//! was: the id of the mount the target sat on before, and once mounted, the new mount's own
//! id (from /proc/self/mountinfo). Recovery unmounts only a mount that is still that one, of
//! the listed type, at the listed place, and that nothing mounted later covers (a mount at
//! the same place or above it, seen in mountinfo, and the device the path resolves to now).

use crate::error::Result;
use crate::units::name::Word;

/// A file system oscost mounts; its words are its name in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
pub enum Mount {
    /// tracefs at /sys/kernel/tracing (kernel-traced RPC breakdowns).
    #[strum(serialize = "tracefs")]
    Tracefs,
}

impl Mount {
    pub fn target(self) -> &'static str {
        match self {
            Mount::Tracefs => "/sys/kernel/tracing",
        }
    }
    pub fn fstype(self) -> &'static str {
        match self {
            Mount::Tracefs => "tracefs",
        }
    }
}

/// One line of /proc/self/mountinfo, the fields recovery needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountLine {
    pub id: u64,
    pub parent: u64,
    /// The device (major, minor) of the mounted file system.
    pub dev: (u32, u32),
    pub point: String,
    pub fstype: String,
}

/// Parses mountinfo text (proc(5)); lines that do not parse are left out.
pub fn parse_mountinfo(text: &str) -> Vec<MountLine> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split(' ');
            let id = f.next()?.parse().ok()?;
            let parent = f.next()?.parse().ok()?;
            let (maj, min) = f.next()?.split_once(':')?;
            let dev = (maj.parse().ok()?, min.parse().ok()?);
            let _root = f.next()?;
            let point = unescape(f.next()?);
            // Optional fields end at "-"; the file system type follows.
            let fstype = f.skip_while(|x| *x != "-").nth(1)?.to_string();
            Some(MountLine {
                id,
                parent,
                dev,
                point,
                fstype,
            })
        })
        .collect()
}

/// mountinfo writes space, tab, newline and backslash in paths as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() && b[i + 1..i + 4].iter().all(u8::is_ascii_digit) {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Is mount point `point` the target or one of its ancestors (a mount there hides it)?
fn covers(point: &str, target: &str) -> bool {
    point == target
        || point == "/"
        || target
            .strip_prefix(point)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The id of the mount a new mount at `target` would sit on: the deepest mount at or above
/// the target, the latest of those at one place.
pub fn beneath(lines: &[MountLine], target: &str) -> Option<u64> {
    lines
        .iter()
        .filter(|l| covers(&l.point, target))
        .max_by_key(|l| l.point.len())
        .and_then(|deepest| {
            lines
                .iter()
                .rfind(|l| l.point == deepest.point)
                .map(|l| l.id)
        })
}

/// What the journal knows of one mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub mount: Mount,
    /// The mount the target sat on before.
    pub parent: u64,
    /// The new mount's id, once known (a process killed right after mounting has none).
    pub own: Option<u64>,
}

impl Record {
    pub fn text(&self) -> String {
        let mut t = format!("{}\nparent {}\n", self.mount.word(), self.parent);
        if let Some(id) = self.own {
            t.push_str(&format!("mount {id}\n"));
        }
        t
    }

    pub fn parse(text: &str) -> std::result::Result<Record, String> {
        let mut lines = text.lines();
        let name = lines.next().unwrap_or_default();
        let mount = name.parse::<Mount>().map_err(|_| {
            format!(
                "names '{}', which is not a file system oscost mounts",
                name.escape_debug()
            )
        })?;
        let number = |line: Option<&str>, key: &str| -> Option<u64> {
            line?.strip_prefix(key)?.strip_prefix(' ')?.parse().ok()
        };
        let parent = number(lines.next(), "parent").ok_or("no parent mount id")?;
        let own = match lines.next() {
            None => None,
            line => Some(number(line, "mount").ok_or("a bad mount id")?),
        };
        Ok(Record { mount, parent, own })
    }
}

/// What to do with a journaled mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// It is there, uncovered: unmount it (when the path's device is still `dev`).
    Unmount { dev: (u32, u32) },
    /// It is no longer mounted: nothing to do.
    Gone,
    /// Something mounted later covers it: unmounting by path would remove that instead.
    Covered { by: String },
}

/// Decides from mountinfo lines what to do with the mount `r` records.
pub fn decide(lines: &[MountLine], r: &Record) -> Decision {
    let target = r.mount.target();
    let ours = lines.iter().position(|l| {
        l.point == target
            && l.fstype == r.mount.fstype()
            && l.parent == r.parent
            && r.own.is_none_or(|id| id == l.id)
    });
    let Some(i) = ours else {
        return Decision::Gone;
    };
    match lines[i + 1..].iter().find(|l| covers(&l.point, target)) {
        Some(l) => Decision::Covered {
            by: format!("{} at {}", l.fstype, l.point),
        },
        None => Decision::Unmount { dev: lines[i].dev },
    }
}

fn read_mountinfo() -> Vec<MountLine> {
    parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default())
}

/// The device the path resolves to now.
fn dev_of(path: &str) -> Option<(u32, u32)> {
    let st = rustix::fs::lstat(path).ok()?;
    Some((rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev)))
}

/// Unmounts the recorded mount when [`decide`] says so and the path still resolves to it.
pub fn undo(r: &Record) -> std::result::Result<Decision, std::io::Error> {
    let d = decide(&read_mountinfo(), r);
    if let Decision::Unmount { dev } = &d {
        if dev_of(r.mount.target()) != Some(*dev) {
            return Ok(Decision::Covered {
                by: "a mount that hides it".into(),
            });
        }
        // MNT_DETACH: a file still open in it elsewhere cannot keep it busy.
        rustix::mount::unmount(r.mount.target(), rustix::mount::UnmountFlags::DETACH)?;
    }
    Ok(d)
}

/// A file system mounted by this process, journaled first; unmounted on drop, or by the next
/// start if this process is killed.
pub struct MountGuard {
    record: Record,
    entry: Option<super::Entry>,
}

impl MountGuard {
    /// Journals, then mounts `m`. The outer error is the journal's (no usable runtime
    /// directory); the inner one the mount's, after which nothing is left journaled.
    pub fn mount(m: Mount) -> Result<std::io::Result<MountGuard>> {
        Self::mount_with_hook(m, || {})
    }

    /// [`MountGuard::mount`], calling `after_mount` right after the mount, before its id is
    /// journaled. Exists so a test can kill the process at that moment; production callers
    /// use `mount`.
    pub fn mount_with_hook(
        m: Mount,
        after_mount: impl FnOnce(),
    ) -> Result<std::io::Result<MountGuard>> {
        let dir = super::journal_dir()?;
        let parent = beneath(&read_mountinfo(), m.target()).unwrap_or(0);
        let mut record = Record {
            mount: m,
            parent,
            own: None,
        };
        let entry = super::Entry::write(&dir, "mount", &record.text())?;
        if let Err(e) = rustix::mount::mount(
            m.fstype(),
            m.target(),
            m.fstype(),
            rustix::mount::MountFlags::empty(),
            None,
        ) {
            drop(entry);
            return Ok(Err(e.into()));
        }
        after_mount();
        record.own = read_mountinfo()
            .iter()
            .rev()
            .find(|l| l.point == m.target() && l.fstype == m.fstype() && l.parent == parent)
            .map(|l| l.id);
        // Best effort: without the id, recovery still finds the mount by type, place and
        // parent.
        let _ = entry.rewrite(&record.text());
        Ok(Ok(MountGuard {
            record,
            entry: Some(entry),
        }))
    }
}

impl Drop for MountGuard {
    fn drop(&mut self) {
        // Covered or failed: the entry stays, so the next start tries again.
        if !matches!(
            undo(&self.record),
            Ok(Decision::Unmount { .. } | Decision::Gone)
        ) {
            if let Some(e) = self.entry.take() {
                e.keep();
            }
        }
    }
}

/// One line about a dead owner's mount, after trying to undo it; None when there was
/// nothing to say (it was already gone). The bool says whether the entry is done with.
pub fn recover(r: &Record, pid: &str) -> (Option<String>, bool) {
    let what = format!(
        "{} at {} (mounted by oscost process {pid}, which died)",
        r.mount.fstype(),
        r.mount.target()
    );
    match undo(r) {
        Ok(Decision::Unmount { .. }) => (Some(format!("unmounted {what}")), true),
        Ok(Decision::Gone) => (None, true),
        Ok(Decision::Covered { by }) => (
            Some(format!(
                "left {what} mounted: {by} was mounted over it later"
            )),
            false,
        ),
        Err(e) => (Some(format!("could not unmount {what}: {e}")), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded on this project's VM, with tracefs mounted by oscost at /sys/kernel/tracing.
    const MOUNTINFO: &str = "\
22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw
23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw
24 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:3 - proc proc rw
30 23 0:7 / /sys/kernel/debug rw,nosuid,nodev,noexec,relatime shared:9 - debugfs debugfs rw
41 22 0:35 / /mnt/with\\040space rw,relatime shared:20 - tmpfs tmpfs rw
52 23 0:12 / /sys/kernel/tracing rw,relatime shared:30 - tracefs tracefs rw
";

    fn record(own: Option<u64>) -> Record {
        Record {
            mount: Mount::Tracefs,
            parent: 23,
            own,
        }
    }

    #[test]
    fn mountinfo_lines_are_read_with_their_escapes() {
        let l = parse_mountinfo(MOUNTINFO);
        assert_eq!(l.len(), 6);
        assert_eq!(l[4].point, "/mnt/with space");
        assert_eq!(
            l[5],
            MountLine {
                id: 52,
                parent: 23,
                dev: (0, 12),
                point: "/sys/kernel/tracing".into(),
                fstype: "tracefs".into()
            }
        );
        // Before tracefs was mounted, a mount there would sit on /sys.
        assert_eq!(beneath(&l[..5], "/sys/kernel/tracing"), Some(23));
        assert_eq!(beneath(&l, "/sys/kernel/debug/x"), Some(30));
    }

    #[test]
    fn a_mount_s_journal_word_reads_back_and_no_other_does() {
        assert_eq!(Mount::Tracefs.word(), "tracefs");
        assert_eq!("tracefs".parse(), Ok(Mount::Tracefs));
        for wrong in ["Tracefs", "tracefs ", "debugfs", ""] {
            assert!(wrong.parse::<Mount>().is_err(), "{wrong:?}");
        }
    }

    #[test]
    fn records_round_trip_and_refuse_what_oscost_does_not_mount() {
        for r in [record(None), record(Some(52))] {
            assert_eq!(Record::parse(&r.text()).unwrap(), r);
        }
        assert!(Record::parse("proc\nparent 1\n").is_err());
        assert!(Record::parse("/etc\nparent 1\n").is_err());
        assert!(Record::parse("tracefs\nparent x\n").is_err());
        assert!(Record::parse("tracefs\nparent 1\nmount /etc\n").is_err());
    }

    #[test]
    fn only_an_uncovered_mount_that_is_still_ours_is_unmounted() {
        let lines = parse_mountinfo(MOUNTINFO);
        let ours = Decision::Unmount { dev: (0, 12) };
        assert_eq!(decide(&lines, &record(Some(52))), ours);
        // Killed before its id was recorded: found by type, place and parent.
        assert_eq!(decide(&lines, &record(None)), ours);
        // Another mount (id 53) in its place, or already unmounted.
        assert_eq!(decide(&lines, &record(Some(53))), Decision::Gone);
        assert_eq!(decide(&lines[..5], &record(None)), Decision::Gone);
        // A tracefs someone mounted on another parent is not ours.
        let other = Record {
            parent: 99,
            ..record(None)
        };
        assert_eq!(decide(&lines, &other), Decision::Gone);
        // Something mounted over it later, at the same place or above.
        for extra in [
            "60 52 0:40 / /sys/kernel/tracing rw - tmpfs tmpfs rw",
            "60 23 0:40 / /sys/kernel rw - tmpfs tmpfs rw",
        ] {
            let more = parse_mountinfo(&format!("{MOUNTINFO}{extra}\n"));
            assert!(
                matches!(decide(&more, &record(Some(52))), Decision::Covered { .. }),
                "{extra}"
            );
        }
        // A mount elsewhere changes nothing.
        let more = parse_mountinfo(&format!(
            "{MOUNTINFO}60 22 0:40 / /srv rw - tmpfs tmpfs rw\n"
        ));
        assert_eq!(decide(&more, &record(Some(52))), ours);
    }
}
