//! The diff on pahole's real kernel BTF: vmlinux (95k types) and a split
//! module. Skipped, with a note on stderr, when the files are missing.

use crate::test_types::test_name;
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use super::tests::{permutation_map, permute, reorder, scrambled};
use super::*;
use crate::raw::Kind;
use crate::read;
use crate::test_reference::{self, debian_debug, DEBIAN_MODULES, DEBIAN_VMLINUX};
use crate::types::{Composite, Type};

/// Per-kind counts of bpftool's dump of the file, the oracle for the
/// report's totals; `None` when bpftool is unavailable.
fn bpftool_kind_counts(relative: &str) -> Option<HashMap<String, usize>> {
    let path = Path::new(crate::test_reference::dir()).join(relative);
    let output = std::process::Command::new("bpftool")
        .args(["btf", "dump", "file"])
        .arg(path)
        .output()
        .ok()?;
    let mut counts = HashMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        if let Some(kind) = line
            .strip_prefix('[')
            .and_then(|rest| rest.split(' ').nth(1))
        {
            *counts.entry(kind.to_owned()).or_default() += 1;
        }
    }
    Some(counts)
}

#[test]
fn vmlinux_equals_itself_and_its_permutations() {
    let Some(bytes) = test_reference::read("vmlinux.btf") else {
        return;
    };
    let btf = read::parse(&bytes, None).unwrap().btf;

    let start = Instant::now();
    let report = diff(&btf, None, &btf, None);
    eprintln!("diff(vmlinux, vmlinux): {:?}", start.elapsed());
    assert!(report.is_empty(), "{report}");
    if let Some(counts) = bpftool_kind_counts("vmlinux.btf") {
        for entry in &report.kinds {
            let expected = counts.get(entry.kind.name()).copied().unwrap_or(0);
            assert_eq!(
                (entry.a_total, entry.b_total),
                (expected, expected),
                "{}",
                entry.kind
            );
        }
        assert_eq!(report.kinds.len(), counts.len());
    }

    let permuted = permute(&btf, &scrambled(btf.types.len(), 0x5eed));
    let start = Instant::now();
    let report = diff(&btf, None, &permuted, None);
    eprintln!("diff(vmlinux, permuted vmlinux): {:?}", start.elapsed());
    assert!(report.is_empty(), "{report}");
}

fn first_struct_where<'t, 'a>(
    btf: &'t mut Btf<'a>,
    wanted: impl Fn(&Composite<'a>) -> bool,
) -> &'t mut Composite<'a> {
    btf.types
        .iter_mut()
        .find_map(|ty| match ty {
            Type::Struct(c) if !c.name.is_empty() && wanted(c) => Some(c),
            _ => None,
        })
        .expect("vmlinux has such a struct")
}

#[test]
fn single_changes_in_vmlinux_are_single_differences() {
    let Some(bytes) = test_reference::read("vmlinux.btf") else {
        return;
    };
    let btf = read::parse(&bytes, None).unwrap().btf;

    let mut renamed = btf.clone();
    let target = first_struct_where(&mut renamed, |c| c.members.len() >= 2);
    let old_name = target.name;
    if let Some(first) = target.members.first_mut() {
        first.name = test_name("btfenc_renamed_member");
    }
    let report = diff(&btf, None, &renamed, None);
    let structs = report.kind(Kind::STRUCT).unwrap();
    assert_eq!((structs.only_a, structs.only_b), (1, 1), "{report}");
    assert_eq!(report.difference_count(), 2, "{report}");
    assert!(
        structs.examples_b[0].starts_with(&format!("STRUCT '{old_name}'")),
        "{report}"
    );
    assert!(
        structs.examples_b[0].contains("btfenc_renamed_member"),
        "{report}"
    );

    let mut resized = btf.clone();
    let target = first_struct_where(&mut resized, |c| {
        c.members.iter().any(|m| m.bitfield_size == 1)
    });
    if let Some(bit) = target.members.iter_mut().find(|m| m.bitfield_size == 1) {
        bit.bitfield_size = 2;
    }
    let report = diff(&btf, None, &resized, None);
    assert_eq!(
        report.kind(Kind::STRUCT).map(|k| (k.only_a, k.only_b)),
        Some((1, 1)),
        "{report}"
    );
    assert!(
        report.differences_outside(&[Kind::STRUCT]).is_empty(),
        "{report}"
    );
}

/// The `.BTF` section of a large ELF file, read without loading the
/// whole file (the vmlinux is 590 MB).
fn btf_section_of(path: &Path) -> Option<Vec<u8>> {
    use object::{Object, ObjectSection};
    let file = std::fs::File::open(path).ok()?;
    let cache = object::ReadCache::new(file);
    let elf = object::File::parse(&cache).ok()?;
    let data = elf.section_by_name(".BTF")?.data().ok()?;
    Some(data.to_vec())
}

/// The reference README (written by whoever produced it, not by this
/// code) says pahole 1.24's and 1.31's BTF of this kernel have the same
/// STRUCT/UNION/ENUM/TYPEDEF/ARRAY/PTR graph and differ only in which
/// functions get a FUNC and in one per-CPU VAR.
#[test]
fn pahole_versions_differ_only_where_documented() {
    // Debian's own `.BTF` in the same vmlinux, written by pahole v1.24.
    let debian_path = debian_debug(DEBIAN_VMLINUX);
    let (Some(new_bytes), Some(old_bytes)) = (
        test_reference::read("vmlinux.btf"),
        btf_section_of(&debian_path),
    ) else {
        eprintln!("skipped: {} not readable", debian_path.display());
        return;
    };
    let new = read::parse(&new_bytes, None).unwrap().btf;
    let old = read::parse(&old_bytes, None).unwrap().btf;
    let report = diff(&new, None, &old, None);
    eprintln!("{report}");
    for kind in [
        Kind::STRUCT,
        Kind::UNION,
        Kind::ENUM,
        Kind::TYPEDEF,
        Kind::ARRAY,
        Kind::PTR,
    ] {
        let entry = report.kind(kind).unwrap();
        assert!(entry.is_empty(), "{report}");
    }
    let var = report.kind(Kind::VAR).unwrap();
    assert_eq!(var.only_a + var.only_b, 1, "{report}");
    assert!(!report.kind(Kind::FUNC).unwrap().is_empty());
}

/// The same module split on two different bases (pahole 1.24's and
/// 1.31's vmlinux, whose type ids differ from the first FUNC on): its
/// named aggregates must compare equal through the bases. (The other
/// kinds differ: pahole 1.31's split repeats some typedefs, pointers
/// and arrays that its base already has.)
#[test]
fn module_splits_on_different_bases_compare_through_them() {
    let old_vmlinux = btf_section_of(&debian_debug(DEBIAN_VMLINUX));
    // Debian's xfs.ko, whose `.BTF` pahole v1.24 split on Debian's vmlinux.
    let old_xfs = btf_section_of(&debian_debug(&format!("{DEBIAN_MODULES}/fs/xfs/xfs.ko")));
    let (Some(new_base_bytes), Some(new_xfs_bytes), Some(old_base_bytes), Some(old_xfs_bytes)) = (
        test_reference::read("vmlinux.btf"),
        test_reference::read("modules/xfs.btf"),
        old_vmlinux,
        old_xfs,
    ) else {
        eprintln!("skipped: Debian's vmlinux or xfs.ko not readable");
        return;
    };
    let new_base = read::parse(&new_base_bytes, None).unwrap();
    let new_xfs = read::parse(&new_xfs_bytes, Some(&new_base)).unwrap();
    let old_base = read::parse(&old_base_bytes, None).unwrap();
    let old_xfs = read::parse(&old_xfs_bytes, Some(&old_base)).unwrap();
    assert_ne!(new_xfs.btf.base_type_count, old_xfs.btf.base_type_count);
    let report = diff(
        &new_xfs.btf,
        Some(&new_base.btf),
        &old_xfs.btf,
        Some(&old_base.btf),
    );
    eprintln!("{report}");
    for kind in [Kind::STRUCT, Kind::UNION, Kind::ENUM] {
        let entry = report.kind(kind).unwrap();
        assert!(entry.a_total > 0 && entry.is_empty(), "{report}");
    }
}

#[test]
fn split_module_compares_through_its_base() {
    let (Some(base_bytes), Some(split_bytes)) = (
        test_reference::read("vmlinux.btf"),
        test_reference::read("modules/xfs.btf"),
    ) else {
        return;
    };
    let base = read::parse(&base_bytes, None).unwrap();
    let split = read::parse(&split_bytes, Some(&base)).unwrap();
    let (base, split) = (&base.btf, &split.btf);

    let report = diff(split, Some(base), split, Some(base));
    assert!(report.is_empty(), "{report}");
    assert_eq!(
        report.kinds.iter().map(|k| k.a_total).sum::<usize>(),
        split.types.len()
    );

    // Permute the split's own ids.
    let permuted_split = permute(split, &scrambled(split.types.len(), 3));
    let report = diff(split, Some(base), &permuted_split, Some(base));
    assert!(report.is_empty(), "{report}");

    // Permute the base's ids and follow them in the split: the split's
    // descriptions must not depend on where the base put its types.
    let order = scrambled(base.types.len(), 11);
    let map = permutation_map(base, &order);
    let permuted_base = reorder(base, &order, &map);
    let split_order: Vec<usize> = (0..split.types.len()).collect();
    let relinked_split = reorder(split, &split_order, &map);
    let report = diff(split, Some(base), &relinked_split, Some(&permuted_base));
    assert!(report.is_empty(), "{report}");

    // A base where a struct the split refers to got another name: the
    // split's types that mention it no longer compare equal.
    let mut renamed_base = base.clone();
    let super_block = renamed_base
        .types
        .iter_mut()
        .find_map(|ty| match ty {
            Type::Struct(c) if c.name == "super_block" => Some(c),
            _ => None,
        })
        .expect("vmlinux has struct super_block");
    super_block.name = "btfenc_renamed";
    let report = diff(split, Some(base), split, Some(&renamed_base));
    assert!(!report.is_empty());
    let text = report.to_string();
    assert!(
        text.contains("struct super_block") && text.contains("struct btfenc_renamed"),
        "{text}"
    );
}
