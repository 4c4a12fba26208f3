// SPDX-License-Identifier: GPL-2.0
/*
 * vnpu uAPI: GET_PARAM, BO_CREATE, BO_INFO, UPLOAD/DOWNLOAD, mmap, PRIME.
 */
#include <sys/wait.h>

#include "vnpu_test.h"

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	VNPU_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(dev, get_param_values)
{
	uint64_t caps = DRM_VNPU_CAP_PRIME | DRM_VNPU_CAP_SYNCOBJ |
			DRM_VNPU_CAP_PROFILING | DRM_VNPU_CAP_CANCEL |
			DRM_VNPU_CAP_PRIORITY | DRM_VNPU_CAP_SUBMIT_RESULT |
			DRM_VNPU_CAP_USERPTR | DRM_VNPU_CAP_USERPTR_EXPORT;

	ASSERT_EQ(0, get_param(_metadata, self->fd, DRM_VNPU_PARAM_DEVICE_INDEX));
	ASSERT_LE(1, get_param(_metadata, self->fd, DRM_VNPU_PARAM_NUM_TILES));
	ASSERT_EQ(DRM_VNPU_UAPI_VERSION,
		  get_param(_metadata, self->fd, DRM_VNPU_PARAM_UAPI_VERSION));
	ASSERT_EQ(caps, get_param(_metadata, self->fd,
				  DRM_VNPU_PARAM_CAPABILITIES) & caps);
	ASSERT_EQ(NSEC_PER_SEC, get_param(_metadata, self->fd,
					  DRM_VNPU_PARAM_CLOCK_HZ));
	ASSERT_GE(get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_LIMIT),
		  get_param(_metadata, self->fd, DRM_VNPU_PARAM_MAX_BO_SIZE));
	ASSERT_LT(0, get_param(_metadata, self->fd, DRM_VNPU_PARAM_MAX_BO_SIZE));
	ASSERT_EQ(DRM_VNPU_MAX_SLOTS,
		  get_param(_metadata, self->fd, DRM_VNPU_PARAM_MAX_SLOTS));
	ASSERT_EQ(DRM_VNPU_MAX_CMD_SIZE,
		  get_param(_metadata, self->fd, DRM_VNPU_PARAM_MAX_CMD_SIZE));
	get_param(_metadata, self->fd, DRM_VNPU_PARAM_RESET_COUNT);
	get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_USED);
	get_param(_metadata, self->fd, DRM_VNPU_PARAM_ENGINE_FEATURES);
}

/* The command set has its own version, apart from the uAPI's. */
TEST_F(dev, get_param_cmd_set_version)
{
	ASSERT_EQ(VNPU_CMD_SET_VERSION,
		  get_param(_metadata, self->fd, DRM_VNPU_PARAM_CMD_SET_VERSION));
}

TEST_F(dev, get_param_unknown)
{
	uint64_t v;

	/* the first param after the last one the driver knows */
	ASSERT_EQ(-EINVAL, _get_param(self->fd, DRM_VNPU_PARAM_CMD_SET_VERSION + 1, &v));
	ASSERT_EQ(-EINVAL, _get_param(self->fd, 0xffffffffu, &v));
}

TEST_F(dev, get_param_bad_pad)
{
	struct drm_vnpu_get_param a = { .param = 0, .pad = 1 };

	ASSERT_EQ(-EINVAL, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_GET_PARAM, &a));
}

TEST_F(dev, get_param_null)
{
	ASSERT_EQ(-EFAULT, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_GET_PARAM, NULL));
}

TEST_F(dev, unknown_ioctl)
{
	struct drm_vnpu_get_param a = { 0 };

	ASSERT_EQ(-ENOTTY, vnpu_ioctl(self->fd,
				      DRM_IOWR(DRM_COMMAND_BASE + 0x09, a), &a));
	ASSERT_EQ(-ENOTTY, vnpu_ioctl(self->fd,
				      DRM_IOWR(DRM_COMMAND_BASE + 0x5f, a), &a));
}

TEST_F(dev, bo_create_info)
{
	uint32_t h = bo_create(_metadata, self->fd, 5000);
	struct drm_vnpu_bo_info info = bo_info(_metadata, self->fd, h);

	ASSERT_EQ(8192, info.size);
	ASSERT_NE(0, info.mmap_offset);
}

TEST_F(dev, bo_create_zero_size)
{
	bo_create_err(_metadata, self->fd, EINVAL, 0, 0);
}

TEST_F(dev, bo_create_huge)
{
	uint64_t max = get_param(_metadata, self->fd, DRM_VNPU_PARAM_MAX_BO_SIZE);

	bo_create_err(_metadata, self->fd, EINVAL, max + 1, 0);
	bo_create_err(_metadata, self->fd, EINVAL, 1ull << 62, 0);
	bo_create_err(_metadata, self->fd, EINVAL, ~0ull, 0);
}

TEST_F(dev, bo_create_bad_flags)
{
	bo_create_err(_metadata, self->fd, EINVAL, 4096, 1);
	bo_create_err(_metadata, self->fd, EINVAL, 4096, 0x80000000u);
}

TEST_F(dev, bo_create_null)
{
	ASSERT_EQ(-EFAULT, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_BO_CREATE, NULL));
}

TEST_F(dev, bo_info_bad_handle)
{
	bo_info_err(_metadata, self->fd, ENOENT, 0, 0);
	bo_info_err(_metadata, self->fd, ENOENT, 12345, 0);
}

TEST_F(dev, bo_info_foreign_handle)
{
	int fd2 = vnpu_open(0);
	uint32_t h = 0;
	int i;

	ASSERT_LE(0, fd2);
	for (i = 0; i < 4; i++)
		h = bo_create(_metadata, fd2, 4096);
	bo_info_err(_metadata, self->fd, ENOENT, h, 0);
	close(fd2);
}

TEST_F(dev, bo_info_bad_flags)
{
	uint32_t h = bo_create(_metadata, self->fd, 4096);

	bo_info_err(_metadata, self->fd, EINVAL, h, 1);
}

TEST_F(dev, bo_starts_zeroed)
{
	size_t size = 3 * 4096;
	uint32_t h = bo_create(_metadata, self->fd, size);
	unsigned char *buf = malloc(size);
	size_t i;

	ASSERT_NE(NULL, buf);
	memset(buf, 0xa5, size);
	bo_download(_metadata, self->fd, h, 0, buf, size);
	for (i = 0; i < size; i++)
		ASSERT_EQ(0, buf[i]);
	free(buf);
}

TEST_F(dev, xfer_roundtrip_sizes)
{
	static const uint64_t sizes[] = { 1, 7, 4095, 4097, 65537,
					  (3 << 20) + 123 };
	static const uint64_t offsets[] = { 0, 1, 4093 };
	uint64_t bo_size = (4 << 20) + 4096;
	uint32_t h = bo_create(_metadata, self->fd, bo_size);
	unsigned char *in = malloc(4 << 20), *out = malloc(4 << 20);
	unsigned int i, j;

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (j = 0; j < sizeof(offsets) / sizeof(offsets[0]); j++) {
			fill_random(in, sizes[i], i * 31 + j);
			memset(out, 0, sizes[i]);
			bo_upload(_metadata, self->fd, h, offsets[j], in, sizes[i]);
			bo_download(_metadata, self->fd, h, offsets[j], out,
				    sizes[i]);
			ASSERT_EQ(0, memcmp(in, out, sizes[i]));
		}
	}
	free(in);
	free(out);
}

TEST_F(dev, xfer_whole_bo_at_end)
{
	uint32_t h = bo_create(_metadata, self->fd, 4096);
	char b[2] = { 1, 2 }, c[2];

	bo_upload(_metadata, self->fd, h, 4094, b, 2);
	bo_download(_metadata, self->fd, h, 4094, c, 2);
	ASSERT_EQ(0, memcmp(b, c, 2));
}

TEST_F(dev, xfer_out_of_bounds)
{
	uint32_t h = bo_create(_metadata, self->fd, 4096);
	char buf[16];

	bo_xfer_err(_metadata, self->fd, EINVAL, h, 4090, 7, buf, 0);
	bo_xfer_err(_metadata, self->fd, EINVAL, h, 4096, 1, buf, 0);
	bo_xfer_err(_metadata, self->fd, EINVAL, h, 8192, 1, buf, 0);
}

TEST_F(dev, xfer_overflow)
{
	uint32_t h = bo_create(_metadata, self->fd, 4096);
	char buf[16];

	bo_xfer_err(_metadata, self->fd, EINVAL, h, ~0ull - 1, 2, buf, 0);
	bo_xfer_err(_metadata, self->fd, EINVAL, h, 1, ~0ull, buf, 0);
}

TEST_F(dev, xfer_zero_size)
{
	uint32_t h = bo_create(_metadata, self->fd, 4096);
	char buf[16];

	bo_xfer_err(_metadata, self->fd, EINVAL, h, 0, 0, buf, 0);
}

TEST_F(dev, xfer_bad_flags)
{
	uint32_t h = bo_create(_metadata, self->fd, 4096);
	char buf[16];

	bo_xfer_err(_metadata, self->fd, EINVAL, h, 0, 16, buf, 1);
}

TEST_F(dev, xfer_bad_handle)
{
	char buf[16];

	bo_xfer_err(_metadata, self->fd, ENOENT, 0, 0, 16, buf, 0);
	bo_xfer_err(_metadata, self->fd, ENOENT, 999, 0, 16, buf, 0);
}

TEST_F(dev, xfer_null_data)
{
	uint32_t h = bo_create(_metadata, self->fd, 4096);

	bo_xfer_err(_metadata, self->fd, EFAULT, h, 0, 16, NULL, 0);
}

TEST_F(dev, xfer_null_arg)
{
	ASSERT_EQ(-EFAULT, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_BO_UPLOAD, NULL));
	ASSERT_EQ(-EFAULT, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_BO_DOWNLOAD, NULL));
}

TEST_F(dev, xfer_mmap_coherent)
{
	size_t size = 2 * 4096;
	uint32_t h = bo_create(_metadata, self->fd, size);
	unsigned char *map = bo_mmap(_metadata, self->fd, h, size);
	unsigned char in[300], out[300];

	fill_random(in, sizeof(in), 7);
	bo_upload(_metadata, self->fd, h, 4000, in, sizeof(in));
	ASSERT_EQ(0, memcmp(map + 4000, in, sizeof(in)));

	fill_random(map + 100, sizeof(in), 8);
	bo_download(_metadata, self->fd, h, 100, out, sizeof(out));
	ASSERT_EQ(0, memcmp(map + 100, out, sizeof(out)));
	munmap(map, size);
}

TEST_F(dev, mmap_beyond_bo)
{
	uint32_t h = bo_create(_metadata, self->fd, 4096);
	struct drm_vnpu_bo_info info = bo_info(_metadata, self->fd, h);

	ASSERT_EQ(MAP_FAILED, mmap(NULL, 8192, PROT_READ, MAP_SHARED, self->fd,
				   info.mmap_offset));
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
				   info.mmap_offset + 4096));
}

TEST_F(dev, mmap_bad_offset)
{
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
				   1ull << 40));
}

TEST_F(dev, prime_export_reimport)
{
	uint32_t h = bo_create(_metadata, self->fd, 3 * 4096), h_same, h2;
	int fd2 = vnpu_open(0), dmabuf;
	unsigned char in[5000], out[5000];

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, prime_export(self->fd, h, &dmabuf));
	ASSERT_EQ(0, prime_import(self->fd, dmabuf, &h_same));
	ASSERT_EQ(h, h_same);
	ASSERT_EQ(0, prime_import(fd2, dmabuf, &h2));
	ASSERT_EQ(3 * 4096, bo_info(_metadata, fd2, h2).size);

	fill_random(in, sizeof(in), 3);
	bo_upload(_metadata, self->fd, h, 100, in, sizeof(in));
	bo_download(_metadata, fd2, h2, 100, out, sizeof(out));
	ASSERT_EQ(0, memcmp(in, out, sizeof(in)));
	close(dmabuf);
	close(fd2);
}

TEST_F(dev, prime_export_bad_handle)
{
	int dmabuf;

	ASSERT_EQ(-ENOENT, prime_export(self->fd, 4242, &dmabuf));
}

TEST_F(dev, prime_import_not_dmabuf)
{
	uint32_t h;
	int fd = open("/dev/null", O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_NE(0, prime_import(self->fd, fd, &h));
	close(fd);
}

TEST_F(dev, prime_import_vgem)
{
	uint32_t size = 64 * 1024, vh, h;
	unsigned char in[3000], out[3000];
	unsigned char *map;
	int vgem_fd = -1, dmabuf;

	dmabuf = vgem_dmabuf(&vgem_fd, size, &vh);
	if (dmabuf < 0)
		SKIP(return, "vgem is not available");
	ASSERT_EQ(0, prime_import(self->fd, dmabuf, &h));
	ASSERT_EQ(size, bo_info(_metadata, self->fd, h).size);
	map = vgem_mmap(vgem_fd, vh, size);
	ASSERT_NE(MAP_FAILED, map);

	fill_random(map + 777, sizeof(in), 11);
	bo_download(_metadata, self->fd, h, 777, out, sizeof(out));
	ASSERT_EQ(0, memcmp(map + 777, out, sizeof(out)));

	fill_random(in, sizeof(in), 12);
	bo_upload(_metadata, self->fd, h, size - sizeof(in), in, sizeof(in));
	ASSERT_EQ(0, memcmp(map + size - sizeof(in), in, sizeof(in)));

	munmap(map, size);
	close(dmabuf);
	close(vgem_fd);
}

/* An imported BO maps through the vnpu node too (dma_buf_mmap()). */
TEST_F(dev, prime_import_vgem_mmap)
{
	uint32_t size = 16384, vh, h;
	unsigned char *vmap, *map;
	int vgem_fd = -1, dmabuf;

	dmabuf = vgem_dmabuf(&vgem_fd, size, &vh);
	if (dmabuf < 0)
		SKIP(return, "vgem is not available");
	ASSERT_EQ(0, prime_import(self->fd, dmabuf, &h));
	vmap = vgem_mmap(vgem_fd, vh, size);
	ASSERT_NE(MAP_FAILED, vmap);
	map = bo_mmap(_metadata, self->fd, h, size);
	fill_random(vmap, size, 21);
	ASSERT_EQ(0, memcmp(map, vmap, size));
	munmap(map, size);
	munmap(vmap, size);
	close(dmabuf);
	close(vgem_fd);
}

TEST_F(dev, fdinfo_keys)
{
	char path[64], line[256];
	int found = 0;
	FILE *f;

	bo_create(_metadata, self->fd, 1 << 20);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", self->fd);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kib;

		if (!strcmp(line, "drm-driver:\tvnpu\n"))
			found |= 1;
		if (!strncmp(line, "drm-client-id:\t", 15))
			found |= 2;
		if (!strncmp(line, "drm-engine-npu:\t", 16))
			found |= 4;
		if (sscanf(line, "drm-memory-system:\t%llu KiB", &kib) == 1 &&
		    kib >= 1024)
			found |= 8;
	}
	fclose(f);
	ASSERT_EQ(15, found);
}

TEST_F(dev, fdinfo_client_ids_differ)
{
	int fd2 = vnpu_open(0);
	char path[64], line[256];
	unsigned long long id[2] = { 0, 0 };
	int i, fds[2] = { self->fd, fd2 };

	ASSERT_LE(0, fd2);
	for (i = 0; i < 2; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fds[i]);
		f = fopen(path, "r");
		ASSERT_NE(NULL, f);
		while (fgets(line, sizeof(line), f))
			sscanf(line, "drm-client-id:\t%llu", &id[i]);
		fclose(f);
	}
	ASSERT_NE(0, id[0]);
	ASSERT_NE(id[0], id[1]);
	close(fd2);
}

TEST_HARNESS_MAIN
