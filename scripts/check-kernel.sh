#!/bin/bash
# check-kernel: btfenc on Debian's real 6.1 vmlinux and modules, judged
# against pahole's outputs (the 1.31 reference in ../shared/reference and the
# 1.24 .BTF Debian's build left in vmlinux), bpftool and the kernel.
#
# Checks, one function each (run_check NAME FUNCTION); [ ] = still TODO:
#   [x] vmlinux_vs_reference   modern flags; `btfenc diff` vs reference vmlinux.btf:
#                              no difference outside FUNC/FUNC_PROTO/VAR/DATASEC,
#                              FUNC and VAR within 0.1% of the reference count
#   [x] vmlinux_vs_debian      pahole 1.24 flags vs the .BTF inside vmlinux, same rules
#   [x] vmlinux_kernel_load    the running kernel accepts our vmlinux BTF
#   [x] vmlinux_dump           `btfenc dump` == `bpftool btf dump file`
#   [x] vmlinux_determinism    -j1, -j2, -j8 byte-identical to -j
#   [x] modules_split          each reference module: split BTF on the reference
#                              vmlinux.btf, same rules as vmlinux
#   [x] modules_vs_debian      pahole 1.24 flags vs the .BTF Debian left in each
#                              reference module (split on the .BTF in vmlinux)
#   [x] modules_distilled      distilled_base: .BTF/.BTF.base vs the reference pair
#                              (in place on a copy: exactly one .BTF and .BTF.base)
#   [ ] vmlinux_in_place       -J without detached on a copy: ELF intact, .BTF ==
#                              detached output
#   [ ] modules_kernel_load    split BTF loads on top of a base (needs a base the
#                              kernel knows; today only vmlinux is loaded)
#   [ ] speed budget           fail if slower than pahole (see bench.sh)
#
# Environment: BTFENC_CHECK_OUT (default target/check-kernel), BTFENC,
# BTFENC_CACHE, BTFENC_REFERENCE, CHECK_ONLY (space-separated check names).
set -uo pipefail
source "$(dirname "$0")/lib.sh"

"$repo_root/scripts/corpus.sh" || die "make corpus failed"
load_corpus
[[ -f $reference/vmlinux.btf ]] || die "no reference at $reference (BTFENC_REFERENCE=$reference_root)"
btfenc=$(btfenc_release) || exit 1
out=${BTFENC_CHECK_OUT:-$repo_root/target/check-kernel}
mkdir -p "$out"
# Outputs are reused between checks of one run, never from an older binary.
rm -f "$out"/*.btf
modern_flags=(-J -j --btf_features="$modern_features" --lang_exclude=rust)
debian_flags=(-J --btf_gen_floats -j --lang_exclude=rust)
tolerance=0.001

# Judges `btfenc diff` output: lines `KIND: a=N b=N only_a=N only_b=N`
# (b = the reference). FUNC_PROTO and DATASEC follow FUNC and VAR, so they
# are only reported; FUNC and VAR may differ (in only_a, only_b and in the
# totals) by $tolerance of b; every other kind must match exactly.
# With JUDGE_FUNCS=ignore, FUNC and VAR are only reported too: pahole 1.24
# picks functions by rules 1.31 replaced, so only the type graph must match.
judge_diff() {
	local diff_output=$1 different=$2
	awk -v tol="$tolerance" -v different="$different" -v funcs="${JUDGE_FUNCS:-tolerate}" '
		$1 ~ /^[A-Z_0-9]+:$/ && / a=/ && / b=/ {
			kind = substr($1, 1, length($1) - 1)
			delete v
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] + 0 }
			seen++
			# Totals are compared too: a set-based diff cannot see a type
			# that dedup failed to merge (two equal copies in a).
			gap = v["a"] > v["b"] ? v["a"] - v["b"] : v["b"] - v["a"]
			if (kind == "FUNC_PROTO" || kind == "DATASEC") { verdict = "ignored" }
			else if (funcs == "ignore" && (kind == "FUNC" || kind == "VAR")) { verdict = "ignored" }
			else if (kind == "FUNC" || kind == "VAR") {
				limit = v["b"] * tol
				verdict = (v["only_a"] > limit || v["only_b"] > limit || gap > limit) ? "FAIL" : "ok"
			} else { verdict = (v["only_a"] + v["only_b"] + gap > 0) ? "FAIL" : "ok" }
			if (verdict == "FAIL") bad++
			printf "    %-10s a=%d b=%d only_a=%d only_b=%d  %s\n", kind, v["a"], v["b"], v["only_a"], v["only_b"], verdict
		}
		END {
			if (!seen && different) { print "    different, but no per-kind lines to judge"; exit 1 }
			if (!seen) { print "    identical" }
			exit bad ? 1 : 0
		}' "$diff_output"
}

# btfenc diff A B [diff options...] into FILE, then judge it. Exit 1 means
# "different", which judge_diff then weighs; anything above is an error.
diff_and_judge() {
	local report=$1; shift
	"$btfenc" diff "$@" > "$report"
	local status=$?
	if (( status > 1 )); then
		log "btfenc diff $* failed with status $status"
		return 1
	fi
	judge_diff "$report" "$status"
}

encode_vmlinux() {
	local output=$1; shift
	[[ -f $output ]] && return 0
	"$btfenc" "$@" --btf_encode_detached="$output" "$VMLINUX"
}

vmlinux_vs_reference() {
	encode_vmlinux "$out/vmlinux.btf" "${modern_flags[@]}" || return 1
	diff_and_judge "$out/vmlinux.diff" "$out/vmlinux.btf" "$reference/vmlinux.btf"
}

vmlinux_vs_debian() {
	extract_section "$VMLINUX" .BTF "$out/debian-vmlinux.btf" || return 1
	encode_vmlinux "$out/vmlinux-1.24-flags.btf" "${debian_flags[@]}" || return 1
	JUDGE_FUNCS=ignore diff_and_judge "$out/vmlinux-debian.diff" "$out/vmlinux-1.24-flags.btf" "$out/debian-vmlinux.btf"
}

# bpftool's C dump of our BTF must be a usable vmlinux.h: a CO-RE program
# reading task->pid compiles against it.
vmlinux_header_compiles() {
	encode_vmlinux "$out/vmlinux.btf" "${modern_flags[@]}" || return 1
	"$BPFTOOL" btf dump file "$out/vmlinux.btf" format c > "$out/vmlinux.h" || return 1
	cat > "$out/task_pid.bpf.c" <<-'EOF'
		#include "vmlinux.h"
		#include <bpf/bpf_helpers.h>
		#include <bpf/bpf_core_read.h>

		char LICENSE[] SEC("license") = "GPL";
		int seen_pid;

		SEC("tp/sched/sched_switch")
		int read_pid(void *ctx)
		{
			struct task_struct *task = (struct task_struct *)bpf_get_current_task();
			seen_pid = BPF_CORE_READ(task, pid);
			return 0;
		}
	EOF
	clang -target bpf -O2 -g -D__TARGET_ARCH_x86 -I"$out" -c "$out/task_pid.bpf.c" -o "$out/task_pid.bpf.o" || return 1
	echo "    vmlinux.h: $(wc -l < "$out/vmlinux.h") lines; task_pid.bpf.o built"
}

vmlinux_kernel_load() {
	encode_vmlinux "$out/vmlinux.btf" "${modern_flags[@]}" || return 1
	kernel_load "$out/vmlinux.btf"
	local status=$?
	(( status == 77 )) && { log "SKIPPED: kernel load"; return 77; }
	return "$status"
}

vmlinux_dump() {
	encode_vmlinux "$out/vmlinux.btf" "${modern_flags[@]}" || return 1
	"$BPFTOOL" btf dump file "$out/vmlinux.btf" > "$out/vmlinux.bpftool.txt" || return 1
	"$btfenc" dump "$out/vmlinux.btf" > "$out/vmlinux.btfenc.txt" || return 1
	cmp "$out/vmlinux.bpftool.txt" "$out/vmlinux.btfenc.txt"
}

vmlinux_determinism() {
	encode_vmlinux "$out/vmlinux.btf" "${modern_flags[@]}" || return 1
	local jobs
	for jobs in 1 2 8; do
		rm -f "$out/vmlinux-j$jobs.btf"
		"$btfenc" "${modern_flags[@]/#-j/-j$jobs}" --btf_encode_detached="$out/vmlinux-j$jobs.btf" "$VMLINUX" || return 1
		cmp "$out/vmlinux.btf" "$out/vmlinux-j$jobs.btf" || return 1
		echo "    -j$jobs identical to -j"
	done
}

module_path() {
	find "$MODULES_DIR" -name "$1.ko" -print -quit
}

reference_modules() {
	local file
	for file in "$reference"/modules/*.btf; do
		file=${file##*/}
		[[ $file == *.distilled* ]] || echo "${file%.btf}"
	done
}

modules_split() {
	local name ko failed=0
	for name in $(reference_modules); do
		ko=$(module_path "$name")
		[[ -n $ko ]] || { log "module $name.ko not in $MODULES_DIR"; failed=1; continue; }
		echo "  $name"
		rm -f "$out/$name.btf"
		"$btfenc" "${modern_flags[@]}" --btf_base "$reference/vmlinux.btf" \
			--btf_encode_detached="$out/$name.btf" "$ko" || { failed=1; continue; }
		diff_and_judge "$out/$name.diff" "$out/$name.btf" "$reference/modules/$name.btf" \
			--base-a "$reference/vmlinux.btf" --base-b "$reference/vmlinux.btf" || failed=1
	done
	return "$failed"
}

modules_vs_debian() {
	local name ko failed=0
	extract_section "$VMLINUX" .BTF "$out/debian-vmlinux.btf" || return 1
	for name in $(reference_modules); do
		ko=$(module_path "$name")
		[[ -n $ko ]] || { failed=1; continue; }
		echo "  $name"
		extract_section "$ko" .BTF "$out/$name.debian.btf" || { failed=1; continue; }
		rm -f "$out/$name.1.24-flags.btf"
		"$btfenc" "${debian_flags[@]}" --btf_base "$out/debian-vmlinux.btf" \
			--btf_encode_detached="$out/$name.1.24-flags.btf" "$ko" || { failed=1; continue; }
		diff_and_judge "$out/$name.debian.diff" "$out/$name.1.24-flags.btf" "$out/$name.debian.btf" \
			--base-a "$out/debian-vmlinux.btf" --base-b "$out/debian-vmlinux.btf" || failed=1
	done
	return "$failed"
}

modules_distilled() {
	local name ko copy failed=0
	for name in $(reference_modules); do
		ko=$(module_path "$name")
		[[ -n $ko ]] || { failed=1; continue; }
		echo "  $name"
		copy=$out/$name.ko
		cp "$ko" "$copy"
		"$btfenc" -J -j --btf_features="$modern_features,distilled_base" --lang_exclude=rust \
			--btf_base "$reference/vmlinux.btf" "$copy" || { failed=1; continue; }
		extract_section "$copy" .BTF "$out/$name.distilled.btf" &&
		extract_section "$copy" .BTF.base "$out/$name.distilled.base.btf" || { failed=1; continue; }
		diff_and_judge "$out/$name.distilled.base.diff" "$out/$name.distilled.base.btf" \
			"$reference/modules/$name.distilled.base.btf" || failed=1
		diff_and_judge "$out/$name.distilled.diff" "$out/$name.distilled.btf" \
			"$reference/modules/$name.distilled.btf" \
			--base-a "$out/$name.distilled.base.btf" \
			--base-b "$reference/modules/$name.distilled.base.btf" || failed=1
	done
	return "$failed"
}

passed=() failed=() skipped=()
run_check() {
	local name=$1
	if [[ -n ${CHECK_ONLY:-} && " $CHECK_ONLY " != *" $name "* ]]; then
		return
	fi
	echo "== $name"
	local start=$SECONDS
	"$name"
	local status=$?
	local took=$((SECONDS - start))
	case $status in
		0) passed+=("$name"); echo "   PASS $name (${took}s)" ;;
		77) skipped+=("$name"); echo "   SKIPPED $name" ;;
		*) failed+=("$name"); echo "   FAIL $name (${took}s)" ;;
	esac
}

run_check vmlinux_vs_reference
run_check vmlinux_vs_debian
run_check vmlinux_kernel_load
run_check vmlinux_dump
run_check vmlinux_header_compiles
run_check vmlinux_determinism
run_check modules_split
run_check modules_vs_debian
run_check modules_distilled

echo
echo "check-kernel: ${#passed[@]} passed, ${#failed[@]} failed, ${#skipped[@]} skipped (outputs in $out)"
(( ${#skipped[@]} )) && echo "!!!!!!!! SKIPPED: ${skipped[*]} !!!!!!!!"
(( ${#failed[@]} )) && { echo "FAILED: ${failed[*]}"; exit 1; }
exit 0
