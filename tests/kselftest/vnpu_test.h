/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the vnpu kselftests: device lookup, one helper triple per
 * ioctl (_x() returns 0 or -errno, x() asserts success, x_err() asserts
 * one errno), and a small command-stream builder.
 */
#ifndef VNPU_TEST_H
#define VNPU_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drm/vnpu_cmd.h>
#include <drm/vnpu_drm.h>
#include <drm/vnpu_layers.h>

#include "kselftest_harness.h"

#define NSEC_PER_SEC 1000000000LL

/*
 * How much longer than on Debian's kernel everything may take:
 * VNPU_TIMEOUT_SCALE (a whole number, 1 to 100; 1 when unset), which
 * tests/vm/check-debug-in-vm sets for the debug kernel, where KASAN,
 * lockdep and kmemleak slow every allocation and lock. A bad value ends
 * the program with a message rather than run with a guess.
 */
static inline long long vnpu_timeout_scale(void)
{
	static long long scale;
	const char *env;
	char *end;
	long v;

	if (scale)
		return scale;
	env = getenv("VNPU_TIMEOUT_SCALE");
	if (!env || !*env) {
		scale = 1;
		return scale;
	}
	errno = 0;
	v = strtol(env, &end, 10);
	if (errno || *end || v < 1 || v > 100) {
		fprintf(stderr, "VNPU_TIMEOUT_SCALE=%s is not a whole number from 1 to 100\n",
			env);
		exit(KSFT_FAIL);
	}
	scale = v;
	return scale;
}

/* Deadline of waits that must succeed: TCG is slow. */
#define LONG_WAIT_NS (60 * NSEC_PER_SEC * vnpu_timeout_scale())

/* Each test's alarm (30 s unless TEST_F_TIMEOUT says), scaled as above. */
static inline void vnpu_scale_test_timeouts(void)
{
	long long scale = vnpu_timeout_scale();
	struct __fixture_metadata *f;
	struct __test_metadata *t;

	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			t->timeout = t->timeout * scale > INT32_MAX ?
				     INT32_MAX : (int)(t->timeout * scale);
}

/* The harness's main, with the timeouts scaled before any test runs. */
#undef TEST_HARNESS_MAIN
#define TEST_HARNESS_MAIN \
	static void __attribute__((constructor)) \
	__constructor_order_last(void) \
	{ \
		if (!__constructor_order) \
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	} \
	int main(int argc, char **argv) \
	{ \
		vnpu_scale_test_timeouts(); \
		return test_harness_run(argc, argv); \
	}

static inline int vnpu_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

static inline int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The DRM driver name behind @fd, into @name. */
static inline int drm_driver_name(int fd, char *name, size_t size)
{
	struct drm_version v = { .name = name, .name_len = size - 1 };

	memset(name, 0, size);
	return vnpu_ioctl(fd, DRM_IOCTL_VERSION, &v);
}

/* Open the @index-th DRM node named @driver under @prefix, or -1. */
static inline int drm_open_driver(const char *driver, const char *prefix,
				  int first, int index)
{
	char path[64], name[32];
	int minor, fd;

	for (minor = first; minor < first + 64; minor++) {
		snprintf(path, sizeof(path), "/dev/dri/%s%d", prefix, minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!drm_driver_name(fd, name, sizeof(name)) &&
		    !strcmp(name, driver) && index-- == 0)
			return fd;
		close(fd);
	}
	return -1;
}

static inline int vnpu_open(int index)
{
	return drm_open_driver("vnpu", "renderD", 128, index);
}

/*
 * Skip from a FIXTURE_SETUP: the 6.1 harness would still run the test body
 * after a SKIP there, so leave the test's child process with the harness's
 * skip status instead.
 */
#define SETUP_SKIP(fmt, ...) SKIP(_exit(255), fmt, ##__VA_ARGS__)

/* Opens the device or skips the test: a host without vnpu.ko skips. */
#define VNPU_OPEN_OR_SKIP(fd) do { \
	(fd) = vnpu_open(0); \
	if ((fd) < 0) \
		SETUP_SKIP("no vnpu render node (vnpu.ko not loaded)"); \
} while (0)

/* GET_PARAM */
static inline int _get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_vnpu_get_param a = { .param = param };
	int ret = vnpu_ioctl(fd, DRM_IOCTL_VNPU_GET_PARAM, &a);

	if (!ret)
		*value = a.value;
	return ret;
}

static inline uint64_t get_param(struct __test_metadata *_metadata, int fd,
				 uint32_t param)
{
	uint64_t v = 0;

	ASSERT_EQ(0, _get_param(fd, param, &v));
	return v;
}

/* BO_CREATE */
static inline int _bo_create(int fd, uint64_t size, uint32_t flags,
			     uint32_t *handle)
{
	struct drm_vnpu_bo_create a = { .size = size, .flags = flags };
	int ret = vnpu_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &a);

	if (!ret)
		*handle = a.handle;
	return ret;
}

static inline uint32_t bo_create(struct __test_metadata *_metadata, int fd,
				 uint64_t size)
{
	uint32_t h = 0;

	ASSERT_EQ(0, _bo_create(fd, size, 0, &h));
	ASSERT_NE(0, h);
	return h;
}

static inline void bo_create_err(struct __test_metadata *_metadata, int fd,
				 int err, uint64_t size, uint32_t flags)
{
	uint32_t h = 0;

	ASSERT_EQ(-err, _bo_create(fd, size, flags, &h));
}

static inline void gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	vnpu_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* BO_USERPTR */
static inline int _bo_userptr(int fd, const void *ptr, uint64_t size,
			      uint32_t flags, uint32_t *handle)
{
	struct drm_vnpu_bo_userptr a = {
		.user_ptr = (uintptr_t)ptr, .size = size, .flags = flags,
	};
	int ret = vnpu_ioctl(fd, DRM_IOCTL_VNPU_BO_USERPTR, &a);

	if (!ret)
		*handle = a.handle;
	return ret;
}

static inline uint32_t bo_userptr(struct __test_metadata *_metadata, int fd,
				  const void *ptr, uint64_t size,
				  uint32_t flags)
{
	uint32_t h = 0;

	ASSERT_EQ(0, _bo_userptr(fd, ptr, size, flags, &h));
	ASSERT_NE(0, h);
	return h;
}

static inline void bo_userptr_err(struct __test_metadata *_metadata, int fd,
				  int err, const void *ptr, uint64_t size,
				  uint32_t flags)
{
	uint32_t h = 0;

	ASSERT_EQ(-err, _bo_userptr(fd, ptr, size, flags, &h));
}

/* Anonymous private memory of @size bytes with @prot, page aligned. */
static inline void *anon_map(struct __test_metadata *_metadata, size_t size,
			     int prot)
{
	void *p = mmap(NULL, size, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	return p;
}

/* BO_INFO */
static inline int _bo_info(int fd, uint32_t handle, uint32_t flags,
			   struct drm_vnpu_bo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	info->flags = flags;
	return vnpu_ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, info);
}

static inline struct drm_vnpu_bo_info bo_info(struct __test_metadata *_metadata,
					      int fd, uint32_t handle)
{
	struct drm_vnpu_bo_info info;

	ASSERT_EQ(0, _bo_info(fd, handle, 0, &info));
	return info;
}

static inline void bo_info_err(struct __test_metadata *_metadata, int fd,
			       int err, uint32_t handle, uint32_t flags)
{
	struct drm_vnpu_bo_info info;

	ASSERT_EQ(-err, _bo_info(fd, handle, flags, &info));
}

/* BO_UPLOAD and BO_DOWNLOAD */
static inline int _bo_xfer(int fd, int upload, uint32_t handle,
			   uint64_t offset, uint64_t size, const void *data,
			   uint32_t flags)
{
	struct drm_vnpu_bo_xfer a = {
		.handle = handle, .flags = flags, .offset = offset,
		.size = size, .data_ptr = (uintptr_t)data,
	};

	return vnpu_ioctl(fd, upload ? DRM_IOCTL_VNPU_BO_UPLOAD :
				       DRM_IOCTL_VNPU_BO_DOWNLOAD, &a);
}

static inline void bo_upload(struct __test_metadata *_metadata, int fd,
			     uint32_t handle, uint64_t offset, const void *data,
			     uint64_t size)
{
	ASSERT_EQ(0, _bo_xfer(fd, 1, handle, offset, size, data, 0));
}

static inline void bo_download(struct __test_metadata *_metadata, int fd,
			       uint32_t handle, uint64_t offset, void *data,
			       uint64_t size)
{
	ASSERT_EQ(0, _bo_xfer(fd, 0, handle, offset, size, data, 0));
}

/* Both directions must fail with @err. */
static inline void bo_xfer_err(struct __test_metadata *_metadata, int fd,
			       int err, uint32_t handle, uint64_t offset,
			       uint64_t size, void *data, uint32_t flags)
{
	ASSERT_EQ(-err, _bo_xfer(fd, 1, handle, offset, size, data, flags));
	ASSERT_EQ(-err, _bo_xfer(fd, 0, handle, offset, size, data, flags));
}

static inline void *bo_mmap(struct __test_metadata *_metadata, int fd,
			    uint32_t handle, size_t size)
{
	struct drm_vnpu_bo_info info = bo_info(_metadata, fd, handle);
	void *p;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 info.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	return p;
}

/* Command streams */
struct stream {
	uint64_t words[4096];
	uint32_t size;
	uint32_t num_cmds;
};

static inline void *stream_add(struct stream *s, uint32_t opcode,
			       uint32_t size)
{
	struct vnpu_cmd_header *h = (void *)((char *)s->words + s->size);

	memset(h, 0, size);
	h->opcode = opcode;
	h->size = size;
	s->size += size;
	s->num_cmds++;
	return h;
}

static inline void stream_nop(struct stream *s)
{
	stream_add(s, VNPU_CMD_NOP, sizeof(struct vnpu_cmd_header));
}

static inline void stream_spin(struct stream *s)
{
	stream_add(s, VNPU_CMD_SPIN, sizeof(struct vnpu_cmd_header));
}

/* A contiguous 1-D tensor of @n elements of @dtype at @offset of @slot. */
static inline struct vnpu_cmd_tensor tensor_1d(uint32_t slot, uint32_t dtype,
					       uint64_t offset, uint64_t n)
{
	struct vnpu_cmd_tensor t = {
		.slot = slot, .dtype = dtype, .offset = offset, .rank = 1,
	};

	t.dims[0] = n;
	t.strides[0] = 1;
	return t;
}

static inline struct vnpu_cmd_fill *stream_fill(struct stream *s,
						struct vnpu_cmd_tensor dst,
						uint64_t value)
{
	struct vnpu_cmd_fill *f = stream_add(s, VNPU_CMD_FILL, sizeof(*f));

	f->dst = dst;
	f->value = value;
	return f;
}

static inline struct vnpu_cmd_copy *stream_copy(struct stream *s,
						struct vnpu_cmd_tensor dst,
						struct vnpu_cmd_tensor src)
{
	struct vnpu_cmd_copy *c = stream_add(s, VNPU_CMD_COPY, sizeof(*c));

	c->dst = dst;
	c->src = src;
	return c;
}

/* A contiguous 2-D f32 tensor [@rows, @cols] at @offset of @slot. */
static inline struct vnpu_cmd_tensor tensor_2d_f32(uint32_t slot, uint64_t offset,
						   uint64_t rows, uint64_t cols)
{
	struct vnpu_cmd_tensor t = {
		.slot = slot, .dtype = VNPU_DTYPE_F32, .offset = offset,
		.rank = 2,
	};

	t.dims[0] = rows;
	t.dims[1] = cols;
	t.strides[0] = (int64_t)cols;
	t.strides[1] = 1;
	return t;
}

/*
 * A real layer: the f32 GEMM Y = A x B of slot @slot, with A [@m, @k] at
 * offset 0, B [@k, @n] right after it and Y [@m, @n] after B. The slot
 * needs 4 * (@m * @k + @k * @n + @m * @n) bytes.
 */
static inline struct vnpu_cmd_layer *stream_gemm(struct stream *s,
						 uint32_t slot, uint64_t m,
						 uint64_t n, uint64_t k)
{
	struct vnpu_layer_gemm attrs = { .alpha = 0x3f800000 };
	size_t tensors = 3 * sizeof(struct vnpu_cmd_tensor);
	struct vnpu_cmd_layer *l;

	l = stream_add(s, VNPU_CMD_LAYER, sizeof(*l) + tensors + sizeof(attrs));
	l->op = VNPU_LAYER_GEMM;
	l->num_tensors = 3;
	l->num_outputs = 1;
	l->attr_size = sizeof(attrs);
	l->tensors[0] = tensor_2d_f32(slot, 0, m, k);
	l->tensors[1] = tensor_2d_f32(slot, 4 * m * k, k, n);
	l->tensors[2] = tensor_2d_f32(slot, 4 * (m * k + k * n), m, n);
	memcpy((char *)l + sizeof(*l) + tensors, &attrs, sizeof(attrs));
	return l;
}

/*
 * Fill @a for a job running @s with @slots: the stream goes to a new
 * command BO (closed with the file).
 */
static inline void submit_prepare(struct __test_metadata *_metadata, int fd,
				  const struct stream *s,
				  const struct drm_vnpu_slot *slots,
				  uint32_t num_slots, struct drm_vnpu_submit *a)
{
	uint32_t cmd = bo_create(_metadata, fd, s->size ? s->size : 8);

	if (s->size)
		bo_upload(_metadata, fd, cmd, 0, s->words, s->size);
	memset(a, 0, sizeof(*a));
	a->cmd_handle = cmd;
	a->cmd_size = s->size;
	a->slots_ptr = (uintptr_t)slots;
	a->slot_count = num_slots;
	a->priority = DRM_VNPU_PRIORITY_NORMAL;
}

static inline int _submit(int fd, struct drm_vnpu_submit *a)
{
	return vnpu_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, a);
}

static inline uint64_t submit(struct __test_metadata *_metadata, int fd,
			      struct drm_vnpu_submit *a)
{
	ASSERT_EQ(0, _submit(fd, a));
	ASSERT_NE(0, a->job_id);
	return a->job_id;
}

static inline void submit_err(struct __test_metadata *_metadata, int fd,
			      int err, struct drm_vnpu_submit *a)
{
	ASSERT_EQ(-err, _submit(fd, a));
}

/* Submit @s with @slots in one go; returns the job id. */
static inline uint64_t run_stream(struct __test_metadata *_metadata, int fd,
				  const struct stream *s,
				  const struct drm_vnpu_slot *slots,
				  uint32_t num_slots)
{
	struct drm_vnpu_submit a;
	uint64_t id;

	submit_prepare(_metadata, fd, s, slots, num_slots, &a);
	id = submit(_metadata, fd, &a);
	gem_close(fd, a.cmd_handle);
	return id;
}

/* WAIT */
static inline int _wait_job(int fd, uint64_t id, int64_t deadline,
			    struct drm_vnpu_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->job_id = id;
	w->timeout_ns = deadline;
	return vnpu_ioctl(fd, DRM_IOCTL_VNPU_WAIT, w);
}

/* Waits for the job to end and returns its status. */
static inline uint32_t wait_job(struct __test_metadata *_metadata, int fd,
				uint64_t id)
{
	struct drm_vnpu_wait w;

	ASSERT_EQ(0, _wait_job(fd, id, now_ns() + LONG_WAIT_NS, &w));
	return w.status;
}

static inline void wait_err(struct __test_metadata *_metadata, int fd,
			    int err, uint64_t id, int64_t deadline)
{
	struct drm_vnpu_wait w;

	ASSERT_EQ(-err, _wait_job(fd, id, deadline, &w));
}

/* CANCEL */
static inline int _cancel(int fd, uint64_t id, uint32_t flags, uint32_t pad)
{
	struct drm_vnpu_cancel c = { .job_id = id, .flags = flags, .pad = pad };

	return vnpu_ioctl(fd, DRM_IOCTL_VNPU_CANCEL, &c);
}

/* Fills @buf with pseudo-random bytes from @seed. */
static inline void fill_random(void *buf, size_t size, uint32_t seed)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < size; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = seed >> 16;
	}
}

static inline int prime_export(int fd, uint32_t handle, int *dmabuf)
{
	struct drm_prime_handle p = { .handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR };
	int ret = vnpu_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	*dmabuf = p.fd;
	return ret;
}

static inline int prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct drm_prime_handle p = { .fd = dmabuf };
	int ret = vnpu_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	*handle = p.handle;
	return ret;
}

/*
 * Load vgem unless it is loaded (the VM harness loads it): a shell and
 * modprobe cost seconds each on the debug kernel under TCG, inside the
 * test's alarm. -1 when modprobe cannot run.
 */
static inline int vgem_load(void)
{
	if (!access("/sys/module/vgem", F_OK))
		return 0;
	return system("modprobe vgem 2>/dev/null") < 0 ? -1 : 0;
}

/* vgem's dumb BO on its card node, exported as a dma-buf. */
static inline int vgem_dmabuf(int *vgem_fd, uint32_t size, uint32_t *handle)
{
	struct drm_mode_create_dumb d = { .width = size / 4, .height = 1, .bpp = 32 };
	int dmabuf;

	if (vgem_load())
		return -1;
	*vgem_fd = drm_open_driver("vgem", "card", 0, 0);
	if (*vgem_fd < 0)
		return -1;
	if (vnpu_ioctl(*vgem_fd, DRM_IOCTL_MODE_CREATE_DUMB, &d))
		return -1;
	*handle = d.handle;
	if (prime_export(*vgem_fd, d.handle, &dmabuf))
		return -1;
	return dmabuf;
}

static inline void *vgem_mmap(int vgem_fd, uint32_t handle, size_t size)
{
	struct drm_mode_map_dumb m = { .handle = handle };

	if (vnpu_ioctl(vgem_fd, DRM_IOCTL_MODE_MAP_DUMB, &m))
		return MAP_FAILED;
	return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vgem_fd,
		    m.offset);
}

/* Root-only debugfs file of the first vnpu device, or NULL. */
static inline FILE *vnpu_debugfs_open(const char *name, const char *mode)
{
	char path[128], drv[64];
	FILE *f;
	int i;

	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%d/name", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(drv, sizeof(drv), f))
			drv[0] = 0;
		fclose(f);
		if (strncmp(drv, "vnpu ", 5))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%d/%s", i,
			 name);
		return fopen(path, mode);
	}
	return NULL;
}

static inline int vnpu_debugfs_write(const char *name, const char *value)
{
	FILE *f = vnpu_debugfs_open(name, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(value, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* debugfs "state" figure @key of the first vnpu device, or -1. */
static inline long long vnpu_state_figure(const char *key)
{
	FILE *f = vnpu_debugfs_open("state", "r");
	char line[128];
	long long v = -1;
	size_t n = strlen(key);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = atoll(line + n + 1);
	fclose(f);
	return v;
}

/*
 * insmod the VM harness's vnpu.ko (VNPU_VM_KO) with its parameters
 * (VNPU_VM_PARAMS), then @extra (which wins); system()'s result, or -1
 * outside the harness.
 */
static inline int vnpu_insmod(const char *extra)
{
	const char *ko = getenv("VNPU_VM_KO");
	const char *params = getenv("VNPU_VM_PARAMS");
	char cmd[1024];

	if (!ko)
		return -1;
	snprintf(cmd, sizeof(cmd), "insmod %s %s %s 2>/dev/null", ko,
		 params ? params : "", extra);
	return system(cmd);
}

/* The number in environment variable @name, else @def. */
static inline uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* The FPU sections of the device's tiles (debugfs ``state``). */
struct fpu_figures {
	uint64_t sections, ns, max_ns, max_opcode, max_layer_op;
};

/*
 * Read the FPU figures of the first vnpu device from one read of its
 * debugfs ``state``, so that they are of one moment; 0, or -1 without
 * debugfs or when a line is missing.
 */
static inline int vnpu_fpu_figures(struct fpu_figures *fig)
{
	static const char *const keys[] = {
		"fpu_sections", "fpu_ns", "fpu_max_ns", "fpu_max_opcode",
		"fpu_max_layer_op",
	};
	uint64_t *values[] = {
		&fig->sections, &fig->ns, &fig->max_ns, &fig->max_opcode,
		&fig->max_layer_op,
	};
	FILE *f = vnpu_debugfs_open("state", "r");
	unsigned int i, found = 0;
	char line[256];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < 5; i++) {
			size_t len = strlen(keys[i]);

			if (!strncmp(line, keys[i], len) && line[len] == ':' &&
			    sscanf(line + len + 1, "%" SCNu64, values[i]) == 1)
				found |= 1u << i;
		}
	fclose(f);
	return found == 0x1f ? 0 : -1;
}

#endif /* VNPU_TEST_H */
