# ktrace - top-level build.
#
#   make                 libktrace (.so and .a), the ktrace command, examples
#   make test            every TAP test through prove
#   make test-stress     the same while a parallel build loads every CPU
#                        (RUNS=N: N runs in a row; scripts/test-stress.sh)
#   make bench           the benchmarks (see docs/PERFORMANCE.md)
#   make test-patch-sqlite  run-time patching of plain SQLite vs uftrace -P . (not in make test)
#   make test-attach-sqlite  record -p on a running plain SQLite shell, 20 attach/detach rounds (not in make test)
#   make SAN=asan test   the same tests built with ASan+UBSan (in build-asan/)
#   make SAN=tsan test   the concurrency tests built with TSan (in build-tsan/)
#   make fuzz            libFuzzer targets (clang), a short run of each
#   make install PREFIX=/usr/local DESTDIR=   (make uninstall removes it all)
#   make demo            the KFT demo on SQLite (downloads, see README.md)
#   make kmod / test-kmod  the kernel module and its VM tests (bench-kmod: its benchmark)
#
# Every folder is one part; sources are found by wildcard, so adding a file
# needs no edit here:  lib/ runtime, kft/ function tracer engine
# (freestanding), reader/ trace reader, consumer/ the session consumer
# (`ktrace record` streaming to disk), kclient/ the clients of the kernel's
# tracing interfaces (tracefs, /proc/kft, ktrace.ko's debugfs files and relay
# channels), analysis/ what the reports compute (profiles, call traces, task
# selection), formats/ the output formats' writers (text, CSV, JSON, SVG,
# Perfetto, CTF),
# cli/ the ktrace command, kmod/ the kernel module, tests/ (NAME.c or
# NAME.sh -> build/tests/NAME.t), bench/, examples/, fuzz/.

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
SAN ?=
WERROR ?= $(if $(CI),-Werror,)

ifeq ($(SAN),asan)
B ?= build-asan
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(SAN),tsan)
B ?= build-tsan
SANFLAGS := -fsanitize=thread
else
B ?= build
SANFLAGS :=
endif

VERSION := 0.1.0
OPT ?= -O2 -g
CPPFLAGS += -Iinclude -I. -D_GNU_SOURCE
CFLAGS += -std=gnu11 $(OPT) -Wall -Wextra -Wno-unused-parameter $(WERROR) $(SANFLAGS) -fno-strict-aliasing
LDFLAGS += $(SANFLAGS)
LDLIBS += -lpthread
# elfutils for symbols and source lines (addr2sym, kd); libiberty demangles C++
DW_LIBS := $(shell pkg-config --libs libdw 2>/dev/null || echo -ldw -lelf) -liberty
# libtracefs + libtraceevent for kclient/ (`ktrace record --kernel`, `ktrace kft --tracefs`)
TRACEFS_CFLAGS := $(shell pkg-config --cflags libtracefs libtraceevent 2>/dev/null || echo -I/usr/include/tracefs -I/usr/include/traceevent)
TRACEFS_LIBS := $(shell pkg-config --libs libtracefs libtraceevent 2>/dev/null || echo -ltracefs -ltraceevent)

# libtracecmd writes trace.dat (kclient/tracedat.c) through functions its
# 1.3.x exports but declares privately (kclient/tracecmd_output.h): another
# version leaves `export --format=trace.dat` out (it then says so)
TRACECMD_VERSION := $(shell pkg-config --modversion libtracecmd 2>/dev/null)
ifneq ($(filter 1.3.%,$(TRACECMD_VERSION)),)
TRACECMD_CFLAGS := -DKTRACE_HAVE_TRACECMD=1
TRACECMD_LIBS := -ltracecmd
else
$(warning libtracecmd 1.3.x not found (pkg-config: '$(TRACECMD_VERSION)'): ktrace export --format=trace.dat is left out; install libtracecmd-dev 3.1.6 (scripts/deps.sh))
endif

# yajl writes every JSON document (formats/json.c): it validates UTF-8
JSON_CFLAGS := $(shell pkg-config --cflags yajl 2>/dev/null)
JSON_LIBS := $(shell pkg-config --libs yajl 2>/dev/null || echo -lyajl)
# libbabeltrace2 writes CTF (formats/ctf.c: its sink.ctf.fs component); in
# libktrace-formats.a its object is linked only by programs that call it
# (ktrace), and the fuzz build leaves it out (fuzz/Makefile)
BT2_CFLAGS := $(shell pkg-config --cflags babeltrace2 2>/dev/null)
BT2_LIBS := $(shell pkg-config --libs babeltrace2 2>/dev/null || echo -lbabeltrace2)
# protobuf-c packs Perfetto's trace messages (formats/perfetto.c); protoc-c
# turns the vendored .proto files (third_party/perfetto, a subset of
# upstream's) into C in $(B)/gen at build time
PROTOC_C ?= protoc-c
PB_CFLAGS := $(shell pkg-config --cflags libprotobuf-c 2>/dev/null)
PB_LIBS := $(shell pkg-config --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)
# libaudit names system calls by number for the recording machine (analysis/syscalls.c)
AUDIT_LIBS := $(shell pkg-config --libs audit 2>/dev/null || echo -laudit)
# compressed frames (reader/zframe.c): the consumer writes them, every reader reads them
ZSTD_LIBS := $(shell pkg-config --libs libzstd 2>/dev/null || echo -lzstd)
PB_DIR := third_party/perfetto
PB_PROTOS := $(patsubst $(PB_DIR)/%,%,$(shell find $(PB_DIR)/protos -name '*.proto' | sort))
PB_OBJ := $(patsubst %.proto,$(B)/gen/%.pb-c.o,$(PB_PROTOS))

LIB_SRC := $(wildcard lib/*.c) $(wildcard kft/*.c)
READER_SRC := $(wildcard reader/*.c)
CLI_SRC := $(wildcard cli/*.c)
CONSUMER_SRC := $(wildcard consumer/*.c)
KCLIENT_SRC := $(wildcard kclient/*.c)
# formats/plugin.c is ktrace-export.so's table, not in the archive
FORMATS_SRC := $(filter-out formats/plugin.c,$(wildcard formats/*.c))
ANALYSIS_SRC := $(wildcard analysis/*.c)
TEST_C := $(wildcard tests/*.c)
TEST_SH := $(wildcard tests/*.sh)
TEST_HELPERS := $(wildcard tests/helpers/*.c)
EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))
BENCH_SRC := $(wildcard bench/*.c)

LIB_OBJ := $(patsubst %.c,$(B)/pic/%.o,$(LIB_SRC))
LIB_SOBJ := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRC))
# the -pg hooks' entry points (lib/kft_pg_entry.S, x86-64)
LIB_ASM := $(wildcard lib/*.S)
LIB_OBJ += $(patsubst %.S,$(B)/pic/%.o,$(LIB_ASM))
LIB_SOBJ += $(patsubst %.S,$(B)/obj/%.o,$(LIB_ASM))
READER_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(READER_SRC))
# the reader opens every file through lib/safefile.c (ksf_read_open()): the
# installed libktrace-reader.a carries it
READER_OBJ += $(B)/obj/lib/safefile.o
CLI_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(CLI_SRC))
CONSUMER_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(CONSUMER_SRC))
# the consumer encodes the frames the reader decodes: one codec, in both archives
CONSUMER_OBJ += $(B)/obj/reader/zframe.o
KCLIENT_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(KCLIENT_SRC))
FORMATS_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(FORMATS_SRC))
ANALYSIS_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(ANALYSIS_SRC))
TESTS := $(patsubst tests/%.c,$(B)/tests/%.t,$(TEST_C)) $(patsubst tests/%.sh,$(B)/tests/%.t,$(TEST_SH))
HELPER_BINS := $(patsubst tests/helpers/%.c,$(B)/tests/helpers/%,$(TEST_HELPERS))

LIBA := $(B)/libktrace.a
LIBSO := $(B)/libktrace.so.0
RECSO := $(B)/libktrace-record.so.0
LOCKSO := $(B)/libktrace-locks.so.0
READERA := $(B)/libktrace-reader.a
CONSUMERA := $(B)/libktrace-consumer.a
KCLIENTA := $(B)/libktrace-kclient.a
FORMATSA := $(B)/libktrace-formats.a
ANALYSISA := $(B)/libktrace-analysis.a
KTRACE := $(B)/ktrace
# the exporters that need big libraries (formats/plugin.h), PIC, with what they call
PLUGIN := $(B)/ktrace-export.so
PLUGIN_OBJ := $(addprefix $(B)/pic/,formats/plugin.o formats/perfetto.o formats/ctf.o formats/utf8.o \
	kclient/tracedat.o lib/safefile.o) $(patsubst $(B)/gen/%,$(B)/pic/gen/%,$(PB_OBJ))

.PHONY: all test check bench fuzz install uninstall clean demo kmod test-kmod test-stress bench-kmod test-patch-sqlite test-attach-sqlite
all: $(LIBA) $(B)/libktrace.so $(RECSO) $(LOCKSO) $(KTRACE) $(PLUGIN) $(EXAMPLES)

# The runtime is never instrumented: it provides the instrumentation hooks.
$(B)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c $< -o $@
$(B)/pic/lib/%.o: lib/%.S
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -fPIC -MMD -MP -c $< -o $@
$(B)/obj/lib/%.o: lib/%.S
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(B)/obj/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=hidden -MMD -MP -c $< -o $@
$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIBA): $(LIB_SOBJ)
	@rm -f $@
	ar rcs $@ $^
$(LIBSO): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libktrace.so.0 $(LDFLAGS) -o $@ $^ $(LDLIBS) -ldl
$(B)/libktrace.so: $(LIBSO)
	ln -sf libktrace.so.0 $@
# the shim `ktrace record` preloads: sigaction()/signal() of the traced
# program, and the session passed on by exec*()/posix_spawn*() with an envp
$(RECSO): $(B)/pic/lib/preload/signal.o $(B)/pic/lib/preload/exec.o $(B)/pic/lib/preload/dl.o $(LIBSO)
	$(CC) -shared -Wl,-soname,libktrace-record.so.0 $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIBSO) -ldl
# the shim `ktrace record --locks` preloads: pthread lock calls as lock events
$(LOCKSO): $(B)/pic/lib/preload/locks.o $(LIBSO)
	$(CC) -shared -Wl,-soname,libktrace-locks.so.0 $(LDFLAGS) -o $@ $< $(LIBSO) -ldl -lpthread
$(READERA): $(READER_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(CONSUMERA): $(CONSUMER_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(KCLIENTA): $(KCLIENT_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(FORMATSA): $(FORMATS_OBJ) $(PB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(ANALYSISA): $(ANALYSIS_OBJ)
	@rm -f $@
	ar rcs $@ $^

# ktrace links what most commands need; the exporters that need
# libprotobuf-c, libbabeltrace2 and libtracecmd are ktrace-export.so,
# which `ktrace export` loads when it writes their formats (formats/plugin.h),
# and libaudit is loaded by the first syscall name (analysis/syscalls.c):
# every command starts without mapping them
$(KTRACE): $(CLI_OBJ) $(ANALYSISA) $(READERA) $(CONSUMERA) $(KCLIENTA) $(FORMATSA) $(LIBA)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(ANALYSISA) $(READERA) $(CONSUMERA) $(KCLIENTA) $(FORMATSA) $(LIBA) $(DW_LIBS) $(ZSTD_LIBS) $(TRACEFS_LIBS) $(JSON_LIBS) $(LDLIBS) -ldl -lm
$(PLUGIN): $(PLUGIN_OBJ) formats/plugin.map
	$(CC) -shared $(LDFLAGS) -Wl,--version-script=formats/plugin.map -o $@ $(PLUGIN_OBJ) $(TRACECMD_LIBS) $(TRACEFS_LIBS) $(BT2_LIBS) $(PB_LIBS) $(LDLIBS)
$(B)/pic/kclient/tracedat.o: CPPFLAGS += $(TRACEFS_CFLAGS) $(TRACECMD_CFLAGS)
$(B)/pic/formats/ctf.o: CPPFLAGS += $(BT2_CFLAGS)
$(B)/pic/formats/perfetto.o: CPPFLAGS += -I$(B)/gen $(PB_CFLAGS)
$(B)/pic/formats/perfetto.o: $(B)/gen/.stamp
$(B)/pic/gen/%.pb-c.o: $(B)/gen/%.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(B)/gen $(PB_CFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c $< -o $@
$(B)/obj/kclient/%.o: CPPFLAGS += $(TRACEFS_CFLAGS)
$(B)/obj/kclient/tracedat.o: CPPFLAGS += $(TRACECMD_CFLAGS)
$(B)/obj/formats/ctf.o: CPPFLAGS += $(BT2_CFLAGS)

$(B)/gen/.stamp: $(addprefix $(PB_DIR)/,$(PB_PROTOS))
	@mkdir -p $(dir $@)
	@touch $@.tmp # dated before the files it makes, so they are not remade
	$(PROTOC_C) --c_out=$(B)/gen -I$(PB_DIR) $(PB_PROTOS)
	@mv $@.tmp $@
$(B)/gen/%.pb-c.c: $(B)/gen/.stamp
	@test -f $@
$(B)/gen/%.pb-c.o: $(B)/gen/%.pb-c.c
	$(CC) $(CPPFLAGS) -I$(B)/gen $(PB_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(B)/obj/formats/perfetto.o: CPPFLAGS += -I$(B)/gen $(PB_CFLAGS)
$(B)/obj/formats/perfetto.o: $(B)/gen/.stamp

$(B)/examples/%: examples/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIBA) $(LDFLAGS) $(LDLIBS) -ldl

# Tests: C tests link the static runtime and the reader; shell tests are
# linked into place.  They find the tree through KTRACE_BUILD / KTRACE_SRC.
$(B)/tests/%.t: tests/%.c tests/tap.h tests/walk.h $(LIBA) $(READERA)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(READERA) $(LIBA) $(DW_LIBS) $(ZSTD_LIBS) $(LDFLAGS) $(LDLIBS) -ldl -lm
$(B)/tests/%.t: tests/%.sh
	@mkdir -p $(dir $@)
	ln -sf ../../$< $@
$(B)/tests/helpers/%: tests/helpers/%.c $(LIBA) $(READERA)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(READERA) $(LIBA) $(ZSTD_LIBS) $(LDFLAGS) $(LDLIBS) -ldl

# prove runs JOBS tests at once (default: one per CPU; V=1: one at a time,
# verbose); those whose header says "test: serial" (they arm the host
# kernel's tracing) run one after another, beside the others.
# PROVE_FLAGS adds prove's own options (--timer, --shuffle, ...).
TEST_ENV = KTRACE_BUILD=$(abspath $(B)) KTRACE_SRC=$(CURDIR) KTRACE_SAN=$(SAN)
JOBS ?= $(if $(V),1,$(shell nproc 2>/dev/null || echo 1))
SERIAL_TESTS := $(basename $(notdir $(shell grep -l '^\(#\| \*\) test: serial' $(TEST_C) $(TEST_SH))))
comma := ,
PROVE_RULES := --rules='seq=$(B)/tests/{$(subst $(eval) ,$(comma),$(strip $(SERIAL_TESTS)))}.t' --rules='par=**'
test check: all $(TESTS) $(HELPER_BINS)
	$(TEST_ENV) prove --exec '' -j$(JOBS) $(PROVE_RULES) $(PROVE_FLAGS) $(if $(V),-v,) \
		$(if $(T),$(T),$(sort $(TESTS)))

# No test may depend on how busy the machine is: this runs them under load.
test-stress:
	./scripts/test-stress.sh $(or $(RUNS),1) $(if $(T),T="$(T)",) $(if $(SAN),SAN=$(SAN),)

# Benchmarks (scripts/deps.sh --bench first): static events, SQLite function
# tracing, kernel events; `make bench PARTS=kft` runs one part (bench/Makefile).
bench: all
	$(MAKE) -C bench B=$(abspath $(B)) SRC=$(CURDIR)

fuzz:
	$(MAKE) -C fuzz SRC=$(CURDIR)

# scripts/check-patch-sqlite.sh: needs uftrace, ~20 s after a ~1 min SQLite build; not in make test or .ci/run
test-patch-sqlite: all
	./scripts/check-patch-sqlite.sh $(B)

# scripts/check-attach-sqlite.sh: ~100 s after a ~1 min SQLite build; not in make test or .ci/run
test-attach-sqlite: all
	./scripts/check-attach-sqlite.sh $(B)

# Installed files.  Outside the loader's default directories (/usr,
# /usr/local) the pkg-config files carry an rpath, so a program built with
# `pkg-config --libs ktrace` starts without LD_LIBRARY_PATH; inside them
# `make install` runs ldconfig (when DESTDIR is empty and you are root).
LIBDIR := $(PREFIX)/lib
DOCDIR := $(PREFIX)/share/doc/ktrace
MANDIR := $(PREFIX)/share/man
PC_RPATH := $(if $(filter /usr /usr/local,$(PREFIX)),,-Wl,-rpath,$(LIBDIR))
PUBLIC_H := $(wildcard include/ktrace/*.h)
MAN_PAGES := $(wildcard docs/man/*.[135])
DOCS := $(wildcard docs/*.md) README.md
INSTALLED := $(addprefix $(LIBDIR)/,libktrace.a libktrace-reader.a libktrace.so.0 libktrace.so \
		libktrace-record.so.0 libktrace-locks.so.0 ktrace/ktrace-export.so pkgconfig/ktrace.pc \
		pkgconfig/ktrace-reader.pc) \
	$(addprefix $(PREFIX)/include/ktrace/,$(notdir $(PUBLIC_H)) reader.h) $(PREFIX)/bin/ktrace \
	$(foreach m,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m))) \
	$(addprefix $(DOCDIR)/,$(notdir $(DOCS)))

install: all
	install -d $(addprefix $(DESTDIR),$(LIBDIR)/pkgconfig $(LIBDIR)/ktrace $(PREFIX)/include/ktrace $(PREFIX)/bin \
		$(MANDIR)/man1 $(MANDIR)/man3 $(MANDIR)/man5 $(DOCDIR))
	install -m 0644 $(LIBA) $(READERA) $(DESTDIR)$(LIBDIR)/
	install -m 0755 $(LIBSO) $(RECSO) $(LOCKSO) $(DESTDIR)$(LIBDIR)/
	install -m 0755 $(PLUGIN) $(DESTDIR)$(LIBDIR)/ktrace/
	ln -sf libktrace.so.0 $(DESTDIR)$(LIBDIR)/libktrace.so
	install -m 0644 $(PUBLIC_H) $(DESTDIR)$(PREFIX)/include/ktrace/
	install -m 0644 reader/reader.h $(DESTDIR)$(PREFIX)/include/ktrace/reader.h
	install -m 0755 $(KTRACE) $(DESTDIR)$(PREFIX)/bin/
	for pc in ktrace ktrace-reader; do \
		sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@RPATH@|$(PC_RPATH)|g' \
			$$pc.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/$$pc.pc || exit 1; \
	done
	for m in $(MAN_PAGES); do \
		sed -e 's|docs/\([A-Z-]*\.md\)|$(DOCDIR)/\1|g' -e 's|@DOCDIR@|$(DOCDIR)|g' $$m \
			> $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/} || exit 1; \
	done
	install -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	@if [ -z "$(DESTDIR)" ] && [ -z "$(PC_RPATH)" ] && [ "$$(id -u)" = 0 ]; then \
		echo ldconfig; ldconfig; \
	elif [ -z "$(PC_RPATH)" ]; then \
		echo "make install: run ldconfig as root so programs find libktrace.so.0"; fi

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(addprefix $(DESTDIR),$(PREFIX)/include/ktrace $(LIBDIR)/ktrace $(DOCDIR)) 2>/dev/null
	@if [ -z "$(DESTDIR)" ] && [ -z "$(PC_RPATH)" ] && [ "$$(id -u)" = 0 ]; then \
		echo ldconfig; ldconfig; fi

demo: all
	./scripts/demo.sh $(B)

kmod:
	$(MAKE) -C kmod

# KERNEL=rt: the same in Debian's PREEMPT_RT kernel (linux-image-rt-amd64)
test-kmod:
	KTRACE_VM_KERNEL=$(or $(KERNEL),generic) ./kmod/tests/run-vm.sh
	KTRACE_VM_KERNEL=$(or $(KERNEL),generic) ./kmod/tests/run-vm.sh boot # boot-time KFT (ktrace kft --boot)
	KTRACE_VM_KERNEL=$(or $(KERNEL),generic) ./kmod/tests/run-vm.sh crash # crash extraction: 20 panics, 2 reboots, 1 torn record

bench-kmod:
	KTRACE_VM_KERNEL=$(or $(KERNEL),generic) ./kmod/tests/run-vm.sh bench

clean:
	rm -rf build build-asan build-tsan
	-$(MAKE) -C fuzz clean 2>/dev/null

-include $(shell find $(B) -name '*.d' 2>/dev/null)
