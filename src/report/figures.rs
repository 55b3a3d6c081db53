//! Where figures go: their layout in the HTML report, and the `--svg-dir` a command writes
//! them into. Which figures a family draws is its own (report::family); the HTML report and
//! the commands' `--svg` options ask the same family, so a figure looks the same wherever it
//! is read.

/// How a figure is laid out in the HTML report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Full width.
    Wide,
    /// One of a grid of small multiples.
    Small,
}

/// Checked before measuring: `--svg-dir` is a directory, or can become one (it does not
/// exist and its nearest existing ancestor is a directory). Nothing is created yet, so a run
/// refused or interrupted later leaves no empty directory behind.
pub fn check_svg_dir(d: &std::path::Path) -> crate::error::Result<()> {
    let refuse = |why: &str| {
        Err(crate::error::Error::usage(format!(
            "--svg-dir {}: {why}",
            d.display()
        )))
    };
    if d.is_dir() {
        return Ok(());
    }
    if d.exists() {
        return refuse("exists and is not a directory");
    }
    let mut up = d.parent();
    while let Some(p) = up {
        if p.as_os_str().is_empty() || p.is_dir() {
            return Ok(());
        }
        if p.exists() {
            return refuse(&format!("{} is not a directory", p.display()));
        }
        up = p.parent();
    }
    Ok(())
}

/// Writes `(stem, svg)` files into `d`, creating it (and its parents) when missing.
pub fn write_svgs(
    d: &std::path::Path,
    files: impl IntoIterator<Item = (String, String)>,
) -> crate::error::Result<()> {
    std::fs::create_dir_all(d).map_err(|e| crate::error::Error::io(d.display(), e))?;
    for (stem, svg) in files {
        crate::report::export::write_atomic(&d.join(format!("{stem}.svg")), svg.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_dir_is_created_when_missing_and_refused_when_a_file() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b");
        check_svg_dir(&d).unwrap();
        assert!(!d.exists(), "checking must not create");
        write_svgs(&d, [("x".to_string(), "<svg/>".to_string())]).unwrap();
        assert!(d.join("x.svg").is_file());
        let f = t.path().join("file");
        std::fs::write(&f, "").unwrap();
        let e = check_svg_dir(&f).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
        let e = check_svg_dir(&f.join("sub")).unwrap_err().to_string();
        assert!(e.contains("is not a directory"), "{e}");
    }
}
