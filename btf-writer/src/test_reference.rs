//! Where the real-kernel inputs of the tests live. The pahole 1.31 reference
//! outputs: `$BTFENC_REFERENCE` when set (`.ci/run` sets it), otherwise
//! `shared/reference` beside the checkout, as CI and the developers' machines
//! lay it out. Debian's kernel debug package: where `make corpus` extracts
//! it. Tests skip (loudly) when the files are absent.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The modules the reference holds, each as `modules/NAME.btf` (split on
/// `vmlinux.btf`) and as the distilled pair `modules/NAME.distilled.base.btf`
/// and `modules/NAME.distilled.btf`.
pub(crate) const MODULES: [&str; 6] = [
    "af_key",
    "nf_conntrack",
    "nf_tables",
    "tcp_bbr",
    "virtio_net",
    "xfs",
];

/// The vmlinux of Debian's debug package, relative to [`debian_debug`]'s
/// root; the reference was made from it.
pub(crate) const DEBIAN_VMLINUX: &str = "boot/vmlinux-6.1.0-56-cloud-amd64";

/// The directory of the same package's modules, relative to
/// [`debian_debug`]'s root.
pub(crate) const DEBIAN_MODULES: &str = "lib/modules/6.1.0-56-cloud-amd64/kernel";

/// The reference root, holding one directory per kernel.
fn root() -> &'static str {
    static ROOT: OnceLock<String> = OnceLock::new();
    ROOT.get_or_init(|| {
        std::env::var("BTFENC_REFERENCE").unwrap_or_else(|_| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/reference").to_string()
        })
    })
}

/// The directory holding Debian 6.1's `vmlinux.btf` and `modules/`.
pub(crate) fn dir() -> &'static str {
    static DIR: OnceLock<String> = OnceLock::new();
    DIR.get_or_init(|| format!("{}/debian-6.1.0-56-cloud-amd64", root()))
}

/// The same for Debian's Linux 7.3.4, whose `vmlinux.btf` pahole wrote
/// with `--btf_features=layout` (a 32-byte header and a kind layout
/// section).
pub(crate) fn dir_73() -> &'static str {
    static DIR: OnceLock<String> = OnceLock::new();
    DIR.get_or_init(|| format!("{}/debian-7.3.4-cloud-amd64", root()))
}

/// The Debian 6.1 reference file at `relative` (`vmlinux.btf`,
/// `modules/xfs.btf`, ...), or `None`, with a note on stderr, when it
/// cannot be read.
pub(crate) fn read(relative: &str) -> Option<Vec<u8>> {
    read_in(dir(), relative)
}

/// [`read`] for the Linux 7.3.4 reference.
pub(crate) fn read_73(relative: &str) -> Option<Vec<u8>> {
    read_in(dir_73(), relative)
}

fn read_in(dir: &str, relative: &str) -> Option<Vec<u8>> {
    let path = Path::new(dir).join(relative);
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(err) => {
            eprintln!("SKIPPED: {}: {err}", path.display());
            None
        }
    }
}

/// `relative` below `usr/lib/debug` of Debian's kernel debug package as
/// `make corpus` extracts it (into `$BTFENC_CACHE/extract`, by default
/// `~/.cache/btfenc/extract`). The file may be absent.
pub(crate) fn debian_debug(relative: &str) -> PathBuf {
    let cache = std::env::var_os("BTFENC_CACHE").map_or_else(
        || Path::new(&std::env::var_os("HOME").unwrap_or_default()).join(".cache/btfenc"),
        PathBuf::from,
    );
    cache.join("extract/usr/lib/debug").join(relative)
}
