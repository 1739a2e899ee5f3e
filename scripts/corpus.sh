#!/bin/bash
# Fetches the kernel debug package the checks and benchmarks run on and
# unpacks it into $BTFENC_CACHE/extract (default ~/.cache/btfenc), reusing
# whatever is already there. Writes $BTFENC_CACHE/corpus.env with VMLINUX
# and MODULES_DIR for the other scripts.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

preferred=linux-image-6.1.0-56-cloud-amd64-dbg
fallback=linux-image-cloud-amd64-dbg
extract=$cache/extract
mkdir -p "$cache"

# apt-get download only works with package lists; refresh them once if we
# may (root) and the first attempt failed.
download() {
	local package=$1
	(cd "$cache" && apt-get download "$package") && return 0
	if [[ $(id -u) == 0 ]]; then
		apt-get update -qq && (cd "$cache" && apt-get download "$package")
	else
		return 1
	fi
}

find_deb() { ls -1 "$cache"/linux-image-*-dbg_*_amd64.deb 2>/dev/null | sort -V | tail -n1; }

# Fast path: a finished earlier run.
if [[ -f $cache/corpus.env ]]; then
	# shellcheck source=/dev/null
	source "$cache/corpus.env"
	if [[ -n ${MARKER:-} && -f $MARKER && -f ${VMLINUX:-} ]]; then
		log "reusing $extract ($VMLINUX)"
		exit 0
	fi
fi

deb=$(find_deb || true)
if [[ -z $deb ]]; then
	log "downloading $preferred into $cache"
	if ! download "$preferred"; then
		# The metapackage is empty; resolve it to the versioned image.
		log "$preferred unavailable, resolving $fallback"
		real=$(apt-cache depends "$fallback" | awk '/Depends: linux-image-.*-dbg/ { print $2; exit }')
		[[ -n $real ]] || die "cannot resolve $fallback to a versioned package"
		download "$real" || die "apt-get download $real failed"
	fi
	deb=$(find_deb) || die "no debug package in $cache after download"
fi

# The package holds exactly one vmlinux; its listed size tells whether an
# earlier (possibly interrupted) extraction is complete.
read -r size path < <(dpkg-deb -c "$deb" 2>/dev/null | awk '$6 ~ /\/boot\/vmlinux-/ { print $3, $6; exit }')
[[ -n ${path:-} ]] || die "$deb holds no vmlinux"
vmlinux=$extract/${path#./}
marker=$extract/.complete-$(basename "$deb")
if [[ -f $marker ]] || [[ -f $vmlinux && $(stat -c %s "$vmlinux") == "$size" ]]; then
	log "reusing $extract"
else
	log "extracting $deb into $extract"
	mkdir -p "$extract"
	dpkg-deb -x "$deb" "$extract"
fi
touch "$marker"

release=$(basename "$vmlinux")
release=${release#vmlinux-}
modules_dir=$extract/usr/lib/debug/lib/modules/$release
cat > "$cache/corpus.env" <<ENV
VMLINUX=$vmlinux
MODULES_DIR=$modules_dir
KERNEL_RELEASE=$release
MARKER=$marker
ENV
log "vmlinux: $vmlinux"
log "modules: $modules_dir"
