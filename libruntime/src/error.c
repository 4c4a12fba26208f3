// SPDX-License-Identifier: MIT
/* Status text, element types and the thread-local last-error message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static _Thread_local char last_error[1024];

const char *vnpu_status_str(vnpu_status status)
{
	switch (status) {
	case VNPU_OK: return "ok";
	case VNPU_GENERAL_ERROR: return "general error";
	case VNPU_NOT_IMPLEMENTED: return "not implemented";
	case VNPU_INVALID_ARGUMENT: return "invalid argument";
	case VNPU_NOT_FOUND: return "not found";
	case VNPU_OUT_OF_MEMORY: return "out of memory";
	case VNPU_UNSUPPORTED: return "unsupported";
	case VNPU_PARSE_ERROR: return "parse error";
	case VNPU_DEVICE_ERROR: return "device error";
	case VNPU_BUSY: return "busy";
	case VNPU_NOT_READY: return "not ready";
	case VNPU_CANCELLED: return "cancelled";
	case VNPU_TIMEOUT: return "device timeout";
	case VNPU_DEVICE_FAULT: return "device fault";
	case VNPU_WRONG_VERSION: return "wrong version";
	}
	return "unknown status";
}

const char *vnpu_last_error(void)
{
	return last_error;
}

vnpu_status vnpu_error(vnpu_status status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return status;
}

vnpu_status vnpu_error_prefix(vnpu_status status, const char *fmt, ...)
{
	char old[sizeof(last_error)];
	size_t len;
	va_list ap;

	memcpy(old, last_error, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	len = strlen(last_error);
	if (old[0] && len + 2 < sizeof(last_error)) {
		memcpy(last_error + len, ": ", 2);
		len += 2;
		/* The old message, cut to what is left (and always terminated). */
		snprintf(last_error + len, sizeof(last_error) - len, "%s", old);
	}
	return status;
}

size_t vnpu_element_type_size(vnpu_element_type type)
{
	switch (type) {
	case VNPU_TYPE_U8: case VNPU_TYPE_I8: case VNPU_TYPE_BOOL:
		return 1;
	case VNPU_TYPE_U16: case VNPU_TYPE_I16: case VNPU_TYPE_F16: case VNPU_TYPE_BF16:
		return 2;
	case VNPU_TYPE_F32: case VNPU_TYPE_I32: case VNPU_TYPE_U32:
		return 4;
	case VNPU_TYPE_F64: case VNPU_TYPE_I64: case VNPU_TYPE_U64:
		return 8;
	case VNPU_TYPE_UNDEFINED: case VNPU_TYPE_STRING:
		break;
	}
	return 0;
}

const char *vnpu_element_type_str(vnpu_element_type type)
{
	switch (type) {
	case VNPU_TYPE_UNDEFINED: return "undefined";
	case VNPU_TYPE_F32: return "f32";
	case VNPU_TYPE_U8: return "u8";
	case VNPU_TYPE_I8: return "i8";
	case VNPU_TYPE_U16: return "u16";
	case VNPU_TYPE_I16: return "i16";
	case VNPU_TYPE_I32: return "i32";
	case VNPU_TYPE_I64: return "i64";
	case VNPU_TYPE_STRING: return "string";
	case VNPU_TYPE_BOOL: return "bool";
	case VNPU_TYPE_F16: return "f16";
	case VNPU_TYPE_F64: return "f64";
	case VNPU_TYPE_U32: return "u32";
	case VNPU_TYPE_U64: return "u64";
	case VNPU_TYPE_BF16: return "bf16";
	}
	return "unknown";
}
