//! `--btf_features=layout` (Linux 7.2+ passes it to pahole >= 1.31): the
//! 32-byte header of libbpf 1.8 and, for base BTF only, the kind layout
//! section between the type and string sections. The installed pahole
//! (1.24) knows no `layout`, so the expected bytes come from what pahole
//! 1.31 (dwarves 1436daf, libbpf 1.8.0) wrote into the shared reference
//! (`debian-7.3.4-cloud-amd64/vmlinux.btf`) and from the kernel's uapi
//! `struct btf_header` / `struct btf_layout`, read here field by field
//! without btfenc's reader.

use std::path::Path;

use btfenc_tests::{assert_clean_failure, bpftool_btf_dump, btfenc, Encoder};

use crate::fixtures::{encode_into, is_big_endian, read, scratch};

/// Linux 7.3's flags for pahole >= 1.31 (scripts/Makefile.btf): FEATURES73,
/// then `layout` in a second `--btf_features`.
const FLAGS_73: [&str; 2] = [
    "--btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func",
    "--btf_features=layout",
];
const FLAGS_73_NO_LAYOUT: [&str; 1] = [
    "--btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func",
];

/// The 80 bytes pahole 1.31 wrote as the kind layout section of the 7.3
/// reference vmlinux.btf: `{info_sz, elem_sz, flags}` for kinds 0..=19
/// (INT 4/0, ARRAY 12/0, STRUCT and UNION 0/12, ENUM 0/8, FUNC_PROTO 0/8,
/// VAR 4/0, DATASEC 0/12, DECL_TAG 4/0, ENUM64 0/12, the rest 0/0; flags
/// 0, so the same bytes in either byte order).
const PAHOLE_LAYOUT: [u8; 80] = [
    0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 12, 0, 0, //
    0, 12, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, //
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 4, 0, 0, 0, //
    0, 12, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, //
];

/// `struct btf_header`'s u32 fields (hdr_len, type_off, type_len,
/// str_off, str_len, and layout_off, layout_len when hdr_len is 32), in
/// the blob's byte order (from its magic).
fn header_fields(blob: &[u8]) -> Vec<u32> {
    let big = match blob.get(..2) {
        Some([0x9f, 0xeb]) => false,
        Some([0xeb, 0x9f]) => true,
        other => panic!("not BTF: magic {other:?}"),
    };
    let word = |at: usize| {
        let bytes: [u8; 4] = blob[at..at + 4].try_into().unwrap();
        if big {
            u32::from_be_bytes(bytes)
        } else {
            u32::from_le_bytes(bytes)
        }
    };
    let hdr_len = word(4);
    (4..hdr_len as usize).step_by(4).map(word).collect()
}

fn check_base_layout(path: &str) {
    let dir = scratch();
    let with = read(&encode_into(
        Encoder::Btfenc,
        path,
        &FLAGS_73,
        dir.path(),
        "layout.btf",
    ));
    let without = read(&encode_into(
        Encoder::Btfenc,
        path,
        &FLAGS_73_NO_LAYOUT,
        dir.path(),
        "plain.btf",
    ));
    // Without layout: the 24-byte header.
    let plain = header_fields(&without);
    let [24, 0, type_len, str_off, str_len] = plain[..] else {
        panic!("{path}: header without layout is {plain:?}");
    };
    assert_eq!(str_off, type_len, "{path}: strings follow the types");
    // With layout: 32 bytes, then types, the 80-byte section, strings.
    let fields = header_fields(&with);
    assert_eq!(
        fields,
        [32, 0, type_len, type_len + 80, str_len, type_len, 80],
        "{path}: hdr_len, type_off, type_len, str_off, str_len, layout_off, layout_len"
    );
    assert_eq!(
        type_len % 4,
        0,
        "{path}: the layout section is 4-byte aligned"
    );
    let (types, strings) = without[24..].split_at(type_len as usize);
    assert_eq!(
        &with[32..32 + type_len as usize],
        types,
        "{path}: same type section"
    );
    let layout_at = 32 + type_len as usize;
    assert_eq!(
        with[layout_at..layout_at + 80],
        PAHOLE_LAYOUT,
        "{path}: pahole's layout section"
    );
    assert_eq!(
        &with[layout_at + 80..],
        strings,
        "{path}: same string section"
    );
    assert_eq!(with[..4], without[..4], "{path}: magic, version, flags");

    let layout_file = dir.path().join("layout.btf");
    let plain_file = dir.path().join("plain.btf");
    // btfenc reads it back: the same types as without layout, and its
    // dump is bpftool's where bpftool can read it (its libbpf 1.1 refuses
    // a byte-swapped header longer than 24 bytes).
    let diff = btfenc(&[
        "diff".as_ref(),
        layout_file.as_os_str(),
        plain_file.as_os_str(),
    ]);
    assert!(
        diff.success(),
        "{path}: layout changes the types\n{}",
        diff.describe()
    );
    let ours = btfenc(&["dump".as_ref(), layout_file.as_os_str()]);
    ours.assert_success();
    if !is_big_endian(path) {
        let theirs = bpftool_btf_dump(&layout_file, None);
        theirs.assert_success();
        assert_eq!(ours.stdout, theirs.stdout, "{path}: btfenc dump vs bpftool");
    }
}

mod base {
    per_fixture!(super::check_base_layout);
}

/// Split BTF with `layout`: libbpf 1.8's 32-byte header with zero layout
/// fields, no layout section (pahole asks for one on base BTF only); it
/// reads on a base that has one.
#[test]
fn split_gets_the_long_header_and_no_layout_section() {
    let dir = scratch();
    let base = encode_into(
        Encoder::Btfenc,
        "obj/gcc-dwarf5/kinds.o",
        &FLAGS_73,
        dir.path(),
        "base.btf",
    );
    let base_flag = format!("--btf_base={}", base.display());
    let flags = [FLAGS_73[0], FLAGS_73[1], &base_flag];
    let split = encode_into(
        Encoder::Btfenc,
        "obj/gcc-dwarf5/structs.o",
        &flags,
        dir.path(),
        "split.btf",
    );
    let plain_flags = [FLAGS_73_NO_LAYOUT[0], &base_flag];
    let plain = encode_into(
        Encoder::Btfenc,
        "obj/gcc-dwarf5/structs.o",
        &plain_flags,
        dir.path(),
        "plain.btf",
    );
    let (split_bytes, plain_bytes) = (read(&split), read(&plain));
    let fields = header_fields(&split_bytes);
    let [32, 0, type_len, str_off, str_len, 0, 0] = fields[..] else {
        panic!("split header with layout is {fields:?}");
    };
    assert_eq!(str_off, type_len);
    assert_eq!(
        header_fields(&plain_bytes),
        [24, 0, type_len, str_off, str_len]
    );
    assert_eq!(
        split_bytes[32..],
        plain_bytes[24..],
        "same sections as without layout"
    );
    let theirs = bpftool_btf_dump(&split, Some(&base));
    theirs.assert_success();
    let ours = btfenc(&[
        "dump".as_ref(),
        split.as_os_str(),
        "--base".as_ref(),
        base.as_os_str(),
    ]);
    ours.assert_success();
    assert_eq!(ours.stdout, theirs.stdout, "btfenc dump vs bpftool -B");
}

/// A layout section that breaks a rule is refused with one line naming
/// the file; each file differs from a good one in one header or layout
/// field.
#[test]
fn malformed_layout_sections_fail_cleanly() {
    let dir = scratch();
    let good = read(&encode_into(
        Encoder::Btfenc,
        "obj/gcc-dwarf5/kinds.o",
        &FLAGS_73,
        dir.path(),
        "good.btf",
    ));
    let fields = header_fields(&good);
    let (type_len, layout_at) = (fields[2], 32 + fields[2] as usize);
    let set = |blob: &mut Vec<u8>, at: usize, value: u32| {
        blob[at..at + 4].copy_from_slice(&value.to_le_bytes())
    };
    type Edit<'a> = &'a dyn Fn(&mut Vec<u8>);
    let cases: [(&str, Edit, &str); 4] = [
        (
            "misaligned",
            &|b| set(b, 24, type_len + 2),
            "not 4-byte aligned",
        ),
        ("partial", &|b| set(b, 28, 78), "not a multiple of 4"),
        ("misplaced", &|b| set(b, 24, type_len - 4), "not between"),
        // STRUCT's entry (kind 4) with 8-byte members.
        (
            "contradicting",
            &|b| b[layout_at + 4 * 4 + 1] = 8,
            "kind layout entry 4 (STRUCT)",
        ),
    ];
    for (name, edit, message) in cases {
        let mut blob = good.clone();
        edit(&mut blob);
        let file = dir.path().join(format!("{name}.btf"));
        std::fs::write(&file, &blob).unwrap();
        let file_text = file.display().to_string();
        let run = btfenc(&["dump", file_text.as_str()]);
        assert_clean_failure(&run, &file_text);
        assert!(run.stderr.contains(message), "{name}: {}", run.stderr);
    }
    let ok: &Path = &dir.path().join("good.btf");
    btfenc(&["dump".as_ref(), ok.as_os_str()]).assert_success();
}
