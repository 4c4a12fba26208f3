// SPDX-License-Identifier: MIT
/*
 * Remote tensors (vnpu_remote.h): the caller's memory and dma-bufs as
 * device buffers, with the results of the copying path and, on the NPU,
 * no byte uploaded or downloaded (the driver's counters); their in- and
 * out-fences, with vgem's fences as the external producer.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "harness.h"
#include "onnx_writer.h"
#include "vgem.h"

#define N 3000			/* elements: 12000 bytes, not whole pages */
#define PAGE 4096

/* y = x + x + c over f32[N], c an initializer, compiled for @device. */
static vnpu_status compile_add(vnpu_core *core, const char *device, vnpu_compiled_model **out)
{
	const int64_t dims[1] = { N };
	struct pb graph = { 0 };
	static float c[N];
	int i;

	for (i = 0; i < N; i++)
		c[i] = (float)(i % 7) - 3.0f;
	onnx_node(&graph, "Add", (const char *[]){ "x", "x" }, 2, "x2");
	onnx_node(&graph, "Add", (const char *[]){ "x2", "c" }, 2, "y");
	pb_str(&graph, GRAPH_NAME, "remote");
	onnx_init(&graph, "c", ONNX_FLOAT, 1, dims, c, sizeof(c));
	onnx_value(&graph, GRAPH_INPUT, "x", 1, dims);
	onnx_value(&graph, GRAPH_OUTPUT, "y", 1, dims);
	return onnx_compile(core, &graph, 13, device, NULL, out);
}

static void fill_x(float *x, float seed)
{
	for (int i = 0; i < N; i++)
		x[i] = (float)i * 0.25f + seed;
}

/* What the model gives for fill_x(@seed), by the copying path. */
static int expected_y(vnpu_infer_request *req, float seed, float *y)
{
	vnpu_tensor *x, *out;
	float *px, *py;

	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 1, { N } }, &x));
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 1, { N } }, &out));
	CHECK_OK(vnpu_tensor_get_data(x, (void **)&px));
	CHECK_OK(vnpu_tensor_get_data(out, (void **)&py));
	fill_x(px, seed);
	CHECK_OK(vnpu_infer_request_set_tensor(req, "x", x));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "y", out));
	CHECK_OK(vnpu_infer_request_infer(req));
	memcpy(y, py, N * sizeof(float));
	for (int i = 0; i < N; i++)
		CHECK(y[i] == 2 * px[i] + (float)(i % 7) - 3.0f);
	vnpu_tensor_free(x);
	vnpu_tensor_free(out);
	return 0;
}

/* Bytes the device copied (UPLOAD + DOWNLOAD); 0 on a device without counters. */
static uint64_t bytes_copied(vnpu_core *core, const char *device)
{
	const char *keys[2] = { VNPU_PROP_DEVICE_BYTES_UPLOADED,
				VNPU_PROP_DEVICE_BYTES_DOWNLOADED };
	vnpu_property_value *v;
	uint64_t sum = 0;

	for (int i = 0; i < 2; i++) {
		if (vnpu_core_get_property(core, device, keys[i], &v) == VNPU_OK) {
			sum += (uint64_t)v->integer;
			vnpu_property_value_free(v);
		}
	}
	return sum;
}

static int is_npu(const char *device)
{
	return !strncmp(device, "NPU", 3);
}

/*
 * The caller's page-aligned memory as input and output: same results as
 * the copying path, nothing copied, and a change to the memory is seen
 * by the next run.
 */
static int remote_ptr_zero_copy(vnpu_core *core, const char *device)
{
	const vnpu_shape shape = { 1, { N } };
	size_t bytes = (N * sizeof(float) + PAGE - 1) & ~(size_t)(PAGE - 1);
	float *xm = aligned_alloc(PAGE, bytes), *ym = aligned_alloc(PAGE, bytes);
	static float want[N];
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *x, *y;
	const char *where;
	uint64_t copied;

	CHECK(xm && ym);
	CHECK_OK(compile_add(core, device, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, xm, &x));
	CHECK_OK(vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, ym, &y));
	CHECK_OK(vnpu_tensor_get_device(x, &where));
	CHECK(where && !strcmp(where, device));
	CHECK_OK(vnpu_tensor_get_data(y, (void **)&where));
	CHECK((void *)where == ym);

	for (float seed = 1.0f; seed < 3.0f; seed += 1.0f) {
		CHECK(!expected_y(req, seed, want));
		CHECK_OK(vnpu_infer_request_set_tensor(req, "x", x));
		CHECK_OK(vnpu_infer_request_set_tensor(req, "y", y));
		fill_x(xm, seed);
		memset(ym, 0, N * sizeof(float));
		copied = bytes_copied(core, device);
		CHECK_OK(vnpu_infer_request_infer(req));
		CHECK(bytes_copied(core, device) == copied);
		CHECK(!memcmp(ym, want, sizeof(want)));
	}
	vnpu_tensor_free(x);
	vnpu_tensor_free(y);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	free(xm);
	free(ym);
	return 0;
}

/* Memory the NPU cannot take (not page aligned) is copied, same results. */
static int remote_ptr_fallback(vnpu_core *core, const char *device)
{
	const vnpu_shape shape = { 1, { N } };
	float *mem = aligned_alloc(PAGE, 2 * N * sizeof(float) + PAGE);
	float *xm = mem + 1, *ym = mem + N + 2;
	static float want[N];
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *x, *y;
	const char *where;

	CHECK(mem);
	CHECK_OK(compile_add(core, device, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK(!expected_y(req, 5.0f, want));
	CHECK_OK(vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, xm, &x));
	CHECK_OK(vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, ym, &y));
	CHECK_OK(vnpu_tensor_get_device(x, &where));
	/* The CPU runs on any memory; the NPU needs whole pages. */
	CHECK(is_npu(device) ? where == NULL : !strcmp(where, device));
	fill_x(xm, 5.0f);
	CHECK_OK(vnpu_infer_request_set_tensor(req, "x", x));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "y", y));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK(!memcmp(ym, want, sizeof(want)));
	vnpu_tensor_free(x);
	vnpu_tensor_free(y);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	free(mem);
	return 0;
}

static int remote_bad_args(vnpu_core *core, const char *device)
{
	const vnpu_shape shape = { 1, { N } }, dynamic = { 1, { -1 } };
	float *mem = aligned_alloc(PAGE, 4 * PAGE);
	vnpu_tensor *t = NULL;
	const char *where;
	int fd;

	CHECK(mem);
	CHECK_ERR(vnpu_core_create_remote_tensor(NULL, device, VNPU_TYPE_F32, &shape, mem, &t),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_create_remote_tensor(core, NULL, VNPU_TYPE_F32, &shape, mem, &t),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, NULL, &t),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, mem, NULL),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_create_remote_tensor(core, "GPU", VNPU_TYPE_F32, &shape, mem, &t),
		  VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &dynamic, mem, &t),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape,
						 (char *)mem + 1, &t), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, -1, &t),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, 0, NULL),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_get_device(NULL, &where), VNPU_INVALID_ARGUMENT);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	/* Not a dma-buf; and the CPU imports none at all. */
	CHECK_ERR(vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, fd, &t),
		  is_npu(device) ? VNPU_INVALID_ARGUMENT : VNPU_UNSUPPORTED);
	close(fd);
	CHECK(t == NULL);
	free(mem);
	return 0;
}

/*
 * A vgem dma-buf is the input, another the output: the NPU reads and
 * writes them in place (no byte uploaded or downloaded by the driver's
 * counters) with the results of the copying path. A dma-buf imported
 * twice is two tensors of the same memory, either freed first.
 */
static int dmabuf_vgem_in_out(vnpu_core *core, const char *device)
{
	const vnpu_shape shape = { 1, { N } };
	static float want[N];
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	int vgem, in_fd, out_fd;
	vnpu_tensor *x, *y, *again;
	float *px, *py, *pa;
	uint64_t copied;

	if (!is_npu(device))
		return 0;
	/* The NPU runs in the VM, which has vgem: without it nothing is shown. */
	vgem = vgem_open();
	CHECK(vgem >= 0);
	in_fd = vgem_dmabuf(vgem, 4 * PAGE);
	out_fd = vgem_dmabuf(vgem, 4 * PAGE);
	CHECK(in_fd >= 0 && out_fd >= 0);
	CHECK_OK(compile_add(core, device, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK(!expected_y(req, 7.0f, want));

	CHECK_OK(vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, in_fd, &x));
	CHECK_OK(vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, out_fd, &y));
	/* The same dma-buf twice: two tensors over the same memory. */
	CHECK_OK(vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, in_fd,
						&again));
	CHECK_OK(vnpu_tensor_get_data(x, (void **)&px));
	CHECK_OK(vnpu_tensor_get_data(again, (void **)&pa));
	CHECK_OK(vnpu_tensor_get_data(y, (void **)&py));
	fill_x(pa, 7.0f);
	CHECK(px[1] == 7.25f);
	/* Freeing one leaves the other's buffer (the shared handle) alive. */
	vnpu_tensor_free(again);
	CHECK_OK(vnpu_infer_request_set_tensor(req, "x", x));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "y", y));
	copied = bytes_copied(core, device);
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK(bytes_copied(core, device) == copied);
	CHECK(!memcmp(py, want, sizeof(want)));

	vnpu_tensor_free(x);
	vnpu_tensor_free(y);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	/* Freed by all (the request held them), it imports again; too small a one is refused. */
	CHECK_OK(vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, in_fd, &x));
	vnpu_tensor_free(x);
	CHECK_ERR(vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32,
						 &(vnpu_shape){ 1, { 2 * PAGE } }, in_fd, &x),
		  VNPU_INVALID_ARGUMENT);
	close(in_fd);
	close(out_fd);
	close(vgem);
	return 0;
}

/* A producer whose work is not done: a vgem fence, as a sync_file. */
struct producer {
	int vgem;
	uint32_t fence;		/* vgem's id, to signal it */
	int sync_file;
};

static int producer_start(int vgem, struct producer *p)
{
	p->vgem = vgem;
	CHECK(!vgem_fence_start(vgem, &p->fence, &p->sync_file));
	return 0;
}

static int producer_done(struct producer *p)
{
	CHECK(!vgem_fence_signal(p->vgem, p->fence));
	return 0;
}

static int fence_signalled(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/*
 * Fences refused: host and CPU tensors have none; on the NPU an unknown
 * kind, fds that are not files, not sync_files or syncobjs, a closed fd,
 * a syncobj that holds no fence; no out-fence before a run wrote the
 * tensor.
 */
static int fence_bad_args(vnpu_core *core, const char *device)
{
	const vnpu_shape shape = { 1, { N } };
	float *mem = aligned_alloc(PAGE, 4 * PAGE);
	uint32_t syncobj;
	vnpu_tensor *host, *t;
	int fd, node, closed, out = -1;

	CHECK(mem);
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &shape, &host));
	CHECK_ERR(vnpu_tensor_set_in_fence(NULL, VNPU_FENCE_SYNC_FILE, 0), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_set_in_fence(host, VNPU_FENCE_SYNC_FILE, 0), VNPU_UNSUPPORTED);
	CHECK_ERR(vnpu_tensor_export_out_fence(host, VNPU_FENCE_SYNC_FILE, &out), VNPU_UNSUPPORTED);
	vnpu_tensor_free(host);
	CHECK_OK(vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, mem, &t));
	if (!is_npu(device)) {
		CHECK_ERR(vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNC_FILE, 0), VNPU_UNSUPPORTED);
		vnpu_tensor_free(t);
		free(mem);
		return 0;
	}
	CHECK_ERR(vnpu_tensor_set_in_fence(t, (vnpu_fence_kind)7, 0), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNC_FILE, -1), VNPU_INVALID_ARGUMENT);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_ERR(vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNC_FILE, fd), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNCOBJ, fd), VNPU_INVALID_ARGUMENT);
	closed = fd;
	close(fd);
	CHECK_ERR(vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNC_FILE, closed), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNCOBJ, closed), VNPU_INVALID_ARGUMENT);
	node = drm_node_open("vnpu", "renderD", 128);
	CHECK(node >= 0);
	CHECK(!drmSyncobjCreate(node, 0, &syncobj));
	CHECK(!drmSyncobjHandleToFD(node, syncobj, &fd));
	CHECK_ERR(vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNCOBJ, fd), VNPU_INVALID_ARGUMENT);
	/* A syncobj is no sync_file. */
	CHECK_ERR(vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNC_FILE, fd), VNPU_INVALID_ARGUMENT);
	close(fd);
	drmSyncobjDestroy(node, syncobj);
	close(node);
	CHECK_ERR(vnpu_tensor_export_out_fence(t, VNPU_FENCE_SYNC_FILE, NULL),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_export_out_fence(t, (vnpu_fence_kind)-1, &out),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_export_out_fence(t, VNPU_FENCE_SYNC_FILE, &out), VNPU_NOT_FOUND);
	CHECK(out == -1);
	vnpu_tensor_free(t);
	free(mem);
	return 0;
}

/* vgem dma-bufs as the tensors x, y and z of two requests, and the model. */
struct chain {
	int vgem, fds[3];
	vnpu_tensor *t[3];
	float *data[3];
	vnpu_compiled_model *cm;
	vnpu_infer_request *a, *b;
};

static int chain_open(vnpu_core *core, const char *device, struct chain *c)
{
	const vnpu_shape shape = { 1, { N } };

	c->vgem = vgem_open();
	CHECK(c->vgem >= 0);
	for (int i = 0; i < 3; i++) {
		c->fds[i] = vgem_dmabuf(c->vgem, 4 * PAGE);
		CHECK(c->fds[i] >= 0);
		CHECK_OK(vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape,
							c->fds[i], &c->t[i]));
		CHECK_OK(vnpu_tensor_get_data(c->t[i], (void **)&c->data[i]));
	}
	CHECK_OK(compile_add(core, device, &c->cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(c->cm, &c->a));
	CHECK_OK(vnpu_compiled_model_create_infer_request(c->cm, &c->b));
	CHECK_OK(vnpu_infer_request_set_tensor(c->a, "x", c->t[0]));
	CHECK_OK(vnpu_infer_request_set_tensor(c->a, "y", c->t[1]));
	CHECK_OK(vnpu_infer_request_set_tensor(c->b, "x", c->t[1]));
	CHECK_OK(vnpu_infer_request_set_tensor(c->b, "y", c->t[2]));
	return 0;
}

static void chain_close(struct chain *c)
{
	vnpu_infer_request_free(c->a);
	vnpu_infer_request_free(c->b);
	vnpu_compiled_model_free(c->cm);
	for (int i = 0; i < 3; i++) {
		vnpu_tensor_free(c->t[i]);
		close(c->fds[i]);
	}
	close(c->vgem);
}

/*
 * A producer's fence gates request a; a's out-fence, as a syncobj, gates
 * request b, which reads a's output: both start at once, neither runs
 * until the producer is done, then b's output is the model applied
 * twice. The caller's fds are closed right after use (the tensors keep
 * their own), and a used in-fence is dropped: the next run does not wait.
 */
static int fence_chain(vnpu_core *core, const char *device)
{
	struct producer p;
	struct chain c = { 0 };
	int a_done, b_done;
	vnpu_status st;

	if (!is_npu(device))
		return 0;
	CHECK(!chain_open(core, device, &c));
	fill_x(c.data[0], 3.0f);
	CHECK(!producer_start(c.vgem, &p));
	CHECK_OK(vnpu_tensor_set_in_fence(c.t[0], VNPU_FENCE_SYNC_FILE, p.sync_file));
	close(p.sync_file);
	CHECK_OK(vnpu_infer_request_start_async(c.a));
	CHECK_OK(vnpu_tensor_export_out_fence(c.t[1], VNPU_FENCE_SYNC_FILE, &a_done));
	CHECK_OK(vnpu_tensor_export_out_fence(c.t[1], VNPU_FENCE_SYNCOBJ, &b_done));
	CHECK_OK(vnpu_tensor_set_in_fence(c.t[1], VNPU_FENCE_SYNCOBJ, b_done));
	close(b_done);
	CHECK_OK(vnpu_infer_request_start_async(c.b));
	CHECK_OK(vnpu_tensor_export_out_fence(c.t[2], VNPU_FENCE_SYNC_FILE, &b_done));
	CHECK_ERR(vnpu_infer_request_wait_for(c.b, 200), VNPU_NOT_READY);
	CHECK(!fence_signalled(a_done) && !fence_signalled(b_done));
	CHECK(!producer_done(&p));
	CHECK_OK(vnpu_infer_request_wait(c.b));
	CHECK(fence_signalled(b_done));
	CHECK_OK(vnpu_infer_request_wait(c.a));
	CHECK(fence_signalled(a_done));
	close(a_done);
	close(b_done);
	for (int i = 0; i < N; i++) {
		float x = (float)i * 0.25f + 3.0f, cst = (float)(i % 7) - 3.0f;

		CHECK(c.data[1][i] == 2 * x + cst);
		CHECK(c.data[2][i] == 2 * c.data[1][i] + cst);
	}
	/* The in-fences were used: these runs start at once. */
	CHECK_OK(vnpu_infer_request_infer(c.a));
	st = vnpu_infer_request_infer(c.b);
	CHECK_OK(st);
	chain_close(&c);
	return 0;
}

/*
 * A fence that does not signal: the request waits for it on the device
 * (wait_for says NOT_READY, again and again), and a cancel ends it as
 * cancelled once the fence is gone. A tensor with an in-fence that a
 * request would copy (a request of the CPU) fails that run.
 */
static int fence_never_signals(vnpu_core *core, const char *device)
{
	struct producer p;
	struct chain c = { 0 };
	vnpu_compiled_model *cpu;
	vnpu_infer_request *req;

	if (!is_npu(device))
		return 0;
	CHECK(!chain_open(core, device, &c));
	CHECK(!producer_start(c.vgem, &p));
	CHECK_OK(vnpu_tensor_set_in_fence(c.t[0], VNPU_FENCE_SYNC_FILE, p.sync_file));
	CHECK_OK(vnpu_infer_request_start_async(c.a));
	CHECK_ERR(vnpu_infer_request_wait_for(c.a, 100), VNPU_NOT_READY);
	CHECK_ERR(vnpu_infer_request_wait_for(c.a, 100), VNPU_NOT_READY);
	CHECK_OK(vnpu_infer_request_cancel(c.a));
	CHECK(!producer_done(&p));
	CHECK_ERR(vnpu_infer_request_wait(c.a), VNPU_CANCELLED);

	CHECK_OK(vnpu_tensor_set_in_fence(c.t[0], VNPU_FENCE_SYNC_FILE, p.sync_file));
	close(p.sync_file);
	CHECK_OK(compile_add(core, "CPU", &cpu));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cpu, &req));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "x", c.t[0]));
	CHECK_ERR(vnpu_infer_request_infer(req), VNPU_INVALID_ARGUMENT);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cpu);
	chain_close(&c);
	return 0;
}

static const struct test tests[] = {
	TEST(remote_ptr_zero_copy),
	TEST(remote_ptr_fallback),
	TEST(remote_bad_args),
	TEST(dmabuf_vgem_in_out),
	TEST(fence_bad_args),
	TEST(fence_chain),
	TEST(fence_never_signals),
};

int main(int argc, char **argv)
{
	return run_tests(argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
