# cosid: PGXS build plus the project's two commands (make run, make test).
#
# On a fresh Debian bookworm machine pg_config does not exist yet, so the
# PGXS part is included only when it does; run/test/bench install what is
# missing first (scripts/deps.sh) and then build in a second make.

EXTENSION = cosid
MODULE_big = cosid
DATA = $(wildcard sql/cosid--*.sql)
CORE_OBJS = src/core/ulid.o src/core/timegen.o src/core/codec.o src/core/json.o
OBJS = src/cosid.o src/random.o src/ulid_type.o src/catalog.o src/generate.o \
	src/codec.o src/genstate.o src/wal.o src/worker.o src/lease.o $(CORE_OBJS)
PG_CPPFLAGS = -I$(srcdir)/src -I$(shell $(PG_CONFIG) --includedir)
# the slot worker talks to the lease store with libpq
SHLIB_LINK = -lpq
# -Wno-unused-parameter: PostgreSQL's own headers and every V1 function (fcinfo) trip it.
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter

# pg_regress tests: every sql/*.sql except the install and upgrade scripts.
REGRESS = $(filter-out cosid--%,$(basename $(notdir $(wildcard sql/*.sql))))
REGRESS_OPTS = --temp-config=$(srcdir)/test/cosid.conf
ISOLATION = $(basename $(notdir $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test --temp-config=$(srcdir)/test/cosid.conf
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl
EXTRA_CLEAN = $(UNIT_TESTS) test/fuzz/fuzz_ulid test/fuzz/fuzz_codec tmp results \
	regression.diffs regression.out test/output_iso

PG_CONFIG ?= $(firstword $(wildcard /usr/lib/postgresql/15/bin/pg_config) pg_config)
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

.DEFAULT_GOAL := all

ifneq ($(PGXS),)
include $(PGXS)
# PGXS knows no header dependencies: every object depends on every header.
$(OBJS): $(wildcard src/*.h src/core/*.h)
else
all:
	@echo "pg_config was not found: run 'make deps' (or 'make run' / 'make test', which do it)" >&2
	@exit 1
endif

# Core C (no PostgreSQL headers): unit tests with cmocka, fuzzing with libFuzzer.
CORE_SRCS = $(CORE_OBJS:.o=.c)
CORE_CFLAGS = -std=c11 -Wall -Wextra -Werror -pedantic -g -O1 -Isrc

# One cmocka binary per test/unit/test_*.c, each linked with all of src/core.
UNIT_TESTS = $(basename $(wildcard test/unit/test_*.c))

test/unit/test_%: test/unit/test_%.c $(CORE_SRCS) $(wildcard src/core/*.h)
	cc $(CORE_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-o $@ $< $(CORE_SRCS) -lcmocka

test/fuzz/fuzz_ulid: test/fuzz/fuzz_ulid.c $(CORE_SRCS) $(wildcard src/core/*.h)
	clang $(CORE_CFLAGS) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ test/fuzz/fuzz_ulid.c $(CORE_SRCS)

test/fuzz/fuzz_codec: test/fuzz/fuzz_codec.c $(CORE_SRCS) $(wildcard src/core/*.h)
	clang $(CORE_CFLAGS) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ test/fuzz/fuzz_codec.c $(CORE_SRCS)

.PHONY: deps run stop test unit fuzz bench build-install

deps:
	bash scripts/deps.sh

build-install:
	$(MAKE) all
	$(MAKE) install

unit: $(UNIT_TESTS)
	for t in $(UNIT_TESTS); do ./$$t || exit 1; done

fuzz: test/fuzz/fuzz_ulid test/fuzz/fuzz_codec

run: deps
	$(MAKE) build-install
	bash scripts/run.sh start

stop:
	bash scripts/run.sh stop

test: deps
	$(MAKE) build-install
	$(MAKE) $(UNIT_TESTS) test/fuzz/fuzz_ulid test/fuzz/fuzz_codec
	bash scripts/test.sh

bench: deps
	$(MAKE) build-install
	bash bench/run.sh
