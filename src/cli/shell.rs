//! `oscost completions bash|zsh|fish|elvish|powershell` and `oscost man`: what a tool installed
//! on a system owes its shell and `man`. Both are generated from the same clap definition the
//! parser uses, so they never drift from the real options.

use std::io::Write;
use std::path::PathBuf;

use clap::CommandFactory;

use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write oscost.1 and one page per subcommand (oscost-run.1, ...) into this directory
    /// (created when missing) instead of printing oscost.1 to stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Prints the completion script for the shell to stdout.
pub fn completions(a: CompletionsArgs) -> Result<i32> {
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "oscost", &mut out);
    write_stdout(&out)?;
    Ok(0)
}

/// Prints the man page, or writes every page into `--dir`.
pub fn man(a: ManArgs) -> Result<i32> {
    let cmd = super::Cli::command();
    match a.dir {
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut out)
                .map_err(|e| Error::io("man page", e))?;
            write_stdout(&out)?;
        }
        Some(dir) => {
            let mut cmd = cmd.disable_help_subcommand(true);
            cmd.build();
            let mut pages = Vec::new();
            man_pages(cmd, &mut pages)?;
            super::outputs::write_in(&dir, &pages)?;
            println!("man pages written to {}", dir.display());
        }
    }
    Ok(0)
}

/// The pages of `cmd` and of every subcommand under it, deepest first, as (file name, roff),
/// as clap_mangen::generate_to names them (`oscost.1`, `oscost-run.1`, ...).
fn man_pages(cmd: clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
        man_pages(sub, pages)?;
    }
    let man = clap_mangen::Man::new(cmd);
    let mut roff = Vec::new();
    man.render(&mut roff)
        .map_err(|e| Error::io("man page", e))?;
    pages.push((man.get_filename(), roff));
    Ok(())
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(bytes: &[u8]) -> Result<()> {
    match std::io::stdout().lock().write_all(bytes) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| Error::io("stdout", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion(shell: clap_complete::Shell) -> String {
        let mut cmd = crate::cli::Cli::command();
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut cmd, "oscost", &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn completions_know_the_subcommands_and_options() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let s = completion(shell);
            for word in ["sweep", "compare", "svg-dir", "fail-above"] {
                assert!(s.contains(word), "{shell:?} completion lacks {word}");
            }
        }
    }

    /// One name per variant: what an option accepts is what the output prints.
    #[test]
    fn option_values_are_the_names_the_output_uses() {
        use crate::probes::{fault::Kind, mmap::Pattern, mmap::Variant};
        use crate::units::name::Named;
        use clap::ValueEnum;
        let name = |v: Option<clap::builder::PossibleValue>| v.unwrap().get_name().to_string();
        for v in Variant::value_variants() {
            assert_eq!(name(v.to_possible_value()), v.name());
        }
        for v in Pattern::value_variants() {
            assert_eq!(name(v.to_possible_value()), v.name());
        }
        for v in Kind::value_variants() {
            assert_eq!(name(v.to_possible_value()), v.name());
        }
        // The old short forms still parse.
        assert_eq!(
            Variant::from_str("file-random", false).unwrap(),
            Variant::FileRandom
        );
    }

    #[test]
    fn man_pages_are_written_for_every_subcommand() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("man1");
        man(ManArgs {
            dir: Some(d.clone()),
        })
        .unwrap();
        let main = std::fs::read_to_string(d.join("oscost.1")).unwrap();
        assert!(main.contains(".TH oscost") && main.contains("compare"));
        assert!(d.join("oscost-run.1").is_file());
        assert!(d.join("oscost-ctx-sweep.1").is_file());
    }
}
