#!/bin/bash
# Seed corpora for the fuzz targets, from the fixtures: `seeds.sh BTFENC DIR`
# fills DIR/<target>/ (see src/lib.rs for what each target reads).
# - elf_dwarf: every fixture object (the encoder's mode is the input's
#   length modulo 4: each object also with 1-3 zero bytes appended, which
#   ELF ignores, so that each is seen in every mode);
# - btf_read, validate: each fixture's BTF, standalone (also big-endian,
#   from the bpfeb objects, and with the kernel's features), the bad
#   fixtures, and a module-like object carrying .BTF and .BTF.base;
# - btf_read_split, validate: each fixture's BTF split on the fixed base;
# - relocate: each fixture's distilled base followed by its split.
# The fixed base is BASE_FIXTURE's BTF encoded without flags, as
# src/lib.rs encodes it.
set -euo pipefail
btfenc=$1
dir=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
base_fixture=$repo/fixtures/obj/multi-cu/gcc-dwarf5.o
features=--btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs

rm -rf "$dir"
mkdir -p "$dir"/{elf_dwarf,btf_read,btf_read_split,validate,relocate}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$btfenc" -J --btf_encode_detached="$work/base.btf" "$base_fixture"

mapfile -t objects < <(cd "$repo/fixtures" && find obj bad -type f ! -name '*.btf' | sort)
for object in "${objects[@]}"; do
	name=${object//\//_}
	src=$repo/fixtures/$object
	for pad in 0 1 2 3; do
		{ cat "$src"; head -c "$pad" /dev/zero; } > "$dir/elf_dwarf/$name.$pad"
	done
	# What does not encode (the bad fixtures) seeds only elf_dwarf.
	"$btfenc" -J --btf_encode_detached="$dir/btf_read/$name.btf" "$src" 2> /dev/null || continue
	"$btfenc" -J "$features" --btf_encode_detached="$dir/btf_read/$name.kernel.btf" "$src" 2> /dev/null || true
	"$btfenc" -J --btf_base "$work/base.btf" --btf_encode_detached="$dir/btf_read_split/$name.btf" \
		"$src" 2> /dev/null || true
	if "$btfenc" -J "$features,distilled_base" --btf_base "$work/base.btf" \
		--btf_encode_detached="$work/pair.btf" "$src" 2> /dev/null; then
		cat "$work/pair.btf.base" "$work/pair.btf" > "$dir/relocate/$name"
	fi
done
cp "$repo"/fixtures/bad/*.btf "$dir/btf_read/"
# A module as the kernel build leaves it: .BTF and .BTF.base in the ELF.
cp "$repo/fixtures/obj/gcc-dwarf5/structs.o" "$dir/btf_read/module-distilled.o"
"$btfenc" -J "$features,distilled_base" --btf_base "$work/base.btf" "$dir/btf_read/module-distilled.o"
cp "$dir"/btf_read/* "$dir/validate/"
for seed in "$dir"/btf_read_split/*; do
	cp "$seed" "$dir/validate/split-${seed##*/}"
done
for target in "$dir"/*/; do
	echo "seeds.sh: $(ls "$target" | wc -l) seeds in $target"
done
