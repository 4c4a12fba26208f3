// SPDX-License-Identifier: MIT
/*
 * The request's precision conversion (libruntime/src/convert.c) at the
 * edges: integers to every float type correctly rounded (u64 above 2^63,
 * i64 where a detour through double rounds twice), floats to integers with
 * exact range checks, NaN, infinities, subnormals and ties; then random
 * 64-bit values against long double (64-bit mantissa: exact for them), and
 * every f16 and bf16 through f32 and back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static int failures;

#define EXPECT(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			failures++; \
		} \
	} while (0)

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float f32_of(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* One element of @from (@src) converted to @to, as raw bits. */
static uint64_t conv(vnpu_element_type to, vnpu_element_type from, const void *src)
{
	uint64_t out = 0;

	vnpu_convert(&out, to, src, from, 1);
	return out;
}

static uint64_t from_u64(vnpu_element_type to, uint64_t v)
{
	return conv(to, VNPU_TYPE_U64, &v);
}

static uint64_t from_i64(vnpu_element_type to, int64_t v)
{
	return conv(to, VNPU_TYPE_I64, &v);
}

static uint64_t from_f64(vnpu_element_type to, double v)
{
	return conv(to, VNPU_TYPE_F64, &v);
}

static uint64_t from_f32(vnpu_element_type to, float v)
{
	return conv(to, VNPU_TYPE_F32, &v);
}

static void integers_to_floats(void)
{
	/* u64 above 2^63 (f32: half an ULP at 2^63 is 2^39). */
	EXPECT(from_u64(VNPU_TYPE_F32, UINT64_MAX) == 0x5f800000, "u64 max -> f32 2^64");
	EXPECT(from_u64(VNPU_TYPE_F32, (1ull << 63) + (1ull << 39)) == 0x5f000000,
	       "u64 2^63 + tie -> even");
	EXPECT(from_u64(VNPU_TYPE_F32, (1ull << 63) + (1ull << 39) + 1) == 0x5f000001,
	       "u64 2^63 + above the tie -> up");
	EXPECT(from_u64(VNPU_TYPE_F32, (1ull << 63) + (3ull << 39)) == 0x5f000002,
	       "u64 odd + tie -> even (up)");
	EXPECT(from_u64(VNPU_TYPE_F64, UINT64_MAX) == 0x43f0000000000000ull, "u64 max -> f64");
	EXPECT(from_u64(VNPU_TYPE_F64, (1ull << 63) + (1ull << 10)) == 0x43e0000000000000ull,
	       "u64 -> f64 tie");
	EXPECT(from_u64(VNPU_TYPE_F64, (1ull << 63) + (1ull << 10) + 1) == 0x43e0000000000001ull,
	       "u64 -> f64 above the tie");
	EXPECT(from_u64(VNPU_TYPE_BF16, UINT64_MAX) == 0x5f80, "u64 max -> bf16 2^64");
	EXPECT(from_u64(VNPU_TYPE_F16, UINT64_MAX) == 0x7c00, "u64 max -> f16 inf");
	EXPECT(from_u64(VNPU_TYPE_F16, 0) == 0, "0 -> f16 +0");
	/* i64: through a double, 2^62 + 2^38 + 1 would round to the tie, then to even. */
	EXPECT(from_i64(VNPU_TYPE_F32, (1ll << 62) + (1ll << 38) + 1) == 0x5e800001,
	       "i64 -> f32 rounds once");
	EXPECT(from_i64(VNPU_TYPE_F32, -(1ll << 62) - (1ll << 38) - 1) == 0xde800001,
	       "negative i64 -> f32 rounds once");
	EXPECT(from_i64(VNPU_TYPE_F32, INT64_MIN) == 0xdf000000, "i64 min -> f32 -2^63");
	EXPECT(from_i64(VNPU_TYPE_F64, INT64_MIN) == 0xc3e0000000000000ull, "i64 min -> f64");
	EXPECT(from_i64(VNPU_TYPE_F64, INT64_MAX) == 0x43e0000000000000ull, "i64 max -> f64 2^63");
	/* f16: the largest is 65504; 65520 is the tie with infinity. */
	EXPECT(from_i64(VNPU_TYPE_F16, 65504) == 0x7bff, "65504 -> f16 max");
	EXPECT(from_i64(VNPU_TYPE_F16, 65519) == 0x7bff, "65519 -> f16 max");
	EXPECT(from_i64(VNPU_TYPE_F16, 65520) == 0x7c00, "65520 -> f16 inf");
	EXPECT(from_i64(VNPU_TYPE_F16, -65520) == 0xfc00, "-65520 -> f16 -inf");
	EXPECT(from_i64(VNPU_TYPE_F16, 2049) == 0x6800, "2049 -> f16 2048 (tie to even)");
	EXPECT(from_i64(VNPU_TYPE_F16, 2051) == 0x6802, "2051 -> f16 2052 (tie to even)");
	EXPECT(from_i64(VNPU_TYPE_BF16, 257) == 0x4380, "257 -> bf16 256 (tie to even)");
	EXPECT(from_i64(VNPU_TYPE_BF16, 259) == 0x4382, "259 -> bf16 260 (tie to even)");
	EXPECT(from_i64(VNPU_TYPE_F32, 16777217) == 0x4b800000, "2^24 + 1 -> f32 2^24");
}

static void floats_to_integers(void)
{
	double below = 9223372036854774784.0;	/* the largest double below 2^63 */

	EXPECT(from_f64(VNPU_TYPE_I64, below) == 9223372036854774784ull,
	       "f64 just below 2^63 -> i64 exact");
	EXPECT(from_f64(VNPU_TYPE_I64, 0x1p63) == INT64_MAX, "f64 2^63 -> i64 max");
	EXPECT((int64_t)from_f64(VNPU_TYPE_I64, -0x1p63) == INT64_MIN, "f64 -2^63 -> i64 min");
	EXPECT((int64_t)from_f64(VNPU_TYPE_I64, -0x1p64) == INT64_MIN, "f64 -2^64 -> i64 min");
	EXPECT(from_f64(VNPU_TYPE_I64, 1e300) == INT64_MAX, "1e300 -> i64 max");
	EXPECT((int64_t)from_f64(VNPU_TYPE_I64, -INFINITY) == INT64_MIN, "-inf -> i64 min");
	EXPECT(from_f64(VNPU_TYPE_I64, INFINITY) == INT64_MAX, "inf -> i64 max");
	EXPECT(from_f64(VNPU_TYPE_I64, NAN) == 0, "NaN -> 0");
	EXPECT(from_f64(VNPU_TYPE_I64, 2.5) == 2, "2.5 -> 2 (even)");
	EXPECT(from_f64(VNPU_TYPE_I64, 3.5) == 4, "3.5 -> 4 (even)");
	EXPECT((int64_t)from_f64(VNPU_TYPE_I64, -2.5) == -2, "-2.5 -> -2");
	EXPECT(from_f64(VNPU_TYPE_I64, -0.5) == 0, "-0.5 -> 0");
	EXPECT(from_f64(VNPU_TYPE_I64, 0.5000000000000001) == 1, "just above 0.5 -> 1");
	EXPECT(from_f64(VNPU_TYPE_I64, 0x1p-1074) == 0, "the least subnormal -> 0");
	EXPECT(from_f64(VNPU_TYPE_U64, 0x1p64 - 2048) == UINT64_MAX - 2047,
	       "f64 just below 2^64 -> u64 exact");
	EXPECT(from_f64(VNPU_TYPE_U64, 0x1p64) == UINT64_MAX, "2^64 -> u64 max");
	EXPECT(from_f64(VNPU_TYPE_U64, 0x1p63) == 1ull << 63, "2^63 -> u64 exact");
	EXPECT(from_f64(VNPU_TYPE_U64, -1) == 0, "-1 -> u64 0");
	EXPECT(from_f32(VNPU_TYPE_U8, 255.5f) == 255, "255.5 -> u8 255");
	EXPECT(from_f32(VNPU_TYPE_U8, 254.5f) == 254, "254.5 -> u8 254");
	EXPECT(from_f32(VNPU_TYPE_U8, -3) == 0, "-3 -> u8 0");
	EXPECT(from_f32(VNPU_TYPE_U8, NAN) == 0, "NaN -> u8 0");
	EXPECT((uint8_t)from_f32(VNPU_TYPE_I8, -128.5f) == 0x80, "-128.5 -> i8 -128");
	EXPECT((uint8_t)from_f32(VNPU_TYPE_I8, -1e30f) == 0x80, "-1e30 -> i8 -128");
	EXPECT(from_f32(VNPU_TYPE_I8, 127.49f) == 127, "127.49 -> i8 127");
	EXPECT((uint32_t)from_f32(VNPU_TYPE_I32, 0x1p31f) == INT32_MAX, "2^31 -> i32 max");
	EXPECT((uint32_t)from_f32(VNPU_TYPE_I32, -0x1p31f) == 0x80000000u, "-2^31 -> i32 min");
	EXPECT(from_f32(VNPU_TYPE_U32, 0x1p32f) == UINT32_MAX, "2^32 -> u32 max");
	EXPECT(from_f32(VNPU_TYPE_BOOL, 0.25f) == 1, "0.25 -> true");
	EXPECT(from_f32(VNPU_TYPE_BOOL, -0.0f) == 0, "-0 -> false");
	EXPECT(from_f32(VNPU_TYPE_BOOL, NAN) == 0, "NaN -> false");
	EXPECT(from_f32(VNPU_TYPE_BOOL, -INFINITY) == 1, "-inf -> true");
}

static void integers_to_integers(void)
{
	EXPECT((uint8_t)from_i64(VNPU_TYPE_I8, -1000) == 0x80, "-1000 -> i8 -128");
	EXPECT(from_i64(VNPU_TYPE_I8, 1000) == 127, "1000 -> i8 127");
	EXPECT(from_i64(VNPU_TYPE_U64, -1) == 0, "-1 -> u64 0");
	EXPECT(from_u64(VNPU_TYPE_I64, UINT64_MAX) == INT64_MAX, "u64 max -> i64 max");
	EXPECT(from_u64(VNPU_TYPE_U32, 1ull << 40) == UINT32_MAX, "2^40 -> u32 max");
	EXPECT(from_i64(VNPU_TYPE_BOOL, -5) == 1, "-5 -> true");
	EXPECT(from_i64(VNPU_TYPE_BOOL, 0) == 0, "0 -> false");
	EXPECT((uint16_t)from_i64(VNPU_TYPE_I16, INT64_MIN) == 0x8000, "i64 min -> i16 min");
	EXPECT(from_u64(VNPU_TYPE_U16, 65535) == 65535, "u16 max kept");
}

static void floats_to_floats(void)
{
	/* 1 + 2^-11 + 2^-40: through f32 it would be the f16 tie, then 1.0. */
	EXPECT(from_f64(VNPU_TYPE_F16, 1 + 0x1p-11 + 0x1p-40) == 0x3c01, "f64 -> f16 rounds once");
	EXPECT(from_f64(VNPU_TYPE_BF16, 1 + 0x1p-8 + 0x1p-40) == 0x3f81, "f64 -> bf16 rounds once");
	EXPECT(from_f32(VNPU_TYPE_BF16, f32_of(0x7f800001)) == 0x7fc0, "f32 NaN -> bf16 NaN");
	EXPECT(from_f32(VNPU_TYPE_BF16, f32_of(0xff800001)) == 0xffc0, "-NaN -> bf16 -NaN");
	EXPECT(from_f32(VNPU_TYPE_F16, f32_of(0x7f800001)) == 0x7e00, "f32 NaN -> f16 NaN");
	EXPECT(from_f32(VNPU_TYPE_BF16, f32_of(0x7f7fffff)) == 0x7f80, "f32 max -> bf16 inf");
	EXPECT(from_f32(VNPU_TYPE_F16, 0x1p-24f) == 0x0001, "2^-24 -> f16 least subnormal");
	EXPECT(from_f32(VNPU_TYPE_F16, 0x1p-25f) == 0x0000, "2^-25 -> f16 0 (tie)");
	EXPECT(from_f32(VNPU_TYPE_F16, 0x1.8p-25f) == 0x0001, "1.5 * 2^-25 -> f16 2^-24");
	EXPECT(from_f32(VNPU_TYPE_F16, -0x1p-26f) == 0x8000, "tiny negative -> f16 -0");
	EXPECT(from_f32(VNPU_TYPE_F16, 0x1.ffcp-15f) == 0x0400, "largest subnormal carry -> normal");
	EXPECT(from_f32(VNPU_TYPE_F16, 65504) == 0x7bff, "65504 -> f16 max");
	EXPECT(from_f32(VNPU_TYPE_F16, 65520) == 0x7c00, "65520 -> f16 inf");
	EXPECT(from_f32(VNPU_TYPE_F16, -INFINITY) == 0xfc00, "-inf -> f16 -inf");
	EXPECT(from_f64(VNPU_TYPE_F32, 0x1p-149) == 1, "2^-149 -> f32 least subnormal");
	EXPECT(from_f64(VNPU_TYPE_F32, 0x1p-150) == 0, "2^-150 -> f32 0 (tie)");
	EXPECT(from_f64(VNPU_TYPE_F32, 1e300) == 0x7f800000, "1e300 -> f32 inf");
	EXPECT(from_f64(VNPU_TYPE_F32, -0.0) == 0x80000000, "-0 kept");
	EXPECT(from_f32(VNPU_TYPE_F64, 0x1p-149f) == 0x36a0000000000000ull, "f32 subnormal -> f64");
}

/* splitmix64 */
static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Random 64-bit values against long double, whose 64-bit mantissa holds them exactly. */
static void random_64bit(void)
{
	uint64_t s = 1, u, got;
	int64_t i64;
	double d;
	int n;

	for (n = 0; n < 200000; n++) {
		u = next_random(&s) >> (next_random(&s) % 64);
		got = from_u64(VNPU_TYPE_F32, u);
		EXPECT(got == f32_bits((float)(long double)u), "u64 %llu -> f32",
		       (unsigned long long)u);
		i64 = (int64_t)u * ((n & 1) ? -1 : 1);
		got = from_i64(VNPU_TYPE_F32, i64);
		EXPECT(got == f32_bits((float)(long double)i64), "i64 %lld -> f32", (long long)i64);
		got = from_u64(VNPU_TYPE_F64, u);
		d = (double)(long double)u;
		EXPECT(!memcmp(&got, &d, 8), "u64 %llu -> f64", (unsigned long long)u);
		/* A double near 2^63 and 2^64 back to integers. */
		memcpy(&d, &got, 8);
		if (d < 0x1p63)
			EXPECT(from_f64(VNPU_TYPE_I64, d) == (uint64_t)(int64_t)d, "f64 %a -> i64", d);
		else
			EXPECT(from_f64(VNPU_TYPE_I64, d) == INT64_MAX, "f64 %a -> i64", d);
		if (d < 0x1p64)
			EXPECT(from_f64(VNPU_TYPE_U64, d) == (uint64_t)d, "f64 %a -> u64", d);
	}
}

/* Every f16 and bf16 through f32 and f64 and back (NaN as NaN). */
static void half_round_trips(void)
{
	const vnpu_element_type halves[] = { VNPU_TYPE_F16, VNPU_TYPE_BF16 };
	const vnpu_element_type wides[] = { VNPU_TYPE_F32, VNPU_TYPE_F64 };
	uint16_t h, back;
	uint64_t wide;
	unsigned int b, a, w;
	bool nan;

	for (a = 0; a < 2; a++) {
		for (w = 0; w < 2; w++) {
			for (b = 0; b < 65536; b++) {
				h = (uint16_t)b;
				wide = conv(wides[w], halves[a], &h);
				back = (uint16_t)conv(halves[a], wides[w], &wide);
				nan = halves[a] == VNPU_TYPE_F16 ?
				      (h & 0x7c00) == 0x7c00 && (h & 0x3ff) :
				      (h & 0x7f80) == 0x7f80 && (h & 0x7f);
				if (nan)
					EXPECT((back & 0x7fff) > (halves[a] == VNPU_TYPE_F16 ?
								  0x7c00 : 0x7f80) &&
					       (back & 0x8000) == (h & 0x8000),
					       "%s NaN %#x came back %#x", vnpu_element_type_str(halves[a]),
					       b, back);
				else
					EXPECT(back == h, "%s %#x came back %#x",
					       vnpu_element_type_str(halves[a]), b, back);
			}
		}
	}
	/* f16 -> f32 is exact: 0x0001 is 2^-24, 0x7bff is 65504. */
	h = 1;
	EXPECT(conv(VNPU_TYPE_F32, VNPU_TYPE_F16, &h) == f32_bits(0x1p-24f), "f16 subnormal");
	h = 0x7bff;
	EXPECT(conv(VNPU_TYPE_F32, VNPU_TYPE_F16, &h) == f32_bits(65504), "f16 max");
}

int main(void)
{
	integers_to_floats();
	floats_to_integers();
	integers_to_integers();
	floats_to_floats();
	random_64bit();
	half_round_trips();
	if (failures)
		printf("%d failures\n", failures);
	else
		printf("ok - conversions\n");
	return failures ? 1 : 0;
}
