#!/bin/bash
# bench-modules: pahole vs btfenc encoding split BTF for the reference
# modules on top of the reference vmlinux.btf, as the kernel's module build
# does, alternating, $BENCH_RUNS times each. Prints per-tool medians of
# the summed wall time, CPU time and the largest peak RSS.
#
# TODO (owner to be decided): run over every module of the corpus, not
# only the reference ones, and in parallel like `make modules -jN`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

runs=${BENCH_RUNS:-3}
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"
load_corpus
btfenc=$(btfenc_release)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-J --btf_gen_floats -j --lang_exclude=rust --btf_base "$reference/vmlinux.btf")

modules=()
for file in "$reference"/modules/*.btf; do
	name=${file##*/}
	[[ $name == *.distilled* ]] && continue
	ko=$(find "$MODULES_DIR" -name "${name%.btf}.ko" -print -quit)
	[[ -n $ko ]] && modules+=("$ko")
done
(( ${#modules[@]} )) || die "none of the reference modules is in $MODULES_DIR"

# One pass over every module; appends "wall cpu max_rss_kib" to TOOL.times.
measure() {
	local tool=$1 binary=$2 ko
	: > "$out/pass"
	for ko in "${modules[@]}"; do
		/usr/bin/time -f '%e %U %S %M' -o "$out/time" \
			"$binary" "${flags[@]}" --btf_encode_detached "$out/$tool.btf" "$ko" > /dev/null
		cat "$out/time" >> "$out/pass"
	done
	awk '{ w += $1; c += $2 + $3; if ($4 > m) m = $4 } END { printf "%.2f %.2f %d\n", w, c, m }' \
		"$out/pass" >> "$out/$tool.times"
	log "$tool pass: $(tail -n1 "$out/$tool.times") (wall s, cpu s, max peak KiB)"
}

for ((run = 1; run <= runs; run++)); do
	measure pahole "$PAHOLE"
	measure btfenc "$btfenc"
done

for tool in pahole btfenc; do
	for column in 1 2 3; do
		awk -v c="$column" '{ print $c }' "$out/$tool.times" | median
	done | paste -sd' ' | awk -v t="$tool" '{ printf "%-8s wall %.2fs  cpu %.2fs  max RSS %.1f MiB\n", t, $1, $2, $3 / 1024 }'
done
echo "(${#modules[@]} modules, medians of $runs passes)"
