#!/bin/bash
# check-kbuild: btfenc as the kernel build's PAHOLE. NOT IMPLEMENTED YET;
# this file fixes the structure for whoever implements it.
#
# TODO:
#   1. unpack /usr/src/linux-source-6.1.tar.xz (package linux-source-6.1)
#      into $BTFENC_CACHE/kbuild (reuse if present);
#   2. configure a small kernel: tinyconfig + CONFIG_BPF_SYSCALL,
#      CONFIG_DEBUG_INFO_DWARF5, CONFIG_DEBUG_INFO_BTF, CONFIG_DEBUG_INFO_BTF_MODULES,
#      CONFIG_MODULES and a couple of =m drivers;
#   3. build twice: `make PAHOLE=pahole` and `make PAHOLE=$btfenc` (the kbuild
#      scripts call `$(PAHOLE) --version` first: btfenc must answer like
#      pahole v1.24 or newer), into separate O= directories;
#   4. compare: `btfenc diff` of vmlinux .BTF and each module's .BTF (with
#      --base-a/--base-b the respective vmlinux), kernel load of vmlinux .BTF,
#      resolve_btfids succeeded (the link did), and identical results on a
#      rebuild with another -j.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

log "NOT IMPLEMENTED: the kbuild check does not exist yet (see the TODO in $0)"
exit 1
