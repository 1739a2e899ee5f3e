#!/bin/bash
# check-kbuild: btfenc as the kernel build's PAHOLE (issue 5).
#
# Builds Debian's linux-source-6.1 (tinyconfig + BTF for vmlinux and
# modules, CONFIGFS_FS=m) twice, in two O= directories under the cache:
# once with Debian's pahole (the reference) and once with btfenc, then
# checks what the kernel build needs of its encoder:
#   - .config still has CONFIG_DEBUG_INFO_BTF=y (Kconfig drops it when
#     `$(PAHOLE) --version` does not answer like a pahole it accepts);
#   - vmlinux has .BTF, byte-identical to the .BTF btfenc patched into
#     .tmp_vmlinux.btf (objcopy extracted it intact), and resolve_btfids
#     printed no warning (every BTF_ID resolved);
#   - configfs.ko has .BTF split on vmlinux: bpftool -B and `btfenc dump
#     --base` read it, print the same, and its ids continue after vmlinux's;
#   - the kernel loads vmlinux's .BTF (bpf(BPF_BTF_LOAD)), pahole's too;
#   - `btfenc diff` against the pahole-built tree shows no difference
#     outside FUNC/FUNC_PROTO/VAR/DATASEC, for vmlinux and the module;
#   - an out-of-tree module (make M=... PAHOLE=...) gets split BTF too;
#   - re-encoding .tmp_vmlinux.btf detached with -j1 and -j2 gives the
#     bytes the build wrote;
#   - nothing from btfenc in the build logs, and `make install` gives a
#     btfenc (and pahole symlink) the kernel's version script reads as 131.
# It prints the build time with each encoder and the time spent in the
# encoder alone (every PAHOLE invocation goes through a wrapper that logs
# its wall and CPU time).
#
# Reuse: the source tree is unpacked once, and each tree is fully built
# only the first time. Later runs remove both vmlinux files, so make
# relinks them and redoes every BTF step: with the current btfenc, and with
# pahole so that both are timed under the same load. BTFENC_KBUILD_CLEAN=1
# starts both trees from scratch.
#
# Environment: BTFENC_CACHE (default ~/.cache/btfenc), BTFENC (the binary,
# default the release build of this tree), PAHOLE (the reference, default
# pahole), BTFENC_KBUILD_JOBS (make -j, default 2), BTFENC_NO_SKIP=1 (a
# skipped kernel load is a failure).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

jobs=${BTFENC_KBUILD_JOBS:-2}
tarball=/usr/src/linux-source-6.1.tar.xz
source_tree=$cache/linux-source-6.1
work=$cache/kbuild
failures=0

# The two trees must differ only in their encoder. By default every link
# bumps a build number and stamps the time into linux_banner, whose array
# type (const char[N]) then differs between the trees ("#9" vs "#10").
export KBUILD_BUILD_VERSION=1 KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 1970'
export KBUILD_BUILD_USER=btfenc KBUILD_BUILD_HOST=check-kbuild

fail() { log "FAIL: $*"; failures=$((failures + 1)); }
pass() { log "ok: $*"; }

for tool in make gcc flex bison bc readelf objcopy "$BPFTOOL"; do
	command -v "$tool" > /dev/null || die "$tool is missing (apt-get install linux-source-6.1 flex bison bc libssl-dev libelf-dev)"
done
pahole_bin=$(command -v "$PAHOLE") || die "no reference pahole ($PAHOLE); apt-get install dwarves"

unpack_source() {
	[[ -f $source_tree/Makefile ]] && return
	[[ -e $source_tree ]] && die "$source_tree exists but holds no kernel tree; remove it"
	[[ -f $tarball ]] || die "$tarball is missing: apt-get install linux-source-6.1"
	log "unpacking $tarball into $cache"
	mkdir -p "$cache"
	local tmp
	tmp=$(mktemp -d "$cache/.linux-source.XXXXXX")
	# Unpacked beside and renamed: an interrupted unpack is never reused.
	tar -xJf "$tarball" -C "$tmp"
	mv "$tmp/linux-source-6.1" "$source_tree"
	rmdir "$tmp"
}

# Writes an executable PAHOLE wrapper at $1 that runs encoder $2 and
# appends "start end status cpu args" to log $3 (or $BTFENC_KBUILD_TIMING)
# for each encoding invocation: wall clock start and end, exit status, and
# the encoder's user+system CPU seconds (steadier than wall time on a busy
# machine). The kernel calls `$(PAHOLE) --version` many times; only -J
# calls count.
write_wrapper() {
	local wrapper=$1 encoder=$2 timing_log=$3
	cat > "$wrapper.tmp" <<-EOF
	#!/bin/bash
	case " \$* " in *" -J "*) ;; *) exec "$encoder" "\$@" ;; esac
	start=\$(date +%s.%N)
	status=0
	"$encoder" "\$@" || status=\$?
	end=\$(date +%s.%N)
	# The second line of \`times\` is the children's "XmY.YYYs XmY.YYYs";
	# a command substitution would run it in a subshell with no children.
	times > "$timing_log.times.\$\$"
	cpu=\$(sed -n '2s/[ms]/ /gp' "$timing_log.times.\$\$" | awk '{ printf "%.3f", \$1 * 60 + \$2 + \$3 * 60 + \$4 }')
	rm -f "$timing_log.times.\$\$"
	printf '%s %s %s %s %s\n' "\$start" "\$end" "\$status" "\$cpu" "\$*" >> "\${BTFENC_KBUILD_TIMING:-$timing_log}"
	exit \$status
	EOF
	chmod +x "$wrapper.tmp"
	mv "$wrapper.tmp" "$wrapper"
}

# configure DIR WRAPPER: tinyconfig plus BTF for vmlinux and modules. Kconfig
# asks $(PAHOLE) for its version, so the wrapper must be passed here too.
configure() {
	local dir=$1 wrapper=$2
	[[ -f $dir/.config && -f $dir/.btfenc-configured ]] && return
	mkdir -p "$dir"
	make -s -C "$source_tree" O="$dir" PAHOLE="$wrapper" tinyconfig > /dev/null
	"$source_tree/scripts/config" --file "$dir/.config" \
		-e 64BIT -e BPF_SYSCALL -d DEBUG_INFO_NONE -e DEBUG_INFO \
		-e DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -e DEBUG_INFO_BTF \
		-e MODULES -e DEBUG_INFO_BTF_MODULES -m CONFIGFS_FS
	make -s -C "$source_tree" O="$dir" PAHOLE="$wrapper" olddefconfig > /dev/null
	touch "$dir/.btfenc-configured"
}

# build NAME ENCODER: configures and builds tree $work/NAME with PAHOLE
# pointing at a timing wrapper of ENCODER. Sets build_seconds, and leaves
# the build log in $work/NAME.log and the encoder timings in
# $work/NAME.timing.
build() {
	local name=$1 encoder=$2 dir=$work/$1
	local wrapper=$work/$name-pahole timing_log=$work/$name.timing
	write_wrapper "$wrapper" "$encoder" "$timing_log"
	configure "$dir" "$wrapper"
	# Whether this is the tree's first build (for the times reported).
	local full=
	[[ -f $dir/.btfenc-built ]] || full=yes
	: > "$timing_log"
	log "building $name tree ($dir): make -j$jobs PAHOLE=$encoder (log: $work/$name.log)"
	local start end
	start=$(date +%s.%N)
	if ! make -C "$source_tree" O="$dir" -j"$jobs" PAHOLE="$wrapper" > "$work/$name.log" 2>&1; then
		tail -n 30 "$work/$name.log" >&2
		die "the $name kernel build failed (log: $work/$name.log)"
	fi
	end=$(date +%s.%N)
	touch "$dir/.btfenc-built"
	build_seconds=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
	if [[ -n $full ]]; then
		echo "$build_seconds" > "$work/$name.full-build-seconds"
		build_kind="full build"
	else
		build_kind="incremental: relink and BTF at most"
	fi
}

# Sums the encoder's times in a timing log: "N calls, W s wall, C s CPU".
encoder_time() {
	awk '{ wall += $2 - $1; cpu += $4; n++; if ($3 != 0) bad++ }
		END { printf "%d call(s), %.2f s wall, %.2f s CPU%s", n, wall, cpu, bad ? ", " bad " FAILED" : "" }' "$1"
}

# The same for the vmlinux encoding alone.
vmlinux_encoder_time() {
	awk '/\.tmp_vmlinux\.btf$/ { printf "%.2f s wall, %.2f s CPU", $2 - $1, $4 }' "$1"
}

unpack_source
mkdir -p "$work"
if [[ ${BTFENC_KBUILD_CLEAN:-} == 1 ]]; then
	rm -rf "$work/pahole" "$work/btfenc"
fi
btfenc=$(btfenc_release)
# The kernel runs PAHOLE from its build directories: it must be absolute.
btfenc=$(command -v "$btfenc") || die "no btfenc at $btfenc"
[[ $btfenc == /* ]] || btfenc=$PWD/$btfenc
(cd "$repo_root" && cargo build --release -q -p btfenc-tests --bin kernel-load-btf) >&2 ||
	die "cannot build kernel-load-btf"
kernel_load_bin=${CARGO_TARGET_DIR:-$repo_root/target}/release/kernel-load-btf

# Removing vmlinux makes link-vmlinux.sh, and every module's BTF step (the
# .ko depend on vmlinux), run again: with the current btfenc, which may
# have changed since the last run, and with pahole, so that both encoders
# are timed in the same run, on the same machine load.
rm -f "$work/pahole/vmlinux" "$work/btfenc/vmlinux"
build pahole "$pahole_bin"
pahole_seconds=$build_seconds pahole_kind=$build_kind
build btfenc "$btfenc"
btfenc_seconds=$build_seconds btfenc_kind=$build_kind

P=$work/pahole
B=$work/btfenc
out=$work/out
rm -rf "$out"
mkdir -p "$out"

# --- .config ---
for tree in P B; do
	dir=${!tree}
	for option in CONFIG_DEBUG_INFO_BTF CONFIG_DEBUG_INFO_BTF_MODULES; do
		if grep -qx "$option=y" "$dir/.config"; then
			pass "${dir##*/}: .config has $option=y"
		else
			fail "${dir##*/}: .config lost $option=y (the encoder's --version was not accepted?)"
		fi
	done
done

# Kconfig's idea of the encoder: btfenc implements pahole 1.31.
version=$(sed -n 's/^CONFIG_PAHOLE_VERSION=//p' "$B/.config")
if [[ $version == 131 ]]; then
	pass "btfenc tree: Kconfig took btfenc for pahole 1.31 (CONFIG_PAHOLE_VERSION=$version)"
else
	fail "btfenc tree: CONFIG_PAHOLE_VERSION=$version, expected 131 (btfenc --version answers v1.31)"
fi

# --- build log: BTF steps ran, resolve_btfids silent ---
# resolve_btfids reports "WARN: resolve_btfids: unresolved symbol X" and
# "FAILED ..."; link-vmlinux.sh and Makefile.modfinal say when they skip BTF;
# btfenc's lines start with "btfenc" (errors, or a version banner that
# does not belong in a build log).
if grep -nE '(^|: )(WARN|FAILED)|Skipping BTF|BTF: .*(not available|too old)|^btfenc' "$work/btfenc.log"; then
	fail "the btfenc build printed the warnings above"
else
	pass "btfenc build: no resolve_btfids warning, no skipped BTF step, nothing from btfenc on stderr"
fi
if grep -q 'tmp_vmlinux.btf' "$work/btfenc.timing" && grep -q 'configfs.ko' "$work/btfenc.timing"; then
	pass "btfenc encoded .tmp_vmlinux.btf and configfs.ko"
else
	fail "btfenc was not run on both .tmp_vmlinux.btf and configfs.ko (see $work/btfenc.timing)"
fi
if awk '$3 != 0 { exit 1 }' "$work/btfenc.timing"; then
	pass "every btfenc invocation exited 0"
else
	fail "some btfenc invocations failed: $(awk '$3 != 0' "$work/btfenc.timing")"
fi

# --- sections ---
for tree in P B; do
	dir=${!tree}
	extract_section "$dir/vmlinux" .BTF "$out/${dir##*/}-vmlinux.btf" ||
		fail "${dir##*/}/vmlinux has no single .BTF"
	extract_section "$dir/fs/configfs/configfs.ko" .BTF "$out/${dir##*/}-configfs.btf" ||
		fail "${dir##*/}/configfs.ko has no single .BTF"
done
if extract_section "$B/.tmp_vmlinux.btf" .BTF "$out/btfenc-tmp_vmlinux.btf" &&
	cmp -s "$out/btfenc-tmp_vmlinux.btf" "$out/btfenc-vmlinux.btf"; then
	pass "vmlinux .BTF is byte-identical to the .BTF btfenc patched into .tmp_vmlinux.btf"
else
	fail "vmlinux .BTF differs from .tmp_vmlinux.btf's (objcopy did not extract it intact)"
fi
if readelf -lW "$B/.tmp_vmlinux.btf" > "$out/tmp_vmlinux.segments" 2>&1 &&
	grep -q LOAD "$out/tmp_vmlinux.segments"; then
	pass ".tmp_vmlinux.btf still has its program headers after patching"
else
	fail ".tmp_vmlinux.btf lost its program headers"
fi

# --- module: split on vmlinux ---
for tree in P B; do
	dir=${!tree}
	name=${dir##*/}
	if ! "$btfenc" dump "$dir/fs/configfs/configfs.ko" --base "$dir/vmlinux" > "$out/$name-configfs.btfenc-dump" 2>&1; then
		fail "$name: btfenc dump --base vmlinux cannot read configfs.ko: $(head -c 300 "$out/$name-configfs.btfenc-dump")"
		continue
	fi
	if ! "$BPFTOOL" btf dump file "$dir/fs/configfs/configfs.ko" -B "$dir/vmlinux" > "$out/$name-configfs.bpftool-dump" 2>&1; then
		fail "$name: bpftool -B vmlinux cannot read configfs.ko: $(head -c 300 "$out/$name-configfs.bpftool-dump")"
		continue
	fi
	if cmp -s "$out/$name-configfs.btfenc-dump" "$out/$name-configfs.bpftool-dump"; then
		pass "$name: configfs.ko: btfenc dump and bpftool -B print the same"
	else
		fail "$name: configfs.ko: btfenc dump and bpftool -B differ"
	fi
	# Split BTF numbers its types after the base's (btf.rst, split BTF).
	vmlinux_last=$("$BPFTOOL" btf dump file "$dir/vmlinux" | sed -n 's/^\[\([0-9]*\)\].*/\1/p' | tail -n 1)
	module_first=$(sed -n 's/^\[\([0-9]*\)\].*/\1/p' "$out/$name-configfs.bpftool-dump" | head -n 1)
	if [[ -n $module_first && $module_first == $((vmlinux_last + 1)) ]]; then
		pass "$name: configfs.ko's ids start at $module_first, right after vmlinux's last ($vmlinux_last)"
	else
		fail "$name: configfs.ko's first id is '${module_first}', vmlinux's last is $vmlinux_last: not split on it"
	fi
done

# --- kernel load ---
# pahole's BTF too: if the kernel refused that, the loader or the kernel
# would be at fault, not btfenc.
for name in pahole btfenc; do
	status=0
	"$kernel_load_bin" "$out/$name-vmlinux.btf" || status=$?
	case $status in
	0) pass "the kernel loads $name's vmlinux .BTF" ;;
	77)
		if [[ ${BTFENC_NO_SKIP:-} == 1 ]]; then
			fail "kernel load skipped (BTFENC_NO_SKIP=1)"
		else
			log "SKIPPED: kernel load of $name's vmlinux .BTF"
		fi
		;;
	*) fail "the kernel rejects $name's vmlinux .BTF" ;;
	esac
done

# --- same types as pahole's, outside functions and variables ---
# FUNC/FUNC_PROTO differ by design (btfenc follows pahole 1.31, so the
# kernel passes it --btf_gen_optimized and --skip_encoding_btf_inconsistent_proto;
# 1.24 has neither) and VAR/DATASEC with them (per-CPU variable rules).
allowed='FUNC FUNC_PROTO VAR DATASEC'
# Prints "KIND only_a only_b" for each kind a `btfenc diff` report finds
# differing (its "KIND: a=N b=N only_a=N only_b=N" lines).
differing_kinds() {
	sed -nE 's/^([A-Z_0-9]+): a=[0-9]+ b=[0-9]+ only_a=([0-9]+) only_b=([0-9]+)$/\1 \2 \3/p' "$1" |
		awk '$2 != 0 || $3 != 0'
}
compare() {
	local label=$1
	shift
	local report=$out/diff-$label.txt status=0
	"$btfenc" diff "$@" > "$report" 2>&1 || status=$?
	if ((status > 1)); then
		fail "$label: btfenc diff failed: $(head -c 300 "$report")"
		return
	fi
	local kinds unexpected=() expected=()
	kinds=$(differing_kinds "$report")
	if ((status == 1)) && [[ -z $kinds ]]; then
		fail "$label: btfenc diff reports a difference this check cannot read (see $report)"
		return
	fi
	local kind only_a only_b
	while read -r kind only_a only_b; do
		[[ -n $kind ]] || continue
		if [[ " $allowed " == *" $kind "* ]]; then
			expected+=("$kind (only pahole $only_a, only btfenc $only_b)")
		else
			unexpected+=("$kind (only pahole $only_a, only btfenc $only_b)")
		fi
	done <<< "$kinds"
	if ((${#unexpected[@]} > 0)); then
		fail "$label: btfenc's BTF differs from pahole's outside FUNC/FUNC_PROTO/VAR/DATASEC: ${unexpected[*]} (report: $report)"
	else
		pass "$label: same types as pahole's outside FUNC/FUNC_PROTO/VAR/DATASEC${expected[*]:+; differing: ${expected[*]}}"
	fi
}
compare vmlinux "$P/vmlinux" "$B/vmlinux"
compare configfs "$P/fs/configfs/configfs.ko" "$B/fs/configfs/configfs.ko" \
	--base-a "$P/vmlinux" --base-b "$B/vmlinux"

# --- out-of-tree module (make M=... PAHOLE=...) ---
# A module of our own against each tree: Makefile.modfinal encodes it
# split on that tree's vmlinux, as for an in-tree module.
write_oot_module() {
	local dir=$1
	mkdir -p "$dir"
	echo 'obj-m := btfenc_probe.o' > "$dir/Kbuild"
	cat > "$dir/btfenc_probe.c" <<-'EOF'
	// SPDX-License-Identifier: GPL-2.0
	// A module for check-kbuild: one type of its own, one from vmlinux.
	#include <linux/init.h>
	#include <linux/list.h>
	#include <linux/module.h>

	struct btfenc_probe {
		int id;
		struct list_head node;
	};

	static struct btfenc_probe probe;

	static int __init btfenc_probe_init(void)
	{
		INIT_LIST_HEAD(&probe.node);
		return 0;
	}

	static void __exit btfenc_probe_exit(void)
	{
	}

	module_init(btfenc_probe_init);
	module_exit(btfenc_probe_exit);
	MODULE_LICENSE("GPL");
	EOF
}
for tree in P B; do
	dir=${!tree}
	name=${dir##*/}
	module_dir=$work/oot-$name
	rm -rf "$module_dir"
	write_oot_module "$module_dir"
	: > "$work/oot-$name.timing"
	if ! BTFENC_KBUILD_TIMING=$work/oot-$name.timing \
		make -C "$dir" M="$module_dir" PAHOLE="$work/$name-pahole" modules > "$work/oot-$name.log" 2>&1; then
		fail "$name: out-of-tree module build failed (log: $work/oot-$name.log)"
		continue
	fi
	if grep -nE '(^|: )(WARN|FAILED)|Skipping BTF|^btfenc' "$work/oot-$name.log"; then
		fail "$name: the out-of-tree module build printed the warnings above"
	fi
	# Makefile.modfinal does not stop on the encoder's exit status.
	if ! grep -q btfenc_probe.ko "$work/oot-$name.timing" || ! awk '$3 != 0 { exit 1 }' "$work/oot-$name.timing"; then
		fail "$name: the encoder did not run, or failed, on the out-of-tree module: $(cat "$work/oot-$name.timing")"
	fi
	if ! "$BPFTOOL" btf dump file "$module_dir/btfenc_probe.ko" -B "$dir/vmlinux" > "$out/$name-oot.dump" 2>&1; then
		fail "$name: bpftool -B vmlinux cannot read the out-of-tree module's .BTF"
		continue
	fi
	# Its own struct is in the split; list_head is vmlinux's.
	if grep -q "STRUCT 'btfenc_probe'" "$out/$name-oot.dump" &&
		! grep -q "STRUCT 'list_head'" "$out/$name-oot.dump"; then
		pass "$name: out-of-tree module: split .BTF with its own struct btfenc_probe, list_head from vmlinux"
	else
		fail "$name: out-of-tree module's .BTF lacks struct btfenc_probe or repeats vmlinux's list_head (see $out/$name-oot.dump)"
	fi
done
compare oot-module "$work/oot-pahole/btfenc_probe.ko" "$work/oot-btfenc/btfenc_probe.ko" \
	--base-a "$P/vmlinux" --base-b "$B/vmlinux"

# --- reproducible from run to run ---
# The kernel build is pinned (KBUILD_BUILD_*), so the same btfenc must
# write the same .BTF as in the previous run of this check.
binary_sum=$(sha256sum < "$btfenc")
if [[ -f $work/last-run.btfenc-sum && $(cat "$work/last-run.btfenc-sum") == "$binary_sum" ]]; then
	if cmp -s "$work/last-run.vmlinux.btf" "$out/btfenc-vmlinux.btf" &&
		cmp -s "$work/last-run.configfs.btf" "$out/btfenc-configfs.btf"; then
		pass "the same btfenc wrote the same vmlinux and configfs.ko .BTF as in the previous run"
	else
		fail "the same btfenc wrote other .BTF than in the previous run (not reproducible)"
	fi
fi
cp "$out/btfenc-vmlinux.btf" "$work/last-run.vmlinux.btf"
cp "$out/btfenc-configfs.btf" "$work/last-run.configfs.btf"
echo "$binary_sum" > "$work/last-run.btfenc-sum"

# --- make install ---
# What the kernel's own version script makes of the installed binary and of
# the pahole symlink: btfenc must pass for pahole 1.31.
prefix=$work/install
rm -rf "$prefix"
if make -s -C "$repo_root" install PREFIX="$prefix" > "$work/install.log" 2>&1; then
	for installed in "$prefix/bin/btfenc" "$prefix/libexec/btfenc/pahole"; do
		number=$("$source_tree/scripts/pahole-version.sh" "$installed" 2> "$out/install-version.err")
		if [[ $number == 131 && ! -s $out/install-version.err ]]; then
			pass "make install: scripts/pahole-version.sh ${installed#"$prefix"/} says 131, quietly"
		else
			fail "make install: scripts/pahole-version.sh ${installed#"$prefix"/} says '$number' ($(head -c 200 "$out/install-version.err"))"
		fi
	done
else
	fail "make install PREFIX=$prefix failed (log: $work/install.log)"
fi

# --- reproducible for any -j ---
for j in 1 2; do
	if "$btfenc" -J -j"$j" $(PAHOLE="$work/btfenc-pahole" "$source_tree/scripts/pahole-flags.sh" | sed 's/ -j / /; s/ -j$//') \
		--btf_encode_detached="$out/vmlinux-j$j.btf" "$B/.tmp_vmlinux.btf" 2> "$out/vmlinux-j$j.err" &&
		cmp -s "$out/vmlinux-j$j.btf" "$out/btfenc-tmp_vmlinux.btf"; then
		pass "re-encoding .tmp_vmlinux.btf with -j$j gives the build's bytes"
	else
		fail "re-encoding .tmp_vmlinux.btf with -j$j gives other bytes ($(head -c 300 "$out/vmlinux-j$j.err"))"
	fi
done

# --- times ---
full_build() { cat "$work/$1.full-build-seconds" 2>/dev/null || echo "?"; }
printf '\nkernel build (make -j%s, linux-source-6.1 tinyconfig + BTF), wall seconds:\n' "$jobs"
printf '  %-8s this run %7s s (%s); full build %s s\n' pahole "$pahole_seconds" "$pahole_kind" "$(full_build pahole)"
printf '  %-8s this run %7s s (%s); full build %s s\n' btfenc "$btfenc_seconds" "$btfenc_kind" "$(full_build btfenc)"
printf 'encoder alone (every -J invocation of this run):\n'
for name in pahole btfenc; do
	printf '  %-8s %s; vmlinux alone %s; out-of-tree module %s\n' "$name" "$(encoder_time "$work/$name.timing")" \
		"$(vmlinux_encoder_time "$work/$name.timing")" "$(encoder_time "$work/oot-$name.timing" 2> /dev/null)"
done

if ((failures > 0)); then
	log "$failures check(s) FAILED"
	exit 1
fi
log "all checks passed"
