//! Without `--btf_encode_detached`, btfenc patches a `.BTF` section into
//! the input file, as pahole does for the kernel build.

use std::path::{Path, PathBuf};

use btfenc_tests::{bpftool_btf_dump, btfenc, fixture, pahole, run, AS_SYSTEM_PAHOLE};

use crate::fixtures::{read, scratch};

fn copy_to(relative: &str, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(fixture(relative), &to)
        .unwrap_or_else(|err| panic!("cannot copy {relative}: {err}"));
    to
}

fn assert_in_place_like_pahole(relative: &str) {
    let dir = scratch();
    let ours = copy_to(relative, dir.path(), "ours");
    let theirs = copy_to(relative, dir.path(), "theirs");
    btfenc(&["-J".as_ref(), AS_SYSTEM_PAHOLE.as_ref(), ours.as_os_str()]).assert_success();
    pahole(&["-J".as_ref(), theirs.as_os_str()]).assert_success();

    // Readable by libbpf as an ELF with .BTF, and the same types as
    // pahole's in-place result.
    bpftool_btf_dump(&ours, None).assert_success();
    let diff = btfenc(&["diff".as_ref(), ours.as_os_str(), theirs.as_os_str()]);
    assert!(
        diff.success() && diff.stdout.is_empty(),
        "{}",
        diff.describe()
    );

    // The DWARF survived the patching: pahole still reads it into the same
    // BTF as from the untouched fixture.
    let from_patched = dir.path().join("from-patched.btf");
    let from_original = dir.path().join("from-original.btf");
    btfenc_tests::encode_detached(btfenc_tests::Encoder::Pahole, &ours, &from_patched, &[])
        .assert_success();
    btfenc_tests::encode_detached(
        btfenc_tests::Encoder::Pahole,
        &fixture(relative),
        &from_original,
        &[],
    )
    .assert_success();
    assert!(
        read(&from_patched) == read(&from_original),
        "patching {relative} changed its DWARF"
    );
}

#[test]
fn relocatable_object() {
    assert_in_place_like_pahole("obj/gcc-dwarf5/funcs.o");
}

#[test]
fn multi_cu_clang_object() {
    assert_in_place_like_pahole("obj/multi-cu/clang.o");
}

#[test]
fn compressed_object() {
    assert_in_place_like_pahole("obj/compressed/zlib-multi-cu.o");
}

/// A patched executable still runs, and behaves as before.
#[test]
fn executable_still_runs() {
    assert_in_place_like_pahole("obj/exec/prog-gcc");
    let dir = scratch();
    let patched = copy_to("obj/exec/prog-gcc", dir.path(), "prog");
    btfenc(&["-J".as_ref(), patched.as_os_str()]).assert_success();
    let before = run(&fixture("obj/exec/prog-gcc"), &[] as &[&str]);
    let after = run(&patched, &[] as &[&str]);
    assert_eq!(
        before.status.code(),
        after.status.code(),
        "{}",
        after.describe()
    );
}
