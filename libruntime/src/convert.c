// SPDX-License-Identifier: MIT
/*
 * Precision conversion between a caller's tensor and a port's type. Every
 * element is read exactly into a sign, a 64-bit magnitude and a power of
 * two (or infinity, or NaN), and written from there with one rounding:
 *
 *   to a float type   rounded to nearest, ties to even; beyond the type's
 *                     range: infinity; NaN stays a (quiet) NaN, the sign kept
 *   to an integer     rounded to nearest, ties to even, then saturated to
 *                     the type's range (infinities too); NaN gives 0
 *   to bool           1 for anything but zero and NaN
 *
 * So u64 above 2^63 and i64 reach f32, f16 and bf16 correctly rounded (no
 * detour through a double), and a double just below 2^63 reaches i64
 * exactly.
 */
#include <string.h>

#include "runtime.h"

/* An exact value: (-1)^neg * mag * 2^exp2 when FINITE. */
struct number {
	enum { NUM_FINITE, NUM_INF, NUM_NAN } kind;
	bool neg;
	uint64_t mag;
	int exp2;
};

/* A binary floating-point format: explicit mantissa and exponent bits. */
struct float_format {
	unsigned int mant_bits;
	unsigned int exp_bits;
};

static const struct float_format fmt_f16 = { 10, 5 };
static const struct float_format fmt_bf16 = { 7, 8 };
static const struct float_format fmt_f32 = { 23, 8 };
static const struct float_format fmt_f64 = { 52, 11 };

static const struct float_format *float_format(vnpu_element_type t)
{
	switch (t) {
	case VNPU_TYPE_F16: return &fmt_f16;
	case VNPU_TYPE_BF16: return &fmt_bf16;
	case VNPU_TYPE_F32: return &fmt_f32;
	case VNPU_TYPE_F64: return &fmt_f64;
	default: return NULL;
	}
}

static bool is_numeric(vnpu_element_type t)
{
	return vnpu_element_type_size(t) != 0;
}

bool vnpu_convert_supported(vnpu_element_type from, vnpu_element_type to)
{
	return from == to || (is_numeric(from) && is_numeric(to));
}

vnpu_status vnpu_convert_check(const char *name, vnpu_element_type port_type,
			       vnpu_element_type from)
{
	if (vnpu_convert_supported(from, port_type))
		return VNPU_OK;
	return vnpu_error(VNPU_INVALID_ARGUMENT,
			  "\"%s\" is %s, and a %s tensor cannot be converted to it", name,
			  vnpu_element_type_str(port_type), vnpu_element_type_str(from));
}

/* @mag / 2^@shift rounded to nearest, ties to even. */
static uint64_t round_shift(uint64_t mag, unsigned int shift)
{
	uint64_t q, rem, half;

	if (!shift)
		return mag;
	if (shift > 64)
		return 0;
	if (shift == 64)
		return mag > (1ull << 63);
	q = mag >> shift;
	rem = mag & ((1ull << shift) - 1);
	half = 1ull << (shift - 1);
	return q + (rem > half || (rem == half && (q & 1)));
}

static struct number float_decode(uint64_t bits, const struct float_format *f)
{
	int bias = (1 << (f->exp_bits - 1)) - 1;
	uint64_t mant = bits & ((1ull << f->mant_bits) - 1);
	uint64_t exp = (bits >> f->mant_bits) & ((1u << f->exp_bits) - 1);
	struct number n = { NUM_FINITE, (bits >> (f->mant_bits + f->exp_bits)) & 1, mant, 0 };

	if (exp == (1u << f->exp_bits) - 1) {
		n.kind = mant ? NUM_NAN : NUM_INF;
	} else if (exp) {
		n.mag |= 1ull << f->mant_bits;
		n.exp2 = (int)exp - bias - (int)f->mant_bits;
	} else {
		n.exp2 = 1 - bias - (int)f->mant_bits;
	}
	return n;
}

static uint64_t float_encode(const struct number *n, const struct float_format *f)
{
	int bias = (1 << (f->exp_bits - 1)) - 1, emin = 1 - bias, e, shift;
	uint64_t sign = (uint64_t)n->neg << (f->mant_bits + f->exp_bits);
	uint64_t inf = (((1ull << f->exp_bits) - 1) << f->mant_bits), q;

	if (n->kind == NUM_NAN)
		return sign | inf | (1ull << (f->mant_bits - 1));
	if (n->kind == NUM_INF)
		return sign | inf;
	if (!n->mag)
		return sign;
	e = 63 - __builtin_clzll(n->mag) + n->exp2;	/* n is in [2^e, 2^(e+1)) */
	if (e > bias)
		return sign | inf;
	/* The last mantissa bit weighs 2^((e < emin ? emin : e) - mant_bits). */
	shift = (e < emin ? emin : e) - (int)f->mant_bits - n->exp2;
	q = shift <= 0 ? n->mag << -shift : round_shift(n->mag, (unsigned int)shift);
	/*
	 * A normal q holds the implicit bit, which adds one to the exponent
	 * field; rounding up to the next power of two carries into it, also
	 * from the subnormals to the smallest normal, and to infinity.
	 */
	if (e >= emin)
		q += (uint64_t)(e + bias - 1) << f->mant_bits;
	return sign | (q < inf ? q : inf);
}

static struct number load(const void *p, vnpu_element_type t, uint64_t i)
{
	struct number n = { NUM_FINITE, false, 0, 0 };
	uint32_t u32;
	uint64_t u64;
	int64_t s;

	switch (t) {
	case VNPU_TYPE_F16: return float_decode(((const uint16_t *)p)[i], &fmt_f16);
	case VNPU_TYPE_BF16: return float_decode(((const uint16_t *)p)[i], &fmt_bf16);
	case VNPU_TYPE_F32:
		memcpy(&u32, (const char *)p + 4 * i, 4);
		return float_decode(u32, &fmt_f32);
	case VNPU_TYPE_F64:
		memcpy(&u64, (const char *)p + 8 * i, 8);
		return float_decode(u64, &fmt_f64);
	case VNPU_TYPE_U8: case VNPU_TYPE_BOOL: n.mag = ((const uint8_t *)p)[i]; return n;
	case VNPU_TYPE_U16: n.mag = ((const uint16_t *)p)[i]; return n;
	case VNPU_TYPE_U32: n.mag = ((const uint32_t *)p)[i]; return n;
	case VNPU_TYPE_U64: n.mag = ((const uint64_t *)p)[i]; return n;
	case VNPU_TYPE_I8: s = ((const int8_t *)p)[i]; break;
	case VNPU_TYPE_I16: s = ((const int16_t *)p)[i]; break;
	case VNPU_TYPE_I32: s = ((const int32_t *)p)[i]; break;
	case VNPU_TYPE_I64: s = ((const int64_t *)p)[i]; break;
	default: return n;
	}
	n.neg = s < 0;
	n.mag = n.neg ? 0 - (uint64_t)s : (uint64_t)s;
	return n;
}

/* @n rounded to an integer magnitude, ties to even; UINT64_MAX beyond it. */
static uint64_t integer_magnitude(const struct number *n)
{
	if (n->kind == NUM_NAN)
		return 0;
	if (n->kind == NUM_INF || n->exp2 >= 64 ||
	    (n->exp2 > 0 && n->mag > (UINT64_MAX >> n->exp2)))
		return n->mag || n->kind == NUM_INF ? UINT64_MAX : 0;
	if (n->exp2 >= 0)
		return n->mag << n->exp2;
	return round_shift(n->mag, (unsigned int)-n->exp2);
}

/* The largest magnitudes of @t: positive in *hi, negative in *lo. */
static void integer_range(vnpu_element_type t, uint64_t *hi, uint64_t *lo)
{
	unsigned int bits = 8 * (unsigned int)vnpu_element_type_size(t);
	bool is_signed = t == VNPU_TYPE_I8 || t == VNPU_TYPE_I16 || t == VNPU_TYPE_I32 ||
			 t == VNPU_TYPE_I64;

	if (is_signed) {
		*hi = (1ull << (bits - 1)) - 1;
		*lo = 1ull << (bits - 1);
	} else {
		*hi = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
		*lo = 0;
	}
}

static void store_integer(void *p, vnpu_element_type t, uint64_t i, const struct number *n)
{
	uint64_t mag = integer_magnitude(n), hi, lo, bits;

	if (t == VNPU_TYPE_BOOL) {
		((uint8_t *)p)[i] = n->kind == NUM_INF || (n->kind == NUM_FINITE && n->mag);
		return;
	}
	integer_range(t, &hi, &lo);
	if (n->neg && mag) {
		mag = mag < lo ? mag : lo;
		bits = 0 - mag;		/* two's complement */
	} else {
		bits = mag < hi ? mag : hi;
	}
	switch (vnpu_element_type_size(t)) {
	case 1: ((uint8_t *)p)[i] = (uint8_t)bits; break;
	case 2: ((uint16_t *)p)[i] = (uint16_t)bits; break;
	case 4: ((uint32_t *)p)[i] = (uint32_t)bits; break;
	default: ((uint64_t *)p)[i] = bits; break;
	}
}

static void store(void *p, vnpu_element_type t, uint64_t i, const struct number *n)
{
	const struct float_format *f = float_format(t);
	uint64_t bits;
	uint32_t u32;

	if (!f) {
		store_integer(p, t, i, n);
		return;
	}
	bits = float_encode(n, f);
	switch (t) {
	case VNPU_TYPE_F32:
		u32 = (uint32_t)bits;
		memcpy((char *)p + 4 * i, &u32, 4);
		break;
	case VNPU_TYPE_F64:
		memcpy((char *)p + 8 * i, &bits, 8);
		break;
	default:
		((uint16_t *)p)[i] = (uint16_t)bits;
		break;
	}
}

void vnpu_convert(void *dst, vnpu_element_type dst_type, const void *src,
		  vnpu_element_type src_type, uint64_t elems)
{
	struct number n;
	uint64_t i;

	if (dst_type == src_type) {
		memcpy(dst, src, elems * vnpu_element_type_size(src_type));
		return;
	}
	for (i = 0; i < elems; i++) {
		n = load(src, src_type, i);
		store(dst, dst_type, i, &n);
	}
}
