# cosid: a PGXS build, plus the project's own commands.
#
#   make && sudo make install    build and install into the PostgreSQL of
#                                PG_CONFIG (default: the pg_config on PATH,
#                                else Debian's PostgreSQL 15)
#   make installcheck            pg_regress and isolation suites against
#                                what make install installed, on temporary
#                                servers of their own (pg_regress
#                                --temp-instance, with test/cosid.conf); as an
#                                ordinary user, since initdb refuses root
#   make installcheck EXISTING_SERVER=1
#                                the same against a running server (PGHOST,
#                                PGPORT, PGUSER), which must preload cosid
#   make test                    every suite on every version the project
#                                supports (scripts/lib.sh, COSID_PG_VERSIONS);
#                                PG=18 for one version
#   make run / make stop         a throwaway server with cosid (PG=18: that one)
#   make bench                   the benchmarks (PG=18: on that version)
#   make deps                    install what is missing (apt; PostgreSQL
#                                versions Debian bookworm lacks are built once
#                                into /var/cache/cosid by scripts/pg.sh)
#
# make test/run/bench build cosid for each version in a copy of the sources,
# build/pgN/, with -Werror (COSID_WERROR=1); a plain make does not use -Werror,
# so that a newer compiler's new warnings never stop an installation.
#
# On a fresh Debian bookworm machine pg_config does not exist yet, so the PGXS
# part is included only when it does; run/test/bench install what is missing
# first (scripts/deps.sh).

EXTENSION = cosid
MODULE_big = cosid
DATA = $(wildcard sql/cosid--*.sql)
CORE_OBJS = src/core/backoff.o src/core/ulid.o src/core/timegen.o src/core/text.o src/core/radix.o \
	src/core/datetext.o src/core/parts.o src/core/grouped.o src/core/codec.o \
	src/core/codec_run.o src/core/codec_encode.o src/core/codec_decode.o \
	src/core/json.o src/core/definition.o
OBJS = src/cosid.o src/util.o src/random.o src/ulid_type.o src/slot.o src/store.o \
	src/history.o src/restore.o src/names.o \
	src/slot_manual.o src/slot_lease.o src/slot_citus.o src/worker.o src/wal.o src/gendef.o \
	src/codecbind.o src/codecfuncs.o src/catalog.o src/ddl.o src/genstate.o \
	src/gencache.o src/citus.o src/segment.o src/issue.o src/inspect.o src/upgrade.o $(CORE_OBJS)
# the slot worker talks to the lease store with libpq
PG_CPPFLAGS = -I$(srcdir)/src -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL = $(libpq)
# -Wno-unused-parameter: PostgreSQL's own headers and every V1 function (fcinfo) trip it.
WERROR = $(if $(filter 1,$(COSID_WERROR)),-Werror)
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter $(WERROR)

# make installcheck: pg_regress tests (every sql/*.sql except the install and
# upgrade scripts) and isolation specs.  As pg_cron does, each suite starts a
# temporary server of its own (--temp-instance) with cosid preloaded
# (--temp-config=test/cosid.conf), so it needs no server and can run again at
# once; EXISTING_SERVER=1 runs them against a running server instead (the
# Debian package build does, on pg_buildext's temporary cluster).  make test
# runs them (scripts/test.sh) the same way, plus the TAP and pgTAP suites,
# which start servers of their own.
REGRESS = $(filter-out cosid--%,$(basename $(notdir $(wildcard sql/*.sql))))
REGRESS_OPTS = --encoding=UTF8 --no-locale
ISOLATION = $(basename $(notdir $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test
ifeq ($(EXISTING_SERVER),)
REGRESS_OPTS += --temp-instance=./tmp_check --temp-config=$(srcdir)/test/cosid.conf
ISOLATION_OPTS += --temp-instance=./tmp_check_iso --temp-config=$(srcdir)/test/cosid.conf
endif
EXTRA_CLEAN = $(UNIT_TESTS) $(FUZZERS) tmp build results tmp_check tmp_check_iso \
	regression.diffs regression.out test/output_iso output_iso log

ifndef PG_CONFIG
PG_CONFIG := $(firstword $(shell command -v pg_config 2>/dev/null) \
	$(wildcard /usr/lib/postgresql/15/bin/pg_config) pg_config)
endif
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

.DEFAULT_GOAL := all

ifneq ($(PGXS),)
include $(PGXS)
# PGXS knows no header dependencies: every object depends on every header.
$(OBJS): $(wildcard src/*.h src/core/*.h)

# On a temporary instance: initdb refuses root, so say so before it does.
# Against a running server: it must preload cosid; say so rather than fail
# test by test.
installcheck: installcheck-server
.PHONY: installcheck-server
ifeq ($(EXISTING_SERVER),)
installcheck-server:
	@if [ "$$(id -u)" -eq 0 ]; then \
		echo "make installcheck starts temporary servers, and initdb refuses to run as root." >&2; \
		echo "Run it as an ordinary user (e.g. runuser -u postgres -- make installcheck)," >&2; \
		echo "or against a running server: make installcheck EXISTING_SERVER=1." >&2; exit 1; \
	fi
else
installcheck-server:
	@libs=$$('$(bindir)/psql' -X -At -d postgres -c 'SHOW shared_preload_libraries' 2>&1) || { \
		echo "make installcheck: no server to test against ($$libs)" >&2; \
		echo "With EXISTING_SERVER=1 it runs against a running PostgreSQL $(MAJORVERSION) with cosid installed" >&2; \
		echo "(make install) and shared_preload_libraries = 'cosid'; set PGHOST, PGPORT, PGUSER to reach it." >&2; \
		echo "Without it, make installcheck starts temporary servers of its own." >&2; exit 1; }; \
	case ",$$(echo "$$libs" | tr -d ' "')," in *,cosid,*) ;; *) \
		echo "make installcheck: the server does not preload cosid (shared_preload_libraries = '$$libs')." >&2; \
		echo "Add cosid to shared_preload_libraries in its postgresql.conf and restart it." >&2; exit 1;; esac; \
	v=$$('$(bindir)/psql' -X -At -d postgres -c 'SHOW server_version_num'); \
	if [ "$$(( v / 10000 ))" != "$(MAJORVERSION)" ]; then \
		echo "make installcheck: the server is PostgreSQL $$(( v / 10000 )), but PG_CONFIG ($(PG_CONFIG)) is $(MAJORVERSION)." >&2; \
		echo "Set PGHOST/PGPORT to a PostgreSQL $(MAJORVERSION) server, or PG_CONFIG to that server's pg_config." >&2; exit 1; \
	fi
endif
else
all install installcheck:
	@echo "pg_config was not found: run 'make deps' (or 'make run' / 'make test', which do it), or set PG_CONFIG" >&2
	@exit 1
endif

# Core C (no PostgreSQL headers): unit tests with cmocka, fuzzing with libFuzzer.
CORE_SRCS = $(CORE_OBJS:.o=.c)
CORE_CFLAGS = -std=c11 -Wall -Wextra $(WERROR) -pedantic -g -O1 -Isrc

# One cmocka binary per test/unit/test_*.c, each linked with all of src/core.
UNIT_TESTS = $(basename $(wildcard test/unit/test_*.c))
# One libFuzzer binary per test/fuzz/fuzz_*.c (scripts/test.sh runs each).
FUZZERS = $(basename $(wildcard test/fuzz/fuzz_*.c))

test/unit/test_%: test/unit/test_%.c $(CORE_SRCS) $(wildcard src/core/*.h)
	cc $(CORE_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-o $@ $< $(CORE_SRCS) -lcmocka

test/fuzz/fuzz_%: test/fuzz/fuzz_%.c test/fuzz/fuzz.h $(CORE_SRCS) $(wildcard src/core/*.h)
	clang $(CORE_CFLAGS) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ $< $(CORE_SRCS)

# PG: the PostgreSQL major version(s) for test, run, bench and deps, e.g.
# make test PG=18; empty: test and deps take every one of COSID_PG_VERSIONS,
# run and bench the first.  (The scripts read it from the environment.)
PG ?=
export PG

.PHONY: deps run stop test unit fuzz bench

deps:
	bash scripts/deps.sh

unit: $(UNIT_TESTS)
	for t in $(UNIT_TESTS); do ./$$t || exit 1; done

fuzz: $(FUZZERS)

run:
	bash scripts/deps.sh --run
	bash scripts/pg.sh install --default
	bash scripts/run.sh start

stop:
	bash scripts/run.sh stop

test: deps
	$(MAKE) COSID_WERROR=1 $(UNIT_TESTS) $(FUZZERS)
	bash scripts/test.sh

bench:
	bash scripts/deps.sh --default
	bash scripts/pg.sh install --default
	bash bench/run.sh

.PHONY: dist
# the PGXN release archive cosid-<version>.zip, from git archive of HEAD
dist:
	bash scripts/dist.sh
