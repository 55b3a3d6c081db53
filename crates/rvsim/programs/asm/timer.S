/* Timer interrupts delivered and returned from: the CLINT is armed 50 ticks ahead, the handler
 * counts interrupts and re-arms; the main loop counts iterations until 5 interrupts arrived.
 * Exit status 0 when the handler saw the right mcause, MIE cleared and MPIE set, an mepc inside
 * the loop, and the loop kept running between interrupts; else the number of the failed check. */
    .equ MTIME, 0x0200bff8
    .equ MTIMECMP, 0x02004000

    .section .text.init, "ax"
    .globl _start
_start:
    la t0, handler
    csrw mtvec, t0
    li s0, 0            /* interrupts seen */
    li s1, 0            /* loop iterations */
    li s3, 0            /* first failed check in the handler */
    call arm
    li t0, 0x80
    csrs mie, t0
    csrsi mstatus, 0x8
loop:
    addi s1, s1, 1
    li t0, 5
    blt s0, t0, loop
loop_end:
    csrci mstatus, 0x8
    bnez s3, report
    li s3, 10
    li t0, 25
    bltu s1, t0, report    /* the loop ran between interrupts (5 times at least) */
    li a0, 0
    j done
report:
    mv a0, s3
done:
    csrw mtvec, zero    /* no handler: the ecall below is the exit call */
    li a7, 93
    ecall

arm:                     /* mtimecmp = mtime + 50 (low word; the run is short) */
    li t1, MTIME
    lw t2, 0(t1)
    addi t2, t2, 50
    li t1, MTIMECMP
    sw zero, 4(t1)
    sw t2, 0(t1)
    ret

    .balign 4
handler:
    csrr t3, mcause
    li t4, 0x80000007
    beq t3, t4, 1f
    li s3, 1
1:  csrr t3, mstatus
    andi t3, t3, 0x88
    li t4, 0x80
    beq t3, t4, 1f
    li s3, 2
1:  csrr t3, mepc
    la t4, loop
    bltu t3, t4, 2f
    la t4, loop_end
    bgeu t3, t4, 2f
    j 3f
2:  li s3, 3
3:  csrr t3, mip
    andi t3, t3, 0x80
    bnez t3, 4f
    li s3, 4            /* MTIP must be pending inside the handler */
4:  addi s0, s0, 1
    mv t5, ra
    call arm
    mv ra, t5
    mret
