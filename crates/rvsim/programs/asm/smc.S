/* Code that writes its own page, for the simulator's slow paths: every round rewrites the
 * immediate of an instruction it then runs (with the round's count), executes fence.i, and
 * increments a counter kept in a word of its own page, 1 KiB past the code. Runs until the
 * instruction limit; a0 sums what the rewritten instruction added. */
    .section .text.init, "ax"
    .globl _start
_start:
    la s0, patched
    la s1, counter
    lw s2, 0(s0)          /* the instruction as assembled: addi a0, a0, 0 */
    li s3, 0              /* rounds */
loop:
    addi s3, s3, 1
    andi t0, s3, 0x7ff
    slli t0, t0, 20
    add t0, t0, s2
    sw t0, 0(s0)
    fence.i
patched:
    addi a0, a0, 0
    lw t1, 0(s1)
    addi t1, t1, 1
    sw t1, 0(s1)
    j loop

    .balign 1024
counter:
    .word 0
