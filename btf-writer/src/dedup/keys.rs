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

/// `btf_hash_common` with the `size`/`type` word given.
pub(super) fn common(t: Option<&Type<'_>>, size_or_type: u32) -> u64 {
    Key::new(COMMON)
        .str(name(t))
        .word(info(t) as u64)
        .word(size_or_type as u64)
        .finish()
}

/// `btf_hash_int_decl_tag` (INT, or DECL_TAG with its target given).
pub(super) fn int_tag(t: Option<&Type<'_>>, size_or_type: u32) -> u64 {
    Key::new(INT_TAG)
        .str(name(t))
        .word(info(t) as u64)
        .word(size_or_type as u64)
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
    let mut k = Key::new(STRUCT)
        .str(name(t))
        .word(info(t) as u64)
        .word(size_or_type(t) as u64);
    if let Some(Type::Struct(c) | Type::Union(c)) = t {
        for m in &c.members {
            k = k.str(m.name).word(member_offset(m));
        }
    }
    k.finish()
}

/// `btf_hash_typedef`: name and info, the target excluded.
pub(super) fn typedef(t: Option<&Type<'_>>) -> u64 {
    Key::new(TYPEDEF).str(name(t)).word(info(t) as u64).finish()
}

/// `btf_hash_array` with the element and index ids given in `refs`.
pub(super) fn array(t: Option<&Type<'_>>, refs: &[u32]) -> u64 {
    let nelems = match t {
        Some(Type::Array(a)) => a.nelems,
        _ => 0,
    };
    let mut k = Key::new(ARRAY).str(name(t)).word(info(t) as u64);
    for &r in refs {
        k = k.word(r as u64);
    }
    k.word(nelems as u64).finish()
}

/// `btf_hash_fnproto` with the return and parameter ids given in `refs`.
pub(super) fn func_proto(t: Option<&Type<'_>>, refs: &[u32]) -> u64 {
    let mut k = Key::new(FUNC_PROTO).str(name(t)).word(info(t) as u64);
    for &r in refs {
        k = k.word(r as u64);
    }
    if let Some(Type::FuncProto(p)) = t {
        for param in &p.params {
            k = k.str(param.name);
        }
    }
    k.finish()
}
