// SPDX-License-Identifier: MIT
/*
 * Exported blobs: a versioned header (blob.h), the compile properties as
 * text and the serialized program. Everything after the magic is covered
 * by one checksum, so a flipped bit anywhere is found before the program
 * is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blob.h"
#include "dynamic.h"
#include "runtime.h"

#define BLOB_MAX_PROPS 4096

uint64_t vnpu_fnv1a(uint64_t hash, const void *data, size_t size)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < size; i++) {
		hash ^= p[i];
		hash *= UINT64_C(0x100000001b3);
	}
	return hash;
}

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)

uint64_t vnpu_sealed_checksum(const void *blob, size_t size, size_t header_size,
			      size_t checksum_at)
{
	static const uint64_t zero;
	const char *p = blob;
	uint64_t h = vnpu_fnv1a(FNV_OFFSET, p, checksum_at);

	h = vnpu_fnv1a(h, &zero, sizeof(zero));
	h = vnpu_fnv1a(h, p + checksum_at + sizeof(zero), header_size - checksum_at - sizeof(zero));
	return vnpu_fnv1a(h, p + header_size, size - header_size);
}

static uint64_t blob_checksum(const void *blob, size_t size)
{
	return vnpu_sealed_checksum(blob, size, sizeof(struct vnpu_blob_header),
				    offsetof(struct vnpu_blob_header, checksum));
}

void vnpu_blob_seal(void *blob, size_t size)
{
	uint64_t sum = blob_checksum(blob, size);

	memcpy((char *)blob + offsetof(struct vnpu_blob_header, checksum), &sum, sizeof(sum));
}

/*
 * The one place that knows the NPU's old architecture names. The NPU's
 * architecture is "vnpu-npu-<command set>" (VNPU_CMD_SET_VERSION) since
 * format 3. Before, it was "vnpu-npu-<uAPI version>": "vnpu-npu-1" under
 * uAPI 1, which ran command set 1 and so keeps its name, and "vnpu-npu-2"
 * under uAPI 2, which ran command set 1 as well. Only format 2 says it
 * this way: a format 3 blob's "vnpu-npu-2" is command set 2.
 */
const char *vnpu_blob_architecture(const struct vnpu_blob_header *h)
{
	if (h->format == 2 && !strcmp(h->architecture, "vnpu-npu-2"))
		return "vnpu-npu-1";
	return h->architecture;
}

/*
 * @cm's program with its weights: a compiled model keeps them only on its
 * device (load_segments()), so they are read back from there.
 */
static vnpu_status program_with_weights(const struct vnpu_compiled_model *cm,
					struct vnpu_program *with)
{
	const struct vnpu_program *p = cm->program;
	vnpu_status st;

	*with = *p;
	if (p->weights || !p->weights_size)
		return VNPU_OK;
	with->weights = malloc(p->weights_size);
	if (!with->weights)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory for %llu bytes of weights",
				  (unsigned long long)p->weights_size);
	st = cm->primary->plugin->ops->buf_read(cm->weights, 0, with->weights, p->weights_size);
	return st ? vnpu_error_prefix(st, "reading the weights back from %s",
				      cm->primary->info.name) : VNPU_OK;
}

vnpu_status vnpu_blob_write(const struct vnpu_compiled_model *cm, void **out,
			    size_t *out_size)
{
	struct vnpu_blob_header h = { .format = VNPU_BLOB_FORMAT, .header_size = sizeof(h) };
	struct vnpu_program with;
	void *program = NULL;
	uint64_t program_size;
	char *props = NULL;
	vnpu_status st;
	char *blob;
	size_t size;

	st = program_with_weights(cm, &with);
	if (st == VNPU_OK)
		st = vnpu_program_serialize(&with, &program, &program_size);
	if (with.weights != cm->program->weights)
		free(with.weights);
	if (st != VNPU_OK)
		return vnpu_error_prefix(st, "exporting");
	st = vnpu_config_text(&cm->config, &props);
	if (st != VNPU_OK) {
		free(program);
		return st;
	}
	memcpy(h.magic, VNPU_BLOB_MAGIC, sizeof(h.magic));
	snprintf(h.library_version, sizeof(h.library_version), "%s", vnpu_get_version());
	snprintf(h.device, sizeof(h.device), "%s", cm->device);
	snprintf(h.architecture, sizeof(h.architecture), "%s", cm->primary->info.architecture);
	h.uapi_version = cm->primary->info.uapi_version;
	h.has_fallback = cm->fallback != NULL;
	h.props_size = strlen(props);
	h.program_size = program_size;
	size = sizeof(h) + h.props_size + program_size;
	blob = malloc(size);
	if (!blob) {
		free(props);
		free(program);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory for a %zu-byte blob", size);
	}
	memcpy(blob, &h, sizeof(h));
	memcpy(blob + sizeof(h), props, h.props_size);
	memcpy(blob + sizeof(h) + h.props_size, program, program_size);
	vnpu_blob_seal(blob, size);
	free(props);
	free(program);
	*out = blob;
	*out_size = size;
	return VNPU_OK;
}

/* The header, checked for everything but the devices. */
static vnpu_status check_header(const void *data, size_t size, struct vnpu_blob_header *h)
{
	if (size < sizeof(h->magic) || memcmp(data, VNPU_BLOB_MAGIC, sizeof(h->magic)))
		return vnpu_error(VNPU_PARSE_ERROR, "not a vnpu blob (bad magic)");
	if (size < sizeof(*h))
		return vnpu_error(VNPU_PARSE_ERROR, "the blob is truncated (%zu bytes, header %zu)",
				  size, sizeof(*h));
	memcpy(h, data, sizeof(*h));
	if (h->format < VNPU_BLOB_FORMAT_OLDEST || h->format > VNPU_BLOB_FORMAT ||
	    h->header_size != sizeof(*h))
		return vnpu_error(VNPU_WRONG_VERSION, "blob format %u, this library reads %u to %u",
				  h->format, VNPU_BLOB_FORMAT_OLDEST, VNPU_BLOB_FORMAT);
	if (memchr(h->library_version, 0, sizeof(h->library_version)) == NULL ||
	    memchr(h->device, 0, sizeof(h->device)) == NULL ||
	    memchr(h->architecture, 0, sizeof(h->architecture)) == NULL)
		return vnpu_error(VNPU_PARSE_ERROR, "the blob header is corrupted");
	if (strcmp(h->library_version, vnpu_get_version()))
		return vnpu_error(VNPU_WRONG_VERSION, "the blob is from libvnpu %s, this is %s",
				  h->library_version, vnpu_get_version());
	if (h->props_size > BLOB_MAX_PROPS || h->program_size > size ||
	    sizeof(*h) + h->props_size + h->program_size != size)
		return vnpu_error(VNPU_PARSE_ERROR,
				  "the blob is truncated or has extra bytes (%zu bytes)", size);
	if (blob_checksum(data, size) != h->checksum)
		return vnpu_error(VNPU_PARSE_ERROR, "the blob is corrupted (checksum mismatch)");
	return VNPU_OK;
}

vnpu_status vnpu_blob_read_props(const char *text, size_t size, struct vnpu_config *cfg)
{
	const struct vnpu_prop_def *def;
	char buf[BLOB_MAX_PROPS + 1], *line, *save, *eq;
	vnpu_status st;

	if (size > BLOB_MAX_PROPS)
		return vnpu_error(VNPU_PARSE_ERROR, "the blob's properties are too long");
	memcpy(buf, text, size);
	buf[size] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		eq = strchr(line, '=');
		if (!eq)
			return vnpu_error(VNPU_PARSE_ERROR, "the blob's properties are malformed");
		*eq = '\0';
		def = vnpu_prop_find(line, VNPU_SCOPE_COMPILED);
		if (!def)
			return vnpu_error(VNPU_PARSE_ERROR, "the blob has an unknown property %s",
					  line);
		st = vnpu_config_set_text(cfg, def, eq + 1);
		if (st != VNPU_OK)
			return vnpu_error_prefix(VNPU_PARSE_ERROR, "the blob's properties");
	}
	return VNPU_OK;
}

/*
 * VNPU_OK when @d runs the commands of the blob @h. The architecture alone
 * says; the uAPI version of @d's driver does not (the plugin speaks the
 * uAPI of whichever driver it finds).
 */
static vnpu_status check_architecture(const struct vnpu_core_device *d,
				      const struct vnpu_blob_header *h)
{
	const char *architecture = vnpu_blob_architecture(h);
	char renamed[80] = "";

	if (!strcmp(d->info.architecture, architecture))
		return VNPU_OK;
	if (architecture != h->architecture)
		snprintf(renamed, sizeof(renamed), " (now named %s)", architecture);
	return vnpu_error(VNPU_WRONG_VERSION,
			  "the blob was compiled for architecture %s%s, %s is %s",
			  h->architecture, renamed, d->info.name, d->info.architecture);
}

/* The device to run a blob on: @device, or the one it was compiled for. */
static vnpu_status blob_devices(struct vnpu_core *core, const struct vnpu_blob_header *h,
				const char *device, struct vnpu_core_device **primary,
				struct vnpu_core_device **fallback)
{
	char name[80];
	struct vnpu_core_device *d;
	const char *p;
	vnpu_status st;

	if (!device) {
		/* "HETERO:NPU.0,CPU" and "AUTO:NPU.0" name the primary first. */
		p = strchr(h->device, ':');
		snprintf(name, sizeof(name), "%s", p ? p + 1 : h->device);
		name[strcspn(name, ",")] = '\0';
		device = name;
	}
	d = vnpu_core_find_device(core, device);
	if (!d)
		return VNPU_NOT_FOUND;
	st = check_architecture(d, h);
	if (st)
		return st;
	*primary = d;
	*fallback = NULL;
	if (h->has_fallback) {
		if (!core->cpu)
			return vnpu_error(VNPU_NOT_FOUND, "the blob needs the CPU device");
		*fallback = core->cpu;
	}
	return VNPU_OK;
}

vnpu_status vnpu_blob_read(struct vnpu_core *core, const void *data, size_t size,
			   const char *device, struct vnpu_compiled_model **out)
{
	struct vnpu_core_device *primary = NULL, *fallback = NULL;
	struct vnpu_config cfg = { .precision = VNPU_TYPE_F32 };
	struct vnpu_program *program;
	struct vnpu_blob_header h;
	const char *body = (const char *)data + sizeof(h);
	vnpu_status st;

	st = check_header(data, size, &h);
	if (st == VNPU_OK)
		st = blob_devices(core, &h, device, &primary, &fallback);
	if (st == VNPU_OK)
		st = vnpu_blob_read_props(body, h.props_size, &cfg);
	if (st != VNPU_OK)
		return st;
	st = vnpu_program_deserialize(body + h.props_size, h.program_size, &program);
	if (st != VNPU_OK)
		return vnpu_error_prefix(st, "reading the blob's program");
	return vnpu_compiled_model_new(core, primary, fallback,
				       device ? device : h.device, &cfg, program, out);
}

/* ---- files ---- */

vnpu_status vnpu_read_file(const char *path, void **out, size_t *out_size)
{
	struct stat sb;
	void *data;
	ssize_t n;
	size_t done = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vnpu_error(errno == ENOENT ? VNPU_NOT_FOUND : VNPU_INVALID_ARGUMENT,
				  "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s is not a regular file", path);
	}
	data = malloc(sb.st_size ? (size_t)sb.st_size : 1);
	if (!data) {
		close(fd);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "no memory to read %s", path);
	}
	while (done < (size_t)sb.st_size) {
		n = read(fd, (char *)data + done, (size_t)sb.st_size - done);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			free(data);
			close(fd);
			return vnpu_error(VNPU_GENERAL_ERROR, "cannot read %s", path);
		}
		done += (size_t)n;
	}
	close(fd);
	*out = data;
	*out_size = done;
	return VNPU_OK;
}

/*
 * Write to a unique temporary file and rename it: readers (and other
 * threads or processes writing the same cache entry) see all or nothing.
 */
vnpu_status vnpu_write_file_atomic(const char *path, const void *data, size_t size)
{
	char tmp[4096];
	size_t done = 0;
	ssize_t n;
	int fd;
	bool ok;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "the path %s is too long", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "cannot create %s: %s", tmp,
				  strerror(errno));
	while (done < size) {
		n = write(fd, (const char *)data + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	ok = !fchmod(fd, 0644) && done == size;
	ok = !close(fd) && ok;
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return vnpu_error(VNPU_GENERAL_ERROR, "cannot write %s: %s", path,
				  strerror(errno));
	}
	return VNPU_OK;
}

/* ---- the API ---- */

/* A blob of @cm's program, or of the programs of its dynamic inputs' shapes. */
static vnpu_status blob_write(const vnpu_compiled_model *cm, void **out, size_t *out_size)
{
	if (cm->host)
		return vnpu_error(VNPU_UNSUPPORTED, "a model of string tensors runs on the host "
				  "and has no program to export");
	if (cm->dyn)
		return vnpu_dyn_blob_write(cm, out, out_size);
	return vnpu_blob_write(cm, out, out_size);
}

static vnpu_status blob_read(struct vnpu_core *core, const void *data, size_t size,
			     const char *device, struct vnpu_compiled_model **out)
{
	if (vnpu_dyn_blob_is(data, size))
		return vnpu_dyn_blob_read(core, data, size, device, out);
	return vnpu_blob_read(core, data, size, device, out);
}

VNPU_API vnpu_status vnpu_compiled_model_export(const vnpu_compiled_model *cm,
						void **out, size_t *out_size)
{
	if (!cm || !out || !out_size)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_compiled_model_export: NULL argument");
	return blob_write(cm, out, out_size);
}

VNPU_API vnpu_status vnpu_compiled_model_export_file(const vnpu_compiled_model *cm,
						     const char *path)
{
	vnpu_status st;
	size_t size;
	void *blob;

	if (!cm || !path)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_compiled_model_export_file: NULL argument");
	st = blob_write(cm, &blob, &size);
	if (st != VNPU_OK)
		return st;
	st = vnpu_write_file_atomic(path, blob, size);
	free(blob);
	return st;
}

VNPU_API vnpu_status vnpu_core_import_model(vnpu_core *core, const void *data,
					    size_t size, const char *device,
					    vnpu_compiled_model **out)
{
	if (!core || !data || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_core_import_model: NULL argument");
	return blob_read(core, data, size, device, out);
}

VNPU_API vnpu_status vnpu_core_import_model_file(vnpu_core *core, const char *path,
						 const char *device,
						 vnpu_compiled_model **out)
{
	vnpu_status st;
	size_t size;
	void *data;

	if (!core || !path || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_core_import_model_file: NULL argument");
	st = vnpu_read_file(path, &data, &size);
	if (st != VNPU_OK)
		return st;
	st = blob_read(core, data, size, device, out);
	free(data);
	return st;
}
