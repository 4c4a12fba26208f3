// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>

#include "usage.h"

int usage_error(const char *tool, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see %s --help)\n", tool);
	return 2;
}
