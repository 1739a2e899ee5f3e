//! Uniform access to the types of a (possibly split) BTF by absolute id,
//! and the field comparisons `btf__dedup` is defined by.
//!
//! libbpf compares raw records: `name_off`, the `info` word, the
//! `size`/`type` union and the kind-specific tail. Our model is decoded, so
//! each of those raw fields is recomputed here from the decoded type. String
//! offsets are equal exactly when the strings are (libbpf dedups strings
//! first), so names compare by content.

use crate::types::{Composite, Enum, FuncProto, Member, Type};

/// BTF kind numbers as bytes ([`crate::raw::kind_byte`]), for the dense
/// per-type kind array; 0 is `void`.
pub(super) mod kind {
    pub use crate::raw::kind_byte::*;

    /// PTR, CONST, VOLATILE and RESTRICT: wholly their kind and the one
    /// type they refer to (no name, no size, no flag:
    /// btf_ref_type_check_meta), so two of one kind are equal when their
    /// targets are.
    pub fn is_bare_reference(kind: u8) -> bool {
        matches!(kind, PTR | CONST | VOLATILE | RESTRICT)
    }

    /// The kinds the reference pass (`btf_dedup_ref_type`) settles: those
    /// whose equality is their fields and the canonical ids they refer to.
    pub fn is_reference(kind: u8) -> bool {
        matches!(
            kind,
            CONST
                | VOLATILE
                | RESTRICT
                | PTR
                | FUNC
                | TYPE_TAG
                | TYPEDEF
                | DECL_TAG
                | ARRAY
                | FUNC_PROTO
        )
    }
}

/// The types of a base (possibly empty) and a split table, by absolute id.
#[derive(Clone, Copy, Debug)]
pub(super) struct Types<'t, 'a> {
    base: &'t [Type<'a>],
    split: &'t [Type<'a>],
}

impl<'t, 'a> Types<'t, 'a> {
    pub(super) fn new(base: &'t [Type<'a>], split: &'t [Type<'a>]) -> Self {
        Types { base, split }
    }

    /// Id of the first split type.
    pub(super) fn start_id(&self) -> u32 {
        self.base.len() as u32 + 1
    }

    /// Number of ids including `void`.
    pub(super) fn id_count(&self) -> u32 {
        (self.base.len() + self.split.len()) as u32 + 1
    }

    /// Starts loading the type with `id` into the cache (see [`prefetch`]).
    #[inline]
    pub(super) fn prefetch(&self, id: u32) {
        if let Some(t) = self.get(id) {
            prefetch(t);
        }
    }

    /// Starts loading the variable-length part (members, parameters,
    /// values) of the type with `id`, which sits in its own allocation.
    #[inline]
    pub(super) fn prefetch_tail(&self, id: u32) {
        match self.get(id) {
            Some(Type::Struct(c) | Type::Union(c)) => prefetch(c.members.as_ptr()),
            Some(Type::FuncProto(p)) => prefetch(p.params.as_ptr()),
            Some(Type::Enum(e) | Type::Enum64(e)) => prefetch(e.values.as_ptr()),
            _ => {}
        }
    }

    /// The type with `id`; `None` for `void` (and, defensively, for ids
    /// past the end, which validation rules out).
    #[inline]
    pub(super) fn get(&self, id: u32) -> Option<&'t Type<'a>> {
        let index = id.checked_sub(1)? as usize;
        match self.base.get(index) {
            Some(t) => Some(t),
            None => self.split.get(index - self.base.len()),
        }
    }
}

pub(super) use crate::cache_hint::prefetch;

/// The BTF kind number of `t`.
#[inline]
pub(super) fn kind_of(t: &Type<'_>) -> u8 {
    t.kind().0
}

/// The type's name (`name_off`); empty for kinds that have none.
#[inline]
pub(super) fn name<'a>(t: Option<&Type<'a>>) -> &'a str {
    t.map_or("", Type::name)
}

/// The raw `info` word: kind, vlen and kind_flag, as the writer encodes
/// them ([`Type::info`]). libbpf compares it whole, so FUNC linkage (kept
/// in vlen) and the bitfield flag of aggregates take part in equality.
#[inline]
pub(super) fn info(t: Option<&Type<'_>>) -> u32 {
    t.map_or(0, Type::info)
}

/// The raw `size`/`type` union with the type's own (unresolved) ids
/// ([`Type::size_or_type`]).
#[inline]
pub(super) fn size_or_type(t: Option<&Type<'_>>) -> u32 {
    t.map_or(0, Type::size_or_type)
}

/// The single referenced id of PTR, TYPEDEF, CONST, VOLATILE, RESTRICT,
/// FUNC and TYPE_TAG (libbpf's `t->type`); 0 for other kinds.
#[inline]
pub(super) fn target(t: Option<&Type<'_>>) -> u32 {
    match t {
        Some(Type::Ptr(id) | Type::Volatile(id) | Type::Const(id) | Type::Restrict(id)) => id.0,
        Some(Type::Typedef(x)) => x.ty.0,
        Some(Type::TypeTag(x)) => x.ty.0,
        Some(Type::Func(x)) => x.ty.0,
        _ => 0,
    }
}

/// The INT/DECL_TAG trailing u32 (`btf_equal_int_tag` compares it).
#[inline]
pub(super) fn int_tag_extra(t: Option<&Type<'_>>) -> u32 {
    match t {
        Some(Type::Int(x)) => crate::raw::int_data(x.encoding.0, x.offset, x.bits),
        Some(Type::DeclTag(x)) => x.component_idx as u32,
        _ => 0,
    }
}

/// String equality with shortcuts: names usually borrow from one string
/// section (DWARF's `.debug_str`, a BTF string table), so equal names are
/// mostly the very same bytes; short names (which compilers often inline
/// in each CU's DIEs) are compared without a `memcmp` call.
#[inline]
pub(super) fn same_str(a: &str, b: &str) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if std::ptr::eq(a.as_ptr(), b.as_ptr()) {
        return true;
    }
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() <= 8 {
        let mut x = [0u8; 8];
        let mut y = [0u8; 8];
        x[..a.len()].copy_from_slice(a);
        y[..b.len()].copy_from_slice(b);
        return x == y;
    }
    a == b
}

/// `btf_equal_common`: name, info and size/type.
#[inline]
pub(super) fn equal_common(a: Option<&Type<'_>>, b: Option<&Type<'_>>) -> bool {
    info(a) == info(b) && size_or_type(a) == size_or_type(b) && same_str(name(a), name(b))
}

/// `btf_equal_int_tag`.
#[inline]
pub(super) fn equal_int_tag(a: Option<&Type<'_>>, b: Option<&Type<'_>>) -> bool {
    equal_common(a, b) && int_tag_extra(a) == int_tag_extra(b)
}

/// The raw member `offset` word: with kind_flag the bitfield size sits in
/// the top byte. Kept 64 bits wide so that no decoded field is lost.
#[inline]
pub(super) fn member_offset(m: &Member<'_>) -> u64 {
    (m.bitfield_size as u64) << 32 | m.bit_offset as u64
}

fn any_enum<'t, 'a>(t: Option<&'t Type<'a>>) -> Option<&'t Enum<'a>> {
    match t {
        Some(Type::Enum(e) | Type::Enum64(e)) => Some(e),
        _ => None,
    }
}

/// `btf_shallow_equal_struct`: common fields and member names and offsets,
/// ignoring member types.
pub(super) fn shallow_equal_struct(a: Option<&Type<'_>>, b: Option<&Type<'_>>) -> bool {
    match (a, b) {
        (Some(Type::Struct(x)), Some(Type::Struct(y)))
        | (Some(Type::Union(x)), Some(Type::Union(y))) => {
            composite_header_equal(x, y)
                && x.members
                    .iter()
                    .zip(&y.members)
                    .all(|(m, n)| members_shallow_equal(m, n))
        }
        _ => false,
    }
}

/// `btf_equal_common` of two aggregates of one kind: name, size, and the
/// rest of `info` (vlen, as the on-disk field truncates it, and
/// kind_flag). Read from the records directly, the comparison skips the
/// kind dispatch of [`equal_common`], which the graph walk would pay for
/// every aggregate it meets.
#[inline]
pub(super) fn composite_header_equal(x: &Composite<'_>, y: &Composite<'_>) -> bool {
    x.size == y.size
        && x.members.len() as u16 == y.members.len() as u16
        && x.kind_flag == y.kind_flag
        && same_str(x.name, y.name)
}

/// The member part of `btf_shallow_equal_struct`: offset word and name.
#[inline]
pub(super) fn members_shallow_equal(m: &Member<'_>, n: &Member<'_>) -> bool {
    member_offset(m) == member_offset(n) && same_str(&m.name, &n.name)
}

/// `btf_equal_typedef`: name and info, the referenced type ignored.
#[inline]
pub(super) fn equal_typedef(a: Option<&Type<'_>>, b: Option<&Type<'_>>) -> bool {
    info(a) == info(b) && same_str(name(a), name(b))
}

/// `btf_equal_enum`: same kind, name, size, flags and enumerators. ENUM
/// compares the 32-bit values, ENUM64 the full ones.
pub(super) fn equal_enum(a: Option<&Type<'_>>, b: Option<&Type<'_>>) -> bool {
    if !equal_common(a, b) {
        return false;
    }
    let wide = matches!(a, Some(Type::Enum64(_)));
    match (any_enum(a), any_enum(b)) {
        (Some(x), Some(y)) => x.values.iter().zip(&y.values).all(|(v, w)| {
            same_str(v.name, w.name)
                && if wide {
                    v.value == w.value
                } else {
                    v.value as u32 == w.value as u32
                }
        }),
        _ => false,
    }
}

/// An enum forward declaration: ENUM or ENUM64 without enumerators.
#[inline]
pub(super) fn is_enum_fwd(t: Option<&Type<'_>>) -> bool {
    any_enum(t).is_some_and(|e| e.values.is_empty())
}

/// `btf_compat_enum`: equal, or, when either side is a forward
/// declaration, just the same name on two enums of either width.
pub(super) fn compat_enum(a: Option<&Type<'_>>, b: Option<&Type<'_>>) -> bool {
    if !is_enum_fwd(a) && !is_enum_fwd(b) {
        return equal_enum(a, b);
    }
    same_str(name(a), name(b)) && any_enum(a).is_some() && any_enum(b).is_some()
}

/// `btf_compat_array`: common fields and element count, ignoring the
/// element and index types.
pub(super) fn compat_array(a: Option<&Type<'_>>, b: Option<&Type<'_>>) -> bool {
    if !equal_common(a, b) {
        return false;
    }
    match (a, b) {
        (Some(Type::Array(x)), Some(Type::Array(y))) => x.nelems == y.nelems,
        _ => false,
    }
}

/// `btf_compat_fnproto`: name, info and parameter names, ignoring all
/// referenced types (the return type included).
pub(super) fn compat_fnproto(a: Option<&Type<'_>>, b: Option<&Type<'_>>) -> bool {
    match (a, b) {
        (Some(Type::FuncProto(x)), Some(Type::FuncProto(y))) => {
            fnproto_header_equal(x, y)
                && x.params
                    .iter()
                    .zip(&y.params)
                    .all(|(p, q)| same_str(&p.name, &q.name))
        }
        _ => false,
    }
}

/// Name and `info` of two FUNC_PROTOs: they have no name, so only the
/// vlen (truncated as on disk) can differ.
#[inline]
pub(super) fn fnproto_header_equal(x: &FuncProto<'_>, y: &FuncProto<'_>) -> bool {
    x.params.len() as u16 == y.params.len() as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{EnumValue, Fwd, Int, IntEncoding, Named, TypeId};

    fn enumeration<'a>(name: &'a str, size: u32, values: &[(&'a str, u64)]) -> Type<'a> {
        Type::Enum(Enum {
            name,
            size,
            signed: false,
            values: values
                .iter()
                .map(|&(name, value)| EnumValue { name, value })
                .collect(),
        })
    }

    #[test]
    fn info_packs_kind_vlen_and_flag() {
        let fwd = Type::Fwd(Fwd {
            name: "u",
            union: true,
        });
        assert_eq!(info(Some(&fwd)), 7 << 24 | 1 << 31);
        let e = enumeration("e", 4, &[("A", 0), ("B", 1)]);
        assert_eq!(info(Some(&e)), 6 << 24 | 2);
    }

    #[test]
    fn int_encoding_word_matches_spec_layout() {
        // btf.rst: encoding in bits 24..28, offset in 16..24, bits in 0..8.
        let int = Type::Int(Int {
            name: "int",
            size: 4,
            encoding: IntEncoding(IntEncoding::SIGNED),
            offset: 0,
            bits: 32,
        });
        assert_eq!(int_tag_extra(Some(&int)), 0x0100_0020);
    }

    #[test]
    fn enum_fwd_is_compatible_with_any_width_of_same_name() {
        let fwd = enumeration("e", 4, &[]);
        let full64 = Type::Enum64(Enum {
            name: "e",
            size: 8,
            signed: false,
            values: vec![EnumValue {
                name: "A",
                value: 1 << 40,
            }]
            .into(),
        });
        assert!(compat_enum(Some(&fwd), Some(&full64)));
        assert!(!equal_enum(Some(&fwd), Some(&full64)));
        let other = enumeration("f", 4, &[]);
        assert!(!compat_enum(Some(&other), Some(&full64)));
    }

    #[test]
    fn enum32_compares_only_low_bits() {
        let a = enumeration("e", 4, &[("A", 0xffff_ffff)]);
        let b = enumeration("e", 4, &[("A", 0xffff_ffff_ffff_ffff)]);
        assert!(equal_enum(Some(&a), Some(&b)));
    }

    #[test]
    fn same_str_compares_content() {
        let owned = String::from("abc");
        assert!(same_str("abc", &owned));
        assert!(!same_str("abc", "abd"));
        assert!(!same_str("abc", "ab"));
        let long = String::from("a_rather_long_member_name");
        assert!(same_str("a_rather_long_member_name", &long));
        assert!(!same_str("a_rather_long_member_namE", &long));
        assert!(same_str("", ""));
    }

    #[test]
    fn typedef_equality_ignores_target() {
        let a = Type::Typedef(Named {
            name: "t",
            ty: TypeId(1),
        });
        let b = Type::Typedef(Named {
            name: "t",
            ty: TypeId(2),
        });
        assert!(equal_typedef(Some(&a), Some(&b)));
        assert!(!equal_common(Some(&a), Some(&b)));
    }
}
