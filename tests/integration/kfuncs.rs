//! pahole 1.31's `decl_tag_kfuncs`: FUNCs of the functions listed in a
//! `.BTF_ids` kfunc set get DECL_TAG "bpf_kfunc" (and "bpf_fastcall" when
//! the set gives them KF_FASTCALL), checked on fixtures/src/kfuncs.c.
//!
//! The expected tags are derived by hand from that source and from the
//! layout in the kernel's include/linux/btf_ids.h (the pahole installed
//! here is 1.24, which knows no kfunc tags): kf_acquire, kf_release and
//! kf_fast sit in a set8 whose flags have BTF_SET8_KFUNCS; kf_fast's pair
//! has KF_FASTCALL (1 << 12); kf_plain sits in a set8 without the flag,
//! kf_loose has an id outside any set and kf_helper has none.

use btfenc_tests::raw_dump::Dump;
use btfenc_tests::{kernel_load_btf, report_skip, Encoder, LoadResult};

use crate::fixtures::{encode_into, read, scratch};

/// The kernel's --btf_features list (scripts/Makefile.btf, pahole >= 1.26).
const KERNEL_FEATURES: &str = concat!("--btf_features=", kernel_features!());

/// Every DECL_TAG of the BTF as (tag name, tagged FUNC name,
/// component_idx), sorted but with repeats kept, plus every FUNC name.
fn tags_and_funcs(dump: &Dump) -> (Vec<(String, String, String)>, Vec<String>) {
    let mut tags = Vec::new();
    for tag in dump.types.iter().filter(|ty| ty.kind == "DECL_TAG") {
        let target = dump.target(tag);
        let target = match target {
            Some(func) if func.kind == "FUNC" => func.name.clone(),
            other => panic!("DECL_TAG '{}' does not tag a FUNC: {other:?}", tag.name),
        };
        let component = tag.attr("component_idx").unwrap_or("?").to_string();
        tags.push((tag.name.clone(), target, component));
    }
    tags.sort();
    let funcs = dump
        .types
        .iter()
        .filter(|ty| ty.kind == "FUNC")
        .map(|ty| ty.name.clone())
        .collect();
    (tags, funcs)
}

fn expected(list: &[(&str, &str)]) -> Vec<(String, String, String)> {
    let mut tags: Vec<_> = list
        .iter()
        .map(|(tag, func)| (tag.to_string(), func.to_string(), "-1".to_string()))
        .collect();
    tags.sort();
    tags
}

fn check_kfunc_tags(path: &str, source_tags: &[(&str, &str)]) {
    let dir = scratch();
    let out = encode_into(
        Encoder::Btfenc,
        path,
        &[KERNEL_FEATURES],
        dir.path(),
        "out.btf",
    );
    let dump = Dump::of_file(&out, None);
    let (tags, funcs) = tags_and_funcs(&dump);

    // Every function of the source has its FUNC, tagged or not.
    for name in [
        "kf_acquire",
        "kf_release",
        "kf_fast",
        "kf_plain",
        "kf_loose",
        "kf_helper",
    ] {
        assert!(
            funcs.iter().any(|func| func == name),
            "{path}: no FUNC '{name}' in {funcs:?}"
        );
    }
    let mut want = expected(&[
        ("bpf_kfunc", "kf_acquire"),
        ("bpf_kfunc", "kf_release"),
        ("bpf_kfunc", "kf_fast"),
        ("bpf_fastcall", "kf_fast"),
    ]);
    want.extend(expected(source_tags));
    // Identical tags are one type after deduplication.
    want.sort();
    want.dedup();
    assert_eq!(tags, want, "{path}: DECL_TAGs");

    // bpf_kfunc comes right after its FUNC, ahead of the source's tags
    // (pahole adds it as soon as the FUNC exists).
    let acquire = dump.one("FUNC", "kf_acquire");
    let next = dump
        .get(acquire.id + 1)
        .map(|ty| (ty.kind.as_str(), ty.name.as_str()));
    assert_eq!(next, Some(("DECL_TAG", "bpf_kfunc")), "{path}: tag order");

    match kernel_load_btf(&read(&out)) {
        LoadResult::Loaded => {}
        LoadResult::Skipped(reason) => report_skip(&format!("kernel load of {path}"), &reason),
        LoadResult::Rejected { errno, log } => {
            panic!("the kernel rejected the kfunc-tagged BTF of {path}, errno {errno}:\n{log}")
        }
    }

    // Without the feature only the source's own tags are left, and
    // without decl_tag none at all.
    let mut source_only = expected(source_tags);
    source_only.sort();
    for (flags, want) in [
        (
            "--btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func",
            source_only,
        ),
        (
            "--btf_features=encode_force,var,float,enum64,type_tag,optimized_func,consistent_func,decl_tag_kfuncs",
            Vec::new(),
        ),
    ] {
        let out = encode_into(Encoder::Btfenc, path, &[flags], dir.path(), "plain.btf");
        let dump = Dump::of_file(&out, None);
        let (tags, _) = tags_and_funcs(&dump);
        assert_eq!(tags, want, "{path} with {flags}");
    }
}

#[test]
fn gcc_object() {
    check_kfunc_tags("obj/kfuncs/gcc-dwarf5.o", &[]);
}

#[test]
fn gcc_executable() {
    check_kfunc_tags("obj/kfuncs/prog-gcc", &[]);
}

/// kf_release's own btf_decl_tag("bpf_kfunc") is the very type the
/// kfunc rule adds, so deduplication leaves one (btf.rst: DECL_TAGs are
/// types like any other; libbpf's dedup merges identical ones).
#[test]
fn clang_object_keeps_the_source_tag_too() {
    check_kfunc_tags(
        "obj/kfuncs/clang.o",
        &[("kf_source", "kf_acquire"), ("bpf_kfunc", "kf_release")],
    );
}
