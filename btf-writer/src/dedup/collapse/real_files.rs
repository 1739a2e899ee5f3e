//! The collapse's promise on real DWARF: deduplicating the collapsed table
//! gives exactly the types that deduplicating every CU's types, simply
//! concatenated, gives; and so does deduplicating the collapsed table
//! while it grows ([`StreamingDedup`]). Multi-CU fixtures always; Debian's
//! modules when the corpus is there (`make corpus`).

use bumpalo::Bump;

use super::MergedNames;
use crate::dedup::{dedup, dedup_as, Collapser, Flavor, PreparedCu, StreamingDedup};
use crate::lower::test_support::open_for_lowering;
use crate::lower::{lower_cu, Features};

/// Every CU's lowered types, in `.debug_info` order, and where the file's
/// `.debug_str` is.
fn lowered_cus(path: &std::path::Path) -> (Vec<Vec<crate::types::Type<'static>>>, MergedNames) {
    let (dwarf, ctx) = open_for_lowering(path, Features::default());
    let names = dwarf
        .merged_debug_str()
        .map_or(MergedNames::NONE, MergedNames::of);
    let cus = dwarf
        .units()
        .iter()
        .map(|unit| {
            let arena = Bump::new();
            let cu = dwarf::walk::walk_unit(dwarf, unit, &arena).expect("walk");
            lower_cu(&cu, &ctx).expect("lower").types
        })
        .collect();
    (cus, names)
}

fn check(path: &std::path::Path) {
    let (cus, names) = lowered_cus(path);
    let (collapsed, whole) = super::tests::collapsed_and_concatenated(&cus, names);
    // Names sketched by their place in a merged `.debug_str` find every
    // copy that names sketched by their bytes find.
    let (by_content, _) = super::tests::collapsed_and_concatenated(&cus, MergedNames::NONE);
    assert_eq!(
        collapsed.types.len(),
        by_content.types.len(),
        "{}: types kept by the collapse, names sketched by place or by content",
        path.display()
    );
    let a = dedup(&collapsed, None).expect("dedup collapsed");
    let b = dedup(&whole, None).expect("dedup whole");
    assert!(
        a.btf.types == b.btf.types,
        "{}: {} CUs, {} types, {} after collapsing: dedup differs ({} vs {} types)",
        path.display(),
        cus.len(),
        whole.types.len(),
        collapsed.types.len(),
        a.btf.types.len(),
        b.btf.types.len()
    );
    for flavor in [Flavor::Libbpf1_1, Flavor::Libbpf1_7] {
        let mut table = Collapser::new(0, 0);
        let mut streaming = StreamingDedup::new(flavor);
        for types in &cus {
            table
                .add(PreparedCu::new(types.clone(), names).expect("prepare"))
                .expect("add");
            streaming.advance(&table.btf().types);
        }
        let table = table.into_btf();
        let streamed = streaming.finish(&table).expect("streamed dedup");
        let whole = dedup_as(&table, None, flavor).expect("dedup");
        assert!(
            streamed.btf.types == whole.btf.types && streamed.remap == whole.remap,
            "{}: {flavor:?}: dedup while the table grows differs ({} vs {} types)",
            path.display(),
            streamed.btf.types.len(),
            whole.btf.types.len()
        );
    }
}

#[test]
fn multi_cu_fixtures_dedup_alike_collapsed_or_not() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/obj");
    for file in [
        "multi-cu/gcc-dwarf5.o",
        "multi-cu/clang.o",
        "exec/prog-gcc",
        "exec/prog-clang",
    ] {
        check(&std::path::Path::new(root).join(file));
    }
}

#[test]
fn debian_modules_dedup_alike_collapsed_or_not() {
    let modules = crate::test_reference::debian_debug(crate::test_reference::DEBIAN_MODULES);
    let mut checked = 0;
    for module in [
        "net/key/af_key.ko",
        "net/ipv4/tcp_bbr.ko",
        "net/netfilter/nf_conntrack.ko",
    ] {
        let path = modules.join(module);
        if !path.exists() {
            eprintln!("SKIPPED: {} (run `make corpus`)", path.display());
            continue;
        }
        check(&path);
        checked += 1;
    }
    eprintln!("{checked} modules checked");
}
