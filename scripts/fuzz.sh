#!/bin/bash
# make fuzz: the fuzz targets of fuzz/ (one per reader: ELF+DWARF encoding,
# BTF reading standalone and split, the kernel's checks, relocate; see
# fuzz/src/lib.rs), built with cargo-fuzz on the stable toolchain (libFuzzer
# with coverage instrumentation and debug assertions, no sanitizer: `-s
# none`; the others need a nightly compiler), seeded from the fixtures
# (fuzz/seeds.sh), each run for FUZZ_SECONDS.
#
# libFuzzer runs in fork mode and goes on after a finding, so that one run
# reports every finding: a crash (panic), a timeout (FUZZ_TIMEOUT seconds on
# one input) or an OOM (FUZZ_RSS_MB). Findings go to
# target/fuzz-artifacts/TARGET/ (reproduce one with `cd fuzz && cargo fuzz
# run -s none TARGET FILE`); the grown corpus stays in
# target/fuzz-corpus/TARGET/ for the next run. The summary gives executions
# and findings per target; the exit status is 1 when any target found
# something.
#
# Environment: FUZZ_SECONDS (per target, default 60), FUZZ_TARGETS (default
# all), FUZZ_JOBS (parallel fuzzing processes per target, default 1),
# FUZZ_TIMEOUT (default 10), FUZZ_RSS_MB (default 2048), BTFENC_FUZZ_KERNEL=0
# (no kernel verdicts in the validate target).
set -uo pipefail
source "$(dirname "$0")/lib.sh"

seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-elf_dwarf btf_read btf_read_split validate relocate}
jobs=${FUZZ_JOBS:-1}
cargo=${CARGO:-cargo}
target_dir=${CARGO_TARGET_DIR:-$repo_root/target}
"$cargo" fuzz --version > /dev/null 2>&1 || die "cargo-fuzz is not installed (scripts/deps.sh fuzz installs it)"

btfenc=$(btfenc_release) || exit 1
"$repo_root/fuzz/seeds.sh" "$btfenc" "$target_dir/fuzz-seeds" > /dev/null || die "fuzz/seeds.sh failed"
(cd "$repo_root/fuzz" && "$cargo" fuzz build -s none) || die "cargo fuzz build failed"

failed=0
summary=()
for target in $targets; do
	corpus=$target_dir/fuzz-corpus/$target
	artifacts=$target_dir/fuzz-artifacts/$target
	mkdir -p "$corpus" "$artifacts"
	# Findings only: libFuzzer also keeps slow-unit-* files, which are not.
	findings() { find "$artifacts" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l; }
	before=$(findings)
	log_file=$target_dir/fuzz-$target.log
	(cd "$repo_root/fuzz" && "$cargo" fuzz run -s none "$target" "$corpus" "$target_dir/fuzz-seeds/$target" -- \
		-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
		-max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
		-artifact_prefix="$artifacts/") > "$log_file" 2>&1
	status=$?
	# The last progress line of fork mode: "#EXECS: cov: ... oom/timeout/crash: O/T/C ...".
	last=$(grep -E '^#[0-9]+: cov:' "$log_file" | tail -n 1)
	execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<< "$last")
	found=$(sed -nE 's/.*oom\/timeout\/crash: ([0-9]+\/[0-9]+\/[0-9]+).*/\1/p' <<< "$last")
	new=$(($(findings) - before))
	line=$(printf '%-15s %10s executions in %ss, oom/timeout/crash %s, %d new artifact(s)' \
		"$target" "${execs:-?}" "$seconds" "${found:-?}" "$new")
	if ((status != 0)) || [[ -z $last ]] || ((new > 0)) || [[ ${found:-x} != 0/0/0 ]]; then
		failed=1
		line+="  FAIL (log: $log_file)"
	fi
	summary+=("$line")
	echo "$line"
done
echo "fuzz summary:"
printf '  %s\n' "${summary[@]}"
exit "$failed"
