//! A closed standard output ends oscost quietly, as it ends Unix tools: `print!` panics with
//! "failed printing to stdout: Broken pipe" when the reader has gone (Rust ignores SIGPIPE);
//! the entry point recognizes that panic, prints nothing and exits with 141 (128 + SIGPIPE),
//! after unwinding has run every cleanup guard.

use std::any::Any;

/// The exit code of a process killed by SIGPIPE, which scripts already expect.
pub const EXIT_BROKEN_PIPE: i32 = 128 + libc::SIGPIPE;

/// True for the panic `print!` raises when standard output is a closed pipe.
pub fn is_broken_pipe(payload: &(dyn Any + Send)) -> bool {
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    msg.contains("failed printing to stdout") && msg.contains("Broken pipe")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_broken_pipe_panic_is_recognized() {
        let yes: Box<dyn Any + Send> = Box::new(String::from(
            "failed printing to stdout: Broken pipe (os error 32)",
        ));
        assert!(is_broken_pipe(yes.as_ref()));
        let no: Box<dyn Any + Send> = Box::new("index out of bounds");
        assert!(!is_broken_pipe(no.as_ref()));
        let other_io: Box<dyn Any + Send> =
            Box::new(String::from("failed printing to stdout: No space left"));
        assert!(!is_broken_pipe(other_io.as_ref()));
        assert_eq!(EXIT_BROKEN_PIPE, 141);
    }
}
