# Shared helpers for the corpus/check/bench scripts. Source it; do not run.
# Everything is overridable from the environment:
#   BTFENC_CACHE      corpus cache (default ~/.cache/btfenc)
#   BTFENC_REFERENCE  pahole 1.31 reference outputs (default ../shared/reference
#                     beside the repository, as CI lays it out)
#   BTFENC            the btfenc binary (default: release build of this tree)
#   PAHOLE, BPFTOOL   the reference tools
#   BTFENC_VMLINUX    another vmlinux than the corpus one

repo_root=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
cache=${BTFENC_CACHE:-$HOME/.cache/btfenc}
reference_root=${BTFENC_REFERENCE:-$repo_root/../shared/reference}
reference=$reference_root/debian-6.1.0-56-cloud-amd64
PAHOLE=${PAHOLE:-pahole}
BPFTOOL=${BPFTOOL:-$(command -v bpftool || echo /usr/sbin/bpftool)}

# The kernel build's flags for pahole >= 1.26 (scripts/Makefile.btf), the
# ones the reference was written with.
modern_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs

# Linux 7.3 (the second corpus): its reference, and the flags its
# scripts/Makefile.btf gives a pahole >= 1.31 (the FEATURES73 list, then
# `layout` in a second --btf_features, as kbuild passes them).
reference_73=$reference_root/debian-7.3.4-cloud-amd64
features_73=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func
flags_73=(-J -j --btf_features="$features_73" --btf_features=layout --lang_exclude=rust)

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Builds (if needed) and prints the release btfenc binary.
btfenc_release() {
	if [[ -n ${BTFENC:-} ]]; then
		echo "$BTFENC"
		return
	fi
	(cd "$repo_root" && cargo build --release -q -p btfenc) >&2 || die "cargo build --release failed"
	echo "${CARGO_TARGET_DIR:-$repo_root/target}/release/btfenc"
}

# Loads VMLINUX, MODULES_DIR (Debian 6.1) and VMLINUX_73, MODULES_DIR_73
# (Debian 7.3.4) written by corpus.sh, running it first when either is
# missing; BTFENC_VMLINUX overrides the 6.1 vmlinux (e.g. a fixture, to
# try a script quickly).
load_corpus() {
	if [[ -f $cache/corpus.env ]]; then
		# shellcheck source=/dev/null
		source "$cache/corpus.env"
	fi
	if [[ ! -f ${VMLINUX:-} || ! -f ${VMLINUX_73:-} ]]; then
		"$repo_root/scripts/corpus.sh" >&2 || die "make corpus failed"
		# shellcheck source=/dev/null
		source "$cache/corpus.env"
	fi
	VMLINUX=${BTFENC_VMLINUX:-$VMLINUX}
	[[ -f $VMLINUX ]] || die "corpus vmlinux $VMLINUX is missing; rerun make corpus"
	[[ -f $VMLINUX_73 ]] || die "corpus vmlinux $VMLINUX_73 is missing; rerun make corpus"
}

# Median of the numbers on stdin, one per line.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1;
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Runs the kernel's BPF_BTF_LOAD on a raw BTF file via the test crate's
# helper binary. Exit 0 loaded, 1 rejected (log on stderr), 77 skipped.
kernel_load() {
	(cd "$repo_root" && cargo run -q --release -p btfenc-tests --bin kernel-load-btf -- "$@")
}

# Copies section NAME of ELF FILE to OUT, read-only on FILE. Fails unless
# exactly one section has that name (an in-place encoder must replace an
# existing .BTF, and the -dbg package's modules already carry one). GNU
# objcopy refuses those debug-only modules ("file format not recognized")
# and llvm-objcopy --dump-section rewrites its input, hence readelf + dd.
extract_section() {
	local file=$1 name=$2 output=$3 found
	found=$(readelf -SW "$file" | sed -n 's/^ *\[ *[0-9]*\] //p' | awk -v n="$name" '$1 == n { print $4, $5 }')
	local count
	count=$(grep -c . <<< "$found")
	if [[ -z $found || $count != 1 ]]; then
		log "$file has ${count/#0/no} $name section(s), expected exactly one"
		return 1
	fi
	local offset size
	read -r offset size <<< "$found"
	dd if="$file" of="$output" bs=64K iflag=skip_bytes,count_bytes \
		skip=$((16#$offset)) count=$((16#$size)) status=none
}

# add_trixie_sources: trixie-backports for apt (see scripts/apt-trixie.sh).
# shellcheck source=scripts/apt-trixie.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-trixie.sh"
