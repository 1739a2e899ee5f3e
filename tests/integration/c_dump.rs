//! `btfenc dump --format c` prints exactly what `bpftool btf dump file X
//! format c` (Debian's bpftool 7.1) prints: on btfenc's BTF of every
//! fixture, on split BTF with its base, and on two C files written to
//! exercise the layout rules (padding, packed, bitfields, anonymous and
//! duplicate-named types, declarators).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use btfenc_tests::{bpftool, btfenc, fixture, run, Encoder};

use crate::fixtures::{encode_into, scratch};

/// Every kind the fixtures can produce (type and decl tags, enum64).
const FEATURES: &str =
    "--btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func";

fn bpftool_c(file: &Path, base: Option<&Path>) -> String {
    let mut args: Vec<&OsStr> = Vec::new();
    if let Some(base) = base {
        args.extend([OsStr::new("-B"), base.as_os_str()]);
    }
    args.extend(["btf", "dump", "file"].map(OsStr::new));
    args.push(file.as_os_str());
    args.extend(["format", "c"].map(OsStr::new));
    let theirs = bpftool(&args);
    theirs.assert_success();
    assert!(
        !theirs.stdout.is_empty(),
        "bpftool printed nothing\n{}",
        theirs.describe()
    );
    theirs.stdout_text()
}

fn btfenc_c(file: &Path, base: Option<&Path>) -> String {
    let mut args: Vec<&OsStr> = vec![
        "dump".as_ref(),
        "--format".as_ref(),
        "c".as_ref(),
        file.as_os_str(),
    ];
    if let Some(base) = base {
        args.extend(["--base".as_ref(), base.as_os_str()]);
    }
    let ours = btfenc(&args);
    ours.assert_success();
    ours.stdout_text()
}

/// Byte for byte; on a difference, the first differing line.
fn assert_same_header(ours: &str, theirs: &str, what: &str) {
    if ours == theirs {
        return;
    }
    let line = ours
        .lines()
        .zip(theirs.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| ours.lines().count().min(theirs.lines().count()));
    panic!(
        "`btfenc dump --format c` and `bpftool btf dump file ... format c` differ on {what}, \
         first at line {}:\n  btfenc:  {:?}\n  bpftool: {:?}",
        line + 1,
        ours.lines().nth(line),
        theirs.lines().nth(line)
    );
}

mod of_btfenc_output {
    per_fixture!(|path| {
        let dir = super::scratch();
        let out = super::encode_into(
            super::Encoder::Btfenc,
            path,
            &[super::FEATURES],
            dir.path(),
            "out.btf",
        );
        super::assert_same_header(
            &super::btfenc_c(&out, None),
            &super::bpftool_c(&out, None),
            &format!("btfenc's BTF of {path}"),
        );
    });
}

/// `--format raw` is the default, today's raw dump.
#[test]
fn raw_is_the_default_format() {
    let dir = scratch();
    let out = encode_into(
        Encoder::Btfenc,
        "obj/gcc-dwarf5/kinds.o",
        &[],
        dir.path(),
        "out.btf",
    );
    let default = btfenc(&["dump".as_ref(), out.as_os_str()]);
    let raw = btfenc(&[
        "dump".as_ref(),
        "--format".as_ref(),
        "raw".as_ref(),
        out.as_os_str(),
    ]);
    default.assert_success();
    raw.assert_success();
    assert_eq!(default.stdout_text(), raw.stdout_text());
    assert!(
        default.stdout_text().starts_with("[1] "),
        "{}",
        default.describe()
    );
    let bad = btfenc(&[
        "dump".as_ref(),
        "--format".as_ref(),
        "h".as_ref(),
        out.as_os_str(),
    ]);
    assert!(
        !bad.success(),
        "an unknown format is refused\n{}",
        bad.describe()
    );
}

/// Split BTF on a base: bpftool -B prints the base's types, then the
/// split's, with the split's duplicates of base names suffixed.
fn check_split(input: &str) {
    let dir = scratch();
    let base = dir.path().join("base.btf");
    btfenc_tests::encode_detached(
        Encoder::Btfenc,
        &fixture("obj/gcc-dwarf5/kinds.o"),
        &base,
        &[FEATURES],
    )
    .assert_success();
    let split = dir.path().join("split.btf");
    let base_flag = format!("--btf_base={}", base.display());
    btfenc_tests::encode_detached(
        Encoder::Btfenc,
        &fixture(input),
        &split,
        &[FEATURES, &base_flag],
    )
    .assert_success();
    let theirs = bpftool_c(&split, Some(&base));
    assert_same_header(
        &btfenc_c(&split, Some(&base)),
        &theirs,
        &format!("{input} split on kinds.o"),
    );
    // Not a vacuous comparison: the split's own types are in it.
    assert!(theirs.len() > bpftool_c(&base, None).len());
}

#[test]
fn split_structs_on_kinds_base() {
    check_split("obj/gcc-dwarf5/structs.o");
}

#[test]
fn split_funcs_on_kinds_base() {
    check_split("obj/clang/funcs.o");
}

/// Compiles c_dump/layouts.c and c_dump/dups.c with `compiler` into one
/// relocatable object (two CUs, so `struct dup` and `dup_t` exist twice).
fn compile_sources(compiler: &str, dir: &Path) -> PathBuf {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("integration/c_dump");
    let mut objects = Vec::new();
    for name in ["layouts", "dups"] {
        let object = dir.join(format!("{name}.o"));
        let source = sources.join(format!("{name}.c"));
        run(
            Path::new(compiler),
            &[
                "-g".as_ref(),
                "-O0".as_ref(),
                "-c".as_ref(),
                source.as_os_str(),
                "-o".as_ref(),
                object.as_os_str(),
            ],
        )
        .assert_success();
        objects.push(object);
    }
    let linked = dir.join("both.o");
    run(
        Path::new("ld"),
        &[
            "-r".as_ref(),
            objects[0].as_os_str(),
            objects[1].as_os_str(),
            "-o".as_ref(),
            linked.as_os_str(),
        ],
    )
    .assert_success();
    linked
}

fn check_layouts(compiler: &str) {
    let dir = scratch();
    let object = compile_sources(compiler, dir.path());
    let btf = dir.path().join("both.btf");
    btfenc_tests::encode_detached(Encoder::Btfenc, &object, &btf, &[FEATURES]).assert_success();
    let theirs = bpftool_c(&btf, None);
    assert_same_header(
        &btfenc_c(&btf, None),
        &theirs,
        &format!("layouts.c + dups.c ({compiler})"),
    );
    // The rules the sources are there for did show up in the reference.
    for expected in [
        "__attribute__((packed))",
        "struct dup___2 {",
        "NEG___2 = 3,",
        "long: 64;",
        "int (*arr_fp[4])(void);",
        "volatile",
        "struct empty {};",
    ] {
        assert!(
            theirs.contains(expected),
            "bpftool's header has no `{expected}`:\n{theirs}"
        );
    }
}

#[test]
fn layouts_gcc() {
    check_layouts("gcc");
}

#[test]
fn layouts_clang() {
    check_layouts("clang");
}
