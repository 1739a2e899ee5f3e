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
test_packages=(ca-certificates make gcc libc6-dev binutils clang llvm lld-14 dwarves bpftool libbpf-dev)
# time: /usr/bin/time for the benchmarks; xz-utils: dpkg-deb -x of the
# corpus; the rest builds linux-source-6.1 for check-kbuild.
kernel_packages=(time xz-utils git linux-source-6.1 flex bison bc libssl-dev libelf-dev kmod cpio rsync)

case ${1:-test} in
	test) wanted=("${test_packages[@]}") ;;
	all) wanted=("${test_packages[@]}" "${kernel_packages[@]}") ;;
	*) echo "usage: $0 [test|all]" >&2; exit 2 ;;
esac

missing=()
for package in "${wanted[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$package" 2> /dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$package")
done
((${#missing[@]} == 0)) && exit 0

if ((EUID != 0)); then
	echo "deps.sh: missing packages: ${missing[*]}" >&2
	echo "deps.sh: run as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
