//! Where the pahole 1.31 reference outputs live, for the tests that compare
//! with them: `$BTFENC_REFERENCE` when set (`.ci/run` sets it), otherwise
//! `shared/reference` beside the checkout, as CI and the developers' machines
//! lay it out. Tests skip (loudly) when the files are absent.

use std::sync::OnceLock;

/// The directory holding `vmlinux.btf` and `modules/`.
pub(crate) fn dir() -> &'static str {
    static DIR: OnceLock<String> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = std::env::var("BTFENC_REFERENCE")
            .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/reference").to_string());
        format!("{root}/debian-6.1.0-56-cloud-amd64")
    })
}
