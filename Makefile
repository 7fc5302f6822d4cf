# SPDX-License-Identifier: GPL-2.0
# htbctl: BPF objects -> skeletons -> the htbctl binary, its tests and tools.
# `make V=1` prints the commands.

OUTPUT  ?= build
PREFIX  ?= /usr/local
# systemd reads units from $(PREFIX)/lib/systemd/system for /usr and /usr/local
UNITDIR ?= $(PREFIX)/lib/systemd/system
DESTDIR ?=
CLANG   ?= clang
BPFTOOL ?= bpftool
CC      ?= cc
ARCH    := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.DEFAULT_GOAL := all

PKGS     := libbpf libmnl libmicrohttpd
# CFLAGS is the user's (optimisation, debug info, sanitizers: `make
# CFLAGS=-O0` works); what the build needs is HTB_CFLAGS, always given.
CFLAGS   ?= -O2 -g
HTB_CFLAGS := -Wall -Wextra -Wno-unused-parameter -std=gnu11 -MMD -MP \
	    -Iinclude -Isrc -I$(OUTPUT) $(shell pkg-config --cflags $(PKGS))
LDLIBS   += $(shell pkg-config --libs $(PKGS)) -lelf -lz -lpthread -lm
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -D__BPF__ \
	      -Wall -Iinclude -Ivmlinux -I$(OUTPUT) -MMD -MP

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))

# src/CONCERN/*.c: one folder per concern (docs/HACKING.md has the map)
SRCS      := $(filter-out src/loader/test_hooks.c,$(wildcard src/*/*.c))
OBJS      := $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(SRCS))
MAIN_OBJ  := $(OUTPUT)/src/cli/main.o
LIB_OBJS  := $(filter-out $(MAIN_OBJ),$(OBJS))
# build/htbctl-test: htbctl with its test hooks (HTBCTL_TEST_FAIL,
# HTBCTL_TEST_QDISC: src/loader/loader.h; HTBCTL_TEST_TOOL_ENV:
# src/import/script.c), for tests/net's rollback, crash and tc-probe
# cases; build/htbctl, the one installed, has none. The hooked objects
# are load.c, dirs.c and script.c built again with -DHTBCTL_TEST_HOOKS,
# and test_hooks.c.
HOOK_OBJS := $(OUTPUT)/hooks/loader/load.o $(OUTPUT)/hooks/loader/dirs.o \
	     $(OUTPUT)/hooks/loader/test_hooks.o $(OUTPUT)/hooks/import/script.o
HOOKED    := $(OUTPUT)/src/loader/load.o $(OUTPUT)/src/loader/dirs.o \
	     $(OUTPUT)/src/import/script.o
LIB       := $(OUTPUT)/libhtbctl.a

# Criterion suites: tests/unit needs no privileges, tests/bpf needs root.
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
BPFT_SRCS := $(wildcard tests/bpf/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,$(UNIT_SRCS))
BPFT_BINS := $(patsubst tests/bpf/%.c,$(OUTPUT)/tests/bpf/%,$(BPFT_SRCS))
# Asks the attached program which class a packet goes to (tests/net).
CLSPROBE  := $(OUTPUT)/tests/bpf/clsprobe
# json-c only for tests/unit (JSON output parsed back): htbctl has its own
# reader (src/import/json.c) and links neither json-c nor inih
TEST_LIBS := $(shell pkg-config --libs criterion json-c)

# Traffic tools the shaping scenarios run (tests/tools).
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(OUTPUT)/tests/tools/%,$(TOOL_SRCS))

BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(OUTPUT)/bench/%,$(BENCH_SRCS))

FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
FUZZ_SECONDS ?= 60

all: $(OUTPUT)/htbctl $(BPF_OBJS) $(OUTPUT)/htbctl.8

$(OUTPUT) $(OUTPUT)/tests/unit $(OUTPUT)/tests/bpf $(OUTPUT)/tests/tools \
$(OUTPUT)/bench $(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# The skeletons exist before any object is compiled (order-only: a changed
# BPF program does not rebuild every object); the compiler's .d files then
# name the objects that include one, which rebuild when it changes.
$(OUTPUT)/src/%.o: src/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(HTB_CFLAGS) $(CFLAGS) -c $< -o $@

$(OUTPUT)/hooks/%.o: src/%.c | $(SKELS)
	$(call msg,CC-HOOK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(HTB_CFLAGS) -DHTBCTL_TEST_HOOKS $(CFLAGS) -c $< -o $@

$(OUTPUT)/htbctl-test: $(MAIN_OBJ) $(HOOK_OBJS) $(filter-out $(HOOKED),$(LIB_OBJS))
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUTPUT)/htbctl: $(MAIN_OBJ) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# The man page is generated from the command table, so it says what
# `htbctl help` says.
$(OUTPUT)/htbctl.8: $(OUTPUT)/htbctl
	$(call msg,MAN,$@)
	$(Q)$< help --man > $@

$(OUTPUT)/htbctl.bash: $(OUTPUT)/htbctl
	$(call msg,BASH,$@)
	$(Q)$< help --bash > $@

$(OUTPUT)/tests/unit/%: tests/unit/%.c $(LIB) | $(SKELS) $(OUTPUT)/tests/unit
	$(call msg,CC-TEST,$@)
	$(Q)$(CC) $(HTB_CFLAGS) $(CFLAGS) -Itests $< $(LIB) $(TEST_LIBS) $(LDLIBS) -o $@

$(OUTPUT)/tests/bpf/test_%: tests/bpf/test_%.c $(LIB) | $(SKELS) $(OUTPUT)/tests/bpf
	$(call msg,CC-TEST,$@)
	$(Q)$(CC) $(HTB_CFLAGS) $(CFLAGS) -Itests $< $(LIB) $(TEST_LIBS) $(LDLIBS) -o $@

$(CLSPROBE): tests/bpf/clsprobe.c $(LIB) | $(SKELS) $(OUTPUT)/tests/bpf
	$(call msg,CC,$@)
	$(Q)$(CC) $(HTB_CFLAGS) $(CFLAGS) -Itests $< $(LIB) $(LDLIBS) -o $@

$(OUTPUT)/tests/tools/%: tests/tools/%.c | $(OUTPUT)/tests/tools
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -Wall -Wextra -std=gnu11 -MMD -MP $< -o $@

$(OUTPUT)/bench/%: bench/%.c $(LIB) | $(SKELS) $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(HTB_CFLAGS) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

# Fuzzers: libFuzzer with ASan and UBSan over the parsers only.
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	       -Iinclude -Isrc $(shell pkg-config --cflags $(PKGS))
$(OUTPUT)/fuzz/%: tests/fuzz/%.c $(filter-out src/cli/main.c,$(SRCS)) | $(SKELS) $(OUTPUT)/fuzz
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -I$(OUTPUT) $< $(filter-out src/cli/main.c,$(SRCS)) \
		$(LDLIBS) -o $@

tests: $(UNIT_BINS) $(BPFT_BINS) $(CLSPROBE) $(TOOL_BINS) $(BENCH_BINS) $(OUTPUT)/htbctl $(OUTPUT)/htbctl-test \
	$(BPF_OBJS)

# All tiers, with a summary per tier (tests/run.sh).
test: tests
	$(Q)tests/run.sh

test-unit: $(UNIT_BINS)
	$(Q)tests/run.sh unit

# The bench loads the programs from its skeletons: bench_prog is all it needs.
# Options for bench_prog: make bench BENCH_ARGS="--trials 3".
bench: $(BENCH_BINS)
	$(Q)OUTPUT=$(OUTPUT) scripts/bench.sh $(BENCH_ARGS)

# The sharing loop's tick beside a baseline build's, in one run:
# make bench-share BENCH_BASE=/tmp/base/build [BENCH_ROUNDS=3]
bench-share: $(BENCH_BINS)
	$(Q)OUTPUT=$(OUTPUT) scripts/bench_share.sh $(BENCH_BASE) $(BENCH_ROUNDS)

fuzz: $(FUZZ_BINS)
	$(Q)for f in $(FUZZ_BINS); do \
		n=$$(basename $$f); mkdir -p $(OUTPUT)/fuzz/$$n.corpus; \
		echo "fuzz: $$n for $(FUZZ_SECONDS)s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			$$([ -f tests/fuzz/$$n.dict ] && echo -dict=tests/fuzz/$$n.dict) \
			$(OUTPUT)/fuzz/$$n.corpus tests/fuzz/corpus/$$n || exit 1; \
	done

# The BPF program is not installed: the binary embeds it (the skeleton).
install: $(OUTPUT)/htbctl $(OUTPUT)/htbctl.8 $(OUTPUT)/htbctl.bash
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 0755 $(OUTPUT)/htbctl $(DESTDIR)$(PREFIX)/sbin/htbctl
	$(Q)install -D -m 0644 $(OUTPUT)/htbctl.8 $(DESTDIR)$(PREFIX)/share/man/man8/htbctl.8
	$(Q)sed 's|/usr/sbin/htbctl|$(PREFIX)/sbin/htbctl|g' systemd/htbctl@.service > $(OUTPUT)/htbctl@.service
	$(Q)install -D -m 0644 $(OUTPUT)/htbctl@.service $(DESTDIR)$(UNITDIR)/htbctl@.service
	$(Q)sed 's|/usr/sbin/htbctl|$(PREFIX)/sbin/htbctl|g' systemd/htbctl-libreqos.conf > $(OUTPUT)/htbctl-libreqos.conf
	$(Q)install -D -m 0644 $(OUTPUT)/htbctl-libreqos.conf $(DESTDIR)$(PREFIX)/share/htbctl/htbctl-libreqos.conf
	$(Q)install -d -m 0755 $(DESTDIR)/etc/htbctl
	$(Q)install -D -m 0644 $(OUTPUT)/htbctl.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/htbctl

vmlinux:
	$(Q)scripts/gen-vmlinux.sh

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

.PHONY: all tests test test-unit bench bench-share fuzz install vmlinux clean

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/src/*/*.d $(OUTPUT)/hooks/*/*.d $(OUTPUT)/tests/*/*.d \
	$(OUTPUT)/bench/*.d)
