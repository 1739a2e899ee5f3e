//! Distilling a split BTF's base, with libbpf's `btf__distill_base`
//! semantics: the `.BTF.base` of out-of-tree modules.
//!
//! A module's split BTF refers to vmlinux types by id, and ids change with
//! every kernel build. The distilled base keeps only what identifies the
//! base types the split uses, so that [`crate::relocate`] can find them
//! again in another build's vmlinux by name:
//!
//! - named INT, FLOAT and FWD are kept as they are;
//! - a named STRUCT or UNION becomes one of the same name and size with no
//!   members (members are the part that may change; the size is kept
//!   because a split aggregate may embed it);
//! - a named ENUM or ENUM64 becomes an ENUM of the same name and size with
//!   no values;
//! - everything else the split reaches in the base (pointers, qualifiers,
//!   arrays, typedefs, prototypes, type tags, anonymous aggregates and
//!   enums) cannot be found by name, so it moves into the split.
//!
//! Ids follow libbpf so that output matches pahole's type for type: the
//! distilled base holds the kept types in base id order; the new split is
//! the old split's types in order, then the moved types in base id order.

use crate::error::{ErrorKind, FormatError};
use crate::raw::{Endian, HeaderFormat};
use crate::types::{Btf, Composite, Enum, Type, TypeId};
use crate::write::WriteOptions;

/// A split BTF re-expressed on top of its distilled base.
#[derive(Clone, Debug)]
pub struct Distilled<'a> {
    /// The distilled base: standalone BTF.
    pub base: Btf<'a>,
    /// The split, numbered after `base`. Its `base_str_len` is 0 until the
    /// base's string section is known; [`write()`] fills it in.
    pub split: Btf<'a>,
}

/// The written pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenDistilled {
    /// Raw BTF of the distilled base (`.BTF.base`).
    pub base: Vec<u8>,
    /// Raw split BTF on top of it (`.BTF`).
    pub split: Vec<u8>,
}

/// Where a base type that the split uses ends up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placement {
    /// Not used by the split.
    Unused,
    /// Described in the distilled base.
    Base,
    /// Copied into the new split.
    Split,
}

/// Distills `base` for `split`, which must be a split on top of exactly
/// `base` (a standalone BTF).
pub fn distill_base<'a>(split: &Btf<'a>, base: &Btf<'a>) -> Result<Distilled<'a>, FormatError> {
    if base.base_type_count != 0 || split.base_type_count != base.count() {
        return Err(ErrorKind::SplitBaseMismatch {
            expected: split.base_type_count,
            found: base.count(),
        }
        .into());
    }
    let placement = place_used_base_types(split, base)?;
    check_member_tags(split, base, &placement)?;

    // New ids for base types: the distilled base takes the kept ones in
    // base id order; the moved ones follow the old split types.
    let mut new_id = vec![TypeId::VOID; base.types.len() + 1];
    let mut distilled = Btf::default();
    for (index, ty) in base.types.iter().enumerate() {
        if placement[index + 1] == Placement::Base {
            new_id[index + 1] = distilled.add(distilled_form(ty));
        }
    }
    let kept = distilled.count();
    let mut moved = Vec::new();
    let mut next = kept + split.count();
    for (index, ty) in base.types.iter().enumerate() {
        if placement[index + 1] == Placement::Split {
            next += 1;
            new_id[index + 1] = TypeId(next);
            moved.push(ty.clone());
        }
    }

    // Old split ids shift down by the number of base types left behind.
    let shift = base.count() - kept;
    let remap = |id: TypeId| -> Result<TypeId, FormatError> {
        if id.0 > base.count() {
            return Ok(TypeId(id.0 - shift));
        }
        match new_id.get(id.0 as usize) {
            Some(&mapped) if mapped != TypeId::VOID || id == TypeId::VOID => Ok(mapped),
            _ => Err(FormatError::new(ErrorKind::Internal(
                "distill: a used base type was not placed",
            ))
            .for_type(id)),
        }
    };
    let mut new_split = Btf {
        types: Vec::with_capacity(split.types.len() + moved.len()),
        base_type_count: kept,
        base_str_len: 0,
    };
    for ty in split.types.iter().cloned().chain(moved) {
        let mut ty = ty;
        ty.remap_refs(remap)?;
        new_split.types.push(ty);
    }
    Ok(Distilled {
        base: distilled,
        split: new_split,
    })
}

/// Marks every base type the split reaches, following references from
/// each reached type except named aggregates (their members are not
/// described) and deciding where each one goes.
fn place_used_base_types(split: &Btf<'_>, base: &Btf<'_>) -> Result<Vec<Placement>, FormatError> {
    let mut placement = vec![Placement::Unused; base.types.len() + 1];
    let mut pending: Vec<TypeId> = Vec::new();
    for ty in &split.types {
        ty.for_each_ref(|id| pending.push(id));
        while let Some(id) = pending.pop() {
            if id == TypeId::VOID || id.0 > base.count() {
                continue;
            }
            let Some(slot) = placement.get_mut(id.0 as usize) else {
                continue;
            };
            if *slot != Placement::Unused {
                continue;
            }
            let Some(target) = base.get(id) else {
                return Err(ErrorKind::TypeIdOutOfRange(id.0).into());
            };
            *slot = placement_of(target).ok_or_else(|| {
                FormatError::new(ErrorKind::DistillUnexpectedKind(target.kind())).for_type(id)
            })?;
            if !is_named_aggregate(target) {
                target.for_each_ref(|next| pending.push(next));
            }
        }
    }
    Ok(placement)
}

/// A split DECL_TAG on a member of a named struct or union of the base
/// would tag a member the distilled base does not have: an error naming
/// it (the split of a module whose struct carries a member tag that
/// vmlinux's does not; libbpf writes the tag, and the pair then fails the
/// kernel's checks).
fn check_member_tags(
    split: &Btf<'_>,
    base: &Btf<'_>,
    placement: &[Placement],
) -> Result<(), FormatError> {
    // The tag's id in the distilled split: after the kept base types.
    let kept = placement.iter().filter(|p| **p == Placement::Base).count() as u32;
    for (index, ty) in split.types.iter().enumerate() {
        let Type::DeclTag(tag) = ty else { continue };
        if tag.component_idx < 0 || placement.get(tag.ty.0 as usize) != Some(&Placement::Base) {
            continue;
        }
        if let Some(Type::Struct(c) | Type::Union(c)) = base.get(tag.ty) {
            return Err(FormatError::new(ErrorKind::DistillMemberTag {
                tag: tag.name.to_string(),
                member: tag.component_idx,
                target: c.name.to_string(),
            })
            .for_type(TypeId(kept + 1 + index as u32)));
        }
    }
    Ok(())
}

/// Where a used base type goes; `None` for kinds a split may not refer
/// to in its base (functions, variables, sections, decl tags).
fn placement_of(ty: &Type<'_>) -> Option<Placement> {
    Some(match ty {
        Type::Int(_)
        | Type::Float(_)
        | Type::Fwd(_)
        | Type::Struct(_)
        | Type::Union(_)
        | Type::Enum(_)
        | Type::Enum64(_) => named(ty.name()),
        Type::Ptr(_)
        | Type::Array(_)
        | Type::Typedef(_)
        | Type::Volatile(_)
        | Type::Const(_)
        | Type::Restrict(_)
        | Type::FuncProto(_)
        | Type::TypeTag(_) => Placement::Split,
        Type::Func(_) | Type::Var(_) | Type::Datasec(_) | Type::DeclTag(_) => return None,
    })
}

/// Only a name lets relocation find a type again; anonymous ones travel
/// in full with the split.
fn named(name: &str) -> Placement {
    if name.is_empty() {
        Placement::Split
    } else {
        Placement::Base
    }
}

fn is_named_aggregate(ty: &Type<'_>) -> bool {
    matches!(ty, Type::Struct(c) | Type::Union(c) if !c.name.is_empty())
}

/// The distilled-base description of a base type placed there.
fn distilled_form<'a>(ty: &Type<'a>) -> Type<'a> {
    match ty {
        Type::Struct(c) => Type::Struct(shell(c)),
        Type::Union(c) => Type::Union(shell(c)),
        // ENUM64 too becomes a plain sized ENUM: relocation matches it
        // with an ENUM or ENUM64 of that name and size.
        Type::Enum(e) | Type::Enum64(e) => Type::Enum(Enum {
            name: e.name,
            size: e.size,
            signed: false,
            values: Box::default(),
        }),
        other => other.clone(),
    }
}

fn shell<'a>(c: &Composite<'a>) -> Composite<'a> {
    Composite {
        name: c.name,
        size: c.size,
        members: Box::default(),
        kind_flag: false,
    }
}

/// Writes the distilled base, then the split on top of it (reusing the
/// base's strings, as libbpf does), setting `distilled.split.base_str_len`.
pub fn write(
    distilled: &mut Distilled<'_>,
    endian: Endian,
) -> Result<WrittenDistilled, FormatError> {
    write_with_header(distilled, endian, HeaderFormat::Short)
}

/// [`write()`], both blobs with the header `format` gives. libbpf writes a
/// distilled base without a kind layout section even when the BTF it was
/// distilled from has one, so `format` should not be
/// [`HeaderFormat::WithLayout`]; pahole with `--btf_features=layout` gives
/// both blobs the 32-byte header ([`HeaderFormat::Long`]).
pub fn write_with_header(
    distilled: &mut Distilled<'_>,
    endian: Endian,
    format: HeaderFormat,
) -> Result<WrittenDistilled, FormatError> {
    let options = |base_strings| WriteOptions {
        endian,
        base_strings,
        strings: None,
        header: format,
    };
    let base = crate::write::write_with(&distilled.base, options(None))?;
    let split = {
        let parsed = crate::read::parse(&base, None)?;
        distilled.split.base_str_len = parsed.str_end();
        let index = parsed.string_index();
        crate::write::write_with(&distilled.split, options(Some(&index)))?
    };
    Ok(WrittenDistilled { base, split })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_types::test_name;
    use crate::types::{Array, EnumValue, Fwd, IntEncoding, Member, Named};

    /// A signed 4-byte INT.
    fn int(name: &'static str) -> Type<'static> {
        crate::test_types::int(name, 4, IntEncoding::SIGNED)
    }

    fn member(name: &'static str, ty: u32, bit_offset: u32) -> Member<'static> {
        Member {
            name: test_name(name),
            ty: TypeId(ty),
            bit_offset,
            bitfield_size: 0,
        }
    }

    /// A base of 8 types, hand-written:
    /// 1 int, 2 struct big { int a; int *p; } (size 16), 3 int *,
    /// 4 enum e64 (ENUM64, size 8), 5 union { int } (anonymous),
    /// 6 typedef big big_t, 7 unused long, 8 fwd struct opaque.
    fn base() -> Btf<'static> {
        let mut b = Btf::default();
        b.add(int("int"));
        b.add(Type::Struct(Composite {
            name: "big",
            size: 16,
            members: vec![member("a", 1, 0), member("p", 3, 64)].into(),
            kind_flag: false,
        }));
        b.add(Type::Ptr(TypeId(1)));
        b.add(Type::Enum64(Enum {
            name: "e64",
            size: 8,
            signed: false,
            values: vec![EnumValue {
                name: "X",
                value: 1 << 40,
            }]
            .into(),
        }));
        b.add(Type::Union(Composite {
            name: "",
            size: 4,
            members: vec![member("i", 1, 0)].into(),
            kind_flag: false,
        }));
        b.add(Type::Typedef(Named {
            name: "big_t",
            ty: TypeId(2),
        }));
        b.add(int("long"));
        b.add(Type::Fwd(Fwd {
            name: "opaque",
            union: false,
        }));
        b
    }

    /// Split (ids 9..): 9 struct mod { big_t b; union anon u; enum e64 e;
    /// struct opaque *o; }, 10 ptr to 8, 11 array of 9 indexed by int.
    fn split() -> Btf<'static> {
        let mut s = Btf {
            base_type_count: 8,
            ..Btf::default()
        };
        s.add(Type::Struct(Composite {
            name: "mod",
            size: 40,
            members: vec![
                member("b", 6, 0),
                member("u", 5, 128),
                member("e", 4, 192),
                member("o", 10, 256),
            ]
            .into(),
            kind_flag: false,
        }));
        s.add(Type::Ptr(TypeId(8)));
        s.add(Type::Array(Array {
            elem: TypeId(9),
            index: TypeId(1),
            nelems: 2,
        }));
        s
    }

    #[test]
    fn follows_btf_distill_base_rules() {
        let d = distill_base(&split(), &base()).unwrap();
        // Kept, in base id order: int, big (shell), e64 (sized ENUM), opaque.
        // int* (3) is reachable only through the named `big`, whose members
        // are not described, so it is not used; `long` is unused.
        assert_eq!(
            d.base.types,
            [
                int("int"),
                Type::Struct(Composite {
                    name: "big",
                    size: 16,
                    members: Box::default(),
                    kind_flag: false
                }),
                Type::Enum(Enum {
                    name: "e64",
                    size: 8,
                    signed: false,
                    values: Box::default()
                }),
                Type::Fwd(Fwd {
                    name: "opaque",
                    union: false
                }),
            ]
        );
        // Split: old types at 5..=7, then the anonymous union (old 5) and
        // the typedef (old 6) moved over, in base id order.
        assert_eq!(d.split.base_type_count, 4);
        assert_eq!(
            d.split.types,
            [
                Type::Struct(Composite {
                    name: "mod",
                    size: 40,
                    members: vec![
                        member("b", 9, 0),
                        member("u", 8, 128),
                        member("e", 3, 192),
                        member("o", 6, 256)
                    ]
                    .into(),
                    kind_flag: false,
                }),
                Type::Ptr(TypeId(4)),
                Type::Array(Array {
                    elem: TypeId(5),
                    index: TypeId(1),
                    nelems: 2
                }),
                Type::Union(Composite {
                    name: "",
                    size: 4,
                    members: vec![member("i", 1, 0)].into(),
                    kind_flag: false
                }),
                Type::Typedef(Named {
                    name: "big_t",
                    ty: TypeId(2)
                }),
            ]
        );
    }

    #[test]
    fn written_pair_reads_back() {
        let mut d = distill_base(&split(), &base()).unwrap();
        let written = write(&mut d, Endian::Little).unwrap();
        let base = crate::read::parse(&written.base, None).unwrap();
        let split = crate::read::parse(&written.split, Some(&base)).unwrap();
        assert_eq!(base.btf.types, d.base.types);
        assert_eq!(split.btf.types, d.split.types);
        assert_eq!(split.btf.base_str_len, d.split.base_str_len);
    }

    /// pahole 1.31 wrote both `modules/NAME.btf` (split on vmlinux.btf)
    /// and, with `distilled_base`, the pair libbpf's `btf__distill_base`
    /// made of that same split: distilling the first must give the pair,
    /// type for type and in the same order.
    #[test]
    fn distilling_pahole_splits_gives_libbpfs_pairs() {
        use crate::test_reference::{read, MODULES};
        let Some(vmlinux) = read("vmlinux.btf") else {
            return;
        };
        let base = crate::read::parse(&vmlinux, None).unwrap();
        for module in MODULES {
            let (Some(split), Some(pair_base), Some(pair_split)) = (
                read(&format!("modules/{module}.btf")),
                read(&format!("modules/{module}.distilled.base.btf")),
                read(&format!("modules/{module}.distilled.btf")),
            ) else {
                continue;
            };
            let split = crate::read::parse(&split, Some(&base)).unwrap();
            let libbpf_base = crate::read::parse(&pair_base, None).unwrap();
            let libbpf_split = crate::read::parse(&pair_split, Some(&libbpf_base)).unwrap();
            let ours = distill_base(&split.btf, &base.btf).unwrap();
            assert!(
                ours.base.types == libbpf_base.btf.types,
                "{module}: distilled base differs"
            );
            assert_eq!(
                ours.split.base_type_count, libbpf_split.btf.base_type_count,
                "{module}"
            );
            assert!(
                ours.split.types == libbpf_split.btf.types,
                "{module}: distilled split differs"
            );
        }
    }

    #[test]
    fn refuses_mismatched_base_and_unexpected_kinds() {
        let mut other = base();
        other.add(int("extra"));
        let err = distill_base(&split(), &other).unwrap_err();
        assert!(matches!(
            err.kind,
            ErrorKind::SplitBaseMismatch {
                expected: 8,
                found: 9
            }
        ));

        let mut base = base();
        base.types[6] = Type::Func(crate::types::Object {
            name: "f",
            ty: TypeId(0),
            linkage: crate::types::Linkage::Global,
        });
        let mut s = Btf {
            base_type_count: 8,
            ..Btf::default()
        };
        s.add(Type::Ptr(TypeId(7)));
        let err = distill_base(&s, &base).unwrap_err();
        assert_eq!(
            err.kind,
            ErrorKind::DistillUnexpectedKind(crate::raw::Kind::FUNC)
        );
        assert_eq!(err.type_id, Some(TypeId(7)));
    }
}
