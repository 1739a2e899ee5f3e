//! Loops and over-long chains among one CU's lowered types, found before
//! they are written, as the kernel's `btf_resolve` would find them.

use super::error::Error;
use super::type_map::TypeMap;
use crate::types::{Type, TypeId};

/// The kernel's `MAX_RESOLVE_DEPTH`: how long a chain of types still to
/// resolve (each one referring to a later one) `btf_resolve` follows.
const MAX_RESOLVE_DEPTH: u32 = 32;

/// The type a PTR, TYPEDEF, qualifier, TYPE_TAG or ARRAY refers to.
fn reference_target(ty: &Type<'_>) -> Option<TypeId> {
    match ty {
        Type::Ptr(t) | Type::Const(t) | Type::Volatile(t) | Type::Restrict(t) => Some(*t),
        Type::Typedef(named) => Some(named.ty),
        Type::TypeTag(named) => Some(named.ty),
        Type::Array(array) => Some(array.elem),
        _ => None,
    }
}

/// What the kernel's `btf_resolve` refuses in a CU's types, found before
/// they are written: a loop of references ("Loop detected": a typedef
/// cycle, or a struct that holds itself by value), and a chain of more
/// than [`MAX_RESOLVE_DEPTH`] references each to a later id ("Exceeded
/// max resolving depth"; a 40-level pointer as gcc orders it). The depth
/// is counted on the CU's ids, whose order the output keeps. Linear in
/// the types; nothing is allocated per type but a few small tables.
///
/// `may_hold_themselves` lists the structs and unions (by index) that may
/// be on a by-value loop; the others' members are not followed. Each
/// member lowering kept fits in its composite (offset plus size at most
/// the composite's size), so along a loop of composites each holding the
/// next by value, sizes never grow and thus are all equal: every member
/// on the loop is as large as its composite and at its start, or has no
/// size (a zero-length array). Most composites have no such member:
/// following every member of every struct and union cost 330 M of the
/// 13.3 G instructions of Debian 6.1's vmlinux (cachegrind, `-j1`).
pub(super) fn check_resolvable(
    map: &TypeMap<'_, '_, '_>,
    types: &[Type<'_>],
    may_hold_themselves: &[usize],
) -> Result<(), Error> {
    // Forward chains: from the last id down, each reference type's depth
    // is one more than its target's when the target comes later.
    let mut depth = vec![0u32; types.len()];
    for index in (0..types.len()).rev() {
        let Some(target) = types.get(index).and_then(reference_target) else {
            continue;
        };
        depth[index] = match local_index(types, target) {
            Some(next) if next > index => depth[next].saturating_add(1),
            _ => 1,
        };
        if depth[index] > MAX_RESOLVE_DEPTH {
            return Err(map.unencodable(
                map.node_of(index),
                format!(
                    "a chain of more than {MAX_RESOLVE_DEPTH} references, each to a type written \
                     after it: past the kernel's resolve depth (MAX_RESOLVE_DEPTH)"
                ),
            ));
        }
    }
    if !has_loop(types, may_hold_themselves) {
        return Ok(());
    }
    match first_loop(types) {
        Some(on_loop) => Err(map.unencodable(
            map.node_of(on_loop),
            "the type refers back to itself (a typedef or qualifier loop, or a struct \
             or union holding itself by value): the kernel's \"Loop detected\""
                .to_string(),
        )),
        None => Ok(()),
    }
}

/// The index of a type in `types`, if `id` is one of them.
fn local_index(types: &[Type<'_>], id: TypeId) -> Option<usize> {
    let index = (id.0 as usize).checked_sub(1)?;
    (index < types.len()).then_some(index)
}

/// Where a member of type `id` leads by value (through typedefs,
/// qualifiers and arrays, not pointers): its struct or union, if any.
fn held_by_value(types: &[Type<'_>], mut id: TypeId) -> Option<usize> {
    for _ in 0..=types.len() {
        let index = local_index(types, id)?;
        match &types[index] {
            Type::Struct(_) | Type::Union(_) => return Some(index),
            Type::Ptr(_) => return None,
            other => id = reference_target(other)?,
        }
    }
    None
}

/// The reference type a reference type refers to, if that is one too.
fn next_reference(types: &[Type<'_>], index: usize) -> Option<usize> {
    let next = local_index(types, reference_target(&types[index])?)?;
    reference_target(&types[next]).map(|_| next)
}

/// Whether [`first_loop`] would find a loop, found in a quicker way: the
/// reference types, each with one way out, are walked once each; of the
/// composites only those in `may_hold_themselves` are searched (see
/// [`check_resolvable`]), and composites lead only to composites.
fn has_loop(types: &[Type<'_>], may_hold_themselves: &[usize]) -> bool {
    // Each walk along a chain marks what it passes with its number: it
    // ends at a type an earlier walk passed, or loops back to its own.
    let mut walk_of = vec![0u32; types.len()];
    let mut walk = 0u32;
    for start in 0..types.len() {
        if walk_of[start] != 0 || reference_target(&types[start]).is_none() {
            continue;
        }
        walk += 1;
        let mut at = start;
        walk_of[at] = walk;
        while let Some(next) = next_reference(types, at) {
            if walk_of[next] == walk {
                return true;
            }
            if walk_of[next] != 0 {
                break;
            }
            walk_of[next] = walk;
            at = next;
        }
    }
    // Composites holding each other by value, among those listed (any
    // other is a dead end).
    let mut state = vec![DONE; types.len()];
    for &index in may_hold_themselves {
        if let Some(slot) = state.get_mut(index) {
            *slot = UNSEEN;
        }
    }
    search_for_loop(types, may_hold_themselves.iter().copied(), &mut state).is_some()
}

/// A type on the first loop found following each reference type's chain
/// (one way out each) and each composite's members held by value, in
/// index order: the type a loop's error names.
fn first_loop(types: &[Type<'_>]) -> Option<usize> {
    let mut state = vec![UNSEEN; types.len()];
    search_for_loop(types, 0..types.len(), &mut state)
}

/// The states of [`search_for_loop`]: a type not reached yet, one on the
/// current path, and one whose successors are all done (or a dead end).
const UNSEEN: u8 = 0;
const ON_PATH: u8 = 1;
const DONE: u8 = 2;

/// Depth-first from each of `starts` in turn, without recursion, over
/// what each type leads to (a composite to the composites it holds by
/// value, a reference type to the reference type it refers to), marking
/// types in `state`: the first type found on the current path again,
/// which is on a loop.
fn search_for_loop(
    types: &[Type<'_>],
    starts: impl Iterator<Item = usize>,
    state: &mut [u8],
) -> Option<usize> {
    let successors = |index: usize, out: &mut Vec<usize>| match &types[index] {
        Type::Struct(c) | Type::Union(c) => {
            out.extend(c.members.iter().filter_map(|m| held_by_value(types, m.ty)));
        }
        _ => out.extend(next_reference(types, index)),
    };
    // `path` holds each open type and where its successors start in
    // `pending`.
    let mut path: Vec<(usize, usize)> = Vec::new();
    let mut pending: Vec<usize> = Vec::new();
    for start in starts {
        if state.get(start) != Some(&UNSEEN) {
            continue;
        }
        state[start] = ON_PATH;
        path.push((start, pending.len()));
        successors(start, &mut pending);
        while let Some(&(index, first)) = path.last() {
            if pending.len() == first {
                state[index] = DONE;
                path.pop();
                continue;
            }
            let Some(child) = pending.pop() else { break };
            match state[child] {
                ON_PATH => return Some(child),
                UNSEEN => {
                    state[child] = ON_PATH;
                    path.push((child, pending.len()));
                    successors(child, &mut pending);
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Array, Composite, Member, Name, Named};

    #[test]
    fn the_quick_loop_search_agrees_with_the_full_one() {
        // Random tables of pointers, typedefs, consts, arrays and structs
        // whose members refer anywhere: with every composite listed, the
        // quick search (chains walked once, composites apart) finds a loop
        // exactly when the full one does.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |below: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(below)) as u32
        };
        let (mut with_loops, mut without) = (0, 0);
        for _ in 0..3000 {
            let count = 1 + next(12);
            let target = |next: &mut dyn FnMut(u32) -> u32| TypeId(next(count + 1));
            let types: Vec<Type<'static>> = (0..count)
                .map(|_| match next(6) {
                    0 => Type::Ptr(target(&mut next)),
                    1 => Type::Typedef(Named {
                        name: "t",
                        ty: target(&mut next),
                    }),
                    2 => Type::Const(target(&mut next)),
                    3 => Type::Array(Array {
                        elem: target(&mut next),
                        index: TypeId::VOID,
                        nelems: 1,
                    }),
                    _ => Type::Struct(Composite {
                        name: "s",
                        size: 8,
                        members: (0..next(3))
                            .map(|_| Member {
                                name: Name::EMPTY,
                                ty: target(&mut next),
                                bit_offset: 0,
                                bitfield_size: 0,
                            })
                            .collect(),
                        kind_flag: false,
                    }),
                })
                .collect();
            let composites: Vec<usize> = (0..types.len())
                .filter(|&i| matches!(types[i], Type::Struct(_)))
                .collect();
            let full = first_loop(&types).is_some();
            assert_eq!(has_loop(&types, &composites), full, "{types:?}");
            if full {
                with_loops += 1;
            } else {
                without += 1;
            }
        }
        assert!(with_loops > 300 && without > 300, "{with_loops} {without}");
    }
}
