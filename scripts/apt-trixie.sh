# The one writer of btfenc's Debian trixie-backports apt entry, sourced by
# scripts/lib.sh (corpus.sh: Debian 7.3.4's -dbg image, the second corpus)
# and scripts/deps.sh (linux-source-7.3 for check-kbuild). Needs nothing
# but bash and apt: deps.sh runs it on a machine that may lack the rest.
#
# add_trixie_sources makes trixie-backports known to apt on a bookworm
# machine without letting it upgrade anything: a deb822 entry limited to
# amd64, and every trixie* suite pinned at priority 100 (below bookworm's
# 500, so a package bookworm has keeps bookworm's version; one only
# trixie-backports has can still be downloaded by name; never
# `apt-get install -t`). Idempotent: writes the two files and runs
# apt-get update only when they are missing or differ (comment lines do
# not count), and then sets trixie_sources_updated=yes. Not root and
# something to write: a one-line message and status 1.
trixie_sources_file=/etc/apt/sources.list.d/btfenc-trixie.sources
trixie_pin_file=/etc/apt/preferences.d/btfenc-trixie
trixie_sources_updated=

add_trixie_sources() {
	local want_sources want_pin
	want_sources='Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie-backports
Components: main
Architectures: amd64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'
	want_pin='Package: *
Pin: release n=trixie*
Pin-Priority: 100'
	if [[ $(grep -v '^#' "$trixie_sources_file" 2> /dev/null) == "$want_sources" &&
		$(grep -v '^#' "$trixie_pin_file" 2> /dev/null) == "$want_pin" ]]; then
		return 0
	fi
	if ((EUID != 0)); then
		echo "btfenc: apt does not know trixie-backports; as root, run scripts/deps.sh all (it writes $trixie_pin_file and $trixie_sources_file, then apt-get update)" >&2
		return 1
	fi
	echo "btfenc: adding trixie-backports (amd64, trixie* pinned at 100): $trixie_sources_file, $trixie_pin_file; apt-get update" >&2
	# The pin goes in first: apt never sees trixie unpinned.
	printf '%s\n' "# btfenc (scripts/apt-trixie.sh): trixie-backports only for apt-get" \
		"# download (linux-source-7.3, the 7.3 -dbg image); nothing is installed from trixie." \
		"$want_pin" > "$trixie_pin_file"
	printf '%s\n' "$want_sources" > "$trixie_sources_file"
	apt-get update -qq || {
		echo "btfenc: apt-get update failed after adding trixie-backports" >&2
		return 1
	}
	trixie_sources_updated=yes
}
