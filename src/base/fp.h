/* base/fp.h: the 16-bit floating-point formats, bfloat16 and IEEE half
 * (fp16), to and from float32, and a float's bits. The .npy reader and
 * writer (npy.c) and the kernel language's rounding on store (tl/compute.c)
 * share them. */
#ifndef CUBESIM_BASE_FP_H
#define CUBESIM_BASE_FP_H

#include <stdint.h>

/* IEEE conversions, round to nearest even; NaN stays NaN, overflow gives
 * infinity. */
uint16_t fp_f32_to_bf16(float x);
float fp_bf16_to_f32(uint16_t b);
uint16_t fp_f32_to_f16(float x);
float fp_f16_to_f32(uint16_t h);
/* A float's IEEE-754 binary32 bits, and the float of such bits. */
uint32_t fp_f32_bits(float x);
float fp_bits_f32(uint32_t u);

#endif
