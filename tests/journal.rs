//! The knob journal as an attacker sees it: an entry planted in the runtime directory, an
//! entry of another user, a runtime directory everyone can write, a runtime directory that is
//! a symlink. Every start of oscost (here `history list`) must leave the target untouched,
//! and a directory it refuses must stay as it was (not used, not removed).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

/// An owner tag whose process is not running (PID 999999 does not exist on a test machine;
/// the campaign used it).
const DEAD: &str = "999999-1";

fn start(dir: &Path, runtime: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_oscost"))
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .env_remove("OSCOST_DB")
        .env("OSCOST_RUNTIME_DIR", runtime)
        .args(["history", "list", "--db"])
        .arg(dir.join("h.sqlite"))
        .output()
        .unwrap()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A private runtime directory holding the campaign's entry against `victim`.
fn planted(dir: &Path, victim: &Path, mode: u32) -> std::path::PathBuf {
    let rt = dir.join("rt");
    std::fs::create_dir(&rt).unwrap();
    std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(mode)).unwrap();
    std::fs::write(
        rt.join(format!("knob-{DEAD}-0")),
        format!("{}\nPWNED\n", victim.display()),
    )
    .unwrap();
    rt
}

fn victim(dir: &Path) -> std::path::PathBuf {
    let v = dir.join("victim");
    std::fs::write(&v, "precious\n").unwrap();
    v
}

#[test]
fn a_planted_entry_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let v = victim(t.path());
    let rt = planted(t.path(), &v, 0o700);
    let o = start(t.path(), &rt);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(std::fs::read_to_string(&v).unwrap(), "precious\n");
    assert!(
        err.contains("ignored") && err.contains("not a knob oscost changes"),
        "{err}"
    );
    assert!(!err.contains("restored"), "{err}");
}

#[test]
fn an_entry_of_another_user_is_neither_used_nor_removed() {
    if !is_root() {
        eprintln!("skipped: giving a file to another user needs root");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let v = victim(t.path());
    let rt = t.path().join("rt");
    std::fs::create_dir(&rt).unwrap();
    std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
    // A well-formed entry for the listed knob, but not ours: nothing may be restored from it.
    let entry = rt.join(format!("knob-{DEAD}-0"));
    std::fs::write(&entry, "kernel.sched_rr_timeslice_ms\n1\n").unwrap();
    let user = rt.join(format!("userdir-{DEAD}-1"));
    std::fs::write(&user, format!("{}\n", t.path().display())).unwrap();
    let mine = t.path().join(".oscost-999999-x");
    std::fs::write(&mine, "precious\n").unwrap();
    for e in [&entry, &user] {
        std::os::unix::fs::chown(e, Some(65534), Some(65534)).unwrap();
    }
    let before = std::fs::read_to_string("/proc/sys/kernel/sched_rr_timeslice_ms").unwrap();
    let o = start(t.path(), &rt);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("belongs to user 65534"), "{err}");
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/sched_rr_timeslice_ms").unwrap(),
        before
    );
    assert!(entry.exists() && user.exists() && mine.exists());
    assert_eq!(std::fs::read_to_string(&v).unwrap(), "precious\n");
}

#[test]
fn a_runtime_directory_others_can_write_is_refused_and_kept() {
    let t = tempfile::tempdir().unwrap();
    let v = victim(t.path());
    let rt = planted(t.path(), &v, 0o1777);
    let o = start(t.path(), &rt);
    let err = String::from_utf8_lossy(&o.stderr);
    // Reading commands go on (they need no runtime directory) and say why it is not used.
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("writable by everyone") && err.contains("not using it"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&v).unwrap(), "precious\n");
    assert!(rt.join(format!("knob-{DEAD}-0")).exists(), "entry removed");
    assert_eq!(
        std::fs::metadata(&rt).unwrap().permissions().mode() & 0o7777,
        0o1777
    );
    // A command that needs the directory for its scratch files refuses with the same reason.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_oscost"))
        .env("HOME", t.path())
        .env("OSCOST_RUNTIME_DIR", &rt)
        .args(["fault", "--quick", "--size", "4m", "--kind", "file-cached"])
        .args(["--no-save", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("writable by everyone"), "{err}");
    assert!(rt.is_dir());
}

#[test]
fn a_symlinked_runtime_directory_is_refused_and_kept() {
    let t = tempfile::tempdir().unwrap();
    let v = victim(t.path());
    let real = planted(t.path(), &v, 0o700);
    let link = t.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = start(t.path(), &link);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("is a symlink"), "{err}");
    assert_eq!(std::fs::read_to_string(&v).unwrap(), "precious\n");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(real.join(format!("knob-{DEAD}-0")).exists());
}
