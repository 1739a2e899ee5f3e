#!/bin/bash
# check-dwz: btfenc on kernel images compressed by Debian's dwz, judged
# against btfenc's encoding of the same images before dwz (`btfenc diff`
# must find the same types; the bytes are reported, not judged: the types
# come in another order). Not part of `make test` (dwz takes about a
# minute per pair of kernels).
#
# Inputs: two linked images, VMLINUX_A and VMLINUX_B (default: the gcc
# kbuild vmlinux of Linux 6.1 and 7.3 that check-kbuild leaves under
# $BTFENC_CACHE/kbuild/{6.1,7.3}-gcc/pahole/vmlinux); skipped (exit 77) when
# absent. Each is encoded with the kernel's --btf_features, then:
#   single  dwz -o on a copy of A (partial units in the file)
#   gnu     dwz -m common.alt on copies of A and B (.gnu_debugaltlink)
#   sup     dwz -5 -m common.sup on copies of A and B (.debug_sup)
# and each dwz'd image is encoded and compared with its original.
# Environment: BTFENC, BTFENC_CHECK_OUT (default target/check-dwz), DWZ.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

a=${VMLINUX_A:-$cache/kbuild/6.1-gcc/pahole/vmlinux}
b=${VMLINUX_B:-$cache/kbuild/7.3-gcc/pahole/vmlinux}
dwz=${DWZ:-dwz}
if [[ ! -f $a || ! -f $b ]]; then
	log "SKIPPED: no $a or $b (run make check-kbuild, or set VMLINUX_A and VMLINUX_B)"
	exit 77
fi
command -v "$dwz" > /dev/null || die "no dwz (scripts/deps.sh installs it)"
btfenc=$(btfenc_release) || exit 1
out=${BTFENC_CHECK_OUT:-$repo_root/target/check-dwz}
rm -rf "$out"
mkdir -p "$out"/{single,gnu,sup}
flags=(-J -j --btf_features="$modern_features")
# Copies: the kbuild images may be rebuilt meanwhile.
cp "$a" "$out/a" && cp "$b" "$out/b" || die "cannot copy the images"

encode() { # IN OUT: encodes, printing the wall and user time
	/usr/bin/time -f '%e s wall, %U s user, %M KB peak' -o "$2.time" "$btfenc" "${flags[@]}" --btf_encode_detached="$2" "$1" ||
		{ log "btfenc failed on $1"; return 1; }
	echo "    $(basename "$(dirname "$1")")/$(basename "$1"): $(stat -c %s "$2") bytes of BTF, $(cat "$2.time")"
}

failed=0
encode "$out/a" "$out/a.btf" || failed=1
encode "$out/b" "$out/b.btf" || failed=1
"$dwz" -o "$out/single/a" "$out/a" || die "dwz -o failed"
cp "$out/a" "$out/gnu/a" && cp "$out/b" "$out/gnu/b" &&
	(cd "$out/gnu" && "$dwz" -m common.alt a b) || die "dwz -m failed"
cp "$out/a" "$out/sup/a" && cp "$out/b" "$out/sup/b" &&
	(cd "$out/sup" && "$dwz" -5 -m common.sup a b) || die "dwz -5 -m failed"
echo "    debug info: a $(stat -c %s "$out/a"), b $(stat -c %s "$out/b") bytes; after dwz -m: a $(stat -c %s "$out/gnu/a"), b $(stat -c %s "$out/gnu/b"), common.alt $(stat -c %s "$out/gnu/common.alt")"
for dwzd in single/a gnu/a gnu/b sup/a sup/b; do
	orig=$out/${dwzd##*/}.btf
	encode "$out/$dwzd" "$out/$dwzd.btf" || { failed=1; continue; }
	"$btfenc" diff "$orig" "$out/$dwzd.btf" > "$out/$dwzd.diff"
	case $? in
		0) if cmp -s "$orig" "$out/$dwzd.btf"; then
			echo "    $dwzd: same types as before dwz, byte-identical"
		   else
			echo "    $dwzd: same types as before dwz (btfenc diff), other order"
		   fi ;;
		*) echo "    $dwzd: DIFFERENT from before dwz:"; head -n 12 "$out/$dwzd.diff" | sed 's/^/      /'; failed=1 ;;
	esac
done
(( failed )) && { echo "check-dwz: FAILED (outputs in $out)"; exit 1; }
echo "check-dwz: passed (outputs in $out)"
