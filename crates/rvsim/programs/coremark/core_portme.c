/*
 * CoreMark port for the rvsim machine (and Linux user mode, e.g. qemu-riscv32).
 *
 * Derived from EEMBC's barebones porting template, core_portme.c
 * (Copyright 2018 Embedded Microprocessor Benchmark Consortium, Apache License 2.0).
 * Output goes through printf (picolibc over the program ABI's write call); the timed part is
 * measured with the cycle and instret counters and reported once more at the end, exactly.
 */
#include <stdio.h>

#include "coremark.h"
#include "core_portme.h"

#if VALIDATION_RUN
volatile ee_s32 seed1_volatile = 0x3415;
volatile ee_s32 seed2_volatile = 0x3415;
volatile ee_s32 seed3_volatile = 0x66;
#endif
#if PERFORMANCE_RUN
volatile ee_s32 seed1_volatile = 0x0;
volatile ee_s32 seed2_volatile = 0x0;
volatile ee_s32 seed3_volatile = 0x66;
#endif
#if PROFILE_RUN
volatile ee_s32 seed1_volatile = 0x8;
volatile ee_s32 seed2_volatile = 0x8;
volatile ee_s32 seed3_volatile = 0x8;
#endif
volatile ee_s32 seed4_volatile = ITERATIONS;
volatile ee_s32 seed5_volatile = 0;

/* The multilib has no _zicsr variant: enable the CSR instructions where they are used. */
#define READ_COUNTER(name, out)                                                       \
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrr %0, " name "\n.option pop" \
                     : "=r"(out))

static ee_u32 cycles(void)
{
    ee_u32 v;
    READ_COUNTER("cycle", v);
    return v;
}

static ee_u32 instructions(void)
{
    ee_u32 v;
    READ_COUNTER("instret", v);
    return v;
}

/* A nominal 1 MHz clock: CoreMark's seconds are millions of cycles. */
#define EE_TICKS_PER_SEC 1000000

static CORETIMETYPE start_cycles, stop_cycles;
static ee_u32 start_instructions, stop_instructions;

void start_time(void)
{
    start_instructions = instructions();
    start_cycles = cycles();
}

void stop_time(void)
{
    stop_cycles = cycles();
    stop_instructions = instructions();
}

CORE_TICKS get_time(void)
{
    return (CORE_TICKS)(stop_cycles - start_cycles);
}

secs_ret time_in_secs(CORE_TICKS ticks)
{
    return ((secs_ret)ticks) / (secs_ret)EE_TICKS_PER_SEC;
}

ee_u32 default_num_contexts = 1;

void portable_init(core_portable *p, int *argc, char *argv[])
{
    (void)argc;
    (void)argv;
    if (sizeof(ee_ptr_int) != sizeof(ee_u8 *))
        ee_printf("ERROR! Please define ee_ptr_int to a type that holds a pointer!\n");
    if (sizeof(ee_u32) != 4)
        ee_printf("ERROR! Please define ee_u32 to a 32b unsigned type!\n");
    p->portable_id = 1;
}

void portable_fini(core_portable *p)
{
    p->portable_id = 0;
    ee_printf("Timed cycles     : %lu\n", (unsigned long)(stop_cycles - start_cycles));
    ee_printf("Timed instret    : %lu\n",
              (unsigned long)(stop_instructions - start_instructions));
}
