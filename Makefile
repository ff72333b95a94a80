# sparsevec: PGXS build.  See README.md for the test and benchmark commands.

EXTENSION = sparsevec
EXTVERSION = $(shell sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" $(EXTENSION).control)
MODULE_big = sparsevec
PGFILEDESC = "sparsevec - sparse vectors and the sparse_maxscore index"

# Object files, grouped by area (explicit lists: deterministic builds).
OBJS_TYPE = src/sparsevec.o src/spvbm25.o
OBJS_SPM = src/spm.o src/spmadmin.o src/spmblock.o src/spmbuild.o src/spmcost.o src/spminsert.o src/spmlimit.o src/spmsort.o \
	src/spmflush.o src/spmmerge.o src/spmoptions.o src/spmpage.o src/spmpipeline.o \
	src/spmpending.o src/spmpolicy.o src/spmscan.o src/spmsegment.o src/spmsegscan.o src/spmtopk.o \
	src/spmtraverse.o src/spmrange.o src/spmreorder.o \
	src/spmutils.o src/spmvacuum.o src/spmvalidate.o src/spmwrite.o
OBJS = $(OBJS_TYPE) $(OBJS_SPM)

DATA = $(EXTENSION)--$(EXTVERSION).sql \
	$(EXTENSION)--0.1.0.sql $(EXTENSION)--0.1.0--0.2.0.sql \
	$(EXTENSION)--0.2.0.sql $(EXTENSION)--0.2.0--0.3.0.sql

# pg_regress suites in sql/ + expected/, grouped by area.
REGRESS_WRITES = spmw_setup spmw_insert spmw_large spmw_flush spmw_vacuum spmw_admin
REGRESS_TYPE = sparsevec_input sparsevec_ops sparsevec_cast sparsevec_construct \
	sparsevec_binary sparsevec_large sparsevec_random sparsevec_catalog \
	sparsevec_trusted sparsevec_pgvector_compat
REGRESS_SPM = spm_setup spm_order spm_build spm_insert spm_vacuum spm_filter_deepen \
	spm_rescan spm_prepared spm_toast spm_cost spm_validate spm_partition spm_limit \
	spm_ranges spm_quant spm_segments spm_cosine spm_l2 spm_scan_change
REGRESS_BM25 = sparsevec_bm25 sparsevec_bm25_ingest
# issue 40's findings: settings, last_scan, joins, updates with views
REGRESS_FINDINGS = spm_settings spm_last_scan spm_join
REGRESS_VERSIONS = sparsevec_upgrade sparsevec_upgrade_view
REGRESS = $(REGRESS_TYPE) $(REGRESS_SPM) $(REGRESS_FINDINGS) $(REGRESS_WRITES) $(REGRESS_BM25) $(REGRESS_VERSIONS)
# every suite runs in a database where CREATE EXTENSION sparsevec was done
REGRESS_OPTS = --load-extension=sparsevec

# Isolation specs live in test/isolation/{specs,expected}.
ISOLATION = spmw_insert_scan spmw_flush_scan spmw_vacuum_scan spmw_compact_scan spmw_flushers
ISOLATION_OPTS = --inputdir=test/isolation --outputdir=test/isolation/output

PG_CPPFLAGS = -I$(srcdir)/src
# No fast-math and no contraction: the operator and the index must add
# in the same order with the same rounding (src/sparsevec.h, doc/style.md).
PG_CFLAGS += -ffp-contract=off
# Bind our own references locally even if another library exports the
# same name (pgvector does; doc/style.md "Symbol hygiene").
SHLIB_LINK += -Wl,-Bsymbolic

# Debian's server is built --with-llvm; JIT bitcode would need clang.
override with_llvm := no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

EXTRA_CLEAN = test/isolation/output test/unit/run_unit

# Used by test/run to learn which suites exist.
print-regress:
	@echo $(REGRESS)
print-isolation:
	@echo $(ISOLATION)
.PHONY: print-regress print-isolation

# PGXS does not track header dependencies: rebuild everything when a
# header changes.
$(OBJS): $(wildcard $(srcdir)/src/*.h)
