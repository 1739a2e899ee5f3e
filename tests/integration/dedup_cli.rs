//! `btfenc dedup` and `btfenc distill` on hand-built BTF graphs in the
//! style of the kernel's `prog_tests/btf.c` dedup cases. The expected
//! results are derived by hand from libbpf's `btf__dedup` rules (each case
//! says how), and, where gcc and libbpf-dev are installed, also compared
//! with the system libbpf (1.1, so with `--compat=1.24`, whose rules are
//! that libbpf's) at test time.

use std::path::{Path, PathBuf};
use std::process::Command;

use btfenc_tests::tools::{assert_clean_failure, bpftool_btf_dump, btfenc, report_skip};

/// Raw BTF, written by hand: what the kernel's selftests' `BTF_*_ENC`
/// macros build.
struct Blob {
    /// The first id this blob numbers (1, or a base's count + 1).
    first_id: u32,
    /// The first string offset (0, or a base's string length).
    str_base: u32,
    types: Vec<u8>,
    strings: Vec<u8>,
    count: u32,
}

const INT: u32 = 1;
const PTR: u32 = 2;
const STRUCT: u32 = 4;
const ENUM: u32 = 6;
const FWD: u32 = 7;
const TYPEDEF: u32 = 8;
const DECL_TAG: u32 = 17;
const TYPE_TAG: u32 = 18;
const ENUM64: u32 = 19;

impl Blob {
    fn new() -> Blob {
        Blob {
            first_id: 1,
            str_base: 0,
            types: Vec::new(),
            strings: vec![0],
            count: 0,
        }
    }

    /// Split BTF on `base`: ids and string offsets continue its.
    fn split_on(base: &Blob) -> Blob {
        Blob {
            first_id: base.first_id + base.count,
            str_base: base.strings.len() as u32,
            types: Vec::new(),
            strings: Vec::new(),
            count: 0,
        }
    }

    fn name(&mut self, name: &str) -> u32 {
        if name.is_empty() {
            return 0;
        }
        let offset = self.str_base + self.strings.len() as u32;
        self.strings.extend_from_slice(name.as_bytes());
        self.strings.push(0);
        offset
    }

    fn words(&mut self, words: &[u32]) {
        for word in words {
            self.types.extend_from_slice(&word.to_le_bytes());
        }
    }

    /// Appends a type head; returns the type's id.
    fn head(&mut self, name: &str, kind: u32, kflag: bool, vlen: u32, size_or_type: u32) -> u32 {
        let name = self.name(name);
        let info = (u32::from(kflag) << 31) | (kind << 24) | vlen;
        self.words(&[name, info, size_or_type]);
        self.count += 1;
        self.first_id + self.count - 1
    }

    fn int(&mut self, name: &str, size: u32, signed: bool) -> u32 {
        let id = self.head(name, INT, false, 0, size);
        self.words(&[(u32::from(signed) << 24) | (size * 8)]);
        id
    }

    fn reference(&mut self, kind: u32, name: &str, target: u32) -> u32 {
        self.head(name, kind, false, 0, target)
    }

    fn structure(&mut self, name: &str, size: u32, members: &[(&str, u32, u32)]) -> u32 {
        let id = self.head(name, STRUCT, false, members.len() as u32, size);
        for &(member, ty, bit_offset) in members {
            let member = self.name(member);
            self.words(&[member, ty, bit_offset]);
        }
        id
    }

    fn fwd_struct(&mut self, name: &str) -> u32 {
        self.head(name, FWD, false, 0, 0)
    }

    fn enumeration(&mut self, name: &str, size: u32, values: &[(&str, i32)]) -> u32 {
        let id = self.head(name, ENUM, false, values.len() as u32, size);
        for &(value_name, value) in values {
            let value_name = self.name(value_name);
            self.words(&[value_name, value as u32]);
        }
        id
    }

    fn enumeration64(&mut self, name: &str, values: &[(&str, u64)]) -> u32 {
        let id = self.head(name, ENUM64, false, values.len() as u32, 8);
        for &(value_name, value) in values {
            let value_name = self.name(value_name);
            self.words(&[value_name, value as u32, (value >> 32) as u32]);
        }
        id
    }

    fn decl_tag(&mut self, name: &str, target: u32, component: i32) -> u32 {
        let id = self.head(name, DECL_TAG, false, 0, target);
        self.words(&[component as u32]);
        id
    }

    /// The raw file: a 24-byte little-endian header, types, strings.
    fn write(&self, path: &Path) -> PathBuf {
        let mut out = Vec::new();
        out.extend_from_slice(&0xeb9f_u16.to_le_bytes());
        out.extend_from_slice(&[1, 0]);
        let type_len = self.types.len() as u32;
        for word in [24, 0, type_len, type_len, self.strings.len() as u32] {
            out.extend_from_slice(&u32::to_le_bytes(word));
        }
        out.extend_from_slice(&self.types);
        out.extend_from_slice(&self.strings);
        std::fs::write(path, out).expect("write a hand-built BTF");
        path.to_path_buf()
    }
}

fn temp_dir(test: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("btfenc-{test}-"))
        .tempdir()
        .expect("temp dir")
}

/// `btfenc dedup` (with `extra` flags) of `input` (on `base`), dumped raw.
fn deduped_dump(input: &Path, base: Option<&Path>, extra: &[&str], out: &Path) -> String {
    let mut args: Vec<String> = vec!["dedup".into(), input.display().to_string()];
    if let Some(base) = base {
        args.extend(["--base".into(), base.display().to_string()]);
    }
    args.extend(["-o".into(), out.display().to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    btfenc(&args).assert_success();
    let dump = bpftool_btf_dump(out, base);
    dump.assert_success();
    dump.stdout_text()
}

/// libbpf's own `btf__dedup`, built against the system libbpf; `None` when
/// gcc or libbpf-dev is missing.
fn libbpf_oracle(dir: &Path) -> Option<PathBuf> {
    let source = dir.join("oracle.c");
    let exe = dir.join("oracle");
    std::fs::write(
        &source,
        r#"#include <bpf/btf.h>
#include <stdio.h>
int main(int argc, char **argv) {
	struct btf *base = NULL, *btf;
	const void *data;
	__u32 size;
	FILE *f;
	if (argc > 3 && !(base = btf__parse_raw(argv[3])))
		return 2;
	btf = base ? btf__parse_raw_split(argv[1], base) : btf__parse_raw(argv[1]);
	if (!btf || btf__dedup(btf, NULL))
		return 3;
	data = btf__raw_data(btf, &size);
	f = fopen(argv[2], "wb");
	if (!f || fwrite(data, 1, size, f) != size)
		return 4;
	return fclose(f) ? 5 : 0;
}
"#,
    )
    .ok()?;
    let built = Command::new("gcc")
        .arg("-o")
        .arg(&exe)
        .arg(&source)
        .arg("-lbpf")
        .status();
    built.ok()?.success().then_some(exe)
}

/// Checks one case: btfenc's dedup (pahole 1.31's libbpf) against `expected`,
/// and with `--compat=1.24` against `expected_1_1` and, when it can be
/// built, the system libbpf 1.1 itself.
fn check_case(name: &str, input: &Blob, base: Option<&Blob>, expected: &str, expected_1_1: &str) {
    let dir = temp_dir(name);
    let input_path = input.write(&dir.path().join("in.btf"));
    let base_path = base.map(|b| b.write(&dir.path().join("base.btf")));
    let modern = deduped_dump(
        &input_path,
        base_path.as_deref(),
        &[],
        &dir.path().join("out.btf"),
    );
    assert_eq!(modern, expected, "{name}: btfenc dedup");
    let compat = deduped_dump(
        &input_path,
        base_path.as_deref(),
        &["--compat=1.24"],
        &dir.path().join("out-1.1.btf"),
    );
    assert_eq!(compat, expected_1_1, "{name}: btfenc dedup --compat=1.24");
    let Some(oracle) = libbpf_oracle(dir.path()) else {
        report_skip(
            &format!("dedup_cli::{name}"),
            "gcc or libbpf-dev missing: no libbpf oracle",
        );
        return;
    };
    let libbpf_out = dir.path().join("libbpf.btf");
    let mut command = Command::new(&oracle);
    command.arg(&input_path).arg(&libbpf_out);
    if let Some(base) = &base_path {
        command.arg(base);
    }
    let status = command.status().expect("run the libbpf oracle");
    assert!(
        status.success(),
        "{name}: libbpf's btf__dedup failed: {status}"
    );
    let libbpf = bpftool_btf_dump(&libbpf_out, base_path.as_deref());
    libbpf.assert_success();
    assert_eq!(
        compat,
        libbpf.stdout_text(),
        "{name}: btfenc --compat=1.24 vs libbpf 1.1"
    );
}

/// A struct that points to itself, copied twice (a second CU), and a
/// forward declaration of it behind a pointer in another struct.
/// libbpf: the copy (7..9) is equivalent to 1..3 and goes. The FWD is
/// never met while comparing two struct graphs, but since libbpf 1.1
/// (`btf_dedup_resolve_fwds`) a FWD whose name has exactly one STRUCT is
/// resolved to it before the struct pass: PTR 5 then is a second PTR to 2
/// and goes too, and `holder` points at 3.
#[test]
fn dedup_struct_cycles_and_forwards() {
    let mut btf = Blob::new();
    let int = btf.int("int", 4, true); // 1
    let list = btf.structure("list", 16, &[("next", 3, 0), ("v", int, 64)]); // 2
    btf.reference(PTR, "", list); // 3
    let fwd = btf.fwd_struct("list"); // 4
    let to_fwd = btf.reference(PTR, "", fwd); // 5
    btf.structure("holder", 8, &[("l", to_fwd, 0)]); // 6
    let int2 = btf.int("int", 4, true); // 7
    btf.structure("list", 16, &[("next", 9, 0), ("v", int2, 64)]); // 8
    btf.reference(PTR, "", 8); // 9
    let common = "[1] INT 'int' size=4 bits_offset=0 nr_bits=32 encoding=SIGNED\n\
                  [2] STRUCT 'list' size=16 vlen=2\n\
                  \t'next' type_id=3 bits_offset=0\n\
                  \t'v' type_id=1 bits_offset=64\n\
                  [3] PTR '(anon)' type_id=2\n";
    let expected = format!(
        "{common}[4] STRUCT 'holder' size=8 vlen=1\n\
         \t'l' type_id=3 bits_offset=0\n"
    );
    check_case(
        "struct_cycles_and_forwards",
        &btf,
        None,
        &expected,
        &expected,
    );
}

/// Typedef chains, a type tag, a decl tag, enum and ENUM64 forwards (an
/// enum of vlen 0), all copied twice. libbpf: the copies go (equal
/// primitives, then equal reference chains and struct graphs); an enum
/// forward is merged into the full enum of the same name and size
/// (`btf_compat_enum`: the full one is canonical), so the PTR to it points
/// at the full enum. No flavour difference here.
#[test]
fn dedup_typedefs_tags_and_enum_forwards() {
    let mut btf = Blob::new();
    let int = btf.int("int", 4, true); // 1
    let a = btf.reference(TYPEDEF, "a", int); // 2
    btf.reference(TYPEDEF, "b", a); // 3
    let user = btf.reference(TYPE_TAG, "user", int); // 4
    let ptr = btf.reference(PTR, "", user); // 5
    let s = btf.structure("s", 8, &[("p", ptr, 0)]); // 6
    btf.decl_tag("tag", s, -1); // 7
    let enum_fwd = btf.enumeration("e", 4, &[]); // 8
    btf.enumeration("e", 4, &[("A", 0), ("B", 1)]); // 9
    let enum64_fwd = btf.enumeration64("big", &[]); // 10
    btf.enumeration64("big", &[("X", 1 << 40)]); // 11
    let int2 = btf.int("int", 4, true); // 12
    let a2 = btf.reference(TYPEDEF, "a", int2); // 13
    btf.reference(TYPEDEF, "b", a2); // 14
    let user2 = btf.reference(TYPE_TAG, "user", int2); // 15
    let ptr2 = btf.reference(PTR, "", user2); // 16
    let s2 = btf.structure("s", 8, &[("p", ptr2, 0)]); // 17
    btf.decl_tag("tag", s2, -1); // 18
    btf.reference(PTR, "", enum_fwd); // 19
    btf.reference(PTR, "", enum64_fwd); // 20
    let expected = "[1] INT 'int' size=4 bits_offset=0 nr_bits=32 encoding=SIGNED\n\
                    [2] TYPEDEF 'a' type_id=1\n\
                    [3] TYPEDEF 'b' type_id=2\n\
                    [4] TYPE_TAG 'user' type_id=1\n\
                    [5] PTR '(anon)' type_id=4\n\
                    [6] STRUCT 's' size=8 vlen=1\n\
                    \t'p' type_id=5 bits_offset=0\n\
                    [7] DECL_TAG 'tag' type_id=6 component_idx=-1\n\
                    [8] ENUM 'e' encoding=UNSIGNED size=4 vlen=2\n\
                    \t'A' val=0\n\
                    \t'B' val=1\n\
                    [9] ENUM64 'big' encoding=UNSIGNED size=8 vlen=1\n\
                    \t'X' val=1099511627776ULL\n\
                    [10] PTR '(anon)' type_id=8\n\
                    [11] PTR '(anon)' type_id=9\n";
    check_case(
        "typedefs_tags_and_enum_forwards",
        &btf,
        None,
        expected,
        expected,
    );
}

/// Same name, different shape: a hash collision that must not merge.
/// Structs `s {int a}` and `s {char a}` both stay; the third is a copy of
/// the first and goes.
#[test]
fn dedup_same_name_different_shape() {
    let mut btf = Blob::new();
    let int = btf.int("int", 4, true); // 1
    let char_ = btf.int("char", 1, true); // 2
    btf.structure("s", 4, &[("a", int, 0)]); // 3
    btf.structure("s", 4, &[("a", char_, 0)]); // 4
    btf.structure("s", 4, &[("a", int, 0)]); // 5
    let expected = "[1] INT 'int' size=4 bits_offset=0 nr_bits=32 encoding=SIGNED\n\
                    [2] INT 'char' size=1 bits_offset=0 nr_bits=8 encoding=SIGNED\n\
                    [3] STRUCT 's' size=4 vlen=1\n\
                    \t'a' type_id=1 bits_offset=0\n\
                    [4] STRUCT 's' size=4 vlen=1\n\
                    \t'a' type_id=2 bits_offset=0\n";
    check_case("same_name_different_shape", &btf, None, expected, expected);
}

/// Split dedup: the split's copies of base types (INT, STRUCT s, PTR) map
/// to the base's, so only the split's own struct is left, pointing into
/// the base.
#[test]
fn dedup_split_on_base() {
    let mut base = Blob::new();
    let int = base.int("int", 4, true); // 1
    let s = base.structure("s", 4, &[("a", int, 0)]); // 2
    base.reference(PTR, "", s); // 3
    let mut split = Blob::split_on(&base);
    let int2 = split.int("int", 4, true); // 4
    let s2 = split.structure("s", 4, &[("a", int2, 0)]); // 5
    let ptr2 = split.reference(PTR, "", s2); // 6
    split.structure("m", 8, &[("p", ptr2, 0)]); // 7
    let expected = "[4] STRUCT 'm' size=8 vlen=1\n\
                    \t'p' type_id=3 bits_offset=0\n";
    check_case("split_on_base", &split, Some(&base), expected, expected);
}

/// Where the flavours differ: a split's copy of a base TYPEDEF. libbpf
/// 1.1 deduplicates TYPEDEFs as plain reference types, so the copy maps
/// to the base's and the PTR points into the base. Later libbpf
/// (`btf_dedup_struct_types` takes TYPEDEFs too, and a split type is never
/// made equivalent to a base typedef there) keeps the split's TYPEDEF:
/// pahole 1.31's module BTF has such typedefs, pahole 1.24's does not.
#[test]
fn dedup_split_typedef_by_flavour() {
    let mut base = Blob::new();
    let int = base.int("int", 4, true); // 1
    base.reference(TYPEDEF, "t", int); // 2
    let mut split = Blob::split_on(&base);
    let int2 = split.int("int", 4, true); // 3
    let t2 = split.reference(TYPEDEF, "t", int2); // 4
    split.reference(PTR, "", t2); // 5
    let expected = "[3] TYPEDEF 't' type_id=1\n\
                    [4] PTR '(anon)' type_id=3\n";
    let expected_1_1 = "[3] PTR '(anon)' type_id=2\n";
    check_case(
        "split_typedef_by_flavour",
        &split,
        Some(&base),
        expected,
        expected_1_1,
    );
}

/// `btfenc distill` of a split gives what pahole's `distilled_base`
/// feature wrote (pahole 1.31's reference pair), compared by meaning.
#[test]
fn distill_matches_pahole_reference() {
    let Some(reference) = tools_reference_dir() else {
        report_skip(
            "dedup_cli::distill_matches_pahole_reference",
            "no ../shared/reference",
        );
        return;
    };
    let dir = temp_dir("distill");
    for module in ["tcp_bbr", "af_key"] {
        let split = reference.join(format!("modules/{module}.btf"));
        let out = dir.path().join(format!("{module}.btf"));
        btfenc(&[
            "distill".as_ref(),
            split.as_os_str(),
            "--base".as_ref(),
            reference.join("vmlinux.btf").as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ])
        .assert_success();
        let base_out = dir.path().join(format!("{module}.btf.base"));
        let diff = btfenc(&[
            "diff".as_ref(),
            out.as_os_str(),
            reference
                .join(format!("modules/{module}.distilled.btf"))
                .as_os_str(),
            "--base-a".as_ref(),
            base_out.as_os_str(),
            "--base-b".as_ref(),
            reference
                .join(format!("modules/{module}.distilled.base.btf"))
                .as_os_str(),
        ]);
        assert!(
            diff.success(),
            "{module}: distilled split differs\n{}",
            diff.describe()
        );
        let diff = btfenc(&[
            "diff".as_ref(),
            base_out.as_os_str(),
            reference
                .join(format!("modules/{module}.distilled.base.btf"))
                .as_os_str(),
        ]);
        assert!(
            diff.success(),
            "{module}: distilled base differs\n{}",
            diff.describe()
        );
    }
}

/// The pahole 1.31 reference outputs for Debian 6.1, when present.
fn tools_reference_dir() -> Option<PathBuf> {
    let dir = btfenc_tests::reference_root().join("debian-6.1.0-56-cloud-amd64");
    dir.join("vmlinux.btf").is_file().then_some(dir)
}

#[test]
fn dedup_and_distill_fail_cleanly() {
    let dir = temp_dir("dedup-bad");
    let missing = dir.path().join("missing.btf");
    let out = dir.path().join("out.btf");
    let run = btfenc(&[
        "dedup".as_ref(),
        missing.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_clean_failure(&run, "missing.btf");
    let garbage = dir.path().join("garbage.btf");
    std::fs::write(&garbage, b"not BTF at all").expect("write");
    let run = btfenc(&[
        "dedup".as_ref(),
        garbage.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_clean_failure(&run, "garbage.btf");
    let run = btfenc(&[
        "distill".as_ref(),
        garbage.as_os_str(),
        "--base".as_ref(),
        garbage.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_clean_failure(&run, "garbage.btf");
    assert!(!out.exists(), "a failed run left {}", out.display());
}
