#!/bin/bash
# bench-modules: split BTF for every module of the corpus (1121 for the
# Debian 6.1 package) on top of vmlinux BTF, the way each tool is used:
#   pahole: once per module, two at a time, as kbuild runs it under
#           `make -j2` (scripts/Makefile.modfinal: pahole -J
#           --btf_gen_floats -j1 --lang_exclude=rust --btf_base vmlinux
#           --btf_encode_detached ...; Debian's 1.24 flags);
#   btfenc: one run over the module directory, base loaded once, same flags;
#   btfenc-each: once per module, two at a time, as pahole above: what a
#           kernel build that sets PAHOLE=btfenc runs.
# Prints wall and CPU time of each, the ratios to pahole, checks that each
# wrote one output per module, that btfenc's two ways wrote the same bytes,
# and that sampled outputs hold the same types as pahole's.
# $BENCH_RUNS passes (default 1), medians reported.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

runs=${BENCH_RUNS:-1}
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"
load_corpus
btfenc=$(btfenc_release)
base=${BENCH_BASE:-$reference/vmlinux.btf}
[[ -f $base ]] || die "no base BTF at $base"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

mapfile -t modules < <(find "$MODULES_DIR" -name '*.ko' | sort)
(( ${#modules[@]} )) || die "no modules under $MODULES_DIR"
printf '%s\n' "${modules[@]}" > "$out/list"
# --compat=1.24: the sampled outputs are compared with the installed
# pahole's (1.24), so btfenc does the same work by the same rules (its
# default, pahole 1.31's, keeps more reference types in a module's split).
flags=(-J --compat=1.24 --btf_gen_floats --lang_exclude=rust --btf_base "$base")

# One module, as kbuild's modfinal rule does it.
cat > "$out/pahole-one.sh" <<EOF
#!/bin/sh
name=\$(basename "\$1" .ko)
exec "$PAHOLE" -J --btf_gen_floats -j1 --lang_exclude=rust --btf_base "$base" \\
	--btf_encode_detached "$out/pahole/\$name.btf" "\$1"
EOF
chmod +x "$out/pahole-one.sh"
cat > "$out/btfenc-one.sh" <<EOF
#!/bin/sh
name=\$(basename "\$1" .ko)
exec "$btfenc" ${flags[*]} -j1 --btf_encode_detached "$out/btfenc-each/\$name.btf" "\$1"
EOF
chmod +x "$out/btfenc-one.sh"

# Appends "wall cpu" of one pass to TOOL.times.
measure() {
	local tool=$1
	rm -rf "${out:?}/$tool"; mkdir -p "$out/$tool"
	case $tool in
		pahole) /usr/bin/time -f '%e %U %S' -o "$out/time" \
				xargs -P2 -n1 "$out/pahole-one.sh" < "$out/list" > /dev/null ;;
		btfenc) /usr/bin/time -f '%e %U %S' -o "$out/time" \
				"$btfenc" "${flags[@]}" -j --btf_encode_detached="$out/btfenc" "@$out/list" > /dev/null ;;
		btfenc-each) /usr/bin/time -f '%e %U %S' -o "$out/time" \
				xargs -P2 -n1 "$out/btfenc-one.sh" < "$out/list" > /dev/null ;;
	esac
	awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$out/time" >> "$out/$tool.times"
	local written
	written=$(find "$out/$tool" -name '*.btf' | wc -l)
	log "$tool pass: $(tail -n1 "$out/$tool.times") (wall s, cpu s), $written of ${#modules[@]} outputs"
	(( written == ${#modules[@]} )) || die "$tool wrote $written outputs for ${#modules[@]} modules"
}

# Which tool runs first alternates per pass, as in bench.sh.
for ((run = 1; run <= runs; run++)); do
	if ((run % 2)); then
		measure pahole
		measure btfenc
		measure btfenc-each
	else
		measure btfenc-each
		measure btfenc
		measure pahole
	fi
done

declare -A wall cpu
for tool in pahole btfenc btfenc-each; do
	wall[$tool]=$(awk '{ print $1 }' "$out/$tool.times" | median)
	cpu[$tool]=$(awk '{ print $2 }' "$out/$tool.times" | median)
	printf '%-12s wall %7.2fs  cpu %7.2fs\n' "$tool" "${wall[$tool]}" "${cpu[$tool]}"
done
awk -v p="${wall[pahole]}" -v b="${wall[btfenc]}" \
	'BEGIN { printf "ratio        btfenc (one run) is %.1fx faster than pahole (wall)\n", p / b }'
awk -v pw="${wall[pahole]}" -v pc="${cpu[pahole]}" -v w="${wall[btfenc-each]}" -v c="${cpu[btfenc-each]}" \
	'BEGIN { printf "ratio        btfenc-each / pahole: wall %.2f, cpu %.2f (a process per module, as kbuild runs it)\n", w / pw, c / pc }'
# A batch and a process per module must write the same bytes.
diff -rq "$out/btfenc" "$out/btfenc-each" > "$out/each.diff" ||
	die "btfenc wrote different bytes with a process per module: $(head -n3 "$out/each.diff" | paste -sd' ')"

# Same outputs: with pahole 1.24's flags btfenc follows pahole 1.24 (and
# its libbpf 1.1 dedup), so the outputs must hold the same types. Every
# $BENCH_COMPARE_EVERY-th module (default 10) is compared with `btfenc diff`.
every=${BENCH_COMPARE_EVERY:-10}
same=0 different=0
for ((i = 0; i < ${#modules[@]}; i += every)); do
	name=$(basename "${modules[i]}" .ko)
	if "$btfenc" diff "$out/btfenc/$name.btf" "$out/pahole/$name.btf" --base-a "$base" --base-b "$base" \
		> "$out/diff" 2>&1; then
		same=$((same + 1))
	else
		different=$((different + 1))
		echo "  $name differs: $(grep -v '^ ' "$out/diff" | grep -v 'only_a=0 only_b=0' | paste -sd' ')"
	fi
done
echo "same types as pahole: $same of $((same + different)) compared modules"
echo "(${#modules[@]} modules, medians of $runs pass(es), base $base)"
(( different == 0 )) || die "$different sampled module(s) differ from pahole"
