#!/bin/bash
# compare-funcs: btfenc against a real pahole 1.31 on both corpus kernels,
# vmlinux and every module, with each kernel's own flags (the reference's,
# see ../shared/reference/README.md): Debian 6.1 with FEATURES
# ($modern_features), Debian 7.3.4 with FEATURES73 plus `layout`; modules
# split on the pahole-written reference vmlinux.btf of their kernel.
# Counts, per kind, the types only one side has (`btfenc diff`), and the
# modules with any difference, and FUNC/FUNC_PROTO ones in particular.
#
# Needs a pahole 1.31 (dwarves 1436daf, the reference's) binary, which is
# not installed anywhere by this repository:
#   PAHOLE131=/path/to/pahole make compare-funcs
# Environment:
#   COMPARE_KERNELS   "61 73" (default) or one of them
#   COMPARE_OUT       work directory (default target/compare-funcs); pahole's
#                     outputs are kept there and reused (COMPARE_FRESH=1 redoes them)
#   COMPARE_SKIPS=1   also compare the --verbose skip lines of vmlinux
#   COMPARE_JOBS      parallel pahole runs on modules (default 2)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

pahole131=${PAHOLE131:-}
[[ -n $pahole131 && -x $pahole131 ]] || die "set PAHOLE131 to a pahole 1.31 binary (dwarves 1436daf)"
version=$("$pahole131" --version)
[[ $version == v1.31 ]] || die "$pahole131 says $version, not v1.31"
load_corpus
btfenc=$(btfenc_release)
out=${COMPARE_OUT:-$repo_root/target/compare-funcs}
jobs=${COMPARE_JOBS:-2}
mkdir -p "$out"

# Sums `btfenc diff` lines (KIND: a=N b=N only_a=N only_b=N) of FILE into
# the running totals of the kernel.
tally() {
	awk '/^[A-Z_0-9]+: a=/ { k = $1; sub(":", "", k);
		split($4, x, "="); split($5, y, "="); print k, x[2], y[2] }' "$1"
}

compare_kernel() {
	local tag=$1 vmlinux modules_dir ref
	local -a flags
	case $tag in
		61) vmlinux=$VMLINUX modules_dir=$MODULES_DIR ref=$reference
			flags=(-J -j --btf_features="$modern_features" --lang_exclude=rust) ;;
		73) vmlinux=$VMLINUX_73 modules_dir=$MODULES_DIR_73 ref=$reference_73
			flags=("${flags_73[@]}") ;;
		*) die "unknown kernel $tag" ;;
	esac
	local base=$ref/vmlinux.btf dir=$out/$tag
	[[ -f $base ]] || die "no reference $base"
	mkdir -p "$dir/pahole/modules" "$dir/btfenc/modules"
	find "$modules_dir" -name '*.ko' | sort > "$dir/list"
	local count
	count=$(wc -l < "$dir/list")

	# pahole 1.31: vmlinux, then every module (one process each, as kbuild).
	if [[ ${COMPARE_FRESH:-} == 1 || ! -s $dir/pahole/vmlinux.btf ]]; then
		log "$tag: pahole 1.31 on vmlinux"
		nice "$pahole131" "${flags[@]}" --btf_encode_detached "$dir/pahole/vmlinux.btf" "$vmlinux" > /dev/null
	fi
	if [[ ${COMPARE_FRESH:-} == 1 || $(find "$dir/pahole/modules" -name '*.btf' | wc -l) != "$count" ]]; then
		log "$tag: pahole 1.31 on $count modules ($jobs at a time)"
		cat > "$dir/pahole-one.sh" <<-EOF
			#!/bin/sh
			name=\$(basename "\$1" .ko)
			exec nice "$pahole131" $(printf '%q ' "${flags[@]}") --btf_base "$base" \\
				--btf_encode_detached "$dir/pahole/modules/\$name.btf" "\$1" > /dev/null
		EOF
		chmod +x "$dir/pahole-one.sh"
		xargs -P"$jobs" -n1 "$dir/pahole-one.sh" < "$dir/list"
	fi

	log "$tag: btfenc on vmlinux and $count modules"
	nice "$btfenc" "${flags[@]}" --btf_encode_detached "$dir/btfenc/vmlinux.btf" "$vmlinux"
	rm -f "$dir"/btfenc/modules/*.btf
	nice "$btfenc" "${flags[@]}" --btf_base "$base" --btf_encode_detached="$dir/btfenc/modules" "@$dir/list"

	# vmlinux
	local status=0
	"$btfenc" diff "$dir/btfenc/vmlinux.btf" "$dir/pahole/vmlinux.btf" --examples 20 > "$dir/vmlinux.diff" || status=$?
	((status <= 1)) || die "btfenc diff failed on $tag vmlinux"
	local funcs_b funcs_p
	funcs_b=$("$btfenc" dump "$dir/btfenc/vmlinux.btf" | grep -c "^\[[0-9]*\] FUNC '") || true
	funcs_p=$("$btfenc" dump "$dir/pahole/vmlinux.btf" | grep -c "^\[[0-9]*\] FUNC '") || true
	printf '%s vmlinux: FUNC btfenc %d pahole %d; differences (a=btfenc b=pahole):\n' "$tag" "$funcs_b" "$funcs_p"
	if ((status == 0)); then echo "  none"; else grep '^[A-Z_0-9]*: a=' "$dir/vmlinux.diff" | sed 's/^/  /'; fi

	# modules: one `btfenc diff` each ($jobs at a time), a summary line per
	# module (NAME STATUS), the diff text kept for those that differ.
	mkdir -p "$dir/diffs"
	rm -f "$dir"/diffs/*.diff
	cat > "$dir/diff-one.sh" <<-EOF
		#!/bin/sh
		name=\$(basename "\$1" .ko)
		"$btfenc" diff "$dir/btfenc/modules/\$name.btf" "$dir/pahole/modules/\$name.btf" \\
			--base-a "$base" --base-b "$base" --examples 20 > "$dir/diffs/\$name.diff" 2>&1
		echo "\$name \$?"
	EOF
	chmod +x "$dir/diff-one.sh"
	xargs -P"$jobs" -n1 "$dir/diff-one.sh" < "$dir/list" | sort > "$dir/modules.status"
	local bad
	bad=$(awk '$2 > 1' "$dir/modules.status" | head -n1)
	[[ -z $bad ]] || die "btfenc diff failed on $tag ${bad% *}: $(head -n1 "$dir/diffs/${bad% *}.diff")"
	: > "$dir/modules.tally"
	local any=0 funcdiff=0 name status
	while read -r name status; do
		if ((status == 0)); then
			rm -f "$dir/diffs/$name.diff"
			continue
		fi
		any=$((any + 1))
		grep -q '^FUNC\(_PROTO\)\?: a=' "$dir/diffs/$name.diff" && funcdiff=$((funcdiff + 1))
		tally "$dir/diffs/$name.diff" >> "$dir/modules.tally"
	done < "$dir/modules.status"
	printf '%s modules: %d of %d differ, %d in FUNC/FUNC_PROTO (diffs in %s)\n' \
		"$tag" "$any" "$count" "$funcdiff" "$dir/diffs"
	awk '{ a[$1] += $2; b[$1] += $3 } END { for (k in a) printf "  %s: only_btfenc=%d only_pahole=%d\n", k, a[k], b[k] }' \
		"$dir/modules.tally" | sort

	if [[ ${COMPARE_SKIPS:-} == 1 ]]; then
		local pattern='skipping BTF encoding of function due to'
		if [[ ${COMPARE_FRESH:-} == 1 || ! -s $dir/pahole/vmlinux.skips ]]; then
			nice "$pahole131" "${flags[@]}" --verbose --btf_encode_detached "$dir/pahole/verbose.btf" "$vmlinux" \
				| grep -a "$pattern" | sort > "$dir/pahole/vmlinux.skips" || true
		fi
		nice "$btfenc" "${flags[@]}" --verbose --btf_encode_detached "$dir/btfenc/verbose.btf" "$vmlinux" 2>&1 > /dev/null \
			| grep -a "$pattern" | sort > "$dir/btfenc/vmlinux.skips" || true
		local same only_b only_p
		same=$(comm -12 "$dir/btfenc/vmlinux.skips" "$dir/pahole/vmlinux.skips" | wc -l)
		only_b=$(comm -23 "$dir/btfenc/vmlinux.skips" "$dir/pahole/vmlinux.skips" | wc -l)
		only_p=$(comm -13 "$dir/btfenc/vmlinux.skips" "$dir/pahole/vmlinux.skips" | wc -l)
		printf '%s vmlinux skip lines: %d equal, %d only btfenc, %d only pahole (of %d / %d)\n' "$tag" \
			"$same" "$only_b" "$only_p" "$(wc -l < "$dir/btfenc/vmlinux.skips")" "$(wc -l < "$dir/pahole/vmlinux.skips")"
	fi
}

for tag in ${COMPARE_KERNELS:-61 73}; do
	compare_kernel "$tag"
done
