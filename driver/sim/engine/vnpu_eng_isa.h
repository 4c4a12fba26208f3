/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The float kernels' build: which instruction set, and the names their
 * functions take in it. Each float kernel file is compiled twice, once
 * with ENG_ISA_AVX2 defined (and -mavx2 -mfma) and once with ENG_ISA_BASE
 * (SSE2 only): engine.kbuild for vnpu.ko, meson.build for the host. A
 * function that another file of the kernels calls is external, so each
 * build gives it a name of its own, vnpu_eng_avx2_NAME or
 * vnpu_eng_base_NAME, through the block below (as zlib's Z_PREFIX does):
 * its definition and its callers keep writing NAME.
 *
 * A new function called from another kernel file: drop its static, put
 * its prototype in vnpu_eng_kern.h (vnpu_eng_gemm_kern.h if it takes the
 * GEMM's blocks), and its name in the block below, in its file's line.
 * Functions used in one file stay static and need none of this.
 */
#ifndef _VNPU_ENG_ISA_H_
#define _VNPU_ENG_ISA_H_

#if defined(ENG_ISA_AVX2)
#define ENG_FMA 1
#define ENG_SYM(name) vnpu_eng_avx2_##name
#define ENG_TABLE vnpu_eng_kernels_avx2
#elif defined(ENG_ISA_BASE)
#define ENG_SYM(name) vnpu_eng_base_##name
#define ENG_TABLE vnpu_eng_kernels_base
#else
#error "the float kernels build with ENG_ISA_AVX2 or ENG_ISA_BASE defined"
#endif

/* vnpu_eng_act.c */
#define act_bound ENG_SYM(act_bound)
#define act_d ENG_SYM(act_d)
#define act_f32 ENG_SYM(act_f32)
#define act_i ENG_SYM(act_i)
#define act_rows_f32 ENG_SYM(act_rows_f32)
#define act_vmath_f32 ENG_SYM(act_vmath_f32)
#define hswish_f32 ENG_SYM(hswish_f32)
/* vnpu_eng_iter.c */
#define elem_range ENG_SYM(elem_range)
#define flat_range ENG_SYM(flat_range)
#define iter_add ENG_SYM(iter_add)
#define iter_init ENG_SYM(iter_init)
#define iter_run ENG_SYM(iter_run)
#define iter_run_pairs ENG_SYM(iter_run_pairs)
#define load_d ENG_SYM(load_d)
#define load_i ENG_SYM(load_i)
#define row_range ENG_SYM(row_range)
#define store_d ENG_SYM(store_d)
#define store_i ENG_SYM(store_i)
/* vnpu_eng_gemm.c */
#define act_store ENG_SYM(act_store)
#define batch_offset ENG_SYM(batch_offset)
#define block_flush ENG_SYM(block_flush)
#define conv_epi ENG_SYM(conv_epi)
#define copy_f32 ENG_SYM(copy_f32)
#define epi_plain ENG_SYM(epi_plain)
#define flush_seg ENG_SYM(flush_seg)
#define gemm_block ENG_SYM(gemm_block)
#define gemm_pack_b ENG_SYM(gemm_pack_b)
#define load_f32 ENG_SYM(load_f32)
#define run_conv ENG_SYM(run_conv)
#define run_gemm ENG_SYM(run_gemm)
#define run_pool ENG_SYM(run_pool)
#define transpose8 ENG_SYM(transpose8)
#define valid_span ENG_SYM(valid_span)
#define zero_f32 ENG_SYM(zero_f32)
/* vnpu_eng_wino.c */
#define run_conv_wino ENG_SYM(run_conv_wino)
#define wino_part_in16 ENG_SYM(wino_part_in16)
#define wino_part_run ENG_SYM(wino_part_run)
#define wino_part_start ENG_SYM(wino_part_start)
#define wino_pack_u ENG_SYM(wino_pack_u)
/* vnpu_eng_wino2.c */
#define run_conv_wino2 ENG_SYM(run_conv_wino2)
/* vnpu_eng_dw.c */
#define run_conv_dw ENG_SYM(run_conv_dw)
#define run_conv_dw_lanes ENG_SYM(run_conv_dw_lanes)
#define run_conv_dw_window ENG_SYM(run_conv_dw_window)
/* vnpu_eng_elem.c */
#define copy_run ENG_SYM(copy_run)
#define run_argreduce ENG_SYM(run_argreduce)
#define run_binary ENG_SYM(run_binary)
#define run_cast ENG_SYM(run_cast)
#define run_lookup ENG_SYM(run_lookup)
#define run_norm ENG_SYM(run_norm)
#define run_reduce ENG_SYM(run_reduce)
#define run_softmax ENG_SYM(run_softmax)
#define run_unary ENG_SYM(run_unary)
#define run_where ENG_SYM(run_where)
#define softmax_row_f32 ENG_SYM(softmax_row_f32)
#define softmax_rows_max_f32 ENG_SYM(softmax_rows_max_f32)
/* vnpu_eng_data.c */
#define cubic_w ENG_SYM(cubic_w)
#define load_index ENG_SYM(load_index)
#define run_gather ENG_SYM(run_gather)
#define run_gather_elements ENG_SYM(run_gather_elements)
#define run_pad ENG_SYM(run_pad)
#define run_resize ENG_SYM(run_resize)
/* vnpu_eng_quant.c */
#define eng_qout_layer ENG_SYM(eng_qout_layer)
#define eng_qout_rows ENG_SYM(eng_qout_rows)
#define run_qlinear_add ENG_SYM(run_qlinear_add)
#define run_qlinear_conv ENG_SYM(run_qlinear_conv)
#define run_qmatmul ENG_SYM(run_qmatmul)
#define run_quant ENG_SYM(run_quant)
/* vnpu_eng_scatter.c */
#define run_gather_nd ENG_SYM(run_gather_nd)
#define run_scatter_elements ENG_SYM(run_scatter_elements)
#define run_scatter_nd ENG_SYM(run_scatter_nd)
/* vnpu_eng_grid.c, vnpu_eng_tfidf.c, vnpu_eng_det.c, vnpu_eng_roi.c */
#define run_grid_sample ENG_SYM(run_grid_sample)
#define run_tfidf ENG_SYM(run_tfidf)
#define run_det ENG_SYM(run_det)
#define run_roi_align ENG_SYM(run_roi_align)
/* vnpu_eng_poolidx.c, vnpu_eng_chain.c, vnpu_eng_lstm.c, vnpu_eng_move.c */
#define run_maxpool_index ENG_SYM(run_maxpool_index)
#define run_chain ENG_SYM(run_chain)
#define bin_f32_runs ENG_SYM(bin_f32_runs)
#define run_lstm ENG_SYM(run_lstm)
#define eng_transpose32 ENG_SYM(eng_transpose32)
/* vnpu_eng_attn.c */
#define run_attention ENG_SYM(run_attention)
/* vnpu_eng_qgemv.c */
#define eng_qgemv_conv ENG_SYM(eng_qgemv_conv)
#define eng_qgemv_fits ENG_SYM(eng_qgemv_fits)
/* vnpu_eng_qwino.c */
#define eng_qwino_run ENG_SYM(eng_qwino_run)
#define eng_qw4_run ENG_SYM(eng_qw4_run)

#endif /* _VNPU_ENG_ISA_H_ */
