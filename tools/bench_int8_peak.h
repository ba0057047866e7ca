/*
 * bench_int8_peak.h: the int8 multiply-add peak of one core with AVX512-VNNI (vpdpbusd:
 * four u8 x s8 products summed into each 32-bit lane, 64 a 512-bit instruction), for `xqz
 * bench nn`'s precision header. It is the ceiling an int8 path (issue 51, item 2) could
 * reach, set beside the bf16 (vdpbf16ps) and fp32 peaks the same run measures; the case
 * for or against building one is in docs/network-performance.md, "int8".
 */
#ifndef XQZ_BENCH_INT8_PEAK_H
#define XQZ_BENCH_INT8_PEAK_H

#include <stdbool.h>

/* Whether this CPU runs vpdpbusd on 512-bit registers (AVX512-F, BW and VNNI). */
bool bench_int8_vnni_supported(void);
/* Giga int8 operations (a multiply and an add each) per second over about `seconds` of a
 * dependency-free vpdpbusd loop; 0 where the CPU lacks it. */
double bench_int8_peak_gops(double seconds);

#endif
