//! Locations of the workspace, the committed fixtures and the `btfenc`
//! binary the tests drive.

use std::path::{Path, PathBuf};

/// Overrides the `btfenc` binary the tests run (e.g. an installed one).
pub const BTFENC_BIN_ENV: &str = "BTFENC_BIN";

/// The workspace root: the parent of this crate's directory.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| manifest_dir.to_path_buf())
}

/// `fixtures/` in the workspace.
pub fn fixtures_dir() -> PathBuf {
    workspace_root().join("fixtures")
}

/// A fixture by its path relative to `fixtures/`, e.g. `obj/clang/tags.o`.
///
/// Panics if it does not exist: the objects are committed, so a missing one
/// is a broken checkout, not something to skip.
pub fn fixture(relative: &str) -> PathBuf {
    let path = fixtures_dir().join(relative);
    assert!(
        path.is_file(),
        "fixture {} is missing; run `make fixtures` to rebuild it",
        path.display()
    );
    path
}

/// The `btfenc` binary under test.
///
/// `$BTFENC_BIN` wins; otherwise the most recently built of
/// `<target>/debug/btfenc` and `<target>/release/btfenc`, where `<target>`
/// honours `$CARGO_TARGET_DIR`. Newest wins because `cargo test` cannot
/// build another package's binary for us: the Makefile builds it just
/// before the tests, in whichever profile it was asked for.
pub fn btfenc_bin() -> PathBuf {
    if let Some(explicit) = std::env::var_os(BTFENC_BIN_ENV) {
        return PathBuf::from(explicit);
    }
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_relative() {
                workspace_root().join(dir)
            } else {
                dir
            }
        })
        .unwrap_or_else(|| workspace_root().join("target"));
    let candidates = ["debug", "release"].map(|profile| target_dir.join(profile).join("btfenc"));
    let newest = candidates
        .iter()
        .filter_map(|path| {
            let modified = path.metadata().and_then(|meta| meta.modified()).ok()?;
            Some((modified, path))
        })
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, path)| path.clone());
    match newest {
        Some(path) => path,
        None => panic!(
            "no btfenc binary in {}/{{debug,release}}; run `cargo build -p btfenc` \
             (or `make test`) first, or set ${BTFENC_BIN_ENV}",
            target_dir.display()
        ),
    }
}

/// The pahole 1.31 reference outputs: `$BTFENC_REFERENCE`, else
/// `../shared/reference` beside the workspace (where CI puts it). May not
/// exist: the tests that need it skip loudly.
pub fn reference_root() -> PathBuf {
    std::env::var_os("BTFENC_REFERENCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/reference"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_root_holds_the_workspace_manifest() {
        let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
        assert!(manifest.contains("[workspace]"));
    }

    #[test]
    fn fixture_sources_are_present() {
        assert!(fixture("src/types.h").ends_with("fixtures/src/types.h"));
    }
}
