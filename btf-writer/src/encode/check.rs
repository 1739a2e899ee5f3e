//! The last step of [`super::encode`]: nothing the kernel would reject
//! leaves the library, whatever the input made of it.
//!
//! Every rule that can be judged one unit at a time is the lowering's, with
//! an error naming the DIE (or, with `encode_force`, the thing left out).
//! What is left here is what only the whole file decides: a function type
//! taking a struct the unit only declares is valid if another unit (or the
//! base) defines it, which only the dedup finds out.

use std::path::Path;

use super::{CheckedBase, Error, SplitOn};
use crate::types::{Btf, Type, TypeId};
use crate::validate::{first_of, validate, validate_split_on, Options, SplitRejected, Violation};

/// Fails on a FUNC_PROTO that takes or returns by value a struct or union
/// that is only declared after dedup (a FWD, through typedefs, qualifiers
/// and type tags): btf_func_proto_check wants arguments and return values
/// of a known size ("Invalid arg#N", "Invalid return type"). C allows it
/// (`struct s; typedef void (*fn)(struct s);`), and so does one unit of
/// a file whose other units define `s`.
pub(super) fn by_value_declarations(
    path: &Path,
    btf: &Btf<'_>,
    base: Option<&Btf<'_>>,
) -> Result<(), Error> {
    let lookup = |id: TypeId| match (btf.get(id), base) {
        (Some(ty), _) => Some(ty),
        (None, Some(base)) => base.get(id),
        (None, None) => None,
    };
    for (index, ty) in btf.types.iter().enumerate() {
        let Type::FuncProto(proto) = ty else {
            continue;
        };
        // Slot 0 is the return value, slot N argument N.
        let slots = std::iter::once(proto.ret).chain(proto.params.iter().map(|param| param.ty));
        for (slot, ty) in slots.enumerate() {
            if let Some((name, union)) = declaration_behind(ty, &lookup) {
                let id = btf.first_id().0 as usize + index;
                return Err(Error::from(crate::ErrorKind::DeclaredByValue {
                    proto: id as u32,
                    slot: match slot {
                        0 => "return value".to_string(),
                        n => format!("argument {n}"),
                    },
                    name: name.to_string(),
                    union,
                })
                .context(path.display().to_string()));
            }
        }
    }
    Ok(())
}

/// The FWD `ty` is, through typedefs, qualifiers and type tags: its name
/// and whether it is a union. Bounded: a cycle of modifiers (which the
/// kernel refuses by another rule) ends the walk.
fn declaration_behind<'a>(
    mut ty: TypeId,
    lookup: &impl Fn(TypeId) -> Option<&'a Type<'a>>,
) -> Option<(&'a str, bool)> {
    for _ in 0..64 {
        match lookup(ty)? {
            Type::Fwd(fwd) => return Some((fwd.name, fwd.union)),
            Type::Typedef(named) => ty = named.ty,
            Type::TypeTag(tag) => ty = tag.ty,
            Type::Const(target) | Type::Volatile(target) | Type::Restrict(target) => ty = *target,
            _ => return None,
        }
    }
    None
}

/// Checks what [`super::encode`] wrote as the kernel would: the distilled
/// base alone, then the split on it, or on the base it was encoded on.
pub(super) fn written(
    path: &Path,
    btf: &[u8],
    distilled_base: Option<&[u8]>,
    base: Option<&SplitOn<'_, '_>>,
) -> Result<(), Error> {
    let rejected = |what, violations: Vec<Violation>| rejected(path, what, true, &violations);
    let small = match distilled_base {
        Some(small) => Some(
            validate(small, None, Options::AS_WRITTEN)
                .map_err(|v| rejected("distilled base BTF", v))?,
        ),
        None => None,
    };
    let on = match (&small, base) {
        (Some(small), _) => Some(small),
        (None, Some(base)) => match &base.checked {
            CheckedBase::Whole(whole) => Some(whole),
            CheckedBase::Reached(unresolved) => {
                return validate_split_on(btf, unresolved, Options::AS_WRITTEN).map_err(
                    |rejection| match rejection {
                        SplitRejected::Split(v) => rejected("BTF", v),
                        SplitRejected::Base(v) => self::rejected(&base.path, "base BTF", false, &v),
                    },
                );
            }
        },
        (None, None) => None,
    };
    validate(btf, on, Options::AS_WRITTEN).map_err(|v| rejected("BTF", v))?;
    Ok(())
}

/// The error for BTF from `path` that the kernel's checks reject with
/// `violations`: `what` is about to be written (`output`) or was read.
pub(super) fn rejected(
    path: &Path,
    what: &'static str,
    output: bool,
    violations: &[Violation],
) -> Error {
    Error::from(crate::ErrorKind::WouldBeRejected {
        what,
        output,
        violations: first_of(violations),
    })
    .context(path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::Name;
    use crate::types::{FuncProto, Fwd, Named, Param};

    fn proto_taking(ty: TypeId) -> Type<'static> {
        Type::FuncProto(FuncProto {
            ret: TypeId::VOID,
            params: vec![Param {
                name: Name::EMPTY,
                ty,
            }]
            .into_boxed_slice(),
        })
    }

    /// A FWD by value, through a typedef and a qualifier, in this table or
    /// in the base, is an error naming the FUNC_PROTO and the argument; by
    /// pointer it is not.
    #[test]
    fn declarations_by_value_are_refused() {
        let path = Path::new("t.o");
        let mut btf = Btf::default();
        let fwd = btf.add(Type::Fwd(Fwd {
            name: "u",
            union: true,
        }));
        let typedef = btf.add(Type::Typedef(Named {
            name: "u_t",
            ty: fwd,
        }));
        let constant = btf.add(Type::Const(typedef));
        let pointer = btf.add(Type::Ptr(fwd));
        btf.add(proto_taking(pointer));
        assert!(by_value_declarations(path, &btf, None).is_ok());
        btf.add(proto_taking(constant));
        let err = by_value_declarations(path, &btf, None).unwrap_err();
        assert_eq!(
            err.one_line(),
            "t.o: BTF: [6] FUNC_PROTO: its argument 1 is union u by value, which no unit \
             defines (only declarations): the kernel wants a known size (btf_func_proto_check)"
        );

        // The same FWD in the base of a split.
        let mut split = Btf {
            base_type_count: btf.count(),
            ..Btf::default()
        };
        split.add(proto_taking(constant));
        assert!(by_value_declarations(path, &split, Some(&btf)).is_err());
    }
}
