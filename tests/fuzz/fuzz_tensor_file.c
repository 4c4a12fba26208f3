// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the tools' tensor-file reader (tools/common/
 * tensor_file.c), which vnpu-run and vnpu-onnx-test give any file: the
 * input is read as a TensorProto, a SequenceProto and an OptionalProto,
 * from a memfd (the reader takes paths).
 * Seeds: the input_*.pb and output_*.pb files of libonnx-testdata.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "tensor_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const vnpu_port_kind kinds[] = { VNPU_PORT_SEQUENCE, VNPU_PORT_OPTIONAL };
	struct tensor_value v;
	vnpu_tensor *t = NULL;
	char path[64], err[256];
	char *name = NULL;
	size_t i;
	int fd;

	fd = memfd_create("fuzz-tensor", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err[0] = '\0';
	if (tensor_file_read(path, &t, &name, err, sizeof(err)) == VNPU_OK) {
		vnpu_tensor_free(t);
		free(name);
	} else if (!err[0]) {
		abort();	/* a refusal without a message */
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		err[0] = '\0';
		if (tensor_value_read(path, kinds[i], &v, err, sizeof(err)) == VNPU_OK)
			tensor_value_fini(&v);
		else if (!err[0])
			abort();
	}
	close(fd);
	return 0;
}
