#!/bin/bash
# Fetches the kernel debug packages the checks and benchmarks run on and
# unpacks them into $BTFENC_CACHE/extract (default ~/.cache/btfenc),
# reusing whatever is already there:
#   - Debian bookworm's linux-image-6.1.0-56-cloud-amd64-dbg (about 300 MB);
#   - Debian trixie-backports' linux-image-7.3.4+deb13-cloud-amd64-dbg
#     (353 MB; Linux 7.3, gcc 14, CONFIG_RUST=y), the kernel whose build
#     asks pahole for the kind layout section. apt learns of
#     trixie-backports through add_trixie_sources (scripts/apt-trixie.sh: amd64
#     only, trixie* pinned at 100, nothing installed from it).
# Writes $BTFENC_CACHE/corpus.env: VMLINUX, MODULES_DIR, KERNEL_RELEASE,
# MARKER for 6.1 and the same with a _73 suffix for 7.3.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

preferred=linux-image-6.1.0-56-cloud-amd64-dbg
fallback=linux-image-cloud-amd64-dbg
release_73=7.3.4+deb13-cloud-amd64
package_73=linux-image-$release_73-dbg
# The 7.3 package goes to a directory of its own, out of the 6.1 glob.
dir_73=$cache/linux-7.3
extract=$cache/extract
mkdir -p "$cache" "$dir_73"

# apt-get download only works with package lists; refresh them once if we
# may (root) and the first attempt failed.
download() {
	local package=$1 into=$2
	(cd "$into" && apt-get download "$package") && return 0
	if [[ $(id -u) == 0 ]]; then
		apt-get update -qq && (cd "$into" && apt-get download "$package")
	else
		return 1
	fi
}

find_deb() { ls -1 "$cache"/linux-image-*-dbg_*_amd64.deb 2>/dev/null | sort -V | tail -n1; }
find_deb_73() { ls -1 "$dir_73/${package_73}"_*_amd64.deb 2>/dev/null | sort -V | tail -n1; }

# Unpacks DEB into $extract unless a complete earlier extraction is there:
# its marker, or FILE (a path inside the package) at its listed size.
# Prints the marker.
unpack() {
	local deb=$1 file=$2 size
	local marker=$extract/.complete-$(basename "$deb")
	if [[ ! -f $marker ]]; then
		# Listing decompresses the whole package: only without a marker.
		# (awk reads to the end: an early exit would fail the pipe.)
		size=$(dpkg-deb -c "$deb" | awk -v f="./$file" '$6 == f && !n++ { print $3 }')
		[[ -n $size ]] || die "$deb holds no $file"
	fi
	if [[ -f $marker ]] || [[ -f $extract/$file && $(stat -c %s "$extract/$file") == "$size" ]]; then
		log "reusing $extract for $(basename "$deb")"
	else
		log "extracting $deb into $extract"
		mkdir -p "$extract"
		dpkg-deb -x "$deb" "$extract"
	fi
	touch "$marker"
	echo "$marker"
}

# Fast path: a finished earlier run with both kernels.
if [[ -f $cache/corpus.env ]]; then
	# shellcheck source=/dev/null
	source "$cache/corpus.env"
	if [[ -n ${MARKER:-} && -f $MARKER && -f ${VMLINUX:-} &&
		-n ${MARKER_73:-} && -f $MARKER_73 && -f ${VMLINUX_73:-} ]]; then
		log "reusing $extract ($VMLINUX, $VMLINUX_73)"
		exit 0
	fi
fi

# Debian 6.1.
deb=$(find_deb || true)
if [[ -z $deb ]]; then
	log "downloading $preferred into $cache"
	if ! download "$preferred" "$cache"; then
		# The metapackage is empty; resolve it to the versioned image.
		log "$preferred unavailable, resolving $fallback"
		real=$(apt-cache depends "$fallback" | awk '/Depends: linux-image-.*-dbg/ { print $2; exit }')
		[[ -n $real ]] || die "cannot resolve $fallback to a versioned package"
		download "$real" "$cache" || die "apt-get download $real failed"
	fi
	deb=$(find_deb) || die "no debug package in $cache after download"
fi
# The package holds exactly one vmlinux, under boot/.
path=$(dpkg-deb -c "$deb" 2>/dev/null | awk '$6 ~ /\/boot\/vmlinux-/ && !n++ { print $6 }')
[[ -n ${path:-} ]] || die "$deb holds no vmlinux"
path=${path#./}
marker=$(unpack "$deb" "$path")
vmlinux=$extract/$path
release=$(basename "$vmlinux")
release=${release#vmlinux-}
modules_dir=$extract/usr/lib/debug/lib/modules/$release

# Debian 7.3.4 (trixie-backports). Its vmlinux is a regular file under
# lib/modules (boot/vmlinux-* is a symlink to it).
deb_73=$(find_deb_73 || true)
if [[ -z $deb_73 ]]; then
	if ! apt-cache show "$package_73" > /dev/null 2>&1; then
		add_trixie_sources || exit 1
	fi
	log "downloading $package_73 into $dir_73"
	download "$package_73" "$dir_73" || die "apt-get download $package_73 failed"
	deb_73=$(find_deb_73) || die "no $package_73 in $dir_73 after download"
fi
path_73=usr/lib/debug/lib/modules/$release_73/vmlinux
marker_73=$(unpack "$deb_73" "$path_73")

cat > "$cache/corpus.env" <<ENV
VMLINUX=$vmlinux
MODULES_DIR=$modules_dir
KERNEL_RELEASE=$release
MARKER=$marker
VMLINUX_73=$extract/$path_73
MODULES_DIR_73=$extract/usr/lib/debug/lib/modules/$release_73
KERNEL_RELEASE_73=$release_73
MARKER_73=$marker_73
ENV
log "vmlinux: $vmlinux"
log "modules: $modules_dir"
log "vmlinux (7.3): $extract/$path_73"
log "modules (7.3): $extract/usr/lib/debug/lib/modules/$release_73"
