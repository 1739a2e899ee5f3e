//! Type signatures: the keys under which canonical candidates are filed.
//! Each mirrors the fields of one libbpf `btf_hash_*` function, so that two
//! types that can pass the matching equality check always share a key.

pub(super) use super::table::Key;
use super::view::{info, int_tag_extra, member_offset, name, size_or_type};
use crate::types::Type;

// Families of signatures. libbpf's hashes of different shapes practically
// never collide; distinct tags give the same separation. The one place
// where it is observable: base TYPEDEFs are filed under the common
// signature (name, info, type), while split TYPEDEFs look up the typedef
// signature (name, info), so split typedefs never match base ones.
const COMMON: u64 = 1;
const INT_TAG: u64 = 2;
const ENUM: u64 = 3;
const STRUCT: u64 = 4;
const TYPEDEF: u64 = 5;
const ARRAY: u64 = 6;
const FUNC_PROTO: u64 = 7;

/// What every signature but the enum's begins with: its family, the name
/// and `info`.
fn head(tag: u64, t: Option<&Type<'_>>) -> Key {
    Key::new(tag).str(name(t)).word(info(t) as u64)
}

/// `btf_hash_common` with the `size`/`type` word given.
pub(super) fn common(t: Option<&Type<'_>>, size_or_type: u32) -> u64 {
    common_tail(head(COMMON, t), size_or_type)
}

// The `*_tail` functions finish a signature from its head, or from a
// reference type's seed ([`reference`]): one field list per signature, so
// that a key computed ahead and one computed directly cannot drift apart.

fn common_tail(head: Key, size_or_type: u32) -> u64 {
    head.word(size_or_type as u64).finish()
}

/// `btf_hash_int_decl_tag` (INT, or DECL_TAG with its target given).
pub(super) fn int_tag(t: Option<&Type<'_>>, size_or_type: u32) -> u64 {
    int_tag_tail(head(INT_TAG, t), t, size_or_type)
}

fn int_tag_tail(head: Key, t: Option<&Type<'_>>, size_or_type: u32) -> u64 {
    head.word(size_or_type as u64)
        .word(int_tag_extra(t) as u64)
        .finish()
}

/// `btf_hash_enum`: the name only, so that forward declarations, full
/// enums and ENUM64 of one name meet.
pub(super) fn enumeration(t: Option<&Type<'_>>) -> u64 {
    Key::new(ENUM).str(name(t)).finish()
}

/// `btf_hash_struct`: common fields and member names and offsets, member
/// types excluded (they are not canonical yet).
pub(super) fn composite(t: Option<&Type<'_>>) -> u64 {
    let mut k = head(STRUCT, t).word(size_or_type(t) as u64);
    if let Some(Type::Struct(c) | Type::Union(c)) = t {
        for m in &c.members {
            k = k.str(&m.name).word(member_offset(m));
        }
    }
    k.finish()
}

/// `btf_hash_typedef`: name and info, the target excluded.
pub(super) fn typedef(t: Option<&Type<'_>>) -> u64 {
    head(TYPEDEF, t).finish()
}

/// `btf_hash_array` with the element and index ids given in `refs`.
pub(super) fn array(t: Option<&Type<'_>>, refs: &[u32]) -> u64 {
    array_tail(head(ARRAY, t), t, refs)
}

fn array_tail(head: Key, t: Option<&Type<'_>>, refs: &[u32]) -> u64 {
    let nelems = match t {
        Some(Type::Array(a)) => a.nelems,
        _ => 0,
    };
    ids(head, refs).word(nelems as u64).finish()
}

/// `head` followed by the referenced ids.
fn ids(head: Key, refs: &[u32]) -> Key {
    refs.iter().fold(head, |k, &r| k.word(r as u64))
}

/// `btf_hash_fnproto` with the return and parameter ids given in `refs`.
/// The parameter names are hashed before the ids (libbpf hashes them
/// after; only the grouping matters), so that all but the ids can be
/// computed ahead ([`reference_seed`]).
pub(super) fn func_proto(t: Option<&Type<'_>>, refs: &[u32]) -> u64 {
    reference(reference_seed(t), t, refs)
}

/// The part of a reference type's signature that its referenced ids do
/// not change: everything its key hashes before them. It reads the names,
/// which sit at random places in `.debug_str`; computing it ahead, on
/// another core, takes those loads off the sequential reference pass.
pub(super) fn reference_seed(t: Option<&Type<'_>>) -> Key {
    let tag = match t {
        Some(Type::DeclTag(_)) => INT_TAG,
        Some(Type::Array(_)) => ARRAY,
        Some(Type::FuncProto(_)) => FUNC_PROTO,
        _ => COMMON,
    };
    let mut k = head(tag, t);
    if let Some(Type::FuncProto(p)) = t {
        for param in &p.params {
            k = k.str(&param.name);
        }
    }
    k
}

/// The key of a reference type (`common`, `int_tag` of a DECL_TAG, `array`
/// or `func_proto`) from its [`reference_seed`] and its referenced ids.
pub(super) fn reference(seed: Key, t: Option<&Type<'_>>, refs: &[u32]) -> u64 {
    let first = refs.first().copied().unwrap_or(0);
    match t {
        Some(Type::Array(_)) => array_tail(seed, t, refs),
        Some(Type::FuncProto(_)) => ids(seed, refs).finish(),
        Some(Type::DeclTag(_)) => int_tag_tail(seed, t, first),
        _ => common_tail(seed, first),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_types::test_name;
    use crate::types::{Array, DeclTag, FuncProto, Named, Param, Type, TypeId};

    /// The reference pass keys a type from its seed; a base files the same
    /// kinds with `common`, `int_tag` and `array` directly. The two must
    /// agree, or split types would never meet their base twins.
    #[test]
    fn seeded_keys_agree_with_direct_ones() {
        let typedef = Type::Typedef(Named {
            name: "u32",
            ty: TypeId(3),
        });
        let ptr = Type::Ptr(TypeId(3));
        let tag = Type::DeclTag(DeclTag {
            name: "kfunc",
            ty: TypeId(3),
            component_idx: 1,
            attribute: false,
        });
        let arr = Type::Array(Array {
            elem: TypeId(3),
            index: TypeId(4),
            nelems: 8,
        });
        let seeded = |t: &Type<'_>, refs: &[u32]| reference(reference_seed(Some(t)), Some(t), refs);
        assert_eq!(seeded(&typedef, &[3]), common(Some(&typedef), 3));
        assert_eq!(seeded(&ptr, &[3]), common(Some(&ptr), 3));
        assert_eq!(seeded(&tag, &[3]), int_tag(Some(&tag), 3));
        assert_eq!(seeded(&arr, &[3, 4]), array(Some(&arr), &[3, 4]));
    }

    /// Prototypes that differ in any hashed field (a parameter name, a
    /// referenced id) get different keys.
    #[test]
    fn func_proto_keys_tell_names_and_ids_apart() {
        let proto = |name, ty| {
            Type::FuncProto(FuncProto {
                ret: TypeId(1),
                params: vec![Param {
                    name,
                    ty: TypeId(ty),
                }]
                .into(),
            })
        };
        let key = |t: &Type<'_>| match t {
            Type::FuncProto(p) => func_proto(Some(t), &[p.ret.0, p.params[0].ty.0]),
            _ => 0,
        };
        assert_eq!(
            key(&proto(test_name("a"), 2)),
            key(&proto(test_name("a"), 2))
        );
        assert_ne!(
            key(&proto(test_name("a"), 2)),
            key(&proto(test_name("b"), 2))
        );
        assert_ne!(
            key(&proto(test_name("a"), 2)),
            key(&proto(test_name("a"), 3))
        );
    }
}
