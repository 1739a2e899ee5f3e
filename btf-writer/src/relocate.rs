//! Relocating a split BTF from its distilled base onto a full base, with
//! libbpf's `btf_relocate` rules: what the kernel does when it loads a
//! module carrying `.BTF.base` (see [`crate::distill`]).
//!
//! Each distilled base type is looked up in the full base by name, kind and
//! size:
//! - INT, FLOAT, ENUM/ENUM64 must have the same size (INT also the same
//!   encoding; a distilled ENUM matches an ENUM or an ENUM64); an INT
//!   whose match has other bits is an error here (libbpf would go on, and
//!   the split's members could then be ones the kernel refuses);
//! - a FWD matches a FWD of its flavour, or a STRUCT/UNION (libbpf's exact
//!   test is reproduced in `is_match`);
//! - a STRUCT or UNION matches by name alone when the full base has only
//!   one aggregate of that name (it may have grown: the split only points
//!   at it), by name and size when it has several; and always by size when
//!   a split aggregate embeds it by value, because the split's member
//!   offsets were computed with that size.
//!
//! Every distilled type must find exactly one match: none, or two, is an
//! error naming the type. Split ids then move up by the difference in base
//! sizes, and references to distilled types point at their matches.

use foldhash::fast::FixedState;

/// Fixed hashing: the same probes on every run (fuzzing replays, profiles).
type HashMap<K, V> = std::collections::HashMap<K, V, FixedState>;

use crate::error::{ErrorKind, FormatError};
use crate::refs;
use crate::types::{Btf, Type, TypeId};

/// Moves `split`, a split on top of `distilled_base`, onto `base` (both
/// standalone BTF). The result is split on `base` with the same types in
/// the same order; its `base_str_len` is 0: set it to the end of `base`'s
/// strings before writing it with [`crate::write::write_split`].
pub fn relocate<'a>(
    split: &Btf<'a>,
    distilled_base: &Btf<'a>,
    base: &Btf<'a>,
) -> Result<Btf<'a>, FormatError> {
    if distilled_base.base_type_count != 0 || split.base_type_count != distilled_base.count() {
        return Err(ErrorKind::SplitBaseMismatch {
            expected: split.base_type_count,
            found: distilled_base.count(),
        }
        .into());
    }
    validate_distilled(distilled_base)?;
    let embedded = embedded_in_split(split, distilled_base);
    let matches = match_distilled_types(distilled_base, base, &embedded)?;

    let distilled_count = distilled_base.count();
    let shift = base.count();
    let remap = |id: TypeId| -> Result<TypeId, FormatError> {
        if id == TypeId::VOID {
            Ok(id)
        } else if id.0 <= distilled_count {
            matches
                .get(id.0 as usize)
                .copied()
                .flatten()
                .ok_or_else(|| {
                    FormatError::new(ErrorKind::Internal("relocate: unmatched distilled type"))
                        .for_type(id)
                })
        } else {
            // Both counts fit a type id, so this cannot overflow for a
            // split that itself fits.
            (id.0 - distilled_count)
                .checked_add(shift)
                .map(TypeId)
                .ok_or_else(|| {
                    FormatError::new(ErrorKind::TooManyTypes(u64::from(id.0) + u64::from(shift)))
                })
        }
    };
    let mut types = Vec::with_capacity(split.types.len());
    for (index, ty) in split.types.iter().enumerate() {
        let mut ty = ty.clone();
        ty.remap_refs(remap)
            .map_err(|e| e.for_type(TypeId(distilled_count + 1 + index as u32)))?;
        types.push(ty);
    }
    Ok(Btf {
        types,
        base_type_count: base.count(),
        base_str_len: 0,
    })
}

/// Folds back into `base` the types that distilling copied out of it, and
/// nothing else: `relocated` is [`relocate`]'s output on the base the pair
/// was distilled from (or one like it).
///
/// Distilling appends the base types the split reaches but cannot name
/// (pointers, typedefs, prototypes, anonymous aggregates...) after the
/// split's own types. Those copies are what makes a plain relocation bigger
/// than the direct split encoding. A dedup of the whole relocated split on
/// `base` does not give that encoding back, because libbpf's `btf__dedup`
/// is not idempotent: on nf_conntrack's per-CU input, libbpf (1.1 in pahole
/// 1.24 as 1.7 in pahole 1.31) keeps `struct file_system_type` in the split
/// as a duplicate of the base's, yet libbpf's dedup of that very output
/// merges it away (nf_tables: `struct module`). Worse, a copy can then be
/// merged into such a split duplicate rather than into the base type it
/// was copied from.
///
/// So the copies are told apart from the split's own types first: they are
/// the trailing run of types that a dedup on `base` merges away, cut back
/// until nothing in the run refers to a type before it (a base type never
/// refers to a split type). The run alone is then deduplicated on `base`:
/// each copy meets only base types, so it lands on the one it was copied
/// from. Every type before the run stays as it is, with its id; its
/// references into the run follow the copies to the base.
///
/// Onto the very base the pair was distilled from, the result is the
/// direct split encoding, type for type. Onto another build, a copy with
/// no equal in the new base ends the run: it and the copies before it stay
/// (valid BTF, only larger than needed).
pub fn fold_distilled_copies<'a>(
    relocated: &Btf<'a>,
    base: &Btf<'a>,
) -> Result<Btf<'a>, crate::dedup::Error> {
    let start = copies_start(relocated, base)?;
    let first = relocated.first_id().0;
    // Both are at most the split's type count, which fits a type id.
    let run_first = first + start as u32;
    let shift = start as u32;
    let base_count = relocated.base_type_count;

    // The run as a split of its own on `base`: ids lowered by `shift`.
    let lower = |id: TypeId| -> Result<TypeId, std::convert::Infallible> {
        Ok(if id.0 >= run_first {
            TypeId(id.0 - shift)
        } else {
            id
        })
    };
    let mut run = Btf {
        types: Vec::with_capacity(relocated.types.len() - start),
        base_type_count: base_count,
        base_str_len: relocated.base_str_len,
    };
    for ty in relocated.types.iter().skip(start) {
        let mut ty = ty.clone();
        ty.remap_refs(lower).map_err(|never| match never {})?;
        run.types.push(ty);
    }
    // libbpf 1.1's rules, not 1.7's: 1.7 files base TYPEDEFs under a key
    // split TYPEDEFs never look up, so a typedef copy could not find its
    // original. 1.1 compares typedefs as the reference types they are.
    let folded = crate::dedup::dedup_as(&run, Some(base), crate::dedup::Flavor::Libbpf1_1)?;

    // Where a reference to an id of the run now points: a base type, or a
    // copy that stays, numbered after the split's own types.
    let raise = |id: TypeId| -> TypeId {
        if id.0 > base_count {
            TypeId(id.0 + shift)
        } else {
            id
        }
    };
    let follow = |id: TypeId| -> Result<TypeId, std::convert::Infallible> {
        if id.0 < run_first {
            return Ok(id);
        }
        // An id past the end was invalid in the input and stays so.
        let in_run = (id.0 - shift) as usize;
        Ok(folded.remap.get(in_run).map_or(id, |&to| raise(to)))
    };
    let mut types = Vec::with_capacity(start + folded.btf.types.len());
    for ty in relocated.types.iter().take(start) {
        let mut ty = ty.clone();
        ty.remap_refs(follow).map_err(|never| match never {})?;
        types.push(ty);
    }
    for ty in &folded.btf.types {
        let mut ty = ty.clone();
        ty.remap_refs(|id| Ok::<_, std::convert::Infallible>(raise(id)))
            .map_err(|never| match never {})?;
        types.push(ty);
    }
    Ok(Btf {
        types,
        base_type_count: base_count,
        base_str_len: relocated.base_str_len,
    })
}

/// Index in `relocated.types` of the first of the trailing copies of base
/// types that distilling appended (the length when there are none).
fn copies_start(relocated: &Btf<'_>, base: &Btf<'_>) -> Result<usize, crate::dedup::Error> {
    // libbpf 1.1's rules, for the reason given where the run is folded.
    let deduped = crate::dedup::dedup_as(relocated, Some(base), crate::dedup::Flavor::Libbpf1_1)?;
    let first = relocated.first_id().0 as usize;
    let base_count = relocated.base_type_count;
    // The dedup keeps first occurrences in input order, so a type is kept
    // exactly when its new id is above every earlier split type's.
    let mut merged_away = Vec::with_capacity(relocated.types.len());
    let mut highest_kept = base_count;
    for index in 0..relocated.types.len() {
        let to = deduped.remap.get(first + index).map_or(0, |t| t.0);
        let kept = to > highest_kept;
        highest_kept = highest_kept.max(to);
        merged_away.push(!kept);
    }
    let mut start = merged_away
        .iter()
        .rposition(|&away| !away)
        .map_or(0, |i| i + 1);
    // A copy of a base type refers only to base types and other copies: cut
    // the run after any type that refers to a split type before the run.
    loop {
        let run_first = (first + start) as u32;
        let split_first = first as u32;
        let mut last_offender = None;
        for (offset, ty) in relocated.types.iter().enumerate().skip(start) {
            ty.for_each_ref(|id| {
                if id.0 >= split_first && id.0 < run_first {
                    last_offender = Some(offset);
                }
            });
        }
        match last_offender {
            Some(offset) => start = offset + 1,
            None => return Ok(start),
        }
    }
}

/// libbpf accepts only named INT, FLOAT, ENUM, STRUCT, UNION and FWD in a
/// distilled base: anything else means the file is not one.
fn validate_distilled(distilled: &Btf<'_>) -> Result<(), FormatError> {
    for (index, ty) in distilled.types.iter().enumerate() {
        let ok = match ty {
            Type::Int(t) => !t.name.is_empty(),
            Type::Float(t) => !t.name.is_empty(),
            Type::Enum(t) => !t.name.is_empty(),
            Type::Struct(t) | Type::Union(t) => !t.name.is_empty(),
            Type::Fwd(t) => !t.name.is_empty(),
            _ => false,
        };
        if !ok {
            return Err(FormatError::new(ErrorKind::InvalidDistilledBase(ty.kind()))
                .for_type(TypeId(index as u32 + 1)));
        }
    }
    Ok(())
}

/// `embedded[id]` for each distilled type id: a split STRUCT/UNION holds it
/// by value.
fn embedded_in_split(split: &Btf<'_>, distilled: &Btf<'_>) -> Vec<bool> {
    let mut embedded = vec![false; distilled.types.len() + 1];
    let lookup = |id: TypeId| distilled.get(id).or_else(|| split.get(id));
    for ty in &split.types {
        if let Type::Struct(c) | Type::Union(c) = ty {
            for member in &c.members {
                if let Some(target) = refs::embedded_composite(member.ty, lookup) {
                    if let Some(flag) = embedded.get_mut(target.0 as usize) {
                        *flag = true;
                    }
                }
            }
        }
    }
    embedded
}

/// For each distilled id, the full-base type it stands for.
fn match_distilled_types(
    distilled: &Btf<'_>,
    base: &Btf<'_>,
    embedded: &[bool],
) -> Result<Vec<Option<TypeId>>, FormatError> {
    let mut by_name: HashMap<&str, Vec<TypeId>> = HashMap::default();
    for (index, ty) in distilled.types.iter().enumerate() {
        by_name
            .entry(ty.name())
            .or_default()
            .push(TypeId(index as u32 + 1));
    }
    // A name shared by several aggregates of the base (two `struct foo`
    // in different subsystems) is told apart by size.
    let mut aggregates_named: HashMap<&str, u32> = HashMap::default();
    for ty in &base.types {
        if let Type::Struct(c) | Type::Union(c) = ty {
            if !c.name.is_empty() {
                *aggregates_named.entry(c.name).or_default() += 1;
            }
        }
    }

    let mut matches: Vec<Option<TypeId>> = vec![None; distilled.types.len() + 1];
    for (index, base_ty) in base.types.iter().enumerate() {
        let base_id = TypeId(index as u32 + 1);
        let name = base_ty.name();
        if name.is_empty() {
            continue;
        }
        let Some(candidates) = by_name.get(name) else {
            continue;
        };
        for &dist_id in candidates {
            let Some(dist_ty) = distilled.get(dist_id) else {
                continue;
            };
            let is_embedded = embedded.get(dist_id.0 as usize).copied().unwrap_or(false);
            let ambiguous_name = aggregates_named.get(name).is_some_and(|&n| n > 1);
            if !is_match(dist_ty, base_ty, is_embedded, ambiguous_name) {
                continue;
            }
            let Some(slot) = matches.get_mut(dist_id.0 as usize) else {
                continue;
            };
            if let Some(first) = *slot {
                return Err(FormatError::new(ErrorKind::RelocateAmbiguous {
                    kind: dist_ty.kind(),
                    name: name.to_owned(),
                    size: size_of(dist_ty),
                    candidates: (first, base_id),
                })
                .for_type(dist_id));
            }
            *slot = Some(base_id);
        }
    }

    for (index, ty) in distilled.types.iter().enumerate() {
        let id = index + 1;
        let Some(base_id) = matches.get(id).copied().flatten() else {
            return Err(FormatError::new(ErrorKind::RelocateNoMatch {
                kind: ty.kind(),
                name: ty.name().to_owned(),
                size: size_of(ty),
                embedded: embedded.get(id).copied().unwrap_or(false),
            })
            .for_type(TypeId(id as u32)));
        };
        // libbpf matches INTs by name, size and encoding only; one whose
        // bits differ would change what the split's members mean to the
        // kernel's checks (a bitfield's end, a member's span), which then
        // refuse the relocated split. Found by the relocate fuzz target:
        // a distilled `short unsigned int` of 0 bits, the base's of 16.
        if let (Type::Int(dist), Some(Type::Int(matched))) = (ty, base.get(base_id)) {
            if (dist.offset, dist.bits) != (matched.offset, matched.bits) {
                return Err(FormatError::new(ErrorKind::RelocateIntBits {
                    name: dist.name.to_owned(),
                    distilled: (dist.offset, dist.bits),
                    base: (matched.offset, matched.bits),
                    base_id,
                })
                .for_type(TypeId(id as u32)));
            }
        }
    }
    Ok(matches)
}

/// Whether base type `base` can stand for distilled type `dist` (names are
/// already equal), exactly as `btf_relocate` decides (the kernel runs the
/// same code when it loads a module): first the size, when the base kind
/// needs one, then compatibility by the distilled kind.
///
/// Two libbpf details are reproduced on purpose: a distilled FWD matches a
/// base STRUCT only if that struct's kind_flag is clear and a base UNION
/// only if it is set (libbpf tests the base aggregate's flag, not the
/// FWD's flavour); and a distilled STRUCT/UNION matches any base STRUCT,
/// UNION or FWD of its name, checking the size only when embedded.
fn is_match(dist: &Type<'_>, base: &Type<'_>, embedded: bool, ambiguous_name: bool) -> bool {
    let needs_size = match base {
        Type::Int(_) | Type::Float(_) | Type::Enum(_) | Type::Enum64(_) => true,
        Type::Fwd(_) => false,
        Type::Struct(_) | Type::Union(_) => ambiguous_name,
        _ => return false,
    };
    if needs_size && size_of(dist) != size_of(base) {
        return false;
    }
    match dist {
        Type::Fwd(d) => match base {
            Type::Fwd(b) => d.union == b.union,
            Type::Struct(b) => !b.kind_flag,
            Type::Union(b) => b.kind_flag,
            _ => false,
        },
        Type::Int(d) => matches!(base, Type::Int(b) if b.encoding == d.encoding),
        Type::Float(_) => matches!(base, Type::Float(_)),
        Type::Enum(_) => matches!(base, Type::Enum(_) | Type::Enum64(_)),
        Type::Struct(_) | Type::Union(_) => !embedded || size_of(dist) == size_of(base),
        _ => false,
    }
}

/// The size `btf_relocate` compares: 0 for kinds without one (FWD).
fn size_of(ty: &Type<'_>) -> u32 {
    ty.size().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distill::distill_base;
    use crate::test_types::test_name;
    use crate::types::{
        Composite, Enum, EnumValue, FuncProto, Fwd, Linkage, Member, Named, Object, Param,
    };

    /// An unsigned INT of `size` bytes.
    fn int(name: &'static str, size: u32) -> Type<'static> {
        crate::test_types::int(name, size, 0)
    }

    fn aggregate(
        name: &'static str,
        size: u32,
        members: Vec<Member<'static>>,
    ) -> Composite<'static> {
        Composite {
            name,
            size,
            members: members.into(),
            kind_flag: false,
        }
    }

    fn member(name: &'static str, ty: u32) -> Member<'static> {
        Member {
            name: test_name(name),
            ty: TypeId(ty),
            bit_offset: 0,
            bitfield_size: 0,
        }
    }

    /// A "vmlinux": 1 unsigned int, 2 struct inner (8 bytes), 3 struct
    /// pointed (16 bytes), 4 enum64 flags, 5 fwd struct hidden.
    fn vmlinux() -> Btf<'static> {
        let mut b = Btf::default();
        b.add(int("unsigned int", 4));
        b.add(Type::Struct(aggregate(
            "inner",
            8,
            vec![member("x", 1), member("y", 1)],
        )));
        b.add(Type::Struct(aggregate("pointed", 16, vec![])));
        b.add(Type::Enum64(Enum {
            name: "flags",
            size: 8,
            signed: false,
            values: vec![EnumValue {
                name: "F",
                value: 1,
            }]
            .into(),
        }));
        b.add(Type::Fwd(Fwd {
            name: "hidden",
            union: false,
        }));
        b
    }

    /// A module: 6 struct m { struct inner i; struct pointed *p; enum flags f;
    /// struct hidden *h; }, 7 ptr to 3, 8 ptr to 5.
    fn module() -> Btf<'static> {
        let mut s = Btf {
            base_type_count: 5,
            ..Btf::default()
        };
        s.add(Type::Struct(aggregate(
            "m",
            40,
            vec![
                member("i", 2),
                member("p", 7),
                member("f", 4),
                member("h", 8),
            ],
        )));
        s.add(Type::Ptr(TypeId(3)));
        s.add(Type::Ptr(TypeId(5)));
        s
    }

    #[test]
    fn relocating_onto_the_original_base_gives_back_the_split_types() {
        let (base, split) = (vmlinux(), module());
        let d = distill_base(&split, &base).unwrap();
        let back = relocate(&d.split, &d.base, &base).unwrap();
        assert_eq!(back.base_type_count, 5);
        // Nothing was moved into the split (no pointer/typedef reached in
        // the base), so the split comes back identical.
        assert_eq!(back.types, split.types);
    }

    #[test]
    fn relocating_onto_a_changed_base_follows_names() {
        let d = distill_base(&module(), &vmlinux()).unwrap();
        // A newer "vmlinux": types reordered, one added in front, and the
        // pointed-to struct grew; the embedded one did not.
        let mut newer = Btf::default();
        newer.add(int("char", 1));
        newer.add(Type::Fwd(Fwd {
            name: "hidden",
            union: false,
        }));
        newer.add(Type::Struct(aggregate("pointed", 24, vec![])));
        newer.add(Type::Enum64(Enum {
            name: "flags",
            size: 8,
            signed: false,
            values: Box::default(),
        }));
        newer.add(Type::Struct(aggregate("inner", 8, vec![])));
        newer.add(int("unsigned int", 4));
        let moved = relocate(&d.split, &d.base, &newer).unwrap();
        assert_eq!(moved.base_type_count, 6);
        assert_eq!(
            moved.types[0],
            Type::Struct(aggregate(
                "m",
                40,
                vec![
                    member("i", 5),
                    member("p", 8),
                    member("f", 4),
                    member("h", 9)
                ]
            ))
        );
        assert_eq!(moved.types[1], Type::Ptr(TypeId(3)));
        assert_eq!(moved.types[2], Type::Ptr(TypeId(2)));
    }

    #[test]
    fn an_embedded_struct_must_keep_its_size() {
        let d = distill_base(&module(), &vmlinux()).unwrap();
        let mut newer = vmlinux();
        newer.types[1] = Type::Struct(aggregate("inner", 12, vec![]));
        let err = relocate(&d.split, &d.base, &newer).unwrap_err();
        assert!(
            matches!(&err.kind, ErrorKind::RelocateNoMatch { kind: crate::raw::Kind::STRUCT, name, size: 8, embedded: true } if name == "inner"),
            "{err}"
        );
        assert!(err.to_string().contains("'inner'"), "{err}");
    }

    /// An INT matched by name, size and encoding whose bits differ from
    /// the distilled one's is refused, naming both (the relocate fuzz
    /// target's finding: relocated, a member checked against a 0-bit INT
    /// ran past its struct with the base's 16 bits).
    #[test]
    fn an_int_of_other_bits_is_an_error() {
        let mut with_int = module();
        if let Some(Type::Struct(m)) = with_int.types.first_mut() {
            let mut members = m.members.to_vec();
            members.push(member("u", 1));
            m.members = members.into();
        }
        let d = distill_base(&with_int, &vmlinux()).unwrap();
        let mut narrower = vmlinux();
        if let Some(Type::Int(int)) = narrower.types.first_mut() {
            int.bits = 24;
        }
        let err = relocate(&d.split, &d.base, &narrower).unwrap_err();
        assert!(
            matches!(
                &err.kind,
                ErrorKind::RelocateIntBits {
                    distilled: (0, 32),
                    base: (0, 24),
                    base_id: TypeId(1),
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains("'unsigned int' has 32 bits"),
            "{err}"
        );
        // The same bits at another offset are as bad.
        let mut shifted = vmlinux();
        if let Some(Type::Int(int)) = shifted.types.first_mut() {
            int.offset = 8;
        }
        assert!(relocate(&d.split, &d.base, &shifted).is_err());
        // Unchanged, it relocates.
        assert!(relocate(&d.split, &d.base, &vmlinux()).is_ok());
    }

    #[test]
    fn two_candidates_are_an_error() {
        let d = distill_base(&module(), &vmlinux()).unwrap();
        let mut newer = vmlinux();
        newer.add(Type::Enum(Enum {
            name: "flags",
            size: 8,
            signed: false,
            values: Box::default(),
        }));
        let err = relocate(&d.split, &d.base, &newer).unwrap_err();
        assert!(
            matches!(
                &err.kind,
                ErrorKind::RelocateAmbiguous {
                    candidates: (TypeId(4), TypeId(6)),
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn same_named_aggregates_are_told_apart_by_size() {
        let d = distill_base(&module(), &vmlinux()).unwrap();
        let mut newer = vmlinux();
        newer.types[2] = Type::Struct(aggregate("pointed", 24, vec![]));
        newer.add(Type::Struct(aggregate("pointed", 32, vec![])));
        // Two `pointed`, neither of size 16: no match.
        assert!(matches!(
            relocate(&d.split, &d.base, &newer).unwrap_err().kind,
            ErrorKind::RelocateNoMatch { .. }
        ));
        newer.add(Type::Struct(aggregate("pointed", 16, vec![])));
        let moved = relocate(&d.split, &d.base, &newer).unwrap();
        assert_eq!(moved.types.get(1), Some(&Type::Ptr(TypeId(7))));
    }

    #[test]
    fn fwd_and_aggregate_matching_follows_libbpf() {
        let fwd = |union| Type::Fwd(Fwd { name: "x", union });
        let aggregate = |size, kind_flag| Composite {
            name: "x",
            size,
            members: Box::default(),
            kind_flag,
        };
        // libbpf tests the base aggregate's kind_flag against a FWD.
        assert!(is_match(
            &fwd(false),
            &Type::Struct(aggregate(8, false)),
            false,
            false
        ));
        assert!(!is_match(
            &fwd(false),
            &Type::Struct(aggregate(8, true)),
            false,
            false
        ));
        assert!(is_match(
            &fwd(true),
            &Type::Union(aggregate(8, true)),
            false,
            false
        ));
        assert!(!is_match(
            &fwd(true),
            &Type::Fwd(Fwd {
                name: "x",
                union: false
            }),
            false,
            false
        ));
        // A distilled STRUCT: any aggregate or FWD of its name; the size
        // only when embedded, or when the base has several of that name.
        let dist = Type::Struct(aggregate(8, false));
        assert!(is_match(
            &dist,
            &Type::Union(aggregate(16, false)),
            false,
            false
        ));
        assert!(!is_match(
            &dist,
            &Type::Struct(aggregate(16, false)),
            true,
            false
        ));
        assert!(!is_match(
            &dist,
            &Type::Struct(aggregate(16, false)),
            false,
            true
        ));
        assert!(is_match(
            &dist,
            &Type::Fwd(Fwd {
                name: "x",
                union: false
            }),
            false,
            false
        ));
        assert!(!is_match(
            &dist,
            &Type::Fwd(Fwd {
                name: "x",
                union: false
            }),
            true,
            false
        ));
        // INT: size and encoding; ENUM: an ENUM or ENUM64 of the size.
        assert!(!is_match(&int("x", 4), &int("x", 8), false, false));
        let e = |size| Enum {
            name: "x",
            size,
            signed: false,
            values: Box::default(),
        };
        assert!(is_match(
            &Type::Enum(e(8)),
            &Type::Enum64(e(8)),
            false,
            false
        ));
        assert!(!is_match(
            &Type::Enum(e(4)),
            &Type::Enum64(e(8)),
            false,
            false
        ));
    }

    /// A relocated split whose own types include `struct s`, a duplicate
    /// of base 2 that the original dedup kept, followed by one distilled
    /// copy (7, of base 3). Folding drops the copy only; a plain dedup
    /// would drop the kept duplicate as well.
    #[test]
    fn folding_drops_the_copies_and_keeps_the_split_own_duplicates() {
        let s = || Type::Struct(aggregate("s", 4, vec![member("a", 1)]));
        let mut base = Btf::default();
        base.add(int("int", 4)); // 1
        base.add(s()); // 2
        base.add(Type::Ptr(TypeId(2))); // 3
        let proto = |param: u32| {
            Type::FuncProto(FuncProto {
                ret: TypeId(1),
                params: vec![Param {
                    name: test_name("p"),
                    ty: TypeId(param),
                }]
                .into(),
            })
        };
        let func = |proto: u32| {
            Type::Func(Object {
                name: "f",
                ty: TypeId(proto),
                linkage: Linkage::Static,
            })
        };
        let relocated = Btf {
            types: vec![s(), proto(7), func(5), Type::Ptr(TypeId(2))],
            base_type_count: 3,
            base_str_len: 0,
        };
        let folded = fold_distilled_copies(&relocated, &base).unwrap();
        assert_eq!(folded.types, vec![s(), proto(3), func(5)]);
        assert_eq!(folded.base_type_count, 3);

        let deduped = crate::dedup::dedup(&relocated, Some(&base)).unwrap().btf;
        assert_eq!(deduped.types, vec![proto(3), func(4)]);
    }

    /// A typedef copy with no twin among the split's own types still folds
    /// back: libbpf 1.7's dedup never matches a split TYPEDEF with a base
    /// one, so under its rules the copies of base 2 (typedef) and 3 (a
    /// pointer to it) would look like the split's own types.
    #[test]
    fn typedef_copies_fold_back_too() {
        let u32_t = |to: u32| {
            Type::Typedef(Named {
                name: "u32",
                ty: TypeId(to),
            })
        };
        let mut base = Btf::default();
        base.add(int("unsigned int", 4)); // 1
        base.add(u32_t(1)); // 2
        base.add(Type::Ptr(TypeId(2))); // 3
        let proto = |param: u32| {
            Type::FuncProto(FuncProto {
                ret: TypeId(1),
                params: vec![Param {
                    name: test_name("p"),
                    ty: TypeId(param),
                }]
                .into(),
            })
        };
        let func = Type::Func(Object {
            name: "f",
            ty: TypeId(4),
            linkage: Linkage::Static,
        });
        let relocated = Btf {
            types: vec![proto(7), func.clone(), u32_t(1), Type::Ptr(TypeId(6))],
            base_type_count: 3,
            base_str_len: 0,
        };
        let folded = fold_distilled_copies(&relocated, &base).unwrap();
        assert_eq!(folded.types, vec![proto(3), func]);
    }

    /// With nothing to fold, the split comes back as it was.
    #[test]
    fn folding_a_split_without_copies_changes_nothing() {
        let (base, split) = (vmlinux(), module());
        assert_eq!(
            fold_distilled_copies(&split, &base).unwrap().types,
            split.types
        );
    }

    /// pahole 1.31's distilled pairs relocated onto the vmlinux BTF they
    /// were distilled from hold every type of pahole's direct split of the
    /// same module (the extra ones are the base types distilling copied
    /// into the split), and folding those copies back gives pahole's
    /// direct split exactly. For nf_conntrack and nf_tables a plain dedup
    /// would not: it merges the duplicates of base structs
    /// (`file_system_type`, `module`) that pahole's dedup kept.
    #[test]
    fn pahole_pairs_relocate_back_onto_vmlinux() {
        use crate::test_reference::{read, MODULES};
        let Some(vmlinux) = read("vmlinux.btf") else {
            return;
        };
        let base = crate::read::parse(&vmlinux, None).unwrap();
        for module in MODULES {
            let (Some(direct), Some(pair_base), Some(pair_split)) = (
                read(&format!("modules/{module}.btf")),
                read(&format!("modules/{module}.distilled.base.btf")),
                read(&format!("modules/{module}.distilled.btf")),
            ) else {
                continue;
            };
            let direct = crate::read::parse(&direct, Some(&base)).unwrap();
            let small = crate::read::parse(&pair_base, None).unwrap();
            let split = crate::read::parse(&pair_split, Some(&small)).unwrap();
            let moved = relocate(&split.btf, &small.btf, &base.btf).unwrap();
            assert_eq!(moved.count(), split.btf.count());
            let report = crate::diff::diff(&moved, Some(&base.btf), &direct.btf, Some(&base.btf));
            assert!(
                report.kinds.iter().all(|k| k.only_b == 0),
                "{module}: {report}"
            );
            let folded = fold_distilled_copies(&moved, &base.btf).unwrap();
            let report = crate::diff::diff(&folded, Some(&base.btf), &direct.btf, Some(&base.btf));
            assert!(report.is_empty(), "{module}: {report}");
            // Type for type: the split's own types keep their ids, and
            // pahole's direct split is exactly those.
            assert_eq!(folded.types, direct.btf.types, "{module}");
        }
    }

    #[test]
    fn rejects_what_is_not_a_distilled_base() {
        let mut fake = Btf::default();
        fake.add(Type::Typedef(Named {
            name: "t",
            ty: TypeId(0),
        }));
        let split = Btf {
            base_type_count: 1,
            ..Btf::default()
        };
        let err = relocate(&split, &fake, &vmlinux()).unwrap_err();
        assert_eq!(
            err.kind,
            ErrorKind::InvalidDistilledBase(crate::raw::Kind::TYPEDEF)
        );
        let err = relocate(&module(), &fake, &vmlinux()).unwrap_err();
        assert!(matches!(
            err.kind,
            ErrorKind::SplitBaseMismatch {
                expected: 5,
                found: 1
            }
        ));
    }
}
