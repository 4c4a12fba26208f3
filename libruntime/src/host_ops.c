// SPDX-License-Identifier: MIT
/*
 * The ops a model of string tensors runs on the host (host_model.h):
 * Identity, Cast and CastLike to and from strings, StringNormalizer.
 *
 * Numbers become the text numpy's str() gives, which is what ONNX's
 * reference and test data use: the fewest significant digits that read
 * back as the same value, positional from 1e-4 up to 1e16 with at least
 * one digit after the point ("1.0", "0.039187793"), scientific otherwise
 * with at least two exponent digits ("1e-05", "1.5e+16"); "nan", "inf",
 * "-inf"; integers in decimal, booleans "True" and "False". Text becomes
 * a number as strtod() reads it, leading and trailing blanks allowed
 * ("NaN", "INF", "+INF" included); anything else is an error naming the
 * element.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_model.h"
#include "model/ir.h"

/* Longest text of a number: a sign, 17 digits, a point, zeros to 1e16. */
#define NUM_TEXT 48

/* The shortest %e text of @v that reads back as @v (as a float when @single). */
static void shortest_e(double v, bool single, char *buf, size_t size)
{
	int max = single ? 9 : 17;

	for (int p = 1; p <= max; p++) {
		snprintf(buf, size, "%.*e", p - 1, v);
		if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
			return;
	}
}

/* @v as numpy's str() writes a float (float32 when @single) into @out. */
static void float_text(double v, bool single, char *out, size_t size)
{
	char e[40], digits[24];
	int exp, nd = 0, len = 0;
	const char *p;
	double a = fabs(v);

	if (isnan(v) || isinf(v)) {
		snprintf(out, size, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
		return;
	}
	shortest_e(v, single, e, sizeof(e));
	for (p = e; *p && *p != 'e'; p++)
		if (isdigit((unsigned char)*p))
			digits[nd++] = *p;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	exp = atoi(p + 1);
	if (signbit(v))
		len += snprintf(out + len, size - (size_t)len, "-");
	if (a != 0 && (a < 1e-4 || a >= 1e16)) {
		snprintf(out + len, size - (size_t)len, "%c%s%se%c%02d", digits[0],
			 nd > 1 ? "." : "", digits + 1, exp < 0 ? '-' : '+', abs(exp));
		return;
	}
	if (a == 0)
		exp = 0;
	if (exp < 0) {
		out[len++] = '0';
		out[len++] = '.';
		for (int i = -1; i > exp; i--)
			out[len++] = '0';
		snprintf(out + len, size - (size_t)len, "%s", digits);
		return;
	}
	for (int i = 0; i <= exp; i++)
		out[len++] = i < nd ? digits[i] : '0';
	out[len++] = '.';
	snprintf(out + len, size - (size_t)len, "%s", exp + 1 < nd ? digits + exp + 1 : "0");
}

/* Element @i of numeric @t as text into @buf. */
static void elem_text(const struct vnpu_tensor_handle *t, uint64_t i, char *buf, size_t size)
{
	if (t->type == VNPU_TYPE_BOOL)
		snprintf(buf, size, "%s", ((const uint8_t *)t->data)[i] ? "True" : "False");
	else if (t->type == VNPU_TYPE_U64)
		snprintf(buf, size, "%llu", (unsigned long long)((const uint64_t *)t->data)[i]);
	else if (vnpu_type_is_float(t->type))
		float_text(vnpu_elem_get_f(t->data, t->type, (int64_t)i), t->type != VNPU_TYPE_F64,
			   buf, size);
	else
		snprintf(buf, size, "%lld", (long long)vnpu_elem_get_i(t->data, t->type,
								       (int64_t)i));
}

/* The integer range of @type, for text read into it. */
static void int_range(vnpu_element_type type, long long *lo, unsigned long long *hi)
{
	size_t bits = vnpu_element_type_size(type) * 8;
	bool is_signed = type == VNPU_TYPE_I8 || type == VNPU_TYPE_I16 ||
			 type == VNPU_TYPE_I32 || type == VNPU_TYPE_I64;

	*lo = is_signed ? (bits == 64 ? LLONG_MIN : -(1ll << (bits - 1))) : 0;
	*hi = bits == 64 ? (is_signed ? (unsigned long long)LLONG_MAX : ULLONG_MAX) :
			   (1ull << (bits - (is_signed ? 1 : 0))) - 1;
}

/* Whether @end (where a number read from @s stopped) leaves only blanks. */
static bool rest_blank(const char *s, const char *end)
{
	if (end == s)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	return !*end;
}

/* Text element @i of @src into element @i of numeric @dst. */
static vnpu_status text_elem(const struct vnpu_tensor_handle *src, uint64_t i,
			     struct vnpu_tensor_handle *dst)
{
	const char *s = vnpu_string_get(src, i);
	char *end = NULL;

	errno = 0;
	if (strchr(s, 'x') || strchr(s, 'X'))
		goto bad;	/* strtod's hexadecimal floats are not numpy's */
	if (dst->type == VNPU_TYPE_F32) {
		float f = strtof(s, &end);

		if (!rest_blank(s, end))
			goto bad;
		((float *)dst->data)[i] = f;
	} else if (vnpu_type_is_float(dst->type)) {
		double d = strtod(s, &end);

		if (!rest_blank(s, end))
			goto bad;
		vnpu_elem_set_f(dst->data, dst->type, (int64_t)i, d);
	} else if (dst->type == VNPU_TYPE_BOOL) {
		goto bad;
	} else {
		long long lo;
		unsigned long long hi, u;
		bool neg;

		int_range(dst->type, &lo, &hi);
		while (isspace((unsigned char)*s))
			s++;
		neg = *s == '-';
		u = strtoull(s + neg, &end, 10);
		if (!rest_blank(s + neg, end) || errno || s[neg] == '-' || s[neg] == '+' ||
		    (neg && u > (unsigned long long)-(lo + 1) + 1) || (!neg && u > hi))
			goto bad;
		if (dst->type == VNPU_TYPE_U64)
			((uint64_t *)dst->data)[i] = u;
		else
			vnpu_elem_set_i(dst->data, dst->type, (int64_t)i,
					neg ? (int64_t)(0 - u) : (int64_t)u);
	}
	return VNPU_OK;
bad:
	return vnpu_error(VNPU_INVALID_ARGUMENT, "element %llu, \"%.40s\", is not a%s %s",
			  (unsigned long long)i, vnpu_string_get(src, i),
			  vnpu_type_is_float(dst->type) ? "" : "n", vnpu_element_type_str(dst->type));
}

static vnpu_status cast(const struct vnpu_tensor_handle *x, vnpu_element_type to,
			struct vnpu_tensor_handle **out)
{
	struct vnpu_tensor_handle *y = NULL;
	char text[NUM_TEXT];
	vnpu_status st;

	if (x->type != VNPU_TYPE_STRING && to != VNPU_TYPE_STRING &&
	    !vnpu_convert_supported(x->type, to))
		return vnpu_error(VNPU_UNSUPPORTED, "cast from %s to %s",
				  vnpu_element_type_str(x->type), vnpu_element_type_str(to));
	st = vnpu_tensor_create(to, &x->shape, &y);
	for (uint64_t i = 0; !st && i < x->elems; i++) {
		if (x->type == VNPU_TYPE_STRING && to == VNPU_TYPE_STRING) {
			const char *s = vnpu_string_get(x, i);

			st = vnpu_string_set(y, i, s, strlen(s));
		} else if (to == VNPU_TYPE_STRING) {
			elem_text(x, i, text, sizeof(text));
			st = vnpu_string_set(y, i, text, strlen(text));
		} else if (x->type == VNPU_TYPE_STRING) {
			st = text_elem(x, i, y);
		}
	}
	if (!st && x->type != VNPU_TYPE_STRING && to != VNPU_TYPE_STRING)
		vnpu_convert(y->data, to, x->data, x->type, x->elems);
	if (st) {
		vnpu_tensor_free(y);
		return st;
	}
	*out = y;
	return VNPU_OK;
}

/* ---- StringNormalizer ---- */

struct normalizer {
	const struct vnpu_attr *stopwords;	/* or NULL */
	bool case_sensitive;
	int change;				/* 0, 'L' or 'U' */
};

/* ASCII letters only compare without case: other bytes must match. */
static bool is_stopword(const struct normalizer *nz, const char *s)
{
	for (size_t i = 0; nz->stopwords && i < nz->stopwords->n; i++) {
		const char *w = nz->stopwords->strings[i];

		if (nz->case_sensitive ? !strcmp(s, w) : !strcasecmp(s, w))
			return true;
	}
	return false;
}

static vnpu_status normalize_into(const struct normalizer *nz,
				  const struct vnpu_tensor_handle *x,
				  struct vnpu_tensor_handle *y)
{
	uint64_t k = 0;
	vnpu_status st = VNPU_OK;

	for (uint64_t i = 0; !st && i < x->elems; i++) {
		const char *s = vnpu_string_get(x, i);
		size_t len = strlen(s);
		char *text;

		if (is_stopword(nz, s))
			continue;
		st = vnpu_string_set(y, k, s, len);
		text = ((char **)y->data)[k++];
		for (size_t c = 0; text && nz->change && c < len; c++)
			text[c] = (char)(nz->change == 'U' ? toupper((unsigned char)text[c]) :
							     tolower((unsigned char)text[c]));
	}
	return st;
}

static vnpu_status string_normalizer(const struct vnpu_node *n,
				     const struct vnpu_tensor_handle *x,
				     struct vnpu_tensor_handle **out)
{
	const char *action = vnpu_attr_str(n, "case_change_action", "NONE");
	const char *locale = vnpu_attr_str(n, "locale", "");
	struct normalizer nz = {
		.stopwords = vnpu_node_attr(n, "stopwords"),
		.case_sensitive = vnpu_attr_int(n, "is_case_sensitive", 0) != 0,
		.change = !strcmp(action, "UPPER") ? 'U' : !strcmp(action, "LOWER") ? 'L' : 0,
	};
	struct vnpu_tensor_handle *y = NULL;
	vnpu_shape shape = x->shape;
	uint64_t kept = 0;
	vnpu_status st;

	if (x->type != VNPU_TYPE_STRING)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "input of %s, not string",
				  vnpu_element_type_str(x->type));
	if (*locale && strcmp(locale, "C") && strncmp(locale, "en", 2))
		return vnpu_error(VNPU_UNSUPPORTED, "locale '%s': the host changes the case of "
				  "ASCII letters only (C or en_*)", locale);
	if (shape.rank != 1 && !(shape.rank == 2 && shape.dims[0] == 1))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "input of rank %u: [C] or [1, C] only",
				  shape.rank);
	for (uint64_t i = 0; i < x->elems; i++)
		kept += !is_stopword(&nz, vnpu_string_get(x, i));
	/* Nothing left: one empty string (ONNX's StringNormalizer). */
	shape.dims[shape.rank - 1] = kept ? (int64_t)kept : 1;
	st = vnpu_tensor_create(VNPU_TYPE_STRING, &shape, &y);
	if (!st && kept)
		st = normalize_into(&nz, x, y);
	if (st) {
		vnpu_tensor_free(y);
		return st;
	}
	*out = y;
	return VNPU_OK;
}

/* ---- dispatch ---- */

bool vnpu_host_runs(const char *op)
{
	return !strcmp(op, "Identity") || !strcmp(op, "Cast") || !strcmp(op, "CastLike") ||
	       !strcmp(op, "StringNormalizer");
}

vnpu_status vnpu_host_run_node(const struct vnpu_node *n, struct vnpu_tensor_handle **vals)
{
	struct vnpu_tensor_handle *x, *like, *y = NULL;
	vnpu_status st;

	x = n->num_inputs ? vals[n->inputs[0]] : NULL;
	like = n->num_inputs > 1 && n->inputs[1] >= 0 ? vals[n->inputs[1]] : NULL;
	if (!x || n->num_outputs < 1 || n->outputs[0] < 0 ||
	    (!strcmp(n->op, "CastLike") && !like))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "an input or output is missing");
	if (!strcmp(n->op, "Identity"))
		y = vnpu_tensor_ref(x), st = VNPU_OK;
	else if (!strcmp(n->op, "Cast"))
		st = cast(x, (vnpu_element_type)vnpu_attr_int(n, "to", 0), &y);
	else if (!strcmp(n->op, "CastLike"))
		st = cast(x, like->type, &y);
	else
		st = string_normalizer(n, x, &y);
	if (st)
		return st;
	vnpu_tensor_free(vals[n->outputs[0]]);
	vals[n->outputs[0]] = y;
	return VNPU_OK;
}
