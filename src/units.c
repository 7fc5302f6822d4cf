// SPDX-License-Identifier: GPL-2.0
/* placeholder until the units work lands */
#include <stdio.h>
#include "units.h"
char *sprint_rate(__u64 v, char *b, size_t l) { snprintf(b, l, "%llu", (unsigned long long)v); return b; }
char *sprint_size(__u64 v, char *b, size_t l) { snprintf(b, l, "%llu", (unsigned long long)v); return b; }
char *sprint_time(__u64 v, char *b, size_t l) { snprintf(b, l, "%llu", (unsigned long long)v); return b; }
