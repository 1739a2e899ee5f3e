//! The comparison on small hand-built tables, one property at a time.

use crate::test_types::test_name;
use std::convert::Infallible;

use super::render::MAX_RENDERED_LEN;
use super::*;
use crate::raw::Kind;
use crate::test_types;
use crate::types::*;

fn member(name: &str, ty: TypeId, bit_offset: u32, bitfield_size: u8) -> Member<'_> {
    Member {
        name: test_name(name),
        ty,
        bit_offset,
        bitfield_size,
    }
}

/// A small table with every kind, a named cycle (list_head), an
/// anonymous union nested in a struct, and a DATASEC.
fn sample() -> Btf<'static> {
    let mut btf = Btf::default();
    let int = btf.add(test_types::int("int", 4, IntEncoding::SIGNED));
    let uint = btf.add(test_types::int("unsigned int", 4, 0));
    let list = TypeId(btf.count() + 2);
    let list_ptr = btf.add(Type::Ptr(list));
    btf.add(Type::Struct(Composite {
        name: "list_head",
        size: 16,
        kind_flag: false,
        members: vec![
            member("next", list_ptr, 0, 0),
            member("prev", list_ptr, 64, 0),
        ]
        .into(),
    }));
    let anon_union = btf.add(Type::Union(Composite {
        name: "",
        size: 4,
        kind_flag: false,
        members: vec![member("i", int, 0, 0), member("u", uint, 0, 0)].into(),
    }));
    let flags = btf.add(Type::Struct(Composite {
        name: "flags",
        size: 24,
        kind_flag: true,
        members: vec![
            member("a", uint, 0, 3),
            member("b", uint, 3, 5),
            member("", anon_union, 32, 0),
            member("list", list, 64, 0),
        ]
        .into(),
    }));
    btf.add(Type::Enum(Enum {
        name: "e",
        size: 4,
        signed: true,
        values: vec![EnumValue {
            name: "NEG",
            value: u64::MAX,
        }]
        .into(),
    }));
    btf.add(Type::Enum64(Enum {
        name: "",
        size: 8,
        signed: false,
        values: vec![EnumValue {
            name: "BIG",
            value: 1 << 40,
        }]
        .into(),
    }));
    let fwd = btf.add(Type::Fwd(Fwd {
        name: "opaque",
        union: false,
    }));
    let fwd_ptr = btf.add(Type::Ptr(fwd));
    let typedef = btf.add(Type::Typedef(Named {
        name: "flags_t",
        ty: flags,
    }));
    let cint = btf.add(Type::Const(int));
    let vint = btf.add(Type::Volatile(cint));
    let tagged = btf.add(Type::TypeTag(TypeTag {
        name: "user",
        ty: vint,
        attribute: false,
    }));
    let tagged_ptr = btf.add(Type::Ptr(tagged));
    btf.add(Type::Restrict(tagged_ptr));
    let array = btf.add(Type::Array(Array {
        elem: typedef,
        index: int,
        nelems: 3,
    }));
    let proto = btf.add(Type::FuncProto(FuncProto {
        ret: int,
        params: vec![
            Param {
                name: test_name("f"),
                ty: fwd_ptr,
            },
            Param {
                name: test_name("t"),
                ty: tagged_ptr,
            },
            Param {
                name: test_name(""),
                ty: TypeId::VOID,
            },
        ]
        .into(),
    }));
    let func = btf.add(Type::Func(Object {
        name: "fn",
        ty: proto,
        linkage: Linkage::Global,
    }));
    btf.add(Type::DeclTag(DeclTag {
        name: "kfunc",
        ty: func,
        component_idx: -1,
        attribute: false,
    }));
    btf.add(Type::DeclTag(DeclTag {
        name: "m",
        ty: flags,
        component_idx: 2,
        attribute: false,
    }));
    let var = btf.add(Type::Var(Object {
        name: "v",
        ty: array,
        linkage: Linkage::Global,
    }));
    btf.add(Type::Float(Float {
        name: "double",
        size: 8,
    }));
    btf.add(Type::Datasec(Datasec {
        name: ".data",
        size: 48,
        vars: vec![VarSecInfo {
            ty: var,
            offset: 0,
            size: 48,
        }]
        .into(),
    }));
    // Two equal anonymous PTRs: multisets, not sets.
    btf.add(Type::Ptr(int));
    btf.add(Type::Ptr(int));
    btf
}

/// A map from old to new absolute ids (indexed by old id) that
/// renumbers `btf`'s own types by `order` (the type at `order[i]` moves
/// to position i) and keeps void and the base's ids.
pub(super) fn permutation_map(btf: &Btf<'_>, order: &[usize]) -> Vec<u32> {
    let first = btf.first_id().0 as usize;
    let mut map: Vec<u32> = (0..first as u32).collect();
    map.resize(first + btf.types.len(), 0);
    for (new_index, &old_index) in order.iter().enumerate() {
        map[first + old_index] = (first + new_index) as u32;
    }
    map
}

/// `btf`'s types in `order` with references rewritten by `map`
/// (ids past the map, e.g. dangling ones, are kept).
pub(super) fn reorder<'a>(btf: &Btf<'a>, order: &[usize], map: &[u32]) -> Btf<'a> {
    let m = |id: TypeId| TypeId(map.get(id.0 as usize).copied().unwrap_or(id.0));
    Btf {
        base_type_count: btf.base_type_count,
        base_str_len: btf.base_str_len,
        types: order
            .iter()
            .map(|&i| {
                let mut ty = btf.types[i].clone();
                ty.remap_refs::<Infallible>(|id| Ok(m(id)))
                    .unwrap_or_else(|never| match never {});
                ty
            })
            .collect(),
    }
}

/// `btf` with its own types renumbered by `order`.
pub(super) fn permute<'a>(btf: &Btf<'a>, order: &[usize]) -> Btf<'a> {
    reorder(btf, order, &permutation_map(btf, order))
}

/// A deterministic shuffle (xorshift), enough to scramble ids.
pub(super) fn scrambled(len: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let mut state = seed | 1;
    for i in (1..len).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    order
}

#[test]
fn a_table_equals_itself() {
    let btf = sample();
    let report = diff(&btf, None, &btf, None);
    assert!(report.is_empty(), "{report}");
    assert_eq!(report.to_string(), "");
    assert_eq!(
        report.kind(Kind::PTR).map(|k| (k.a_total, k.b_total)),
        Some((5, 5))
    );
    assert!(report.kinds.iter().all(|k| k.a_total == k.b_total));
}

#[test]
fn permuting_ids_changes_nothing() {
    let btf = sample();
    for seed in [1, 7, 42, 1234] {
        let permuted = permute(&btf, &scrambled(btf.types.len(), seed));
        let report = diff(&btf, None, &permuted, None);
        assert!(report.is_empty(), "seed {seed}: {report}");
    }
}

#[test]
fn renaming_a_member_is_one_struct_difference() {
    let btf = sample();
    let mut changed = btf.clone();
    let Some(Type::Struct(flags)) = changed.types.get_mut(5) else {
        panic!("layout")
    };
    assert_eq!(flags.name, "flags");
    flags.members[3].name = test_name("node");
    let report = diff(&btf, None, &changed, None);
    assert_eq!(report.difference_count(), 2, "{report}");
    let structs = report.kind(Kind::STRUCT).unwrap();
    assert_eq!((structs.only_a, structs.only_b), (1, 1));
    assert!(
        report.differences_outside(&[Kind::STRUCT]).is_empty(),
        "{report}"
    );
    assert!(
        structs.examples_a[0].contains("'list': struct list_head @64"),
        "{report}"
    );
    assert!(
        structs.examples_b[0].contains("'node': struct list_head @64"),
        "{report}"
    );
}

#[test]
fn changing_a_bitfield_size_is_one_struct_difference() {
    let btf = sample();
    let mut changed = btf.clone();
    let Some(Type::Struct(flags)) = changed.types.get_mut(5) else {
        panic!("layout")
    };
    flags.members[1].bitfield_size = 6;
    let report = diff(&btf, None, &changed, None);
    let structs = report.kind(Kind::STRUCT).unwrap();
    assert_eq!((structs.only_a, structs.only_b), (1, 1));
    assert_eq!(report.difference_count(), 2);
    assert!(structs.examples_b[0].contains("@3:6"), "{report}");
}

#[test]
fn anonymous_changes_propagate_to_their_users() {
    let btf = sample();
    let mut changed = btf.clone();
    // The anonymous union is described inline inside `flags`.
    let Some(Type::Union(anon)) = changed.types.get_mut(4) else {
        panic!("layout")
    };
    anon.members[1].name = test_name("w");
    let report = diff(&btf, None, &changed, None);
    assert_eq!(
        report.kind(Kind::UNION).map(|k| (k.only_a, k.only_b)),
        Some((1, 1))
    );
    assert_eq!(
        report.kind(Kind::STRUCT).map(|k| (k.only_a, k.only_b)),
        Some((1, 1))
    );
}

#[test]
fn multiplicity_counts() {
    let btf = sample();
    let mut fewer = btf.clone();
    fewer.types.pop();
    let report = diff(&btf, None, &fewer, None);
    let ptrs = report.kind(Kind::PTR).unwrap();
    assert_eq!(
        (ptrs.a_total, ptrs.b_total, ptrs.only_a, ptrs.only_b),
        (5, 4, 1, 0)
    );
    assert_eq!(report.difference_count(), 1);
}

#[test]
fn split_tables_compare_through_equal_bases_with_different_ids() {
    let mut base_a = Btf::default();
    let int_a = base_a.add(test_types::int("int", 4, IntEncoding::SIGNED));
    let long_a = base_a.add(test_types::int("long", 8, IntEncoding::SIGNED));
    let mut base_b = Btf::default();
    let long_b = base_b.add(test_types::int("long", 8, IntEncoding::SIGNED));
    let int_b = base_b.add(test_types::int("int", 4, IntEncoding::SIGNED));
    let split = |int: TypeId, long: TypeId| {
        let mut split = Btf {
            base_type_count: 2,
            ..Btf::default()
        };
        let ptr = split.add(Type::Ptr(int));
        split.add(Type::Struct(Composite {
            name: "s",
            size: 16,
            kind_flag: false,
            members: vec![member("p", ptr, 0, 0), member("l", long, 64, 0)].into(),
        }));
        split
    };
    let split_a = split(int_a, long_a);
    let split_b = split(int_b, long_b);
    let report = diff(&split_a, Some(&base_a), &split_b, Some(&base_b));
    assert!(report.is_empty(), "{report}");
    assert_eq!(report.kinds.iter().map(|k| k.a_total).sum::<usize>(), 2);

    // Same ids, but the base's `long` became 4 bytes: the split's
    // struct differs although its own fields did not change.
    let mut base_c = base_a.clone();
    base_c.types[1] = test_types::int("long", 4, IntEncoding::SIGNED);
    let report = diff(&split_a, Some(&base_a), &split_a, Some(&base_c));
    assert_eq!(
        report.kind(Kind::STRUCT).map(|k| (k.only_a, k.only_b)),
        Some((1, 1))
    );
}

#[test]
fn datasec_layout_is_compared_only_on_request() {
    let btf = sample();
    let mut relinked = btf.clone();
    let Some(Type::Datasec(section)) = relinked
        .types
        .iter_mut()
        .find(|ty| matches!(ty, Type::Datasec(_)))
    else {
        panic!("layout")
    };
    let var = section.vars[0].clone();
    section.size += 64;
    let mut vars = section.vars.to_vec();
    vars.insert(0, VarSecInfo { offset: 0, ..var });
    section.vars = vars.into();
    section.vars[1].offset += 64;
    let mut original = btf.clone();
    let Some(Type::Datasec(section)) = original
        .types
        .iter_mut()
        .find(|ty| matches!(ty, Type::Datasec(_)))
    else {
        panic!("layout")
    };
    let mut vars = section.vars.to_vec();
    vars.push(VarSecInfo { offset: 48, ..var });
    section.vars = vars.into();
    section.size += 48;

    // Same variables (twice the same one), other offsets and size.
    assert!(diff(&original, None, &relinked, None).is_empty());
    let strict = DiffOptions {
        datasec_layout: true,
        ..DiffOptions::default()
    };
    let report = diff_with(&original, None, &relinked, None, &strict);
    assert_eq!(
        report.kind(Kind::DATASEC).map(|k| (k.only_a, k.only_b)),
        Some((1, 1))
    );
    assert!(report.to_string().contains(" @64 size=48"), "{report}");

    // A variable's size is compared either way.
    let mut resized = original.clone();
    if let Some(Type::Datasec(section)) = resized
        .types
        .iter_mut()
        .find(|ty| matches!(ty, Type::Datasec(_)))
    {
        section.vars[0].size = 8;
    }
    assert_eq!(diff(&original, None, &resized, None).difference_count(), 2);
}

#[test]
fn a_split_without_its_base_describes_base_references_as_dangling() {
    // Claims a base of four billion types but supplies none: nothing
    // may be allocated per base id.
    let mut split = Btf {
        base_type_count: u32::MAX - 10,
        ..Btf::default()
    };
    split.add(Type::Ptr(TypeId(5)));
    split.add(Type::Ptr(TypeId(u32::MAX - 9)));
    let report = diff(&split, None, &split, None);
    assert!(report.is_empty(), "{report}");
    let mut other = split.clone();
    other.types[1] = Type::Ptr(TypeId(7));
    let report = diff(&split, None, &other, None);
    // PTR(dangling) vs PTR(PTR(dangling))
    assert_eq!(
        report.kind(Kind::PTR).map(|k| (k.only_a, k.only_b)),
        Some((1, 1))
    );
    assert!(report.to_string().contains("PTR(<dangling>)"));
}

#[test]
fn invalid_graphs_terminate() {
    let mut btf = Btf::default();
    // PTR -> CONST -> PTR (itself) loop, an anonymous self-referencing
    // struct, a dangling id, and a 200k-long pointer chain.
    btf.add(Type::Ptr(TypeId(2)));
    btf.add(Type::Const(TypeId(1)));
    let anon = TypeId(btf.count() + 2);
    let anon_ptr = btf.add(Type::Ptr(anon));
    btf.add(Type::Struct(Composite {
        name: "",
        size: 8,
        kind_flag: false,
        members: vec![
            member("self", anon_ptr, 0, 0),
            member("bad", TypeId(9_999_999), 0, 0),
        ]
        .into(),
    }));
    let mut previous = btf.add(test_types::int("int", 4, IntEncoding::SIGNED));
    for _ in 0..200_000 {
        previous = btf.add(Type::Ptr(previous));
    }
    let report = diff(&btf, None, &btf, None);
    assert!(report.is_empty(), "{report}");
    let mut shorter = btf.clone();
    shorter.types.pop();
    let report = diff(&btf, None, &shorter, None);
    assert_eq!(report.difference_count(), 1);
    let text = report.to_string();
    assert!(text.len() < 10 * MAX_RENDERED_LEN, "{} bytes", text.len());
}

#[test]
fn display_lists_every_kind_and_examples() {
    let btf = sample();
    let mut fewer = btf.clone();
    fewer.types.retain(|ty| !matches!(ty, Type::Float(_)));
    let text = diff(&btf, None, &fewer, None).to_string();
    assert!(
        text.contains("FLOAT: a=1 b=0 only_a=1 only_b=0\n  only in a: FLOAT 'double' size=8\n"),
        "{text}"
    );
    assert!(
        text.contains("STRUCT: a=2 b=2 only_a=0 only_b=0\n"),
        "{text}"
    );
}
