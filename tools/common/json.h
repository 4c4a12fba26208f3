/* SPDX-License-Identifier: MIT */
/* Tools: writing JSON. */
#ifndef VNPU_TOOLS_JSON_H
#define VNPU_TOOLS_JSON_H

#include <stdio.h>

/* Write @s to @f as a JSON string literal, quotes included. */
void json_string(FILE *f, const char *s);

#endif /* VNPU_TOOLS_JSON_H */
