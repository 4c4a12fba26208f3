// SPDX-License-Identifier: MIT
/*
 * vnpu-info: the devices libvnpu finds and every property of each, with
 * the global properties first. Public API only.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vnpu/vnpu.h>

#include "json.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vnpu-info [-d DEVICE] [--json]\n"
		"List the devices libvnpu finds and all their properties.\n"
		"  -d, --device DEVICE  only this device (e.g. CPU, NPU.0)\n"
		"  -j, --json           print JSON\n"
		"  -h, --help           this text\n");
}

static void json_value(const vnpu_property_value *v)
{
	uint32_t i;

	switch (v->type) {
	case VNPU_PROPERTY_BOOL:
		printf("%s", v->integer ? "true" : "false");
		break;
	case VNPU_PROPERTY_INT:
		printf("%lld", (long long)v->integer);
		break;
	case VNPU_PROPERTY_RANGE:
		printf("[%u, %u, %u]", v->range[0], v->range[1], v->range[2]);
		break;
	case VNPU_PROPERTY_LIST:
		putchar('[');
		for (i = 0; i < v->count; i++) {
			if (i)
				printf(", ");
			json_string(stdout, v->items[i]);
		}
		putchar(']');
		break;
	case VNPU_PROPERTY_STRING:
		json_string(stdout, v->text);
		break;
	}
}

/* Print every property of @device (NULL: the core's). */
static int print_properties(vnpu_core *core, const char *device, int json)
{
	vnpu_property_value *keys, *v;
	uint32_t i;

	if (vnpu_core_get_property(core, device, VNPU_PROP_SUPPORTED_PROPERTIES, &keys)) {
		fprintf(stderr, "vnpu-info: %s\n", vnpu_last_error());
		return 1;
	}
	for (i = 0; i < keys->count; i++) {
		if (vnpu_core_get_property(core, device, keys->items[i], &v)) {
			fprintf(stderr, "vnpu-info: %s: %s\n", keys->items[i], vnpu_last_error());
			vnpu_property_value_free(keys);
			return 1;
		}
		if (json) {
			printf("%s    ", i ? ",\n" : "");
			json_string(stdout, keys->items[i]);
			printf(": ");
			json_value(v);
		} else {
			printf("    %-32s %s  %s\n", keys->items[i],
			       keys->writable && keys->writable[i] ? "RW" : "RO", v->text);
		}
		vnpu_property_value_free(v);
	}
	vnpu_property_value_free(keys);
	return 0;
}

/*
 * When no NPU is present, why (the library's message for NPU.0: module
 * not loaded, no permission on its render node, another uAPI); NULL when
 * one is.
 */
static const char *npu_absent(vnpu_core *core, char *buf, size_t size)
{
	vnpu_property_value *v;

	if (vnpu_core_get_property(core, "NPU.0", VNPU_PROP_DEVICE_ID, &v) == VNPU_OK) {
		vnpu_property_value_free(v);
		return NULL;
	}
	snprintf(buf, size, "%s", vnpu_last_error());
	return buf;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *only = NULL, *absent;
	int json = 0, ret = 0, c;
	char why[1024];
	uint32_t n, i, shown = 0;
	char **devices;
	vnpu_core *core;

	while ((c = getopt_long(argc, argv, "d:jh", options, NULL)) != -1) {
		switch (c) {
		case 'd': only = optarg; break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (vnpu_core_create(&core) || vnpu_core_get_available_devices(core, &devices, &n)) {
		fprintf(stderr, "vnpu-info: %s\n", vnpu_last_error());
		return 1;
	}
	if (json)
		printf("{\n  \"version\": \"%s\",\n  \"global\": {\n", vnpu_get_version());
	else
		printf("libvnpu %s\nGlobal properties:\n", vnpu_get_version());
	ret |= print_properties(core, NULL, json);
	printf(json ? "\n  },\n  \"devices\": {" : "");
	for (i = 0; i < n && !ret; i++) {
		if (only && strcmp(only, devices[i]) && !(strcmp(only, "NPU") == 0 &&
							  strcmp(devices[i], "NPU.0") == 0))
			continue;
		if (json)
			printf("%s\n  \"%s\": {\n", shown ? "," : "", devices[i]);
		else
			printf("%s:\n", devices[i]);
		ret |= print_properties(core, devices[i], json);
		printf(json ? "\n  }" : "");
		shown++;
	}
	absent = only ? NULL : npu_absent(core, why, sizeof(why));
	if (json) {
		printf("\n  }");
		if (absent) {
			printf(",\n  \"npu_absent\": ");
			json_string(stdout, absent);
		}
		printf("\n}\n");
	} else if (absent) {
		printf("NPU: none: %s\n", absent);
	}
	if (only && !shown && !ret) {
		/* The library's message says why the device is absent. */
		vnpu_property_value *v;

		if (vnpu_core_get_property(core, only, VNPU_PROP_DEVICE_ID, &v) == VNPU_OK)
			vnpu_property_value_free(v);
		fprintf(stderr, "vnpu-info: %s\n", vnpu_last_error());
		ret = 1;
	}
	vnpu_free(devices);
	vnpu_core_free(core);
	return ret;
}
