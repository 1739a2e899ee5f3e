//! lld keeps a linker script's empty `.BTF` output section (ALLOC, size 0)
//! in a clang-built kernel's `.tmp_vmlinux.btf`; pahole fills it in place
//! (libelf keeps the header, only size and offset change) and the kernel
//! build then copies it out with
//! `objcopy --only-section=.BTF --set-section-flags .BTF=alloc,readonly --strip-all`
//! (Linux 6.1 and 6.12 scripts/link-vmlinux.sh). btfenc must do the same
//! and keep every other byte where it was; an ALLOC `.BTF` with contents is
//! still refused.

use std::path::{Path, PathBuf};

use btfenc_tests::{bpftool_btf_dump, btfenc, fixture, pahole, report_skip, run, AS_SYSTEM_PAHOLE};

use crate::fixtures::{read, scratch};

/// `ld.lld-14 -T src/btf-placeholder.lds` of the clang objects.
const LLD_PROG: &str = "obj/lld/prog-btf-placeholder";

/// The clang/lld tinyconfig kernel's `.tmp_vmlinux.btf` (see the
/// reference README), when the shared reference is there.
const TINYCONFIG_XZ: &str = "clang14-tinyconfig-6.1/tmp_vmlinux.btf.xz";

/// One row of `readelf -SW`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Section {
    name: String,
    kind: String,
    address: u64,
    offset: u64,
    size: u64,
    flags: String,
    align: u64,
}

fn sections(file: &Path) -> Vec<Section> {
    let out = run(Path::new("readelf"), &["-SW".as_ref(), file.as_os_str()]);
    out.assert_success();
    let mut rows = Vec::new();
    for line in out.stdout_text().lines() {
        let Some((number, rest)) = line
            .trim_start()
            .strip_prefix('[')
            .and_then(|r| r.split_once(']'))
        else {
            continue;
        };
        if number.trim().parse::<u32>().is_err() {
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // Name Type Address Off Size ES [Flg] Lk Inf Al
        if fields.len() < 9 {
            continue;
        }
        let hex = |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        let (flags, align) = if fields.len() == 10 {
            (fields[6].to_owned(), fields[9])
        } else {
            (String::new(), fields[8])
        };
        rows.push(Section {
            name: fields[0].to_owned(),
            kind: fields[1].to_owned(),
            address: hex(fields[2]),
            offset: hex(fields[3]),
            size: hex(fields[4]),
            flags,
            align: align.parse().unwrap_or_else(|e| panic!("{line:?}: {e}")),
        });
    }
    rows
}

fn btf_header(file: &Path) -> Section {
    sections(file)
        .into_iter()
        .find(|s| s.name == ".BTF")
        .unwrap_or_else(|| panic!("{} has no .BTF", file.display()))
}

/// The program header table as `readelf -lW` prints it, without its
/// section-to-segment mapping (readelf derives that from the section
/// headers, and the filled `.BTF` no longer lies inside the first segment's
/// file range: its bytes went after the end, as libelf's would not).
fn program_headers(file: &Path) -> String {
    let out = run(Path::new("readelf"), &["-lW".as_ref(), file.as_os_str()]);
    out.assert_success();
    let text = out.stdout_text();
    match text.split_once("Section to Segment mapping") {
        Some((table, _)) => table.to_owned(),
        None => text,
    }
}

fn copy_to(from: &Path, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to).unwrap_or_else(|e| panic!("cannot copy {}: {e}", from.display()));
    to
}

/// What the kernel build does next: `.BTF` alone into an object, then its
/// contents out again, with GNU objcopy (gcc builds) and llvm-objcopy
/// (LLVM=1 builds) when installed.
fn extracted_by_kbuild(file: &Path, dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    for tool in ["objcopy", "llvm-objcopy-14", "llvm-objcopy"] {
        let probe = run(Path::new(tool), &["--version"]);
        if !probe.success() {
            continue;
        }
        let object = dir.join(format!("{tool}.btf.o"));
        run(
            Path::new(tool),
            &[
                "--only-section=.BTF".as_ref(),
                "--set-section-flags".as_ref(),
                ".BTF=alloc,readonly".as_ref(),
                "--strip-all".as_ref(),
                file.as_os_str(),
                object.as_os_str(),
            ],
        )
        .assert_success();
        let raw = dir.join(format!("{tool}.btf.raw"));
        let spec = format!(".BTF={}", raw.display());
        run(
            Path::new(tool),
            &[
                "--dump-section".as_ref(),
                spec.as_ref(),
                object.as_os_str(),
                dir.join(format!("{tool}.scratch")).as_os_str(),
            ],
        )
        .assert_success();
        found.push((tool.to_owned(), read(&raw)));
    }
    assert!(!found.is_empty(), "no objcopy to check the extraction with");
    found
}

/// Fills `original`'s empty ALLOC `.BTF` in a copy with `flags` and checks
/// everything but the comparison with pahole. Returns the filled copy.
fn fill_and_check(original: &Path, dir: &Path, flags: &[&str]) -> PathBuf {
    let before = btf_header(original);
    assert!(
        before.flags.contains('A') && before.size == 0 && before.kind == "PROGBITS",
        "{}: not an empty ALLOC .BTF: {before:?}",
        original.display()
    );
    let ours = copy_to(original, dir, "ours");
    let mut args: Vec<&str> = vec!["-J"];
    args.extend(flags);
    let ours_text = ours.to_string_lossy().into_owned();
    args.push(&ours_text);
    btfenc(&args).assert_success();

    // pahole's header: type, flags, address and alignment stay; only the
    // size (and where the bytes are) change.
    let after = btf_header(&ours);
    assert!(after.size > 0, "{after:?}");
    assert_eq!(
        (&after.kind, &after.flags, after.address, after.align),
        (&before.kind, &before.flags, before.address, before.align),
        "the .BTF header changed beyond size and offset"
    );

    // Every other section keeps its offset, size and bytes (the section
    // name table may move), and the program headers are untouched.
    let (old_bytes, new_bytes) = (read(original), read(&ours));
    let new_sections = sections(&ours);
    for old in sections(original) {
        if old.name == ".BTF" || old.name == ".shstrtab" {
            continue;
        }
        let new = new_sections
            .iter()
            .find(|s| s.name == old.name)
            .unwrap_or_else(|| panic!("{} lost section {}", ours.display(), old.name));
        assert_eq!(&old, new, "section {} changed", old.name);
        if old.kind != "NOBITS" {
            let range = old.offset as usize..(old.offset + old.size) as usize;
            assert!(
                old_bytes[range.clone()] == new_bytes[range],
                "section {} changed its bytes",
                old.name
            );
        }
    }
    assert_eq!(
        program_headers(original),
        program_headers(&ours),
        "program headers changed"
    );

    // libbpf reads it, and what the kernel build extracts is exactly the
    // BTF of a detached encoding with the same flags.
    bpftool_btf_dump(&ours, None).assert_success();
    let detached = dir.join("detached.btf");
    let detached_flag = format!("--btf_encode_detached={}", detached.display());
    let original_text = original.to_string_lossy().into_owned();
    let mut args: Vec<&str> = vec!["-J"];
    args.extend(flags);
    args.push(&detached_flag);
    args.push(&original_text);
    btfenc(&args).assert_success();
    let expected = read(&detached);
    for (tool, bytes) in extracted_by_kbuild(&ours, dir) {
        assert!(
            bytes == expected,
            "{tool} extracted other bytes than the detached BTF"
        );
    }
    ours
}

/// pahole 1.24 in place on a copy of the same file: the same types.
fn assert_same_types_as_pahole_in_place(
    original: &Path,
    ours: &Path,
    dir: &Path,
    skip_kinds: &[&str],
) {
    let theirs = copy_to(original, dir, "theirs");
    pahole(&[
        "-J".as_ref(),
        "--btf_gen_floats".as_ref(),
        theirs.as_os_str(),
    ])
    .assert_success();
    let theirs_header = btf_header(&theirs);
    let ours_header = btf_header(ours);
    assert_eq!(
        (
            &ours_header.kind,
            &ours_header.flags,
            ours_header.address,
            ours_header.align
        ),
        (
            &theirs_header.kind,
            &theirs_header.flags,
            theirs_header.address,
            theirs_header.align
        ),
        "btfenc's .BTF header differs from pahole's"
    );
    let diff = btfenc(&["diff".as_ref(), ours.as_os_str(), theirs.as_os_str()]);
    assert!(
        diff.status.code().is_some_and(|c| c <= 1),
        "{}",
        diff.describe()
    );
    let different: Vec<String> = diff
        .stdout_text()
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter(|l| !skip_kinds.iter().any(|k| l.starts_with(&format!("{k}:"))))
        .filter(|l| !l.contains("only_a=0 only_b=0") || !same_totals(l))
        .map(str::to_owned)
        .collect();
    assert!(
        different.is_empty(),
        "btfenc and pahole disagree:\n{}",
        diff.describe()
    );
}

/// `KIND: a=N b=N ...` with a == b.
fn same_totals(line: &str) -> bool {
    let value = |key: &str| line.split_whitespace().find_map(|f| f.strip_prefix(key));
    value("a=").is_some() && value("a=") == value("b=")
}

#[test]
fn lld_empty_alloc_btf_is_filled_like_pahole() {
    let dir = scratch();
    let original = fixture(LLD_PROG);
    let ours = fill_and_check(
        &original,
        dir.path(),
        &[AS_SYSTEM_PAHOLE, "--btf_gen_floats"],
    );
    assert_same_types_as_pahole_in_place(&original, &ours, dir.path(), &[]);

    // Now the .BTF is ALLOC and holds BTF: part of the image, refused as
    // before, and the file is left alone.
    let before = read(&ours);
    let again = btfenc(&["-J".as_ref(), ours.as_os_str()]);
    assert!(!again.success(), "{}", again.describe());
    assert!(again.stderr.contains("is ALLOC"), "{}", again.describe());
    assert!(read(&ours) == before, "a refused run changed the file");
}

/// pahole 1.31's meaning of the kernel's legacy flags fills it just the same.
#[test]
fn lld_empty_alloc_btf_with_linux_6_1_flags() {
    let dir = scratch();
    fill_and_check(
        &fixture(LLD_PROG),
        dir.path(),
        &[
            "--btf_gen_floats",
            "-j",
            "--lang_exclude=rust",
            "--skip_encoding_btf_inconsistent_proto",
            "--btf_gen_optimized",
        ],
    );
}

/// The real thing: the clang-14 tinyconfig kernel's `.tmp_vmlinux.btf`.
/// FUNC and FUNC_PROTO are left out of the comparison with pahole: which
/// functions clang's locations allow is another matter (issue 13 item 4).
#[test]
fn lld_tinyconfig_kernel_is_filled_like_pahole() {
    let xz = btfenc_tests::reference_root().join(TINYCONFIG_XZ);
    if !xz.is_file() {
        report_skip(
            "lld_tinyconfig_kernel_is_filled_like_pahole",
            &format!("no {}", xz.display()),
        );
        return;
    }
    let dir = scratch();
    let compressed = copy_to(&xz, dir.path(), "tmp_vmlinux.btf.xz");
    run(Path::new("xz"), &["-dk".as_ref(), compressed.as_os_str()]).assert_success();
    let original = dir.path().join("tmp_vmlinux.btf");
    let ours = fill_and_check(
        &original,
        dir.path(),
        &[AS_SYSTEM_PAHOLE, "--btf_gen_floats", "-j"],
    );
    assert_same_types_as_pahole_in_place(&original, &ours, dir.path(), &["FUNC", "FUNC_PROTO"]);
}
