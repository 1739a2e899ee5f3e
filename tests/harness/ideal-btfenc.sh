#!/bin/bash
# An "ideal btfenc" made of pahole and bpftool, to check the test harness
# itself: `BTFENC_BIN=tests/harness/ideal-btfenc.sh cargo test -p btfenc-tests`
# must fail only where pahole 1.24 itself falls short (bad input reported on
# two lines or not at all, zstd, -j non-determinism, no O_TRUNC on an
# existing output, options 1.24 lacks such as --btf_features, and -V
# printing to stdout) and where this
# stand-in's text comparison is weaker than a real `btfenc diff` (type order).
set -uo pipefail
bpftool=${BPFTOOL:-$(command -v bpftool || echo /usr/sbin/bpftool)}

dump_of() { # FILE [BASE]
	local base=()
	[[ -n ${2:-} ]] && base=(-B "$2")
	"$bpftool" "${base[@]}" btf dump file "$1" 2>/dev/null
}

case ${1:-} in
dump)
	file=$2 base=
	[[ ${3:-} == --base ]] && base=$4
	dump_of "$file" "$base" || { echo "$file: cannot read BTF" >&2; exit 2; }
	;;
diff)
	a=$2 b=$3 base_a= base_b=
	shift 3
	while (($# >= 2)); do
		case $1 in --base-a) base_a=$2 ;; --base-b) base_b=$2 ;; esac
		shift 2
	done
	text_a=$(dump_of "$a" "$base_a") || { echo "$a: cannot read BTF" >&2; exit 2; }
	text_b=$(dump_of "$b" "$base_b") || { echo "$b: cannot read BTF" >&2; exit 2; }
	[[ $text_a == "$text_b" ]] && exit 0
	for kind in $(printf '%s\n%s\n' "$text_a" "$text_b" | awk '/^\[/ { print $2 }' | sort -u); do
		count_a=$(grep -c "^\[[0-9]*\] $kind " <<< "$text_a")
		count_b=$(grep -c "^\[[0-9]*\] $kind " <<< "$text_b")
		echo "$kind: a=$count_a b=$count_b only_a=0 only_b=0"
	done
	exit 1
	;;
*) exec "${PAHOLE:-pahole}" "$@" ;;
esac
