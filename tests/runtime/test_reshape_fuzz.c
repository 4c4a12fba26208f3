// SPDX-License-Identifier: MIT
/*
 * Random reshapes of the ONNX node suite's models through the public API.
 * A seeded, deterministic loop picks a model of the suite, reads it, gives
 * its inputs a few random shapes with vnpu_model_reshape() (any rank up to
 * past VNPU_MAX_RANK, dimensions from 0 to INT64_MAX, negative ones, the
 * declared shape changed a little), compiles what the nodes took and runs
 * what compiled (inputs zero). A sequence input gets a random length and
 * element shapes with vnpu_model_reshape_sequence() instead, three times in
 * four (the fourth, vnpu_model_reshape(), must refuse it). One time in
 * eight (not with -F) a tensor input is frozen with vnpu_model_freeze_input()
 * instead (its shape with the dynamic dimensions set, or changed as a
 * reshape's is; zeros, or for up to 4096 elements one time in two values
 * from 0 to INT64_MAX, negative ones, NaN and infinities), refused as
 * documented or taken. It fails on
 *
 *   - a failed call without a message, or with a message of several lines;
 *   - a refused reshape (or sequence reshape) that changed the model
 *     (inputs' and outputs' shapes and types) or whose status is not the
 *     documented one;
 *   - an accepted reshape after which the input does not have the shape;
 *   - a compile the device refused to load (the compiler must refuse
 *     what the device does not take, or shape inference before it);
 *   - a compiled model whose ports are not the model's shapes;
 *   - a run failing after a successful compile: a shape the compiler
 *     took is one the device runs (a command may fault on random frozen
 *     values, an index out of range: counted, not a broken rule);
 *
 * and, as every test, on a crash or a sanitizer's report. Before the loop,
 * the shapes it found that broke these rules once must be refused with
 * the node's message, or taken (regressions[]; not with given models).
 *
 *   test-runtime-reshape-fuzz [-d DEVICE] [-F] [-k] [-n CHAINS] [-s SEED] [-v] [MODEL.onnx...]
 *
 * A chain is one model read, up to four reshapes or freezes and one
 * compile. -F reshapes only, no freezes (-f, freezes, is the default). -k goes
 * on after a chain that broke a rule (the test still fails). -v prints
 * every reshape taken and every refusal and failure with its message
 * ("reshaped", "reshape", "compile", "run" lines: sort them to see the
 * classes), and after a refused compile the shapes of the model's inputs
 * ("inputs" line). It prints its figures at the end, with its slowest chain.
 */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vnpu/vnpu.h>

#include "runtime_test.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"
#define MAX_CHAIN 4
/* Ports and arena of a compiled model the test still runs. */
#define MAX_RUN_BYTES (256ull << 20)

static uint64_t rng_state;
static bool verbose, freezes = true;
static const char *device = "CPU";

/* xorshift64*: the same shapes for the same seed everywhere. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static size_t rnd_below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

struct counts {
	unsigned long chains, not_read, reshaped, refused, seq_reshaped, seq_refused;
	unsigned long frozen, freeze_refused, faulted;
	bool random_frozen;	/* this chain froze random values */
	unsigned long compiled, not_compiled, ran, too_large;
};

/* What a refused reshape must leave as it was. */
struct port_state {
	vnpu_status st;
	vnpu_shape shape;
	vnpu_element_type type;
};

struct snapshot {
	size_t num_inputs, num_outputs;
	struct port_state *ports;	/* inputs, then outputs */
};

static int take_snapshot(const vnpu_model *m, struct snapshot *s)
{
	size_t n;

	if (vnpu_model_get_inputs_size(m, &s->num_inputs) ||
	    vnpu_model_get_outputs_size(m, &s->num_outputs))
		return -1;
	n = s->num_inputs + s->num_outputs;
	s->ports = calloc(n ? n : 1, sizeof(*s->ports));
	if (!s->ports)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct port_state *p = &s->ports[i];
		bool in = i < s->num_inputs;
		size_t index = in ? i : i - s->num_inputs;

		p->st = in ? vnpu_model_input_shape(m, index, &p->shape) :
			     vnpu_model_output_shape(m, index, &p->shape);
		if (in ? vnpu_model_input_type(m, index, &p->type) :
			 vnpu_model_output_type(m, index, &p->type))
			return -1;
	}
	return 0;
}

static bool same_snapshot(const struct snapshot *a, const struct snapshot *b)
{
	return a->num_inputs == b->num_inputs && a->num_outputs == b->num_outputs &&
	       !memcmp(a->ports, b->ports, (a->num_inputs + a->num_outputs) * sizeof(*a->ports));
}

static void print_shape(FILE *f, const vnpu_shape *s)
{
	fputc('[', f);
	for (uint32_t d = 0; d < s->rank && d < VNPU_MAX_RANK; d++)
		fprintf(f, "%s%lld", d ? "," : "", (long long)s->dims[d]);
	fprintf(f, "]%s", s->rank > VNPU_MAX_RANK ? " (rank above the maximum)" : "");
}

/* Where the test is, for the messages: model, input, shape. */
struct place {
	const char *model, *input;
	vnpu_shape shape;
};

static void print_place(const char *what, const struct place *at, const char *msg)
{
	fprintf(stderr, "%s %s %s ", what, at->model, at->input);
	print_shape(stderr, &at->shape);
	fprintf(stderr, ": %s\n", msg);
}

/*
 * A failed call of @what at @at: it must have left a one-line message.
 * 0 when it did; -1 (and why on stderr) when not.
 */
static int check_message(const char *what, const struct place *at, vnpu_status st)
{
	const char *msg = vnpu_last_error();

	if (verbose) {
		char line[64];

		snprintf(line, sizeof(line), "%s (%s)", what, vnpu_status_str(st));
		print_place(line, at, msg);
	}
	if (msg[0] && !strchr(msg, '\n'))
		return 0;
	print_place(msg[0] ? "message of several lines after" : "no message after", at, what);
	return -1;
}

static int64_t random_dim(void)
{
	static const int64_t dims[] = {
		0, 1, 1, 2, 2, 3, 3, 4, 5, 7, 8, 16, VNPU_DIM_DYNAMIC, VNPU_DIM_DYNAMIC,
		1 << 20, 1ll << 40, 1ll << 62, INT64_MAX, -5, INT64_MIN,
	};

	return dims[rnd_below(sizeof(dims) / sizeof(dims[0]))];
}

/* A small value for a dimension the model leaves dynamic. */
static int64_t small_dim(void)
{
	return (int64_t)(1 + rnd_below(4));
}

/*
 * A new shape for an input whose shape now is @s (rank 0..4 of random
 * dimensions when unknown): one time in six any shape at all, else @s with
 * one dimension changed, added or dropped, or with its dynamic dimensions
 * set (and known ones scaled), so that many compile.
 */
static void random_shape(vnpu_shape *s, bool known)
{
	uint32_t d;

	if (!known) {
		s->rank = (uint32_t)rnd_below(5);
		for (d = 0; d < s->rank; d++)
			s->dims[d] = random_dim();
	}
	switch (rnd_below(6)) {
	case 0:		/* anything, up to past the highest rank */
		s->rank = (uint32_t)rnd_below(VNPU_MAX_RANK + 2);
		for (d = 0; d < s->rank && d < VNPU_MAX_RANK; d++)
			s->dims[d] = random_dim();
		break;
	case 1:		/* one dimension */
		if (s->rank)
			s->dims[rnd_below(s->rank)] = random_dim();
		break;
	case 2:		/* one more */
		if (s->rank < VNPU_MAX_RANK)
			s->dims[s->rank++] = random_dim();
		break;
	case 3:		/* one less */
		if (s->rank)
			s->rank--;
		break;
	case 4:		/* dynamic dimensions set, known ones kept */
		for (d = 0; d < s->rank; d++)
			if (s->dims[d] == VNPU_DIM_DYNAMIC)
				s->dims[d] = small_dim();
		break;
	default:	/* dynamic ones set, known ones scaled */
		for (d = 0; d < s->rank; d++) {
			if (s->dims[d] == VNPU_DIM_DYNAMIC)
				s->dims[d] = small_dim();
			else if (s->dims[d] >= 0 && s->dims[d] < 64 && rnd() & 1)
				s->dims[d] = s->dims[d] * (int64_t)rnd_below(3);
		}
		break;
	}
}

/* Whether the API itself must refuse @s (vnpu_model_reshape()'s comment). */
static bool bad_argument(const vnpu_shape *s)
{
	double elems = 1;

	if (s->rank > VNPU_MAX_RANK)
		return true;
	for (uint32_t d = 0; d < s->rank; d++) {
		if (s->dims[d] < VNPU_DIM_DYNAMIC)
			return true;
		if (s->dims[d] >= 0)
			elems *= (double)s->dims[d];
	}
	return elems > (double)(1ull << 40);
}

/* Whether the API must refuse @s as a sequence's element (static). */
static bool bad_element(const vnpu_shape *s)
{
	for (uint32_t d = 0; d < s->rank && d < VNPU_MAX_RANK; d++)
		if (s->dims[d] == VNPU_DIM_DYNAMIC)
			return true;
	return bad_argument(s);
}

/* The status of a refusal: the documented ones only. 0, or -1 (said). */
static int check_refusal(vnpu_status st, bool bad, const struct place *at)
{
	if (bad && st != VNPU_INVALID_ARGUMENT) {
		print_place("a shape the API refuses is not INVALID_ARGUMENT", at, vnpu_status_str(st));
		return -1;
	}
	if (st != VNPU_INVALID_ARGUMENT && st != VNPU_UNSUPPORTED) {
		print_place("reshape refused with an undocumented status", at, vnpu_status_str(st));
		return -1;
	}
	return 0;
}

/* A refused call left @m as @now says. 0, or -1 (said). */
static int check_unchanged(const vnpu_model *m, const struct snapshot *now,
			   const struct place *at)
{
	struct snapshot after = { 0 };
	int ret = -1;

	if (take_snapshot(m, &after))
		ret = check_message("snapshot", at, VNPU_GENERAL_ERROR);
	else if (!same_snapshot(now, &after))
		print_place("refused reshape changed the model", at, vnpu_last_error());
	else
		ret = 0;
	free(after.ports);
	return ret;
}

/*
 * Sequence input @at->input of @m gets 0 to 3 elements of random shapes
 * (@at->shape: the last one). As reshape_once().
 */
static int reshape_sequence_once(vnpu_model *m, struct snapshot *now, struct place *at,
				 struct counts *c)
{
	vnpu_shape shapes[3] = { { 0 } };
	size_t count = rnd_below(4);
	bool bad = false;
	vnpu_status st;

	for (size_t i = 0; i < count; i++) {
		random_shape(&shapes[i], false);
		bad |= bad_element(&shapes[i]);
		at->shape = shapes[i];
	}
	if (!count)
		at->shape = (vnpu_shape){ 0 };
	st = vnpu_model_reshape_sequence(m, at->input, count, shapes);
	if (st == VNPU_OK) {
		c->seq_reshaped++;
		if (verbose)
			print_place("reshaped sequence", at, "taken");
		if (bad) {
			print_place("a sequence shape the API refuses was taken", at, "");
			return -1;
		}
		free(now->ports);
		now->ports = NULL;
		return take_snapshot(m, now) ? check_message("snapshot", at, VNPU_GENERAL_ERROR) : 1;
	}
	c->seq_refused++;
	if (check_message("reshape sequence", at, st) || check_refusal(st, bad, at))
		return -1;
	return check_unchanged(m, now, at);
}

/* Frozen data larger than this is not made: the freeze is given none. */
#define MAX_FREEZE_BYTES (64u << 20)
/* Frozen data of at most this many elements may be random. */
#define MAX_RANDOM_ELEMS 4096

/* @n random values of @type at @data: the edges of shapes, axes and indices. */
static void random_values(void *data, vnpu_element_type type, size_t n)
{
	static const int64_t values[] = {
		0, 1, 1, 2, 3, 4, -1, -1, -2, -7, 64, 1 << 20, INT32_MAX, 1ll << 40,
		INT64_MAX, INT64_MIN,
	};
	size_t esize = vnpu_element_type_size(type);

	for (size_t i = 0; i < n; i++) {
		int64_t v = values[rnd_below(sizeof(values) / sizeof(values[0]))];
		char *at = (char *)data + i * esize;
		double d = rnd_below(8) ? (double)v : rnd_below(2) ? NAN : -INFINITY;
		uint16_t bits = (uint16_t)rnd();
		float f = (float)d;

		if (type == VNPU_TYPE_F32)
			memcpy(at, &f, sizeof(f));
		else if (type == VNPU_TYPE_F64)
			memcpy(at, &d, sizeof(d));
		else if (type == VNPU_TYPE_F16 || type == VNPU_TYPE_BF16)
			memcpy(at, &bits, sizeof(bits));
		else if (type == VNPU_TYPE_BOOL)
			*at = (char)(v & 1);
		else
			memcpy(at, &v, esize);	/* the low bytes: little-endian */
	}
}

/*
 * Input @i of @m, a tensor, frozen to zeros of a random static shape
 * (@at->shape). As reshape_once(); a taken freeze must remove the input.
 */
static int freeze_once(vnpu_model *m, struct snapshot *now, struct place *at, size_t i,
		       struct counts *c)
{
	vnpu_element_type type = now->ports[i].type;
	size_t esize = vnpu_element_type_size(type);	/* 0: string, refused */
	double bytes = (double)esize;
	size_t index, size = 0;
	bool bad, random = false;
	void *data = NULL;
	vnpu_status st;

	at->shape = now->ports[i].shape;
	random_shape(&at->shape, now->ports[i].st == VNPU_OK);
	if (rnd_below(2))	/* mostly a static shape */
		for (uint32_t d = 0; d < at->shape.rank && d < VNPU_MAX_RANK; d++)
			if (at->shape.dims[d] == VNPU_DIM_DYNAMIC)
				at->shape.dims[d] = small_dim();
	bad = bad_element(&at->shape);
	for (uint32_t d = 0; !bad && d < at->shape.rank; d++)
		bytes *= (double)at->shape.dims[d];
	if (!bad && bytes <= MAX_FREEZE_BYTES) {
		size = (size_t)bytes;
		data = calloc(1, size ? size : 1);
		if (!data)
			return check_message("out of memory", at, VNPU_OUT_OF_MEMORY);
		random = esize && size / esize <= MAX_RANDOM_ELEMS && rnd_below(2);
		if (random)
			random_values(data, type, size / esize);
	}
	st = vnpu_model_freeze_input(m, at->input, type, &at->shape, data, size);
	free(data);
	if (st == VNPU_OK) {
		c->frozen++;
		c->random_frozen |= random;
		if (verbose)
			print_place("frozen", at, "taken");
		if (bad || !vnpu_model_input_index(m, at->input, &index)) {
			print_place("freeze taken but wrong", at, bad ? "a shape the API refuses" :
				    "the input is still one");
			return -1;
		}
		free(now->ports);
		now->ports = NULL;
		return take_snapshot(m, now) ? check_message("snapshot", at, VNPU_GENERAL_ERROR) : 1;
	}
	c->freeze_refused++;
	if (check_message("freeze", at, st) || check_refusal(st, bad, at))
		return -1;
	return check_unchanged(m, now, at);
}

/*
 * One reshape of a random input of @m. 1 when the model took it, 0 when
 * it refused it as documented, -1 on a broken rule (said on stderr).
 */
static int reshape_once(vnpu_model *m, struct snapshot *now, struct place *at,
			struct counts *c)
{
	vnpu_port_kind kind;
	size_t i = rnd_below(now->num_inputs);
	vnpu_status st;
	vnpu_shape got;
	bool sequence;

	if (vnpu_model_input_name(m, i, &at->input) || vnpu_model_input_kind(m, i, &kind))
		return check_message("input", at, VNPU_GENERAL_ERROR);
	sequence = kind == VNPU_PORT_SEQUENCE || kind == VNPU_PORT_OPTIONAL_SEQUENCE;
	if (sequence && rnd_below(4))
		return reshape_sequence_once(m, now, at, c);
	if (freezes && !sequence && !rnd_below(8))
		return freeze_once(m, now, at, i, c);
	at->shape = now->ports[i].shape;
	random_shape(&at->shape, now->ports[i].st == VNPU_OK);
	st = vnpu_model_reshape(m, at->input, &at->shape);
	if (st == VNPU_OK) {
		c->reshaped++;
		if (verbose)
			print_place("reshaped", at, "taken");
		memset(&got, 0, sizeof(got));
		if (vnpu_model_input_shape(m, i, &got) || got.rank != at->shape.rank ||
		    memcmp(got.dims, at->shape.dims, got.rank * sizeof(got.dims[0]))) {
			print_place("reshape taken but the input's shape differs", at, "");
			return -1;
		}
		free(now->ports);
		now->ports = NULL;
		return take_snapshot(m, now) ? check_message("snapshot", at, VNPU_GENERAL_ERROR) : 1;
	}
	c->refused++;
	if (check_message("reshape", at, st) ||
	    check_refusal(st, bad_argument(&at->shape) || sequence, at))
		return -1;
	return check_unchanged(m, now, at);
}

/* Bytes of @cm's ports and arena, as a double (no overflow). */
static double run_bytes(const vnpu_compiled_model *cm)
{
	vnpu_property_value *arena;
	uint32_t n[2] = { 0, 0 };
	double bytes = 0;
	vnpu_port p;

	if (!vnpu_compiled_model_get_property(cm, VNPU_PROP_ARENA_SIZE, &arena)) {
		bytes = (double)arena->integer;
		vnpu_property_value_free(arena);
	}
	vnpu_compiled_model_get_num_inputs(cm, &n[0]);
	vnpu_compiled_model_get_num_outputs(cm, &n[1]);
	for (int out = 0; out < 2; out++) {
		for (uint32_t i = 0; i < n[out]; i++) {
			double elems = (double)vnpu_element_type_size(VNPU_TYPE_F64);

			if (out ? vnpu_compiled_model_get_output(cm, i, &p) :
				  vnpu_compiled_model_get_input(cm, i, &p))
				continue;
			for (uint32_t d = 0; d < p.shape.rank; d++)
				elems *= p.shape.dims[d] < 0 ? 1.0 : (double)p.shape.dims[d];
			bytes += elems;
		}
	}
	return bytes;
}

/*
 * Whether compiled port @p has the shape the model gives the input or
 * output of its name: exactly for an input, where known for an output.
 */
static bool port_fits_model(const vnpu_model *m, const vnpu_port *p)
{
	vnpu_shape want;
	size_t index;

	if (p->is_output ? vnpu_model_output_index(m, p->name, &index) ||
			   vnpu_model_output_shape(m, index, &want) :
			   vnpu_model_input_index(m, p->name, &index) ||
			   vnpu_model_input_shape(m, index, &want))
		return true;	/* a sequence's element, an unknown output */
	if (want.rank != p->shape.rank)
		return false;
	for (uint32_t d = 0; d < want.rank; d++)
		if (want.dims[d] != p->shape.dims[d] &&
		    (!p->is_output || want.dims[d] != VNPU_DIM_DYNAMIC))
			return false;
	return true;
}

static int check_ports(const vnpu_model *m, const vnpu_compiled_model *cm,
		       const struct place *at)
{
	uint32_t n[2] = { 0, 0 };
	vnpu_port p;

	if (vnpu_compiled_model_get_num_inputs(cm, &n[0]) ||
	    vnpu_compiled_model_get_num_outputs(cm, &n[1]))
		return check_message("ports", at, VNPU_GENERAL_ERROR);
	for (int out = 0; out < 2; out++) {
		for (uint32_t i = 0; i < n[out]; i++) {
			if (out ? vnpu_compiled_model_get_output(cm, i, &p) :
				  vnpu_compiled_model_get_input(cm, i, &p))
				return check_message("ports", at, VNPU_GENERAL_ERROR);
			if (!port_fits_model(m, &p)) {
				print_place("a compiled port differs from the model", at, p.name);
				return -1;
			}
		}
	}
	return 0;
}

/* -v: the shapes of @m's inputs, after a compile's line ("inputs" line). */
static void print_inputs(const vnpu_model *m)
{
	size_t n = 0;

	vnpu_model_get_inputs_size(m, &n);
	fprintf(stderr, "inputs");
	for (size_t i = 0; i < n; i++) {
		const char *name = "?";
		vnpu_shape shape;

		vnpu_model_input_name(m, i, &name);
		fprintf(stderr, " %s ", name);
		if (vnpu_model_input_shape(m, i, &shape))
			fprintf(stderr, "-");
		else
			print_shape(stderr, &shape);
	}
	fputc('\n', stderr);
}

/*
 * Zero inputs of size 1 in their dynamic dimensions for the inputs of
 * @cm that have some (a model compiled with dynamic inputs).
 */
static vnpu_status set_dynamic_inputs(const vnpu_compiled_model *cm, vnpu_infer_request *req)
{
	vnpu_status st = VNPU_OK;
	uint32_t n = 0;
	vnpu_tensor *t;
	vnpu_port p;
	bool dynamic;

	vnpu_compiled_model_get_num_inputs(cm, &n);
	for (uint32_t i = 0; !st && i < n; i++) {
		st = vnpu_compiled_model_get_input(cm, i, &p);
		dynamic = false;
		for (uint32_t d = 0; d < p.shape.rank; d++) {
			dynamic |= p.shape.dims[d] < 0;
			if (p.shape.dims[d] < 0)
				p.shape.dims[d] = 1;
		}
		if (st || !dynamic)
			continue;
		st = vnpu_tensor_create(p.type, &p.shape, &t);
		if (!st)
			st = vnpu_infer_request_set_input_tensor(req, i, t);
		vnpu_tensor_free(t);
	}
	return st;
}

/* Compile @m and run it once: 0, or -1 on a broken rule. */
/* Whether @cm has a string input: its values (empty text), not its shape, may fail a run. */
static bool string_input(const vnpu_compiled_model *cm)
{
	uint32_t n = 0;
	vnpu_port p;

	vnpu_compiled_model_get_num_inputs(cm, &n);
	for (uint32_t i = 0; i < n; i++)
		if (!vnpu_compiled_model_get_input(cm, i, &p) && p.type == VNPU_TYPE_STRING)
			return true;
	return false;
}

static int compile_and_run(vnpu_core *core, const vnpu_model *m, const struct place *at,
			   struct counts *c)
{
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req = NULL;
	vnpu_status st;
	int ret;

	st = vnpu_core_compile_model(core, m, device, NULL, &cm);
	if (st) {
		c->not_compiled++;
		if (check_message("compile", at, st))
			return -1;
		if (verbose)
			print_inputs(m);
		/* the compiler emits only what the device takes */
		if (strstr(vnpu_last_error(), "loading segment")) {
			print_place("the device refused a compiled program", at, vnpu_last_error());
			return -1;
		}
		return 0;
	}
	c->compiled++;
	ret = check_ports(m, cm, at);
	if (!ret && run_bytes(cm) > (double)MAX_RUN_BYTES) {
		c->too_large++;
	} else if (!ret) {
		st = vnpu_compiled_model_create_infer_request(cm, &req);
		if (!st)
			st = set_dynamic_inputs(cm, req);
		if (!st)
			st = vnpu_infer_request_infer(req);
		if (st && !strncmp(vnpu_last_error(), "compiling for ", 14)) {
			/* dynamic inputs: the compile of the run's shapes refused them */
			c->not_compiled++;
			ret = check_message("compile", at, st);
			if (strstr(vnpu_last_error(), "loading segment")) {
				print_place("the device refused a compiled program", at,
					    vnpu_last_error());
				ret = -1;
			}
		} else if ((st && c->random_frozen && strstr(vnpu_last_error(), "faulted")) ||
			   (st == VNPU_INVALID_ARGUMENT && string_input(cm))) {
			/* a random value out of range, or an empty string cast to a number */
			c->faulted++;
			ret = check_message("run", at, st);
		} else if (st) {
			/* the compiler took the shapes: the device must run them */
			check_message("run", at, st);
			print_place("run failed after a successful compile", at, vnpu_last_error());
			ret = -1;
		} else {
			c->ran++;
		}
	}
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return ret;
}

/*
 * One chain on the model at @path: read, up to MAX_CHAIN reshapes, a
 * compile and a run when one reshape was taken. 0, or -1 on a broken rule.
 */
static int run_chain(vnpu_core *core, const char *path, struct counts *c)
{
	struct place at = { .model = path, .input = "-" };
	struct snapshot now = { 0 };
	size_t steps = 1 + rnd_below(MAX_CHAIN);
	bool taken = false;
	vnpu_model *m;
	int ret = 0;

	if (verbose)
		fprintf(stderr, "chain %lu %s\n", c->chains, path);
	c->chains++;
	c->random_frozen = false;
	if (vnpu_core_read_model(core, path, &m)) {
		c->not_read++;
		return check_message("read", &at, VNPU_GENERAL_ERROR);
	}
	if (take_snapshot(m, &now))
		ret = check_message("snapshot", &at, VNPU_GENERAL_ERROR);
	for (size_t i = 0; !ret && now.num_inputs && i < steps; i++) {
		ret = reshape_once(m, &now, &at, c);
		if (ret > 0) {
			taken = true;
			ret = 0;
		}
	}
	if (!ret && taken)
		ret = compile_and_run(core, m, &at, c);
	free(now.ports);
	vnpu_model_free(m);
	return ret;
}

/*
 * Shapes the fuzzer found that shape inference took and then failed at a
 * later step (or hung in), refused now with a message holding @text: at
 * the reshape of @input (after @first when given; none when NULL), or at
 * compile when @compile is set; or taken and compiled when @want is
 * VNPU_OK.
 */
struct regression {
	const char *model, *first, *input;
	vnpu_shape first_shape, shape;
	bool compile;
	vnpu_status want;
	const char *text;
};

static const struct regression regressions[] = {
	/* indices into an empty axis: the device faulted at run time */
	{ "test_gather_0", NULL, "data", {}, { 3, { 0, 4, 5 } }, false,
	  VNPU_INVALID_ARGUMENT, "Gather node: indices into an empty axis" },
	{ "test_scatter_without_axis", NULL, "data", {}, { 2, { 0, 6 } }, false,
	  VNPU_INVALID_ARGUMENT, "Scatter node: indices into an empty axis" },
	{ "test_gathernd_example_float32", NULL, "data", {}, { 3, { 2, 0, 2 } }, false,
	  VNPU_INVALID_ARGUMENT, "GatherND node: indices into an empty axis" },
	{ "test_nllloss_NCd1d2", NULL, "input", {}, { 4, { 3, 0, 6, 6 } }, false,
	  VNPU_INVALID_ARGUMENT, "no classes" },
	{ "test_nllloss_NCd1d2d3_sum_weight_high_ii", NULL, "weight", {}, { 1, { 0 } }, false,
	  VNPU_INVALID_ARGUMENT, "weight is f32[0], expected f32[5]" },
	/* weights of another shape: compiled reading past R, or a stream
	 * the device refused */
	{ "test_simple_rnn_defaults", NULL, "R", {}, { 4, { 1, 4, 4, 8 } }, false,
	  VNPU_INVALID_ARGUMENT, "R is f32[1,4,4,8], expected f32[1,4,4]" },
	{ "test_gru_defaults", NULL, "R", {}, { 2, { 1, 15 } }, false,
	  VNPU_INVALID_ARGUMENT, "R is f32[1,15], expected f32[1,15,5]" },
	{ "test_maxunpool_export_without_output_shape", NULL, "xI", {}, { 3, { 1, 1, 2 } }, false,
	  VNPU_INVALID_ARGUMENT, "I is i64[1,1,2], expected i64[1,1,2,2]" },
	{ "test_matmulinteger", NULL, "a_zero_point", {}, { 2, { 1, 0 } }, false,
	  VNPU_INVALID_ARGUMENT, "a_zero_point is u8[1,0]: a scalar or one per row of A" },
	{ "test_qlinearmatmul_3D", NULL, "b_scale", {}, { 2, { 1, 0 } }, false,
	  VNPU_INVALID_ARGUMENT, "b_scale is f32[1,0]" },
	{ "test_reshape_allowzero_reordered", "data", "shape", { 2, { 0, 3 } }, { 1, { 0 } }, false,
	  VNPU_INVALID_ARGUMENT, "0 elements reshaped to a scalar" },
	{ "test_qlinearconv", NULL, "x_zero_point", {}, { 3, { 1, 3, 1 << 20 } }, false,
	  VNPU_INVALID_ARGUMENT, "x_zero_point is u8[1,3,1048576]: a scalar or one per tensor" },
	/* refused by the compiler before, by shape inference now */
	{ "test_tril", NULL, "x", {}, { 1, { 4 } }, false,
	  VNPU_INVALID_ARGUMENT, "Trilu node: input rank 1, at least 2" },
	{ "test_batchnorm_example", NULL, "bias", {}, { 2, { 16, 8 } }, false,
	  VNPU_INVALID_ARGUMENT, "B is f32[16,8], expected f32[3]" },
	{ "test_layer_normalization_4d_axis2", NULL, "W", {}, { 3, { 4, 5, 2 } }, false,
	  VNPU_INVALID_ARGUMENT, "Scale is f32[4,5,2]: it must broadcast to the last 2 dimensions" },
	{ "test_basic_conv_with_padding", NULL, "W", {}, { 4, { 1, 1, 3, 2 } }, false,
	  VNPU_INVALID_ARGUMENT, "Conv node: kernel_shape 3, W's is 2" },
	{ "test_quantizelinear_axis", NULL, "y_scale", {}, { 1, { 6 } }, false,
	  VNPU_INVALID_ARGUMENT, "scale is f32[6], expected f32[3]" },
	{ "test_argmin_default_axis_random", NULL, "data", {}, { 3, { 0, 3, 4 } }, false,
	  VNPU_INVALID_ARGUMENT, "ArgMin node: axis 0 is empty" },
	{ "test_clip_splitbounds", NULL, "max", {}, { 1, { 16 } }, false,
	  VNPU_INVALID_ARGUMENT, "Clip node: input 2 holds 16 values, not one" },
	{ "test_gather_negative_indices", NULL, "data", {}, { 0 }, false,
	  VNPU_INVALID_ARGUMENT, "Gather node: data is a scalar" },
	{ "test_adagrad", NULL, "H", {}, { 1, { 16 } }, false,
	  VNPU_INVALID_ARGUMENT, "Adagrad node: H of tensor 0 is f32[16], expected f32[1]" },
	{ "test_softmax_axis_0", NULL, "x", {}, { 0 }, false,
	  VNPU_INVALID_ARGUMENT, "Softmax node: a scalar has no axis" },
	{ "test_if", NULL, "cond", {}, { 1, { 3 } }, false,
	  VNPU_INVALID_ARGUMENT, "If node: cond is bool[3]: it must hold one value" },
	{ "test_lrn_default", NULL, "x", {}, { 1, { 5 } }, false,
	  VNPU_INVALID_ARGUMENT, "LRN node: input rank 1, at least 2" },
	{ "test_globalmaxpool", NULL, "x", {}, { 4, { 1, 3, 0, 5 } }, false,
	  VNPU_INVALID_ARGUMENT, "GlobalMaxPool node: X's spatial dimension 0 is 0" },
	{ "test_roialign_aligned_true", NULL, "rois", {}, { 2, { 3, 0 } }, false,
	  VNPU_INVALID_ARGUMENT, "RoiAlign node: rois is f32[3,0], expected f32[3,4]" },
	{ "test_roialign_aligned_true", NULL, "batch_indices", {}, { 1, { 4 } }, false,
	  VNPU_INVALID_ARGUMENT, "batch_indices is i64[4], expected i64[3]" },
	{ "test_roialign_aligned_true", NULL, "X", {}, { 4, { 1, 1, 0, 10 } }, false,
	  VNPU_INVALID_ARGUMENT, "RoiAlign node: X is empty" },
	{ "test_gridsample", NULL, "X", {}, { 4, { 1, 1, 0, 4 } }, false,
	  VNPU_INVALID_ARGUMENT, "GridSample node: X's height or width is 0" },
	{ "test_adagrad", NULL, "T", {}, { 1, { 1 } }, false,
	  VNPU_INVALID_ARGUMENT, "Adagrad node: T is i64[1]: it must be a scalar" },
	{ "test_convtranspose_output_shape", NULL, "W", {}, { 4, { 1, 2, 3, 0 } }, false,
	  VNPU_INVALID_ARGUMENT, "ConvTranspose node: an empty kernel" },
	/* past the engine's limits: said by the compiler with the limit */
	{ "test_neg_example", NULL, "x", {}, { 1, { 1ll << 40 } }, true, VNPU_UNSUPPORTED,
	  "Neg node: dimension 0 of 'x' is 1099511627776: the device's layers take at most 2^31" },
	{ "test_reduce_min_default_axes_keepdims_random", NULL, "data", {},
	  { 7, { 4, 5, 7, 3, 1, 3, 1 << 20 } }, true, VNPU_UNSUPPORTED,
	  "ReduceMin node: each output reads 1321205760 elements: the device reads at most 2^28" },
	/* layers the engine refused, lowered now: an empty output, a 0 x 0
	 * determinant, the reduction of a scalar, ConvTranspose of nothing */
	{ "test_argmax_keepdims_random", NULL, "data", {}, { 3, { 0, 3, 4 } }, true, VNPU_OK, "" },
	{ "test_det_2d", NULL, "x", {}, { 2, { 0, 0 } }, true, VNPU_OK, "" },
	{ "test_reduce_max_default_axes_keepdim_example", NULL, "data", {}, { 0 }, true,
	  VNPU_OK, "" },
	{ "test_convtranspose_kernel_shape", NULL, "X", {}, { 4, { 1, 1, 3, 0 } }, true,
	  VNPU_OK, "" },
	/* Clip's bound [1] over a scalar X: spread as one value */
	{ "test_clip_example", "x", "max", { 0 }, { 1, { 1 } }, true, VNPU_OK, "" },
	/* folded row by row: 2^40 rows of nothing took hours */
	{ "test_eyelike_populate_off_main_diagonal", NULL, "x", {}, { 2, { 1ll << 40, 0 } }, true,
	  VNPU_OK, "" },
	/* Trilu's band mask made row by row: 2^40 empty rows took hours */
	{ "test_triu", NULL, "x", {}, { 2, { 1ll << 40, 0 } }, true, VNPU_OK, "" },
	/* 2^20 steps unrolled: the compile ran for minutes; then refused
	 * by the compile, now by the reshape (the device's limit) */
	{ "test_simple_rnn_batchwise", NULL, "X", {}, { 3, { 3, 1 << 20, 2 } }, false,
	  VNPU_UNSUPPORTED, "RNN node: a sequence of 1048576 steps" },
	/* Scan's outputs stacked with a Reshape to [1,0]: its 0 copied X's
	 * dimension, and the compile said PARSE_ERROR */
	{ "test_scan9_sum", "x", "initial", { 1, { 3 } }, { 1, { 0 } }, true, VNPU_OK, "" },
	{ "test_scan9_sum", "initial", "initial", { 2, { 2, 2 } }, { 3, { 0, 7, 2 } }, true,
	  VNPU_OK, "" },
	/* the GRU's and LSTM's steps over an empty batch: a stream the
	 * device refused, then refused as UNSUPPORTED; nothing to run now */
	{ "test_gru_defaults", NULL, "X", {}, { 3, { 1, 0, 2 } }, true, VNPU_OK, "" },
	{ "test_lstm_batchwise", NULL, "X", {}, { 3, { 0, 7, 2 } }, true, VNPU_OK, "" },
	/* a scalar split along axis 0: frozen, its data was folded from a
	 * stale dimension and a stride never set (a crash) */
	{ "test_split_equal_parts_default_axis", NULL, "input", {}, { 0 }, false,
	  VNPU_INVALID_ARGUMENT, "Split node: a scalar has no axis to split" },
	/* Trilu's k frozen empty: the compile read its first value past the data */
	{ "test_tril_neg", NULL, "k", {}, { 1, { 0 } }, false,
	  VNPU_INVALID_ARGUMENT, "Trilu node: k holds 0 values, not one" },
	/* Range's start frozen empty: read past its data */
	{ "test_range_float_type_positive_delta", NULL, "start", {}, { 1, { 0 } }, false,
	  VNPU_INVALID_ARGUMENT, "Range node: input 0 holds 0 values, not one" },
};

/* The same for sequence inputs, given @count elements of the shape each. */
struct seq_regression {
	struct regression r;
	size_t count;
};

static const struct seq_regression seq_regressions[] = {
	/* an element's limit, said once (the prefix came twice) */
	{ { "test_identity_sequence", NULL, "x", {}, { 2, { 1ll << 41, 0 } }, false,
	    VNPU_INVALID_ARGUMENT,
	    "reshape 'x': element 0: dimension 0 is 2199023255552: more than 2^40 elements" }, 1 },
	{ { "test_sequence_insert_at_back", NULL, "sequence", {}, { 1, { VNPU_DIM_DYNAMIC } },
	    false, VNPU_INVALID_ARGUMENT, "reshape 'sequence': element 0: dimension 0 is dynamic" },
	  3 },
	/* the sequence ops check their elements in the compile */
	{ { "test_sequence_map_add_2_sequences", "x1", "x0", { 1, { 2 } }, { 1, { 3 } }, true,
	    VNPU_INVALID_ARGUMENT, "Add node: shapes do not broadcast" }, 2 },
	{ { "test_sequence_map_add_1_sequence_1_tensor", "x1", "x0", { 1, { 1 } },
	    { 1, { (1ll << 31) + 1 } }, true, VNPU_UNSUPPORTED,
	    "Add node: dimension 0 of 'x0[0]' is 2147483649: the device's layers take at most 2^31" },
	  1 },
	{ { "test_sequence_map_add_1_sequence_1_tensor", "x1", "x0", { 1, { 1 } }, { 2, { 2, 3 } },
	    true, VNPU_OK, "" }, 2 },
};

/*
 * The same after input @frozen is frozen to @shape with every element
 * @value (no reshape for an @r.input of NULL).
 */
struct frozen_regression {
	struct regression r;
	const char *frozen;
	vnpu_shape shape;
	int64_t value;
};

static const struct frozen_regression frozen_regressions[] = {
	/* a stream the device refused: Dropout's output folded, the node
	 * kept for its mask wrote it in the (read-only) weights */
	{ { "test_dropout_default_mask", NULL, NULL, {}, {}, true, VNPU_OK, "" }, "x",
	  { 3, { 3, 4, 5 } }, 3 },
	/* STFT's one frame of step INT64_MAX: a stride past the device's */
	{ { "test_stft_with_window", NULL, NULL, {}, {}, true, VNPU_OK, "" }, "frame_step",
	  { 0 }, INT64_MAX },
	/* OneHot's values of other than two elements: read past them */
	{ { "test_onehot_with_axis", NULL, "values", {}, { 2, { 2, 0 } }, false,
	    VNPU_INVALID_ARGUMENT, "OneHot node: values holds 0 values, not two" }, "depth",
	  { 0 }, 3 },
	{ { "test_onehot_without_axis", NULL, "values", {}, { 0 }, false, VNPU_INVALID_ARGUMENT,
	    "OneHot node: values holds 1 values, not two" }, "depth", { 0 }, 3 },
	/* Squeeze of a dimension 0: 0 elements read as 120 */
	{ { "test_squeeze", NULL, "x", {}, { 4, { 0, 3, 8, 5 } }, false, VNPU_INVALID_ARGUMENT,
	    "Squeeze node: cannot squeeze dim 0 of size 0" }, "axes", { 1, { 1 } }, 0 },
};

/* Input @name of @m reshaped to @shape, or its @count elements when a sequence. */
static vnpu_status reshape_input(vnpu_model *m, const char *name, const vnpu_shape *shape,
				 size_t count)
{
	vnpu_shape shapes[4];
	vnpu_port_kind kind;
	size_t index;

	if (vnpu_model_input_index(m, name, &index) || vnpu_model_input_kind(m, index, &kind))
		return VNPU_GENERAL_ERROR;
	if (kind != VNPU_PORT_SEQUENCE && kind != VNPU_PORT_OPTIONAL_SEQUENCE)
		return vnpu_model_reshape(m, name, shape);
	for (size_t i = 0; i < count && i < 4; i++)
		shapes[i] = *shape;
	return vnpu_model_reshape_sequence(m, name, count < 4 ? count : 4, shapes);
}

/* Input @name of @m frozen to @shape with every element @value. */
static vnpu_status freeze_to(vnpu_model *m, const char *name, const vnpu_shape *shape,
			     int64_t value)
{
	vnpu_element_type type;
	size_t index, n = 1, esize;
	vnpu_status st;
	char *data;

	if (vnpu_model_input_index(m, name, &index) || vnpu_model_input_type(m, index, &type))
		return VNPU_GENERAL_ERROR;
	for (uint32_t d = 0; d < shape->rank; d++)
		n *= (size_t)shape->dims[d];
	esize = vnpu_element_type_size(type);
	data = calloc(n ? n : 1, esize);
	if (!data)
		return VNPU_OUT_OF_MEMORY;
	for (size_t i = 0; i < n; i++) {
		float f = (float)value;
		double d = (double)value;

		if (type == VNPU_TYPE_F32)
			memcpy(data + i * esize, &f, sizeof(f));
		else if (type == VNPU_TYPE_F64)
			memcpy(data + i * esize, &d, sizeof(d));
		else if (type == VNPU_TYPE_BOOL)
			data[i] = (char)(value != 0);
		else
			memcpy(data + i * esize, &value, esize);	/* little-endian */
	}
	st = vnpu_model_freeze_input(m, name, type, shape, data, n * esize);
	free(data);
	return st;
}

static int check_regression(struct __test_metadata *_metadata, vnpu_core *core,
			    const struct regression *r, size_t count,
			    const struct frozen_regression *f)
{
	char path[4096];
	vnpu_compiled_model *cm = NULL;
	vnpu_model *m;
	vnpu_status st = VNPU_OK;
	int ret = 0;

	snprintf(path, sizeof(path), NODE_DIR "/%s/model.onnx", r->model);
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, path, &m));
	if (f)
		ASSERT_EQ(VNPU_OK, freeze_to(m, f->frozen, &f->shape, f->value));
	if (r->first)
		ASSERT_EQ(VNPU_OK, reshape_input(m, r->first, &r->first_shape, count));
	if (r->input)
		st = reshape_input(m, r->input, &r->shape, count);
	if (r->compile && !st)
		st = vnpu_core_compile_model(core, m, device, NULL, &cm);
	if (st != r->want || !strstr(vnpu_last_error(), r->text)) {
		TH_LOG("%s %s: %s (%s), want %s and \"%s\"", r->model,
		       r->input ? r->input : f->frozen,
		       vnpu_status_str(st), vnpu_last_error(), vnpu_status_str(r->want), r->text);
		ret = 1;
	}
	vnpu_compiled_model_free(cm);
	vnpu_model_free(m);
	return ret;
}

static int is_case(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* The model files of the node suite: @out[@n], or NULL when missing. */
static char **node_models(size_t *n)
{
	struct dirent **ents;
	char **paths;
	int num = scandir(NODE_DIR, &ents, is_case, alphasort);

	if (num <= 0)
		return NULL;
	paths = calloc((size_t)num, sizeof(*paths));
	for (int i = 0; i < num; i++) {
		if (paths && asprintf(&paths[i], NODE_DIR "/%s/model.onnx", ents[i]->d_name) < 0)
			paths[i] = NULL;
		free(ents[i]);
	}
	free(ents);
	for (int i = 0; paths && i < num; i++) {
		if (!paths[i]) {
			free(paths);	/* out of memory: the test fails */
			return NULL;
		}
	}
	*n = (size_t)num;
	return paths;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The options, set by main() before the harness runs the test. */
static unsigned long chains = 15000, seed = 20261130;
static bool keep_going;
static char **given_paths;
static size_t given;

TEST(reshape_chains)
{
	unsigned long broken = 0, slowest_i = 0;
	struct counts c = { 0 };
	char **paths = NULL;
	size_t num = 0;
	vnpu_core *core;
	double t0, slowest = 0;

	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	if (!has_device(core, device)) {
		vnpu_core_free(core);
		SKIP(return, "no %s device", device);
	}
	if (given) {
		num = given;
	} else {
		paths = node_models(&num);
		if (!paths) {
			vnpu_core_free(core);
			SKIP(return, "no models in %s (libonnx-testdata)", NODE_DIR);
		}
	}
	for (size_t i = 0; paths && i < sizeof(regressions) / sizeof(regressions[0]); i++)
		broken += (unsigned long)check_regression(_metadata, core, &regressions[i], 0,
							  NULL);
	for (size_t i = 0; paths && i < sizeof(seq_regressions) / sizeof(seq_regressions[0]); i++)
		broken += (unsigned long)check_regression(_metadata, core, &seq_regressions[i].r,
							  seq_regressions[i].count, NULL);
	for (size_t i = 0; paths && i < sizeof(frozen_regressions) / sizeof(frozen_regressions[0]); i++)
		broken += (unsigned long)check_regression(_metadata, core, &frozen_regressions[i].r,
							  0,
							  &frozen_regressions[i]);
	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	t0 = now_s();
	for (unsigned long i = 0; i < chains && (!broken || keep_going); i++) {
		size_t which = rnd_below(num);
		double t1 = now_s();

		if (run_chain(core, paths ? paths[which] : given_paths[which], &c)) {
			TH_LOG("chain %lu of seed %lu failed", i, seed);
			broken++;
		}
		if (now_s() - t1 > slowest) {
			slowest = now_s() - t1;
			slowest_i = i;
		}
	}
	TH_LOG("%lu chains over %zu models (seed %lu) in %.1f s: %lu not read; "
	       "%lu reshapes taken, %lu refused; %lu sequence reshapes taken, %lu refused; "
	       "%lu freezes taken, %lu refused; %lu compiled, %lu not compiled; %lu ran, "
	       "%lu faulted on random frozen values, %lu too large to run; %lu broke a rule; "
	       "slowest %.3f s (chain %lu)",
	       c.chains, num, seed, now_s() - t0, c.not_read, c.reshaped, c.refused,
	       c.seq_reshaped, c.seq_refused, c.frozen, c.freeze_refused, c.compiled,
	       c.not_compiled, c.ran, c.faulted, c.too_large, broken, slowest, slowest_i);
	for (size_t i = 0; paths && i < num; i++)
		free(paths[i]);
	free(paths);
	vnpu_core_free(core);
	ASSERT_EQ(0, broken);
}

KSFT_MAIN_ORDER

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "d:fFkn:s:v")) != -1) {
		switch (opt) {
		case 'd':
			device = optarg;
			break;
		case 'f':
			freezes = true;
			break;
		case 'F':
			freezes = false;
			break;
		case 'k':
			keep_going = true;
			break;
		case 'n':
			chains = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr,
				"usage: test-runtime-reshape-fuzz [-d DEVICE] [-F (no freezes)] [-k] "
				"[-n CHAINS] [-s SEED] [-v] [MODEL.onnx...]\n");
			return 2;
		}
	}
	given = (size_t)(argc - optind);
	given_paths = argv + optind;
	/* The arguments left are models, not test names. */
	return ksft_main_run(argc, argv, argc);
}
