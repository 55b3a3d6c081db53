/* A trap loop, for the simulator's slow paths: ebreak, and a handler that steps mepc past it
 * and returns with mret, with the timer interrupt enabled (mtimecmp is never reached, so
 * every mret enables an interrupt that does not come). Runs until the instruction limit;
 * s0 counts the rounds. */
    .section .text.init, "ax"
    .globl _start
_start:
    la t0, handler
    csrw mtvec, t0
    li t0, 0x80
    csrw mie, t0
    csrsi mstatus, 0x8
loop:
    ebreak
    addi s0, s0, 1
    j loop

    .balign 4
handler:
    csrr t0, mepc
    addi t0, t0, 4
    csrw mepc, t0
    mret
