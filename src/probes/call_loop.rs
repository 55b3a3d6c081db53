//! The timed loops of `call.function`, written in assembly where the architecture allows.
//!
//! Why not Rust: the figure is a difference of two loops a cycle or two apart, so their
//! shape must not depend on the compiler. With `black_box` loops the same source read
//! 1.42, 1.76 and 2.12 ns per raw iteration in three builds of one day on one quiet host
//! (baseline 0.71 ns throughout): each build placed the loop counter and the result in
//! memory differently. Here both loops are fixed: the same counter in a register, the same
//! `lea` computing `3·i`, aligned to 64 bytes; the raw loop reaches the `lea` through a
//! `call` and a `ret`, so raw − baseline is exactly one call and return. Elsewhere the Rust
//! loops are used and [`FIXED_SHAPE`] says so, so the note on the figure stays true.

/// Whether the loops below are the assembly ones (their shape does not vary by build).
pub const FIXED_SHAPE: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".pushsection .text.oscost_call_loop,\"ax\",@progbits",
    ".p2align 6",
    "oscost_call_callee:",
    "    lea rax, [rdi + rdi*2]",
    "    ret",
    ".p2align 6",
    ".globl oscost_call_raw",
    "oscost_call_raw:",
    "    mov rsi, rdi",
    "    xor edi, edi",
    "    xor eax, eax",
    "    test rsi, rsi",
    "    jz 3f",
    ".p2align 5",
    "2:",
    "    call oscost_call_callee",
    "    inc rdi",
    "    cmp rdi, rsi",
    "    jne 2b",
    "3:",
    "    ret",
    ".p2align 6",
    ".globl oscost_call_base",
    "oscost_call_base:",
    "    mov rsi, rdi",
    "    xor edi, edi",
    "    xor eax, eax",
    "    test rsi, rsi",
    "    jz 3f",
    ".p2align 5",
    "2:",
    "    lea rax, [rdi + rdi*2]",
    "    inc rdi",
    "    cmp rdi, rsi",
    "    jne 2b",
    "3:",
    "    ret",
    ".p2align 6",
    "oscost_chain_callee:",
    "    lea rax, [rdi + 1]",
    "    ret",
    ".p2align 6",
    ".globl oscost_chain_raw",
    "oscost_chain_raw:",
    "    mov rsi, rdi",
    "    xor eax, eax",
    "    test rsi, rsi",
    "    jz 3f",
    ".p2align 5",
    "2:",
    "    mov rdi, rax",
    "    call oscost_chain_callee",
    "    dec rsi",
    "    jnz 2b",
    "3:",
    "    ret",
    ".p2align 6",
    ".globl oscost_chain_base",
    "oscost_chain_base:",
    "    mov rsi, rdi",
    "    xor eax, eax",
    "    test rsi, rsi",
    "    jz 3f",
    ".p2align 5",
    "2:",
    "    mov rdi, rax",
    "    lea rax, [rdi + 1]",
    "    dec rsi",
    "    jnz 2b",
    "3:",
    "    ret",
    ".popsection",
);

#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".pushsection .text.oscost_call_loop,\"ax\",%progbits",
    ".p2align 6",
    "oscost_call_callee:",
    "    add x0, x3, x3, lsl #1",
    "    ret",
    ".p2align 6",
    ".globl oscost_call_raw",
    "oscost_call_raw:",
    "    stp x29, x30, [sp, #-16]!",
    "    mov x2, x0",
    "    mov x3, #0",
    "    mov x0, #0",
    "    cbz x2, 3f",
    ".p2align 5",
    "2:",
    "    bl oscost_call_callee",
    "    add x3, x3, #1",
    "    cmp x3, x2",
    "    b.ne 2b",
    "3:",
    "    ldp x29, x30, [sp], #16",
    "    ret",
    ".p2align 6",
    ".globl oscost_call_base",
    "oscost_call_base:",
    "    mov x2, x0",
    "    mov x3, #0",
    "    mov x0, #0",
    "    cbz x2, 3f",
    ".p2align 5",
    "2:",
    "    add x0, x3, x3, lsl #1",
    "    add x3, x3, #1",
    "    cmp x3, x2",
    "    b.ne 2b",
    "3:",
    "    ret",
    ".p2align 6",
    "oscost_chain_callee:",
    "    add x0, x0, #1",
    "    ret",
    ".p2align 6",
    ".globl oscost_chain_raw",
    "oscost_chain_raw:",
    "    stp x29, x30, [sp, #-16]!",
    "    mov x2, x0",
    "    mov x0, #0",
    "    cbz x2, 3f",
    ".p2align 5",
    "2:",
    "    bl oscost_chain_callee",
    "    subs x2, x2, #1",
    "    b.ne 2b",
    "3:",
    "    ldp x29, x30, [sp], #16",
    "    ret",
    ".p2align 6",
    ".globl oscost_chain_base",
    "oscost_chain_base:",
    "    mov x2, x0",
    "    mov x0, #0",
    "    cbz x2, 3f",
    ".p2align 5",
    "2:",
    "    add x0, x0, #1",
    "    subs x2, x2, #1",
    "    b.ne 2b",
    "3:",
    "    ret",
    ".popsection",
);

/// Each loop as a Rust function: the assembly one above where the architecture has it, else
/// the portable one of [`rust`].
macro_rules! loops {
    ($($(#[$doc:meta])* $name:ident => $sym:ident;)*) => {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        extern "C" {
            $(fn $sym(n: u64) -> u64;)*
        }
        $(
            $(#[$doc])*
            pub fn $name(n: u64) -> u64 {
                #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
                // SAFETY: the symbol is defined above for this architecture with the C
                // calling convention: it reads only its argument, writes only caller-saved
                // registers (on aarch64 a loop that calls saves and restores the link
                // register on its own stack frame), touches no memory of the caller and
                // returns.
                return unsafe { $sym(n) };
                #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
                return rust::$name(n);
            }
        )*
    };
}

loops! {
    /// `n` iterations of a call to a function that computes `3·i`; returns the last `3·i`
    /// (0 for n = 0).
    raw => oscost_call_raw;
    /// `n` iterations of the same loop with `3·i` computed in place; returns the last `3·i`.
    base => oscost_call_base;
    /// `n` links of a dependent chain x = f(x) through a called function f(x) = x + 1: each
    /// call waits for the one before it. Returns n.
    chain_raw => oscost_chain_raw;
    /// The same chain with x + 1 computed in place. Returns n.
    chain_base => oscost_chain_base;
}

/// The portable loops, for architectures without the assembly ones.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod rust {
    use std::hint::black_box;

    #[inline(never)]
    fn callee(x: u64) -> u64 {
        black_box(x).wrapping_mul(3)
    }

    pub fn raw(n: u64) -> u64 {
        let mut last = 0;
        for i in 0..n {
            last = black_box(callee(black_box(i)));
        }
        last
    }

    pub fn base(n: u64) -> u64 {
        let mut last = 0;
        for i in 0..n {
            last = black_box(black_box(i).wrapping_mul(3));
        }
        last
    }

    #[inline(never)]
    fn next(x: u64) -> u64 {
        black_box(x) + 1
    }

    pub fn chain_raw(n: u64) -> u64 {
        let mut x = 0;
        for _ in 0..n {
            x = next(x);
        }
        x
    }

    pub fn chain_base(n: u64) -> u64 {
        let mut x = 0;
        for _ in 0..n {
            x = black_box(x) + 1;
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_loops_run_every_iteration_and_compute_the_callees_result() {
        for n in [0u64, 1, 2, 10, 1000, 123_457] {
            let want = n.saturating_sub(1) * 3;
            assert_eq!(raw(n), want, "raw({n})");
            assert_eq!(base(n), want, "base({n})");
            assert_eq!(chain_raw(n), n, "chain_raw({n})");
            assert_eq!(chain_base(n), n, "chain_base({n})");
        }
    }
}
