//! Comparing and hashing a type's own fields, with its references handed
//! to the caller: the collapse compares types of different tables, whose
//! ids only the caller knows how to relate.

use super::super::table::Key;
use super::super::view::same_str;
use crate::types::{Type, TypeId};

/// Whether `a` and `b` agree in every field that is not a reference, and
/// `refs` accepts each pair of corresponding references (in record order;
/// a member's or parameter's reference right after its other fields
/// matched, so `refs` may have been called on the references before a
/// mismatch further on: callers must keep nothing it did when the answer
/// is no). Every field counts, not only those libbpf's dedup looks at:
/// collapsed types must write the same bytes.
///
/// One walk over the member lists rather than one for the fields and one
/// for the references: nearly every comparison the collapse makes is a
/// match (1.86M of 1.86M lookups and all 0.7M cycle pairs on Debian's
/// vmlinux), which walks the whole list either way.
#[inline]
pub(super) fn same_shape(
    a: &Type<'_>,
    b: &Type<'_>,
    mut refs: impl FnMut(TypeId, TypeId) -> bool,
) -> bool {
    match (a, b) {
        (Type::Int(x), Type::Int(y)) => x == y,
        (Type::Float(x), Type::Float(y)) => x == y,
        (Type::Fwd(x), Type::Fwd(y)) => x == y,
        (Type::Enum(x), Type::Enum(y)) | (Type::Enum64(x), Type::Enum64(y)) => {
            same_str(x.name, y.name)
                && x.size == y.size
                && x.signed == y.signed
                && x.values.len() == y.values.len()
                && x.values
                    .iter()
                    .zip(&y.values)
                    .all(|(v, w)| v.value == w.value && same_str(v.name, w.name))
        }
        (Type::Ptr(x), Type::Ptr(y))
        | (Type::Volatile(x), Type::Volatile(y))
        | (Type::Const(x), Type::Const(y))
        | (Type::Restrict(x), Type::Restrict(y)) => refs(*x, *y),
        (Type::Array(x), Type::Array(y)) => {
            x.nelems == y.nelems && refs(x.elem, y.elem) && refs(x.index, y.index)
        }
        (Type::Struct(x), Type::Struct(y)) | (Type::Union(x), Type::Union(y)) => {
            same_str(x.name, y.name)
                && x.size == y.size
                && x.kind_flag == y.kind_flag
                && x.members.len() == y.members.len()
                && x.members.iter().zip(y.members.iter()).all(|(m, n)| {
                    same_str(&m.name, &n.name)
                        && m.bit_offset == n.bit_offset
                        && m.bitfield_size == n.bitfield_size
                        && refs(m.ty, n.ty)
                })
        }
        (Type::Typedef(x), Type::Typedef(y)) => same_str(x.name, y.name) && refs(x.ty, y.ty),
        (Type::TypeTag(x), Type::TypeTag(y)) => {
            same_str(x.name, y.name) && x.attribute == y.attribute && refs(x.ty, y.ty)
        }
        (Type::Func(x), Type::Func(y)) | (Type::Var(x), Type::Var(y)) => {
            same_str(x.name, y.name) && x.linkage == y.linkage && refs(x.ty, y.ty)
        }
        (Type::DeclTag(x), Type::DeclTag(y)) => {
            same_str(x.name, y.name)
                && x.component_idx == y.component_idx
                && x.attribute == y.attribute
                && refs(x.ty, y.ty)
        }
        (Type::FuncProto(x), Type::FuncProto(y)) => {
            x.params.len() == y.params.len()
                && refs(x.ret, y.ret)
                && x.params
                    .iter()
                    .zip(y.params.iter())
                    .all(|(p, q)| same_str(&p.name, &q.name) && refs(p.ty, q.ty))
        }
        (Type::Datasec(x), Type::Datasec(y)) => {
            same_str(x.name, y.name)
                && x.size == y.size
                && x.vars.len() == y.vars.len()
                && x.vars
                    .iter()
                    .zip(y.vars.iter())
                    .all(|(v, w)| v.offset == w.offset && v.size == w.size && refs(v.ty, w.ty))
        }
        _ => false,
    }
}

/// A hash of every field [`same_shape`] compares other than references
/// (names by a [`sketch`]): the part of a type's key that does not depend
/// on where its references point, so it can be computed for a CU before
/// its types are matched. Hands `refs` every type id `t` refers to, in the
/// order of [`Type::for_each_ref`], on the way: the collapse needs
/// both for every type of a CU, and one dispatch on the kind and one walk
/// over the members or parameters do for both.
#[inline]
pub(super) fn own_hash_and_refs(
    t: &Type<'_>,
    names: MergedNames,
    mut refs: impl FnMut(TypeId),
) -> u64 {
    let k = Key::new(u64::from(t.kind().0));
    let k = match t {
        Type::Int(x) => k
            .word(names.sketch(x.name))
            .word(u64::from(x.size))
            .word(u64::from(x.encoding.0) << 16 | u64::from(x.offset) << 8 | u64::from(x.bits)),
        Type::Float(x) => k.word(names.sketch(x.name)).word(u64::from(x.size)),
        Type::Fwd(x) => k.word(names.sketch(x.name)).word(u64::from(x.union)),
        Type::Enum(x) | Type::Enum64(x) => {
            let mut k = k
                .word(names.sketch(x.name))
                .word(u64::from(x.size) << 1 | u64::from(x.signed));
            for v in x.values.iter() {
                k = k.word(names.sketch(v.name)).word(v.value);
            }
            k
        }
        Type::Ptr(id) | Type::Volatile(id) | Type::Const(id) | Type::Restrict(id) => {
            refs(*id);
            k
        }
        Type::Array(x) => {
            refs(x.elem);
            refs(x.index);
            k.word(u64::from(x.nelems))
        }
        Type::Struct(x) | Type::Union(x) => {
            let mut k = k
                .word(names.sketch(x.name))
                .word(u64::from(x.size) << 1 | u64::from(x.kind_flag));
            for m in x.members.iter() {
                refs(m.ty);
                k = k
                    .word(names.sketch(&m.name))
                    .word(u64::from(m.bit_offset) << 8 | u64::from(m.bitfield_size));
            }
            k
        }
        Type::Typedef(x) => {
            refs(x.ty);
            k.word(names.sketch(x.name))
        }
        Type::TypeTag(x) => {
            refs(x.ty);
            // The attribute bit only when set: kind_flag-0 keys stay as
            // they were.
            let k = k.word(names.sketch(x.name));
            if x.attribute {
                k.word(1)
            } else {
                k
            }
        }
        Type::Func(x) | Type::Var(x) => {
            refs(x.ty);
            k.word(names.sketch(x.name))
                .word(u64::from(crate::raw::linkage_value(x.linkage)))
        }
        Type::DeclTag(x) => {
            refs(x.ty);
            let k = k.word(names.sketch(x.name)).word(x.component_idx as u64);
            if x.attribute {
                k.word(1)
            } else {
                k
            }
        }
        Type::FuncProto(x) => {
            refs(x.ret);
            let mut k = k;
            for p in x.params.iter() {
                refs(p.ty);
                k = k.word(names.sketch(&p.name));
            }
            k
        }
        Type::Datasec(x) => {
            let mut k = k.word(names.sketch(x.name)).word(u64::from(x.size));
            for v in x.vars.iter() {
                refs(v.ty);
                k = k.word(u64::from(v.offset) << 32 | u64::from(v.size));
            }
            k
        }
    };
    k.finish()
}

/// The string section (if any) in which equal names are the same bytes,
/// as a linker leaves `.debug_str` (`SHF_MERGE | SHF_STRINGS`): a name in
/// it is sketched by its offset and length, without reading it. Nearly
/// every name a CU lowers to is there, at a random place in several MB,
/// and hashing the CUs' 3.3 M types read 6 M names that no other step
/// reads again (they are compared by address, see `same_str`): a cache
/// miss each, a quarter of preparing the CUs on Debian's vmlinux.
///
/// Two copies of one name, in the section and out of it (a name gcc wrote
/// into `.debug_info` itself) or twice in a section that is not merged,
/// get different sketches: the collapse then keeps both types, and the
/// dedup that follows merges them (see the module docs), at some cost.
#[derive(Clone, Copy, Debug, Default)]
pub struct MergedNames {
    start: usize,
    len: usize,
}

impl MergedNames {
    /// Names are sketched by their bytes.
    pub const NONE: MergedNames = MergedNames { start: 0, len: 0 };

    /// Names inside `section`, a merged string section, are sketched by
    /// their place in it.
    pub fn of(section: &[u8]) -> Self {
        MergedNames {
            start: section.as_ptr() as usize,
            len: section.len(),
        }
    }

    /// A word standing for `name` in [`own_hash_and_refs`]: equal names
    /// get equal words, whether inside the section or out of it.
    #[inline]
    fn sketch(self, name: &str) -> u64 {
        let at = (name.as_ptr() as usize).wrapping_sub(self.start);
        // An empty name is the same word wherever it points.
        if at < self.len && !name.is_empty() {
            (at as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (name.len() as u64) << 56
        } else {
            sketch(name)
        }
    }
}

/// A word standing for a name in [`own_hash_and_refs`]: its length and its first
/// and last eight bytes (overlapping in shorter names). Hashes only sort
/// types into buckets, and names that agree on all three are rare enough
/// that hashing every byte costs more than the comparisons it would save.
/// Whole-word loads rather than a byte copy: every lowered type's names
/// pass through here, and a variable-length copy is a call to `memcpy`.
fn sketch(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let (head, tail) = match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        (Some(head), Some(tail)) => (u64::from_le_bytes(*head), u64::from_le_bytes(*tail)),
        _ => match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
            (Some(head), Some(tail)) => (
                u64::from(u32::from_le_bytes(*head)),
                u64::from(u32::from_le_bytes(*tail)),
            ),
            // Up to three bytes: the first, middle and last say it all.
            _ => {
                let byte = |at: usize| bytes.get(at).map_or(0, |&b| u64::from(b));
                let len = bytes.len();
                (
                    byte(0) | byte(len / 2) << 8 | byte(len.wrapping_sub(1)) << 16,
                    0,
                )
            }
        },
    };
    head.rotate_left(17) ^ tail.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (bytes.len() as u64) << 56
}

/// A type's key: its [`own_hash_and_refs`] and a word for each reference, in
/// record order, as `refs` gives it. Types that pass [`same_shape`] with
/// references judged by the same words get the same key.
#[inline]
pub(super) fn shape_key(own: u64, t: &Type<'_>, mut refs: impl FnMut(TypeId) -> u64) -> u64 {
    let mut k = Key::new(own);
    t.for_each_ref(|id| k = k.word(refs(id)));
    k.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_types::test_name;
    use crate::types::{Array, Composite, FuncProto, Member, Named, Param};

    /// The references handed out are those `Type::for_each_ref` visits, in its
    /// order, for every kind that has any.
    #[test]
    fn own_hash_hands_out_the_references_in_record_order() {
        let member = |ty: u32| Member {
            name: test_name("m"),
            ty: TypeId(ty),
            bit_offset: 0,
            bitfield_size: 0,
        };
        let types = [
            Type::Ptr(TypeId(3)),
            Type::Const(TypeId(0)),
            Type::Array(Array {
                elem: TypeId(4),
                index: TypeId(5),
                nelems: 2,
            }),
            Type::Struct(Composite {
                name: "s",
                size: 8,
                members: [member(6), member(6), member(0)].into_iter().collect(),
                kind_flag: false,
            }),
            Type::Typedef(Named {
                name: "t",
                ty: TypeId(7),
            }),
            Type::FuncProto(FuncProto {
                ret: TypeId(8),
                params: [
                    Param {
                        name: test_name("a"),
                        ty: TypeId(9),
                    },
                    Param {
                        name: test_name("b"),
                        ty: TypeId(1),
                    },
                ]
                .into_iter()
                .collect(),
            }),
        ];
        for t in &types {
            let mut visited = Vec::new();
            t.for_each_ref(|id| visited.push(id));
            let mut handed = Vec::new();
            own_hash_and_refs(t, MergedNames::NONE, |id| handed.push(id));
            assert_eq!(handed, visited, "{t:?}");
        }
    }

    #[test]
    fn merged_names_are_sketched_by_place_and_others_by_content() {
        let section = "int\0task_struct\0list\0\0";
        let names = MergedNames::of(section.as_bytes());
        let at = |start: usize, len: usize| &section[start..start + len];
        let (int, task, list, empty) = (at(0, 3), at(4, 11), at(16, 4), at(21, 0));
        // In the section, different places give different words, and
        // content alone no longer decides.
        assert_ne!(names.sketch(int), sketch(int));
        assert_ne!(names.sketch(task), names.sketch(list));
        assert_ne!(names.sketch(task), names.sketch(at(5, 10)));
        // Out of it (a copy, or no section at all), by content.
        let copy = String::from("task_struct");
        assert_eq!(names.sketch(&copy), sketch("task_struct"));
        assert_eq!(MergedNames::NONE.sketch(task), sketch(task));
        // The empty name is one word wherever it points.
        assert_eq!(names.sketch(empty), names.sketch(""));
        assert_eq!(names.sketch(empty), sketch(""));
    }

    #[test]
    fn sketch_tells_apart_names_that_differ_at_either_end_or_in_length() {
        let names = [
            "",
            "a",
            "b",
            "ab",
            "ba",
            "abc",
            "abd",
            "xbc",
            "abcd",
            "abce",
            "abcde",
            "abcdf",
            "abcdefgh",
            "abcdefgi",
            "abcdefghi",
            "bbcdefghi",
            "abcdefghj",
            "a_rather_long_member_name",
        ];
        for (i, a) in names.iter().enumerate() {
            assert_eq!(
                sketch(a),
                sketch(&String::from(*a)),
                "{a:?} is sketched by content"
            );
            for b in &names[i + 1..] {
                assert_ne!(sketch(a), sketch(b), "{a:?} vs {b:?}");
            }
        }
    }
}
