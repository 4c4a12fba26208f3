/* SPDX-License-Identifier: MIT */
/* Tools: a usage error's message. */
#ifndef VNPU_TOOLS_USAGE_H
#define VNPU_TOOLS_USAGE_H

/*
 * Print "@tool: <message> (see @tool --help)", one line, to stderr, and
 * return 2, a usage error's exit status: `return usage_error(...)`.
 */
int usage_error(const char *tool, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* VNPU_TOOLS_USAGE_H */
