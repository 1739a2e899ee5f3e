//! Visiting the type ids a [`Type`] refers to: which fields of which kind
//! are references, for the passes that move types between tables
//! ([`crate::distill`], [`crate::relocate`], [`crate::dedup`]'s
//! renumbering, [`crate::lower`]'s id shifting) and for [`crate::diff`]'s
//! walk. The one place that knows.

use crate::types::{Type, TypeId};

/// Calls `f` on every type id `t` refers to, in record order (an ARRAY's
/// element before its index type, a prototype's return type before its
/// parameters). `void` (0) is included; callers skip it when they need to.
pub(crate) fn for_each_id(t: &Type<'_>, mut f: impl FnMut(TypeId)) {
    match t {
        Type::Int(_) | Type::Enum(_) | Type::Enum64(_) | Type::Float(_) | Type::Fwd(_) => {}
        Type::Ptr(id) | Type::Volatile(id) | Type::Const(id) | Type::Restrict(id) => f(*id),
        Type::Typedef(x) => f(x.ty),
        Type::TypeTag(x) => f(x.ty),
        Type::Func(x) | Type::Var(x) => f(x.ty),
        Type::DeclTag(x) => f(x.ty),
        Type::Array(a) => {
            f(a.elem);
            f(a.index);
        }
        Type::Struct(c) | Type::Union(c) => c.members.iter().for_each(|m| f(m.ty)),
        Type::FuncProto(p) => {
            f(p.ret);
            p.params.iter().for_each(|param| f(param.ty));
        }
        Type::Datasec(d) => d.vars.iter().for_each(|v| f(v.ty)),
    }
}

/// The `index`-th type id `t` refers to, in the order of [`for_each_id`];
/// `None` past the last. For walks that keep their own stack and resume a
/// type's references where they left off.
pub(crate) fn id_at(t: &Type<'_>, index: usize) -> Option<TypeId> {
    match t {
        Type::Int(_) | Type::Enum(_) | Type::Enum64(_) | Type::Float(_) | Type::Fwd(_) => None,
        Type::Ptr(id) | Type::Volatile(id) | Type::Const(id) | Type::Restrict(id) => {
            (index == 0).then_some(*id)
        }
        Type::Typedef(x) => (index == 0).then_some(x.ty),
        Type::TypeTag(x) => (index == 0).then_some(x.ty),
        Type::Func(x) | Type::Var(x) => (index == 0).then_some(x.ty),
        Type::DeclTag(x) => (index == 0).then_some(x.ty),
        Type::Array(a) => match index {
            0 => Some(a.elem),
            1 => Some(a.index),
            _ => None,
        },
        Type::Struct(c) | Type::Union(c) => c.members.get(index).map(|m| m.ty),
        Type::FuncProto(p) => match index.checked_sub(1) {
            None => Some(p.ret),
            Some(param) => p.params.get(param).map(|param| param.ty),
        },
        Type::Datasec(d) => d.vars.get(index).map(|v| v.ty),
    }
}

/// Rewrites every type id in `t` with `f`, in the order of [`for_each_id`];
/// the first error stops the rewrite and is returned.
pub(crate) fn remap_ids<E>(
    t: &mut Type<'_>,
    mut f: impl FnMut(TypeId) -> Result<TypeId, E>,
) -> Result<(), E> {
    match t {
        Type::Int(_) | Type::Enum(_) | Type::Enum64(_) | Type::Float(_) | Type::Fwd(_) => {}
        Type::Ptr(id) | Type::Volatile(id) | Type::Const(id) | Type::Restrict(id) => *id = f(*id)?,
        Type::Typedef(x) => x.ty = f(x.ty)?,
        Type::TypeTag(x) => x.ty = f(x.ty)?,
        Type::Func(x) | Type::Var(x) => x.ty = f(x.ty)?,
        Type::DeclTag(x) => x.ty = f(x.ty)?,
        Type::Array(a) => {
            a.elem = f(a.elem)?;
            a.index = f(a.index)?;
        }
        Type::Struct(c) | Type::Union(c) => {
            for m in &mut c.members {
                m.ty = f(m.ty)?;
            }
        }
        Type::FuncProto(p) => {
            p.ret = f(p.ret)?;
            for param in &mut p.params {
                param.ty = f(param.ty)?;
            }
        }
        Type::Datasec(d) => {
            for v in &mut d.vars {
                v.ty = f(v.ty)?;
            }
        }
    }
    Ok(())
}

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
        for_each_id(&t, |id| seen.push(id.0));
        assert_eq!(seen, [3, 4]);
        remap_ids::<()>(&mut t, |id| Ok(TypeId(id.0 + 10))).unwrap();
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
            for_each_id(t, |id| visited.push(id));
            let indexed: Vec<TypeId> = (0..).map_while(|index| id_at(t, index)).collect();
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
