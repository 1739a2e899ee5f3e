#!/bin/bash
# make fuzz / make fuzz-smoke: the fuzz targets of fuzz/ (one per reader:
# ELF+DWARF encoding, BTF reading standalone and split, the kernel's checks,
# relocate; see fuzz/src/lib.rs), seeded from the fixtures (fuzz/seeds.sh),
# each run for FUZZ_SECONDS.
#
# No cargo-fuzz: the targets are built by plain `cargo build --release`
# with the rustc flags `cargo fuzz build -s none` passes on the stable
# toolchain (coverage instrumentation for libFuzzer, `--cfg fuzzing`, debug
# assertions; no sanitizer, which needs nightly), for the host triple
# given explicitly so that build scripts stay uninstrumented, into their
# own target directory (target/fuzz). libFuzzer is Debian's (see below) or
# libfuzzer-sys's own copy (compiled with g++); each target binary is
# libFuzzer's driver, run directly with libFuzzer's options.
#
# Two modes. Both start by running every seed, which include every input
# kept in fixtures/bad/ (the findings of earlier runs among them), so a
# finding once fixed stays checked.
#
# - Campaign (`make fuzz`, the default): libFuzzer runs in fork mode for
#   FUZZ_SECONDS per target and goes on after a finding, so that one run
#   reports every finding: a crash (panic), a timeout (FUZZ_TIMEOUT seconds
#   on one input) or an OOM (FUZZ_RSS_MB). The grown corpus stays in
#   target/fuzz-corpus/TARGET/ for the next run. Where it goes depends on
#   the machine's speed and on chance: it is for finding bugs.
# - Smoke (`make fuzz-smoke`, FUZZ_SMOKE=1, what CI runs): a fixed number
#   of inputs per target (the table below, times FUZZ_SMOKE_SCALE), from
#   a fixed random seed (FUZZ_SEED, default 1), from the seeds alone, in
#   one process on one thread (fuzz/src/lib.rs). The same commit gives the same
#   inputs on any machine, so a smoke finding in CI is one `make
#   fuzz-smoke` reproduces here, and CI's verdict never depends on luck.
#   It stops at the first finding.
#
# Findings go to target/fuzz-artifacts/TARGET/ (replay one with
# `target/fuzz/HOST/release/TARGET FILE`); the log of a target that found
# something ends with the panic message, which the summary repeats. The
# summary gives executions and findings per target; the exit status is 1
# when any target found something.
#
# Environment: FUZZ_SECONDS (per target, default 60), FUZZ_TARGETS (default
# all), FUZZ_JOBS (parallel fuzzing processes per target, default 1),
# FUZZ_TIMEOUT (default 10), FUZZ_RSS_MB (default 2048), BTFENC_FUZZ_KERNEL=0
# (no kernel verdicts in the validate target), FUZZ_SMOKE, FUZZ_SEED,
# FUZZ_SMOKE_SCALE.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-elf_dwarf btf_read btf_read_split validate relocate}
jobs=${FUZZ_JOBS:-1}
smoke=${FUZZ_SMOKE:-0}
seed=${FUZZ_SEED:-1}
scale=${FUZZ_SMOKE_SCALE:-1}
# Smoke inputs per target: about 10 s each on one core of the 2-core
# machines CI runs on (the targets' speeds differ 30-fold).
declare -A smoke_runs=(
	[elf_dwarf]=25000
	[btf_read]=12000
	[btf_read_split]=10000
	[validate]=250000
	[relocate]=40000
)
cargo=${CARGO:-cargo}
target_dir=${CARGO_TARGET_DIR:-$repo_root/target}
fuzz_dir=$target_dir/fuzz

# What `cargo fuzz build -s none` (cargo-fuzz 0.13) gives rustc on Linux,
# `-v` shows it: SanitizerCoverage with 8-bit counters, PC tables and
# compare tracing (what libFuzzer reads), stack depth, `--cfg fuzzing`,
# debug assertions, one codegen unit.
rustflags=(
	-Cpasses=sancov-module
	-Cllvm-args=-sanitizer-coverage-level=4
	-Cllvm-args=-sanitizer-coverage-inline-8bit-counters
	-Cllvm-args=-sanitizer-coverage-pc-table
	-Cllvm-args=-sanitizer-coverage-trace-compares
	--cfg fuzzing
	-Cllvm-args=-simplifycfg-branch-fold-threshold=0
	-Cllvm-args=-sanitizer-coverage-stack-depth
	-Cdebug-assertions
	-Ccodegen-units=1
)
host=$(rustc -vV | sed -n 's/^host: //p')
[[ -n $host ]] || die "rustc -vV gives no host triple"
# libFuzzer: Debian's prebuilt one (libfuzzer-19-dev) when there, which
# saves compiling libfuzzer-sys's copy (the longest step of a clean
# build: about 2 of its 4 minutes on 2 busy cores); FUZZ_LIBFUZZER=FILE
# names another, FUZZ_LIBFUZZER= (empty) compiles libfuzzer-sys's.
libfuzzer=${FUZZ_LIBFUZZER-/usr/lib/llvm-19/lib/libFuzzer.a}
if [[ -n $libfuzzer && -f $libfuzzer ]]; then
	export CUSTOM_LIBFUZZER_PATH=$libfuzzer
else
	[[ -z $libfuzzer ]] || log "no $libfuzzer: compiling libfuzzer-sys's libFuzzer"
	unset CUSTOM_LIBFUZZER_PATH
	command -v c++ > /dev/null || die "no C++ compiler (c++) for libFuzzer (scripts/deps.sh fuzz installs g++)"
fi

btfenc=$(btfenc_release) || exit 1
"$repo_root/fuzz/seeds.sh" "$btfenc" "$target_dir/fuzz-seeds" > /dev/null || die "fuzz/seeds.sh failed"
build_start=$SECONDS
# RUSTFLAGS (not CARGO_ENCODED_RUSTFLAGS: no flag has a space) replaces
# whatever the environment had, as cargo fuzz does.
RUSTFLAGS="${rustflags[*]}" "$cargo" build --release --locked --quiet --bins \
	--manifest-path "$repo_root/fuzz/Cargo.toml" --target "$host" --target-dir "$fuzz_dir" ||
	die "building the fuzz targets failed"
echo "fuzz.sh: fuzz targets built in $((SECONDS - build_start)) s ($fuzz_dir/$host/release," \
	"libFuzzer: ${CUSTOM_LIBFUZZER_PATH:-compiled from libfuzzer-sys})"

no_aslr=()
if ((smoke)) && setarch "$(uname -m)" -R true 2> /dev/null; then
	no_aslr=(setarch "$(uname -m)" -R)
fi

failed=0
summary=()
for target in $targets; do
	binary=$fuzz_dir/$host/release/$target
	[[ -x $binary ]] || die "no fuzz target $target ($binary)"
	corpus=$target_dir/fuzz-corpus/$target
	artifacts=$target_dir/fuzz-artifacts/$target
	mkdir -p "$corpus" "$artifacts"
	# Findings only: libFuzzer also keeps slow-unit-* files, which are not.
	findings() { find "$artifacts" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l; }
	before=$(findings)
	log_file=$target_dir/fuzz-$target.log
	limits=(-timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -artifact_prefix="$artifacts/")
	started=$SECONDS
	if ((smoke)); then
		runs=$((${smoke_runs[$target]:-10000} * scale))
		# A fresh corpus: what earlier runs grew would change the inputs.
		fresh=$(mktemp -d)
		# -reload=0: no rereading of the corpus on a timer. setarch -R:
		# no address randomization, as compare tracing feeds the
		# values of pointer comparisons to the mutator.
		"${no_aslr[@]}" "$binary" "$fresh" "$target_dir/fuzz-seeds/$target" \
			-seed="$seed" -runs="$runs" -reload=0 "${limits[@]}" > "$log_file" 2>&1
		status=$?
		rm -rf "$fresh"
		# "Done RUNS runs in S second(s)" closes a run without a finding.
		last=$(grep -E '^Done [0-9]+ runs' "$log_file" | tail -n 1)
		execs=$(sed -E 's/^Done ([0-9]+) runs.*/\1/' <<< "$last")
		found=$( ((status == 0)) && echo 0/0/0 || echo "exit $status")
	else
		"$binary" "$corpus" "$target_dir/fuzz-seeds/$target" \
			-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
			-max_total_time="$seconds" "${limits[@]}" > "$log_file" 2>&1
		status=$?
		# The last progress line of fork mode: "#EXECS: cov: ... oom/timeout/crash: O/T/C ...".
		last=$(grep -E '^#[0-9]+: cov:' "$log_file" | tail -n 1)
		execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<< "$last")
		found=$(sed -nE 's/.*oom\/timeout\/crash: ([0-9]+\/[0-9]+\/[0-9]+).*/\1/p' <<< "$last")
	fi
	new=$(($(findings) - before))
	line=$(printf '%-15s %10s executions in %ss, oom/timeout/crash %s, %d new artifact(s)' \
		"$target" "${execs:-?}" "$((SECONDS - started))" "${found:-?}" "$new")
	if ((status != 0)) || [[ -z $last ]] || ((new > 0)) || [[ ${found:-x} != 0/0/0 ]]; then
		failed=1
		line+="  FAIL (log: $log_file)"
		# What CI shows of it: the panic, the input's name (smoke mode:
		# `make fuzz-smoke` on the same commit finds the same input).
		panic=$(grep -m1 -A1 "panicked at" "$log_file" | tail -n 1)
		[[ -z $panic ]] || line+=$'\n'"    $panic"
		artifact=$(grep -m1 -oE "Test unit written to [^ ]+" "$log_file")
		[[ -z $artifact ]] || line+=$'\n'"    $artifact"
	fi
	summary+=("$line")
	echo "$line"
done
echo "fuzz summary:"
printf '  %s\n' "${summary[@]}"
exit "$failed"
