//! The one check of where a command writes, run by every command that writes a file before
//! it reads, measures or writes anything: each output can be written as what it is (a file
//! replaced atomically, or a stream such as a FIFO, a terminal, `/dev/null` or `-`), and no
//! output is one of the command's inputs, the history database or another output. Paths are
//! compared after resolving symlinks: the same device and inode when the file exists, else
//! the same canonical directory and name.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::report::export::{resolve_target, same_file, Target};

/// The paths of the output options that were given (`--json`, `--csv`, ...).
pub fn given<'a>(options: &[&'a Option<PathBuf>]) -> Vec<&'a Path> {
    options.iter().filter_map(|o| o.as_deref()).collect()
}

/// Refuses (exit 2, one line) an output that cannot be written, that is one of `inputs`
/// (inputs that name no file, such as history ids, are passed over), that is the history
/// database `db`, or that another output names too.
pub fn check(outputs: &[&Path], inputs: &[&Path], db: Option<&Path>) -> Result<()> {
    let mut files: Vec<&Path> = Vec::new();
    for &p in outputs {
        if let Some(db) = db.filter(|db| same_file(p, db)) {
            return Err(Error::usage(format!(
                "{}: is the history database {}; writing it would destroy the history \
                 (choose another file)",
                p.display(),
                db.display()
            )));
        }
        if let Some(input) = inputs.iter().find(|i| i.exists() && same_file(p, i)) {
            return Err(Error::usage(format!(
                "{}: is this command's input {}; writing it would replace it (choose another file)",
                p.display(),
                input.display()
            )));
        }
        if let Target::File(_) = resolve_target(p)? {
            if files.iter().any(|q| same_file(p, q)) {
                return Err(Error::usage(format!(
                    "{}: named for two outputs; give each output its own file",
                    p.display()
                )));
            }
            files.push(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_may_be_no_input_no_database_and_no_other_output() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let input = d.join("a.json");
        std::fs::write(&input, "{}").unwrap();
        let db = d.join("h.sqlite");
        std::fs::write(&db, "").unwrap();
        // The same file under other names: a symlink, a hard link, a path through "..".
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let hard = d.join("hard.json");
        std::fs::hard_link(&input, &hard).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        let dotted = d.join("sub/../a.json");
        for p in [&input, &link, &hard, &dotted] {
            let e = check(&[p], &[&input], Some(&db)).unwrap_err();
            assert!(e.to_string().contains("is this command's input"), "{e}");
            assert_eq!(e.exit_code(), 2);
        }
        let e = check(&[&d.join("sub/../h.sqlite")], &[], Some(&db)).unwrap_err();
        assert!(e.to_string().contains("is the history database"), "{e}");
        // A history that does not exist yet, named the same way.
        let new_db = d.join("new.sqlite");
        assert!(check(&[&new_db], &[], Some(&new_db)).is_err());
        // Two outputs on one new file, named two ways.
        let new = d.join("out.csv");
        let e = check(&[&new, &d.join("sub/../out.csv")], &[], None).unwrap_err();
        assert!(e.to_string().contains("named for two outputs"), "{e}");
        // Streams may be named twice; an input that names no file (a history id) is no file.
        check(&[Path::new("/dev/null"), Path::new("/dev/null")], &[], None).unwrap();
        check(&[&d.join("3")], &[Path::new("3")], None).unwrap();
        check(&[&new, &d.join("out.json")], &[&input], Some(&db)).unwrap();
        assert!(!new.exists(), "checking writes nothing");
    }
}
