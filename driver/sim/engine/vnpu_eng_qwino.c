// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * QLINEAR_CONV as integer Winograd F(2x2, 3x3) (%VNPU_LAYER_F_QWINO over
 * %VNPU_PACK_QWINO_W): the stride-1 3x3 convolutions of int8 models with
 * symmetric weights, whose direct sums (vnpu_eng_quant.c) take 9 products
 * an output where these take 4.
 *
 * Each 2x2 output tile reads a 4x4 input tile d (X less its zero point,
 * 0 in the padding); V = B^T d B with B^T's rows (1, 0, -1, 0), (0, 1, 1,
 * 0), (0, -1, 1, 0), (0, 1, 0, -1) is within +-1020, int16. The compiler
 * packed U = G' w G'^T, G' twice F(2x2, 3x3)'s G: integers within +-1152.
 * Output channel m's 16 points M = sum over input channels of U . V are
 * summed two channels at a time (vpmaddwd of a channel pair's 16 points
 * interleaved: 16 products an instruction) in wrapping 32-bit integers;
 * Y = A^T M A with A^T's rows (1, 1, 1, 0), (0, 1, -1, -1) is 4 S
 * modulo 2^32, S the direct sum, and |4 S| < 2^31 (VNPU_QWINO_MAX_C), so
 * S = Y >> 2 exactly. S plus the bias then goes through the direct
 * path's requantization (qtile_out(), vnpu_eng_qout.h), so the outputs are its bits:
 * W's zero points count as 0 (the compiler sets the flag only then).
 *
 * A unit (struct eng_qwplan) is an image's group's block of tile rows
 * and a block of output channels. Per block: V of all its tiles and input
 * channels, laid out [chunk][tile][pair] as U is [chunk][row][pair]; then
 * per ENG_QWINO_KB output channels, per chunk of VNPU_QWINO_CHUNK channel
 * pairs, the sums of 2 channels x 3 tiles (12 ymm registers, AVX2's loop
 * in inline assembly) over the chunk, carried between chunks in scratch,
 * transformed after the last one into the block's S, requantized
 * ENG_QNR positions at a time. Built per ISA (vnpu_eng_isa.h); the
 * baseline takes the same steps in C.
 */
#include "vnpu_eng_kern.h"
#include "vnpu_eng_qout.h"

typedef short v16hi_w __attribute__((vector_size(32)));
typedef short v16hi_wu __attribute__((vector_size(32), aligned(2), may_alias));
typedef int v8si_w __attribute__((vector_size(32)));
typedef int v8si_wu __attribute__((vector_size(32), aligned(4), may_alias));
typedef unsigned int v8su_w __attribute__((vector_size(32)));
typedef unsigned int v8su_wa __attribute__((vector_size(32), aligned(32), may_alias));
typedef long long v4di_w __attribute__((vector_size(32)));
typedef long long s64_wu __attribute__((aligned(4), may_alias));
typedef unsigned short v16hu_w __attribute__((vector_size(32)));
typedef unsigned short v16hu_wu __attribute__((vector_size(32), aligned(1), may_alias));
typedef unsigned short v8hu_w __attribute__((vector_size(16)));
typedef unsigned short v8hu_wu __attribute__((vector_size(16), aligned(1), may_alias));
typedef short v8hi_w __attribute__((vector_size(16)));
typedef short v8hi_wu __attribute__((vector_size(16), aligned(2), may_alias));
typedef unsigned short v4hu_w __attribute__((vector_size(8)));
typedef unsigned short v4hu_wu __attribute__((vector_size(8), aligned(1), may_alias));
typedef short v4hi_w __attribute__((vector_size(8)));
typedef short v4hi_wu __attribute__((vector_size(8), aligned(2), may_alias));

/*
 * What a part's scratch holds for the next parts of the layer (ctx->epoch
 * and the attributes say which): the block whose V it holds.
 */
struct qw_held {
	__u64 epoch;
	const void *attrs;
	__u64 key;
};

/* A unit's layer-wide state. */
struct qwino {
	const struct eng_layer *l;
	struct eng_conv_shape s;
	struct eng_qwplan p;
	__u64 pb, pw;		/* leading pads: rows, columns */
	__u8 flip;		/* 0x80 for i8 X (read as u8) */
	__u8 xz;		/* X's zero point as read (u8) */
	__s16 *v;		/* the block's V */
	__s16 *st;		/* staged rows: E and O of two channels */
	v16hi_w *tr;		/* two channels' 16 transforms of 16 tiles */
	v8su_w *part;		/* partial sums between chunks */
	__s32 *sum;		/* S of ENG_QWINO_KB channels over the block */
	__u32 *tile;		/* per tile: position << 2 | more columns | more rows */
	v8su_w *acc;		/* the 2 x 3 tile's sums */
	__u64 ty0, ty1, nt;	/* the block's tile rows and tiles */
};

/*
 * The baseline's 256-bit vectors are pairs of SSE2 ones: its transforms
 * stay out of line, so that no frame grows past the kernel's 2 KiB.
 */
#ifdef ENG_FMA
#define QW_TR __attribute__((__always_inline__)) inline
#else
#define QW_TR __attribute__((__noinline__))
#endif

static inline v16hi_w qw_ld(const void *p)
{
	return *(const v16hi_wu *)p;
}

static __u8 qw_zero(const struct eng_layer *l)
{
	const void *p = l->data[2];

	return l->t[2].dtype == VNPU_DTYPE_U8 ? *(const __u8 *)p :
	       (__u8)(*(const __s8 *)p + 128);
}

/*
 * @n (16, 8 or 4) 16-bit words from @s, xor @f, less @xz: their low bytes
 * to @dl, their high bytes to @dh.
 */
#define QW_SPLIT(n, s, dl, dh, f, xz) do {					\
	v##n##hu_w b_ = *(const v##n##hu_wu *)(s) ^ (__u16)(f);		\
										\
	*(v##n##hi_wu *)(dl) = (v##n##hi_w)(b_ & 0xff) - (__s16)(xz);		\
	*(v##n##hi_wu *)(dh) = (v##n##hi_w)(b_ >> 8) - (__s16)(xz);		\
} while (0)

/*
 * Padded row @r of group @g's channel @c (X less its zero point) as its even and odd
 * columns, p.sw of each from @e and @o: 0 (the pads), then the row's bytes
 * two at a time, read in whole vectors (the last one overlapping) and
 * written where the pads put them. Each store lands in place: nothing is
 * read back.
 */
static void qw_stage(const struct qwino *w, __u64 img, __u64 g, __u64 c, __u64 r,
		     __s16 *e, __s16 *o)
{
	const struct vnpu_cmd_tensor *x = &w->l->t[0];
	__u64 sw = w->p.sw, pw = w->pw, n = eng_min(w->s.w, 2 * sw - pw), nw = n / 2, k;
	__s64 ir = (__s64)r - (__s64)w->pb;
	__u16 f = (__u16)(w->flip * 0x101);
	__s16 xz = w->xz, *dl, *dh;
	const __u8 *src;

	/* sw > 16 */
	for (k = 0;; k += 16) {
		if (k + 16 > sw)
			k = sw - 16;
		*(v16hi_wu *)(e + k) = (v16hi_w){};
		*(v16hi_wu *)(o + k) = (v16hi_w){};
		if (k + 16 == sw)
			break;
	}
	if (c >= w->s.cg || ir < 0 || ir >= (__s64)w->s.h)
		return;
	src = (const __u8 *)w->l->data[0] + (__s64)img * x->strides[0] +
	      (__s64)(g * w->s.cg + c) * x->strides[1] + ir * x->strides[2];
	/* Byte j of the row is column j + pw: even columns to e, odd to o. */
	dl = pw & 1 ? o + pw / 2 : e + pw / 2;
	dh = pw & 1 ? e + (pw + 1) / 2 : o + pw / 2;
	if (nw >= 16) {
		for (k = 0; k + 16 <= nw; k += 16)
			QW_SPLIT(16, src + 2 * k, dl + k, dh + k, f, xz);
		if (k < nw)
			QW_SPLIT(16, src + 2 * (nw - 16), dl + nw - 16, dh + nw - 16, f, xz);
	} else if (nw >= 8) {
		QW_SPLIT(8, src, dl, dh, f, xz);
		QW_SPLIT(8, src + 2 * (nw - 8), dl + nw - 8, dh + nw - 8, f, xz);
	} else if (nw >= 4) {
		QW_SPLIT(4, src, dl, dh, f, xz);
		QW_SPLIT(4, src + 2 * (nw - 4), dl + nw - 4, dh + nw - 4, f, xz);
	} else {
		for (k = 0; k < nw; k++) {
			dl[k] = (__s16)((src[2 * k] ^ w->flip) - xz);
			dh[k] = (__s16)((src[2 * k + 1] ^ w->flip) - xz);
		}
	}
	if (n & 1)
		dl[nw] = (__s16)((src[n - 1] ^ w->flip) - xz);
}

/*
 * V of 16 tiles from tile @t0 of the block's tile row @ty (rows 2 ty to
 * 2 ty + 3 of the staged ones) of one channel: out[x] for point x.
 */
static QW_TR void qw_in16(const struct qwino *w, const __s16 *e, const __s16 *o,
			  __u64 ty, __u64 t0, v16hi_w *out)
{
	v16hi_w r[4][4];
	__u64 i;

	for (i = 0; i < 4; i++) {
		const __s16 *er = e + (2 * ty + i) * w->p.sw + t0;
		const __s16 *or = o + (2 * ty + i) * w->p.sw + t0;
		v16hi_w a0 = qw_ld(er), a1 = qw_ld(or), a2 = qw_ld(er + 1);
		v16hi_w a3 = qw_ld(or + 1);

		r[i][0] = a0 - a2;
		r[i][1] = a1 + a2;
		r[i][2] = a2 - a1;
		r[i][3] = a1 - a3;
	}
	for (i = 0; i < 4; i++) {
		out[i] = r[0][i] - r[2][i];
		out[4 + i] = r[1][i] + r[2][i];
		out[8 + i] = r[2][i] - r[1][i];
		out[12 + i] = r[1][i] - r[3][i];
	}
}

/*
 * Eight points' vectors @r of 8 tiles (a channel pair's, 32 bits a tile)
 * transposed to each tile's 8 points, stored at @d[i] + @off (tile i of
 * the 8, NULL: none).
 */
static __attribute__((__noinline__))
void qw_tr8(const v8si_w *r, __s16 *const *d, __u64 off)
{
	v8si_w t[8], q[8];
	int i;

	for (i = 0; i < 8; i += 2) {
		t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
		t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14,
						   7, 15);
	}
	for (i = 0; i < 8; i += 4) {
		q[i] = __builtin_shufflevector(t[i], t[i + 2], 0, 1, 8, 9, 4, 5, 12, 13);
		q[i + 1] = __builtin_shufflevector(t[i], t[i + 2], 2, 3, 10, 11, 6, 7,
						   14, 15);
		q[i + 2] = __builtin_shufflevector(t[i + 1], t[i + 3], 0, 1, 8, 9, 4, 5,
						   12, 13);
		q[i + 3] = __builtin_shufflevector(t[i + 1], t[i + 3], 2, 3, 10, 11, 6,
						   7, 14, 15);
	}
	for (i = 0; i < 4; i++) {
		if (d[i])
			*(v8si_wu *)(d[i] + off) = __builtin_shufflevector(q[i], q[i + 4],
				0, 1, 2, 3, 8, 9, 10, 11);
		if (d[i + 4])
			*(v8si_wu *)(d[i + 4] + off) = __builtin_shufflevector(q[i], q[i + 4],
				4, 5, 6, 7, 12, 13, 14, 15);
	}
}

/*
 * The block's V: per channel pair, both channels' rows staged, 16 tiles
 * of a tile row at a time transformed, their points interleaved by pair
 * and transposed to the tiles' 64 bytes.
 */
static __attribute__((__noinline__)) void qw_block_v(struct qwino *w, __u64 img, __u64 g)
{
	__u64 rows = 2 * (w->ty1 - w->ty0) + 2, plane = rows * w->p.sw;
	__s16 *e0 = w->st, *o0 = e0 + plane, *e1 = o0 + plane, *o1 = e1 + plane;
	v16hi_w *a = w->tr, *b = w->tr + 16;
	__u64 cp, r, ty, t0, x, i;

	for (cp = 0; cp < w->p.cp; cp++) {
		for (r = 0; r < rows; r++) {
			qw_stage(w, img, g, 2 * cp, 2 * w->ty0 + r,
				 e0 + r * w->p.sw, o0 + r * w->p.sw);
			qw_stage(w, img, g, 2 * cp + 1, 2 * w->ty0 + r,
				 e1 + r * w->p.sw, o1 + r * w->p.sw);
		}
		for (ty = 0; ty < w->ty1 - w->ty0; ty++)
			for (t0 = 0; t0 < w->p.tw; t0 += 16) {
				v8si_w lo[8], hi[8];
				__s16 *dl[8], *dh[8];

				qw_in16(w, e0, o0, ty, t0, a);
				qw_in16(w, e1, o1, ty, t0, b);
				for (i = 0; i < 8; i++) {
					__u64 tl = t0 + (i < 4 ? i : i + 4), th = tl + 4;

					dl[i] = tl < w->p.tw ? w->v + eng_qwino_off(w->nt, w->p.cp,
						ty * w->p.tw + tl, cp) / 2 : (__s16 *)0;
					dh[i] = th < w->p.tw ? w->v + eng_qwino_off(w->nt, w->p.cp,
						ty * w->p.tw + th, cp) / 2 : (__s16 *)0;
				}
#ifndef ENG_FMA
				/* The baseline stores each tile's points one by one. */
				for (i = 0; i < 16 && t0 + i < w->p.tw; i++) {
					__s16 *d = w->v + eng_qwino_off(w->nt, w->p.cp,
						ty * w->p.tw + t0 + i, cp) / 2;

					for (x = 0; x < 16; x++) {
						d[2 * x] = a[x][i];
						d[2 * x + 1] = b[x][i];
					}
				}
				continue;
#endif
				for (x = 0; x < 16; x += 8) {
					for (i = 0; i < 8; i++) {
						v16hi_w p = a[x + i], q = b[x + i];

						lo[i] = (v8si_w)__builtin_shufflevector(p, q,
							0, 16, 1, 17, 2, 18, 3, 19,
							8, 24, 9, 25, 10, 26, 11, 27);
						hi[i] = (v8si_w)__builtin_shufflevector(p, q,
							4, 20, 5, 21, 6, 22, 7, 23,
							12, 28, 13, 29, 14, 30, 15, 31);
					}
					qw_tr8(lo, dl, 2 * x);
					qw_tr8(hi, dh, 2 * x);
				}
			}
	}
}

/* Per tile of the block: its first position from the block's, and flags. */
static void qw_tiles(struct qwino *w)
{
	__u64 ty, tx;

	for (ty = w->ty0; ty < w->ty1; ty++)
		for (tx = 0; tx < w->p.tw; tx++)
			w->tile[(ty - w->ty0) * w->p.tw + tx] =
				(__u32)(((2 * (ty - w->ty0) * w->s.ow + 2 * tx) << 2) |
					(2 * tx + 1 < w->s.ow) |
					(2 * ty + 1 < w->s.oh) << 1);
}

static inline v8su_w qw_madd(v16hi_w a, v16hi_w b)
{
#ifdef ENG_FMA
	return (v8su_w)__builtin_ia32_pmaddwd256(a, b);
#else
	v8su_w r;
	int i;

	for (i = 0; i < 8; i++)
		r[i] = (__u32)((__s32)a[2 * i] * b[2 * i]) +
		       (__u32)((__s32)a[2 * i + 1] * b[2 * i + 1]);
	return r;
#endif
}

/*
 * The sums of rows @u0, @u1 (@ncp pairs) by @n tiles from @v (@vs bytes
 * apart) added to @src's (NULL: to 0) into @dst: dst[(r * 3 + j) * 2 + h]
 * for row r, tile j, points 8 h to 8 h + 7.
 */
static inline __attribute__((__always_inline__))
void qw_sums_c(const __u8 *u0, const __u8 *u1, const __u8 *v, __u64 vs,
	       __u64 ncp, __u64 n, const v8su_w *src, v8su_w *dst)
{
	v8su_w acc[12];
	__u64 p, j, h;

	for (j = 0; j < 12; j++)
		acc[j] = src ? src[j] : (v8su_w){};
	for (p = 0; p < ncp; p++)
		for (h = 0; h < 2; h++) {
			v16hi_w x0 = qw_ld(u0 + p * 64 + 32 * h);
			v16hi_w x1 = qw_ld(u1 + p * 64 + 32 * h);

			for (j = 0; j < n; j++) {
				v16hi_w b = qw_ld(v + j * vs + p * 64 + 32 * h);

				acc[j * 2 + h] += qw_madd(x0, b);
				acc[6 + j * 2 + h] += qw_madd(x1, b);
			}
		}
	for (j = 0; j < 12; j++)
		dst[j] = acc[j];
}

#ifdef ENG_FMA
/*
 * qw_sums_c() of 3 tiles: the 12 sums in ymm0-ymm11, the rows' 16 points
 * in ymm12 and ymm13, each tile's in ymm14: 10 loads for 12 vpmaddwd.
 */
static void qw_sums3(const __u8 *u0, const __u8 *u1, const __u8 *v, __u64 vs,
		     __u64 ncp, const v8su_w *src, v8su_w *dst)
{
#define QW_LD(i) "vmovdqa " #i "*32(%[src]), %%ymm" #i "\n\t"
#define QW_ST(i) "vmovdqa %%ymm" #i ", " #i "*32(%[dst])\n\t"
#define QW_Z(i) "vpxor %%xmm" #i ", %%xmm" #i ", %%xmm" #i "\n\t"
#define QW_MAC(o, vaddr, a, b)						\
	"vmovdqu " #o vaddr ", %%ymm14\n\t"				\
	"vpmaddwd %%ymm14, %%ymm12, %%ymm15\n\t"			\
	"vpmaddwd %%ymm14, %%ymm13, %%ymm14\n\t"			\
	"vpaddd %%ymm15, %%ymm" #a ", %%ymm" #a "\n\t"			\
	"vpaddd %%ymm14, %%ymm" #b ", %%ymm" #b "\n\t"
#define QW_HALF(o, a0, a1, a2, b0, b1, b2)				\
	"vmovdqu " #o "(%[u0]), %%ymm12\n\t"				\
	"vmovdqu " #o "(%[u1]), %%ymm13\n\t"				\
	QW_MAC(o, "(%[v])", a0, b0)					\
	QW_MAC(o, "(%[v],%[vs],1)", a1, b1)				\
	QW_MAC(o, "(%[v],%[vs],2)", a2, b2)
#define QW_LOOP(init)							\
	__asm__ __volatile__(init						\
		     "test %[n], %[n]\n\t"				\
		     "jz 2f\n\t"					\
		     ".p2align 5\n\t"					\
		     "1:\n\t"						\
		     QW_HALF(0, 0, 2, 4, 6, 8, 10)			\
		     QW_HALF(32, 1, 3, 5, 7, 9, 11)			\
		     "add $64, %[u0]\n\t"				\
		     "add $64, %[u1]\n\t"				\
		     "add $64, %[v]\n\t"				\
		     "dec %[n]\n\t"					\
		     "jnz 1b\n\t"					\
		     "2:\n\t"						\
		     QW_ST(0) QW_ST(1) QW_ST(2) QW_ST(3) QW_ST(4) QW_ST(5)	\
		     QW_ST(6) QW_ST(7) QW_ST(8) QW_ST(9) QW_ST(10) QW_ST(11)	\
		     : [u0] "+r"(u0), [u1] "+r"(u1), [v] "+r"(v), [n] "+r"(ncp) \
		     : [src] "r"(src), [dst] "r"(dst), [vs] "r"(vs)				\
		     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",	\
		       "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",	\
		       "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc")
	if (!src)
		QW_LOOP(QW_Z(0) QW_Z(1) QW_Z(2) QW_Z(3) QW_Z(4) QW_Z(5)
			QW_Z(6) QW_Z(7) QW_Z(8) QW_Z(9) QW_Z(10) QW_Z(11));
	else
		QW_LOOP(QW_LD(0) QW_LD(1) QW_LD(2) QW_LD(3) QW_LD(4) QW_LD(5)
			QW_LD(6) QW_LD(7) QW_LD(8) QW_LD(9) QW_LD(10) QW_LD(11));
#undef QW_LOOP
#undef QW_HALF
#undef QW_MAC
#undef QW_Z
#undef QW_ST
#undef QW_LD
}
#endif

/* qw_sums_c() of @n (1 to 3) tiles, not inlined. */
static __attribute__((__noinline__))
void qw_sums(const __u8 *u0, const __u8 *u1, const __u8 *v, __u64 vs,
	     __u64 ncp, __u64 n, const v8su_w *src, v8su_w *dst)
{
#ifdef ENG_FMA
	if (n == 3) {
		qw_sums3(u0, u1, v, vs, ncp, src, dst);
		return;
	}
	if (n == 2) {
		qw_sums_c(u0, u1, v, vs, ncp, 2, src, dst);
		return;
	}
	qw_sums_c(u0, u1, v, vs, ncp, 1, src, dst);
#else
	qw_sums_c(u0, u1, v, vs, ncp, n, src, dst);
#endif
}

/*
 * A^T M A of a tile's 16 points (@lo: rows 0 and 1 of the 4x4, @hi: rows
 * 2 and 3), wrapping, then >> 2: elements 0, 1 are the tile's first
 * output row, 4, 5 its second.
 */
static inline v8si_w qw_out(v8su_w lo, v8su_w hi)
{
	v8su_w plo = __builtin_shufflevector(lo, lo, 4, 5, 6, 7, 0, 1, 2, 3);
	v8su_w phi = __builtin_shufflevector(hi, hi, 4, 5, 6, 7, 0, 1, 2, 3);
	v8su_w x = lo + plo + hi, y = lo - phi - hi;
	v8su_w z = __builtin_shufflevector(x, y, 0, 1, 2, 3, 12, 13, 14, 15);
	v8su_w w1 = __builtin_shufflevector(z, z, 1, 2, 3, 3, 5, 6, 7, 7);
	v8su_w w2 = __builtin_shufflevector(z, z, 2, 3, 3, 3, 6, 7, 7, 7);
	v8su_w p = z + (w1 + w2), q = z - (w1 + w2);

	return (v8si_w)__builtin_shufflevector(p, q, 0, 9, 2, 3, 4, 13, 6, 7) >> 2;
}

/* S at position @p (from the block's) of row @r of the sums. */
static inline void qw_put1(const struct qwino *w, __u64 r, __u64 p, __s32 v)
{
	w->sum[(p / ENG_QNR * ENG_QWINO_KB + r) * ENG_QNR + p % ENG_QNR] = v;
}

/* Tile @t's outputs of row @r (of ENG_QWINO_KB) into the block's sums. */
static inline void qw_put(const struct qwino *w, __u64 r, __u64 t, v8si_w y)
{
	__u32 e = w->tile[t];
	__u64 p = e >> 2, ow = w->s.ow;

	if ((e & 1) && p % ENG_QNR != ENG_QNR - 1 &&
	    (p + ow) % ENG_QNR != ENG_QNR - 1) {
		*(s64_wu *)&w->sum[(p / ENG_QNR * ENG_QWINO_KB + r) * ENG_QNR +
				   p % ENG_QNR] = ((v4di_w)y)[0];
		if (e & 2)
			*(s64_wu *)&w->sum[((p + ow) / ENG_QNR * ENG_QWINO_KB + r) * ENG_QNR +
					   (p + ow) % ENG_QNR] = ((v4di_w)y)[2];
		return;
	}
	qw_put1(w, r, p, y[0]);
	if (e & 1)
		qw_put1(w, r, p + 1, y[1]);
	if (e & 2) {
		qw_put1(w, r, p + ow, y[4]);
		if (e & 1)
			qw_put1(w, r, p + ow + 1, y[5]);
	}
}

/* The outputs of tile @t's sums at @a (row @r of the block's sums). */
static QW_TR void qw_emit(const struct qwino *w, __u64 r, __u64 t, const v8su_w *a)
{
	qw_put(w, r, t, qw_out(a[0], a[1]));
}

/*
 * Rows [@k0, @k0 + @rows) (at most ENG_QWINO_KB) of group @g over the block:
 * chunk by chunk, 3 tiles by 2 rows at a time, S into w->sum.
 */
static __attribute__((__noinline__)) void qw_rows(struct qwino *w, __u64 g, __u64 k0, __u64 rows)
{
	const __u8 *ug = (const __u8 *)w->l->data[3] +
			 g * w->p.mp * w->p.cp * ENG_QWINO_PAIR;
	__u64 nch = eng_div_up(w->p.cp, VNPU_QWINO_CHUNK), h, t, k, j, r;

	for (h = 0; h < nch; h++) {
		__u64 pa = h * VNPU_QWINO_CHUNK;
		__u64 ncp = eng_min(VNPU_QWINO_CHUNK, w->p.cp - pa);
		const __u8 *uc = ug + eng_qwino_off(w->p.mp, w->p.cp, 0, pa);
		const __u8 *vc = (const __u8 *)w->v + eng_qwino_off(w->nt, w->p.cp, 0, pa);
		int first = !h, last = h + 1 == nch;

		for (t = 0; t < w->nt; t += 3) {
			__u64 n = eng_min(3, w->nt - t);

			for (k = 0; k < rows; k += 2) {
				v8su_w *acc = w->acc;

				/* The partial sums, 12 vectors a tile: in order. */
				v8su_w *m = w->part + (t / 3 * (ENG_QWINO_KB / 2) + k / 2) * 12;

				qw_sums(uc + (k0 + k) * ncp * ENG_QWINO_PAIR,
					uc + (k0 + k + 1) * ncp * ENG_QWINO_PAIR,
					vc + t * ncp * ENG_QWINO_PAIR, ncp * ENG_QWINO_PAIR,
					ncp, n, first ? (v8su_w *)0 : m, last ? acc : m);
				if (!last)
					continue;
				for (r = 0; r < 2 && k + r < rows; r++)
					for (j = 0; j < n; j++)
						qw_emit(w, k + r, t + j, acc + (r * 3 + j) * 2);
			}
		}
	}
}

static void *qw_align(__u8 **p, __u64 bytes)
{
	__u8 *r = (__u8 *)(((unsigned long)*p + ENG_ALIGN - 1) &
			   ~(unsigned long)(ENG_ALIGN - 1));

	*p = r + bytes;
	return r;
}

int eng_qwino_run(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *a = l->attrs;
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	const struct vnpu_cmd_tensor *rt = &l->t[l->n - 6];
	struct qwino w = { .l = l };
	struct eng_qadd_arg qa;
	struct eng_qout o;
	struct eng_qtile tl = { .out = &o };
	__u8 *sp = ctx->scratch;
	struct qw_held *h = qw_align(&sp, 64);
	__u64 u, npos_max;

	eng_conv_shape(l, &w.s);
	eng_qwino_plan(&w.s, &w.p);
	w.pb = a->pad_begin[0];
	w.pw = a->pad_begin[1];
	w.flip = l->t[0].dtype == VNPU_DTYPE_I8 ? 0x80 : 0;
	w.xz = qw_zero(l);
	eng_qout_layer(l, &qa, &o);
	npos_max = eng_div_up(2 * w.p.tbr * (2 * w.p.tw), ENG_QNR) * ENG_QNR + ENG_QNR;
	if (!ctx->epoch || h->epoch != ctx->epoch || h->attrs != l->attrs) {
		h->epoch = ctx->epoch;
		h->attrs = l->attrs;
		h->key = ~0ull;
	}
	w.v = qw_align(&sp, w.p.nt * w.p.cp * ENG_QWINO_PAIR);
	w.st = qw_align(&sp, 2 * 2 * (2 * w.p.tbr + 2) * w.p.sw * 2);
	w.tr = qw_align(&sp, 2 * 16 * 32);
	w.part = w.p.cp > VNPU_QWINO_CHUNK ?
		 qw_align(&sp, ENG_QWINO_KB * (w.p.nt + 2) * ENG_QWINO_PAIR) : (v8su_w *)0;
	w.sum = qw_align(&sp, ENG_QWINO_KB * npos_max * 4);
	w.tile = qw_align(&sp, 4 * w.p.nt);
	w.acc = qw_align(&sp, 12 * 32);
	tl.acc = w.sum;
	for (u = ub; u < ue; u++) {
		__u64 mbi = u % w.p.nmb, blk = u / w.p.nmb;
		__u64 tb = blk % w.p.ntb, g = blk / w.p.ntb % w.s.group;
		__u64 img = blk / w.p.ntb / w.s.group;
		__u64 m0 = mbi * w.p.mb, m1 = eng_min(m0 + w.p.mb, w.s.mg), k0, j;
		__u64 p0, npos;
		__u8 *yd;
		const __u8 *rd = (const __u8 *)0;

		w.ty0 = tb * w.p.tbr;
		w.ty1 = eng_min(w.ty0 + w.p.tbr, w.p.th);
		w.nt = (w.ty1 - w.ty0) * w.p.tw;
		if (blk != h->key) {
			qw_block_v(&w, img, g);
			qw_tiles(&w);
			h->key = blk;
		}
		p0 = 2 * w.ty0 * w.s.ow;
		npos = (eng_min(2 * w.ty1, w.s.oh) - 2 * w.ty0) * w.s.ow;
		yd = (__u8 *)l->data[l->n - 1] + (__s64)img * y->strides[0] + (__s64)p0;
		if (o.res)
			rd = (const __u8 *)l->data[l->n - 6] +
			     (__s64)img * rt->strides[0] + (__s64)p0;
		for (k0 = m0; k0 < m1; k0 += ENG_QWINO_KB) {
			__u32 rows = (__u32)eng_min(ENG_QWINO_KB, m1 - k0);
			__u64 m = g * w.s.mg + k0;

			qw_rows(&w, g, k0, rows);
			eng_qout_rows(l, m, rows, &o);
			for (j = 0; j < npos; j += ENG_QNR) {
				tl.acc = w.sum + j / ENG_QNR * ENG_QWINO_KB * ENG_QNR;
				o.n = (__u32)eng_min(ENG_QNR, npos - j);
				o.y = yd + (__s64)m * y->strides[1] + (__s64)j;
				if (rd) {
					o.rs = rt->strides[1];
					o.r = rd + (__s64)m * o.rs + (__s64)j;
				}
				qtile_out(&tl);
			}
			eng_pause(ctx);
		}
	}
	return 0;
}

#ifdef ENG_FMA
/*
 * What a part's scratch holds for the layer's next units on it: U of the
 * layer of @attrs, made in run @epoch, and V of block @key (image * nb +
 * block; ~0: none).
 */
struct qw4_held {
	__u64 epoch;
	const void *attrs;
	__u64 key;
};

/*
 * A packed QLINEAR_CONV as F(4x4, 3x3) on AVX512-VNNI hosts (eng_qw4_fits(),
 * vnpu_eng_priv.h): U read in place after W's rows (%VNPU_LAYER_F_QW4), or
 * made by each part from them once a run; per unit, V of its
 * block of tile rows (unless the part holds it), its 16 output channels'
 * sums (vnpu_eng_qw4_sums()) and the direct path's requantization
 * (qtile_out()).
 */
int eng_qw4_run(const struct eng_layer *l, __u64 ub, __u64 ue,
		const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[l->n - 1];
	const struct vnpu_cmd_tensor *zt = &l->t[5];
	struct eng_conv_shape s;
	struct eng_qw4plan p;
	struct eng_qw4 q;
	struct eng_qadd_arg qa;
	struct eng_qout o;
	struct eng_qtile tl = { .out = &o };
	__u8 *sp = ctx->scratch;
	struct qw4_held *h = qw_align(&sp, 64);
	__s32 *wz;
	__u64 u, m;
	int wz0 = 1, held = !!(((const struct vnpu_layer_conv *)l->attrs)->flags &
			       VNPU_LAYER_F_QW4);
	__u32 *um = (__u32 *)0;

	eng_conv_shape(l, &s);
	eng_qw4_plan(&s, &p);
	q.w = l->data[3];
	q.k4 = eng_q4(s.cg * 9);
	q.cg = s.cg;
	q.mg = p.mg;
	q.cp = p.cp;
	q.tb = p.tb;
	q.tw = p.tw;
	q.nv = p.nv;
	q.h = s.h;
	q.w_in = s.w;
	q.oh = s.oh;
	q.ow = s.ow;
	q.th = p.th;
	q.xs1 = x->strides[1];
	q.xs2 = x->strides[2];
	q.flip = x->dtype == VNPU_DTYPE_I8 ? 0x80 : 0;
	q.xz = qw_zero(l);
	wz = qw_align(&sp, 64 * p.mg);
	if (held) {
		q.u = (const __u32 *)((const __u8 *)l->data[3] +
				      eng_qw4_uoff(eng_div_up(s.mg, ENG_QMR) * ENG_QMR,
						   q.k4));
	} else {
		um = qw_align(&sp, eng_qw4_ubytes(&p));
		q.u = um;
	}
	q.v = qw_align(&sp, eng_qw4_vbytes(&p));
	q.st = qw_align(&sp, 2 * (4 * p.tb + 2) * 64);
	q.mb = qw_align(&sp, 36 * 1024);
	q.sacc = qw_align(&sp, 16 * 1024);
	q.tt = qw_align(&sp, 36 * 64);
	q.s = qw_align(&sp, eng_qw4_sbytes(&p));
	for (m = 0; m < s.mg; m++) {
		__s64 off = zt->rank == 1 && zt->dims[0] > 1 ? (__s64)m * zt->strides[0] : 0;

		wz[m] = ((const __s8 *)l->data[5])[off];
		wz0 &= !wz[m];
	}
	q.wz = wz;
	q.pairs = wz0 ? ENG_QW4_PAIRS : ENG_QW4_PAIRS / 2;
	if (!ctx->epoch || h->epoch != ctx->epoch || h->attrs != l->attrs) {
		if (!held)
			vnpu_eng_qw4_u(&q, um);
		h->epoch = ctx->epoch;
		h->attrs = l->attrs;
		h->key = ~0ull;
	}
	eng_qout_layer(l, &qa, &o);
	for (u = ub; u < ue; u++) {
		__u64 g16 = u % p.mg, blk = u / p.mg, b = blk % p.nb, img = blk / p.nb;
		__u64 ty0 = b * p.tb, ty1 = eng_min(ty0 + p.tb, p.th), half, j;
		__u64 npos = (eng_min(4 * ty1, s.oh) - 4 * ty0) * s.ow;
		__u8 *yd = (__u8 *)l->data[l->n - 1] + (__s64)img * y->strides[0] +
			   (__s64)(4 * ty0 * s.ow);

		if (blk != h->key) {
			q.x = (const __u8 *)l->data[0] + (__s64)img * x->strides[0];
			vnpu_eng_qw4_v(&q, ty0, ty1);
			h->key = blk;
		}
		vnpu_eng_qw4_sums(&q, ty0, ty1, g16);
		for (half = 0; half < 2; half++) {
			m = g16 * 16 + 8 * half;
			eng_qout_rows(l, m, 8, &o);
			for (j = 0; j < npos; j += ENG_QNR) {
				tl.acc = q.s + (j / ENG_QNR * 16 + 8 * half) * ENG_QNR;
				o.n = (__u32)eng_min(ENG_QNR, npos - j);
				o.y = yd + (__s64)m * y->strides[1] + (__s64)j;
				qtile_out(&tl);
			}
		}
		eng_pause(ctx);
	}
	return 0;
}
#endif
