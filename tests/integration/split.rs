//! Split BTF (`--btf_base`), as for kernel modules: type ids continue
//! after the base's, and base types are referenced, not repeated.

use std::path::Path;

use btfenc_tests::raw_dump::Dump;
use btfenc_tests::{bpftool_btf_dump, btfenc, fixture, Encoder, AS_SYSTEM_PAHOLE};

use crate::fixtures::scratch;

const BASE_OBJECT: &str = "obj/gcc-dwarf5/kinds.o";

/// Split BTF by `encoder`; btfenc as the system pahole (1.24), which
/// writes the other side and the base.
fn encode_split(encoder: Encoder, base: &Path, input: &str, out: &Path) {
    let base_flag = format!("--btf_base={}", base.display());
    let mut flags = vec![base_flag.as_str()];
    if encoder == Encoder::Btfenc {
        flags.push(AS_SYSTEM_PAHOLE);
    }
    btfenc_tests::encode_detached(encoder, &fixture(input), out, &flags).assert_success();
}

fn bpftool_split_dump(split: &Path, base: &Path) -> String {
    let run = bpftool_btf_dump(split, Some(base));
    run.assert_success();
    run.stdout_text()
}

fn check_split(input: &str) {
    let dir = scratch();
    // pahole writes the base for both sides, so only the split differs.
    let base = dir.path().join("base.btf");
    btfenc_tests::encode_detached(Encoder::Pahole, &fixture(BASE_OBJECT), &base, &[])
        .assert_success();
    let ours = dir.path().join("ours.btf");
    let theirs = dir.path().join("theirs.btf");
    encode_split(Encoder::Btfenc, &base, input, &ours);
    encode_split(Encoder::Pahole, &base, input, &theirs);

    let base_types = Dump::of_file(&base, None);
    let base_count = u32::try_from(base_types.types.len()).unwrap_or(u32::MAX);

    // btf.rst: split type ids start right after the base's last id.
    let split_text = bpftool_split_dump(&ours, &base);
    let split_types = Dump::parse(&split_text).unwrap_or_else(|err| panic!("{err}"));
    let first_id = split_types.types.first().map(|ty| ty.id);
    assert_eq!(
        first_id,
        Some(base_count + 1),
        "split ids continue after the base's {base_count}"
    );

    // A struct the base defines (types.h) is not redefined in the split.
    assert!(
        split_types.find_all("STRUCT", "fx_header").is_empty(),
        "fx_header is in the base and must not be repeated in the split"
    );

    let ours_dump = btfenc(&[
        "dump".as_ref(),
        ours.as_os_str(),
        "--base".as_ref(),
        base.as_os_str(),
    ]);
    ours_dump.assert_success();
    assert_eq!(
        ours_dump.stdout_text(),
        split_text,
        "btfenc dump --base differs from bpftool"
    );

    let diff = btfenc(&[
        "diff".as_ref(),
        ours.as_os_str(),
        theirs.as_os_str(),
        "--base-a".as_ref(),
        base.as_os_str(),
        "--base-b".as_ref(),
        base.as_os_str(),
    ]);
    assert!(
        diff.success() && diff.stdout.is_empty(),
        "{}",
        diff.describe()
    );
}

#[test]
fn structs_on_kinds_base() {
    check_split("obj/gcc-dwarf5/structs.o");
}

#[test]
fn funcs_on_kinds_base() {
    check_split("obj/gcc-dwarf5/funcs.o");
}
