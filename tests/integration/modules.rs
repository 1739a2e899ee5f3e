//! Kernel-module workflows on small ET_REL fixtures: split BTF with a
//! distilled base (`.BTF.base`), `btfenc relocate`, in-place patching of
//! relocatable objects, atomic writing, and batch encoding.
//!
//! The judges are outside tools: bpftool parses what we write (with `-B`
//! for a split), readelf and objcopy read the patched ELF, pahole 1.24
//! writes the base and the direct split encoding. The distilled base is
//! checked against the rules of libbpf's `btf__distill_base` as stated in
//! its documentation (named INT/FLOAT/FWD kept, named STRUCT/UNION as
//! member-less of the same size, named ENUM/ENUM64 as value-less ENUM of
//! the same size), with sizes taken from bpftool's dump of the base.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use btfenc_tests::raw_dump::Dump;
use btfenc_tests::{
    assert_clean_failure, bpftool_btf_dump, btfenc, fixture, run, Encoder, RunOutput,
};

use crate::fixtures::{files_in, read, scratch};

/// The "vmlinux" of these tests: pahole's BTF of one object.
const BASE_OBJECT: &str = "obj/gcc-dwarf5/kinds.o";
/// The "modules": objects sharing types with the base (fx_header, ...).
const MODULES: [&str; 3] = [
    "obj/gcc-dwarf5/structs.o",
    "obj/gcc-dwarf5/funcs.o",
    "obj/gcc-dwarf5/tags.o",
];

/// The kernel's feature list (scripts/Makefile.btf for pahole >= 1.26).
/// `--btf_features` selects exactly what it lists, so a distilled and a
/// direct encoding are compared with the same list, plus `distilled_base`.
const FEATURES: &str = concat!("--btf_features=", kernel_features!());
const DISTILLED_FEATURES: &str = concat!("--btf_features=", kernel_features!(), ",distilled_base");

fn pahole_base(dir: &Path) -> PathBuf {
    let base = dir.join("vmlinux.btf");
    btfenc_tests::encode_detached(Encoder::Pahole, &fixture(BASE_OBJECT), &base, &[])
        .assert_success();
    base
}

fn copy_fixture(relative: &str, to: &Path) -> PathBuf {
    std::fs::copy(fixture(relative), to)
        .unwrap_or_else(|err| panic!("cannot copy {relative}: {err}"));
    to.to_path_buf()
}

fn base_flag(base: &Path) -> String {
    format!("--btf_base={}", base.display())
}

/// `btfenc relocate SPLIT [--distilled-base DISTILLED] --base BASE -o OUT`,
/// then `extra`.
fn relocate(
    split: &Path,
    distilled: Option<&Path>,
    base: &Path,
    out: &Path,
    extra: &[&str],
) -> RunOutput {
    let mut args: Vec<&OsStr> = vec!["relocate".as_ref(), split.as_os_str()];
    if let Some(distilled) = distilled {
        args.extend(["--distilled-base".as_ref(), distilled.as_os_str()]);
    }
    args.extend([
        "--base".as_ref(),
        base.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    args.extend(extra.iter().map(OsStr::new));
    btfenc(&args)
}

/// `btfenc diff` per kind: (only_a, only_b).
fn diff_counts(a: &Path, base_a: &Path, b: &Path, base_b: &Path) -> BTreeMap<String, (u64, u64)> {
    let run = btfenc::<&OsStr>(&[
        "diff".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "--base-a".as_ref(),
        base_a.as_os_str(),
        "--base-b".as_ref(),
        base_b.as_os_str(),
    ]);
    assert!(
        run.status.code().is_some_and(|c| c <= 1),
        "{}",
        run.describe()
    );
    let mut counts = BTreeMap::new();
    for line in run.stdout_text().lines().filter(|l| !l.starts_with(' ')) {
        let Some((kind, rest)) = line.split_once(": ") else {
            continue;
        };
        let field = |name: &str| {
            rest.split_whitespace()
                .find_map(|f| f.strip_prefix(name)?.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no {name} in {line:?}"))
        };
        counts.insert(kind.to_owned(), (field("only_a="), field("only_b=")));
    }
    counts
}

/// One section header as readelf prints it.
#[derive(Debug, Clone)]
struct SectionHeader {
    name: String,
    kind: String,
    flags: String,
    offset: u64,
    size: u64,
}

/// `readelf -SW`, parsed: the outside view of the section table.
fn sections(file: &Path) -> Vec<SectionHeader> {
    let run = run(Path::new("readelf"), &["-SW".as_ref(), file.as_os_str()]);
    run.assert_success();
    let mut out = Vec::new();
    for line in run.stdout_text().lines() {
        let Some(rest) = line.trim_start().strip_prefix('[') else {
            continue;
        };
        let Some((number, rest)) = rest.split_once(']') else {
            continue;
        };
        if number.trim().parse::<u32>().is_err() {
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // Name Type Address Off Size ES [Flg] Lk Inf Al; the NULL entry has
        // no name.
        if fields.len() < 9 {
            continue;
        }
        let hex =
            |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|err| panic!("{line:?}: {err}"));
        let flags = if fields.len() == 10 {
            fields[6].to_owned()
        } else {
            String::new()
        };
        out.push(SectionHeader {
            name: fields[0].to_owned(),
            kind: fields[1].to_owned(),
            flags,
            offset: hex(fields[3]),
            size: hex(fields[4]),
        });
    }
    out
}

fn section_bytes(file_bytes: &[u8], header: &SectionHeader) -> Vec<u8> {
    if header.kind == "NOBITS" {
        return Vec::new();
    }
    let start = usize::try_from(header.offset).unwrap_or(usize::MAX);
    let end = start.saturating_add(usize::try_from(header.size).unwrap_or(usize::MAX));
    file_bytes
        .get(start..end)
        .unwrap_or_else(|| panic!("section {} lies outside the file", header.name))
        .to_vec()
}

/// `objcopy --dump-section NAME=OUT`: what binutils reads as the section.
fn objcopy_dump(file: &Path, name: &str, dir: &Path) -> Vec<u8> {
    let out = dir.join(format!("dumped{name}"));
    let spec = format!("{name}={}", out.display());
    let run = run(
        Path::new("objcopy"),
        &[
            "--dump-section".as_ref(),
            spec.as_ref(),
            file.as_os_str(),
            dir.join("objcopy-scratch").as_os_str(),
        ],
    );
    run.assert_success();
    read(&out)
}

/// Every section of `original` except the ones btfenc writes (and the
/// section-name table, which gains their names) has the same type, flags
/// and bytes in `patched`; `written` sections are non-ALLOC PROGBITS.
fn assert_only_btf_sections_changed(original: &Path, patched: &Path, written: &[&str]) {
    let (before, after) = (sections(original), sections(patched));
    let (before_bytes, after_bytes) = (read(original), read(patched));
    for header in &before {
        if written.contains(&header.name.as_str()) || header.name == ".shstrtab" {
            continue;
        }
        let twin = after
            .iter()
            .find(|h| h.name == header.name && h.kind == header.kind)
            .unwrap_or_else(|| panic!("section {} is gone after patching", header.name));
        assert_eq!(twin.flags, header.flags, "flags of {} changed", header.name);
        assert!(
            section_bytes(&before_bytes, header) == section_bytes(&after_bytes, twin),
            "bytes of section {} changed",
            header.name
        );
    }
    for name in written {
        let found: Vec<&SectionHeader> = after.iter().filter(|h| h.name == *name).collect();
        assert_eq!(
            found.len(),
            1,
            "expected exactly one {name} section: {after:?}"
        );
        assert_eq!(found[0].kind, "PROGBITS", "{name} type");
        assert!(
            !found[0].flags.contains('A'),
            "{name} must not be ALLOC: {:?}",
            found[0]
        );
    }
    assert_eq!(
        after.len(),
        before.len()
            + written
                .iter()
                .filter(|n| !before.iter().any(|h| h.name == **n))
                .count()
    );
}

// ----- distilled base -----

/// Checks one distilled pair against the rules, with `base` the full base
/// it was distilled from.
fn check_distilled_pair(split: &Path, distilled: &Path, base: &Path) {
    let full = Dump::of_file(base, None);
    let small = Dump::of_file(distilled, None);
    assert!(
        !small.types.is_empty(),
        "{}: empty distilled base",
        distilled.display()
    );
    for ty in &small.types {
        assert_ne!(
            ty.name, "(anon)",
            "anonymous type in a distilled base: {ty:?}"
        );
        match ty.kind.as_str() {
            "INT" | "FLOAT" | "FWD" => {
                let same: Vec<_> = full.find_all(&ty.kind, &ty.name);
                assert!(
                    same.iter().any(|b| b.attrs == ty.attrs),
                    "{} '{}' is not copied from the base as is: {ty:?} vs {same:?}",
                    ty.kind,
                    ty.name
                );
            }
            "STRUCT" | "UNION" => {
                assert_eq!(
                    ty.attr("vlen"),
                    Some("0"),
                    "distilled {} keeps no members: {ty:?}",
                    ty.kind
                );
                let sizes: Vec<_> = full
                    .find_all(&ty.kind, &ty.name)
                    .iter()
                    .filter_map(|b| b.attr("size"))
                    .collect();
                assert!(
                    sizes.contains(&ty.attr("size").unwrap_or("?")),
                    "size of {ty:?} not among {sizes:?}"
                );
            }
            "ENUM" => {
                assert_eq!(
                    ty.attr("vlen"),
                    Some("0"),
                    "distilled ENUM keeps no values: {ty:?}"
                );
                let sizes: Vec<_> = ["ENUM", "ENUM64"]
                    .iter()
                    .flat_map(|kind| full.find_all(kind, &ty.name))
                    .filter_map(|b| b.attr("size"))
                    .collect();
                assert!(
                    sizes.contains(&ty.attr("size").unwrap_or("?")),
                    "size of {ty:?} not among {sizes:?}"
                );
            }
            other => panic!("kind {other} does not belong in a distilled base: {ty:?}"),
        }
    }
    // The split continues after the distilled base, and bpftool reads it.
    let on_small = Dump::of_file(split, Some(distilled));
    let first = on_small.types.first().map(|t| t.id);
    assert_eq!(
        first,
        Some(small.types.len() as u32 + 1),
        "split ids continue after the distilled base"
    );
}

#[test]
fn distilled_base_follows_libbpf_rules_and_relocates_back() {
    let dir = scratch();
    let base = pahole_base(dir.path());
    for module in MODULES {
        let name = Path::new(module)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let split = dir.path().join(format!("{name}.btf"));
        let distilled = dir.path().join(format!("{name}.btf.base"));
        btfenc_tests::encode_detached(
            Encoder::Btfenc,
            &fixture(module),
            &split,
            &[&base_flag(&base), DISTILLED_FEATURES],
        )
        .assert_success();
        assert!(
            distilled.is_file(),
            "detached distilled output goes to OUT.base"
        );
        check_distilled_pair(&split, &distilled, &base);

        // The direct split encoding on the same base is what relocation
        // must give back. (It is checked against pahole in split.rs; here
        // the property is distill-then-relocate = identity, so both sides
        // come from the same dedup.)
        let direct = dir.path().join(format!("{name}.direct.btf"));
        btfenc_tests::encode_detached(
            Encoder::Btfenc,
            &fixture(module),
            &direct,
            &[&base_flag(&base), FEATURES],
        )
        .assert_success();

        let relocated = dir.path().join(format!("{name}.relocated.btf"));
        relocate(&split, Some(&distilled), &base, &relocated, &[]).assert_success();
        // bpftool reads it as a split of the full base ...
        let dump = Dump::of_file(&relocated, Some(&base));
        let base_count = Dump::of_file(&base, None).types.len() as u32;
        assert_eq!(dump.types.first().map(|t| t.id), Some(base_count + 1));
        // ... and it holds every type of the direct encoding; what it has
        // beyond are the base types distilling moved into the split.
        for (kind, (_, only_direct)) in diff_counts(&relocated, &base, &direct, &base) {
            assert_eq!(
                only_direct, 0,
                "{module}: {kind} of the direct split missing after relocation"
            );
        }

        // Deduplicating against the full base afterwards folds those back:
        // the same types as the direct encoding.
        let folded = dir.path().join(format!("{name}.folded.btf"));
        relocate(&split, Some(&distilled), &base, &folded, &["--dedup"]).assert_success();
        for (kind, counts) in diff_counts(&folded, &base, &direct, &base) {
            assert_eq!(
                counts,
                (0, 0),
                "{module}: {kind} differs from the direct split"
            );
        }
    }
}

#[test]
fn relocate_onto_a_base_without_the_types_fails_clearly() {
    let dir = scratch();
    let base = pahole_base(dir.path());
    let split = dir.path().join("structs.btf");
    btfenc_tests::encode_detached(
        Encoder::Btfenc,
        &fixture("obj/gcc-dwarf5/structs.o"),
        &split,
        &[&base_flag(&base), DISTILLED_FEATURES],
    )
    .assert_success();
    // A "kernel" built from another object: no fx_header in it.
    let other = dir.path().join("other.btf");
    btfenc_tests::encode_detached(
        Encoder::Pahole,
        &fixture("obj/gcc-dwarf5/main.o"),
        &other,
        &[],
    )
    .assert_success();
    let out = dir.path().join("out.btf");
    let distilled = dir.path().join("structs.btf.base");
    let run = relocate(&split, Some(&distilled), &other, &out, &[]);
    assert_clean_failure(&run, &split.to_string_lossy());
    assert!(
        run.stderr.contains("has no match in the base BTF"),
        "{}",
        run.describe()
    );
    assert!(!out.exists(), "no output after a failed relocation");
}

// ----- in-place patching -----

#[test]
fn in_place_split_adds_only_btf_to_a_relocatable_object() {
    let dir = scratch();
    let base = pahole_base(dir.path());
    let object = copy_fixture("obj/gcc-dwarf5/structs.o", &dir.path().join("structs.ko"));
    let detached = dir.path().join("detached.btf");
    btfenc_tests::encode_detached(Encoder::Btfenc, &object, &detached, &[&base_flag(&base)])
        .assert_success();

    btfenc::<&OsStr>(&["-J".as_ref(), base_flag(&base).as_ref(), object.as_os_str()])
        .assert_success();
    assert_only_btf_sections_changed(&fixture("obj/gcc-dwarf5/structs.o"), &object, &[".BTF"]);
    assert!(
        objcopy_dump(&object, ".BTF", dir.path()) == read(&detached),
        "objcopy reads back what was written"
    );
    Dump::of_file(&object, Some(&base));

    // Encoding again replaces the section instead of adding a second one,
    // and gives the same bytes.
    let first = read(&object);
    btfenc::<&OsStr>(&["-J".as_ref(), base_flag(&base).as_ref(), object.as_os_str()])
        .assert_success();
    assert!(
        read(&object) == first,
        "re-encoding a patched object changed it"
    );
}

#[test]
fn in_place_distilled_adds_btf_and_btf_base() {
    let dir = scratch();
    let base = pahole_base(dir.path());
    let object = copy_fixture("obj/gcc-dwarf5/funcs.o", &dir.path().join("funcs.ko"));
    let detached = dir.path().join("detached.btf");
    let flags = [base_flag(&base), DISTILLED_FEATURES.to_owned()];
    btfenc_tests::encode_detached(Encoder::Btfenc, &object, &detached, &[&flags[0], &flags[1]])
        .assert_success();

    btfenc::<&OsStr>(&[
        "-J".as_ref(),
        flags[0].as_ref(),
        flags[1].as_ref(),
        object.as_os_str(),
    ])
    .assert_success();
    assert_only_btf_sections_changed(
        &fixture("obj/gcc-dwarf5/funcs.o"),
        &object,
        &[".BTF", ".BTF.base"],
    );
    let btf = objcopy_dump(&object, ".BTF", dir.path());
    let btf_base = objcopy_dump(&object, ".BTF.base", dir.path());
    assert!(btf == read(&detached), ".BTF equals the detached OUT");
    assert!(
        btf_base == read(&dir.path().join("detached.btf.base")),
        ".BTF.base equals the detached OUT.base"
    );
    check_distilled_pair(
        &dir.path().join("dumped.BTF"),
        &dir.path().join("dumped.BTF.base"),
        &base,
    );

    // dump and diff read such a module as libbpf does: the split on its
    // own .BTF.base.
    let ours = btfenc::<&OsStr>(&["dump".as_ref(), object.as_os_str()]);
    ours.assert_success();
    let theirs = bpftool_btf_dump(
        &dir.path().join("dumped.BTF"),
        Some(&dir.path().join("dumped.BTF.base")),
    );
    theirs.assert_success();
    assert_eq!(
        ours.stdout_text(),
        theirs.stdout_text(),
        "btfenc dump of the module differs from bpftool's"
    );
    let base_of_detached = dir.path().join("detached.btf.base");
    let diff = btfenc::<&OsStr>(&[
        "diff".as_ref(),
        object.as_os_str(),
        detached.as_os_str(),
        "--base-b".as_ref(),
        base_of_detached.as_os_str(),
    ]);
    assert!(
        diff.success() && diff.stdout.is_empty(),
        "{}",
        diff.describe()
    );

    // relocate takes the module itself: .BTF.base comes from the ELF.
    let relocated = dir.path().join("relocated.btf");
    relocate(&object, None, &base, &relocated, &[]).assert_success();
    Dump::of_file(&relocated, Some(&base));
}

#[test]
fn alloc_btf_is_refused_and_left_alone() {
    let dir = scratch();
    let object = copy_fixture("obj/gcc-dwarf5/funcs.o", &dir.path().join("image"));
    // A fully linked image maps its .BTF (Debian's debug vmlinux has it
    // ALLOC): give the object such a section with binutils.
    let payload = dir.path().join("payload");
    std::fs::write(&payload, [0u8; 64]).unwrap_or_else(|err| panic!("{err}"));
    let add = format!(".BTF={}", payload.display());
    run(
        Path::new("objcopy"),
        &[
            "--add-section".as_ref(),
            add.as_ref(),
            "--set-section-flags".as_ref(),
            ".BTF=alloc,contents,load,readonly".as_ref(),
            object.as_os_str(),
        ],
    )
    .assert_success();
    let alloc = sections(&object)
        .into_iter()
        .find(|h| h.name == ".BTF")
        .map(|h| h.flags);
    assert!(
        alloc.as_deref().is_some_and(|f| f.contains('A')),
        "objcopy made .BTF ALLOC: {alloc:?}"
    );
    let before = read(&object);

    let run = btfenc::<&OsStr>(&["-J".as_ref(), object.as_os_str()]);
    assert_clean_failure(&run, &object.to_string_lossy());
    assert!(
        run.stderr.contains("--btf_encode_detached"),
        "the message points to --btf_encode_detached: {}",
        run.stderr
    );
    assert!(read(&object) == before, "the image was modified");
    assert_eq!(
        files_in(dir.path()),
        ["image", "payload"],
        "temporary files left behind"
    );
}

#[test]
fn a_write_failing_midway_leaves_the_original_intact() {
    let dir = scratch();
    let object = copy_fixture("obj/gcc-dwarf5/structs.o", &dir.path().join("structs.ko"));
    let before = read(&object);
    // RLIMIT_FSIZE of one 512-byte block: reading the input is fine,
    // writing the new image fails part-way with EFBIG (SIGXFSZ ignored so
    // the error reaches btfenc instead of killing it).
    let script = format!(
        "ulimit -f 1 && trap '' XFSZ && exec '{}' -J \"$0\"",
        btfenc_tests::btfenc_bin().display()
    );
    let run = run(
        Path::new("/bin/sh"),
        &["-c".as_ref(), script.as_ref(), object.as_os_str()],
    );
    assert_clean_failure(&run, &object.to_string_lossy());
    assert!(
        read(&object) == before,
        "a failed write modified the original"
    );
    assert_eq!(
        files_in(dir.path()),
        ["structs.ko"],
        "the temporary file was not removed"
    );
}

#[test]
fn in_place_keeps_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch();
    let object = copy_fixture("obj/gcc-dwarf5/structs.o", &dir.path().join("structs.ko"));
    std::fs::set_permissions(&object, std::fs::Permissions::from_mode(0o640))
        .unwrap_or_else(|err| panic!("{err}"));
    btfenc::<&OsStr>(&["-J".as_ref(), object.as_os_str()]).assert_success();
    let mode = std::fs::metadata(&object)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or_default();
    assert_eq!(mode, 0o640);
}

// ----- many modules in one run -----

/// A module tree: two good modules and one without DWARF.
fn module_tree(dir: &Path) -> PathBuf {
    let tree = dir.join("kernel");
    std::fs::create_dir_all(tree.join("net")).unwrap_or_else(|err| panic!("{err}"));
    copy_fixture("obj/gcc-dwarf5/structs.o", &tree.join("structs.ko"));
    copy_fixture("obj/gcc-dwarf5/funcs.o", &tree.join("net/funcs.ko"));
    copy_fixture("bad/no-dwarf.o", &tree.join("net/broken.ko"));
    tree
}

fn assert_batch_result(run: &btfenc_tests::RunOutput, out: &Path, base: &Path, broken: &Path) {
    assert_eq!(
        run.status.code(),
        Some(2),
        "one failure makes the run fail\n{}",
        run.describe()
    );
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "one line for the failure, one summary\n{}",
        run.describe()
    );
    assert!(
        lines[0].contains(&*broken.to_string_lossy()),
        "the failure names the module: {lines:?}"
    );
    assert_eq!(lines[1], "btfenc: encoded 2 of 3 files, 1 failed");
    assert_eq!(files_in(out), ["funcs.btf", "structs.btf"]);
    for name in ["funcs.btf", "structs.btf"] {
        Dump::of_file(&out.join(name), Some(base));
    }
}

#[test]
fn batch_over_a_directory_fails_only_the_bad_module() {
    let dir = scratch();
    let base = pahole_base(dir.path());
    let tree = module_tree(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap_or_else(|err| panic!("{err}"));
    let detached = format!("--btf_encode_detached={}", out.display());
    let run = btfenc::<&OsStr>(&[
        "-J".as_ref(),
        "-j2".as_ref(),
        base_flag(&base).as_ref(),
        detached.as_ref(),
        tree.as_os_str(),
    ]);
    assert_batch_result(&run, &out, &base, &tree.join("net/broken.ko"));

    // Each output is what encoding that module alone gives.
    let alone = dir.path().join("alone.btf");
    btfenc_tests::encode_detached(
        Encoder::Btfenc,
        &tree.join("net/funcs.ko"),
        &alone,
        &[&base_flag(&base)],
    )
    .assert_success();
    assert!(
        read(&alone) == read(&out.join("funcs.btf")),
        "batch output differs from a single run"
    );
}

#[test]
fn batch_from_a_list_file_patches_in_place() {
    let dir = scratch();
    let base = pahole_base(dir.path());
    let tree = module_tree(dir.path());
    let list = dir.path().join("modules.list");
    let good = [tree.join("structs.ko"), tree.join("net/funcs.ko")];
    let broken = tree.join("net/broken.ko");
    let broken_before = read(&broken);
    let body: String = good
        .iter()
        .chain([&broken])
        .map(|p| format!("{}\n", p.display()))
        .collect();
    std::fs::write(&list, body).unwrap_or_else(|err| panic!("{err}"));
    let at_list = format!("@{}", list.display());
    let run = btfenc::<&OsStr>(&["-J".as_ref(), base_flag(&base).as_ref(), at_list.as_ref()]);
    assert_eq!(run.status.code(), Some(2), "{}", run.describe());
    assert!(
        run.stderr
            .ends_with("btfenc: encoded 2 of 3 files, 1 failed\n"),
        "{}",
        run.describe()
    );
    for module in &good {
        Dump::of_file(module, Some(&base));
    }
    assert!(
        read(&broken) == broken_before,
        "the failed module was modified"
    );
    assert_eq!(
        files_in(&tree.join("net")),
        ["broken.ko", "funcs.ko"],
        "temporary files left behind"
    );
}

#[test]
fn one_module_into_a_directory_goes_to_dir_name_btf() {
    let dir = scratch();
    let base = pahole_base(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap_or_else(|err| panic!("{err}"));
    let module = copy_fixture("obj/gcc-dwarf5/structs.o", &dir.path().join("structs.ko"));
    let detached = format!("--btf_encode_detached={}", out.display());
    btfenc::<&OsStr>(&[
        "-J".as_ref(),
        base_flag(&base).as_ref(),
        detached.as_ref(),
        module.as_os_str(),
    ])
    .assert_success();
    assert_eq!(files_in(&out), ["structs.btf"]);
    Dump::of_file(&out.join("structs.btf"), Some(&base));
}
