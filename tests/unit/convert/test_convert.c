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

#include "ksft_main.h"
#include "runtime.h"

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

TEST(integers_to_floats)
{
	/* u64 above 2^63 (f32: half an ULP at 2^63 is 2^39). */
	EXPECT_EQ(0x5f800000, from_u64(VNPU_TYPE_F32, UINT64_MAX))
		TH_LOG("u64 max -> f32 2^64");
	EXPECT_EQ(0x5f000000, from_u64(VNPU_TYPE_F32, (1ull << 63) + (1ull << 39)))
		TH_LOG("u64 2^63 + tie -> even");
	EXPECT_EQ(0x5f000001, from_u64(VNPU_TYPE_F32, (1ull << 63) + (1ull << 39) + 1))
		TH_LOG("u64 2^63 + above the tie -> up");
	EXPECT_EQ(0x5f000002, from_u64(VNPU_TYPE_F32, (1ull << 63) + (3ull << 39)))
		TH_LOG("u64 odd + tie -> even (up)");
	EXPECT_EQ(0x43f0000000000000ull, from_u64(VNPU_TYPE_F64, UINT64_MAX))
		TH_LOG("u64 max -> f64");
	EXPECT_EQ(0x43e0000000000000ull, from_u64(VNPU_TYPE_F64, (1ull << 63) + (1ull << 10)))
		TH_LOG("u64 -> f64 tie");
	EXPECT_EQ(0x43e0000000000001ull, from_u64(VNPU_TYPE_F64, (1ull << 63) + (1ull << 10) + 1))
		TH_LOG("u64 -> f64 above the tie");
	EXPECT_EQ(0x5f80, from_u64(VNPU_TYPE_BF16, UINT64_MAX))
		TH_LOG("u64 max -> bf16 2^64");
	EXPECT_EQ(0x7c00, from_u64(VNPU_TYPE_F16, UINT64_MAX))
		TH_LOG("u64 max -> f16 inf");
	EXPECT_EQ(0, from_u64(VNPU_TYPE_F16, 0))
		TH_LOG("0 -> f16 +0");
	/* i64: through a double, 2^62 + 2^38 + 1 would round to the tie, then to even. */
	EXPECT_EQ(0x5e800001, from_i64(VNPU_TYPE_F32, (1ll << 62) + (1ll << 38) + 1))
		TH_LOG("i64 -> f32 rounds once");
	EXPECT_EQ(0xde800001, from_i64(VNPU_TYPE_F32, -(1ll << 62) - (1ll << 38) - 1))
		TH_LOG("negative i64 -> f32 rounds once");
	EXPECT_EQ(0xdf000000, from_i64(VNPU_TYPE_F32, INT64_MIN))
		TH_LOG("i64 min -> f32 -2^63");
	EXPECT_EQ(0xc3e0000000000000ull, from_i64(VNPU_TYPE_F64, INT64_MIN))
		TH_LOG("i64 min -> f64");
	EXPECT_EQ(0x43e0000000000000ull, from_i64(VNPU_TYPE_F64, INT64_MAX))
		TH_LOG("i64 max -> f64 2^63");
	/* f16: the largest is 65504; 65520 is the tie with infinity. */
	EXPECT_EQ(0x7bff, from_i64(VNPU_TYPE_F16, 65504))
		TH_LOG("65504 -> f16 max");
	EXPECT_EQ(0x7bff, from_i64(VNPU_TYPE_F16, 65519))
		TH_LOG("65519 -> f16 max");
	EXPECT_EQ(0x7c00, from_i64(VNPU_TYPE_F16, 65520))
		TH_LOG("65520 -> f16 inf");
	EXPECT_EQ(0xfc00, from_i64(VNPU_TYPE_F16, -65520))
		TH_LOG("-65520 -> f16 -inf");
	EXPECT_EQ(0x6800, from_i64(VNPU_TYPE_F16, 2049))
		TH_LOG("2049 -> f16 2048 (tie to even)");
	EXPECT_EQ(0x6802, from_i64(VNPU_TYPE_F16, 2051))
		TH_LOG("2051 -> f16 2052 (tie to even)");
	EXPECT_EQ(0x4380, from_i64(VNPU_TYPE_BF16, 257))
		TH_LOG("257 -> bf16 256 (tie to even)");
	EXPECT_EQ(0x4382, from_i64(VNPU_TYPE_BF16, 259))
		TH_LOG("259 -> bf16 260 (tie to even)");
	EXPECT_EQ(0x4b800000, from_i64(VNPU_TYPE_F32, 16777217))
		TH_LOG("2^24 + 1 -> f32 2^24");
}

TEST(floats_to_integers)
{
	double below = 9223372036854774784.0;	/* the largest double below 2^63 */

	EXPECT_EQ(9223372036854774784ull, from_f64(VNPU_TYPE_I64, below))
		TH_LOG("f64 just below 2^63 -> i64 exact");
	EXPECT_EQ(INT64_MAX, from_f64(VNPU_TYPE_I64, 0x1p63))
		TH_LOG("f64 2^63 -> i64 max");
	EXPECT_EQ(INT64_MIN, (int64_t)from_f64(VNPU_TYPE_I64, -0x1p63))
		TH_LOG("f64 -2^63 -> i64 min");
	EXPECT_EQ(INT64_MIN, (int64_t)from_f64(VNPU_TYPE_I64, -0x1p64))
		TH_LOG("f64 -2^64 -> i64 min");
	EXPECT_EQ(INT64_MAX, from_f64(VNPU_TYPE_I64, 1e300))
		TH_LOG("1e300 -> i64 max");
	EXPECT_EQ(INT64_MIN, (int64_t)from_f64(VNPU_TYPE_I64, -INFINITY))
		TH_LOG("-inf -> i64 min");
	EXPECT_EQ(INT64_MAX, from_f64(VNPU_TYPE_I64, INFINITY))
		TH_LOG("inf -> i64 max");
	EXPECT_EQ(0, from_f64(VNPU_TYPE_I64, NAN))
		TH_LOG("NaN -> 0");
	EXPECT_EQ(2, from_f64(VNPU_TYPE_I64, 2.5))
		TH_LOG("2.5 -> 2 (even)");
	EXPECT_EQ(4, from_f64(VNPU_TYPE_I64, 3.5))
		TH_LOG("3.5 -> 4 (even)");
	EXPECT_EQ(-2, (int64_t)from_f64(VNPU_TYPE_I64, -2.5))
		TH_LOG("-2.5 -> -2");
	EXPECT_EQ(0, from_f64(VNPU_TYPE_I64, -0.5))
		TH_LOG("-0.5 -> 0");
	EXPECT_EQ(1, from_f64(VNPU_TYPE_I64, 0.5000000000000001))
		TH_LOG("just above 0.5 -> 1");
	EXPECT_EQ(0, from_f64(VNPU_TYPE_I64, 0x1p-1074))
		TH_LOG("the least subnormal -> 0");
	EXPECT_EQ(UINT64_MAX - 2047, from_f64(VNPU_TYPE_U64, 0x1p64 - 2048))
		TH_LOG("f64 just below 2^64 -> u64 exact");
	EXPECT_EQ(UINT64_MAX, from_f64(VNPU_TYPE_U64, 0x1p64))
		TH_LOG("2^64 -> u64 max");
	EXPECT_EQ(1ull << 63, from_f64(VNPU_TYPE_U64, 0x1p63))
		TH_LOG("2^63 -> u64 exact");
	EXPECT_EQ(0, from_f64(VNPU_TYPE_U64, -1))
		TH_LOG("-1 -> u64 0");
	EXPECT_EQ(255, from_f32(VNPU_TYPE_U8, 255.5f))
		TH_LOG("255.5 -> u8 255");
	EXPECT_EQ(254, from_f32(VNPU_TYPE_U8, 254.5f))
		TH_LOG("254.5 -> u8 254");
	EXPECT_EQ(0, from_f32(VNPU_TYPE_U8, -3))
		TH_LOG("-3 -> u8 0");
	EXPECT_EQ(0, from_f32(VNPU_TYPE_U8, NAN))
		TH_LOG("NaN -> u8 0");
	EXPECT_EQ(0x80, (uint8_t)from_f32(VNPU_TYPE_I8, -128.5f))
		TH_LOG("-128.5 -> i8 -128");
	EXPECT_EQ(0x80, (uint8_t)from_f32(VNPU_TYPE_I8, -1e30f))
		TH_LOG("-1e30 -> i8 -128");
	EXPECT_EQ(127, from_f32(VNPU_TYPE_I8, 127.49f))
		TH_LOG("127.49 -> i8 127");
	EXPECT_EQ(INT32_MAX, (uint32_t)from_f32(VNPU_TYPE_I32, 0x1p31f))
		TH_LOG("2^31 -> i32 max");
	EXPECT_EQ(0x80000000u, (uint32_t)from_f32(VNPU_TYPE_I32, -0x1p31f))
		TH_LOG("-2^31 -> i32 min");
	EXPECT_EQ(UINT32_MAX, from_f32(VNPU_TYPE_U32, 0x1p32f))
		TH_LOG("2^32 -> u32 max");
	EXPECT_EQ(1, from_f32(VNPU_TYPE_BOOL, 0.25f))
		TH_LOG("0.25 -> true");
	EXPECT_EQ(0, from_f32(VNPU_TYPE_BOOL, -0.0f))
		TH_LOG("-0 -> false");
	EXPECT_EQ(0, from_f32(VNPU_TYPE_BOOL, NAN))
		TH_LOG("NaN -> false");
	EXPECT_EQ(1, from_f32(VNPU_TYPE_BOOL, -INFINITY))
		TH_LOG("-inf -> true");
}

TEST(integers_to_integers)
{
	EXPECT_EQ(0x80, (uint8_t)from_i64(VNPU_TYPE_I8, -1000))
		TH_LOG("-1000 -> i8 -128");
	EXPECT_EQ(127, from_i64(VNPU_TYPE_I8, 1000))
		TH_LOG("1000 -> i8 127");
	EXPECT_EQ(0, from_i64(VNPU_TYPE_U64, -1))
		TH_LOG("-1 -> u64 0");
	EXPECT_EQ(INT64_MAX, from_u64(VNPU_TYPE_I64, UINT64_MAX))
		TH_LOG("u64 max -> i64 max");
	EXPECT_EQ(UINT32_MAX, from_u64(VNPU_TYPE_U32, 1ull << 40))
		TH_LOG("2^40 -> u32 max");
	EXPECT_EQ(1, from_i64(VNPU_TYPE_BOOL, -5))
		TH_LOG("-5 -> true");
	EXPECT_EQ(0, from_i64(VNPU_TYPE_BOOL, 0))
		TH_LOG("0 -> false");
	EXPECT_EQ(0x8000, (uint16_t)from_i64(VNPU_TYPE_I16, INT64_MIN))
		TH_LOG("i64 min -> i16 min");
	EXPECT_EQ(65535, from_u64(VNPU_TYPE_U16, 65535))
		TH_LOG("u16 max kept");
}

TEST(floats_to_floats)
{
	/* 1 + 2^-11 + 2^-40: through f32 it would be the f16 tie, then 1.0. */
	EXPECT_EQ(0x3c01, from_f64(VNPU_TYPE_F16, 1 + 0x1p-11 + 0x1p-40))
		TH_LOG("f64 -> f16 rounds once");
	EXPECT_EQ(0x3f81, from_f64(VNPU_TYPE_BF16, 1 + 0x1p-8 + 0x1p-40))
		TH_LOG("f64 -> bf16 rounds once");
	EXPECT_EQ(0x7fc0, from_f32(VNPU_TYPE_BF16, f32_of(0x7f800001)))
		TH_LOG("f32 NaN -> bf16 NaN");
	EXPECT_EQ(0xffc0, from_f32(VNPU_TYPE_BF16, f32_of(0xff800001)))
		TH_LOG("-NaN -> bf16 -NaN");
	EXPECT_EQ(0x7e00, from_f32(VNPU_TYPE_F16, f32_of(0x7f800001)))
		TH_LOG("f32 NaN -> f16 NaN");
	EXPECT_EQ(0x7f80, from_f32(VNPU_TYPE_BF16, f32_of(0x7f7fffff)))
		TH_LOG("f32 max -> bf16 inf");
	EXPECT_EQ(0x0001, from_f32(VNPU_TYPE_F16, 0x1p-24f))
		TH_LOG("2^-24 -> f16 least subnormal");
	EXPECT_EQ(0x0000, from_f32(VNPU_TYPE_F16, 0x1p-25f))
		TH_LOG("2^-25 -> f16 0 (tie)");
	EXPECT_EQ(0x0001, from_f32(VNPU_TYPE_F16, 0x1.8p-25f))
		TH_LOG("1.5 * 2^-25 -> f16 2^-24");
	EXPECT_EQ(0x8000, from_f32(VNPU_TYPE_F16, -0x1p-26f))
		TH_LOG("tiny negative -> f16 -0");
	EXPECT_EQ(0x0400, from_f32(VNPU_TYPE_F16, 0x1.ffcp-15f))
		TH_LOG("largest subnormal carry -> normal");
	EXPECT_EQ(0x7bff, from_f32(VNPU_TYPE_F16, 65504))
		TH_LOG("65504 -> f16 max");
	EXPECT_EQ(0x7c00, from_f32(VNPU_TYPE_F16, 65520))
		TH_LOG("65520 -> f16 inf");
	EXPECT_EQ(0xfc00, from_f32(VNPU_TYPE_F16, -INFINITY))
		TH_LOG("-inf -> f16 -inf");
	EXPECT_EQ(1, from_f64(VNPU_TYPE_F32, 0x1p-149))
		TH_LOG("2^-149 -> f32 least subnormal");
	EXPECT_EQ(0, from_f64(VNPU_TYPE_F32, 0x1p-150))
		TH_LOG("2^-150 -> f32 0 (tie)");
	EXPECT_EQ(0x7f800000, from_f64(VNPU_TYPE_F32, 1e300))
		TH_LOG("1e300 -> f32 inf");
	EXPECT_EQ(0x80000000, from_f64(VNPU_TYPE_F32, -0.0))
		TH_LOG("-0 kept");
	EXPECT_EQ(0x36a0000000000000ull, from_f32(VNPU_TYPE_F64, 0x1p-149f))
		TH_LOG("f32 subnormal -> f64");
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
TEST(random_64bit)
{
	uint64_t s = 1, u, got;
	int64_t i64;
	double d;
	int n;

	for (n = 0; n < 200000; n++) {
		u = next_random(&s) >> (next_random(&s) % 64);
		got = from_u64(VNPU_TYPE_F32, u);
		EXPECT_EQ(f32_bits((float)(long double)u), got)
			TH_LOG("u64 %llu -> f32", (unsigned long long)u);
		i64 = (int64_t)u * ((n & 1) ? -1 : 1);
		got = from_i64(VNPU_TYPE_F32, i64);
		EXPECT_EQ(f32_bits((float)(long double)i64), got)
			TH_LOG("i64 %lld -> f32", (long long)i64);
		got = from_u64(VNPU_TYPE_F64, u);
		d = (double)(long double)u;
		EXPECT_EQ(0, memcmp(&got, &d, 8))
			TH_LOG("u64 %llu -> f64", (unsigned long long)u);
		/* A double near 2^63 and 2^64 back to integers. */
		memcpy(&d, &got, 8);
		EXPECT_EQ(d < 0x1p63 ? (uint64_t)(int64_t)d : INT64_MAX, from_f64(VNPU_TYPE_I64, d))
			TH_LOG("f64 %a -> i64", d);
		if (d < 0x1p64) {
			EXPECT_EQ((uint64_t)d, from_f64(VNPU_TYPE_U64, d))
				TH_LOG("f64 %a -> u64", d);
		}
	}
}

/* Every f16 and bf16 through f32 and f64 and back (NaN as NaN). */
TEST(half_round_trips)
{
	const vnpu_element_type halves[] = { VNPU_TYPE_F16, VNPU_TYPE_BF16 };
	const vnpu_element_type wides[] = { VNPU_TYPE_F32, VNPU_TYPE_F64 };
	uint16_t h, back, inf;
	uint64_t wide;
	unsigned int b, a, w;
	bool nan;

	for (a = 0; a < 2; a++) {
		inf = halves[a] == VNPU_TYPE_F16 ? 0x7c00 : 0x7f80;
		for (w = 0; w < 2; w++) {
			for (b = 0; b < 65536; b++) {
				h = (uint16_t)b;
				wide = conv(wides[w], halves[a], &h);
				back = (uint16_t)conv(halves[a], wides[w], &wide);
				nan = halves[a] == VNPU_TYPE_F16 ?
				      (h & 0x7c00) == 0x7c00 && (h & 0x3ff) :
				      (h & 0x7f80) == 0x7f80 && (h & 0x7f);
				if (nan) {
					EXPECT_TRUE((back & 0x7fff) > inf &&
						    (back & 0x8000) == (h & 0x8000))
						TH_LOG("%s NaN %#x came back %#x",
						       vnpu_element_type_str(halves[a]), b, back);
				} else {
					EXPECT_EQ(h, back)
						TH_LOG("%s %#x came back %#x",
						       vnpu_element_type_str(halves[a]), b, back);
				}
			}
		}
	}
	/* f16 -> f32 is exact: 0x0001 is 2^-24, 0x7bff is 65504. */
	h = 1;
	EXPECT_EQ(f32_bits(0x1p-24f), conv(VNPU_TYPE_F32, VNPU_TYPE_F16, &h))
		TH_LOG("f16 subnormal");
	h = 0x7bff;
	EXPECT_EQ(f32_bits(65504), conv(VNPU_TYPE_F32, VNPU_TYPE_F16, &h))
		TH_LOG("f16 max");
}

KSFT_MAIN
