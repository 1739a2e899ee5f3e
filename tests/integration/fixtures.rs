//! Knowledge about the fixture objects that the checks need, with every
//! deliberate exception named and explained.

use std::path::{Path, PathBuf};

use btfenc_tests::{encode_detached, fixture, Encoder};

/// The object pahole must read to produce the reference for `path`.
///
/// Exception: Debian bookworm's pahole 1.24 links elfutils 0.188, which
/// cannot decompress zstd (SHF_COMPRESSED with ELFCOMPRESS_ZSTD), so it
/// fails on `zstd-kinds.o`. That object is `objcopy
/// --compress-debug-sections=zstd` of `gcc-dwarf5/kinds.o` (see
/// fixtures/Makefile): the same DWARF bytes, so the uncompressed twin is
/// the right reference.
pub fn pahole_input(path: &str) -> &str {
    match path {
        "obj/compressed/zstd-kinds.o" => "obj/gcc-dwarf5/kinds.o",
        other => other,
    }
}

/// Whether the fixture is big-endian (clang `-target bpfeb`), so that its
/// BTF is written in big-endian byte order, as pahole does.
pub fn is_big_endian(path: &str) -> bool {
    path.contains("bpfeb")
}

/// A scratch directory that disappears with the test.
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("btfenc-test-")
        .tempdir()
        .unwrap_or_else(|err| panic!("cannot create a temporary directory: {err}"))
}

/// Encodes fixture `path` with `encoder` and `flags` into `dir/name`,
/// asserting success; returns the output path.
pub fn encode_into(
    encoder: Encoder,
    path: &str,
    flags: &[&str],
    dir: &Path,
    name: &str,
) -> PathBuf {
    let input = match encoder {
        Encoder::Btfenc => fixture(path),
        Encoder::Pahole => fixture(pahole_input(path)),
    };
    let out = dir.join(name);
    encode_detached(encoder, &input, &out, flags).assert_success();
    assert!(
        out.is_file(),
        "{encoder:?} reported success but wrote no {}",
        out.display()
    );
    out
}

/// Reads a file the test itself just wrote.
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

/// The names of the entries of `dir`, sorted: what a test left behind.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()))
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
