//! tracefs mounted by an oscost that is killed (-9) right at the mount is unmounted by the
//! next start, unless something was mounted over it since. Runs as root only, inside a
//! private mount namespace (`unshare --mount`) so the machine's own mounts are never touched:
//! the test re-runs itself there. This file holds a single test so the test binary is
//! single-threaded when it forks.

mod common;

use oscost::journal::{Mount, MountGuard};
use std::process::Command;

const INSIDE: &str = "OSCOST_TEST_MOUNT_NAMESPACE";
const TARGET: &str = "/sys/kernel/tracing";

/// Is a tracefs mounted at the target in this namespace (and how many)?
fn tracefs_mounts() -> usize {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.split(' ').nth(4) == Some(TARGET) && l.contains(" - tracefs "))
        .count()
}

fn umount_all_at_target() {
    while rustix::mount::unmount(TARGET, rustix::mount::UnmountFlags::DETACH).is_ok() {}
}

#[test]
fn tracefs_left_by_kill_9_at_the_mount_is_unmounted_by_the_next_start() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !std::path::Path::new(TARGET).is_dir() {
        eprintln!("skipped: mounting tracefs needs root and {TARGET}");
        return;
    }
    if std::env::var_os(INSIDE).is_none() {
        let me = std::env::current_exe().unwrap();
        let o = Command::new("unshare")
            .args(["--mount", "--propagation", "private"])
            .arg(me)
            .args([
                "--exact",
                "tracefs_left_by_kill_9_at_the_mount_is_unmounted_by_the_next_start",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(INSIDE, "1")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{text}");
        assert!(text.contains("1 passed"), "{text}");
        return;
    }

    // In the private namespace: start from a target with nothing mounted on it.
    umount_all_at_target();
    assert_eq!(tracefs_mounts(), 0);
    let home = tempfile::tempdir().unwrap();
    let rt = home.path().join("rt");
    // Set before the fork, while this process has one thread.
    std::env::set_var("OSCOST_RUNTIME_DIR", &rt);
    let kill_at_mount = || {
        common::kill_at(|stop| {
            let _ = MountGuard::mount_with_hook(Mount::Tracefs, stop);
        })
    };

    // 1. Killed right after mounting: the next start (the real binary) unmounts it.
    let pid = kill_at_mount();
    assert_eq!(
        tracefs_mounts(),
        1,
        "the killed process left tracefs mounted"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_oscost"))
        .env("HOME", home.path())
        .env("OSCOST_RUNTIME_DIR", &rt)
        .args(["history", "list", "--db"])
        .arg(home.path().join("h.sqlite"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "unmounted tracefs at {TARGET} (mounted by oscost process {pid}, which died)"
        )),
        "{err}"
    );
    assert_eq!(tracefs_mounts(), 0);
    assert!(!rt.exists(), "the journal is left empty and removed");

    // 2. Something mounted over it after the kill: left alone (unmounting by path would
    //    remove the other mount), and undone once the cover is gone.
    kill_at_mount();
    rustix::mount::mount(
        "none",
        TARGET,
        "tmpfs",
        rustix::mount::MountFlags::empty(),
        None,
    )
    .unwrap();
    let r = oscost::journal::recover();
    assert!(
        r.lines.len() == 1
            && r.lines[0].contains("tmpfs at /sys/kernel/tracing was mounted over it"),
        "{:?}",
        r.lines
    );
    assert_eq!(tracefs_mounts(), 1, "the covered tracefs is still there");
    rustix::mount::unmount(TARGET, rustix::mount::UnmountFlags::empty()).unwrap();
    let r = oscost::journal::recover();
    assert!(r.lines[0].starts_with("unmounted tracefs"), "{:?}", r.lines);
    assert_eq!(tracefs_mounts(), 0);

    // 3. A live guard unmounts its own mount when dropped, and leaves no entry.
    let g = MountGuard::mount(Mount::Tracefs).unwrap().unwrap();
    assert_eq!(tracefs_mounts(), 1);
    drop(g);
    assert_eq!(tracefs_mounts(), 0);
    assert!(!rt.exists());
}
