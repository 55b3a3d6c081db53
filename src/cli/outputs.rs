//! The one way out for every file a command writes (like hyperfine's ExportManager): a
//! command declares its outputs ([`Outputs`]: a [`Format`] and where it goes, one per output
//! option), the one check refuses a bad one before the command reads, measures or writes
//! anything, and each is then rendered from what the command made (a [`Subject`]: a run, a
//! comparison, a fleet, the machine, a simulation...) and written through `write_atomic`
//! (all or nothing: an interrupted write leaves the old file or none, never a truncated one).
//! Which formats exist and how each subject looks in each is said here, once; the commands
//! only choose.
//!
//! The check: each output can be written as what it is (a file replaced atomically, or a
//! stream such as a FIFO, a terminal, `/dev/null` or `-`), and no output is one of the
//! command's inputs, the history database or another output. Paths are compared after
//! resolving symlinks: the same device and inode when the file exists, else the same
//! canonical directory and name.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::Run;
use crate::report::export::{resolve_target, same_file, write_atomic, Target};
use crate::report::write::write_in_dir;

/// Every format oscost writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// What a terminal shows (to standard output).
    Text,
    Json,
    Csv,
    Markdown,
    /// A self-contained page.
    Html,
    Svg,
    /// The Kanata pipeline log (Konata's input).
    Kanata,
    /// The Prometheus text exposition (node_exporter's textfile collector reads it).
    OpenMetrics,
    /// github-action-benchmark's `customSmallerIsBetter` JSON.
    BenchmarkAction,
    /// Bencher's metric format (BMF JSON).
    Bencher,
}

/// What a command made, in the formats it has. Asking a subject for a format it does not
/// have is a defect of the command (it offered an option it cannot honour).
pub trait Subject {
    /// `self` in `format`.
    fn render(&self, format: Format) -> Result<Vec<u8>>;
}

/// The error for a format a subject does not have.
fn no_such_form(what: &str, format: Format) -> Error {
    Error::env(format!("internal: {what} has no {format:?} form"))
}

/// The outputs a command was asked for, in the order they are written.
#[derive(Debug, Default)]
pub struct Outputs {
    files: Vec<(Format, PathBuf)>,
}

impl Outputs {
    pub fn new() -> Self {
        Outputs::default()
    }

    /// Adds an output option: `path` in `format`, when the option was given.
    pub fn with(mut self, format: Format, path: Option<&Path>) -> Self {
        if let Some(p) = path {
            self.files.push((format, p.to_path_buf()));
        }
        self
    }

    /// The paths named, in order.
    pub fn paths(&self) -> Vec<&Path> {
        self.files.iter().map(|(_, p)| p.as_path()).collect()
    }

    /// The one check (see [`check`]) of these outputs and `extra` ones named by the command
    /// (a figure's `--svg`), before anything is read, measured or written.
    pub fn check(&self, extra: &[&Path], inputs: &[&Path], db: Option<&Path>) -> Result<()> {
        let mut all = self.paths();
        all.extend(extra);
        check(&all, inputs, db)
    }

    /// Renders and writes each output in order; stops at the first that fails.
    pub fn write<S: Subject + ?Sized>(&self, subject: &S) -> Result<()> {
        for (format, path) in &self.files {
            write_atomic(path, &subject.render(*format)?)?;
        }
        Ok(())
    }

    /// Renders and writes every output, whatever became of the others (a measurement is
    /// never lost because one output failed): the errors of those that failed.
    pub fn write_each<S: Subject + ?Sized>(&self, subject: &S) -> Vec<Error> {
        self.files
            .iter()
            .filter_map(|(format, path)| {
                subject
                    .render(*format)
                    .and_then(|bytes| write_atomic(path, &bytes))
                    .err()
            })
            .collect()
    }

    /// Files whose names were chosen after measuring (a family's figures and tables in
    /// `--svg-dir`, whose directory is created when missing): each written unless it is one
    /// of these outputs (that file stays as written); the errors of those not written.
    pub fn write_late(&self, files: &[(PathBuf, Vec<u8>)]) -> Vec<Error> {
        let mut failed = Vec::new();
        for (p, bytes) in files {
            if let Some(q) = self.paths().into_iter().find(|q| same_file(p, q)) {
                failed.push(Error::usage(format!(
                    "{}: a file of --svg-dir and {} name the same file; the --svg-dir file was not written",
                    p.display(),
                    q.display()
                )));
                continue;
            }
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            let written = match p.file_name() {
                Some(name) => write_in_dir(dir.unwrap_or(Path::new(".")), name, bytes),
                None => Err(Error::usage(format!("{}: names no file", p.display()))),
            };
            failed.extend(written.err());
        }
        failed
    }
}

/// Prints `subject` in `format` on standard output (a closed pipe ends oscost as
/// [`crate::cli::pipe`] says).
pub fn print<S: Subject + ?Sized>(subject: &S, format: Format) -> Result<()> {
    let bytes = subject.render(format)?;
    match super::pipe::print_out(&bytes) {
        Ok(()) => Ok(()),
        Err(super::pipe::Unprinted::Closed) => super::pipe::end_closed(),
        Err(super::pipe::Unprinted::Failed(e)) => Err(Error::io("standard output", e)),
    }
}

/// Writes `files` (name, bytes) into the directory `dir`, creating it when missing: pages and
/// builds whose names the command chooses (`man --dir`, `sim bench --keep-builds`).
/// A file of that name that is a symlink is refused, never written through.
pub fn write_in(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::usage(format!(
            "{}: exists and is not a directory",
            dir.display()
        )));
    }
    for (name, bytes) in files {
        write_in_dir(dir, std::ffi::OsStr::new(name), bytes)?;
    }
    Ok(())
}

/// One run (a command's measurements, or a run exported), with the analysis a measuring
/// command adds to its JSON.
pub struct RunOut<'a> {
    pub run: &'a Run,
    pub analysis: Option<&'a serde_json::Value>,
}

impl Subject for RunOut<'_> {
    fn render(&self, format: Format) -> Result<Vec<u8>> {
        use crate::report::export::{to_csv, to_json};
        let text = match format {
            Format::Json => match self.analysis {
                None => to_json(self.run),
                Some(a) => {
                    let mut v = serde_json::to_value(self.run).expect("a Run serializes");
                    v["analysis"] = a.clone();
                    serde_json::to_string_pretty(&v).expect("a value serializes")
                }
            },
            Format::Csv => to_csv(self.run)?,
            Format::Markdown => crate::report::markdown::run_to_markdown(self.run),
            Format::Html => crate::report::html::render(std::slice::from_ref(self.run)),
            Format::OpenMetrics => crate::report::formats::openmetrics(self.run),
            Format::BenchmarkAction => crate::report::formats::benchmark_action(self.run),
            Format::Bencher => crate::report::formats::bencher(self.run),
            f => return Err(no_such_form("a run", f)),
        };
        Ok(text.into_bytes())
    }
}

/// Several runs side by side (`oscost report`).
impl Subject for [Run] {
    fn render(&self, format: Format) -> Result<Vec<u8>> {
        match format {
            Format::Html => Ok(crate::report::html::render(self).into_bytes()),
            f => Err(no_such_form("a report of runs", f)),
        }
    }
}

/// A comparison of two runs, with the gate's thresholds its figure draws.
pub struct CompareOut<'a> {
    pub comparison: &'a crate::compare::Comparison,
    pub fail_above: Option<f64>,
    pub min_effect: f64,
}

impl Subject for CompareOut<'_> {
    fn render(&self, format: Format) -> Result<Vec<u8>> {
        use crate::report::compare as render;
        let c = self.comparison;
        let svg = || render::svg(c, self.fail_above, self.min_effect);
        let text = match format {
            Format::Text => render::text(c),
            Format::Markdown => render::markdown(c),
            Format::Json => render::json(c),
            Format::Svg => svg(),
            Format::Html => render::html(c, svg()),
            f => return Err(no_such_form("a comparison", f)),
        };
        Ok(text.into_bytes())
    }
}

impl Subject for crate::compare::fleet::Fleet {
    fn render(&self, format: Format) -> Result<Vec<u8>> {
        use crate::report::fleet as render;
        let text = match format {
            Format::Text => render::text(self),
            Format::Json => render::json(self),
            Format::Csv => render::csv(self)?,
            Format::Html => render::html(self),
            f => return Err(no_such_form("a fleet", f)),
        };
        Ok(text.into_bytes())
    }
}

impl Subject for crate::machine::Machine {
    fn render(&self, format: Format) -> Result<Vec<u8>> {
        let text = match format {
            // Text is for the terminal: within its width.
            Format::Text => {
                crate::machine::render_text_within(self, crate::report::term::Term::stdout().width)
            }
            Format::Json => serde_json::to_string_pretty(self).expect("Machine serializes"),
            f => return Err(no_such_form("the machine", f)),
        };
        Ok(text.into_bytes())
    }
}

/// What a simulator command made: its JSON document, its CSV table (header and rows) and its
/// figure, as far as it has them.
#[derive(Default)]
pub struct SimOut {
    pub json: serde_json::Value,
    pub table: Option<(Vec<&'static str>, Vec<Vec<String>>)>,
    pub svg: Option<String>,
}

impl Subject for SimOut {
    fn render(&self, format: Format) -> Result<Vec<u8>> {
        match (format, &self.table, &self.svg) {
            (Format::Json, _, _) => {
                let text = serde_json::to_string_pretty(&self.json)
                    .map_err(|e| Error::env(format!("JSON: {e}")))?;
                Ok((text + "\n").into_bytes())
            }
            (Format::Csv, Some((header, rows)), _) => {
                let err = |e: csv::Error| Error::env(format!("CSV: {e}"));
                let mut w = csv::Writer::from_writer(Vec::new());
                w.write_record(header).map_err(err)?;
                for r in rows {
                    w.write_record(r).map_err(err)?;
                }
                w.into_inner().map_err(|e| Error::env(format!("CSV: {e}")))
            }
            (Format::Svg, _, Some(svg)) => Ok(svg.clone().into_bytes()),
            (f, _, _) => Err(no_such_form("this simulation", f)),
        }
    }
}

/// A pipeline diagram of the modeled machine (`sim run --pipeview`).
pub struct PipeviewOut<'a> {
    pub diagram: &'a rvsim::pipetrace::Diagram,
    pub symbols: &'a rvsim::pipetrace::text::Symbols,
    /// The program's name, shown on the page.
    pub label: &'a str,
}

impl Subject for PipeviewOut<'_> {
    fn render(&self, format: Format) -> Result<Vec<u8>> {
        let text = match format {
            Format::Html => crate::report::pipeview::html(self.diagram, self.symbols, self.label),
            Format::Kanata => rvsim::pipetrace::kanata::write(self.diagram, self.symbols),
            f => return Err(no_such_form("a pipeline diagram", f)),
        };
        Ok(text.into_bytes())
    }
}

/// The paths of the output options that were given (`--json`, `--csv`, ...).
pub fn given<'a>(options: &[&'a Option<PathBuf>]) -> Vec<&'a Path> {
    options.iter().filter_map(|o| o.as_deref()).collect()
}

/// Checked before measuring: `--svg-dir` is a directory, or can become one (it does not
/// exist and its nearest existing ancestor is a directory). Nothing is created yet, so a run
/// refused or interrupted later leaves no empty directory behind.
pub fn check_svg_dir(d: &Path) -> Result<()> {
    let refuse = |why: &str| Err(Error::usage(format!("--svg-dir {}: {why}", d.display())));
    if d == Path::new("-") {
        return refuse("a directory cannot be standard output; name a directory");
    }
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

/// Refuses (exit 2, one line) an output that cannot be written, that is one of `inputs`
/// (inputs that name no file, such as history ids, are passed over), that is the history
/// database `db`, or that another output names too.
pub fn check(outputs: &[&Path], inputs: &[&Path], db: Option<&Path>) -> Result<()> {
    let mut files: Vec<&Path> = Vec::new();
    let stdout = |p: &Path| p == Path::new("-") || p == Path::new("/dev/stdout");
    if outputs.iter().filter(|p| stdout(p)).count() > 1 {
        return Err(Error::usage(
            "standard output (-) is named for two outputs, which would interleave there; \
             give all but one a file",
        ));
    }
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
    fn svg_dir_is_created_when_missing_and_refused_when_a_file() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b");
        check_svg_dir(&d).unwrap();
        assert!(!d.exists(), "checking must not create");
        write_in(&d, &[("x.svg".to_string(), b"<svg/>".to_vec())]).unwrap();
        assert!(d.join("x.svg").is_file());
        let f = t.path().join("file");
        std::fs::write(&f, "").unwrap();
        let e = check_svg_dir(&f).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
        let e = check_svg_dir(&f.join("sub")).unwrap_err().to_string();
        assert!(e.contains("is not a directory"), "{e}");
    }

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
