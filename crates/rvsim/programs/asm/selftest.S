/* Self-checking test of RV32IM + Zicsr + traps. Exits 0 when every check passes, otherwise
 * with the number of the first failing check (ecall a7=93, a0=status). Assembled twice, with
 * and without the C extension, so the compressed forms the assembler picks are run too. */
    .macro check reg, val
    addi s11, s11, 1
    li t6, \val
    bne \reg, t6, fail
    .endm
    .macro check_reg reg, other
    addi s11, s11, 1
    bne \reg, \other, fail
    .endm

    .section .text.init, "ax"
    .globl _start
_start:
    li s11, 0
    la t0, trap
    csrw mtvec, t0

    /* integer arithmetic */
    li a0, 5
    addi a1, a0, -7
    check a1, -2
    li a2, 0x7fffffff
    addi a3, a2, 1
    check a3, 0x80000000
    sub a4, a0, a2
    check a4, 0x80000006
    lui a5, 0x12345
    check a5, 0x12345000
    li a0, -1
    li a1, 1
    slt a2, a0, a1
    check a2, 1
    sltu a2, a0, a1
    check a2, 0
    slti a2, a0, 0
    check a2, 1
    sltiu a2, a1, -1
    check a2, 1
    li a0, 0xf0f0
    xori a1, a0, 0x0ff
    check a1, 0xf00f
    ori a1, a0, 0x00f
    check a1, 0xf0ff
    andi a1, a0, 0x0ff
    check a1, 0xf0
    li a2, 0x0ff0
    xor a3, a0, a2
    check a3, 0xff00
    or a3, a0, a2
    check a3, 0xfff0
    and a3, a0, a2
    check a3, 0x00f0
    li a0, -16
    srai a1, a0, 2
    check a1, -4
    srli a1, a0, 28
    check a1, 0xf
    slli a1, a0, 4
    check a1, -256
    li a2, 33
    sll a1, a0, a2
    check a1, -32
    srl a1, a0, a2
    check a1, 0x7ffffff8
    sra a1, a0, a2
    check a1, -8
    /* auipc: the distance to a label */
1:  auipc a0, 0
    la a1, 1b
    sub a2, a0, a1
    check a2, 0

    /* M extension */
    li a0, -2
    li a1, 3
    mul a2, a0, a1
    check a2, -6
    mulh a2, a0, a1
    check a2, -1
    li a0, -1
    mulhu a2, a0, a0
    check a2, 0xfffffffe
    mulhsu a2, a0, a0
    check a2, 0xffffffff
    li a0, -7
    li a1, 2
    div a2, a0, a1
    check a2, -3
    rem a2, a0, a1
    check a2, -1
    divu a2, a0, a1
    check a2, 0x7ffffffc
    remu a2, a0, a1
    check a2, 1
    div a2, a0, zero
    check a2, -1
    divu a2, a0, zero
    check a2, 0xffffffff
    rem a2, a0, zero
    check a2, -7
    remu a2, a0, zero
    check a2, -7
    li a0, 0x80000000
    li a1, -1
    div a2, a0, a1
    check a2, 0x80000000
    rem a2, a0, a1
    check a2, 0

    /* loads and stores */
    la s0, buffer
    li a0, 0x80ff7f01
    sw a0, 0(s0)
    lb a1, 0(s0)
    check a1, 1
    lb a1, 3(s0)
    check a1, 0xffffff80
    lbu a1, 3(s0)
    check a1, 0x80
    lh a1, 2(s0)
    check a1, 0xffff80ff
    lhu a1, 2(s0)
    check a1, 0x80ff
    li a0, 0x1234
    sh a0, 4(s0)
    li a0, 0x56
    sb a0, 6(s0)
    sb zero, 7(s0)
    lw a1, 4(s0)
    check a1, 0x00561234
    lw a1, 0(s0)
    check a1, 0x80ff7f01

    /* branches: taken and not taken */
    li a0, -1
    li a1, 1
    li a2, 0
    beq a0, a0, 2f
    j fail
2:  bne a0, a1, 2f
    j fail
2:  blt a0, a1, 2f
    j fail
2:  bge a1, a0, 2f
    j fail
2:  bltu a1, a0, 2f
    j fail
2:  bgeu a0, a1, 2f
    j fail
2:  beq a0, a1, fail
    bne a0, a0, fail
    blt a1, a0, fail
    bge a0, a1, fail
    bltu a0, a1, fail
    bgeu a1, a0, fail
    addi s11, s11, 1

    /* jal / jalr link addresses */
    jal ra, 3f
4:  j 5f
3:  la t0, 4b
    bne ra, t0, fail
    jalr zero, 0(ra)
5:  la t0, 6f
    jalr ra, 1(t0)  /* bit 0 of the target is cleared: lands on 6f */
    j fail
6:  addi s11, s11, 1

    /* CSRs */
    li a0, 0x55
    csrw mscratch, a0
    csrr a1, mscratch
    check a1, 0x55
    csrrsi a1, mscratch, 0x2
    check a1, 0x55
    csrrci a1, mscratch, 0x1
    check a1, 0x57
    csrrwi a1, mscratch, 0x1f
    check a1, 0x56
    csrr a1, mscratch
    check a1, 0x1f
    csrr a1, mhartid
    check a1, 0
    csrr a1, mstatus
    li t0, 0x1800
    and a1, a1, t0
    check a1, 0x1800
    csrr a0, instret
    csrr a1, instret
    sub a2, a1, a0
    check a2, 1
    csrr a0, cycle
    csrr a1, cycle
    bgeu a0, a1, fail
    addi s11, s11, 1

    /* traps: the handler records mcause/mtval in s10/s9, mepc in s8, and skips 4 bytes */
    .option push
    .option norvc
    li a7, 1
    la s7, 7f
7:  ecall
    check s10, 11
    check_reg s8, s7
    la s7, 7f
7:  ebreak
    check s10, 3
    check_reg s8, s7
7:  .word 0xffffffff
    check s10, 2
    check s9, 0xffffffff
    csrr a0, 0x7c0
    check s10, 2
    check s9, 0x7c002573
    li t0, 0x10
    lw a0, 0(t0)
    check s10, 5
    check s9, 0x10
    /* misaligned loads and stores are done in hardware (no trap): s10 keeps the last cause */
    li s10, 0
    li t1, 0x44332211
    sw t1, 0(s0)
    addi t0, s0, 1
    lhu a0, 0(t0)
    check a0, 0x3322
    check s10, 0
    sw a0, 0x20(zero)
    check s10, 7
    .option pop
    /* mret restored MIE from MPIE (0) and set MPIE */
    csrr a0, mstatus
    andi a0, a0, 0x88
    check a0, 0x80

    /* self-modifying code: the decode cache must see the new instruction */
    la s1, code
    jalr ra, 0(s1)
    check a0, 1
    li t0, 0x02a00513      /* addi a0, zero, 42 */
    sw t0, 0(s1)
    fence.i
    jalr ra, 0(s1)
    check a0, 42

    /* with a handler installed ecall traps to it; remove it to reach the exit call */
pass:
    csrw mtvec, zero
    li a0, 0
    li a7, 93
    ecall
fail:
    csrw mtvec, zero
    mv a0, s11
    li a7, 93
    ecall

    .balign 4
trap:
    csrr s10, mcause
    csrr s9, mtval
    csrr s8, mepc
    addi t5, s8, 4
    csrw mepc, t5
    mret

    .data
    .balign 4
code:
    .option push
    .option norvc
    addi a0, zero, 1
    ret
    .option pop
buffer:
    .space 16
