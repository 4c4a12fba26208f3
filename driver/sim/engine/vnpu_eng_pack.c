// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Weight packing for the compiler: the panels of packed GEMM, CONV and
 * int8 CONV weights (enum vnpu_pack_layout) and the depth pairs of bf16
 * ones. Integer only, as the rest of the integer half (vnpu_engine.c).
 */
#include "vnpu_eng_priv.h"

__u64 vnpu_eng_packed_size(__u32 layout, __u64 groups, __u64 rows,
			   __u64 cols)
{
	__u64 panels, r;

	if (rows > ENG_MAX_DIM || cols > ENG_MAX_DIM || groups > ENG_MAX_DIM)
		return 0;
	switch (layout) {
	case VNPU_PACK_GEMM_B:
		if (groups != 1)
			return 0;
		panels = eng_div_up(cols, ENG_NR);
		r = panels * ENG_NR * rows;
		break;
	case VNPU_PACK_CONV_W:
		panels = eng_div_up(rows, ENG_MR);
		r = groups * panels * ENG_MR;
		if (r > ENG_MAX_DIM)
			return 0;
		r *= cols;
		break;
	case VNPU_PACK_CONV_LANES:
		panels = eng_div_up(rows, ENG_LANES_NR);
		r = groups * panels * ENG_LANES_NR;
		if (r > ENG_MAX_DIM)
			return 0;
		r *= cols;
		break;
	case VNPU_PACK_QCONV_W:
	case VNPU_PACK_QCONV_SPLIT:
		r = groups * eng_div_up(rows, ENG_QMR) * ENG_QMR;
		if (r > ENG_MAX_DIM)
			return 0;
		/* An entry's offset (ENG_QPAIR_OFF()) fits 32 bits. */
		if (layout == VNPU_PACK_QCONV_SPLIT &&
		    eng_q4(cols) >= ENG_QSPLIT_K4_MAX)
			return 0;
		if (layout == VNPU_PACK_QCONV_SPLIT)
			r = r * (eng_q4(cols) + 4) +
			    r / ENG_QMR * eng_qsplit_table(eng_q4(cols));
		else
			r *= eng_q4(cols) + 4;
		break;
	case VNPU_PACK_QW4_W:
		/* W's rows, then U from 64 bytes on: 36 points a 64 bytes. */
		if (groups != 1 || rows % 16 || cols % 9 ||
		    rows / 16 * eng_div_up(cols / 9, 2) > ENG_MAX_NUMEL / (36 * 64))
			return 0;
		r = eng_qw4_uoff(eng_div_up(rows, ENG_QMR) * ENG_QMR, eng_q4(cols)) +
		    36 * (rows / 16) * eng_div_up(cols / 9, 2) * 64;
		break;
	case VNPU_PACK_QWINO_W:
		/* Bytes: 64 for each row and channel pair of the 3x3s. */
		r = groups * eng_qwino_mp(rows);
		if (r > ENG_MAX_DIM || cols % 9)
			return 0;
		r *= eng_div_up(cols / 9, 2) * ENG_QWINO_PAIR;
		break;
	case VNPU_PACK_WINO_W:
	case VNPU_PACK_WINO2_W:
	case VNPU_PACK_WINO42_W:
		panels = eng_div_up(rows, ENG_MR);
		r = groups * panels * ENG_MR;
		if (r > ENG_MAX_DIM || cols % 9)
			return 0;
		r *= cols / 9 * (layout == VNPU_PACK_WINO_W ? ENG_WINO_XI :
				 layout == VNPU_PACK_WINO42_W ? ENG_WINO42_XI :
				 ENG_WINO2_XI);
		break;
	default:
		return 0;
	}
	return r > ENG_MAX_NUMEL ? 0 : r;
}

/*
 * %VNPU_PACK_QCONV_W: each group's rows padded to ENG_QMR, each row's
 * depth to a multiple of 4 with zeros, then the sum of every row.
 */
static int eng_pack_qconv(const __s8 *s, __u64 groups, __u64 rows,
			  __u64 cols, __s8 *d)
{
	__u64 mp = eng_div_up(rows, ENG_QMR) * ENG_QMR, k4 = eng_q4(cols);
	__u8 *sums = (__u8 *)d + groups * mp * k4;
	__u64 g, r, k;

	for (g = 0; g < groups; g++, s += rows * cols)
		for (r = 0; r < mp; r++, d += k4) {
			/* Rows past @rows: zeros only. */
			__u64 nk = r < rows ? cols : 0;
			__u32 sum = 0;

			for (k = 0; k < nk; k++) {
				__s8 v = s[r * cols + k];

				d[k] = v;
				sum += (__u32)(__s32)v;
			}
			for (; k < k4; k++)
				d[k] = 0;
			for (k = 0; k < 4; k++)
				*sums++ = (__u8)(sum >> (8 * k));
		}
	return 0;
}

/*
 * Whether vpmaddubsw's 16-bit sum of two u8 inputs by the weights @w0,
 * @w1 can saturate: their sum is above 128 or below -128 (255 * 129 >
 * 32767; weights of two signs sum to no more than either).
 */
static int eng_qpair_wide(__s8 w0, __s8 w1)
{
	__s32 s = (__s32)w0 + w1;

	return s > 128 || s < -128;
}

/* The largest size of a step (eng_qstep_lanes()): two weights of -128. */
#define ENG_QSTEP_MAX	256

/*
 * Step @a's 16-bit lanes (two weights each, rows @k4 apart at @w) for rows
 * [@r0, @r0 + @nr): per row and half, the sum of its weights' positive
 * parts and that of their negative parts' magnitudes (past 128 as 129: no
 * pair fits with them), rows past @nr zero, a byte each (row r's at byte
 * 4 r % 8 of word r / 2: positive, negative, then half 1's). Returns the
 * step's size, the largest of those sums.
 */
struct eng_qstep_lanes {
	__u64 v[ENG_QS_ROWS / 2];
};

static __s32 eng_qstep_lanes(const __s8 *w, __u64 k4, __u64 r0, __u64 nr, __u64 a,
			     struct eng_qstep_lanes *l)
{
	__s32 size = 0, ps, ng, x0, x1;
	__u64 r, h, v = 0;

	for (r = 0; r < ENG_QS_ROWS; r++) {
		for (h = 0; h < 2 && r < nr; h++) {
			const __s8 *p = w + (r0 + r) * k4 + 4 * a + 2 * h;

			x0 = p[0];
			x1 = p[1];
			ps = (x0 > 0 ? x0 : 0) + (x1 > 0 ? x1 : 0);
			ng = ps - x0 - x1;
			size = size > ps ? size : ps;
			size = size > ng ? size : ng;
			v |= (__u64)(ps < 129 ? ps : 129) << (32 * (r % 2) + 16 * h) |
			     (__u64)(ng < 129 ? ng : 129) << (32 * (r % 2) + 16 * h + 8);
		}
		if (r % 2) {
			l->v[r / 2] = v;
			v = 0;
		}
	}
	return size;
}

/*
 * Whether two steps sum exactly in 16 bits: each lane's four u8 x i8
 * products within +-32767 (255 * 128), so each sign's weights within 128.
 * The bytes summed in 16 bits, even and odd ones apart: sums of at most
 * 258, each past 128 setting its top bit once 0x7f7f is added, with no
 * carry into the next.
 */
static int eng_qstep_fits(const struct eng_qstep_lanes *a, const struct eng_qstep_lanes *b)
{
	const __u64 lo = 0x00ff00ff00ff00ffull, bias = 0x7f7f7f7f7f7f7f7full;
	__u64 bad = 0;
	int i;

	for (i = 0; i < ENG_QS_ROWS / 2; i++)
		bad |= ((a->v[i] & lo) + (b->v[i] & lo) + bias) |
		       ((a->v[i] >> 8 & lo) + (b->v[i] >> 8 & lo) + bias);
	return !(bad & 0x8000800080008000ull);
}

/*
 * The step schedule of the tile's rows at @w (@rows of them, @k4 apart:
 * eng_qsched_bytes() at @s): per group and chunk, from the largest step
 * on, each paired with the smallest free one it sums exactly with (most
 * steps of resnet50_qdq pair so); the pairs by their first step, then
 * the steps left alone. Each step's lanes are summed once
 * (eng_qstep_lanes()), not again for every pair tried; the steps are
 * ordered by size with a count of each size.
 */
static void eng_qsched(const __s8 *w, __u64 k4, __u64 rows, __u8 *s)
{
	__u64 steps = k4 / 4, nch = eng_div_up(steps, ENG_QK4_CHUNK), g, c;

	for (g = 0; g < ENG_QMR / ENG_QS_ROWS; g++)
		for (c = 0; c < nch; c++) {
			__u64 j0 = c * ENG_QK4_CHUNK, n = eng_min(ENG_QK4_CHUNK, steps - j0);
			__u64 r0 = g * ENG_QS_ROWS;
			__u64 nr = rows > r0 ? eng_min(ENG_QS_ROWS, rows - r0) : 0;
			__u8 *o = s + (g * nch + c) * (1 + ENG_QK4_CHUNK), *ord = o + 1;
			__u8 idx[ENG_QK4_CHUNK], used[ENG_QK4_CHUNK], one[ENG_QK4_CHUNK];
			__u8 at[ENG_QSTEP_MAX + 1];
			struct eng_qstep_lanes lanes[ENG_QK4_CHUNK];
			__u16 size[ENG_QK4_CHUNK];
			__u64 i, j, k, np = 0, ns = 0;

			for (j = 0; j < ENG_QK4_CHUNK; j++)
				ord[j] = 0;
			for (j = 0; j <= ENG_QSTEP_MAX; j++)
				at[j] = 0;
			for (j = 0; j < n; j++) {
				size[j] = (__u16)eng_qstep_lanes(w, k4, r0, nr, j0 + j,
								 &lanes[j]);
				used[j] = 0;
				at[size[j]]++;
			}
			/* By size, the largest first, in step order within a size. */
			for (i = ENG_QSTEP_MAX + 1, k = 0; i-- > 0;) {
				j = at[i];
				at[i] = (__u8)k;
				k += j;
			}
			for (j = 0; j < n; j++)
				idx[at[size[j]]++] = (__u8)j;
			for (i = 0; i < n; i++) {
				__u64 a = idx[i];

				if (used[a])
					continue;
				used[a] = 1;
				for (k = n; k-- > i + 1;) {
					__u64 b = idx[k];

					if (!used[b] && eng_qstep_fits(&lanes[a], &lanes[b])) {
						used[b] = 1;
						ord[2 * np] = (__u8)(a < b ? a : b);
						ord[2 * np + 1] = (__u8)(a < b ? b : a);
						np++;
						break;
					}
				}
				if (k == i)
					one[ns++] = (__u8)a;
			}
			/* The pairs by their first step: the inputs in order. */
			for (i = 1; i < np; i++) {
				__u8 x0 = ord[2 * i], x1 = ord[2 * i + 1];

				for (j = i; j > 0 && ord[2 * (j - 1)] > x0; j--) {
					ord[2 * j] = ord[2 * (j - 1)];
					ord[2 * j + 1] = ord[2 * (j - 1) + 1];
				}
				ord[2 * j] = x0;
				ord[2 * j + 1] = x1;
			}
			for (i = 0; i < ns; i++)
				ord[2 * np + i] = one[i];
			o[0] = (__u8)np;
		}
}

static void eng_put32(__u8 *d, __u32 v)
{
	__u64 k;

	for (k = 0; k < 4; k++)
		d[k] = (__u8)(v >> (8 * k));
}

/*
 * %VNPU_PACK_QCONV_SPLIT from %VNPU_PACK_QCONV_W's rows at @d: per tile
 * of ENG_QMR rows, its pairs eng_qpair_wide() takes out of the rows and
 * into its table in runs of a row each (the end of each row's run), as
 * offsets in a packed block (ENG_QPAIR_OFF()), unless it has more than
 * eng_qsplit_cap() of them; and the step schedule of the rows left.
 */
static void eng_pack_qsplit(__s8 *d, __u64 groups, __u64 rows, __u64 cols)
{
	__u64 mp = eng_div_up(rows, ENG_QMR) * ENG_QMR, k4 = eng_q4(cols);
	__u64 cap = eng_qsplit_cap(k4), tiles = groups * mp / ENG_QMR;
	__u8 *tab = (__u8 *)d + groups * mp * (k4 + 4);
	__u64 t, k, n;

	for (t = 0; t < tiles; t++, d += ENG_QMR * k4, tab += eng_qsplit_table(k4)) {
		for (k = 0, n = 0; k < ENG_QMR * k4; k += 2)
			n += eng_qpair_wide(d[k], d[k + 1]);
		__u8 *x = tab + eng_qsplit_pairs(k4);

		for (k = 0; k < eng_qsplit_table(k4); k++)
			tab[k] = 0;
		eng_put32(tab, n > cap ? ~0u : (__u32)n);
		if (n > cap)
			continue;
		for (k = 0, n = 0; k < ENG_QMR * k4; k += 2) {
			if (k % k4 == 0 && k)
				eng_put32(tab + eng_qsplit_ends(k4) + 4 * (k / k4 - 1), (__u32)n);
			if (!eng_qpair_wide(d[k], d[k + 1]))
				continue;
			eng_put32(x + 8 * n, ENG_QPAIR_OFF(k % k4));
			eng_put32(x + 4 + 8 * n++, (__u32)(__u16)(__s16)d[k] |
				  (__u32)(__u16)(__s16)d[k + 1] << 16);
			d[k] = 0;
			d[k + 1] = 0;
		}
		eng_put32(tab + eng_qsplit_ends(k4) + 4 * (ENG_QMR - 1), (__u32)n);
		eng_qsched(d, k4, ENG_QMR, tab + 8);
		eng_put32(tab + 4, VNPU_QSPLIT_F_PAIRS);
	}
}

/*
 * U = G k G^T of the 3x3 kernel @k (NULL: zeros), G's rows (2, 0, 0), (1,
 * 1, 1), (1, -1, 1) and (0, 0, 2), as i16 (|U| <= 9 * 128) at @u's 16
 * points 4 bytes apart.
 */
static void eng_qwino_u(const __s8 *k, __u8 *u)
{
	static const __s8 gm[4][3] = { { 2, 0, 0 }, { 1, 1, 1 }, { 1, -1, 1 },
				       { 0, 0, 2 } };
	__s32 t[4][3], v;
	__u64 i, j, a;

	for (i = 0; i < 4; i++)
		for (j = 0; j < 3; j++) {
			t[i][j] = 0;
			for (a = 0; a < 3; a++)
				t[i][j] += gm[i][a] * (k ? k[a * 3 + j] : 0);
		}
	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++) {
			v = 0;
			for (a = 0; a < 3; a++)
				v += t[i][a] * gm[j][a];
			u[(i * 4 + j) * 4] = (__u8)v;
			u[(i * 4 + j) * 4 + 1] = (__u8)((__u32)v >> 8);
		}
}

/*
 * %VNPU_PACK_QWINO_W: U of each 3x3 kernel, the 16 points of a channel
 * pair interleaved, rows padded to even and channels to pairs with zeros,
 * in chunks of VNPU_QWINO_CHUNK pairs.
 */
static void eng_pack_qwino(const __s8 *s, __u64 groups, __u64 rows,
			   __u64 cols, __u8 *d)
{
	__u64 cg = cols / 9, mp = eng_qwino_mp(rows), cp = eng_div_up(cg, 2);
	__u64 g, m, c;

	for (g = 0; g < groups; g++, s += rows * cols)
		for (m = 0; m < mp; m++)
			for (c = 0; c < 2 * cp; c++)
				eng_qwino_u(m < rows && c < cg ? s + m * cols + c * 9 :
					    (const __s8 *)0,
					    d + g * mp * cp * ENG_QWINO_PAIR +
					    eng_qwino_off(mp, cp, m, c / 2) + 2 * (c % 2));
}

/*
 * U = G (k - @wz) G^T of the 3x3 kernel @k (NULL: zeros), G's rows (1, 0,
 * 0), (-1, -1, -1), (-1, 1, -1), (1, 2, 4), (1, -2, 4) and (0, 0, 1), as
 * i16 (|U| <= 49 * 255) at @u's 36 points @step bytes apart.
 */
static void eng_qw4_u(const __s8 *k, __s32 wz, __u8 *u, __u64 step)
{
	static const __s8 gm[6][3] = { { 1, 0, 0 }, { -1, -1, -1 }, { -1, 1, -1 },
				       { 1, 2, 4 }, { 1, -2, 4 }, { 0, 0, 1 } };
	__s32 t[6][3], v;
	__u64 i, j, a;

	for (i = 0; i < 6; i++)
		for (j = 0; j < 3; j++) {
			t[i][j] = 0;
			for (a = 0; a < 3; a++)
				t[i][j] += gm[i][a] * (k ? k[a * 3 + j] - wz : 0);
		}
	for (i = 0; i < 6; i++)
		for (j = 0; j < 6; j++) {
			v = 0;
			for (a = 0; a < 3; a++)
				v += t[i][a] * gm[j][a];
			u[(i * 6 + j) * step] = (__u8)v;
			u[(i * 6 + j) * step + 1] = (__u8)((__u32)v >> 8);
		}
}

int vnpu_eng_qw4_pack(const __s8 *src, const __s8 *wz, __u64 nwz, __u64 rows,
		      __u64 cols, void *dst)
{
	__u64 size = vnpu_eng_packed_size(VNPU_PACK_QW4_W, 1, rows, cols);
	__u64 mp = eng_div_up(rows, ENG_QMR) * ENG_QMR, k4 = eng_q4(cols);
	__u64 cg = cols / 9, cp = eng_div_up(cg, 2);
	__u64 uoff = eng_qw4_uoff(mp, k4), m, c, b;
	__u8 *d = dst;

	if (!size || (nwz != 1 && nwz != rows))
		return VNPU_ENG_EINVAL;
	eng_pack_qconv(src, 1, rows, cols, dst);
	for (b = mp * (k4 + 4); b < uoff; b++)
		d[b] = 0;
	/* Point x of (m, c) at ((m / 16 * 36 + x) * cp + c / 2) * 64 + ... */
	for (m = 0; m < rows; m++)
		for (c = 0; c < 2 * cp; c++)
			eng_qw4_u(c < cg ? src + m * cols + c * 9 : (const __s8 *)0,
				  wz[nwz == 1 ? 0 : m],
				  d + uoff + (m / 16 * 36 * cp + c / 2) * 64 + m % 16 * 4 +
				  2 * (c % 2), cp * 64);
	return 0;
}

int vnpu_eng_pack(__u32 layout, const void *src, __u64 groups, __u64 rows,
		  __u64 cols, void *dst)
{
	const __u32 *s = src;
	__u32 *d = dst;
	__u64 g, p, i, j, size;

	size = vnpu_eng_packed_size(layout, groups, rows, cols);
	/*
	 * Float arithmetic: vnpu_eng_wino_pack(), vnpu_eng_wino2_pack(),
	 * vnpu_eng_wino42_pack().
	 */
	if (layout == VNPU_PACK_WINO_W || layout == VNPU_PACK_WINO2_W ||
	    layout == VNPU_PACK_WINO42_W)
		return VNPU_ENG_EINVAL;
	/* W's zero points: vnpu_eng_qw4_pack(). */
	if (layout == VNPU_PACK_QW4_W)
		return VNPU_ENG_EINVAL;
	if (!size)
		return rows && cols && groups ? VNPU_ENG_EINVAL : 0;
	if (layout == VNPU_PACK_QWINO_W) {
		eng_pack_qwino(src, groups, rows, cols, dst);
		return 0;
	}
	if (layout == VNPU_PACK_QCONV_W || layout == VNPU_PACK_QCONV_SPLIT) {
		eng_pack_qconv(src, groups, rows, cols, dst);
		if (layout == VNPU_PACK_QCONV_SPLIT)
			eng_pack_qsplit(dst, groups, rows, cols);
		return 0;
	}
	if (layout == VNPU_PACK_GEMM_B) {
		/* Panels of NR columns, each rows x NR. */
		for (p = 0; p < eng_div_up(cols, ENG_NR); p++)
			for (i = 0; i < rows; i++)
				for (j = 0; j < ENG_NR; j++) {
					__u64 c = p * ENG_NR + j;

					*d++ = c < cols ? s[i * cols + c] : 0;
				}
		return 0;
	}
	/*
	 * Per group, panels of ENG_LANES_NR rows (output channels), each
	 * cols x ENG_LANES_NR.
	 */
	if (layout == VNPU_PACK_CONV_LANES) {
		for (g = 0; g < groups; g++, s += rows * cols)
			for (p = 0; p < eng_div_up(rows, ENG_LANES_NR); p++)
				for (j = 0; j < cols; j++)
					for (i = 0; i < ENG_LANES_NR; i++) {
						__u64 r = p * ENG_LANES_NR + i;

						*d++ = r < rows ? s[r * cols + j] : 0;
					}
		return 0;
	}
	/* Per group, panels of MR rows, each cols x MR. */
	for (g = 0; g < groups; g++, s += rows * cols)
		for (p = 0; p < eng_div_up(rows, ENG_MR); p++)
			for (j = 0; j < cols; j++)
				for (i = 0; i < ENG_MR; i++) {
					__u64 r = p * ENG_MR + i;

					*d++ = r < rows ? s[r * cols + j] : 0;
				}
	return 0;
}

int vnpu_eng_pair_bf16(__u32 layout, __u64 groups, __u64 rows, __u64 cols,
		       void *packed)
{
	__u64 size = vnpu_eng_packed_size(layout, groups, rows, cols);
	__u64 w = layout == VNPU_PACK_GEMM_B ? ENG_NR : ENG_MR;
	__u64 kt = layout == VNPU_PACK_GEMM_B ? rows : cols, p, k, x;
	__u16 *d = packed, pair[2 * ENG_NR];

	/* Only the f32-shaped panels pair (not QCONV_W's i8 rows). */
	if (layout != VNPU_PACK_GEMM_B && layout != VNPU_PACK_CONV_W &&
	    layout != VNPU_PACK_WINO2_W && layout != VNPU_PACK_WINO42_W)
		return VNPU_ENG_EINVAL;
	/* A Winograd point's panels are of depth C/group. */
	if (layout == VNPU_PACK_WINO2_W || layout == VNPU_PACK_WINO42_W)
		kt = cols / 9;
	if (!size)
		return rows && cols && groups ? VNPU_ENG_EINVAL : 0;
	for (p = 0; p < size; p += w * kt)
		for (k = 0; k + 1 < kt; k += 2) {
			__u16 *run = d + p + k * w;

			for (x = 0; x < 2 * w; x++)
				pair[x] = run[x];
			for (x = 0; x < w; x++) {
				run[2 * x] = pair[x];
				run[2 * x + 1] = pair[w + x];
			}
		}
	return 0;
}
