//! BTF attributes: TYPE_TAG and DECL_TAG with kind_flag set (the tag is
//! an `__attribute__((NAME))`, not a `btf_*_tag("NAME")`), which the
//! kernel accepts since the 6.x "BTF attributes" series and which Linux
//! 7.x vmlinux BTF carries (`TYPE_TAG 'address_space(1)'`). btfenc must
//! read such BTF (dump, diff, dedup, and use it as `--btf_base`).

use std::path::{Path, PathBuf};

use btfenc_tests::raw_dump::Dump;
use btfenc_tests::{
    bpftool_btf_dump, btfenc, fixture, kernel_load_btf, report_skip, Encoder, LoadResult,
    AS_SYSTEM_PAHOLE,
};

use crate::fixtures::{read, scratch};

const INT: u32 = 1;
const PTR: u32 = 2;
const STRUCT: u32 = 4;
const DECL_TAG: u32 = 17;
const TYPE_TAG: u32 = 18;

/// Raw little-endian BTF written by hand (btf.rst's layout).
#[derive(Default)]
struct Blob {
    types: Vec<u32>,
    strings: Vec<u8>,
}

impl Blob {
    fn new() -> Blob {
        Blob {
            types: Vec::new(),
            strings: vec![0],
        }
    }

    fn name(&mut self, name: &str) -> u32 {
        let offset = self.strings.len() as u32;
        self.strings.extend_from_slice(name.as_bytes());
        self.strings.push(0);
        offset
    }

    fn head(&mut self, name: &str, kind: u32, kflag: bool, vlen: u32, size_or_type: u32) {
        let name = if name.is_empty() { 0 } else { self.name(name) };
        let info = (u32::from(kflag) << 31) | (kind << 24) | vlen;
        self.types.extend([name, info, size_or_type]);
    }

    fn int(&mut self) {
        self.head("int", INT, false, 0, 4);
        self.types.push((1 << 24) | 32);
    }

    fn type_tag(&mut self, name: &str, attribute: bool, target: u32) {
        self.head(name, TYPE_TAG, attribute, 0, target);
    }

    fn decl_tag(&mut self, name: &str, attribute: bool, target: u32) {
        self.head(name, DECL_TAG, attribute, 0, target);
        self.types.push(u32::MAX); // component_idx -1: the type itself
    }

    fn struct_one(&mut self, name: &str, member: &str, ty: u32) {
        self.head(name, STRUCT, false, 1, 8);
        let member = self.name(member);
        self.types.extend([member, ty, 0]);
    }

    fn bytes(&self) -> Vec<u8> {
        let type_len = (self.types.len() * 4) as u32;
        let mut out = vec![0x9f, 0xeb, 1, 0];
        for word in [24, 0, type_len, type_len, self.strings.len() as u32] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        for word in &self.types {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&self.strings);
        out
    }

    fn write(&self, path: &Path) -> PathBuf {
        std::fs::write(path, self.bytes()).expect("write a hand-built BTF");
        path.to_path_buf()
    }
}

/// `int`, an `address_space(1)` tag on it, a pointer to that, a struct
/// holding the pointer, and a tag on the struct; both tags with
/// kind_flag `attribute`.
fn tagged(attribute: bool) -> Blob {
    let mut b = Blob::new();
    b.int(); // 1
    b.type_tag("address_space(1)", attribute, 1); // 2
    b.head("", PTR, false, 0, 2); // 3
    b.struct_one("s", "p", 3); // 4
    b.decl_tag("attr", attribute, 4); // 5
    b
}

fn bpftool_dump(file: &Path, format_c: bool) -> String {
    let mut args = vec!["btf", "dump", "file"];
    let file = file.display().to_string();
    args.push(&file);
    if format_c {
        args.extend(["format", "c"]);
    }
    let run = btfenc_tests::bpftool(&args);
    run.assert_success();
    run.stdout_text()
}

fn btfenc_dump(file: &Path, format_c: bool) -> String {
    let file = file.display().to_string();
    let mut args = vec!["dump", file.as_str()];
    if format_c {
        args.extend(["--format", "c"]);
    }
    let run = btfenc(&args);
    run.assert_success();
    run.stdout_text()
}

#[test]
fn kernel_loads_attribute_tags() {
    match kernel_load_btf(&tagged(true).bytes()) {
        LoadResult::Loaded => {}
        LoadResult::Skipped(reason) => report_skip("kernel load of attribute tags", &reason),
        LoadResult::Rejected { errno, log } => {
            panic!("the kernel rejected TYPE_TAG/DECL_TAG with kind_flag, errno {errno}:\n{log}")
        }
    }
}

#[test]
fn dump_of_attribute_tags_matches_bpftool() {
    let dir = scratch();
    let file = tagged(true).write(&dir.path().join("attr.btf"));
    for format_c in [false, true] {
        assert_eq!(
            btfenc_dump(&file, format_c),
            bpftool_dump(&file, format_c),
            "btfenc dump (format c: {format_c}) differs from bpftool's"
        );
    }
}

#[test]
fn diff_tells_attributes_from_tags() {
    let dir = scratch();
    let attr = tagged(true).write(&dir.path().join("attr.btf"));
    let plain = tagged(false).write(&dir.path().join("plain.btf"));
    let same = btfenc(&[
        "diff",
        &attr.display().to_string(),
        &attr.display().to_string(),
    ]);
    assert_eq!(same.status.code(), Some(0), "{}", same.describe());
    let differ = btfenc(&[
        "diff",
        &attr.display().to_string(),
        &plain.display().to_string(),
    ]);
    assert_eq!(differ.status.code(), Some(1), "{}", differ.describe());
    let text = differ.stdout_text();
    assert!(
        text.contains("TYPE_TAG") && text.contains("DECL_TAG"),
        "the diff names both tag kinds:\n{text}"
    );
}

/// The kind_flag bit (31 of `info`) of each type of raw, single-record
/// sized BTF `bytes`, read straight from the file: `sizes` gives each
/// type's record length in bytes.
fn kind_flags(bytes: &[u8], sizes: &[usize]) -> Vec<bool> {
    let mut at = 24;
    let mut out = Vec::new();
    for size in sizes {
        let info = bytes.get(at + 4..at + 8).expect("record in range");
        let info = u32::from_le_bytes(info.try_into().expect("4 bytes"));
        out.push(info >> 31 == 1);
        at += size;
    }
    out
}

#[test]
fn dedup_keeps_attribute_and_tag_apart() {
    let dir = scratch();
    let mut b = Blob::new();
    b.int(); // 1
    b.type_tag("a", false, 1); // 2
    b.type_tag("a", true, 1); // 3
    b.type_tag("a", false, 1); // 4, duplicate of 2
    b.type_tag("a", true, 1); // 5, duplicate of 3
    b.struct_one("s", "m", 1); // 6
    b.decl_tag("d", false, 6); // 7
    b.decl_tag("d", true, 6); // 8
    b.decl_tag("d", true, 6); // 9, duplicate of 8
    let input = b.write(&dir.path().join("in.btf"));
    let out = dir.path().join("out.btf");
    btfenc(&[
        "dedup",
        &input.display().to_string(),
        "-o",
        &out.display().to_string(),
    ])
    .assert_success();
    // libbpf's btf__dedup hashes and compares the whole info word, so the
    // duplicates go and the first of each (tag, attribute) pair stays, in
    // input order: int, a, a(attr), s, d, d(attr).
    let dump = bpftool_btf_dump(&out, None);
    dump.assert_success();
    let dump = Dump::parse(&dump.stdout_text()).unwrap_or_else(|err| panic!("{err}"));
    let kinds: Vec<&str> = dump.types.iter().map(|t| t.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["INT", "TYPE_TAG", "TYPE_TAG", "STRUCT", "DECL_TAG", "DECL_TAG"]
    );
    let bytes = read(&out);
    assert_eq!(
        kind_flags(&bytes, &[16, 12, 12, 24, 16, 16]),
        [false, false, true, false, false, true],
        "kind_flag of each deduplicated type"
    );
}

#[test]
fn split_on_a_base_with_attributes() {
    let dir = scratch();
    let base = tagged(true).write(&dir.path().join("base.btf"));
    let base_flag = format!("--btf_base={}", base.display());
    let input = fixture("obj/gcc-dwarf5/kinds.o");
    let ours = dir.path().join("ours.btf");
    btfenc_tests::encode_detached(
        Encoder::Btfenc,
        &input,
        &ours,
        &[base_flag.as_str(), AS_SYSTEM_PAHOLE],
    )
    .assert_success();
    // pahole 1.24 (libbpf 1.1) reads the base too: same split.
    let theirs = dir.path().join("theirs.btf");
    btfenc_tests::encode_detached(Encoder::Pahole, &input, &theirs, &[base_flag.as_str()])
        .assert_success();
    let dump = |file: &Path| {
        let run = bpftool_btf_dump(file, Some(&base));
        run.assert_success();
        run.stdout_text()
    };
    let ours_text = dump(&ours);
    assert!(
        ours_text.starts_with("[6] "),
        "split ids continue after the base's 5:\n{ours_text}"
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
        ours_text,
        "btfenc dump --base differs from bpftool"
    );
    // Same types as pahole's split (pahole 1.24 orders them differently).
    dump(&theirs);
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

/// The `info` word of each record of raw BTF `bytes` (kinds INT, PTR,
/// STRUCT, DECL_TAG and TYPE_TAG only, as the blobs here hold).
fn infos(bytes: &[u8]) -> Vec<u32> {
    let word = |at: usize| {
        let b = bytes.get(at..at + 4).expect("word in range");
        u32::from_le_bytes(b.try_into().expect("4 bytes"))
    };
    let (hdr_len, type_off, type_len) = (word(4) as usize, word(8) as usize, word(12) as usize);
    let mut at = hdr_len + type_off;
    let end = at + type_len;
    let mut out = Vec::new();
    while at < end {
        let info = word(at + 4);
        let extra = match (info >> 24) & 0x1f {
            INT | DECL_TAG => 4,
            STRUCT => 12 * (info & 0xffff) as usize,
            PTR | TYPE_TAG => 0,
            other => panic!("unexpected kind {other}"),
        };
        out.push(info);
        at += 12 + extra;
    }
    out
}

#[test]
fn distill_and_relocate_keep_attributes() {
    let dir = scratch();
    let base_blob = tagged(true);
    let base = base_blob.write(&dir.path().join("base.btf"));
    // Split on it: struct t { int address_space(1) *q; } (type 6, using
    // the base's PTR 3), strings after the base's.
    let str_base = base_blob.strings.len() as u32;
    let mut split = Blob::new();
    split.strings.clear();
    split.strings.extend_from_slice(b"t\0q\0");
    split
        .types
        .extend([str_base, (STRUCT << 24) | 1, 8, str_base + 2, 3, 0]);
    let split = split.write(&dir.path().join("split.btf"));
    let distilled = dir.path().join("distilled.btf");
    let (base_s, split_s, distilled_s) = (
        base.display().to_string(),
        split.display().to_string(),
        distilled.display().to_string(),
    );
    btfenc(&["distill", "--base", &base_s, "-o", &distilled_s, &split_s]).assert_success();
    let relocated = dir.path().join("relocated.btf");
    btfenc(&[
        "relocate",
        &distilled_s,
        "--distilled-base",
        &format!("{distilled_s}.base"),
        "--base",
        &base_s,
        "-o",
        &relocated.display().to_string(),
    ])
    .assert_success();
    // libbpf's distill moves the tag (and the pointer) into the split;
    // both outputs must keep its kind_flag.
    let attribute_tag = 1 << 31 | TYPE_TAG << 24;
    for file in [&distilled, &relocated] {
        let tags: Vec<u32> = infos(&read(file))
            .into_iter()
            .filter(|info| (info >> 24) & 0x1f == TYPE_TAG)
            .collect();
        assert_eq!(tags, [attribute_tag], "{}", file.display());
    }
}
