#!/bin/bash
# bench: pahole vs btfenc on the corpus vmlinux of each kernel (Debian
# 6.1, then 7.3.4) with the same flags (the ones Debian's 6.1 build used),
# alternating, $BENCH_RUNS times each (default 3). Prints, per kernel, the
# medians of wall time, CPU time (user+sys) and peak RSS, and
# btfenc/pahole ratios (below 1 means btfenc is better): of the medians,
# and (ratio/r) the median of the ratios within each round, with the lowest
# and highest of them. Then, per kernel, the same for the vmlinux.h of
# btfenc's BTF: bpftool format c vs btfenc dump --format c (whose outputs
# must be identical).
#
# With PAHOLE131=/path/to/pahole (a pahole 1.31, dwarves 1436daf; the repo
# installs none), that pahole is the one timed, and both tools get each
# kernel's own flags (6.1: the modern features with decl_tag_kfuncs; 7.3.4:
# Linux 7.3's, with layout), as the targets of issue 14 are measured.
#
# With BENCH_BUSY=N, N processes spin on the CPU beside every timed run,
# and the table says so.
#
# Which tool runs first alternates from round to round: on these shared
# machines the second of two back-to-back runs was measured slower, and
# the order would otherwise favour one tool.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

runs=${BENCH_RUNS:-3}
# BENCH_BUSY=N: N processes spinning on the CPU beside every timed run, as
# when other build jobs run beside the BTF step (default 0). Peak RSS then
# shows what the load costs in memory (lowered units waiting for their
# turn, freed memory held back); the vmlinux.h timing is skipped.
busy=${BENCH_BUSY:-0}
[[ $busy =~ ^[0-9]+$ ]] || die "BENCH_BUSY=$busy is not a number"
busy_pids=()
start_busy() {
	local i
	for ((i = 0; i < busy; i++)); do
		(while :; do :; done) &
		busy_pids+=($!)
	done
}
stop_busy() {
	((${#busy_pids[@]} == 0)) || kill "${busy_pids[@]}" 2> /dev/null || true
	busy_pids=()
}
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"
load_corpus
btfenc=$(btfenc_release)
out=$(mktemp -d)
trap 'stop_busy; rm -rf "$out"' EXIT
# The same flags for both tools and both kernels: the ones Debian's 6.1
# build used, which the installed pahole (1.24) understands. (Linux 7.3's
# own flags ask for features pahole 1.24 lacks.)
flags=(-J --btf_gen_floats -j --lang_exclude=rust)
pahole=$PAHOLE
pahole_label=$("$PAHOLE" --version 2>/dev/null || echo "pahole")
if [[ -n ${PAHOLE131:-} ]]; then
	[[ -x $PAHOLE131 ]] || die "PAHOLE131=$PAHOLE131 is not an executable"
	pahole=$PAHOLE131
	pahole_label="$("$PAHOLE131" --version 2>/dev/null || echo pahole) (PAHOLE131)"
fi
# BENCH_KERNELS: which corpus kernels to time (default both).
kernels=${BENCH_KERNELS:-6.1 7.3}

# One timed run of TOOL on VMLINUX; appends "wall cpu rss_kib" to
# $out/TOOL.times.
measure() {
	local tool=$1 binary=$2 vmlinux=$3
	/usr/bin/time -f '%e %U %S %M' -o "$out/time" \
		"$binary" "${kernel_flags[@]}" --btf_encode_detached "$out/$tool.btf" "$vmlinux" > /dev/null
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$out/time" >> "$out/$tool.times"
	log "$tool run: $(tail -n1 "$out/$tool.times") (wall s, cpu s, peak KiB)"
}

column_median() { awk -v c="$2" '{ print $c }' "$out/$1.times" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# The lowest and highest of the numbers on stdin, one per line, as
# "LOW-HIGH" with DIGITS decimals.
low_high() {
	sort -g | awk -v d="$1" 'NR == 1 { low = $1 } { high = $1 }
		END { printf "%." d "f-%." d "f", low, high }'
}
# btfenc's COLUMN divided by pahole's in the same round, a line per round.
round_ratios() {
	paste -d ' ' "$out/btfenc.times" "$out/pahole.times" |
		awk -v c="$1" '{ b = $c; p = $(c + 3); if (p > 0) print b / p }'
}
# Their median.
round_ratio() { round_ratios "$1" | median | awk '{ printf "%.2f", $1 }'; }
# Their lowest and highest: what one round alone could have reported.
round_ratio_range() { round_ratios "$1" | low_high 2; }

# vmlinux.h: bpftool's `btf dump file X format c` vs `btfenc dump --format
# c` on the BTF btfenc just wrote (the outputs must be identical), also
# alternating; medians and btfenc/bpftool ratios as above.
measure_c() {
	local tool=$1; shift
	/usr/bin/time -f '%e %U %S %M' -o "$out/time" "$@" > "$out/$tool.h"
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$out/time" >> "$out/$tool.times"
	log "$tool run: $(tail -n1 "$out/$tool.times") (wall s, cpu s, peak KiB)"
}
bench_c_header() {
	local run tool
	declare -A value
	for ((run = 1; run <= runs; run++)); do
		measure_c bpftool-c "$BPFTOOL" btf dump file "$out/btfenc.btf" format c
		measure_c btfenc-c "$btfenc" dump --format c "$out/btfenc.btf"
	done
	cmp -s "$out/bpftool-c.h" "$out/btfenc-c.h" || die "btfenc dump --format c differs from bpftool's format c"
	printf '%-10s %10s %10s %14s\n' "vmlinux.h" "wall s" "cpu s" "peak RSS MiB"
	for tool in bpftool-c btfenc-c; do
		value[$tool.wall]=$(column_median "$tool" 1)
		value[$tool.cpu]=$(column_median "$tool" 2)
		value[$tool.rss]=$(column_median "$tool" 3)
		printf '%-10s %10.3f %10.3f %14.1f\n' "${tool%-c}" "${value[$tool.wall]}" "${value[$tool.cpu]}" \
			"$(awk -v k="${value[$tool.rss]}" 'BEGIN { print k / 1024 }')"
	done
	printf '%-10s %10s %10s %14s\n' ratio "$(ratio "${value[btfenc-c.wall]}" "${value[bpftool-c.wall]}")" \
		"$(ratio "${value[btfenc-c.cpu]}" "${value[bpftool-c.cpu]}")" \
		"$(ratio "${value[btfenc-c.rss]}" "${value[bpftool-c.rss]}")"
	echo "(vmlinux.h: medians of $runs runs each, identical headers; ratio = btfenc / bpftool)"
	echo
}

# Alternated runs on one vmlinux, then its table.
bench_kernel() {
	local label=$1 vmlinux=$2 run tool
	rm -f "$out"/*.times
	kernel_flags=("${flags[@]}")
	if [[ -n ${PAHOLE131:-} ]]; then
		case $label in
			6.1) kernel_flags=(-J -j --btf_features="$modern_features" --lang_exclude=rust) ;;
			7.3) kernel_flags=("${flags_73[@]}") ;;
		esac
	fi
	start_busy
	for ((run = 1; run <= runs; run++)); do
		if ((run % 2)); then
			measure pahole "$pahole" "$vmlinux"
			measure btfenc "$btfenc" "$vmlinux"
		else
			measure btfenc "$btfenc" "$vmlinux"
			measure pahole "$pahole" "$vmlinux"
		fi
	done
	stop_busy
	echo "Linux $label: $vmlinux ($pahole_label; flags ${kernel_flags[*]})"
	((busy == 0)) || echo "(each run beside $busy process(es) spinning on the CPU)"
	printf '%-8s %10s %10s %14s\n' tool "wall s" "cpu s" "peak RSS MiB"
	declare -A value
	for tool in pahole btfenc; do
		value[$tool.wall]=$(column_median "$tool" 1)
		value[$tool.cpu]=$(column_median "$tool" 2)
		value[$tool.rss]=$(column_median "$tool" 3)
		printf '%-8s %10.2f %10.2f %14.1f\n' "$tool" "${value[$tool.wall]}" "${value[$tool.cpu]}" \
			"$(awk -v k="${value[$tool.rss]}" 'BEGIN { print k / 1024 }')"
	done
	printf '%-8s %10s %10s %14s\n' ratio "$(ratio "${value[btfenc.wall]}" "${value[pahole.wall]}")" \
		"$(ratio "${value[btfenc.cpu]}" "${value[pahole.cpu]}")" \
		"$(ratio "${value[btfenc.rss]}" "${value[pahole.rss]}")"
	# The same ratios taken within each round (the two tools' back-to-back
	# runs), then their median: this machine's speed drifts over tens of
	# seconds, which moves both runs of a round together but not the
	# medians of runs from different rounds.
	printf '%-8s %10s %10s %14s\n' "ratio/r" "$(round_ratio 1)" "$(round_ratio 2)" "$(round_ratio 3)"
	echo "ratio/r over the rounds: wall $(round_ratio_range 1), cpu $(round_ratio_range 2), peak RSS $(round_ratio_range 3)"
	for tool in pahole btfenc; do
		printf '%-8s peak RSS over the runs: %s MiB\n' "$tool" \
			"$(awk '{ print $3 / 1024 }' "$out/$tool.times" | low_high 1)"
	done
	echo
	((busy > 0)) || bench_c_header
}

for kernel in $kernels; do
	case $kernel in
		6.1) bench_kernel 6.1 "$VMLINUX" ;;
		7.3) bench_kernel 7.3 "$VMLINUX_73" ;;
		*) die "BENCH_KERNELS: unknown kernel $kernel (6.1, 7.3)" ;;
	esac
done
echo "(medians of $runs runs each, alternating which runs first; ratio = btfenc / pahole of the medians;"
echo " ratio/r = median over rounds of the ratio within a round, with its lowest and highest)"
