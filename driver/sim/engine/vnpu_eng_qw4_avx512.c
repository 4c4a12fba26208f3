// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The AVX512-VNNI parts of a packed QLINEAR_CONV run as integer Winograd
 * F(4x4, 3x3) (vnpu_eng_priv.h says why it is exact; built with
 * -mavx512f -mavx512bw -mavx512vnni, run only with VNPU_ENG_F_VNNI and
 * VNPU_ENG_F_VBMI): U from W's packed rows, V of a unit's tile rows (the
 * tiles' columns gathered by vpermi2b, two channels at once), and the
 * transformed products summed by vpdpwssd, 16 tiles in the lanes by 16
 * output channels, then A'^T M A' into the unit's S.
 */
#include "vnpu_eng_priv.h"

typedef int v16si_w4 __attribute__((vector_size(64)));
typedef unsigned int v16su_w4 __attribute__((vector_size(64)));
typedef short v32hi_w4 __attribute__((vector_size(64)));
typedef unsigned char v64qu_w4 __attribute__((vector_size(64)));
typedef char v64qi_w4 __attribute__((vector_size(64)));
typedef char v64qi_w4u __attribute__((vector_size(64), aligned(1), may_alias));
typedef short v32hi_w4u __attribute__((vector_size(64), aligned(2), may_alias));
typedef unsigned char v64qu_w4u __attribute__((vector_size(64), aligned(1), may_alias));
typedef int v16si_w4u __attribute__((vector_size(64), aligned(4), may_alias));
typedef unsigned int v16su_w4u __attribute__((vector_size(64), aligned(4), may_alias));
typedef unsigned long long v8du_w4 __attribute__((vector_size(64)));
typedef unsigned long long v8du_w4u __attribute__((vector_size(64), aligned(1), may_alias));

/* Tiles a row, at most, whose V two rows make at once (rows' bytes 0 to 29). */
#define ENG_QW4_TW2	7

/* @acc += the int16 pair products of @a and @b (wrapping). */
static inline v16su_w4 dpwssd(v16su_w4 acc, v16su_w4 a, v16su_w4 b)
{
	__asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
	return acc;
}

/* Bytes of @a (index < 64) and @b (64 and up) as @idx picks them. */
static inline v64qu_w4 permi2b(v64qu_w4 idx, v64qu_w4 a, v64qu_w4 b)
{
	__asm__("vpermi2b %2, %1, %0" : "+v"(idx) : "v"(a), "v"(b));
	return idx;
}

/* Row i of G' (i below 6) applied to @a, @b, @c. */
static inline v32hi_w4 qw4_g(__u64 i, v32hi_w4 a, v32hi_w4 b, v32hi_w4 c)
{
	switch (i) {
	case 0:
		return a;
	case 1:
		return -(a + b + c);
	case 2:
		return b - a - c;
	case 3:
		return a + 2 * b + 4 * c;
	case 4:
		return a - 2 * b + 4 * c;
	default:
		return c;
	}
}

/*
 * U = G' (w - wz) G'^T of channel pair @p for output channels 16 g to
 * 16 g + 15, in the words U keeps: output channel m's pair in word lanes
 * 2m (channel 2p) and 2m + 1. Both channels' 18 bytes of W's rows come
 * in by dword gathers (five: bytes 18p to 18p + 19; three where 2p + 1
 * is past the channels: its lanes are then whatever W's next bytes
 * make, |w - wz| <= 255 still, and V is 0 there), tap t of both into
 * the high bytes of its words by one vpermi2b (@idx[t]), then an
 * arithmetic shift: the 3x3 kernels in int16 (|w - wz| <= 255, so
 * |U| <= 7 * 7 * 255 = 12495 all along).
 */
static __attribute__((__noinline__))
void qw4_u1(const struct eng_qw4 *q, const v64qu_w4 *idx, __u64 g, __u64 p, __u32 *u)
{
	const v16si_w4 wz = *((const v16si_w4 *)q->wz + g);
	const v32hi_w4 wz2 = (v32hi_w4)((wz & 0xffff) | (wz << 16));
	const int two = 2 * p + 1 < q->cg;
	v16si_w4 row = {}, d[5] = {};
	v32hi_w4 k[9];
	__u64 i, j, l;

	for (l = 0; l < 16; l++)
		row[l] = (int)((g * 16 + l) * q->k4 + p * 18);
	for (i = 0; i < (two ? 5u : 3u); i++)
		d[i] = __builtin_ia32_gathersiv16si((v16si_w4){}, q->w, row + 4 * (int)i,
						    0xffff, 1);
#pragma GCC unroll 9
	for (i = 0; i < 9; i++)
		k[i] = ((v32hi_w4)permi2b(idx[i], (v64qu_w4)d[i / 4],
					  (v64qu_w4)d[(9 + i) / 4]) >> 8) - wz2;
#pragma GCC unroll 6
	for (i = 0; i < 6; i++) {
		v32hi_w4 a0 = qw4_g(i, k[0], k[3], k[6]);
		v32hi_w4 a1 = qw4_g(i, k[1], k[4], k[7]);
		v32hi_w4 a2 = qw4_g(i, k[2], k[5], k[8]);

#pragma GCC unroll 6
		for (j = 0; j < 6; j++)
			*(v32hi_w4 *)(u + ((g * 36 + i * 6 + j) * q->cp + p) * 16) =
				qw4_g(j, a0, a1, a2);
	}
}

/* U of the layer into @u ([mg][36][cp][16] int16 pairs). */
void vnpu_eng_qw4_u(const struct eng_qw4 *q, __u32 *u)
{
	v64qu_w4 idx[9];
	__u64 g, p, t, m;

	/*
	 * Tap t: word lane 2m's high byte from the gather of bytes t / 4
	 * (lane m's byte t % 4), 2m + 1's from that of (9 + t) / 4.
	 */
	for (t = 0; t < 9; t++)
		for (m = 0; m < 64; m++)
			idx[t][m] = (__u8)(m & 2 ? 64 + (m & ~3u) + (9 + t) % 4 :
					   (m & ~3u) + t % 4);
	for (g = 0; g < q->mg; g++)
		for (p = 0; p < q->cp; p++)
			qw4_u1(q, idx, g, p, u);
}

/* B^T of six vectors (32 int16 lanes) @r into @o. */
static inline void qw4_bt(const v32hi_w4 *r, v32hi_w4 *o)
{
	v32hi_w4 a = r[0], b = r[1], c = r[2], d = r[3], e = r[4], f = r[5];
	v32hi_w4 ec = e - c, db = d - b, b4 = b * 4, c4 = c * 4;

	o[0] = a * 4 - c4 + ec;
	o[1] = d + e - b4 - c4;
	o[2] = e - d + b4 - c4;
	o[3] = ec + db * 2;
	o[4] = ec - db * 2;
	o[5] = b4 - d * 4 + f - d;
}

/* The lanes of @v that @k sets, stored at @p. */
static inline void qw4_st(__s32 *p, v16si_w4 v, __u32 k)
{
	__asm__ volatile("kmovw %1, %%k1\n\t"
			 "vmovdqu32 %2, (%0)%{%%k1%}"
			 : : "r"(p), "r"(k), "v"(v) : "k1", "memory");
}

/*
 * Stage padded rows [4 ty0 - 1, 4 ty1 + 1] of channels 2p, 2p + 1: 64
 * bytes each, X's bytes (xor flip) from byte 1, the zero point elsewhere
 * but in byte 63, 0 (the high byte of each word vpermi2b gathers), and
 * in byte 31 too where a row has ENG_QW4_TW2 tiles or fewer (its tiles
 * read bytes 0 to 29).
 */
static void qw4_stage(const struct eng_qw4 *q, __u64 p, __u64 ty0, __u64 ty1)
{
	const __u64 m = (1ull << q->w_in) - 1;
	v64qi_w4 fill = (v64qi_w4){} + (char)q->xz;
	__u64 rows = 4 * (ty1 - ty0) + 2, h, r;

	fill[63] = 0;
	if (q->tw <= ENG_QW4_TW2)
		fill[31] = 0;
	for (h = 0; h < 2; h++) {
		__u64 c = 2 * p + h;

		for (r = 0; r < rows; r++) {
			__u8 *d = q->st + (h * (4 * q->tb + 2) + r) * 64;
			__s64 iy = (__s64)(4 * ty0 + r) - 1;
			const __u8 *src;
			v64qi_w4 b;

			*(v64qi_w4u *)d = fill;
			if (c >= q->cg || iy < 0 || iy >= (__s64)q->h)
				continue;
			/* The row's w_in bytes, read and written under a mask. */
			src = q->x + (__s64)c * q->xs1 + iy * q->xs2;
			b = __builtin_ia32_loaddquqi512_mask((const char *)src, (v64qi_w4){}, m);
			__builtin_ia32_storedquqi512_mask((char *)d + 1, b ^ (char)q->flip, m);
		}
	}
}

/*
 * V of tile rows @r0 to @r0 + @n - 1 (of the unit's; @n 1, or 2 where a
 * row has ENG_QW4_TW2 tiles or fewer) of the staged channel pair into
 * their tiles' lanes of V: each word lane gathered by vpermi2b as (byte,
 * 0), tile t's channel 2p in lane 2t and 2p + 1 in 2t + 1 (V's pairs as
 * vpdpwssd takes them), two rows' tiles from the low halves of their
 * staged rows put side by side (@idx of ENG_QW4_TW2's); B^T down each
 * column into q->tt, then along the rows. X less its zero point d = g -
 * xz: B^T's rows sum to 0 but the second's (-6), so B^T d B is B^T g B
 * but at point (1, 1), less 36 xz.
 */
static __attribute__((__noinline__))
void qw4_v1(const struct eng_qw4 *q, const v64qu_w4 *idx, __u64 p, __u64 r0, __u64 n)
{
	v32hi_w4 *tt = (v32hi_w4 *)q->tt;
	v64qu_w4 a[6], b[6];
	__u64 i, j;

	for (i = 0; i < 6; i++) {
		const __u8 *s0 = q->st + (4 * r0 + i) * 64;
		const __u8 *s1 = s0 + (4 * q->tb + 2) * 64;

		a[i] = *(const v64qu_w4u *)s0;
		b[i] = *(const v64qu_w4u *)s1;
		if (n == 2) {
			a[i] = (v64qu_w4)__builtin_shufflevector((v8du_w4)a[i],
					*(const v8du_w4u *)(s0 + 4 * 64), 0, 1, 2, 3, 8, 9, 10, 11);
			b[i] = (v64qu_w4)__builtin_shufflevector((v8du_w4)b[i],
					*(const v8du_w4u *)(s1 + 4 * 64), 0, 1, 2, 3, 8, 9, 10, 11);
		}
	}
	for (j = 0; j < 6; j++) {
		v32hi_w4 r[6], o[6];

		for (i = 0; i < 6; i++)
			r[i] = (v32hi_w4)permi2b(idx[j], a[i], b[i]);
		qw4_bt(r, o);
		for (i = 0; i < 6; i++)
			tt[i * 6 + j] = o[i];
	}
	for (i = 0; i < 6; i++) {
		v32hi_w4 o[6];

		qw4_bt(tt + i * 6, o);
		if (i == 1)
			o[1] -= (short)(36 * q->xz);
		/* The row's tiles, after the block's earlier rows'. */
		for (j = 0; j < 6; j++)
			qw4_st((__s32 *)q->v + ((i * 6 + j) * q->cp + p) * q->nv * 16 +
			       r0 * q->tw, (v16si_w4)o[j], (1u << (n * q->tw)) - 1);
	}
}

void vnpu_eng_qw4_v(const struct eng_qw4 *q, __u64 ty0, __u64 ty1)
{
	v64qu_w4 idx[6], idx2[6];
	__u64 p, ty, i, j, n;

	/*
	 * Word lane l: tile l / 2's byte j of channel 2p (even l) or 2p + 1,
	 * over byte 63 of its row (0). Two rows: the second row's tiles
	 * from byte 32 on, over byte 31 (0).
	 */
	for (j = 0; j < 6; j++)
		for (i = 0; i < 32; i++) {
			__u8 b = (i & 1) * 64, t = (__u8)(i / 2);
			__u8 off = t < q->tw ? 4 * t + j : t < 2 * q->tw ?
				   32 + 4 * (t - q->tw) + j : 31;

			idx[j][2 * i] = (__u8)((b + 4 * t + j) & 127);
			idx[j][2 * i + 1] = (__u8)(b + 63);
			idx2[j][2 * i] = (__u8)(b + off);
			idx2[j][2 * i + 1] = 31;
		}
	for (p = 0; p < q->cp; p++) {
		qw4_stage(q, p, ty0, ty1);
		for (ty = ty0; ty < ty1; ty += n) {
			n = q->tw <= ENG_QW4_TW2 && ty + 1 < ty1 ? 2 : 1;
			qw4_v1(q, n == 2 ? idx2 : idx, p, ty - ty0, n);
		}
	}
}

/* A'^T of six vectors: rows (6,4,4,1,1,0), (0,4,-4,2,-2,0), (0,4,4,4,4,0), (0,4,-4,8,-8,24). */
static inline void qw4_at(const v16su_w4 *m, v16su_w4 *y)
{
	v16su_w4 s12 = m[1] + m[2], d12 = m[1] - m[2];
	v16su_w4 s34 = m[3] + m[4], d34 = m[3] - m[4];

	y[0] = m[0] * 6 + s12 * 4 + s34;
	y[1] = d12 * 4 + d34 * 2;
	y[2] = (s12 + s34) * 4;
	y[3] = d12 * 4 + d34 * 8 + m[5] * 24;
}

/*
 * M of the unit's tiles 16 tv to 16 tv + 15, output channels 16 g16 ..
 * 16 g16 + 15 and channel pairs [@h0, @h0 + @np), into q->mb:
 * [point][channel][tile].
 */
static __attribute__((__noinline__))
void qw4_m(const struct eng_qw4 *q, __u64 tv, __u64 g16, __u64 h0, __u64 np)
{
	__u64 x, p, i;

	for (x = 0; x < 36; x++) {
		const __u32 *u = q->u + ((g16 * 36 + x) * q->cp + h0) * 16;
		const __u32 *v = q->v + ((x * q->cp + h0) * q->nv + tv) * 16;
		v16su_w4 acc[16];

		for (i = 0; i < 16; i++)
			acc[i] = (v16su_w4){};
		for (p = 0; p < np; p++) {
			v16su_w4 b = *(const v16su_w4u *)(v + p * q->nv * 16);

			/*
			 * The first vector reads U from memory (it stays in L2
			 * for the others): the next point's line, ahead.
			 */
			if (!tv)
				__builtin_prefetch(u + (q->cp + p) * 16);
			for (i = 0; i < 16; i++)
				acc[i] = dpwssd(acc[i], (v16su_w4){} + u[p * 16 + i], b);
		}
		for (i = 0; i < 16; i++)
			*(v16su_w4u *)(q->mb + (x * 16 + i) * 16) = acc[i];
	}
}

/*
 * A'^T M A' of M's 36 vectors @m (point x at @m[x * @ms]), times 9's
 * inverse, >> 6: S of a chunk, into (@add: added to) @d[4 r + c]; down
 * the columns into @ct first.
 */
static inline void qw4_out(const v16su_w4 *m, __u64 ms, v16su_w4 *ct, v16su_w4 *d,
			   int add)
{
	const v16su_w4 inv9 = (v16su_w4){} + 0x38e38e39u;
	__u64 j, r;

	for (j = 0; j < 6; j++) {
		v16su_w4 c[6], y[4];

		for (r = 0; r < 6; r++)
			c[r] = m[(r * 6 + j) * ms];
		qw4_at(c, y);
		for (r = 0; r < 4; r++)
			ct[r * 6 + j] = y[r];
	}
	for (r = 0; r < 4; r++) {
		v16su_w4 y[4];

		qw4_at(ct + r * 6, y);
		for (j = 0; j < 4; j++) {
			v16su_w4 s = (v16su_w4)((v16si_w4)(y[j] * inv9) >> 6);

			d[r * 4 + j] = add ? d[r * 4 + j] + s : s;
		}
	}
}

/*
 * S of a chunk from q->mb ([point][channel][tile]) into (@add: added
 * to) q->sacc: [channel][4 r + c][tile].
 */
static __attribute__((__noinline__)) void qw4_s(const struct eng_qw4 *q, int add)
{
	__u64 i;

	for (i = 0; i < 16; i++)
		qw4_out((const v16su_w4 *)q->mb + i, 16, (v16su_w4 *)q->tt,
			(v16su_w4 *)q->sacc + i * 16, add);
}

/* A store of S: up to 16 lanes from a row's lane @s, to S at @d (channel 0's). */
struct qw4_piece {
	__u32 d;
	__u16 k;
	__u8 s;
};

/*
 * The pieces of positions [@p, @p + @n) of the unit's S from row lane
 * @s into @pc: runs within a position block, 16 lanes at most. Return:
 * the pieces.
 */
static __u64 qw4_pieces(__u64 p, __u64 s, __u64 n, struct qw4_piece *pc)
{
	__u64 np = 0;

	while (n) {
		__u64 run = eng_min(eng_min(n, ENG_QNR - p % ENG_QNR), 16);

		pc[np].d = (__u32)(p / ENG_QNR * 16 * ENG_QNR + p % ENG_QNR);
		pc[np].k = (__u16)((1u << run) - 1);
		pc[np++].s = (__u8)s;
		s += run;
		p += run;
		n -= run;
	}
	return np;
}

/*
 * Output row r of 16 tiles, @y[c] their column c: as 64 positions,
 * tile t's at 4 t to 4 t + 3, into @row.
 */
static void qw4_interleave(const v16si_w4 *y, v16si_w4 *row)
{
	v16si_w4 a0 = __builtin_shufflevector(y[0], y[1], 0, 16, 1, 17, 2, 18, 3, 19,
					      4, 20, 5, 21, 6, 22, 7, 23);
	v16si_w4 a1 = __builtin_shufflevector(y[0], y[1], 8, 24, 9, 25, 10, 26, 11, 27,
					      12, 28, 13, 29, 14, 30, 15, 31);
	v16si_w4 b0 = __builtin_shufflevector(y[2], y[3], 0, 16, 1, 17, 2, 18, 3, 19,
					      4, 20, 5, 21, 6, 22, 7, 23);
	v16si_w4 b1 = __builtin_shufflevector(y[2], y[3], 8, 24, 9, 25, 10, 26, 11, 27,
					      12, 28, 13, 29, 14, 30, 15, 31);

	row[0] = __builtin_shufflevector(a0, b0, 0, 1, 16, 17, 2, 3, 18, 19,
					 4, 5, 20, 21, 6, 7, 22, 23);
	row[1] = __builtin_shufflevector(a0, b0, 8, 9, 24, 25, 10, 11, 26, 27,
					 12, 13, 28, 29, 14, 15, 30, 31);
	row[2] = __builtin_shufflevector(a1, b1, 0, 1, 16, 17, 2, 3, 18, 19,
					 4, 5, 20, 21, 6, 7, 22, 23);
	row[3] = __builtin_shufflevector(a1, b1, 8, 9, 24, 25, 10, 11, 26, 27,
					 12, 13, 28, 29, 14, 15, 30, 31);
}

/*
 * M of the unit's NR tiles from @t0 (past its whole vectors), output
 * channels 16 g16 .. 16 g16 + 15 in the lanes, channel pairs [@h0, @h0 +
 * @np): per point, U's vector of the pair by each tile's V broadcast,
 * PP points at a time; into @mt: [tile][point].
 */
static inline __attribute__((__always_inline__))
void qw4_mt(const struct eng_qw4 *q, __u64 t0, __u64 g16, __u64 h0, __u64 np,
	    v16su_w4 *mt, const int nr, const int pp)
{
	__u64 x0, x, p;
	int t;

	for (x0 = 0; x0 < 36; x0 += pp) {
		v16su_w4 acc[6][4];

		for (x = 0; x < (__u64)pp; x++)
			for (t = 0; t < nr; t++)
				acc[x][t] = (v16su_w4){};
		for (p = 0; p < np; p++)
			for (x = 0; x < (__u64)pp; x++) {
				const __u32 *v = q->v + ((x0 + x) * q->cp + h0 + p) *
						 q->nv * 16 + t0;
				v16su_w4 u = *(const v16su_w4u *)(q->u + ((g16 * 36 + x0 + x) *
							q->cp + h0 + p) * 16);

				for (t = 0; t < nr; t++)
					acc[x][t] = dpwssd(acc[x][t], u, (v16su_w4){} + v[t]);
			}
		for (x = 0; x < (__u64)pp; x++)
			for (t = 0; t < nr; t++)
				mt[t * 36 + x0 + x] = acc[x][t];
	}
}

/*
 * The tail's M, then its S: per tile, A'^T M A' of its 36 vectors of
 * channels, times 9's inverse, >> 6, into (@add: added to) @st:
 * [tile][4 r + c] vectors of the 16 channels.
 */
static __attribute__((__noinline__))
void qw4_tail(const struct eng_qw4 *q, __u64 t0, __u64 nr, __u64 g16, __u64 h0,
	      __u64 np, int add, v16su_w4 *st)
{
	v16su_w4 *mt = (v16su_w4 *)q->mb;
	__u64 t;

	switch (nr) {
	case 1:
		qw4_mt(q, t0, g16, h0, np, mt, 1, 6);
		break;
	case 2:
		qw4_mt(q, t0, g16, h0, np, mt, 2, 6);
		break;
	case 3:
		qw4_mt(q, t0, g16, h0, np, mt, 3, 6);
		break;
	default:
		qw4_mt(q, t0, g16, h0, np, mt, 4, 6);
		break;
	}
	for (t = 0; t < nr; t++)
		qw4_out(mt + t * 36, 1, (v16su_w4 *)q->tt, st + t * 16, add);
}

/*
 * The unit's tiles past its whole vectors, ENG_QW4_TAIL at most (tile
 * @t0 on, @nt in all): 4 at a time by qw4_tail(), each's S moved from
 * its channel lanes to S's rows of positions.
 */
static void qw4_tails(const struct eng_qw4 *q, __u64 ty0, __u64 t0, __u64 nt,
		      __u64 g16)
{
	v16su_w4 *st = (v16su_w4 *)q->sacc;
	__u64 t, h0, n, k, r, c, i;

	for (t = t0; t < nt; t += n) {
		n = eng_min(nt - t, 4);
		for (h0 = 0; h0 < q->cp; h0 += q->pairs)
			qw4_tail(q, t, n, g16, h0, eng_min(q->pairs, q->cp - h0),
				 h0 != 0, st);
		for (k = 0; k < n; k++) {
			__u64 ty = (t + k) / q->tw, tx = (t + k) % q->tw;

			for (r = 0; r < 4 && 4 * (ty0 + ty) + r < q->oh; r++)
				for (c = 0; c < 4 && 4 * tx + c < q->ow; c++) {
					__u64 pos = (4 * ty + r) * q->ow + 4 * tx + c;
					const __s32 *src = (const __s32 *)(st + k * 16 + r * 4 + c);
					__s32 *d = q->s + pos / ENG_QNR * 16 * ENG_QNR +
						   pos % ENG_QNR;

					for (i = 0; i < 16; i++)
						d[i * ENG_QNR] = src[i];
				}
		}
	}
}

void vnpu_eng_qw4_sums(const struct eng_qw4 *q, __u64 ty0, __u64 ty1, __u64 g16)
{
	__u64 nt = (ty1 - ty0) * q->tw, tv, h0, i, r, k, t, n;
	/* Whole vectors, and one more unless the tiles past them are few. */
	__u64 nvec = nt % 16 <= ENG_QW4_TAIL ? nt / 16 : eng_div_up(nt, 16);
	v16si_w4 row[5];
	/*
	 * Per output row of the tiles, its stores of S ([r][np[r]]): for a
	 * run of n of the row's 64 outputs, n / 16 + 2 at most, and 16 lanes
	 * of tiles hold 4 runs at most (tiles of 4 a row, 16 columns).
	 */
	struct qw4_piece pc[4][24];
	__u64 np[4];

	for (tv = 0; tv < nvec; tv++) {
		for (h0 = 0; h0 < q->cp; h0 += q->pairs) {
			qw4_m(q, tv, g16, h0, eng_min(q->pairs, q->cp - h0));
			qw4_s(q, h0 != 0);
		}
		/* The vector's runs of one tile row: lanes k to k + n. */
		for (r = 0; r < 4; r++)
			np[r] = 0;
		for (k = 0; k < 16 && 16 * tv + k < nt; k += n) {
			__u64 ty, tx;

			t = 16 * tv + k;
			ty = t / q->tw;
			tx = t % q->tw;
			n = eng_min(eng_min(16 - k, q->tw - tx), nt - t);
			for (r = 0; r < 4 && 4 * (ty0 + ty) + r < q->oh; r++)
				np[r] += qw4_pieces((4 * ty + r) * q->ow + 4 * tx, 4 * k,
						    eng_min(4 * n, q->ow - 4 * tx), pc[r] + np[r]);
		}
		for (i = 0; i < 16; i++)
			for (r = 0; r < 4; r++) {
				__s32 *d = q->s + i * ENG_QNR;

				qw4_interleave((const v16si_w4 *)(q->sacc + (i * 16 + r * 4) * 16),
					       row);
				for (k = 0; k < np[r]; k++) {
					const __s32 *src = (const __s32 *)row + pc[r][k].s;

					qw4_st(d + pc[r][k].d, *(const v16si_w4u *)src, pc[r][k].k);
				}
			}
	}
	if (nvec * 16 < nt)
		qw4_tails(q, ty0, nvec * 16, nt, g16);
}
