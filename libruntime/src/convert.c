// SPDX-License-Identifier: MIT
/*
 * Precision conversion between a caller's tensor and a port's type, as
 * the seeds' blobCopy: integers go through int64 (saturating into the
 * target's range), anything with a float side through double (rounded to
 * nearest for integer targets, NaN to 0).
 */
#include <math.h>
#include <string.h>

#include "runtime.h"

static bool is_float(vnpu_element_type t)
{
	return t == VNPU_TYPE_F32 || t == VNPU_TYPE_F64 || t == VNPU_TYPE_F16 ||
	       t == VNPU_TYPE_BF16;
}

static bool is_numeric(vnpu_element_type t)
{
	return vnpu_element_type_size(t) != 0;
}

bool vnpu_convert_supported(vnpu_element_type from, vnpu_element_type to)
{
	return from == to || (is_numeric(from) && is_numeric(to));
}

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
	float f;

	if (exp == 0x1f) {
		bits = sign | 0x7f800000 | (mant << 13);
	} else if (exp) {
		bits = sign | ((exp + 112) << 23) | (mant << 13);
	} else {
		f = ldexpf((float)mant, -24);
		return sign ? -f : f;
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* Round to nearest even, overflow to infinity, keep NaN a NaN. */
static uint16_t float_to_half(float f)
{
	uint32_t bits, sign, mant, exp;
	uint32_t half, round;

	memcpy(&bits, &f, sizeof(bits));
	sign = (bits >> 16) & 0x8000;
	exp = (bits >> 23) & 0xff;
	mant = bits & 0x7fffff;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	if (exp > 142)
		return (uint16_t)(sign | 0x7c00);
	if (exp < 113) {
		/* Subnormal half (or zero): shift the full mantissa in. */
		if (exp < 102)
			return (uint16_t)sign;
		mant |= 0x800000;
		half = mant >> (126 - exp);
		round = mant & ((1u << (126 - exp)) - 1);
		if (round > (1u << (125 - exp)) ||
		    (round == (1u << (125 - exp)) && (half & 1)))
			half++;
		return (uint16_t)(sign | half);
	}
	half = ((exp - 112) << 10) | (mant >> 13);
	round = mant & 0x1fff;
	if (round > 0x1000 || (round == 0x1000 && (half & 1)))
		half++;
	return (uint16_t)(sign | half);
}

static double get_f(const void *p, vnpu_element_type t, uint64_t i)
{
	uint32_t bits;
	float f;

	switch (t) {
	case VNPU_TYPE_F32: return ((const float *)p)[i];
	case VNPU_TYPE_F64: return ((const double *)p)[i];
	case VNPU_TYPE_F16: return half_to_float(((const uint16_t *)p)[i]);
	case VNPU_TYPE_BF16:
		bits = (uint32_t)((const uint16_t *)p)[i] << 16;
		memcpy(&f, &bits, sizeof(f));
		return f;
	default: break;
	}
	return 0;
}

static int64_t get_i(const void *p, vnpu_element_type t, uint64_t i)
{
	switch (t) {
	case VNPU_TYPE_U8: case VNPU_TYPE_BOOL: return ((const uint8_t *)p)[i];
	case VNPU_TYPE_I8: return ((const int8_t *)p)[i];
	case VNPU_TYPE_U16: return ((const uint16_t *)p)[i];
	case VNPU_TYPE_I16: return ((const int16_t *)p)[i];
	case VNPU_TYPE_I32: return ((const int32_t *)p)[i];
	case VNPU_TYPE_U32: return ((const uint32_t *)p)[i];
	case VNPU_TYPE_I64: return ((const int64_t *)p)[i];
	case VNPU_TYPE_U64:
		return ((const uint64_t *)p)[i] > INT64_MAX ? INT64_MAX :
		       (int64_t)((const uint64_t *)p)[i];
	default: break;
	}
	return 0;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void set_i(void *p, vnpu_element_type t, uint64_t i, int64_t v)
{
	switch (t) {
	case VNPU_TYPE_U8: ((uint8_t *)p)[i] = (uint8_t)clamp(v, 0, UINT8_MAX); break;
	case VNPU_TYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case VNPU_TYPE_I8: ((int8_t *)p)[i] = (int8_t)clamp(v, INT8_MIN, INT8_MAX); break;
	case VNPU_TYPE_U16: ((uint16_t *)p)[i] = (uint16_t)clamp(v, 0, UINT16_MAX); break;
	case VNPU_TYPE_I16: ((int16_t *)p)[i] = (int16_t)clamp(v, INT16_MIN, INT16_MAX); break;
	case VNPU_TYPE_I32: ((int32_t *)p)[i] = (int32_t)clamp(v, INT32_MIN, INT32_MAX); break;
	case VNPU_TYPE_U32: ((uint32_t *)p)[i] = (uint32_t)clamp(v, 0, UINT32_MAX); break;
	case VNPU_TYPE_I64: ((int64_t *)p)[i] = v; break;
	case VNPU_TYPE_U64: ((uint64_t *)p)[i] = v < 0 ? 0 : (uint64_t)v; break;
	default: break;
	}
}

static void set_f(void *p, vnpu_element_type t, uint64_t i, double v)
{
	uint32_t bits;
	float f;

	switch (t) {
	case VNPU_TYPE_F32: ((float *)p)[i] = (float)v; return;
	case VNPU_TYPE_F64: ((double *)p)[i] = v; return;
	case VNPU_TYPE_F16: ((uint16_t *)p)[i] = float_to_half((float)v); return;
	case VNPU_TYPE_BF16:
		f = (float)v;
		memcpy(&bits, &f, sizeof(bits));
		bits += 0x7fff + ((bits >> 16) & 1);
		((uint16_t *)p)[i] = (uint16_t)(bits >> 16);
		return;
	default:
		break;
	}
	if (isnan(v))
		v = 0;
	if (t == VNPU_TYPE_BOOL)
		set_i(p, t, i, v != 0);
	else if (v >= 9.2e18)
		set_i(p, t, i, INT64_MAX);
	else if (v <= -9.2e18)
		set_i(p, t, i, INT64_MIN);
	else
		set_i(p, t, i, (int64_t)nearbyint(v));
}

void vnpu_convert(void *dst, vnpu_element_type dst_type, const void *src,
		  vnpu_element_type src_type, uint64_t elems)
{
	uint64_t i;

	if (dst_type == src_type) {
		memcpy(dst, src, elems * vnpu_element_type_size(src_type));
	} else if (!is_float(dst_type) && !is_float(src_type)) {
		for (i = 0; i < elems; i++)
			set_i(dst, dst_type, i, get_i(src, src_type, i));
	} else if (is_float(src_type)) {
		for (i = 0; i < elems; i++)
			set_f(dst, dst_type, i, get_f(src, src_type, i));
	} else {
		for (i = 0; i < elems; i++)
			set_f(dst, dst_type, i, (double)get_i(src, src_type, i));
	}
}
