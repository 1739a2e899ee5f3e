#!/bin/bash
# check-kernel: btfenc on Debian's real 6.1 vmlinux and modules, judged
# against pahole's outputs (the 1.31 reference in ../shared/reference and the
# 1.24 .BTF Debian's build left in vmlinux), bpftool and the kernel.
#
# Checks, one function each (run_check NAME FUNCTION); [ ] = still TODO:
#   [x] vmlinux_vs_reference   modern flags; `btfenc diff` vs reference vmlinux.btf:
#                              no difference in any kind, FUNC and FUNC_PROTO included
#   [x] legacy_flags_vs_reference  Linux 6.1's legacy spelling for pahole >= 1.25
#                              (no --btf_features) on vmlinux and the six reference
#                              modules: `btfenc diff` vs the reference prints
#                              nothing (pahole 1.31 gives both spellings one meaning)
#   [x] vmlinux_vs_debian      --compat=1.24 with pahole 1.24's flags vs the .BTF
#                              inside vmlinux, same rules
#   [x] vmlinux_kernel_load    the running kernel accepts our vmlinux BTF
#   [x] vmlinux_dump           `btfenc dump` == `bpftool btf dump file`
#   [x] c_dump                 `btfenc dump --format c` == `bpftool btf dump file
#                              X format c` byte for byte: our vmlinux BTF, the
#                              reference vmlinux.btf of each kernel under
#                              ../shared/reference (6.1, 7.3.4) and its modules
#                              (split with -B, and the distilled pairs)
#   [x] vmlinux_header_compiles  btfenc's vmlinux.h (== bpftool's) of our 6.1
#                              BTF and of both reference vmlinux.btf (6.1, 7.3.4):
#                              a CO-RE program reading task->pid builds with
#                              clang -target bpf (its .BTF.ext has the relocation)
#   [x] vmlinux_determinism    -j1, -j2, -j8 byte-identical to -j
#   [x] modules_split          each reference module: split BTF on the reference
#                              vmlinux.btf, same rules as vmlinux
#   [x] modules_vs_debian      --compat=1.24, 1.24 flags vs the .BTF Debian left in each
#                              reference module (split on the .BTF in vmlinux)
#   [x] modules_distilled      distilled_base: .BTF/.BTF.base vs the reference pair
#                              (in place on a copy: exactly one .BTF and .BTF.base,
#                              non-ALLOC PROGBITS; objcopy --dump-section returns
#                              the detached OUT and OUT.base)
#   [x] vmlinux_in_place_refused  -J in place on (a hard link to) Debian's
#                              vmlinux, whose .BTF is ALLOC: refused, pointing to
#                              --btf_encode_detached, file untouched
#   [x] modules_in_place       each reference module, -J --btf_base in place on a
#                              copy: exactly one .BTF (non-ALLOC PROGBITS) equal to
#                              the detached output (also via objcopy
#                              --dump-section), every other section's bytes
#                              identical, bpftool -B reads the module
#   [x] modules_relocate       distilled pairs (pahole's and ours) relocated onto
#                              vmlinux.btf: bpftool reads it; it holds every type
#                              of the direct split; with --dedup exactly those;
#                              onto Debian's 1.24 vmlinux .BTF too; onto an
#                              unrelated base: a clear error
#   [x] modules_all            every module of the corpus in one batch run on
#                              btfenc's own vmlinux BTF; each output parses with
#                              bpftool -B; any failure fails the check
#   [x] collapse_equivalence   on real modules of the corpus, dedup of the table
#                              with exact copies collapsed gives exactly the
#                              types of dedup of the CUs' types concatenated
#                              (the btf-writer property test, which skips
#                              without the corpus, so it runs here too)
#   [x] module_campaign        issue 15's DWARF mutation campaign on tcp_bbr.ko
#                              (300 mutants, fixed seed; split on the reference
#                              vmlinux.btf and standalone): no crash, no hang,
#                              each failure one line naming its file, every
#                              output loaded by the kernel (split joined with
#                              its base); BTFENC_CAMPAIGN_PAHOLE=1 adds pahole
#                              1.24's counts on the same mutants
#   [ ] modules_kernel_load    split BTF loads on top of a base (needs a base the
#                              kernel knows; today only vmlinux is loaded)
#   [ ] speed budget           fail if slower than pahole (see bench.sh)
#
# Then Debian's Linux 7.3.4 (the second corpus) against
# ../shared/reference/debian-7.3.4-cloud-amd64, with Linux 7.3's flags
# (FEATURES73, then --btf_features=layout; lib.sh flags_73), each check
# named linux73_*; outputs in $out/linux-7.3:
#   [x] linux73_vmlinux_vs_reference  as vmlinux_vs_reference
#   [x] linux73_vmlinux_layout_bytes  the 32-byte header and the 80-byte kind
#                              layout section are pahole's bytes (the header's
#                              section lengths follow from our type and string
#                              lengths; its layout is checked field by field)
#   [x] linux73_vmlinux_kernel_load   the running kernel accepts the same BTF
#                              written without the layout section (a kernel
#                              before 7.1 refuses any layout header, pahole's
#                              too: shown, not judged)
#   [x] linux73_vmlinux_dump   `btfenc dump` == `bpftool btf dump file`
#   [x] linux73_vmlinux_determinism  -j1, -j2, -j8 byte-identical to -j
#   [x] linux73_modules_split  the six reference modules, as modules_split; and
#                              each split has pahole's 32-byte header with zero
#                              layout fields (no layout section in split BTF)
#   [x] linux73_modules_distilled  the distilled pairs, as modules_distilled
#   [x] linux73_modules_in_place, linux73_modules_relocate  as for 6.1 (relocate
#                              reads the layout vmlinux as --base)
#   [x] linux73_debian_btf     Debian's own 7.3 .BTF (TYPE_TAG attributes,
#                              kind_flag 1): `btfenc dump` == bpftool's, and the
#                              first reference module encodes split on it
#   [x] linux73_modules_all    all 1,019 modules in one batch on our vmlinux BTF,
#                              bpftool -B reads each
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
# Debian's build ran pahole 1.24, which btfenc emulates only when asked.
debian_flags=(-J --compat=1.24 --btf_gen_floats -j --lang_exclude=rust)
# Linux 6.1's scripts/pahole-flags.sh for a pahole >= 1.25 (btfenc says
# v1.31): the same request as the reference's --btf_features, spelled the
# old way.
legacy61_flags=(-J --btf_gen_floats -j --lang_exclude=rust --skip_encoding_btf_inconsistent_proto --btf_gen_optimized)
tolerance=0.001

# Judges `btfenc diff` output: lines `KIND: a=N b=N only_a=N only_b=N`
# (b = the reference). FUNC_PROTO and DATASEC follow FUNC and VAR, so they
# are only reported; FUNC and VAR may differ (in only_a, only_b and in the
# totals) by $tolerance of b; every other kind must match exactly.
# With JUDGE_FUNCS=ignore, FUNC and VAR are only reported too: pahole 1.24
# picks functions by rules 1.31 replaced, so only the type graph must match.
# With JUDGE_FUNCS=exact, every kind must match exactly (FUNC and
# FUNC_PROTO included): what btfenc gives against pahole 1.31's reference.
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
			if (funcs == "exact") { verdict = (v["only_a"] + v["only_b"] + gap > 0) ? "FAIL" : "ok" }
			else if (kind == "FUNC_PROTO" || kind == "DATASEC") { verdict = "ignored" }
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
	# pahole 1.31's reference: every kind exactly, FUNC and FUNC_PROTO too.
	JUDGE_FUNCS=exact diff_and_judge "$out/vmlinux.diff" "$out/vmlinux.btf" "$reference/vmlinux.btf" --examples 50
	local status=$?
	# Any difference, by name (a = ours, b = pahole's).
	grep '^  only in' "$out/vmlinux.diff" | sed 's/^/  /'
	return "$status"
}

# Exact: any line from `btfenc diff` fails (no tolerance for FUNC or VAR).
legacy_flags_vs_reference() {
	local name ko failed=0 report
	encode_vmlinux "$out/vmlinux-legacy61.btf" "${legacy61_flags[@]}" || return 1
	report=$out/vmlinux-legacy61.diff
	"$btfenc" diff "$out/vmlinux-legacy61.btf" "$reference/vmlinux.btf" > "$report"
	case $? in
		0) echo "    vmlinux: identical" ;;
		1) echo "    vmlinux: differs"; sed 's/^/      /' "$report"; failed=1 ;;
		*) log "btfenc diff failed on vmlinux"; failed=1 ;;
	esac
	for name in $(reference_modules); do
		ko=$(module_path "$name")
		[[ -n $ko ]] || { failed=1; continue; }
		rm -f "$out/$name.legacy61.btf"
		"$btfenc" "${legacy61_flags[@]}" --btf_base "$reference/vmlinux.btf" \
			--btf_encode_detached="$out/$name.legacy61.btf" "$ko" || { failed=1; continue; }
		report=$out/$name.legacy61.diff
		"$btfenc" diff "$out/$name.legacy61.btf" "$reference/modules/$name.btf" \
			--base-a "$reference/vmlinux.btf" --base-b "$reference/vmlinux.btf" > "$report"
		case $? in
			0) echo "    $name: identical" ;;
			1) echo "    $name: differs"; sed 's/^/      /' "$report"; failed=1 ;;
			*) log "btfenc diff failed on $name"; failed=1 ;;
		esac
	done
	return "$failed"
}

vmlinux_vs_debian() {
	extract_section "$VMLINUX" .BTF "$out/debian-vmlinux.btf" || return 1
	encode_vmlinux "$out/vmlinux-1.24-flags.btf" "${debian_flags[@]}" || return 1
	JUDGE_FUNCS=ignore diff_and_judge "$out/vmlinux-debian.diff" "$out/vmlinux-1.24-flags.btf" "$out/debian-vmlinux.btf"
}

# btfenc's C dump (c_dump checks it is bpftool's) must be a usable
# vmlinux.h: a CO-RE program reading task->pid compiles against it, for our
# 6.1 vmlinux BTF and for both kernels' reference vmlinux.btf (6.1, 7.3.4).
vmlinux_header_compiles() {
	encode_vmlinux "$out/vmlinux.btf" "${modern_flags[@]}" || return 1
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
	local failed=0 label btf dir
	for label in btfenc debian-6.1.0-56-cloud-amd64 debian-7.3.4-cloud-amd64; do
		case $label in
			btfenc) btf=$out/vmlinux.btf ;;
			*) btf=$reference_root/$label/vmlinux.btf ;;
		esac
		[[ -f $btf ]] || { log "no $btf"; failed=1; continue; }
		dir=$out/header-$label
		mkdir -p "$dir"
		"$btfenc" dump --format c "$btf" > "$dir/vmlinux.h" || { failed=1; continue; }
		if clang -target bpf -O2 -g -D__TARGET_ARCH_x86 -I"$dir" -c "$out/task_pid.bpf.c" -o "$dir/task_pid.bpf.o"; then
			# The CO-RE relocation of task->pid is in the object's .BTF.ext.
			if llvm-objdump -h "$dir/task_pid.bpf.o" | grep -q '\.BTF\.ext'; then
				echo "    $label: vmlinux.h $(wc -l < "$dir/vmlinux.h") lines; task_pid.bpf.o built (with .BTF.ext)"
			else
				echo "    $label: task_pid.bpf.o has no .BTF.ext (no CO-RE relocation)"
				failed=1
			fi
		else
			echo "    $label: task_pid.bpf.c does not build against btfenc's vmlinux.h"
			failed=1
		fi
	done
	return "$failed"
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

# `btfenc dump --format c [--base B] FILE` against `bpftool [-B B] btf dump
# file FILE format c`; prints the first differing line.
same_c_dump() {
	local label=$1 file=$2 base=${3:-}
	local ours=$out/c-dump.ours.h theirs=$out/c-dump.bpftool.h
	if [[ -n $base ]]; then
		"$BPFTOOL" -B "$base" btf dump file "$file" format c > "$theirs" &&
		"$btfenc" dump --format c --base "$base" "$file" > "$ours" || { log "$label: a dump failed"; return 1; }
	else
		"$BPFTOOL" btf dump file "$file" format c > "$theirs" &&
		"$btfenc" dump --format c "$file" > "$ours" || { log "$label: a dump failed"; return 1; }
	fi
	if cmp -s "$ours" "$theirs"; then
		echo "    $label: identical ($(wc -l < "$theirs") lines)"
		return 0
	fi
	echo "    $label: DIFFERENT, first difference (< btfenc, > bpftool):"
	diff "$ours" "$theirs" | head -n 6 | sed 's/^/      /'
	return 1
}

c_dump() {
	encode_vmlinux "$out/vmlinux.btf" "${modern_flags[@]}" || return 1
	local failed=0 kernel dir file name
	same_c_dump "btfenc's vmlinux BTF" "$out/vmlinux.btf" || failed=1
	local splits
	for kernel in debian-6.1.0-56-cloud-amd64 debian-7.3.4-cloud-amd64; do
		dir=$reference_root/$kernel
		[[ -f $dir/vmlinux.btf ]] || { log "no $dir/vmlinux.btf"; failed=1; continue; }
		same_c_dump "$kernel vmlinux.btf" "$dir/vmlinux.btf" || failed=1
		# The six reference modules, each split on vmlinux.btf and as its
		# distilled pair: 12 dumps, none may be missing.
		splits=$(find "$dir/modules" -maxdepth 1 -name '*.btf' ! -name '*.distilled*' | wc -l)
		(( splits == 6 )) || { log "$kernel: $splits reference modules, not 6"; failed=1; }
		for file in "$dir"/modules/*.btf; do
			name=${file##*/}; name=${name%.btf}
			case $name in
				*.distilled.base) ;;
				*.distilled) same_c_dump "$kernel $name" "$file" "$dir/modules/${name%.distilled}.distilled.base.btf" || failed=1 ;;
				*) same_c_dump "$kernel $name" "$file" "$dir/vmlinux.btf" || failed=1 ;;
			esac
		done
	done
	rm -f "$out/c-dump.ours.h" "$out/c-dump.bpftool.h"
	return "$failed"
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
		# FUNCs follow 1.31's rules (checked exactly in modules_split), as
		# for vmlinux_vs_debian; the types must be Debian's exactly (pahole
		# 1.24 flags select libbpf 1.1's dedup).
		JUDGE_FUNCS=ignore \
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
		btf_section_is_plain "$copy" .BTF && btf_section_is_plain "$copy" .BTF.base || failed=1
		# Detached gives OUT and OUT.base; in place must hold exactly those.
		rm -f "$out/$name.distilled-detached.btf" "$out/$name.distilled-detached.btf.base"
		"$btfenc" -J -j --btf_features="$modern_features,distilled_base" --lang_exclude=rust \
			--btf_base "$reference/vmlinux.btf" --btf_encode_detached="$out/$name.distilled-detached.btf" "$ko" &&
		objcopy_returns "$copy" .BTF "$out/$name.distilled-detached.btf" &&
		objcopy_returns "$copy" .BTF.base "$out/$name.distilled-detached.btf.base" || failed=1
		diff_and_judge "$out/$name.distilled.base.diff" "$out/$name.distilled.base.btf" \
			"$reference/modules/$name.distilled.base.btf" || failed=1
		diff_and_judge "$out/$name.distilled.diff" "$out/$name.distilled.btf" \
			"$reference/modules/$name.distilled.btf" \
			--base-a "$out/$name.distilled.base.btf" \
			--base-b "$reference/modules/$name.distilled.base.btf" || failed=1
	done
	return "$failed"
}

# Compares every section of ORIGINAL with the same-index section of
# PATCHED (btfenc never renumbers sections), except .BTF, .BTF.base and the
# section name table; prints the first difference.
sections_unchanged() {
	local original=$1 patched=$2
	python3 - "$original" "$patched" <<-'PY'
	import subprocess, sys
	def table(path):
	    rows = {}
	    for line in subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True).stdout.splitlines():
	        line = line.strip()
	        if not line.startswith("[") or "]" not in line:
	            continue
	        number, rest = line[1:].split("]", 1)
	        fields = rest.split()
	        if not number.strip().isdigit() or len(fields) < 9:
	            continue
	        rows[int(number)] = (fields[0], fields[1], int(fields[3], 16), int(fields[4], 16), fields[6] if len(fields) == 10 else "")
	    return rows
	a_path, b_path = sys.argv[1], sys.argv[2]
	a, b = table(a_path), table(b_path)
	da, db = open(a_path, "rb").read(), open(b_path, "rb").read()
	for index, (name, kind, off, size, flags) in a.items():
	    if name in (".BTF", ".BTF.base", ".shstrtab"):
	        continue
	    other = b.get(index)
	    if other is None or other[0] != name or other[1] != kind or other[4] != flags:
	        sys.exit(f"section [{index}] {name} changed header: {other}")
	    if kind != "NOBITS" and da[off:off + size] != db[other[2]:other[2] + other[3]]:
	        sys.exit(f"section [{index}] {name}: bytes differ")
	print(f"    {len(a)} sections, all but .BTF/.BTF.base/.shstrtab byte-identical")
	PY
}

# Exactly one section NAME in FILE, PROGBITS and not ALLOC.
btf_section_is_plain() {
	local file=$1 name=$2 rows
	rows=$(readelf -SW "$file" | sed -n 's/^ *\[ *[0-9]*\] //p' | awk -v n="$name" '$1 == n')
	[[ $(grep -c . <<< "$rows") == 1 ]] || { log "$file: expected one $name section, got: $rows"; return 1; }
	awk '{ exit !($2 == "PROGBITS" && $7 !~ /A/) }' <<< "$rows" || { log "$file: $name is not non-ALLOC PROGBITS: $rows"; return 1; }
}

# `objcopy --dump-section NAME` of FILE is byte for byte EXPECTED.
objcopy_returns() {
	local file=$1 name=$2 expected=$3
	rm -f "$out/objcopy.dump"
	objcopy --dump-section "$name=$out/objcopy.dump" "$file" "$out/objcopy.scratch" || { log "objcopy cannot dump $name of $file"; return 1; }
	rm -f "$out/objcopy.scratch"
	cmp -s "$out/objcopy.dump" "$expected" || { log "$file: objcopy's $name differs from $expected"; return 1; }
}

vmlinux_in_place_refused() {
	local link=$out/vmlinux-link status
	rm -f "$link"
	# A hard link: if btfenc wrongly replaced the file, the rename would
	# only replace the link, never Debian's file.
	ln "$VMLINUX" "$link" 2>/dev/null || cp "$VMLINUX" "$link" || return 1
	local inode_before
	inode_before=$(stat -c %i "$link")
	"$btfenc" -J "$link" 2> "$out/vmlinux-in-place.err"
	status=$?
	cat "$out/vmlinux-in-place.err"
	(( status != 0 )) || { log "btfenc patched an ALLOC .BTF"; return 1; }
	grep -q -- --btf_encode_detached "$out/vmlinux-in-place.err" || { log "message does not point to --btf_encode_detached"; return 1; }
	[[ $(stat -c %i "$link") == "$inode_before" ]] && cmp -s "$link" "$VMLINUX" || { log "vmlinux was modified"; return 1; }
	[[ -z $(find "$out" -maxdepth 1 -name '.vmlinux-link.*tmp') ]] || { log "temporary file left behind"; return 1; }
	rm -f "$link"
}

modules_in_place() {
	local name ko copy failed=0
	for name in $(reference_modules); do
		ko=$(module_path "$name")
		[[ -n $ko ]] || { failed=1; continue; }
		echo "  $name"
		copy=$out/$name.in-place.ko
		cp "$ko" "$copy"
		[[ -f $out/$name.btf ]] || "$btfenc" "${modern_flags[@]}" --btf_base "$reference/vmlinux.btf" \
			--btf_encode_detached="$out/$name.btf" "$ko" || { failed=1; continue; }
		"$btfenc" "${modern_flags[@]}" --btf_base "$reference/vmlinux.btf" "$copy" || { failed=1; continue; }
		btf_section_is_plain "$copy" .BTF || { failed=1; continue; }
		sections_unchanged "$ko" "$copy" || { failed=1; continue; }
		extract_section "$copy" .BTF "$out/$name.in-place.btf" || { failed=1; continue; }
		cmp "$out/$name.in-place.btf" "$out/$name.btf" || { log "$name: in-place .BTF differs from the detached output"; failed=1; }
		objcopy_returns "$copy" .BTF "$out/$name.btf" || failed=1
		"$BPFTOOL" -B "$reference/vmlinux.btf" btf dump file "$copy" > /dev/null || { log "$name: bpftool -B cannot read it"; failed=1; }
		rm -f "$copy"
	done
	return "$failed"
}

# Judges a relocated split against the direct split: RULE "superset" (no
# type of the direct split missing: only_b == 0), "subset" (nothing
# beyond it: only_a == 0) or "equal" (both). Prints the per-kind lines.
judge_relocation() {
	local report=$1 rule=$2
	awk -v rule="$rule" '
		$1 ~ /^[A-Z_0-9]+:$/ && / a=/ {
			delete v
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] + 0 }
			bad_here = (rule == "superset") ? v["only_b"] > 0 : (rule == "subset") ? v["only_a"] > 0 : v["only_a"] + v["only_b"] > 0
			if (bad_here) bad++
			if (bad_here || v["only_a"] + v["only_b"] > 0)
				printf "      %s a=%d b=%d only_a=%d only_b=%d %s\n", $1, v["a"], v["b"], v["only_a"], v["only_b"], bad_here ? "FAIL" : ""
		}
		END { exit bad ? 1 : 0 }' "$report"
}

modules_relocate() {
	local name ko failed=0 pair split distilled tag
	local fixture_base=$out/unrelated-base.btf
	"$PAHOLE" -J --btf_encode_detached="$fixture_base" "$repo_root/fixtures/obj/gcc-dwarf5/kinds.o" || return 1
	extract_section "$VMLINUX" .BTF "$out/debian-vmlinux.btf" || return 1
	for name in $(reference_modules); do
		ko=$(module_path "$name")
		[[ -n $ko ]] || { failed=1; continue; }
		[[ -f $out/$name.btf ]] || "$btfenc" "${modern_flags[@]}" --btf_base "$reference/vmlinux.btf" \
			--btf_encode_detached="$out/$name.btf" "$ko" || { failed=1; continue; }
		rm -f "$out/$name.ours-distilled.btf" "$out/$name.ours-distilled.btf.base"
		"$btfenc" -J -j --btf_features="$modern_features,distilled_base" --lang_exclude=rust \
			--btf_base "$reference/vmlinux.btf" --btf_encode_detached="$out/$name.ours-distilled.btf" "$ko" || { failed=1; continue; }
		for pair in reference ours; do
			if [[ $pair == reference ]]; then
				split=$reference/modules/$name.distilled.btf distilled=$reference/modules/$name.distilled.base.btf
			else
				split=$out/$name.ours-distilled.btf distilled=$out/$name.ours-distilled.btf.base
			fi
			echo "  $name ($pair distilled pair)"
			for tag in plain dedup; do
				rm -f "$out/$name.$pair.$tag.relocated.btf"
				"$btfenc" relocate "$split" --distilled-base "$distilled" --base "$reference/vmlinux.btf" \
					-o "$out/$name.$pair.$tag.relocated.btf" $([[ $tag == dedup ]] && echo --dedup) || { failed=1; continue; }
				"$BPFTOOL" -B "$reference/vmlinux.btf" btf dump file "$out/$name.$pair.$tag.relocated.btf" > /dev/null ||
					{ log "bpftool cannot read the relocated $name"; failed=1; continue; }
				"$btfenc" diff "$out/$name.$pair.$tag.relocated.btf" "$out/$name.btf" \
					--base-a "$reference/vmlinux.btf" --base-b "$reference/vmlinux.btf" > "$out/$name.$pair.$tag.relocate.diff"
				(( $? <= 1 )) || { failed=1; continue; }
				echo "    $tag: $([[ $tag == plain ]] && echo "every direct-split type present" || echo "the direct split's types exactly")"
				judge_relocation "$out/$name.$pair.$tag.relocate.diff" "$([[ $tag == plain ]] && echo superset || echo equal)" || failed=1
			done
		done
		# The same module onto another build's BTF of this kernel (pahole
		# 1.24's, other type ids) works; onto an unrelated base it fails
		# with a message naming the type.
		if [[ ${RELOCATE_ONTO_DEBIAN:-1} == 1 ]]; then
			"$btfenc" relocate "$out/$name.ours-distilled.btf" --distilled-base "$out/$name.ours-distilled.btf.base" \
				--base "$out/debian-vmlinux.btf" -o "$out/$name.onto-debian.btf" &&
			"$BPFTOOL" -B "$out/debian-vmlinux.btf" btf dump file "$out/$name.onto-debian.btf" > /dev/null &&
				echo "    onto Debian's own vmlinux BTF: ok" || { log "$name: relocation onto Debian's vmlinux BTF failed"; failed=1; }
		fi
		if "$btfenc" relocate "$out/$name.ours-distilled.btf" --distilled-base "$out/$name.ours-distilled.btf.base" \
			--base "$fixture_base" -o "$out/$name.onto-unrelated.btf" 2> "$out/$name.onto-unrelated.err"; then
			log "$name: relocation onto an unrelated base succeeded"; failed=1
		else
			grep -q "has no match in the base BTF" "$out/$name.onto-unrelated.err" &&
				echo "    onto an unrelated base: $(cat "$out/$name.onto-unrelated.err")" ||
				{ log "$name: unclear error: $(cat "$out/$name.onto-unrelated.err")"; failed=1; }
		fi
	done
	return "$failed"
}

modules_all() {
	encode_vmlinux "$out/vmlinux.btf" "${modern_flags[@]}" || return 1
	local dir=$out/all-modules total start status
	rm -rf "$dir"; mkdir -p "$dir"
	total=$(find "$MODULES_DIR" -name '*.ko' | wc -l)
	start=$(date +%s.%N)
	"$btfenc" "${modern_flags[@]}" --btf_base "$out/vmlinux.btf" --btf_encode_detached="$dir" "$MODULES_DIR" \
		2> "$out/all-modules.err"
	status=$?
	echo "    batch of $total modules: exit $status in $(echo "$(date +%s.%N) - $start" | bc) s; $(tail -n1 "$out/all-modules.err")"
	(( status == 0 )) || { head -n5 "$out/all-modules.err"; return 1; }
	local written
	written=$(find "$dir" -name '*.btf' | wc -l)
	(( written == total )) || { log "$written outputs for $total modules"; return 1; }
	# Every output must parse on top of the base it was encoded against.
	find "$dir" -name '*.btf' -print0 | sort -z |
		xargs -0 -P2 -n1 sh -c '"$0" -B "$1" btf dump file "$2" > /dev/null 2>"$2.bpftool-err" || { echo "bpftool: $2: $(cat "$2.bpftool-err")"; exit 255; }' \
			"$BPFTOOL" "$out/vmlinux.btf"
	status=$?
	find "$dir" -name '*.bpftool-err' -empty -delete
	(( status == 0 )) || return 1
	echo "    bpftool -B read all $written outputs"
}

collapse_equivalence() {
	local log=$out/collapse-equivalence.log
	(cd "$repo_root" && BTFENC_CACHE=$cache cargo test --quiet -p btf-writer collapse::real_files -- --nocapture) \
		> "$log" 2>&1 || { tail -n 20 "$log"; return 1; }
	grep -q '3 modules checked' "$log" || { log "the property test did not find the corpus modules"; tail -n 5 "$log"; return 1; }
	echo "    af_key, tcp_bbr, nf_conntrack and the multi-CU fixtures: identical dedup results"
}

# tests/integration/causes.rs module_mutation_campaign, on the corpus.
module_campaign() {
	local log=$out/module-campaign.log ko
	ko=$(module_path tcp_bbr)
	[[ -n $ko ]] || return 1
	(cd "$repo_root" && BTFENC_BIN=$btfenc BTFENC_CAMPAIGN_MODULE=$ko BTFENC_REFERENCE=$reference_root \
		cargo test --quiet -p btfenc-tests --test integration -- --ignored --exact \
		causes::module_mutation_campaign --nocapture) > "$log" 2>&1
	local status=$?
	sed -n '/^module mutation campaign/,/problems$/p' "$log" | sed 's/^/    /'
	((status == 0)) || { grep -E 'mutant-|panicked' "$log" | head -n 20; return 1; }
}

# --- Linux 7.3 only ---------------------------------------------------

# The header and kind layout section of our vmlinux BTF against pahole's.
# The layout section must be byte-identical; so must the header, once its
# type and string lengths (which follow the types, checked by
# vmlinux_vs_reference) are ours: magic, version, flags, hdr_len, offsets
# laid out as libbpf does. The type sections are as long as pahole's; its
# string section is 1,875 bytes longer, with 202 names that none of its
# types uses (parameter names, most of them), which the lines printed
# count.
vmlinux_layout_bytes() {
	encode_vmlinux "$out/vmlinux.btf" "${modern_flags[@]}" || return 1
	python3 - "$out/vmlinux.btf" "$reference/vmlinux.btf" <<-'PY'
	import struct, sys
	def sections(path):
	    data = open(path, "rb").read()
	    fields = struct.unpack_from("<HBBIIIIIII", data)
	    magic, version, flags, hdr_len, type_off, type_len, str_off, str_len, layout_off, layout_len = fields
	    layout = data[hdr_len + layout_off:hdr_len + layout_off + layout_len]
	    return data, fields, layout
	ours, ours_fields, ours_layout = sections(sys.argv[1])
	ref, ref_fields, ref_layout = sections(sys.argv[2])
	names = "magic version flags hdr_len type_off type_len str_off str_len layout_off layout_len".split()
	for name, a, b in zip(names, ours_fields, ref_fields):
	    print(f"    {name:10} ours={a:<10} pahole={b}")
	bad = []
	if ours_layout != ref_layout or len(ref_layout) != 80:
	    bad.append(f"layout section differs: ours {ours_layout.hex()} pahole {ref_layout.hex()}")
	# The header pahole would write for our section lengths.
	_, _, _, _, _, type_len, _, str_len, _, _ = ours_fields
	expected = struct.pack("<HBBIIIIIII", ref_fields[0], ref_fields[1], ref_fields[2], ref_fields[3],
	                       0, type_len, type_len + 80, str_len, type_len, 80)
	if ref[:32] != struct.pack("<HBBIIIIIII", *ref_fields[:4], 0, ref_fields[5], ref_fields[5] + 80,
	                           ref_fields[7], ref_fields[5], 80):
	    bad.append("pahole's header is not laid out as expected (types, layout, strings)")
	if ours[:32] != expected:
	    bad.append(f"header {ours[:32].hex()} != {expected.hex()}")
	same_lengths = ours_fields[5] == ref_fields[5] and ours_fields[7] == ref_fields[7]
	print(f"    layout section: {'identical' if ours_layout == ref_layout else 'DIFFERENT'} ({len(ours_layout)} bytes);"
	      f" header: {'byte-identical' if ours[:32] == ref[:32] else 'same layout, own type/string lengths' if not bad else 'DIFFERENT'}"
	      f"{'' if same_lengths else ' (section lengths differ, below)'}")
	if not same_lengths:
	    # The types are compared by vmlinux_vs_reference; here, the names.
	    def strings(data, fields):
	        start = fields[3] + fields[6]
	        return set(data[start:start + fields[7]].split(b"\0"))
	    ours_strings, ref_strings = strings(ours, ours_fields), strings(ref, ref_fields)
	    print(f"    type_len {'equal' if ours_fields[5] == ref_fields[5] else 'DIFFERENT'};"
	          f" strings only pahole's string section holds: {len(ref_strings - ours_strings)},"
	          f" only ours: {len(ours_strings - ref_strings)}")
	for line in bad:
	    print("    " + line)
	sys.exit(1 if bad else 0)
	PY
}

# The running kernel checks the types of our 7.3 vmlinux BTF, written
# without the layout section: kernels before 7.1 refuse a header whose
# layout fields are not zero, whoever wrote it (pahole's reference is
# tried too and its result shown).
vmlinux_kernel_load_without_layout() {
	local plain=$out/vmlinux-no-layout.btf
	rm -f "$plain"
	"$btfenc" -J -j --btf_features="$features_73" --lang_exclude=rust \
		--btf_encode_detached="$plain" "$VMLINUX" || return 1
	"$btfenc" diff "$plain" "$out/vmlinux.btf" > /dev/null || { log "the BTF without layout holds other types"; return 1; }
	kernel_load "$plain"
	local status=$?
	(( status == 77 )) && { log "SKIPPED: kernel load"; return 77; }
	local with
	with=$(kernel_load "$reference/vmlinux.btf" 2>&1 | tail -n 2 | tr '\n' ' ')
	echo "    pahole's vmlinux.btf with its layout section on kernel $(uname -r): $with"
	return "$status"
}

# Split BTF with `layout`: pahole's 32-byte header, zero layout fields.
split_header_is_long_without_layout() {
	local file=$1
	python3 - "$file" <<-'PY'
	import struct, sys
	data = open(sys.argv[1], "rb").read()
	hdr_len, = struct.unpack_from("<I", data, 4)
	tail = data[24:32]
	if hdr_len != 32 or tail != bytes(8):
	    sys.exit(f"{sys.argv[1]}: hdr_len {hdr_len}, layout fields {tail.hex()}: expected 32 and zeros")
	PY
}

modules_split_73() {
	modules_split || return 1
	local name failed=0
	for name in $(reference_modules); do
		split_header_is_long_without_layout "$out/$name.btf" || failed=1
		split_header_is_long_without_layout "$reference/modules/$name.btf" || failed=1
	done
	(( failed == 0 )) && echo "    every split (ours and pahole's): 32-byte header, no layout section"
	return "$failed"
}

modules_distilled_73() {
	modules_distilled || return 1
	local name failed=0
	for name in $(reference_modules); do
		split_header_is_long_without_layout "$out/$name.distilled.btf" &&
			split_header_is_long_without_layout "$out/$name.distilled.base.btf" || failed=1
	done
	(( failed == 0 )) && echo "    every distilled pair: 32-byte headers, no layout section"
	return "$failed"
}

passed=() failed=() skipped=()
# run_check NAME [FUNCTION]: runs FUNCTION (default NAME) as check NAME.
run_check() {
	local name=$1 function=${2:-$1}
	if [[ -n ${CHECK_ONLY:-} && " $CHECK_ONLY " != *" $name "* ]]; then
		return
	fi
	echo "== $name"
	local start=$SECONDS
	"$function"
	local status=$?
	local took=$((SECONDS - start))
	case $status in
		0) passed+=("$name"); echo "   PASS $name (${took}s)" ;;
		77) skipped+=("$name"); echo "   SKIPPED $name" ;;
		*) failed+=("$name"); echo "   FAIL $name (${took}s)" ;;
	esac
}

run_check vmlinux_vs_reference
run_check legacy_flags_vs_reference
run_check vmlinux_vs_debian
# Debian's own 7.3 .BTF (pahole 1.30, then resolve_btfids) holds TYPE_TAGs
# with kind_flag set (attributes such as 'address_space(1)'): btfenc reads
# it as bpftool does, and a module encodes split on it.
debian_btf_attributes() {
	extract_section "$VMLINUX" .BTF "$out/debian-vmlinux.btf" || return 1
	"$BPFTOOL" btf dump file "$out/debian-vmlinux.btf" > "$out/debian-vmlinux.bpftool.txt" || return 1
	"$btfenc" dump "$out/debian-vmlinux.btf" > "$out/debian-vmlinux.btfenc.txt" || return 1
	cmp "$out/debian-vmlinux.bpftool.txt" "$out/debian-vmlinux.btfenc.txt" || return 1
	local name ko
	name=$(reference_modules | head -n 1)
	ko=$(module_path "$name")
	[[ -n $ko ]] || return 1
	"$btfenc" "${modern_flags[@]}" --btf_base "$out/debian-vmlinux.btf" \
		--btf_encode_detached="$out/$name.on-debian.btf" "$ko" || return 1
	"$BPFTOOL" -B "$out/debian-vmlinux.btf" btf dump file "$out/$name.on-debian.btf" > /dev/null
}

run_check vmlinux_kernel_load
run_check vmlinux_dump
run_check c_dump
run_check vmlinux_header_compiles
run_check vmlinux_determinism
run_check modules_split
run_check modules_vs_debian
run_check modules_distilled
run_check modules_in_place
run_check modules_relocate
run_check vmlinux_in_place_refused
run_check modules_all
run_check collapse_equivalence
run_check module_campaign

# Linux 7.3: the same functions on the second corpus and its reference.
reference=$reference_73
VMLINUX=$VMLINUX_73
MODULES_DIR=$MODULES_DIR_73
modern_flags=("${flags_73[@]}")
modern_features=$features_73,layout
out=$out/linux-7.3
mkdir -p "$out"
rm -f "$out"/*.btf
[[ -f $reference/vmlinux.btf ]] || die "no reference at $reference (BTFENC_REFERENCE=$reference_root)"
run_check linux73_vmlinux_vs_reference vmlinux_vs_reference
run_check linux73_vmlinux_layout_bytes vmlinux_layout_bytes
run_check linux73_vmlinux_kernel_load vmlinux_kernel_load_without_layout
run_check linux73_vmlinux_dump vmlinux_dump
run_check linux73_vmlinux_determinism vmlinux_determinism
run_check linux73_modules_split modules_split_73
run_check linux73_modules_distilled modules_distilled_73
run_check linux73_modules_in_place modules_in_place
run_check linux73_modules_relocate modules_relocate
run_check linux73_debian_btf debian_btf_attributes
run_check linux73_modules_all modules_all
out=${out%/linux-7.3}

echo
echo "check-kernel: ${#passed[@]} passed, ${#failed[@]} failed, ${#skipped[@]} skipped (outputs in $out)"
(( ${#skipped[@]} )) && echo "!!!!!!!! SKIPPED: ${skipped[*]} !!!!!!!!"
(( ${#failed[@]} )) && { echo "FAILED: ${failed[*]}"; exit 1; }
exit 0
