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

#include "runtime_test.h"
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
static int expected_y(struct __test_metadata *_metadata, vnpu_infer_request *req, float seed,
		      float *y)
{
	vnpu_tensor *x, *out;
	float *px, *py;

	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 1, { N } }, &x));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 1, { N } }, &out));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(x, (void **)&px));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(out, (void **)&py));
	fill_x(px, seed);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", x));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "y", out));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	memcpy(y, py, N * sizeof(float));
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(2 * px[i] + (float)(i % 7) - 3.0f, y[i]);
	}
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
TEST_F(dev, remote_ptr_zero_copy)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape shape = { 1, { N } };
	size_t bytes = (N * sizeof(float) + PAGE - 1) & ~(size_t)(PAGE - 1);
	float *xm = aligned_alloc(PAGE, bytes), *ym = aligned_alloc(PAGE, bytes);
	static float want[N];
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *x, *y;
	const char *where;
	uint64_t copied;

	ASSERT_TRUE(xm && ym);
	ASSERT_EQ(VNPU_OK, compile_add(core, device, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, xm, &x));
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, ym, &y));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_device(x, &where));
	ASSERT_TRUE(where && !strcmp(where, device));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(y, (void **)&where));
	ASSERT_EQ(ym, (void *)where);

	for (float seed = 1.0f; seed < 3.0f; seed += 1.0f) {
		ASSERT_EQ(0, expected_y(_metadata, req, seed, want));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", x));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "y", y));
		fill_x(xm, seed);
		memset(ym, 0, N * sizeof(float));
		copied = bytes_copied(core, device);
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
		ASSERT_EQ(copied, bytes_copied(core, device));
		ASSERT_EQ(0, memcmp(ym, want, sizeof(want)));
	}
	vnpu_tensor_free(x);
	vnpu_tensor_free(y);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	free(xm);
	free(ym);
}

/* Memory the NPU cannot take (not page aligned) is copied, same results. */
TEST_F(dev, remote_ptr_fallback)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape shape = { 1, { N } };
	float *mem = aligned_alloc(PAGE, 2 * N * sizeof(float) + PAGE);
	float *xm = mem + 1, *ym = mem + N + 2;
	static float want[N];
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *x, *y;
	const char *where;

	ASSERT_NE(NULL, mem);
	ASSERT_EQ(VNPU_OK, compile_add(core, device, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, expected_y(_metadata, req, 5.0f, want));
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, xm, &x));
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, ym, &y));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_device(x, &where));
	/* The CPU runs on any memory; the NPU needs whole pages. */
	ASSERT_TRUE(is_npu(device) ? where == NULL : !strcmp(where, device));
	fill_x(xm, 5.0f);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", x));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "y", y));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(0, memcmp(ym, want, sizeof(want)));
	vnpu_tensor_free(x);
	vnpu_tensor_free(y);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	free(mem);
}

TEST_F(dev, remote_bad_args)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape shape = { 1, { N } }, dynamic = { 1, { -1 } };
	float *mem = aligned_alloc(PAGE, 4 * PAGE);
	vnpu_tensor *t = NULL;
	const char *where;
	int fd;

	ASSERT_NE(NULL, mem);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_create_remote_tensor(NULL, device, VNPU_TYPE_F32, &shape, mem, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_create_remote_tensor(core, NULL, VNPU_TYPE_F32, &shape, mem, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, NULL, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, mem,
						    NULL));
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_core_create_remote_tensor(core, "GPU", VNPU_TYPE_F32, &shape, mem, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &dynamic, mem,
						    &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape,
						    (char *)mem + 1, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, -1, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, 0, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_get_device(NULL, &where));
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	/* Not a dma-buf; and the CPU imports none at all. */
	ASSERT_FAILS(is_npu(device) ? VNPU_INVALID_ARGUMENT : VNPU_UNSUPPORTED,
		     vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, fd, &t));
	close(fd);
	ASSERT_EQ(NULL, t);
	free(mem);
}

/*
 * A vgem dma-buf is the input, another the output: the NPU reads and
 * writes them in place (no byte uploaded or downloaded by the driver's
 * counters) with the results of the copying path. A dma-buf imported
 * twice is two tensors of the same memory, either freed first.
 */
TEST_F(dev, dmabuf_vgem_in_out)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape shape = { 1, { N } };
	static float want[N];
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	int vgem, in_fd, out_fd;
	vnpu_tensor *x, *y, *again;
	float *px, *py, *pa;
	uint64_t copied;

	if (!is_npu(device))
		return;
	/* The NPU runs in the VM, which has vgem: without it nothing is shown. */
	vgem = vgem_open();
	ASSERT_GE(vgem, 0);
	in_fd = vgem_dmabuf(vgem, 4 * PAGE);
	out_fd = vgem_dmabuf(vgem, 4 * PAGE);
	ASSERT_TRUE(in_fd >= 0 && out_fd >= 0);
	ASSERT_EQ(VNPU_OK, compile_add(core, device, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, expected_y(_metadata, req, 7.0f, want));

	ASSERT_EQ(VNPU_OK,
		  vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, in_fd, &x));
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, out_fd, &y));
	/* The same dma-buf twice: two tensors over the same memory. */
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, in_fd,
						 &again));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(x, (void **)&px));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(again, (void **)&pa));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(y, (void **)&py));
	fill_x(pa, 7.0f);
	ASSERT_EQ(7.25f, px[1]);
	/* Freeing one leaves the other's buffer (the shared handle) alive. */
	vnpu_tensor_free(again);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", x));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "y", y));
	copied = bytes_copied(core, device);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(copied, bytes_copied(core, device));
	ASSERT_EQ(0, memcmp(py, want, sizeof(want)));

	vnpu_tensor_free(x);
	vnpu_tensor_free(y);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	/* Freed by all (the request held them), it imports again; too small a one is refused. */
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape, in_fd, &x));
	vnpu_tensor_free(x);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &(vnpu_shape){ 1,
						    { 2 * PAGE } }, in_fd, &x));
	close(in_fd);
	close(out_fd);
	close(vgem);
}

/* A producer whose work is not done: a vgem fence, as a sync_file. */
struct producer {
	int vgem;
	uint32_t fence;		/* vgem's id, to signal it */
	int sync_file;
};

static int producer_start(struct __test_metadata *_metadata, int vgem, struct producer *p)
{
	p->vgem = vgem;
	ASSERT_EQ(0, vgem_fence_start(vgem, &p->fence, &p->sync_file));
	return 0;
}

static int producer_done(struct __test_metadata *_metadata, struct producer *p)
{
	ASSERT_EQ(0, vgem_fence_signal(p->vgem, p->fence));
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
TEST_F(dev, fence_bad_args)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape shape = { 1, { N } };
	float *mem = aligned_alloc(PAGE, 4 * PAGE);
	uint32_t syncobj;
	vnpu_tensor *host, *t;
	int fd, node, closed, out = -1;

	ASSERT_NE(NULL, mem);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &shape, &host));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_in_fence(NULL, VNPU_FENCE_SYNC_FILE,
								     0));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_tensor_set_in_fence(host, VNPU_FENCE_SYNC_FILE, 0));
	ASSERT_FAILS(VNPU_UNSUPPORTED,
		     vnpu_tensor_export_out_fence(host, VNPU_FENCE_SYNC_FILE, &out));
	vnpu_tensor_free(host);
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, mem, &t));
	if (!is_npu(device)) {
		ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNC_FILE,
									0));
		vnpu_tensor_free(t);
		free(mem);
		return;
	}
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_in_fence(t, (vnpu_fence_kind)7, 0));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNC_FILE, -1));
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNC_FILE, fd));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNCOBJ, fd));
	closed = fd;
	close(fd);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNC_FILE, closed));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNCOBJ,
								     closed));
	node = drm_node_open("vnpu", "renderD", 128);
	ASSERT_GE(node, 0);
	ASSERT_EQ(0, drmSyncobjCreate(node, 0, &syncobj));
	ASSERT_EQ(0, drmSyncobjHandleToFD(node, syncobj, &fd));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNCOBJ, fd));
	/* A syncobj is no sync_file. */
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_in_fence(t, VNPU_FENCE_SYNC_FILE, fd));
	close(fd);
	drmSyncobjDestroy(node, syncobj);
	close(node);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_tensor_export_out_fence(t, VNPU_FENCE_SYNC_FILE, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_tensor_export_out_fence(t, (vnpu_fence_kind)-1, &out));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_tensor_export_out_fence(t, VNPU_FENCE_SYNC_FILE, &out));
	ASSERT_EQ(-1, out);
	vnpu_tensor_free(t);
	free(mem);
}

/* vgem dma-bufs as the tensors x, y and z of two requests, and the model. */
struct chain {
	int vgem, fds[3];
	vnpu_tensor *t[3];
	float *data[3];
	vnpu_compiled_model *cm;
	vnpu_infer_request *a, *b;
};

static int chain_open(struct __test_metadata *_metadata, vnpu_core *core, const char *device,
		      struct chain *c)
{
	const vnpu_shape shape = { 1, { N } };

	c->vgem = vgem_open();
	ASSERT_GE(c->vgem, 0);
	for (int i = 0; i < 3; i++) {
		c->fds[i] = vgem_dmabuf(c->vgem, 4 * PAGE);
		ASSERT_GE(c->fds[i], 0);
		ASSERT_EQ(VNPU_OK,
			  vnpu_core_import_dmabuf_tensor(core, device, VNPU_TYPE_F32, &shape,
							 c->fds[i], &c->t[i]));
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(c->t[i], (void **)&c->data[i]));
	}
	ASSERT_EQ(VNPU_OK, compile_add(core, device, &c->cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(c->cm, &c->a));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(c->cm, &c->b));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(c->a, "x", c->t[0]));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(c->a, "y", c->t[1]));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(c->b, "x", c->t[1]));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(c->b, "y", c->t[2]));
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
TEST_F(dev, fence_chain)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct producer p;
	struct chain c = { 0 };
	int a_done, b_done;
	vnpu_status st;

	if (!is_npu(device))
		return;
	ASSERT_EQ(0, chain_open(_metadata, core, device, &c));
	fill_x(c.data[0], 3.0f);
	ASSERT_EQ(0, producer_start(_metadata, c.vgem, &p));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_set_in_fence(c.t[0], VNPU_FENCE_SYNC_FILE, p.sync_file));
	close(p.sync_file);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(c.a));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_export_out_fence(c.t[1], VNPU_FENCE_SYNC_FILE, &a_done));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_export_out_fence(c.t[1], VNPU_FENCE_SYNCOBJ, &b_done));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_set_in_fence(c.t[1], VNPU_FENCE_SYNCOBJ, b_done));
	close(b_done);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(c.b));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_export_out_fence(c.t[2], VNPU_FENCE_SYNC_FILE, &b_done));
	ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_wait_for(c.b, 200));
	ASSERT_TRUE(!fence_signalled(a_done) && !fence_signalled(b_done));
	ASSERT_EQ(0, producer_done(_metadata, &p));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(c.b));
	ASSERT_TRUE(fence_signalled(b_done));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(c.a));
	ASSERT_TRUE(fence_signalled(a_done));
	close(a_done);
	close(b_done);
	for (int i = 0; i < N; i++) {
		float x = (float)i * 0.25f + 3.0f, cst = (float)(i % 7) - 3.0f;

		ASSERT_EQ(2 * x + cst, c.data[1][i]);
		ASSERT_EQ(2 * c.data[1][i] + cst, c.data[2][i]);
	}
	/* The in-fences were used: these runs start at once. */
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(c.a));
	st = vnpu_infer_request_infer(c.b);
	ASSERT_EQ(VNPU_OK, st);
	chain_close(&c);
}

/*
 * A fence that does not signal: the request waits for it on the device
 * (wait_for says NOT_READY at once and after a wait, again and again,
 * however the host schedules the test), and a cancel ends it as
 * cancelled once the fence is gone. A tensor with an in-fence that a
 * request would copy (a request of the CPU) fails that run.
 */
TEST_F(dev, fence_never_signals)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct producer p;
	struct chain c = { 0 };
	vnpu_compiled_model *cpu;
	vnpu_infer_request *req;

	if (!is_npu(device))
		return;
	ASSERT_EQ(0, chain_open(_metadata, core, device, &c));
	ASSERT_EQ(0, producer_start(_metadata, c.vgem, &p));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_set_in_fence(c.t[0], VNPU_FENCE_SYNC_FILE, p.sync_file));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(c.a));
	ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_wait_for(c.a, 0));
	ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_wait_for(c.a, 100));
	ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_wait_for(c.a, 100));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_cancel(c.a));
	ASSERT_EQ(0, producer_done(_metadata, &p));
	ASSERT_FAILS(VNPU_CANCELLED, vnpu_infer_request_wait(c.a));

	ASSERT_EQ(VNPU_OK, vnpu_tensor_set_in_fence(c.t[0], VNPU_FENCE_SYNC_FILE, p.sync_file));
	close(p.sync_file);
	ASSERT_EQ(VNPU_OK, compile_add(core, "CPU", &cpu));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cpu, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", c.t[0]));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_infer(req));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cpu);
	chain_close(&c);
}


RUNTIME_TEST_MAIN
