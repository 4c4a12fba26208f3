/* SPDX-License-Identifier: MIT */
/*
 * vnpu-quantize: post-training static quantization of an ONNX model into
 * a QDQ model, in four parts:
 *   graph.c   the decoded ModelProto, an index of its main graph's tensors,
 *             and the edits (new initializers and nodes, renames, packing)
 *   qdq.c     BatchNorm folding, which tensors to quantize, and the rewrite
 *             into QuantizeLinear / DequantizeLinear pairs and int8 weights
 *   calib.c   the samples (a folder of tensor files or random values) and
 *             the calibration: ranges and histograms of the f32 model's
 *             tensors, run on the CPU device
 *   eval.c    the f32 and the QDQ model on the same samples, compared
 */
#ifndef VNPU_QUANTIZE_H
#define VNPU_QUANTIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vnpu/vnpu.h>

#include "onnx.pb-c.h"

#define TOOL "vnpu-quantize"

/* Bins of a percentile histogram of |x|, over [0, its top]. */
#define HIST_BINS 2048

enum calib_method { CALIB_MINMAX, CALIB_PERCENTILE };

struct options {
	const char *model;
	const char *out;
	const char *calib_dir;
	const char *eval_dir;
	long random;		/* --random N; 0 with -c */
	bool s8;		/* s8 activations, else u8 */
	enum calib_method method;
	double percentile;	/* of |x| kept in range, e.g. 99.99 */
	const char **keep;	/* node names kept f32 */
	size_t num_keep;
	const char *ops[8];	/* op types to quantize; none: all */
	size_t num_ops;
	unsigned int seed;
	bool json;
};

/* Model inputs for several runs: @count samples of @num_inputs tensors. */
struct samples {
	size_t count, num_inputs;
	vnpu_tensor **t;	/* [sample * num_inputs + input] */
	uint64_t bytes;		/* their data together */
	const char *source;	/* what they are, for the report */
};

/* The values one tensor took over the calibration runs. */
struct tensor_stats {
	double lo, hi;
	uint64_t count;
	double top;		/* of the histogram, 0 until a value is seen */
	uint64_t *hist;		/* HIST_BINS, percentile calibration only */
};

/* A name of the main graph and what the quantizer knows and plans of it. */
struct qtensor {
	const char *name;	/* the graph's own string */
	int32_t producer;	/* node index, -1 for none */
	int32_t init;		/* initializer index, -1 for none */
	uint32_t readers;	/* input slots of main-graph nodes reading it */
	int32_t reader;		/* the last node reading it, -1 for none */
	int32_t weight_axis;	/* a weight quantized per channel on this axis, or -1 */
	bool graph_input, graph_output;
	bool quant;		/* an activation to get a Q -> DQ pair */
	int32_t share;		/* takes this tensor's parameters (MaxPool), or -1 */
	bool calibrated;	/* f32 values were seen */
	struct tensor_stats stats;
	float scale;		/* set by qdq_rewrite() */
	int32_t zero_point;
	char *scale_name, *zp_name, *dq_name;
	const float *wscale;	/* a weight's channel scales, in its initializer */
};

struct name_map {
	uint32_t cap;		/* a power of two */
	int32_t *slots;		/* tensor index or -1 */
};

struct qmodel {
	Onnx__ModelProto *proto;
	Onnx__GraphProto *g;
	struct qtensor *t;
	uint32_t num_t, cap_t;
	struct name_map map;
	char **owned;		/* names the index made, freed with it */
	size_t num_owned, cap_owned;
};

/*
 * Functions return 0 on success and otherwise print one line to stderr
 * and return non-zero (1), unless they say otherwise.
 */

/* graph.c: read @path (checked by libvnpu's reader, which gives *@f32). */
int qm_read(const char *path, vnpu_core *core, struct qmodel *qm, vnpu_model **f32);
void qm_fini(struct qmodel *qm);
/* Rebuild the index of the main graph (plans and statistics are dropped). */
int qm_index(struct qmodel *qm);
/* The index of @name, -1 when the graph has none. */
int32_t qm_find(const struct qmodel *qm, const char *name);
/* @base @suffix, or with _N added, a name the graph does not use yet
 * (registered, so the next call gives another); NULL on no memory. */
const char *qm_unique(struct qmodel *qm, const char *base, const char *suffix);
/* Every -k name is a node of the main graph. */
int qm_check_keep(const struct qmodel *qm, const struct options *o);
bool qm_kept(const struct options *o, const Onnx__NodeProto *n);
/* @n is the default domain's @op. */
bool qm_is(const Onnx__NodeProto *n, const char *op);
int64_t qm_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def);
float qm_attr_float(const Onnx__NodeProto *n, const char *name, float def);
/* The values of f32 initializer @tensor; 1 without a message when it is no
 * f32 initializer, -1 with one when its data is bad. */
int qm_init_floats(const struct qmodel *qm, int32_t tensor, vnpu_tensor **out);
/* A new initializer (copies of @dims and @data), NULL on no memory. */
Onnx__TensorProto *qm_add_init(struct qmodel *qm, const char *name, int32_t type,
			       const int64_t *dims, size_t rank, const void *data,
			       size_t bytes);
/* A new node of one output (@axis >= 0: an "axis" attribute), not in the
 * graph yet; NULL on no memory. */
Onnx__NodeProto *qm_new_node(const char *op, const char *name, const char *const *in,
			     size_t n_in, const char *out, int64_t axis);
/* *@field becomes a copy of @s; the old string lives until qm_fini(). */
int qm_set_name(struct qmodel *qm, char **field, const char *s);
/* Drop initializers nothing reads, then rebuild the index. */
int qm_drop_unused_inits(struct qmodel *qm);
int qm_pack(const struct qmodel *qm, uint8_t **out, size_t *size);
int qm_write(const char *path, const uint8_t *data, size_t size);
int qm_oom(void);

/* qdq.c: fold BatchNorms, choose the tensors and weights, rewrite. */
int qdq_fold_batchnorm(struct qmodel *qm, const struct options *o);
void qdq_plan(struct qmodel *qm, const struct options *o);
bool qdq_op_known(const char *op);
int qdq_rewrite(struct qmodel *qm, const struct options *o, size_t *out_tensors,
		size_t *out_weights);

/* calib.c: samples (samples_fini() also after a failure) and calibration. */
int samples_random(vnpu_model *m, long n, unsigned int seed, struct samples *s);
int samples_read_dir(vnpu_model *m, const char *dir, struct samples *s);
void samples_fini(struct samples *s);
/* Dynamic input dimensions of @m take the first sample's. */
int samples_apply_shapes(vnpu_model *m, const struct samples *s);
int calibrate(vnpu_core *core, struct qmodel *qm, const struct samples *s,
	      const struct options *o);
/* The range to quantize a calibrated tensor over (-C, -p). */
void stats_range(const struct tensor_stats *st, const struct options *o, double *lo,
		 double *hi);

/* eval.c: both models on @s and the report. */
int evaluate(vnpu_core *core, vnpu_model *f32, const uint8_t *qdq, size_t qdq_size,
	     const struct samples *s, const struct options *o);
/* Print @what and libvnpu's last error; returns 1. */
int run_fail(const char *what);
/* Sample @k's tensors as @req's inputs. */
int set_sample(vnpu_infer_request *req, const struct samples *s, size_t k);

#endif /* VNPU_QUANTIZE_H */
