/* Start-up code for programs run by rvsim (machine mode, no operating system).
 *
 * Sets the stack, global and thread pointers, zeroes .bss, installs a trap handler, enables a
 * periodic timer interrupt when the simulator was asked for one (it then writes the interval
 * into rvsim_timer_interval), calls main and passes its result to exit().
 *
 * The trap handler re-arms the timer (mtimecmp = mtime + interval), counts the interrupt in
 * rvsim_timer_ticks and returns; it passes ecalls on to the simulator's program ABI, and any
 * other trap ends the run through the simulator's unhandled-trap report.
 *
 * Built with -DRVSIM_USER_MODE it skips the machine-mode set-up (trap vector, timer), so the
 * same program also runs under a Linux user-mode emulator (qemu-riscv32), whose write and exit
 * system calls have the same numbers as the simulator's program ABI. */
    .option arch, +zicsr
    .section .text.init, "ax"
    .globl _start
_start:
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
#ifndef RVSIM_USER_MODE
    la sp, __stack          /* under a user-mode emulator the stack is already set */
#endif
    la tp, __tls_base
    la t0, __bss_start
    la t1, __bss_end
1:  bgeu t0, t1, 2f
    sw zero, 0(t0)
    addi t0, t0, 4
    j 1b
2:
#ifndef RVSIM_USER_MODE
    la t0, rvsim_trap
    csrw mtvec, t0
    lw t0, rvsim_timer_interval
    beqz t0, 3f
    li t0, 0x80
    csrs mie, t0
    csrsi mstatus, 0x8
3:
#endif
    li a0, 0
    li a1, 0
    call main
    call exit
4:  j 4b

    .text
    .balign 4
    .globl rvsim_trap
rvsim_trap:
    addi sp, sp, -16
    sw t0, 0(sp)
    sw t1, 4(sp)
    sw t2, 8(sp)
    sw t3, 12(sp)
    csrr t0, mcause
    li t1, 0x80000007
    bne t0, t1, 9f
    /* mtimecmp = mtime + interval (64-bit; high word of mtime read around the low word) */
    li t0, 0x0200bff8
1:  lw t2, 4(t0)
    lw t1, 0(t0)
    lw t3, 4(t0)
    bne t2, t3, 1b
    lw t0, rvsim_timer_interval
    add t0, t1, t0
    sltu t1, t0, t1
    add t3, t3, t1
    li t1, 0x02004000
    li t2, -1
    sw t2, 0(t1)
    sw t3, 4(t1)
    sw t0, 0(t1)
    la t0, rvsim_timer_ticks
    lw t1, 0(t0)
    addi t1, t1, 1
    sw t1, 0(t0)
8:  lw t0, 0(sp)
    lw t1, 4(sp)
    lw t2, 8(sp)
    lw t3, 12(sp)
    addi sp, sp, 16
    mret
9:  li t1, 11
    bne t0, t1, 10f
    /* ecall: serve it through the program ABI. With the handler installed the machine traps
     * every ecall here (as the privileged spec says), so the handler steps aside (mtvec = 0),
     * repeats the call, which the simulator then serves, and restores itself. */
    la t2, rvsim_trap
    csrw mtvec, zero
    ecall
    csrw mtvec, t2
    csrr t0, mepc
    addi t0, t0, 4
    csrw mepc, t0
    j 8b
    /* Any other trap: remove the handler and return to the faulting instruction, which traps
     * again with no handler, so the simulator ends the run naming the cause, pc and mtval. */
10: csrw mtvec, zero
    j 8b

    .data
    .balign 4
    .globl rvsim_timer_interval
    .globl rvsim_timer_ticks
rvsim_timer_interval: .word 0
rvsim_timer_ticks:    .word 0
