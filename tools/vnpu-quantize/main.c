// SPDX-License-Identifier: MIT
/*
 * vnpu-quantize: post-training static quantization of an f32 ONNX model
 * into a QDQ model (QuantizeLinear / DequantizeLinear around Conv, Gemm,
 * MatMul, Add and pooling, s8 weights per output channel) that vnpu
 * compiles to int8 layers and ONNX Runtime runs too.
 *
 *   vnpu-quantize -m MODEL -o OUT.onnx (-c CALIB_DIR | -r N) [options]
 *
 * The model is calibrated on the CPU device with the samples of
 * CALIB_DIR or N random ones, rewritten, written to OUT.onnx, and then
 * both models run on evaluation samples to print how far the QDQ model is
 * from the f32 one. Documentation/vnpu/quantize.rst has the recipe.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "quantize.h"
#include "usage.h"

#define MAX_KEEP 4096

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vnpu-quantize -m MODEL -o OUT.onnx (-c CALIB_DIR | -r N)\n"
		"                     [-a u8|s8] [-C minmax|percentile] [-p P]\n"
		"                     [-k NODE[,NODE...]] [-t OP[,OP...]] [-e EVAL_DIR]\n"
		"                     [-s SEED] [--json]\n"
		"Quantize an f32 ONNX model into a QDQ model (s8 weights per output channel,\n"
		"u8 or s8 activations) and print how far it is from the f32 model.\n"
		"  -m, --model MODEL          the f32 .onnx file (opset 13 or later)\n"
		"  -o, --output OUT.onnx      where to write the QDQ model\n"
		"  -c, --calib-dir DIR        calibration samples: .npy or .pb files (one\n"
		"                             input), or folders of input_N.pb/.npy files\n"
		"  -r, --random N             calibrate on N random samples in [-1, 1]\n"
		"  -a, --activations T        u8 (default) or s8 activations\n"
		"  -C, --calibration M        minmax (default) or percentile\n"
		"  -p, --percentile P         percentile of |x| kept (default 99.99;\n"
		"                             implies -C percentile)\n"
		"  -k, --keep-float NODES     node names (comma-separated, repeatable) that\n"
		"                             stay f32\n"
		"  -t, --op-types OPS         the op types to quantize (comma-separated,\n"
		"                             repeatable; default all: Conv, Gemm, MatMul,\n"
		"                             Add, AveragePool, GlobalAveragePool, MaxPool)\n"
		"  -e, --eval-dir DIR         held-out samples for the accuracy report\n"
		"                             (default: N new random samples with -r, the\n"
		"                             calibration samples with -c)\n"
		"  -s, --seed N               seed of the random samples (default 1)\n"
		"  -j, --json                 print the report as JSON\n"
		"  -h, --help                 this text\n");
}

static int parse_count(const char *opt, const char *arg, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (end == arg || *end || errno || v <= 0 || v > max)
		return usage_error(TOOL, "%s takes a number from 1 to %ld, not \"%s\"", opt, max,
				   arg);
	*out = v;
	return 0;
}

static int parse_percentile(struct options *o, const char *arg)
{
	char *end;

	errno = 0;
	o->percentile = strtod(arg, &end);
	if (end == arg || *end || errno || !(o->percentile > 50) || o->percentile > 100)
		return usage_error(TOOL, "--percentile takes a number above 50 and up to 100, "
				   "not \"%s\"", arg);
	o->method = CALIB_PERCENTILE;
	return 0;
}

/* OP[,OP...] into o->ops (@arg is modified). */
static int parse_ops(struct options *o, char *arg)
{
	for (char *save = NULL, *p = strtok_r(arg, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (!qdq_op_known(p))
			return usage_error(TOOL, "--op-types takes Conv, Gemm, MatMul, Add, "
					   "AveragePool, GlobalAveragePool or MaxPool, not \"%s\"", p);
		if (o->num_ops < sizeof(o->ops) / sizeof(o->ops[0]))
			o->ops[o->num_ops++] = p;
	}
	return 0;
}

/* NODE[,NODE...] appended to o->keep (@arg is modified). */
static int parse_keep(struct options *o, char *arg)
{
	for (char *save = NULL, *p = strtok_r(arg, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (o->num_keep == MAX_KEEP)
			return usage_error(TOOL, "--keep-float: more than %d nodes", MAX_KEEP);
		o->keep[o->num_keep++] = p;
	}
	return 0;
}

static int parse_option(struct options *o, int c)
{
	long seed;

	switch (c) {
	case 'm': o->model = optarg; return 0;
	case 'o': o->out = optarg; return 0;
	case 'c': o->calib_dir = optarg; return 0;
	case 'e': o->eval_dir = optarg; return 0;
	case 'j': o->json = true; return 0;
	case 'r': return parse_count("--random", optarg, 65536, &o->random);
	case 'p': return parse_percentile(o, optarg);
	case 'k': return parse_keep(o, optarg);
	case 't': return parse_ops(o, optarg);
	case 'a':
		if (strcmp(optarg, "u8") && strcmp(optarg, "s8"))
			return usage_error(TOOL, "--activations takes u8 or s8, not \"%s\"", optarg);
		o->s8 = !strcmp(optarg, "s8");
		return 0;
	case 'C':
		if (strcmp(optarg, "minmax") && strcmp(optarg, "percentile"))
			return usage_error(TOOL, "--calibration takes minmax or percentile, not "
					   "\"%s\"", optarg);
		o->method = strcmp(optarg, "minmax") ? CALIB_PERCENTILE : CALIB_MINMAX;
		return 0;
	case 's':
		if (parse_count("--seed", optarg, INT_MAX, &seed))
			return 2;
		o->seed = (unsigned int)seed;
		return 0;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		usage(stderr);
		return 2;
	}
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option long_options[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "calib-dir", required_argument, NULL, 'c' },
		{ "random", required_argument, NULL, 'r' },
		{ "activations", required_argument, NULL, 'a' },
		{ "calibration", required_argument, NULL, 'C' },
		{ "percentile", required_argument, NULL, 'p' },
		{ "keep-float", required_argument, NULL, 'k' },
		{ "op-types", required_argument, NULL, 't' },
		{ "eval-dir", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret;

	o->seed = 1;
	o->percentile = 99.99;
	while ((c = getopt_long(argc, argv, "m:o:c:r:a:C:p:k:t:e:s:jh", long_options, NULL)) != -1) {
		ret = parse_option(o, c);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return usage_error(TOOL, "unexpected argument \"%s\"", argv[optind]);
	if (!o->model)
		return usage_error(TOOL, "a model is needed (-m MODEL)");
	if (!o->out)
		return usage_error(TOOL, "an output file is needed (-o OUT.onnx)");
	if (!o->calib_dir == !o->random)
		return usage_error(TOOL, "give calibration samples: -c CALIB_DIR or -r N (one "
				   "of them)");
	return 0;
}

/* The samples the report runs: -e DIR, N new random ones, or the calibration's. */
static int eval_samples(vnpu_model *m, const struct options *o, struct samples *s)
{
	if (o->eval_dir) {
		if (samples_read_dir(m, o->eval_dir, s))
			return 1;
		s->source = "held-out samples (-e)";
		return 0;
	}
	if (samples_random(m, o->random, o->seed + 1, s))
		return 1;
	s->source = "random samples (not the calibration's)";
	return 0;
}

static int quantize(const struct options *o, vnpu_core *core, struct qmodel *qm,
		    vnpu_model *f32, const struct samples *calib)
{
	struct samples eval = { 0 };
	size_t tensors, weights, size = 0;
	uint8_t *buf = NULL;
	int ret;

	ret = samples_apply_shapes(f32, calib) || qdq_fold_batchnorm(qm, o);
	if (!ret) {
		qdq_plan(qm, o);
		ret = calibrate(core, qm, calib, o) || qdq_rewrite(qm, o, &tensors, &weights) ||
		      qm_pack(qm, &buf, &size) || qm_write(o->out, buf, size);
	}
	if (!ret && (o->eval_dir || o->random))
		ret = eval_samples(f32, o, &eval);
	if (!ret && o->json) {
		printf("{\n  \"model\": ");
		json_string(stdout, o->model);
		printf(",\n  \"output\": ");
		json_string(stdout, o->out);
		printf(",\n  \"activations\": \"%s\",\n  \"quantized_tensors\": %zu,\n"
		       "  \"quantized_weights\": %zu", o->s8 ? "s8" : "u8", tensors, weights);
	} else if (!ret) {
		printf("%s: %zu activations and %zu weights quantized (%s activations, %s "
		       "calibration on %zu samples)\n", o->out, tensors, weights,
		       o->s8 ? "s8" : "u8", o->method == CALIB_MINMAX ? "min-max" : "percentile",
		       calib->count);
	}
	if (!ret)
		ret = evaluate(core, f32, buf, size, eval.count ? &eval : calib, o);
	if (!ret && o->json)
		printf("\n}\n");
	samples_fini(&eval);
	free(buf);
	return ret;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct samples calib = { 0 };
	struct qmodel qm = { 0 };
	const char *keep[MAX_KEEP];
	vnpu_model *f32 = NULL;
	vnpu_core *core;
	int ret;

	o.keep = keep;
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret;
	if (vnpu_core_create(&core))
		return run_fail("core");
	ret = qm_read(o.model, core, &qm, &f32) || qm_check_keep(&qm, &o);
	if (!ret && o.calib_dir) {
		ret = samples_read_dir(f32, o.calib_dir, &calib);
		calib.source = "calibration samples";
	} else if (!ret) {
		ret = samples_random(f32, o.random, o.seed, &calib);
	}
	if (!ret)
		ret = quantize(&o, core, &qm, f32, &calib);
	samples_fini(&calib);
	qm_fini(&qm);
	vnpu_model_free(f32);
	vnpu_core_free(core);
	return ret;
}
