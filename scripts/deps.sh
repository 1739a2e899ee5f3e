#!/bin/bash
# The Debian packages btfenc's checks compare against or build with, in one
# place: `scripts/deps.sh test` for `make test`, `scripts/deps.sh all` for
# the kernel checks too (.ci/run). Installs what is missing when run as
# root (a fresh machine), otherwise prints the command to run. Does nothing
# when everything is there.
set -euo pipefail

# dwarves: pahole v1.24, the reference encoder; bpftool: the reference dump;
# gcc/clang/llvm/binutils/libbpf-dev: C compiled by unit tests (and
# `make fixtures`), including the libbpf dedup oracle.
# lld-14: `make fixtures` links obj/lld/ with it, and the in-place tests
# extract .BTF with llvm-objcopy as an LLVM=1 kernel build does.
# dwz: `make fixtures` compresses obj/dwz/ with it (the tests only read the
# committed files), and `make check-dwz` runs it on a vmlinux.
test_packages=(ca-certificates make gcc libc6-dev binutils clang llvm lld-14 dwarves bpftool libbpf-dev dwz)
# time: /usr/bin/time for the benchmarks; xz-utils: dpkg-deb -x of the
# corpus; the rest builds linux-source-6.1 and linux-source-6.12 (from
# bookworm-security) for check-kbuild, with gcc and with LLVM=1
# (clang-19/lld-19/llvm-19: Linux 7.3 wants clang >= 15), and
# boots it under qemu (see fetch_qemu below) with an initramfs of
# busybox-static (cpio packs it).
kernel_packages=(time xz-utils git linux-source-6.1 linux-source-6.12 flex bison bc libssl-dev libelf-dev kmod cpio rsync
	clang-19 lld-19 llvm-19 busybox-static)

# `make fuzz`, `make fuzz-smoke`: the targets build with plain cargo
# (scripts/fuzz.sh), no cargo-fuzz; libfuzzer-19-dev is the libFuzzer they
# link (LLVM 19's, prebuilt: clang-19 is its one dependency), g++ the
# compiler of libfuzzer-sys's own copy when told to use that, and of
# libstdc++ for either.
fuzz_packages=(g++ libfuzzer-19-dev)

case ${1:-test} in
	test) wanted=("${test_packages[@]}") ;;
	all) wanted=("${test_packages[@]}" "${kernel_packages[@]}" "${fuzz_packages[@]}") ;;
	fuzz) wanted=("${test_packages[@]}" "${fuzz_packages[@]}") ;;
	*) echo "usage: $0 [test|all|fuzz]" >&2; exit 2 ;;
esac

# Linux 7.3's source comes from trixie-backports (`all` only). apt learns
# of that suite, limited to amd64, with every trixie* suite pinned at 100
# so that nothing installed is ever replaced from it; the package is only
# downloaded (`apt-get download`, never `install -t`) and unpacked into the
# cache by `dpkg-deb -x`, where check-kbuild looks for it.
# add_trixie_sources writes that entry and pin (the same as corpus.sh's).
# shellcheck source=scripts/apt-trixie.sh
source "$(dirname "$0")/apt-trixie.sh"
cache=${BTFENC_CACHE:-$HOME/.cache/btfenc}
source_73=linux-source-7.3

# Downloads linux-source-7.3 and unpacks the .deb into
# $cache/linux-source-7.3-deb (its /usr/src/linux-source-7.3.tar.xz);
# check-kbuild unpacks the tarball. Kept while the version is the same.
fetch_source_73() {
	local version deb_dir=$cache/$source_73-deb
	version=$(apt-cache policy "$source_73" 2> /dev/null | sed -n 's/^ *Candidate: //p')
	if [[ -z $version || $version == "(none)" ]]; then
		echo "deps.sh: apt knows no $source_73 (is trixie-backports in the sources?)" >&2
		exit 1
	fi
	[[ -f $deb_dir/.version && $(cat "$deb_dir/.version") == "$version" ]] && return
	echo "deps.sh: downloading $source_73 $version into $cache"
	mkdir -p "$cache"
	local tmp
	tmp=$(mktemp -d "$cache/.$source_73.XXXXXX")
	(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$source_73=$version")
	dpkg-deb -x "$tmp"/"$source_73"_*.deb "$tmp/root"
	rm -rf "$deb_dir"
	mv "$tmp/root" "$deb_dir"
	echo "$version" > "$deb_dir/.version"
	rm -rf "$tmp"
}

# qemu-system-x86 (bookworm's 7.2). The machine image carries qemu-utils
# 10.0 from bookworm-backports, which Breaks qemu-system-common << 8.0, the
# exact-version dependency of bookworm's qemu-system-x86: apt cannot
# install it without downgrading qemu-utils, which is not ours to touch.
# So, unless a qemu-system-x86_64 is on the PATH already, its libraries,
# firmware (seabios) and data (qemu-system-data) are installed as usual
# and the qemu-system-x86 package itself is downloaded and unpacked into
# $cache/qemu-system-x86 with `dpkg-deb -x`, with qemu-system-common's
# files (check-kbuild runs $cache/qemu-system-x86/usr/bin/qemu-system-x86_64
# -L /usr/share/qemu with QEMU_MODULE_DIR in there).
qemu_package=qemu-system-x86
qemu_dir=$cache/qemu-system-x86
qemu_version() {
	apt-cache policy "$qemu_package" 2> /dev/null | sed -n 's/^ *Candidate: //p'
}
qemu_libraries() {
	# Every Depends but the qemu-system-common it pins exactly.
	apt-cache depends --no-recommends --no-suggests "$qemu_package=$1" |
		sed -n 's/^ *\(Pre\)\?Depends: \([a-z0-9][^ ]*\)$/\2/p' | grep -vx qemu-system-common | sort -u
}
fetch_qemu() {
	local version=$1
	[[ -f $qemu_dir/.version && $(cat "$qemu_dir/.version") == "$version" &&
		-f $qemu_dir/usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so ]] && return
	echo "deps.sh: downloading $qemu_package $version into $cache"
	mkdir -p "$cache"
	local tmp
	tmp=$(mktemp -d "$cache/.$qemu_package.XXXXXX")
	# qemu-system-common too: it holds the accelerator modules (TCG),
	# which check-kbuild finds through QEMU_MODULE_DIR.
	(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$qemu_package=$version" "qemu-system-common=$version")
	dpkg-deb -x "$tmp"/"$qemu_package"_*.deb "$tmp/root"
	dpkg-deb -x "$tmp"/qemu-system-common_*.deb "$tmp/root"
	rm -rf "$qemu_dir"
	mv "$tmp/root" "$qemu_dir"
	echo "$version" > "$qemu_dir/.version"
	rm -rf "$tmp"
}

updated=
if [[ ${1:-test} == all ]]; then
	add_trixie_sources || exit 1
	updated=$trixie_sources_updated
fi

qemu_wanted=
if [[ ${1:-test} == all ]] && ! command -v qemu-system-x86_64 > /dev/null; then
	qemu_wanted=$(qemu_version)
	if [[ -z $qemu_wanted || $qemu_wanted == "(none)" ]]; then
		[[ -n $updated ]] || apt-get update > /dev/null
		updated=yes
		qemu_wanted=$(qemu_version)
	fi
	mapfile -t qemu_deps < <(qemu_libraries "$qemu_wanted")
	wanted+=("${qemu_deps[@]}")
fi

missing=()
for package in "${wanted[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$package" 2> /dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$package")
done
if ((${#missing[@]} > 0)); then
	if ((EUID != 0)); then
		echo "deps.sh: missing packages: ${missing[*]}" >&2
		echo "deps.sh: run as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
		exit 1
	fi
	echo "deps.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	[[ -n $updated ]] || apt-get update
	updated=yes
	apt-get install -y --no-install-recommends "${missing[@]}"
fi

if [[ ${1:-test} == all ]]; then
	# An apt that has not read trixie-backports' index yet knows no 7.3.
	if [[ -z $updated ]] && ! apt-cache show "$source_73" > /dev/null 2>&1; then
		apt-get update
	fi
	fetch_source_73
	[[ -z $qemu_wanted ]] || fetch_qemu "$qemu_wanted"
fi
