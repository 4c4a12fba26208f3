// SPDX-License-Identifier: MIT
/*
 * The public headers build alone as C99 with -pedantic-errors (each in
 * its own object of this program); running it checks that the library's
 * version matches the one the build was configured with.
 */
#include <stdio.h>
#include <string.h>

#include <vnpu/vnpu.h>

int main(void)
{
	if (strcmp(vnpu_get_version(), VNPU_TEST_VERSION)) {
		fprintf(stderr, "libvnpu %s, built as %s\n", vnpu_get_version(), VNPU_TEST_VERSION);
		return 1;
	}
	return 0;
}
