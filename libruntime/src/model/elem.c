// SPDX-License-Identifier: MIT
/* Element access of every supported type, for host evaluation of constants. */
#include <math.h>
#include <string.h>

#include "ir.h"

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	uint32_t bits;
	float f;

	if (exp == 0x1f) {
		bits = sign | 0x7f800000u | (mant << 13);
	} else if (exp) {
		bits = sign | ((exp + 112) << 23) | (mant << 13);
	} else if (mant) {
		f = ldexpf((float)mant, -24);
		return sign ? -f : f;
	} else {
		bits = sign;
	}
	memcpy(&f, &bits, 4);
	return f;
}

static uint16_t float_to_half(float f)
{
	uint32_t bits, sign, mant;
	int32_t exp;

	memcpy(&bits, &f, 4);
	sign = (bits >> 16) & 0x8000;
	exp = (int32_t)((bits >> 23) & 0xff) - 127 + 15;
	mant = bits & 0x7fffff;
	if (((bits >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	if (exp >= 0x1f)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		uint32_t shift, half, rounded;

		if (exp < -10)
			return (uint16_t)sign;
		mant |= 0x800000;
		shift = (uint32_t)(14 - exp);
		half = 1u << (shift - 1);
		rounded = mant >> shift;
		if ((mant & ((1u << shift) - 1)) > half ||
		    ((mant & ((1u << shift) - 1)) == half && (rounded & 1)))
			rounded++;
		return (uint16_t)(sign | rounded);
	}
	{
		uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
		uint32_t rest = mant & 0x1fff;

		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++;
		return (uint16_t)h;
	}
}

static float bf16_to_float(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

static uint16_t float_to_bf16(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, 4);
	if ((bits & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((bits >> 16) | 0x40);
	bits += 0x7fff + ((bits >> 16) & 1);
	return (uint16_t)(bits >> 16);
}

uint16_t vnpu_cast_f32_to_bf16(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, 4);
	return (uint16_t)(bits >> 16);
}

bool vnpu_type_is_float(vnpu_element_type type)
{
	return type == VNPU_TYPE_F32 || type == VNPU_TYPE_F64 || type == VNPU_TYPE_F16 ||
	       type == VNPU_TYPE_BF16;
}

const char *vnpu_onnx_type_name(int32_t t)
{
	/* The ONNX types libvnpu has no element type for. */
	static const char *const others[] = {
		[VNPU_TYPE_STRING] = "string", [14] = "complex64", [15] = "complex128",
		[17] = "float8e4m3fn", [18] = "float8e4m3fnuz", [19] = "float8e5m2",
		[20] = "float8e5m2fnuz", [21] = "uint4", [22] = "int4", [23] = "float4e2m1",
	};

	if (t > VNPU_TYPE_UNDEFINED && vnpu_element_type_size((vnpu_element_type)t))
		return vnpu_element_type_str((vnpu_element_type)t);
	if (t < 0 || (size_t)t >= sizeof(others) / sizeof(others[0]))
		return NULL;
	return others[t];
}

double vnpu_elem_get_f(const void *data, vnpu_element_type type, int64_t i)
{
	switch (type) {
	case VNPU_TYPE_F32: return ((const float *)data)[i];
	case VNPU_TYPE_F64: return ((const double *)data)[i];
	case VNPU_TYPE_F16: return half_to_float(((const uint16_t *)data)[i]);
	case VNPU_TYPE_BF16: return bf16_to_float(((const uint16_t *)data)[i]);
	case VNPU_TYPE_U64: return (double)((const uint64_t *)data)[i];
	default: return (double)vnpu_elem_get_i(data, type, i);
	}
}

int64_t vnpu_elem_get_i(const void *data, vnpu_element_type type, int64_t i)
{
	switch (type) {
	case VNPU_TYPE_U8: case VNPU_TYPE_BOOL: return ((const uint8_t *)data)[i];
	case VNPU_TYPE_I8: return ((const int8_t *)data)[i];
	case VNPU_TYPE_U16: return ((const uint16_t *)data)[i];
	case VNPU_TYPE_I16: return ((const int16_t *)data)[i];
	case VNPU_TYPE_I32: return ((const int32_t *)data)[i];
	case VNPU_TYPE_U32: return ((const uint32_t *)data)[i];
	case VNPU_TYPE_I64: return ((const int64_t *)data)[i];
	case VNPU_TYPE_U64: return (int64_t)((const uint64_t *)data)[i];
	default: {
		double d = vnpu_elem_get_f(data, type, i);

		if (isnan(d))
			return 0;
		if (d >= 9.2e18)
			return INT64_MAX;
		if (d <= -9.2e18)
			return INT64_MIN;
		return (int64_t)d;
	}
	}
}

void vnpu_elem_set_f(void *data, vnpu_element_type type, int64_t i, double v)
{
	switch (type) {
	case VNPU_TYPE_F32: ((float *)data)[i] = (float)v; break;
	case VNPU_TYPE_F64: ((double *)data)[i] = v; break;
	case VNPU_TYPE_F16: ((uint16_t *)data)[i] = float_to_half((float)v); break;
	case VNPU_TYPE_BF16: ((uint16_t *)data)[i] = float_to_bf16((float)v); break;
	case VNPU_TYPE_BOOL: ((uint8_t *)data)[i] = v != 0; break;
	case VNPU_TYPE_U64:
		((uint64_t *)data)[i] = v <= 0 || isnan(v) ? 0 : v >= 1.8e19 ? UINT64_MAX : (uint64_t)v;
		break;
	default:
		vnpu_elem_set_i(data, type, i,
				isnan(v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v);
		break;
	}
}

void vnpu_elem_set_i(void *data, vnpu_element_type type, int64_t i, int64_t v)
{
	switch (type) {
	case VNPU_TYPE_U8: ((uint8_t *)data)[i] = (uint8_t)v; break;
	case VNPU_TYPE_BOOL: ((uint8_t *)data)[i] = v != 0; break;
	case VNPU_TYPE_I8: ((int8_t *)data)[i] = (int8_t)v; break;
	case VNPU_TYPE_U16: ((uint16_t *)data)[i] = (uint16_t)v; break;
	case VNPU_TYPE_I16: ((int16_t *)data)[i] = (int16_t)v; break;
	case VNPU_TYPE_I32: ((int32_t *)data)[i] = (int32_t)v; break;
	case VNPU_TYPE_U32: ((uint32_t *)data)[i] = (uint32_t)v; break;
	case VNPU_TYPE_I64: ((int64_t *)data)[i] = v; break;
	case VNPU_TYPE_U64: ((uint64_t *)data)[i] = (uint64_t)v; break;
	default: vnpu_elem_set_f(data, type, i, (double)v); break;
	}
}
