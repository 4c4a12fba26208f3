// SPDX-License-Identifier: GPL-2.0
/*
 * Random ioctl sequences. A seeded generator drives every vnpu ioctl and
 * DRM's GEM_CLOSE, syncobj and PRIME ioctls, plus mmap, from two threads
 * sharing one file and a third on a second file, with arguments drawn from
 * valid values, edges and garbage: handles that were closed meanwhile or
 * never existed, offsets and sizes around a BO's end, bad user pointers,
 * command streams of FILL, COPY and NOP over random slots, some with a
 * byte changed, in- and out-syncobjs, job ids of either file.
 *
 * Each call must succeed or fail with one of the errnos the uAPI uses;
 * whatever the kernel logs (a WARN, a BUG, a lockdep report) fails the VM
 * run, and unloading the module afterwards shows no reference was leaked.
 * At the end the device must still run a job right.
 *
 * VNPU_FUZZ_SEED and VNPU_FUZZ_OPS (per thread) change the seed and count;
 * a failure names the seed, thread and operation to replay.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "vnpu_test.h"

#define POOL 16		/* BO handles, syncobjs and job ids each thread recalls */
#define BUF_SIZE 65536	/* user memory for transfers */
#define FUZZ_BO_MAX 65536	/* largest BO the fuzzer creates on purpose */

enum fuzz_op {
	OP_BO_CREATE, OP_BO_INFO, OP_UPLOAD, OP_DOWNLOAD, OP_GEM_CLOSE, OP_MMAP,
	OP_SUBMIT, OP_WAIT, OP_CANCEL, OP_SYNCOBJ_CREATE, OP_SYNCOBJ_DESTROY,
	OP_PRIME, OP_GET_PARAM, NUM_OPS,
};

static const char *const op_names[NUM_OPS] = {
	"BO_CREATE", "BO_INFO", "BO_UPLOAD", "BO_DOWNLOAD", "GEM_CLOSE", "mmap",
	"SUBMIT", "WAIT", "CANCEL", "SYNCOBJ_CREATE", "SYNCOBJ_DESTROY", "PRIME",
	"GET_PARAM",
};

/* What the two files share: every thread may use the other file's ids. */
struct fuzz_shared {
	int fd[2];
	_Atomic uint64_t job_ids[2][POOL];
	uint64_t ops;
	uint64_t seed;
};

struct fuzz_thread {
	struct fuzz_shared *sh;
	int index;		/* 0, 1: file 0; 2: file 1 */
	int fd, other_fd;
	uint64_t rng;
	uint32_t bos[POOL], syncobjs[POOL];
	uint64_t bo_sizes[POOL];	/* as created (the BO may be gone) */
	unsigned char *buf;
	/* the first failure: */
	char failure[256];
	uint64_t calls[NUM_OPS], errors[NUM_OPS];
};

static uint64_t rnd(struct fuzz_thread *t)
{
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 2685821657736338717ull;
}

static uint64_t below(struct fuzz_thread *t, uint64_t n)
{
	return n ? rnd(t) % n : 0;
}

/* A handle: mostly one of ours (maybe closed since), else garbage. */
static uint32_t pick_handle(struct fuzz_thread *t, const uint32_t *pool)
{
	switch (below(t, 8)) {
	case 0:
		return 0;
	case 1:
		return (uint32_t)rnd(t);
	default:
		return pool[below(t, POOL)];
	}
}

static uint64_t pick_size(struct fuzz_thread *t, uint64_t max)
{
	static const uint64_t edges[] = { 0, 1, 7, 8, 4095, 4096, 4097, 1ull << 32,
					  ~0ull, ~0ull - 4095 };

	if (below(t, 4))
		return below(t, max + 1);
	return edges[below(t, sizeof(edges) / sizeof(edges[0]))];
}

/* A user pointer: our buffer, or one the kernel must refuse to copy. */
static uint64_t pick_ptr(struct fuzz_thread *t)
{
	switch (below(t, 10)) {
	case 0:
		return 0;
	case 1:
		return 4096;
	case 2:
		return 0xffff888000000000ull;	/* the kernel's direct map */
	default:
		return (uint64_t)(uintptr_t)t->buf;
	}
}

static int op_bo_create(struct fuzz_thread *t)
{
	struct drm_vnpu_bo_create c = {
		.size = below(t, 8) ? 1 + below(t, FUZZ_BO_MAX) : pick_size(t, FUZZ_BO_MAX),
		.flags = below(t, 16) ? 0 : (uint32_t)rnd(t),
	};
	int ret = vnpu_ioctl(t->fd, DRM_IOCTL_VNPU_BO_CREATE, &c);

	if (!ret) {
		uint32_t i = (uint32_t)below(t, POOL);

		/* Forget one handle in four without closing it: close() does. */
		if (t->bos[i] && below(t, 4))
			gem_close(t->fd, t->bos[i]);
		t->bos[i] = c.handle;
		t->bo_sizes[i] = c.size;
	}
	return ret;
}

static int op_bo_info(struct fuzz_thread *t)
{
	struct drm_vnpu_bo_info info = {
		.handle = pick_handle(t, t->bos),
		.flags = below(t, 16) ? 0 : (uint32_t)rnd(t),
	};

	return vnpu_ioctl(t->fd, DRM_IOCTL_VNPU_BO_INFO, &info);
}

static int op_xfer(struct fuzz_thread *t, bool upload)
{
	uint32_t i = (uint32_t)below(t, POOL);
	struct drm_vnpu_bo_xfer x = {
		.handle = pick_handle(t, t->bos),
		.flags = below(t, 16) ? 0 : (uint32_t)rnd(t),
		.offset = pick_size(t, FUZZ_BO_MAX),
		.data_ptr = pick_ptr(t),
	};

	/* Within our buffer when the pointer is ours. */
	x.size = pick_size(t, BUF_SIZE);
	if (below(t, 2)) {
		/* well formed, but the BO may have been closed meanwhile */
		x.handle = t->bos[i];
		x.offset = below(t, t->bo_sizes[i] + 1);
		x.size = below(t, t->bo_sizes[i] - x.offset + 1);
		x.data_ptr = (uint64_t)(uintptr_t)t->buf;
	}
	if (x.data_ptr == (uint64_t)(uintptr_t)t->buf && x.size > BUF_SIZE)
		x.size = BUF_SIZE;
	return vnpu_ioctl(t->fd, upload ? DRM_IOCTL_VNPU_BO_UPLOAD : DRM_IOCTL_VNPU_BO_DOWNLOAD,
			  &x);
}

static int op_gem_close(struct fuzz_thread *t)
{
	struct drm_gem_close c = { .handle = pick_handle(t, t->bos) };
	int ret = vnpu_ioctl(t->fd, DRM_IOCTL_GEM_CLOSE, &c);

	for (int i = 0; !ret && i < POOL; i++)
		if (t->bos[i] == c.handle)
			t->bos[i] = 0;
	return ret;
}

/* Map a BO, touch its first and last byte, unmap. */
static int op_mmap(struct fuzz_thread *t)
{
	struct drm_vnpu_bo_info info = { .handle = t->bos[below(t, POOL)] };
	volatile unsigned char *map;
	int ret = vnpu_ioctl(t->fd, DRM_IOCTL_VNPU_BO_INFO, &info);

	if (ret)
		return ret;
	map = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd,
		   (off_t)info.mmap_offset);
	if (map == MAP_FAILED)
		return -errno;
	map[0] = map[info.size - 1] + 1;
	munmap((void *)map, info.size);
	return 0;
}

/*
 * A tensor in one of the job's slots: within the BO the slot had when
 * @sizes is given (one time in two), anywhere otherwise.
 */
static struct vnpu_cmd_tensor fuzz_tensor(struct fuzz_thread *t, uint32_t num_slots,
					  const uint64_t *sizes)
{
	uint32_t slot = (uint32_t)below(t, num_slots + !sizes);
	uint64_t n = 1 + below(t, 4096), offset = 4 * below(t, FUZZ_BO_MAX / 4);
	struct vnpu_cmd_tensor v;

	if (sizes && sizes[slot] >= 4) {
		n = 1 + below(t, sizes[slot] / 4);
		offset = 4 * below(t, sizes[slot] / 4 - n + 1);
	}
	v = tensor_1d(slot, below(t, 2) ? VNPU_DTYPE_U32 : VNPU_DTYPE_F32, offset, n);

	if (!sizes && !below(t, 8)) {
		v.rank = 2;
		v.dims[1] = 1 + below(t, 4);
		v.strides[0] = (int64_t)v.dims[1];
		v.strides[1] = 1;
	}
	return v;
}

/*
 * SUBMIT's result: that of a job that ended in it (a known status, a start
 * and an end in order), or none at all.
 */
static bool submit_result_sane(const struct drm_vnpu_submit *a)
{
	if (a->out_flags == DRM_VNPU_SUBMIT_OUT_ENDED)
		return a->status <= DRM_VNPU_JOB_CANCELLED &&
		       (a->status == DRM_VNPU_JOB_CANCELLED ||
			(a->start_ns && a->start_ns <= a->end_ns));
	return !a->out_flags && !a->status && !a->fault_cmd && !a->start_ns &&
	       !a->end_ns;
}

static int op_submit(struct fuzz_thread *t)
{
	bool well_formed = below(t, 2);
	struct drm_vnpu_slot slots[4];
	uint64_t sizes[4];
	uint32_t in[2], num_slots = (uint32_t)below(t, 5), i;
	struct drm_vnpu_submit a = {
		.priority = (uint32_t)below(t, 4),	/* 3: invalid */
		.slot_count = num_slots,
		.slots_ptr = (uint64_t)(uintptr_t)slots,
	};
	static __thread struct stream s;
	struct vnpu_cmd_copy *c;
	uint32_t cmd;
	int ret;

	memset(&s, 0, sizeof(s));

	if (well_formed && !num_slots)
		num_slots = 1;
	for (i = 0; i < num_slots; i++) {
		uint32_t k = (uint32_t)below(t, POOL), tries = POOL;

		while (well_formed && !t->bos[k] && --tries)
			k = (k + 1) % POOL;
		slots[i].handle = well_formed ? t->bos[k] : pick_handle(t, t->bos);
		slots[i].flags = well_formed ? DRM_VNPU_SLOT_READ | DRM_VNPU_SLOT_WRITE :
			below(t, 16) ? 1 + (uint32_t)below(t, 3) : (uint32_t)rnd(t);
		sizes[i] = t->bo_sizes[k];
	}
	for (i = below(t, 4); i > 0; i--) {
		switch (below(t, 3)) {
		case 0:
			stream_nop(&s);
			break;
		case 1:
			stream_fill(&s, fuzz_tensor(t, num_slots, well_formed ? sizes : NULL),
				    (uint32_t)rnd(t));
			break;
		default:
			c = stream_copy(&s, fuzz_tensor(t, num_slots, well_formed ? sizes : NULL),
					fuzz_tensor(t, num_slots, well_formed ? sizes : NULL));
			/* one shape: the source's */
			if (well_formed && c->src.dims[0] <= c->dst.dims[0])
				c->dst.dims[0] = c->src.dims[0];
			else if (well_formed)
				c->src.dims[0] = c->dst.dims[0];
			break;
		}
	}
	if (!s.size)
		stream_nop(&s);
	if (!well_formed && !below(t, 4))
		((unsigned char *)s.words)[below(t, s.size)] = (unsigned char)rnd(t);

	/* The stream goes in a BO of ours, at an offset in it. */
	cmd = t->bos[below(t, POOL)];
	for (i = 0; well_formed && !cmd && i < POOL; i++)
		cmd = t->bos[i];
	a.cmd_handle = well_formed || below(t, 16) ? cmd : pick_handle(t, t->bos);
	a.cmd_offset = well_formed || below(t, 8) ? 0 : 8 * below(t, 64);
	a.cmd_size = well_formed || below(t, 16) ? s.size : pick_size(t, 4096);
	if (_bo_xfer(t->fd, 1, cmd, a.cmd_offset, s.size, s.words, 0))
		a.cmd_offset = 0;

	if (well_formed) {
		a.priority = (uint32_t)below(t, 3);
	} else if (!below(t, 4)) {
		a.in_syncobj_count = (uint32_t)below(t, 3);
		for (i = 0; i < a.in_syncobj_count; i++)
			in[i] = pick_handle(t, t->syncobjs);
		a.in_syncobjs_ptr = below(t, 8) ? (uint64_t)(uintptr_t)in : pick_ptr(t);
	}
	if (!below(t, 3))
		a.out_syncobj = well_formed ? t->syncobjs[below(t, POOL)] :
			pick_handle(t, t->syncobjs);
	if (!well_formed && !below(t, 8)) {
		a.flags = DRM_VNPU_SUBMIT_PROFILE;
		a.profile_handle = pick_handle(t, t->bos);
	}
	if (!well_formed && !below(t, 32))
		a.flags |= (uint32_t)rnd(t);
	if (!well_formed && !below(t, 64))
		a.slots_ptr = pick_ptr(t);
	if (!well_formed && !below(t, 64))
		a.pad2 = (uint32_t)rnd(t) | 1;
	/* The result members are outputs: what comes in is ignored. */
	if (!below(t, 4)) {
		a.out_flags = (uint32_t)rnd(t);
		a.status = (uint32_t)rnd(t);
		a.fault_cmd = (uint32_t)rnd(t);
		a.start_ns = rnd(t);
		a.end_ns = rnd(t);
	}

	ret = vnpu_ioctl(t->fd, DRM_IOCTL_VNPU_SUBMIT, &a);
	if (ret)
		return ret;
	atomic_store(&t->sh->job_ids[t->index == 2][below(t, POOL)], a.job_id);
	if (!submit_result_sane(&a))
		snprintf(t->failure, sizeof(t->failure),
			 "seed %llu, thread %d: SUBMIT returned out_flags %#x, status %u, start %llu, end %llu",
			 (unsigned long long)t->sh->seed, t->index, a.out_flags, a.status,
			 (unsigned long long)a.start_ns, (unsigned long long)a.end_ns);
	return 0;
}

static uint64_t pick_job(struct fuzz_thread *t)
{
	switch (below(t, 8)) {
	case 0:
		return rnd(t);
	case 1:	/* the other file's: unknown here */
		return atomic_load(&t->sh->job_ids[t->index != 2][below(t, POOL)]);
	default:
		return atomic_load(&t->sh->job_ids[t->index == 2][below(t, POOL)]);
	}
}

static int op_wait(struct fuzz_thread *t)
{
	struct drm_vnpu_wait w = {
		.job_id = pick_job(t),
		.flags = below(t, 16) ? 0 : (uint32_t)rnd(t),
	};

	switch (below(t, 4)) {
	case 0:
		w.timeout_ns = 0;
		break;
	case 1:
		w.timeout_ns = (int64_t)rnd(t);	/* past or far future: bounded below */
		if (w.timeout_ns > now_ns() + NSEC_PER_SEC)
			w.timeout_ns = now_ns() + 1000000;
		break;
	default:
		w.timeout_ns = now_ns() + (int64_t)below(t, 2000000);
		break;
	}
	return vnpu_ioctl(t->fd, DRM_IOCTL_VNPU_WAIT, &w);
}

static int op_cancel(struct fuzz_thread *t)
{
	struct drm_vnpu_cancel c = {
		.job_id = pick_job(t),
		.flags = below(t, 16) ? 0 : (uint32_t)rnd(t),
	};

	return vnpu_ioctl(t->fd, DRM_IOCTL_VNPU_CANCEL, &c);
}

static int op_syncobj_create(struct fuzz_thread *t)
{
	struct drm_syncobj_create c = {
		.flags = below(t, 2) ? DRM_SYNCOBJ_CREATE_SIGNALED :
				       below(t, 8) ? 0 : (uint32_t)rnd(t),
	};
	int ret = vnpu_ioctl(t->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	if (!ret) {
		uint32_t *slot = &t->syncobjs[below(t, POOL)];
		struct drm_syncobj_destroy d = { .handle = *slot };

		if (*slot)
			vnpu_ioctl(t->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
		*slot = c.handle;
	}
	return ret;
}

static int op_syncobj_destroy(struct fuzz_thread *t)
{
	struct drm_syncobj_destroy d = { .handle = pick_handle(t, t->syncobjs) };

	return vnpu_ioctl(t->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

/* Export a BO, import it into the other file, close both ends. */
static int op_prime(struct fuzz_thread *t)
{
	struct drm_prime_handle e = {
		.handle = pick_handle(t, t->bos),
		.flags = below(t, 8) ? DRM_CLOEXEC | DRM_RDWR : (uint32_t)rnd(t),
	};
	struct drm_prime_handle i = { 0 };
	int ret = vnpu_ioctl(t->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &e);

	if (ret)
		return ret;
	i.fd = e.fd;
	ret = vnpu_ioctl(t->other_fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &i);
	close(e.fd);
	if (!ret)
		gem_close(t->other_fd, i.handle);
	return ret;
}

static int op_get_param(struct fuzz_thread *t)
{
	struct drm_vnpu_get_param p = {
		.param = (uint32_t)below(t, 16),
		.pad = below(t, 16) ? 0 : (uint32_t)rnd(t),
	};

	return vnpu_ioctl(t->fd, DRM_IOCTL_VNPU_GET_PARAM, &p);
}

/* The errnos the uAPI uses; anything else is a failure. */
static bool errno_expected(int ret)
{
	switch (-ret) {
	case EINVAL: case ENOENT: case EFAULT: case ENOMEM: case EBUSY:
	case ETIMEDOUT: case ENOSPC: case E2BIG: case EBADF: case EOPNOTSUPP:
		return true;
	default:
		return false;
	}
}

/* How often each operation comes: jobs and BOs most, closes least. */
static const unsigned char op_weights[NUM_OPS] = {
	[OP_BO_CREATE] = 4, [OP_BO_INFO] = 1, [OP_UPLOAD] = 2, [OP_DOWNLOAD] = 2,
	[OP_GEM_CLOSE] = 1, [OP_MMAP] = 1, [OP_SUBMIT] = 8, [OP_WAIT] = 4,
	[OP_CANCEL] = 2, [OP_SYNCOBJ_CREATE] = 2, [OP_SYNCOBJ_DESTROY] = 1,
	[OP_PRIME] = 1, [OP_GET_PARAM] = 1,
};

static enum fuzz_op pick_op(struct fuzz_thread *t)
{
	unsigned int total = 0, r;
	int op;

	for (op = 0; op < NUM_OPS; op++)
		total += op_weights[op];
	r = (unsigned int)below(t, total);
	for (op = 0; r >= op_weights[op]; op++)
		r -= op_weights[op];
	return (enum fuzz_op)op;
}

static void *fuzz_thread_main(void *arg)
{
	struct fuzz_thread *t = arg;

	for (uint64_t n = 0; n < t->sh->ops && !t->failure[0]; n++) {
		enum fuzz_op op = pick_op(t);
		int ret;

		switch (op) {
		case OP_BO_CREATE: ret = op_bo_create(t); break;
		case OP_BO_INFO: ret = op_bo_info(t); break;
		case OP_UPLOAD: ret = op_xfer(t, true); break;
		case OP_DOWNLOAD: ret = op_xfer(t, false); break;
		case OP_GEM_CLOSE: ret = op_gem_close(t); break;
		case OP_MMAP: ret = op_mmap(t); break;
		case OP_SUBMIT: ret = op_submit(t); break;
		case OP_WAIT: ret = op_wait(t); break;
		case OP_CANCEL: ret = op_cancel(t); break;
		case OP_SYNCOBJ_CREATE: ret = op_syncobj_create(t); break;
		case OP_SYNCOBJ_DESTROY: ret = op_syncobj_destroy(t); break;
		case OP_PRIME: ret = op_prime(t); break;
		default: ret = op_get_param(t); break;
		}
		t->calls[op]++;
		if (ret)
			t->errors[op]++;
		if (ret && !errno_expected(ret))
			snprintf(t->failure, sizeof(t->failure),
				 "seed %llu, thread %d, operation %llu: %s failed with %s",
				 (unsigned long long)t->sh->seed, t->index,
				 (unsigned long long)n, op_names[op], strerror(-ret));
	}
	return NULL;
}

/* Operations each thread makes. */
static uint64_t fuzz_ops(void)
{
	return env_u64("VNPU_FUZZ_OPS", 4000);
}

FIXTURE(fuzz) {
	struct fuzz_shared sh;
};

FIXTURE_SETUP(fuzz)
{
	VNPU_OPEN_OR_SKIP(self->sh.fd[0]);
	self->sh.fd[1] = vnpu_open(0);
	ASSERT_LE(0, self->sh.fd[1]);
	self->sh.seed = env_u64("VNPU_FUZZ_SEED", 20261130);
	self->sh.ops = fuzz_ops();
}

FIXTURE_TEARDOWN(fuzz)
{
	close(self->sh.fd[0]);
	close(self->sh.fd[1]);
}

/*
 * Three threads of random calls, then the device must still work. The
 * timeout given here is the base; fuzz_timeout_from_ops() adds the time
 * the calls may take.
 */
TEST_F_TIMEOUT(fuzz, random_ioctls, 600)
{
	struct fuzz_thread th[3];
	pthread_t tid[3];
	uint32_t out[256], i;
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	static struct stream s;
	uint64_t calls = 0, errors = 0;
	int fd;

	for (i = 0; i < 3; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].sh = &self->sh;
		th[i].index = (int)i;
		th[i].fd = self->sh.fd[i == 2];
		th[i].other_fd = self->sh.fd[i != 2];
		th[i].rng = (self->sh.seed + i) * 0x9e3779b97f4a7c15ull + 1;
		th[i].buf = calloc(1, BUF_SIZE);
		ASSERT_NE(NULL, th[i].buf);
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, fuzz_thread_main, &th[i]));
	for (i = 0; i < 3; i++)
		pthread_join(tid[i], NULL);

	for (i = 0; i < 3; i++) {
		for (int op = 0; op < NUM_OPS; op++) {
			calls += th[i].calls[op];
			errors += th[i].errors[op];
		}
		free(th[i].buf);
		EXPECT_EQ(0, th[i].failure[0]) {
			TH_LOG("%s", th[i].failure);
		}
	}
	for (int op = 0; op < NUM_OPS; op++)
		TH_LOG("%-16s %5llu calls, %5llu failed", op_names[op],
		       (unsigned long long)(th[0].calls[op] + th[1].calls[op] + th[2].calls[op]),
		       (unsigned long long)(th[0].errors[op] + th[1].errors[op] + th[2].errors[op]));
	TH_LOG("seed %llu: %llu calls, %llu failed as they should",
	       (unsigned long long)self->sh.seed, (unsigned long long)calls,
	       (unsigned long long)errors);

	/* Whatever the threads left queued, a new file's job runs right. */
	fd = vnpu_open(0);
	ASSERT_LE(0, fd);
	slot.handle = bo_create(_metadata, fd, 4096);
	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 256), 0x5eed);
	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, fd, run_stream(_metadata, fd, &s, &slot, 1)));
	bo_download(_metadata, fd, slot.handle, 0, out, sizeof(out));
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0x5eed, out[i]);
	close(fd);
}

/*
 * The harness's alarm for random_ioctls grows with VNPU_FUZZ_OPS: 100 ms
 * per operation of a thread on top of the base. Four processes on
 * Debian's kernel made 83334 each (1e6 calls) in 340 s, 4 ms apiece; the
 * debug kernel (KASAN, lockdep, kmemleak) is many times slower.
 */
static void __attribute__((constructor)) fuzz_timeout_from_ops(void)
{
	uint64_t t = _fuzz_random_ioctls_object.timeout + fuzz_ops() / 10;

	_fuzz_random_ioctls_object.timeout = t > INT32_MAX ? INT32_MAX : (int)t;
}

TEST_HARNESS_MAIN
