//! Following references through a table. Which fields of which kind are
//! references is the model's to say ([`Type::for_each_ref`],
//! [`Type::ref_at`], [`Type::remap_refs`]); this module holds the walks
//! more than one pass makes over them.

use crate::types::{Type, TypeId};

/// The STRUCT or UNION that a member of type `id` holds by value, looking
/// through qualifiers, typedefs, type tags and arrays (an array of structs
/// embeds them too) but not through pointers. `lookup` resolves an id
/// across base and split; `None` when the chain ends elsewhere or breaks.
///
/// Why it matters: a by-value member fixes the embedded aggregate's size,
/// so relocation must find a base type of exactly that size, while a type
/// reached only through pointers may have changed size freely.
pub(crate) fn embedded_composite<'t, 'a: 't>(
    mut id: TypeId,
    lookup: impl Fn(TypeId) -> Option<&'t Type<'a>>,
) -> Option<TypeId> {
    // Qualifier chains in valid BTF are short; the bound only guards
    // against a loop in malformed input.
    for _ in 0..64 {
        if id == TypeId::VOID {
            return None;
        }
        id = match lookup(id)? {
            Type::Const(next) | Type::Volatile(next) | Type::Restrict(next) => *next,
            Type::Typedef(x) => x.ty,
            Type::TypeTag(x) => x.ty,
            Type::Array(a) => a.elem,
            Type::Struct(_) | Type::Union(_) => return Some(id),
            _ => return None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_types::test_name;
    use crate::types::{Array, Composite, FuncProto, Member, Named, Param};

    #[test]
    fn visits_and_rewrites_every_reference() {
        let mut t = Type::Array(Array {
            elem: TypeId(3),
            index: TypeId(4),
            nelems: 2,
        });
        let mut seen = Vec::new();
        t.for_each_ref(|id| seen.push(id.0));
        assert_eq!(seen, [3, 4]);
        t.remap_refs::<()>(|id| Ok(TypeId(id.0 + 10))).unwrap();
        assert_eq!(
            t,
            Type::Array(Array {
                elem: TypeId(13),
                index: TypeId(14),
                nelems: 2
            })
        );
    }

    #[test]
    fn indexed_access_agrees_with_the_visit() {
        let types = [
            Type::Int(crate::types::Int {
                name: "int",
                size: 4,
                encoding: crate::types::IntEncoding(0),
                offset: 0,
                bits: 32,
            }),
            Type::Const(TypeId(7)),
            Type::Array(Array {
                elem: TypeId(3),
                index: TypeId(4),
                nelems: 2,
            }),
            Type::FuncProto(FuncProto {
                ret: TypeId(5),
                params: vec![
                    Param {
                        name: test_name("a"),
                        ty: TypeId(6),
                    },
                    Param {
                        name: test_name("b"),
                        ty: TypeId(0),
                    },
                ]
                .into(),
            }),
            Type::Struct(Composite {
                name: "s",
                size: 8,
                members: (1..4)
                    .map(|n| Member {
                        name: test_name("m"),
                        ty: TypeId(n),
                        bit_offset: n * 8,
                        bitfield_size: 0,
                    })
                    .collect(),
                kind_flag: false,
            }),
        ];
        for t in &types {
            let mut visited = Vec::new();
            t.for_each_ref(|id| visited.push(id));
            let indexed: Vec<TypeId> = (0..).map_while(|index| t.ref_at(index)).collect();
            assert_eq!(indexed, visited, "{t:?}");
        }
    }

    #[test]
    fn embedded_looks_through_typedef_and_array_but_not_pointer() {
        let types = [
            Type::Struct(Composite {
                name: "s",
                size: 8,
                members: Box::default(),
                kind_flag: false,
            }),
            Type::Typedef(Named {
                name: "s_t",
                ty: TypeId(1),
            }),
            Type::Array(Array {
                elem: TypeId(2),
                index: TypeId(1),
                nelems: 3,
            }),
            Type::Ptr(TypeId(1)),
            Type::Struct(Composite {
                name: "outer",
                size: 8,
                members: vec![Member {
                    name: test_name("m"),
                    ty: TypeId(3),
                    bit_offset: 0,
                    bitfield_size: 0,
                }]
                .into(),
                kind_flag: false,
            }),
        ];
        let lookup = |id: TypeId| types.get((id.0 as usize).checked_sub(1)?);
        assert_eq!(embedded_composite(TypeId(3), lookup), Some(TypeId(1)));
        assert_eq!(embedded_composite(TypeId(4), lookup), None);
        assert_eq!(embedded_composite(TypeId(0), lookup), None);
        assert_eq!(embedded_composite(TypeId(99), lookup), None);
    }
}
