# btfenc's front door. `make run` shows it working on a bundled fixture;
# `make test` is the test suite; the check-* and bench* targets work on the
# real Debian kernel (fetched once by `make corpus`).

CARGO      ?= cargo
TARGET_DIR := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
# The fixture `make run` encodes: four CUs from clang, with type and decl
# tags, a per-CPU variable and every kind of type.
RUN_INPUT  ?= fixtures/obj/multi-cu/clang.o
RUN_OUT    ?= $(TARGET_DIR)/run
SKIP_LOG   := $(TARGET_DIR)/test-skips.txt
# `make install`: btfenc into $(BINDIR), and a `pahole` symlink to it in
# $(PAHOLE_LINK_DIR), a directory of its own so that it never shadows the
# system's pahole on the PATH (see README, "In a kernel build").
PREFIX          ?= /usr/local
BINDIR          ?= $(PREFIX)/bin
PAHOLE_LINK_DIR ?= $(PREFIX)/libexec/btfenc

.PHONY: all build release run test lint deps fixtures corpus check-kernel check-kbuild check-dwz \
        bench bench-modules fuzz fuzz-smoke compare-funcs install uninstall clean

all: build

# Debian packages `make test` compares against (installed when run as
# root and missing; see scripts/deps.sh).
deps:
	@scripts/deps.sh test

build:
	$(CARGO) build -p btfenc

release:
	$(CARGO) build --release -p btfenc

run: release
	@mkdir -p $(RUN_OUT)
	$(TARGET_DIR)/release/btfenc -J --btf_gen_floats \
		--btf_encode_detached=$(RUN_OUT)/$(notdir $(RUN_INPUT)).btf $(RUN_INPUT)
	$(TARGET_DIR)/release/btfenc dump $(RUN_OUT)/$(notdir $(RUN_INPUT)).btf

# The integration tests drive the btfenc binary, which `cargo test` does not
# build for another package: build it first and point the tests at it.
# Skipped checks (e.g. no privilege for BPF_BTF_LOAD) are listed at the end.
test: deps build
	@rm -f $(SKIP_LOG)
	@BTFENC_BIN=$(TARGET_DIR)/debug/btfenc BTFENC_SKIP_LOG=$(SKIP_LOG) \
		$(CARGO) test --workspace; status=$$?; \
	if [ -s $(SKIP_LOG) ]; then \
		echo "!!!!!!!! $$(wc -l < $(SKIP_LOG)) check(s) SKIPPED:"; sort $(SKIP_LOG); \
	fi; exit $$status

# Formatting, clippy and the doc comments' links, warnings as errors (CI
# runs this before the tests).
lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --document-private-items

fixtures:
	$(MAKE) -C fixtures

corpus:
	scripts/corpus.sh

check-kernel:
	scripts/check-kernel.sh

check-kbuild:
	scripts/check-kbuild.sh

# btfenc on dwz'd kernel images vs the same images before dwz (slow).
check-dwz:
	scripts/check-dwz.sh

bench:
	scripts/bench.sh

# The fuzz targets (fuzz/: libFuzzer, built by plain cargo with cargo-fuzz's
# flags on the stable toolchain, see scripts/fuzz.sh), FUZZ_SECONDS each
# (default 60); executions and findings per target at the end, exit 1 on
# any finding. fuzz-smoke is the short run CI does (.ci/run): every seed,
# then a fixed number of inputs per target from a fixed random seed (about
# 10 s each here), the same on every machine (see scripts/fuzz.sh).
fuzz:
	@scripts/deps.sh fuzz
	scripts/fuzz.sh

fuzz-smoke:
	@scripts/deps.sh fuzz
	FUZZ_SMOKE=1 scripts/fuzz.sh

bench-modules:
	scripts/bench-modules.sh

# btfenc against a real pahole 1.31 (dwarves 1436daf) on both kernels'
# vmlinux and all their modules, with each kernel's flags; needs
# PAHOLE131=/path/to/pahole (see scripts/compare-funcs.sh).
compare-funcs:
	scripts/compare-funcs.sh

install: release
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PAHOLE_LINK_DIR)
	install -m 0755 $(TARGET_DIR)/release/btfenc $(DESTDIR)$(BINDIR)/btfenc
	ln -sfn $(BINDIR)/btfenc $(DESTDIR)$(PAHOLE_LINK_DIR)/pahole

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/btfenc $(DESTDIR)$(PAHOLE_LINK_DIR)/pahole
	-rmdir $(DESTDIR)$(PAHOLE_LINK_DIR)

clean:
	$(CARGO) clean
