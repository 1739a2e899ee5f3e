#!/bin/bash
# check-kbuild: btfenc as the kernel build's PAHOLE, on every build path
# (issues 5 and 13).
#
# A matrix of kernel builds: {linux-source-6.1, linux-source-6.12,
# linux-source-7.3} x {gcc, LLVM=1 with clang-19/lld-19} (and, when
# named, 6.x with bookworm's default LLVM 14, 6.x with gcc writing
# DWARF 4 into zlib-compressed sections: the gcc-dwarf4z cells, and 6.12
# with clang's ThinLTO), each tinyconfig
# + 64BIT + BPF_SYSCALL + DEBUG_INFO (the toolchain's DWARF) +
# DEBUG_INFO_BTF + MODULES +
# DEBUG_INFO_BTF_MODULES + CONFIGFS_FS=m, plus what it takes to boot it
# (serial console, printk, initramfs, ELF and #! binaries, proc, sysfs).
# For each cell:
#   - the tree is built with PAHOLE=btfenc ("btfenc tree");
#   - the same build with Debian's pahole first, in the same tree: vmlinux
#     is removed, so make relinks it and redoes every BTF step of vmlinux
#     and the modules with pahole; Kconfig re-reads pahole's version
#     (1.24) and the kernel's own rules pick its flags, as in a build from
#     scratch (only objects depending on a changed CONFIG_PAHOLE_* symbol
#     would be recompiled: none here). What the checks need of it is kept
#     in $cw/pahole. Then the same with btfenc. This replaces a second
#     full build, which CI has no time for;
#   - btfenc's kernel is booted under qemu (TCG; KVM when asked) with an initramfs of busybox-static and configfs.ko:
#     insmod configfs.ko succeeds, /sys/kernel/btf lists vmlinux and
#     configfs, and the kernel log has no BTF complaint (read from the
#     serial log). pahole's tree is booted too when btfenc's fails, to
#     tell btfenc's fault from the machine's;
# and checks:
#   - .config keeps CONFIG_DEBUG_INFO_BTF(_MODULES)=y and Kconfig took
#     btfenc for pahole 1.31;
#   - the build log has no resolve_btfids warning that the pahole build's
#     log lacks, no skipped BTF step, nothing from btfenc;
#   - the build's BTF is what `btfenc -J` gives on the same intermediate
#     file with the same flags, with -j1 and with -j2 (byte for byte):
#       6.1 (link-vmlinux.sh encodes .tmp_vmlinux.btf in place, objcopy
#       copies that .BTF into vmlinux, Makefile.modfinal encodes each .ko
#       in place): vmlinux's and configfs.ko's .BTF sections; 6.12 the
#       same, with .tmp_vmlinux1 (the first kallsyms link) encoded in
#       place and its .BTF linked into vmlinux;
#       7.x (scripts/gen-btf.sh: `pahole --btf_encode_detached=X.BTF.1`,
#       then resolve_btfids dedups X.BTF.1 (against vmlinux for a
#       module), adds kfunc decl tags, sorts it and writes X.BTF, which
#       objcopy embeds): the encoder's output X.BTF.1 (the PAHOLE wrapper
#       keeps a copy; gen-btf.sh deletes it), for .tmp_vmlinux1 and
#       configfs.ko; and vmlinux's and configfs.ko's .BTF are byte for
#       byte what the tree's resolve_btfids writes when run again on that
#       X.BTF.1 and the same ELF (resolve_model; for pahole's pass too);
#   - on 6.x, vmlinux's .BTF is byte-identical to that of the file
#     encoded in place, which keeps its program headers;
#   - configfs.ko's .BTF is split on vmlinux (bpftool -B and btfenc dump
#     --base agree; ids continue after vmlinux's);
#   - the host kernel loads both trees' vmlinux .BTF (BPF_BTF_LOAD);
#   - `btfenc diff` against the pahole tree: no difference outside
#     FUNC/FUNC_PROTO/VAR/DATASEC (pahole 1.24 vs btfenc's 1.31 rules),
#     for vmlinux, configfs.ko and an out-of-tree module (on 6.12, which
#     asks pahole >= 1.26 for kfunc decl tags and a distilled base, also
#     bpf_kfunc DECL_TAGs and the anonymous types distilling moves into
#     the out-of-tree module's split, in btfenc's alone);
#   - an out-of-tree module (make M=... PAHOLE=...) gets split BTF (with
#     a distilled .BTF.base: on 6.12 from the encoder, on 7.x from
#     resolve_btfids --distill_base);
#   - the same btfenc writes the same BTF as in the previous run;
# and once: `make install` gives a btfenc (and pahole symlink) the
# kernel's version script reads as 131.
# A table at the end gives per cell: build, boot, module loaded, BTF
# listed, the type counts of vmlinux and configfs.ko (btfenc / pahole),
# the build times and the failed checks.
#
# Reuse: the sources are unpacked once (again when the package version
# changes), and each cell's btfenc tree is fully built the first time only.
# Later runs remove vmlinux, so make relinks it and redoes every BTF step,
# with pahole, then with the current btfenc. BTFENC_KBUILD_CLEAN=1 starts the
# trees from scratch.
#
# Environment: BTFENC_CACHE (default ~/.cache/btfenc), BTFENC (the binary,
# default the release build of this tree), PAHOLE (the reference, default
# pahole), BTFENC_KBUILD_JOBS (make -j, default the cores plus one),
# BTFENC_KBUILD_CELLS (default 6.1-gcc 6.1-llvm 6.12-gcc 7.3-gcc
# 7.3-llvm; 6.12-llvm, 6.1-llvm14 and 6.12-llvm14 with bookworm's
# default clang 14, 6.1-gcc-dwarf4z, 6.12-gcc-dwarf4z and 6.12-llvm-lto,
# too when named), BTFENC_QEMU (the
# qemu-system-x86_64 binary), BTFENC_KBUILD_ACCEL (tcg, or kvm),
# BTFENC_KBUILD_BOOT_TIMEOUT (seconds, default
# 300), BTFENC_NO_SKIP=1 (a skipped host kernel load is a failure).
# scripts/deps.sh all installs the tools, downloads linux-source-7.3 and,
# when the machine's qemu-utils keeps apt from installing it, qemu.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# One make job more than there are cores: a job waiting on the disk or a
# link step's serial part leaves a core to the next compile.
jobs=${BTFENC_KBUILD_JOBS:-$(($(nproc) + 1))}
# Five cells by default, and so in CI. An empty-cache .ci/run must stay
# under 50 minutes on 2 cores; the first compile of each cell dominates
# (README, "State of the matrix", gives the figures of the last timed
# run), which leaves no room for 6.12-llvm's.
cells=${BTFENC_KBUILD_CELLS:-6.1-gcc 6.1-llvm 6.12-gcc 7.3-gcc 7.3-llvm}
known_cells="6.1-gcc 6.1-llvm 6.1-llvm14 6.1-gcc-dwarf4z 6.12-gcc 6.12-llvm 6.12-llvm14 6.12-gcc-dwarf4z 6.12-llvm-lto 7.3-gcc 7.3-llvm"
boot_timeout=${BTFENC_KBUILD_BOOT_TIMEOUT:-300}
work=$cache/kbuild
# LLVM=1 takes clang, ld.lld, llvm-objcopy, ... from the PATH: Debian's
# LLVM 19 for the llvm cells (Linux 7.3 wants >= 15); bookworm's default
# LLVM 14 for the llvm14 cells (6.x only, named explicitly).
llvm_bin_of() {
	case $1 in
	llvm | llvm-lto) echo /usr/lib/llvm-19/bin ;;
	llvm14) echo /usr/lib/llvm-14/bin ;;
	esac
}
total_failures=0

# The two trees must differ only in their encoder. By default every link
# bumps a build number and stamps the time into linux_banner, whose array
# type (const char[N]) then differs between the trees ("#9" vs "#10").
# (Linux 7.x then also asks pahole for --btf_features=+reproducible_build.)
export KBUILD_BUILD_VERSION=1 KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 1970'
export KBUILD_BUILD_USER=btfenc KBUILD_BUILD_HOST=check-kbuild

# Per-cell state, reset by run_cell.
cell=
failures=0
fail() { log "FAIL: ${cell:+$cell: }$*"; failures=$((failures + 1)); }
pass() { log "ok: ${cell:+$cell: }$*"; }

for tool in make gcc flex bison bc readelf objcopy "$BPFTOOL"; do
	command -v "$tool" > /dev/null || die "$tool is missing (scripts/deps.sh all)"
done
pahole_bin=$(command -v "$PAHOLE") || die "no reference pahole ($PAHOLE); apt-get install dwarves"
# The guest's only program: busybox-static (no interpreter, no libraries).
busybox=/bin/busybox
[[ -x $busybox ]] && ! readelf -lW "$busybox" 2> /dev/null | grep -q INTERP ||
	die "no static $busybox (apt-get install busybox-static)"
qemu=${BTFENC_QEMU:-}
if [[ -z $qemu ]]; then
	if [[ -x $cache/qemu-system-x86/usr/bin/qemu-system-x86_64 ]]; then
		# Unpacked by deps.sh with qemu-system-common's modules (TCG is one).
		qemu=$cache/qemu-system-x86/usr/bin/qemu-system-x86_64
		export QEMU_MODULE_DIR=$cache/qemu-system-x86/usr/lib/x86_64-linux-gnu/qemu
	else
		qemu=$(command -v qemu-system-x86_64) || die "no qemu-system-x86_64 (scripts/deps.sh all)"
	fi
fi
# Firmware (seabios) and option ROMs: Debian's /usr/share/qemu links them.
qemu_args=(-L /usr/share/qemu -L /usr/share/seabios -m 256 -smp 1 -nic none -vga none -display none -no-reboot)
# TCG by default: it boots these kernels in about 15 s. KVM only when
# asked (BTFENC_KBUILD_ACCEL=kvm): on a nested host /dev/kvm can open and
# still fail (here -cpu host aborts on MSR 0x10a and the default CPU
# model never reaches the serial console).
qemu_accel=${BTFENC_KBUILD_ACCEL:-tcg}
qemu_args+=(-accel "$qemu_accel")

# unpack_source VERSION: the kernel tree $cache/linux-source-VERSION from
# Debian's tarball, unpacked again when the package version changes (the
# trees built from the old one are removed with it).
unpack_source() {
	local version=$1 tarball package_version
	local tree=$cache/linux-source-$version
	case $version in
	6.1 | 6.12)
		tarball=/usr/src/linux-source-$version.tar.xz
		package_version=$(dpkg-query -W -f='${Version}' "linux-source-$version" 2> /dev/null || echo unknown)
		;;
	*)
		tarball=$cache/linux-source-$version-deb/usr/src/linux-source-$version.tar.xz
		package_version=$(cat "$cache/linux-source-$version-deb/.version" 2> /dev/null || echo unknown)
		;;
	esac
	if [[ -f $tree/Makefile && $(cat "$tree/.btfenc-package-version" 2> /dev/null) == "$package_version" ]]; then
		return
	fi
	[[ -f $tarball ]] || die "$tarball is missing: run scripts/deps.sh all"
	log "unpacking $tarball ($package_version) into $cache"
	rm -rf "$tree" "$work/$version"-*
	mkdir -p "$cache"
	local tmp
	tmp=$(mktemp -d "$cache/.linux-source.XXXXXX")
	# Unpacked beside and renamed: an interrupted unpack is never reused.
	tar -xJf "$tarball" -C "$tmp"
	echo "$package_version" > "$tmp/linux-source-$version/.btfenc-package-version"
	mv "$tmp/linux-source-$version" "$tree"
	rmdir "$tmp"
}

# Writes an executable PAHOLE wrapper at $1 that runs encoder $2 and
# appends "start end status cpu args" to log $3 (or $BTFENC_KBUILD_TIMING)
# for each encoding invocation: wall clock start and end, exit status, and
# the encoder's user+system CPU seconds (steadier than wall time on a busy
# machine). A detached output (--btf_encode_detached=F, Linux 7.x's
# X.BTF.1, which gen-btf.sh deletes) is copied into directory $4. The
# kernel calls `$(PAHOLE) --version` many times; only -J calls count.
write_wrapper() {
	local wrapper=$1 encoder=$2 timing_log=$3 keep_dir=$4
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
	for arg in "\$@"; do
		case \$arg in --btf_encode_detached=*)
			out=\${arg#--btf_encode_detached=}
			[[ \$status != 0 || ! -f \$out ]] || cp "\$out" "$keep_dir/\${out##*/}"
		esac
	done
	exit \$status
	EOF
	chmod +x "$wrapper.tmp"
	mv "$wrapper.tmp" "$wrapper"
}

# kmake DIR ARGS...: make in the cell's source tree with O=DIR, with the
# cell's toolchain.
kmake() {
	local dir=$1
	shift
	if [[ $toolchain == llvm* ]]; then
		PATH=$llvm_bin:$PATH nice -n 5 make -C "$source_tree" O="$dir" LLVM=1 "$@"
	else
		nice -n 5 make -C "$source_tree" O="$dir" "$@"
	fi
}

# configure DIR WRAPPER: tinyconfig plus BTF for vmlinux and modules, plus
# the least that boots it under qemu to a shell on the serial console.
# Kconfig asks $(PAHOLE) for its version, so the wrapper is passed here.
# What tinyconfig turns on that a serial-console boot of an uncompressed
# initramfs never uses goes, to keep an empty-cache CI run within its
# budget: the virtual terminal with the input layer, HID and the VGA
# console under it (about 6% of a cell's first build), the initramfs
# decompressors other than gzip (zstd alone is about 1%), and xz for
# bzImage (gzip is faster, in every build pass). None of them adds a BTF
# rule the other objects do not exercise.
config_options=(
	-e 64BIT -e BPF_SYSCALL -d DEBUG_INFO_NONE -e DEBUG_INFO
	-e DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -e DEBUG_INFO_BTF
	-e MODULES -e DEBUG_INFO_BTF_MODULES -m CONFIGFS_FS
	-e PRINTK -e TTY -e SERIAL_8250 -e SERIAL_8250_CONSOLE
	-e BLK_DEV_INITRD -e BINFMT_ELF -e BINFMT_SCRIPT -e PROC_FS -e SYSFS
	-e EXPERT -d VT -d INPUT -d HID_SUPPORT
	-d RD_BZIP2 -d RD_LZMA -d RD_XZ -d RD_LZO -d RD_LZ4 -d RD_ZSTD
	-d KERNEL_XZ -e KERNEL_GZIP
)
# The gcc-dwarf4z cells' debug info: DWARF 4 rather than gcc's default
# 5, in zlib-compressed sections (SHF_COMPRESSED, in vmlinux and in every
# relocatable .ko, whose relocations apply to the decompressed bytes).
# 6.1 calls the compression DEBUG_INFO_COMPRESSED, 6.12 has a choice of
# it; olddefconfig drops the name a tree does not have.
dwarf4z_options=(
	-d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -e DEBUG_INFO_DWARF4
	-e DEBUG_INFO_COMPRESSED -d DEBUG_INFO_COMPRESSED_NONE -e DEBUG_INFO_COMPRESSED_ZLIB
)
# The llvm-lto cells: clang's ThinLTO, as Android's kernels are built
# (modules are LTO links too).
lto_options=(-d LTO_NONE -e LTO_CLANG_THIN)
configure() {
	local dir=$1 wrapper=$2 stamp options=("${config_options[@]}")
	[[ $toolchain != gcc-dwarf4z ]] || options+=("${dwarf4z_options[@]}")
	[[ $toolchain != llvm-lto ]] || options+=("${lto_options[@]}")
	# The stamp holds the options a tree was configured with: a tree
	# configured otherwise (an older version of this list) is configured
	# again, and make then rebuilds what the change touches.
	stamp=$(printf '%s ' "${options[@]}")
	[[ -f $dir/.config && -f $dir/.btfenc-configured && $(< "$dir/.btfenc-configured") == "$stamp" ]] && return
	mkdir -p "$dir"
	kmake "$dir" -s PAHOLE="$wrapper" tinyconfig > /dev/null
	"$source_tree/scripts/config" --file "$dir/.config" "${options[@]}"
	kmake "$dir" -s PAHOLE="$wrapper" olddefconfig > /dev/null
	local option
	for option in VT INPUT HID KERNEL_XZ RD_ZSTD; do
		! grep -q "^CONFIG_$option=y" "$dir/.config" || die "$cell: Kconfig kept CONFIG_$option"
	done
	if [[ $toolchain == llvm-lto ]]; then
		grep -q '^CONFIG_LTO_CLANG_THIN=y' "$dir/.config" || die "$cell: Kconfig dropped LTO_CLANG_THIN"
	fi
	if [[ $toolchain == gcc-dwarf4z ]]; then
		grep -q '^CONFIG_DEBUG_INFO_DWARF4=y' "$dir/.config" || die "$cell: Kconfig dropped DEBUG_INFO_DWARF4"
		grep -qE '^CONFIG_DEBUG_INFO_COMPRESSED(_ZLIB)?=y' "$dir/.config" ||
			die "$cell: Kconfig dropped the zlib compression of the debug info"
	fi
	echo "$stamp" > "$dir/.btfenc-configured"
}

# build NAME ENCODER: (re)builds the cell's tree with PAHOLE pointing at a
# timing wrapper of ENCODER; vmlinux is removed first, so every BTF step
# runs. Sets build_seconds and build_kind; the build log is $cw/NAME.log,
# the encoder timings $cw/NAME.timing, the detached outputs $cw/NAME-kept.
# Returns make's status.
build() {
	local name=$1 encoder=$2 dir=$cw/btfenc
	local wrapper=$cw/$name-pahole timing_log=$cw/$name.timing
	rm -rf "$cw/$name-kept"
	mkdir -p "$cw/$name-kept"
	write_wrapper "$wrapper" "$encoder" "$timing_log" "$cw/$name-kept"
	configure "$dir" "$wrapper"
	local full=
	[[ -f $dir/.btfenc-built ]] || full=yes
	# 7.x links vmlinux.unstripped (link-vmlinux.sh: .tmp_vmlinux1,
	# gen-btf.sh, the kallsyms links) and makes vmlinux from it with
	# objcopy: removing vmlinux alone would only redo that objcopy.
	rm -f "$dir/vmlinux" "$dir/vmlinux.unstripped"
	: > "$timing_log"
	log "$cell: building the $name tree: make -j$jobs PAHOLE=$encoder${full:+ (full build)} (log: $cw/$name.log)"
	local start end status=0 cpu_start cpu_end
	start=$(date +%s.%N)
	children_cpu > "$cw/.cpu"
	cpu_start=$(< "$cw/.cpu")
	kmake "$dir" -j"$jobs" PAHOLE="$wrapper" > "$cw/$name.log" 2>&1 || status=$?
	children_cpu > "$cw/.cpu"
	cpu_end=$(< "$cw/.cpu")
	end=$(date +%s.%N)
	build_seconds=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", e - s }')
	# CPU time predicts the wall time on an idle machine (CPU / jobs)
	# better than this run's wall time on a busy one.
	build_cpu=$(awk -v s="$cpu_start" -v e="$cpu_end" 'BEGIN { printf "%.0f", e - s }')
	if ((status != 0)); then
		tail -n 30 "$cw/$name.log" >&2
		return "$status"
	fi
	touch "$dir/.btfenc-built"
	if [[ -n $full ]]; then
		echo "${build_seconds}s wall, ${build_cpu}s CPU" > "$cw/first-build-seconds"
		build_kind=full
	else
		build_kind=relink
	fi
}

# The CPU seconds (user + system) this shell's finished children used so
# far: the second line of `times`, which must run in this shell (in a
# command substitution's subshell it would see no children).
children_cpu() {
	times > "$cw/.times"
	sed -n '2s/[ms]/ /gp' "$cw/.times" | awk '{ printf "%.1f", $1 * 60 + $2 + $3 * 60 + $4 }'
}

# Sums the encoder's times in a timing log: "N calls, W s wall, C s CPU".
encoder_time() {
	awk '{ wall += $2 - $1; cpu += $4; n++; if ($3 != 0) bad++ }
		END { printf "%d call(s), %.2f s wall, %.2f s CPU%s", n, wall, cpu, bad ? ", " bad " FAILED" : "" }' "$1"
}

# Prints "KIND only_a only_b" for each kind a `btfenc diff` report finds
# differing (its "KIND: a=N b=N only_a=N only_b=N" lines).
differing_kinds() {
	sed -nE 's/^([A-Z_0-9]+): a=[0-9]+ b=[0-9]+ only_a=([0-9]+) only_b=([0-9]+)$/\1 \2 \3/p' "$1" |
		awk '$2 != 0 || $3 != 0'
}

# only_in_b_beyond LABEL KINDS MATCH WHAT: fails when compare's report for
# LABEL lists a type of KINDS (an extended regex of kind names) only in
# btfenc's BTF that MATCH (its kind and name, as the report prints them)
# does not describe: the kinds a cell allows in btfenc's alone, narrowed
# to WHAT.
only_in_b_beyond() {
	local label=$1 kinds=$2 match=$3 what=$4 others
	others=$(grep -E "^  only in b: ($kinds) " "$out/diff-$label.txt" | grep -vE "^  only in b: $match " | head -n 3 || true)
	if [[ -n $others ]]; then
		fail "$label: types only in btfenc's BTF that are not $what: $(tr '\n' '|' <<< "$others")"
	fi
}

# compare LABEL ALLOWED A B [diff options]: `btfenc diff A B`; a difference
# in a kind outside ALLOWED (kind names, or KIND:b for "only in B") fails.
compare() {
	local label=$1 allowed=$2
	shift 2
	local report=$out/diff-$label.txt status=0
	# Every differing type listed, for only_in_b_beyond.
	"$btfenc" diff --examples 1000000 "$@" > "$report" 2>&1 || status=$?
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
		if [[ " $allowed " == *" $kind "* ]] || [[ $only_a == 0 && " $allowed " == *" $kind:b "* ]]; then
			expected+=("$kind (only A $only_a, only B $only_b)")
		else
			unexpected+=("$kind (only A $only_a, only B $only_b)")
		fi
	done <<< "$kinds"
	if ((${#unexpected[@]} > 0)); then
		fail "$label: differs outside {$allowed}: ${unexpected[*]} (report: $report)"
	else
		pass "$label: same types outside {$allowed}${expected[*]:+; differing: ${expected[*]}}"
	fi
}

# Number of types in a BTF (raw or ELF), split on BASE when given.
type_count() {
	local file=$1 base=${2:-}
	"$btfenc" dump "$file" ${base:+--base "$base"} 2> /dev/null | grep -c '^\[' || true
}

# The encoder's command line for FILE in timing log LOG (the last -J call
# whose last argument is FILE), without its -j options.
logged_flags() {
	local log=$1 file=$2
	awk -v f="$file" '$NF == f { line = $0 } END { print line }' "$log" |
		cut -d' ' -f5- | tr ' ' '\n' | grep -vE '^(-J|-j[0-9]*|--jobs(=.*)?)$' | sed '$d' | tr '\n' ' '
}

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
	MODULE_DESCRIPTION("btfenc check-kbuild probe");
	MODULE_LICENSE("GPL");
	EOF
}

# oot_module NAME: an out-of-tree module (make M=... PAHOLE=...) built
# against the cell's tree as it is now (vmlinux from NAME's pass), in
# $cw/oot-NAME; Makefile.modfinal encodes it split on that vmlinux.
oot_module() {
	local name=$1 dir=$cw/btfenc
	local module_dir=$cw/oot-$name
	rm -rf "$module_dir"
	write_oot_module "$module_dir"
	: > "$cw/oot-$name.timing"
	if ! BTFENC_KBUILD_TIMING=$cw/oot-$name.timing \
		kmake "$dir" M="$module_dir" PAHOLE="$cw/$name-pahole" modules > "$cw/oot-$name.log" 2>&1; then
		fail "$name: out-of-tree module build failed (log: $cw/oot-$name.log)"
		return
	fi
	if grep -nE '(^|: )(WARN|FAILED)|Skipping BTF|^btfenc' "$cw/oot-$name.log"; then
		fail "$name: the out-of-tree module build printed the warnings above"
	fi
	# Makefile.modfinal does not stop on the encoder's exit status.
	if ! grep -q btfenc_probe.ko "$cw/oot-$name.timing" || ! awk '$3 != 0 { exit 1 }' "$cw/oot-$name.timing"; then
		fail "$name: the encoder did not run, or failed, on the out-of-tree module: $(cat "$cw/oot-$name.timing")"
	fi
	# A distilled .BTF.base where the kernel asks for one: on 7.x
	# resolve_btfids writes it whatever the encoder; on 6.12 the encoder
	# does, when Makefile.btf takes it for pahole >= 1.26 (so btfenc's
	# pass, not pahole 1.24's).
	local want_base=
	if [[ -n $distilled && (-n $seven || $name == btfenc) ]]; then
		want_base=yes
	fi
	if [[ -n $want_base ]]; then
		if extract_section "$module_dir/btfenc_probe.ko" .BTF.base "$out/$name-oot.btf.base"; then
			pass "$name: out-of-tree module: a .BTF.base beside its .BTF"
		else
			fail "$name: out-of-tree module: no single .BTF.base (the kernel asks for a distilled base)"
		fi
	fi
	# Read as libbpf does: with a distilled .BTF.base the split is
	# relocated onto vmlinux.
	if ! "$btfenc" dump "$module_dir/btfenc_probe.ko" --base "$dir/vmlinux" > "$out/$name-oot.dump" 2>&1; then
		fail "$name: btfenc dump --base vmlinux cannot read the out-of-tree module's .BTF: $(head -c 300 "$out/$name-oot.dump")"
		return
	fi
	# Its own struct is in the split; list_head is vmlinux's.
	if grep -q "STRUCT 'btfenc_probe'" "$out/$name-oot.dump" &&
		! grep -q "STRUCT 'list_head'" "$out/$name-oot.dump"; then
		pass "$name: out-of-tree module: split .BTF with its own struct btfenc_probe, list_head from vmlinux${want_base:+ (relocated from its .BTF.base)}"
	else
		fail "$name: out-of-tree module's .BTF lacks struct btfenc_probe or repeats vmlinux's list_head (see $out/$name-oot.dump)"
	fi
}

# make_initramfs TREE OUT: an uncompressed cpio (the kernel needs no
# decompressor for it) with busybox, configfs.ko and an /init that loads
# the module and prints what the check reads between markers, then
# reboots (qemu -no-reboot exits). Packed by the tree's own gen_init_cpio,
# which needs no root for /dev/console.
make_initramfs() {
	local dir=$1 output=$2 root=$out/initramfs
	rm -rf "$root"
	mkdir -p "$root"
	cat > "$root/init" <<-'EOF'
	#!/bin/sh
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	echo "BTFENC-BOOT-OK $(uname -r)"
	if insmod /configfs.ko; then echo BTFENC-INSMOD-OK; else echo "BTFENC-INSMOD-FAILED $?"; fi
	echo BTFENC-BTF-BEGIN
	ls /sys/kernel/btf
	echo BTFENC-BTF-END
	echo BTFENC-DMESG-BEGIN
	dmesg
	echo BTFENC-DMESG-END
	reboot -f
	EOF
	{
		echo "dir /dev 755 0 0"
		echo "nod /dev/console 600 0 0 c 5 1"
		echo "dir /proc 755 0 0"
		echo "dir /sys 755 0 0"
		echo "dir /bin 755 0 0"
		echo "file /bin/busybox $busybox 755 0 0"
		for applet in sh mount insmod ls dmesg reboot uname cat; do
			echo "slink /bin/$applet busybox 777 0 0"
		done
		echo "file /configfs.ko $dir/fs/configfs/configfs.ko 644 0 0"
		echo "file /init $root/init 755 0 0"
	} > "$root/list"
	"$dir/usr/gen_init_cpio" "$root/list" > "$output"
}

# boot NAME: boots tree $cw/NAME's bzImage with the initramfs; the serial
# log is $out/boot-NAME.log. Sets boot_ok, module_ok, btf_ok, quiet_ok
# (yes/no) and boot_seconds.
boot() {
	local name=$1 dir=$cw/$1
	local serial=$out/boot-$name.log initramfs=$out/initramfs-$name.cpio
	boot_ok=no module_ok=no btf_ok=no quiet_ok=no boot_seconds=0
	if ! make_initramfs "$dir" "$initramfs" 2> "$out/initramfs-$name.err"; then
		fail "$name: cannot make the initramfs: $(head -c 300 "$out/initramfs-$name.err")"
		return
	fi
	local start end status=0
	start=$(date +%s)
	timeout "$boot_timeout" "$qemu" "${qemu_args[@]}" -kernel "$dir/arch/x86/boot/bzImage" \
		-initrd "$initramfs" -append "console=ttyS0 panic=-1 rdinit=/init" \
		-serial "file:$serial" < /dev/null > "$out/qemu-$name.out" 2>&1 || status=$?
	end=$(date +%s)
	boot_seconds=$((end - start))
	tr -d '\r' < "$serial" > "$serial.txt"
	if ((status != 0)); then
		fail "$name: qemu exited with status $status after ${boot_seconds}s ($(head -c 300 "$out/qemu-$name.out"); serial log: $serial.txt)"
	fi
	if grep -q '^BTFENC-BOOT-OK' "$serial.txt"; then
		boot_ok=yes
		pass "$name: booted to /init under qemu ($qemu_accel, ${boot_seconds}s)"
	else
		fail "$name: did not boot to /init (serial log: $serial.txt): $(tail -n 5 "$serial.txt" | tr '\n' '|')"
		return
	fi
	if grep -q '^BTFENC-INSMOD-OK' "$serial.txt"; then
		module_ok=yes
		pass "$name: insmod configfs.ko succeeded"
	else
		fail "$name: insmod configfs.ko failed (serial log: $serial.txt)"
	fi
	local listed
	listed=$(sed -n '/^BTFENC-BTF-BEGIN/,/^BTFENC-BTF-END/p' "$serial.txt" | sed '1d;$d' | tr -s ' \t' '\n' | sort | tr '\n' ' ')
	if [[ " $listed " == *" vmlinux "* && " $listed " == *" configfs "* ]]; then
		btf_ok=yes
		pass "$name: /sys/kernel/btf lists: $listed"
	else
		fail "$name: /sys/kernel/btf lists '$listed', not vmlinux and configfs"
	fi
	# The kernel's BTF verifier logs "BPF: ..." lines and then, for a
	# module, "failed to validate module [NAME] BTF"; btf_vmlinux's parse
	# failure says "Failed to parse vmlinux BTF"/"BTF: ...". Any kernel
	# line with BTF or "BPF:" in it is a complaint here (case-sensitive:
	# the banner has KBUILD_BUILD_USER, btfenc); a clean boot has none.
	sed -n '/^BTFENC-DMESG-BEGIN/,/^BTFENC-DMESG-END/p' "$serial.txt" | sed '1d;$d' > "$out/dmesg-$name.txt"
	if [[ ! -s $out/dmesg-$name.txt ]]; then
		fail "$name: no kernel log read back from the guest"
	elif grep -nE 'BTF|BPF:' "$out/dmesg-$name.txt" > "$out/dmesg-$name.btf"; then
		fail "$name: the kernel log mentions BTF: $(head -n 3 "$out/dmesg-$name.btf" | tr '\n' '|')"
	else
		quiet_ok=yes
		pass "$name: the kernel log has no BTF complaint"
	fi
}

# resolve_model NAME DIR (7.x): the second half of gen-btf.sh, run again.
# The tree's own resolve_btfids, given the encoder's X.BTF.1 of NAME's pass
# (kept by the wrapper) and the same ELF, writes X.BTF (sorted with
# btf__permute after btf__dedup, with the kfunc decl tags) and, for
# vmlinux, X.BTF_ids; DIR's vmlinux and configfs.ko must embed exactly
# those bytes, and .tmp_vmlinux1.BTF_ids must be the same blob. So the
# embedded BTF is resolve_btfids' function of the encoder's output, and the
# encoder's output is checked against `btfenc -J` above. Run on copies:
# resolve_btfids writes next to its input. Also says how many types
# resolve_btfids' dedup moved from configfs's split into vmlinux's.
resolve_model() {
	local name=$1 dir=$2 kept=$cw/$1-kept m=$out/resolve-$1
	local rb=$cw/btfenc/tools/bpf/resolve_btfids/resolve_btfids
	rm -rf "$m"
	mkdir -p "$m"
	if [[ ! -f $kept/.tmp_vmlinux1.BTF.1 || ! -f $kept/configfs.ko.BTF.1 ]]; then
		fail "$name: the wrapper kept no .tmp_vmlinux1.BTF.1 or configfs.ko.BTF.1 (in $kept)"
		return
	fi
	cp "$dir/.tmp_vmlinux1" "$kept/.tmp_vmlinux1.BTF.1" "$m/"
	if ! (cd "$m" && "$rb" --btf .tmp_vmlinux1.BTF.1 .tmp_vmlinux1) > "$m/vmlinux.log" 2>&1; then
		fail "$name: resolve_btfids failed on .tmp_vmlinux1.BTF.1: $(head -c 300 "$m/vmlinux.log")"
	elif cmp -s "$m/.tmp_vmlinux1.BTF" "$out/$name-vmlinux.btf" &&
		cmp -s "$m/.tmp_vmlinux1.BTF_ids" "$dir/.tmp_vmlinux1.BTF_ids"; then
		pass "$name: vmlinux's .BTF and .tmp_vmlinux1.BTF_ids are resolve_btfids' output on the encoder's .tmp_vmlinux1.BTF.1, byte for byte"
	else
		fail "$name: vmlinux's .BTF or .tmp_vmlinux1.BTF_ids is not resolve_btfids' output on the encoder's .tmp_vmlinux1.BTF.1 (see $m)"
	fi
	rm -f "$m/.tmp_vmlinux1"
	cp "$dir/fs/configfs/configfs.ko" "$kept/configfs.ko.BTF.1" "$m/"
	if ! (cd "$m" && "$rb" --btf_base "$dir/vmlinux" --btf configfs.ko.BTF.1 configfs.ko) > "$m/configfs.log" 2>&1; then
		fail "$name: resolve_btfids failed on configfs.ko.BTF.1: $(head -c 300 "$m/configfs.log")"
	elif cmp -s "$m/configfs.ko.BTF" "$out/$name-configfs.btf"; then
		pass "$name: configfs.ko's .BTF is resolve_btfids' output on the encoder's configfs.ko.BTF.1, byte for byte ($(type_count "$m/configfs.ko.BTF.1" "$dir/vmlinux") types before, $(type_count "$m/configfs.ko.BTF" "$dir/vmlinux") after its dedup against vmlinux)"
	else
		fail "$name: configfs.ko's .BTF is not resolve_btfids' output on the encoder's configfs.ko.BTF.1 (see $m)"
	fi
}

# without_layout IN OUT: when raw BTF IN has a kind layout section
# (libbpf 1.8's 32-byte header, layout_len > 0), writes OUT with the
# classic 24-byte header and IN's type and string bytes unchanged, and
# returns 0; otherwise returns 1.
without_layout() {
	python3 - "$1" "$2" <<-'PY'
	import struct, sys
	data = open(sys.argv[1], "rb").read()
	magic, version, flags, hdr_len = struct.unpack_from("<HBBI", data, 0)
	if magic != 0xEB9F or hdr_len < 32:
	    sys.exit(1)
	type_off, type_len, str_off, str_len, layout_off, layout_len = struct.unpack_from("<6I", data, 8)
	if layout_len == 0:
	    sys.exit(1)
	types = data[hdr_len + type_off:hdr_len + type_off + type_len]
	strings = data[hdr_len + str_off:hdr_len + str_off + str_len]
	header = struct.pack("<HBBIIIII", magic, version, flags, 24, 0, type_len, type_len, str_len)
	open(sys.argv[2], "wb").write(header + types + strings)
	PY
}

# Cell results for the table, in order of $cells.
declare -A result

# run_cell VERSION TOOLCHAIN
run_cell() {
	version=$1 toolchain=$2
	cell=$version-$toolchain failures=0
	llvm_bin=$(llvm_bin_of "$toolchain")
	source_tree=$cache/linux-source-$version
	cw=$work/$cell
	out=$cw/out
	local B=$cw/btfenc P=$cw/pahole
	local seven= distilled=
	[[ $version == 6.* ]] || seven=yes
	# Out-of-tree modules get a distilled .BTF.base from 6.11 on (pahole's
	# --btf_features=distilled_base on 6.x, resolve_btfids on 7.x).
	[[ $version == 6.1 ]] || distilled=yes
	unpack_source "$version"
	mkdir -p "$cw"
	if [[ ${BTFENC_KBUILD_CLEAN:-} == 1 ]]; then
		rm -rf "$B" "$P"
	fi
	rm -rf "$out"
	mkdir -p "$out"
	result[$cell.build]=FAIL result[$cell.boot]=- result[$cell.module]=- result[$cell.btf]=-
	result[$cell.vmlinux]=- result[$cell.configfs]=- result[$cell.times]=-

	if [[ $toolchain == llvm* && ! -x $llvm_bin/clang ]]; then
		fail "no $llvm_bin/clang (scripts/deps.sh all installs clang-19, lld-19, llvm-19 and bookworm's clang, lld-14, llvm 14)"
		result[$cell.failed]=$failures
		return
	fi

	# --- the build with Debian's pahole, then with btfenc, in one tree ---
	# The same compiled objects for both (a copy of the tree in another
	# directory would recompile everything: tools/ records absolute paths,
	# objtool is relinked, and every object depends on objtool). What the
	# checks need of pahole's build is kept in $P, laid out as in the tree.
	local btfenc_seconds btfenc_kind pahole_seconds pahole_kind status=0
	build pahole "$pahole_bin" || status=$?
	pahole_seconds="${build_seconds}s wall, ${build_cpu}s CPU" pahole_kind=${build_kind:-}
	if ((status != 0)); then
		fail "the pahole build failed (log: $cw/pahole.log)"
		result[$cell.times]="pahole $pahole_seconds, failed"
		result[$cell.failed]=$failures
		return
	fi
	rm -rf "$P"
	local file kept_files=(.config vmlinux fs/configfs/configfs.ko arch/x86/boot/bzImage usr/gen_init_cpio)
	# 7.x: resolve_btfids' input ELF and its .BTF_ids output, for
	# resolve_model (the btfenc pass overwrites them).
	[[ -z $seven ]] || kept_files+=(.tmp_vmlinux1 .tmp_vmlinux1.BTF_ids)
	for file in "${kept_files[@]}"; do
		mkdir -p "$(dirname "$P/$file")"
		cp "$B/$file" "$P/$file"
	done
	oot_module pahole
	# What the pahole pass recompiled besides the link steps (0 expected:
	# only CONFIG_PAHOLE_VERSION changes, which no object uses here).
	local recompiled
	recompiled=$(grep -cE '^  (CC|AS) ' "$cw/pahole.log" || true)
	[[ $pahole_kind == full ]] || log "$cell: the pahole pass compiled $recompiled file(s)"

	status=0
	build btfenc "$btfenc" || status=$?
	btfenc_seconds="${build_seconds}s wall, ${build_cpu}s CPU" btfenc_kind=${build_kind:-}
	result[$cell.times]="first build $(cat "$cw/first-build-seconds" 2> /dev/null || echo '?'); this run: pahole $pahole_kind $pahole_seconds, btfenc $btfenc_kind $btfenc_seconds"
	if ((status != 0)); then
		fail "the btfenc build failed (log: $cw/btfenc.log)"
		result[$cell.failed]=$failures
		return
	fi
	pass "the btfenc build succeeded ($btfenc_seconds, $btfenc_kind)"
	result[$cell.build]=ok
	recompiled=$(grep -cE '^  (CC|AS) ' "$cw/btfenc.log" || true)
	log "$cell: the btfenc pass compiled $recompiled file(s)"
	oot_module btfenc

	# --- .config ---
	local tree dir option
	for tree in B P; do
		dir=${!tree}
		for option in CONFIG_DEBUG_INFO_BTF CONFIG_DEBUG_INFO_BTF_MODULES; do
			grep -qx "$option=y" "$dir/.config" ||
				fail "${dir##*/} tree: .config lost $option=y (the encoder's --version was not accepted?)"
		done
	done
	local kversion
	kversion=$(sed -n 's/^CONFIG_PAHOLE_VERSION=//p' "$B/.config")
	if [[ $kversion == 131 ]]; then
		pass "Kconfig took btfenc for pahole 1.31 and kept DEBUG_INFO_BTF(_MODULES)"
	else
		fail "btfenc tree: CONFIG_PAHOLE_VERSION=$kversion, expected 131"
	fi

	# --- build logs: BTF steps ran, resolve_btfids no noisier than with pahole ---
	# resolve_btfids reports "WARN: resolve_btfids: unresolved symbol X";
	# link-vmlinux.sh and Makefile.modfinal say when they skip BTF; btfenc's
	# lines start with "btfenc" (errors, or a banner that does not belong
	# in a build log).
	local pattern='(^|: )(WARN|FAILED)|Skipping BTF|BTF: .*(not available|too old)|^btfenc'
	grep -E "$pattern" "$cw/btfenc.log" | sort -u > "$out/btfenc.warnings" || true
	grep -E "$pattern" "$cw/pahole.log" | sort -u > "$out/pahole.warnings" || true
	comm -23 "$out/btfenc.warnings" "$out/pahole.warnings" > "$out/btfenc-only.warnings"
	if [[ -s $out/btfenc-only.warnings ]]; then
		fail "the btfenc build printed what the pahole build did not: $(head -n 5 "$out/btfenc-only.warnings" | tr '\n' '|')"
	else
		pass "build log: no warning or skipped BTF step the pahole build lacks ($(wc -l < "$out/btfenc.warnings") vs pahole's $(wc -l < "$out/pahole.warnings") warning line(s))"
	fi
	# The file link-vmlinux.sh gives the encoder: 6.1 encodes a separate
	# link, .tmp_vmlinux.btf, in place; 6.12 encodes .tmp_vmlinux1 (the
	# first kallsyms link) in place; 7.x's gen-btf.sh encodes .tmp_vmlinux1
	# detached.
	local vmlinux_input=.tmp_vmlinux1
	[[ $version != 6.1 ]] || vmlinux_input=.tmp_vmlinux.btf
	local name
	for name in btfenc pahole; do
		if ! grep -q " $vmlinux_input\$" "$cw/$name.timing" || ! grep -q 'configfs.ko$' "$cw/$name.timing"; then
			fail "$name was not run on both $vmlinux_input and configfs.ko (see $cw/$name.timing)"
		fi
		awk '$3 != 0 { exit 1 }' "$cw/$name.timing" ||
			fail "some $name invocations failed: $(awk '$3 != 0' "$cw/$name.timing" | head -c 300)"
	done
	# The encoder read what the cell meant it to: DWARF 4 in compressed
	# sections (the first unit's version, .debug_info's SHF_COMPRESSED).
	if [[ $toolchain == gcc-dwarf4z ]]; then
		local input dwarf_version
		for input in "$B/fs/configfs/configfs.ko" "$B/$vmlinux_input"; do
			dwarf_version=$(readelf --debug-dump=info "$input" 2> /dev/null | sed -n 's/^ *Version: *//p' | head -n 1)
			if [[ $dwarf_version == 4 ]] && readelf -SW "$input" | grep -E ' \.debug_info +' | grep -qE ' [A-Z]*C[A-Z]* +[0-9]+ +[0-9]+ +[0-9]+$'; then
				pass "${input##*/}: DWARF 4 in a compressed .debug_info"
			else
				fail "${input##*/}: DWARF version '$dwarf_version', or .debug_info not compressed"
			fi
		done
	fi

	# --- sections ---
	for tree in B P; do
		dir=${!tree}
		name=${dir##*/}
		extract_section "$dir/vmlinux" .BTF "$out/$name-vmlinux.btf" ||
			fail "$name/vmlinux has no single .BTF"
		extract_section "$dir/fs/configfs/configfs.ko" .BTF "$out/$name-configfs.btf" ||
			fail "$name/configfs.ko has no single .BTF"
	done
	if [[ -z $seven ]]; then
		if extract_section "$B/$vmlinux_input" .BTF "$out/btfenc-in-place.btf" &&
			cmp -s "$out/btfenc-in-place.btf" "$out/btfenc-vmlinux.btf"; then
			pass "vmlinux .BTF is byte-identical to the .BTF btfenc wrote into $vmlinux_input"
		else
			fail "vmlinux .BTF differs from $vmlinux_input's (objcopy did not extract it intact)"
		fi
		if readelf -lW "$B/$vmlinux_input" 2>&1 | grep -q LOAD; then
			pass "$vmlinux_input still has its program headers after encoding in place"
		else
			fail "$vmlinux_input lost its program headers"
		fi
	fi

	# --- the build's BTF is btfenc -J's on the same intermediate file, -j1 and -j2 ---
	# The flags are the build's own (from the wrapper's log), -j replaced.
	local flags j target input base_args what
	for target in vmlinux configfs; do
		if [[ $target == vmlinux ]]; then
			input=$B/$vmlinux_input base_args=()
		else
			input=$B/fs/configfs/configfs.ko base_args=()
		fi
		flags=$(logged_flags "$cw/btfenc.timing" "$([[ $target == vmlinux ]] && echo "$vmlinux_input" || echo fs/configfs/configfs.ko)")
		if [[ -z $flags ]]; then
			# Makefile.modfinal passes the module's path as it knows it.
			flags=$(logged_flags "$cw/btfenc.timing" "$(awk -v t="$target" '$NF ~ t { f = $NF } END { print f }' "$cw/btfenc.timing")")
		fi
		if [[ -z $seven ]]; then
			what="$target's .BTF"
			cp "$out/btfenc-$target.btf" "$out/build-$target.btf"
		else
			what="the encoder's ${input##*/}.BTF.1"
			cp "$cw/btfenc-kept/${input##*/}.BTF.1" "$out/build-$target.btf" 2> /dev/null ||
				{ fail "the wrapper kept no ${input##*/}.BTF.1"; continue; }
		fi
		# The logged flags hold --btf_base and --btf_encode_detached with
		# the build's relative paths: drop the output, keep the base
		# (absolute when run from the tree).
		for j in 1 2; do
			# shellcheck disable=SC2086
			if (cd "$B" && "$btfenc" -J -j"$j" $(tr ' ' '\n' <<< "$flags" | grep -v '^--btf_encode_detached=' | tr '\n' ' ') \
				--btf_encode_detached="$out/$target-j$j.btf" "$input") 2> "$out/$target-j$j.err" &&
				cmp -s "$out/$target-j$j.btf" "$out/build-$target.btf"; then
				pass "btfenc -J -j$j on ${input##*/} gives $what byte for byte"
			else
				fail "btfenc -J -j$j on ${input##*/} differs from $what ($(head -c 300 "$out/$target-j$j.err"); flags: $flags)"
			fi
		done
	done
	if [[ -n $seven ]]; then
		resolve_model btfenc "$B"
		resolve_model pahole "$P"
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
		cmp -s "$out/$name-configfs.btfenc-dump" "$out/$name-configfs.bpftool-dump" ||
			fail "$name: configfs.ko: btfenc dump and bpftool -B differ"
		# Split BTF numbers its types after the base's (btf.rst, split BTF).
		local vmlinux_last module_first
		vmlinux_last=$("$BPFTOOL" btf dump file "$dir/vmlinux" | sed -n 's/^\[\([0-9]*\)\].*/\1/p' | tail -n 1)
		module_first=$(sed -n 's/^\[\([0-9]*\)\].*/\1/p' "$out/$name-configfs.bpftool-dump" | head -n 1)
		if [[ -n $module_first && $module_first == $((vmlinux_last + 1)) ]]; then
			pass "$name: configfs.ko is split on vmlinux (ids from $module_first; btfenc dump and bpftool -B agree)"
		else
			fail "$name: configfs.ko's first id is '${module_first}', vmlinux's last is $vmlinux_last: not split on it"
		fi
	done

	# --- host kernel load ---
	# Linux 7.2+ asks for --btf_features=layout: a 32-byte header and a
	# kind layout section, which a host kernel before 7.1 refuses
	# ("Unsupported btf_header") whoever wrote it; the guest boot above
	# loads it as built. Such a host then loads the same types and
	# strings, byte for byte, with the layout section dropped.
	local load_file note
	for name in pahole btfenc; do
		status=0 load_file=$out/$name-vmlinux.btf note=
		if ! "$kernel_load_bin" "$load_file" > /dev/null 2>&1 &&
			without_layout "$load_file" "$out/$name-vmlinux.no-layout.btf"; then
			load_file=$out/$name-vmlinux.no-layout.btf
			note=" with its kind layout section dropped (kernel $(uname -r) refuses a layout header)"
		fi
		"$kernel_load_bin" "$load_file" || status=$?
		case $status in
		0) pass "the host kernel loads $name's vmlinux .BTF$note" ;;
		77)
			if [[ ${BTFENC_NO_SKIP:-} == 1 ]]; then
				fail "host kernel load skipped (BTFENC_NO_SKIP=1)"
			else
				log "SKIPPED: host kernel load of $name's vmlinux .BTF"
			fi
			;;
		*) fail "the host kernel rejects $name's vmlinux .BTF$note" ;;
		esac
	done

	# --- same types as pahole's, outside functions and variables ---
	# FUNC/FUNC_PROTO differ by design (btfenc follows pahole 1.31, so the
	# kernel passes it the optimized/consistent function rules; Debian's
	# 1.24 has neither) and VAR/DATASEC with them (per-CPU variables).
	local allowed='FUNC FUNC_PROTO VAR DATASEC'
	# 6.12's Makefile.btf asks pahole >= 1.26 for decl_tag_kfuncs, which
	# pahole 1.24's flags lack (on 7.x resolve_btfids adds the tags for
	# both): btfenc's vmlinux has a bpf_kfunc DECL_TAG per kfunc more, and
	# nothing else.
	local vmlinux_allowed=$allowed
	[[ $version != 6.12 ]] || vmlinux_allowed="$allowed DECL_TAG:b"
	compare vmlinux "$vmlinux_allowed" "$P/vmlinux" "$B/vmlinux"
	only_in_b_beyond vmlinux DECL_TAG "DECL_TAG 'bpf_kfunc'" "bpf_kfunc DECL_TAGs"
	# A module's split BTF: pahole 1.31 (newer libbpf dedup) keeps in the
	# split reference types (pointers, typedefs, arrays, modifiers) that
	# 1.24 resolved to vmlinux's (configfs.ko: 477 types vs 171, the
	# counts of the pahole 1.31 reference build in issue 13); btfenc may
	# have more of those, never fewer, and no other kind may differ.
	local split_allowed="$allowed PTR:b TYPEDEF:b ARRAY:b CONST:b VOLATILE:b RESTRICT:b TYPE_TAG:b"
	compare configfs "$split_allowed" "$P/fs/configfs/configfs.ko" "$B/fs/configfs/configfs.ko" \
		--base-a "$P/vmlinux" --base-b "$B/vmlinux"
	local vb vp cb cp
	vb=$(type_count "$B/vmlinux") vp=$(type_count "$P/vmlinux")
	cb=$(type_count "$B/fs/configfs/configfs.ko" "$B/vmlinux")
	cp=$(type_count "$P/fs/configfs/configfs.ko" "$P/vmlinux")
	result[$cell.vmlinux]="$vb / $vp" result[$cell.configfs]="$cb / $cp"

	# On 6.12 only btfenc's pass gets a distilled .BTF.base (pahole 1.24's
	# flags ask for none), and distilling moves the anonymous base types
	# the module uses into its split, as libbpf's btf__distill_base does:
	# a relocation can only match base types by name.
	local oot_allowed=$split_allowed
	[[ $version != 6.12 ]] || oot_allowed="$split_allowed STRUCT:b UNION:b ENUM:b ENUM64:b"
	compare oot-module "$oot_allowed" "$cw/oot-pahole/btfenc_probe.ko" "$cw/oot-btfenc/btfenc_probe.ko" \
		--base-a "$P/vmlinux" --base-b "$B/vmlinux"
	only_in_b_beyond oot-module 'STRUCT|UNION|ENUM|ENUM64' "(STRUCT|UNION|ENUM|ENUM64) ''" "anonymous STRUCT, UNION, ENUM or ENUM64"

	# --- reproducible from run to run ---
	local binary_sum
	binary_sum=$(sha256sum < "$btfenc")
	if [[ -f $cw/last-run.btfenc-sum && $(cat "$cw/last-run.btfenc-sum") == "$binary_sum" ]]; then
		if cmp -s "$cw/last-run.vmlinux.btf" "$out/btfenc-vmlinux.btf" &&
			cmp -s "$cw/last-run.configfs.btf" "$out/btfenc-configfs.btf"; then
			pass "the same btfenc wrote the same vmlinux and configfs.ko .BTF as in the previous run"
		else
			fail "the same btfenc wrote other .BTF than in the previous run (not reproducible)"
		fi
	fi
	cp "$out/btfenc-vmlinux.btf" "$cw/last-run.vmlinux.btf"
	cp "$out/btfenc-configfs.btf" "$cw/last-run.configfs.btf"
	echo "$binary_sum" > "$cw/last-run.btfenc-sum"

	# --- boot ---
	boot btfenc
	result[$cell.boot]=$boot_ok result[$cell.module]=$module_ok result[$cell.btf]="$btf_ok/$quiet_ok"
	if [[ $boot_ok$module_ok$btf_ok$quiet_ok != yesyesyesyes ]]; then
		local before=$failures
		boot pahole
		log "$cell: for comparison, pahole's tree: boot $boot_ok, module $module_ok, BTF listed $btf_ok, quiet $quiet_ok"
		# pahole's boot is a diagnosis, not a check of btfenc.
		failures=$before
	fi

	log "$cell: encoder time: btfenc $(encoder_time "$cw/btfenc.timing"); pahole $(encoder_time "$cw/pahole.timing")"
	result[$cell.failed]=$failures
}

mkdir -p "$work"
btfenc=$(btfenc_release)
# The kernel runs PAHOLE from its build directories: it must be absolute.
btfenc=$(command -v "$btfenc") || die "no btfenc at $btfenc"
[[ $btfenc == /* ]] || btfenc=$PWD/$btfenc
(cd "$repo_root" && cargo build --release -q -p btfenc-tests --bin kernel-load-btf) >&2 ||
	die "cannot build kernel-load-btf"
kernel_load_bin=${CARGO_TARGET_DIR:-$repo_root/target}/release/kernel-load-btf
log "qemu: $qemu ($qemu_accel); cells: $cells"

run_start=$(date +%s)
for c in $cells; do
	[[ " $known_cells " == *" $c "* ]] || die "unknown cell $c (BTFENC_KBUILD_CELLS: $known_cells)"
	cell_start=$(date +%s)
	run_cell "${c%%-*}" "${c#*-}"
	result[$c.seconds]=$(($(date +%s) - cell_start))
	total_failures=$((total_failures + ${result[$c.failed]}))
done
cell=

# --- make install (once) ---
# What the kernel's own version script makes of the installed binary and of
# the pahole symlink: btfenc must pass for pahole 1.31.
prefix=$work/install
rm -rf "$prefix"
first_source=$cache/linux-source-6.1
[[ -f $first_source/scripts/pahole-version.sh ]] || first_source=$cache/linux-source-7.3
if make -s -C "$repo_root" install PREFIX="$prefix" > "$work/install.log" 2>&1; then
	for installed in "$prefix/bin/btfenc" "$prefix/libexec/btfenc/pahole"; do
		number=$("$first_source/scripts/pahole-version.sh" "$installed" 2> "$work/install-version.err")
		if [[ $number == 131 && ! -s $work/install-version.err ]]; then
			log "ok: make install: scripts/pahole-version.sh ${installed#"$prefix"/} says 131, quietly"
		else
			log "FAIL: make install: scripts/pahole-version.sh ${installed#"$prefix"/} says '$number' ($(head -c 200 "$work/install-version.err"))"
			total_failures=$((total_failures + 1))
		fi
	done
else
	log "FAIL: make install PREFIX=$prefix failed (log: $work/install.log)"
	total_failures=$((total_failures + 1))
fi

# --- the table ---
printf '\ncheck-kbuild (make -j%s, tinyconfig + BTF + configfs.ko; qemu %s): types are btfenc / pahole 1.24\n' "$jobs" "$qemu_accel"
printf '%-9s %-5s %-4s %-6s %-9s %-15s %-14s %s\n' cell build boot module btf/quiet 'vmlinux types' 'configfs types' failed
for c in $cells; do
	printf '%-9s %-5s %-4s %-6s %-9s %-15s %-14s %s\n' "$c" "${result[$c.build]}" "${result[$c.boot]}" \
		"${result[$c.module]}" "${result[$c.btf]}" "${result[$c.vmlinux]}" "${result[$c.configfs]}" \
		"${result[$c.failed]}"
done
printf '(btf/quiet: /sys/kernel/btf lists vmlinux and configfs / no BTF line in the kernel log)\ntimes:\n'
for c in $cells; do
	printf '  %-9s %s; whole cell %s s\n' "$c" "${result[$c.times]}" "${result[$c.seconds]}"
done
printf 'whole matrix: %d s\n' "$(($(date +%s) - run_start))"

if ((total_failures > 0)); then
	log "$total_failures check(s) FAILED"
	exit 1
fi
log "all checks passed"
