//! Type graph equivalence (`btf_dedup_is_equiv`), the "identical types"
//! fallback, and merging a successful hypothetical mapping into the
//! canonical map.
//!
//! The walk is a side-by-side DFS from a candidate struct/union/typedef
//! and a canonical one. Each canonical-graph type visited is recorded in
//! the hypothetical map with the candidate-graph type it met; meeting it
//! again with a different partner is a contradiction. FWDs are accepted
//! against a STRUCT/UNION of their kind and name.
//!
//! libbpf recurses; we keep an explicit stack of pending pairs. Any
//! failure fails the whole check and successes have no result beyond
//! their side effects, so visiting pairs in the same pre-order (children
//! pushed in reverse) is exactly the recursive algorithm without its
//! stack depth.

use super::state::{is_mapped, Deduper, UNPROCESSED};
use super::view::{
    self, compat_array, compat_enum, compat_fnproto, equal_common, equal_int_tag, info, kind,
    same_str, shallow_equal_struct, target,
};
use super::{Error, Flavor};
use crate::types::{Type, TypeId};

/// libbpf's depth limit for the identical-types fallback.
const IDENTICAL_DEPTH: u32 = 16;
/// Bound on modifier chains followed without depth cost; only a malformed
/// (cyclic) chain gets near it.
const CHAIN_LIMIT: u32 = 1 << 16;

impl Deduper<'_, '_> {
    pub(super) fn clear_hypot(&mut self) {
        for &id in &self.hypot_list {
            self.hypot[id as usize] = UNPROCESSED;
        }
        self.hypot_list.clear();
        self.hypot_adjust_canon = false;
    }

    /// Whether [`Deduper::is_equiv`]`(cand, canon)` can hold, told from
    /// the names of the types their members (or a typedef's target) refer
    /// to, which are hashed once per type and kept: false only where the
    /// check would fail. A check with many candidates that mostly fail
    /// then reads the candidates' hashes instead of walking into each one:
    /// a kernel has one anonymous union per tracepoint (`__bpf_trace_tp_map_*`:
    /// `event`, and `handler` of the tracepoint's own typedef), all with
    /// one key, so each union was checked against every earlier one
    /// (240 K checks on Debian 6.1's vmlinux, 434 K on 7.3.4's).
    ///
    /// Why a difference of names settles it: the walk compares each
    /// member's types, and a pair holds only if both resolve to the same
    /// canonical type, or the canonical side was already paired in this
    /// walk with the candidate side or with a type `identical` to it, or
    /// the two have the same name and go on to match. Every merge (a
    /// canonical map entry, a FWD resolution, a hypothetical pairing, an
    /// `identical` verdict) is between types of the same name, so each
    /// way means equal names; a member pair of different names fails the
    /// check. `None` (no filtering) for a type with a missing target or a
    /// target of a kind the walk refuses (VAR, DATASEC, DECL_TAG), so that
    /// its check ends as the walk ends it, with that error. Such a kind
    /// further down an earlier member's graph, which the walk would meet
    /// before the members whose names differ, is not looked for: no table
    /// the lowering builds has one, and the kernel's checks of the output
    /// refuse it anyway.
    pub(super) fn may_be_equiv(&mut self, cand: u32, canon: u32) -> bool {
        match (self.target_names(cand), self.target_names(canon)) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
    }

    /// A hash of the names of the types `id`'s members refer to, in
    /// order (a typedef's target's name), kept in `target_names`.
    fn target_names(&mut self, id: u32) -> Option<u64> {
        if let Some(&known) = self.target_names.get(&id) {
            return known;
        }
        let hashed = self.hash_target_names(id);
        self.target_names.insert(id, hashed);
        hashed
    }

    fn hash_target_names(&self, id: u32) -> Option<u64> {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = foldhash::fast::FixedState::default().build_hasher();
        let mut add = |target: TypeId| -> Option<()> {
            let t = self.types.get(target.0)?;
            if matches!(t, Type::Var(_) | Type::Datasec(_) | Type::DeclTag(_)) {
                return None;
            }
            hasher.write(t.name().as_bytes());
            hasher.write_u8(0xff);
            Some(())
        };
        match self.types.get(id)? {
            Type::Struct(x) | Type::Union(x) => {
                for m in x.members.iter() {
                    add(m.ty)?;
                }
            }
            Type::Typedef(x) => add(x.ty)?,
            _ => return None,
        }
        Some(hasher.finish())
    }

    /// `btf_dedup_is_equiv(cand, canon)`.
    pub(super) fn is_equiv(&mut self, cand: u32, canon: u32) -> Result<bool, Error> {
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        self.push_pair(&mut work, cand, canon);
        let mut result = Ok(true);
        while let Some((cand, canon)) = work.pop() {
            match self.equiv_step(cand, canon, &mut work) {
                Ok(true) => {}
                other => {
                    result = other;
                    break;
                }
            }
        }
        self.work = work;
        result
    }

    /// Queues a pair unless both sides already share a canonical type,
    /// which settles the pair (libbpf's first test in `btf_dedup_is_equiv`).
    ///
    /// Testing when queuing rather than when popping is the same test: the
    /// canonical map does not change during a walk. Done here, the map
    /// loads of all of a struct's members are independent of each other
    /// and overlap (the walk is bound by memory latency), and half of all
    /// pairs never touch the stack.
    ///
    /// A pair whose canonical side this walk already met with the same
    /// candidate is settled too: its step would find exactly that and do
    /// nothing (the hypothetical map only gains entries during a walk).
    /// Most pairs of a large graph are such back-references (list heads,
    /// common typedefs), and skipping them here spares their stack trip
    /// and the prefetch of two types that would never be read.
    #[inline(always)]
    fn push_pair(&self, work: &mut Vec<(u32, u32)>, cand_id: u32, canon_id: u32) {
        if cand_id == canon_id || self.resolve(cand_id) == self.resolve(canon_id) {
            return;
        }
        if self.hypot.get(self.resolve_fwd(canon_id) as usize) == Some(&cand_id) {
            return;
        }
        work.push((cand_id, canon_id));
        // What the pair's step reads first starts loading now: the pairs
        // queued with it are checked one after another, so the loads of
        // the later ones overlap the earlier ones' work instead of each
        // stalling the walk in turn.
        self.types.prefetch(cand_id);
        self.types.prefetch(canon_id);
    }

    /// Checks one pair; pushes the pairs its verdict depends on.
    fn equiv_step(
        &mut self,
        cand_id: u32,
        canon_id: u32,
        work: &mut Vec<(u32, u32)>,
    ) -> Result<bool, Error> {
        let canon_id = self.resolve_fwd(canon_id);
        let seen = self.hypot[canon_id as usize];
        if is_mapped(seen) {
            if seen == cand_id {
                return Ok(true);
            }
            // Compilers sometimes emit identical duplicates (arrays,
            // structs, pointers) within one CU; accept those. (libbpf
            // computes this before looking at `seen == cand_id`; it has no
            // side effects, so skipping it when the pair is already known
            // changes nothing but the time.)
            return Ok(match self.flavor {
                Flavor::Libbpf1_7 => self.identical(seen, cand_id, IDENTICAL_DEPTH),
                Flavor::Libbpf1_1 => self.identical_v1_1(seen, cand_id),
            });
        }
        self.hypot[canon_id as usize] = cand_id;
        self.hypot_list.push(canon_id);

        let cand_kind = self.kind(cand_id);
        let canon_kind = self.kind(canon_id);
        // A pair of modifiers of one kind is the pair of their targets,
        // which the reference slots hold: the types themselves, at random
        // places in a table of millions, need not be read. These are over
        // half of all pairs.
        if cand_kind == canon_kind && kind::is_bare_reference(cand_kind) {
            if let (&[cand_target], &[canon_target]) =
                (self.slots_of(cand_id), self.slots_of(canon_id))
            {
                self.push_pair(work, cand_target, canon_target);
                return Ok(true);
            }
        }

        let types = self.types;
        let cand = types.get(cand_id);
        let canon = types.get(canon_id);
        if !same_str(view::name(cand), view::name(canon)) {
            return Ok(false);
        }
        if (cand_kind == kind::FWD || canon_kind == kind::FWD) && cand_kind != canon_kind {
            let (real_kind, fwd_kind) = if cand_kind == kind::FWD {
                (canon_kind, fwd_kind(cand))
            } else {
                let fwd_kind = fwd_kind(canon);
                // Equivalent only if a base FWD got resolved, which the
                // immutable base forbids.
                if fwd_kind == cand_kind && canon_id < self.start {
                    self.hypot_adjust_canon = true;
                }
                (cand_kind, fwd_kind)
            };
            return Ok(fwd_kind == real_kind);
        }
        if cand_kind != canon_kind {
            return Ok(false);
        }
        match (cand, canon) {
            (Some(Type::Int(_)), _) => Ok(equal_int_tag(cand, canon)),
            (Some(Type::Enum(_) | Type::Enum64(_)), _) => Ok(compat_enum(cand, canon)),
            (Some(Type::Fwd(_) | Type::Float(_)), _) => Ok(equal_common(cand, canon)),
            (
                Some(
                    Type::Const(_)
                    | Type::Volatile(_)
                    | Type::Restrict(_)
                    | Type::Ptr(_)
                    | Type::Typedef(_)
                    | Type::Func(_)
                    | Type::TypeTag(_),
                ),
                _,
            ) => {
                if info(cand) != info(canon) {
                    return Ok(false);
                }
                self.push_pair(work, target(cand), target(canon));
                Ok(true)
            }
            (Some(Type::Array(a)), Some(Type::Array(b))) => {
                if !compat_array(cand, canon) {
                    return Ok(false);
                }
                // Index first, then element.
                self.push_pair(work, a.elem.0, b.elem.0);
                self.push_pair(work, a.index.0, b.index.0);
                Ok(true)
            }
            // The kinds are equal, so the shallow checks need not dispatch
            // on them again; each member is checked and queued in one
            // pass. Pairs queued before a mismatch is found are harmless:
            // the walk ends at the mismatch and the next one starts with
            // an empty stack.
            (Some(Type::Struct(a) | Type::Union(a)), Some(Type::Struct(b) | Type::Union(b))) => {
                if !view::composite_header_equal(a, b) {
                    return Ok(false);
                }
                for (m, n) in a.members.iter().zip(&b.members).rev() {
                    if !view::members_shallow_equal(m, n) {
                        return Ok(false);
                    }
                    self.push_pair(work, m.ty.0, n.ty.0);
                }
                Ok(true)
            }
            (Some(Type::FuncProto(a)), Some(Type::FuncProto(b))) => {
                if !view::fnproto_header_equal(a, b) {
                    return Ok(false);
                }
                for (p, q) in a.params.iter().zip(&b.params).rev() {
                    if !same_str(&p.name, &q.name) {
                        return Ok(false);
                    }
                    self.push_pair(work, p.ty.0, q.ty.0);
                }
                self.push_pair(work, a.ret.0, b.ret.0);
                Ok(true)
            }
            _ => Err(Error::UnexpectedKind {
                type_id: TypeId(cand_id),
                kind: cand_kind,
            }),
        }
    }

    /// `btf_dedup_identical_types`: structurally the same down to
    /// `depth` levels, comparing ids directly where they are equal.
    ///
    /// libbpf (since 1.6) reads both array records from the first type
    /// here, so two arrays are "identical" whenever their element counts
    /// agree; we keep that, since matching its output is the point.
    fn identical(&self, id1: u32, id2: u32, depth: u32) -> bool {
        let (mut id1, mut id2) = (id1, id2);
        // Modifier chains are followed without spending depth, as in libbpf.
        for _ in 0..CHAIN_LIMIT {
            if depth == 0 {
                return false;
            }
            let t1 = self.types.get(id1);
            let t2 = self.types.get(id2);
            if self.kind(id1) != self.kind(id2) {
                return false;
            }
            return match (t1, t2) {
                (None, None) => true,
                (Some(Type::Int(_)), _) => equal_int_tag(t1, t2),
                (Some(Type::Enum(_) | Type::Enum64(_)), _) => compat_enum(t1, t2),
                (Some(Type::Fwd(_) | Type::Float(_)), _) => equal_common(t1, t2),
                (
                    Some(
                        Type::Const(_)
                        | Type::Volatile(_)
                        | Type::Restrict(_)
                        | Type::Ptr(_)
                        | Type::Typedef(_)
                        | Type::Func(_)
                        | Type::TypeTag(_),
                    ),
                    _,
                ) => {
                    if info(t1) != info(t2) || !same_str(view::name(t1), view::name(t2)) {
                        return false;
                    }
                    id1 = target(t1);
                    id2 = target(t2);
                    continue;
                }
                (Some(Type::Array(_)), _) => compat_array(t1, t2),
                (
                    Some(Type::Struct(a) | Type::Union(a)),
                    Some(Type::Struct(b) | Type::Union(b)),
                ) => {
                    shallow_equal_struct(t1, t2)
                        && a.members
                            .iter()
                            .zip(&b.members)
                            .all(|(m, n)| m.ty == n.ty || self.identical(m.ty.0, n.ty.0, depth - 1))
                }
                (Some(Type::FuncProto(a)), Some(Type::FuncProto(b))) => {
                    compat_fnproto(t1, t2)
                        && (a.ret == b.ret || self.identical(a.ret.0, b.ret.0, depth - 1))
                        && a.params
                            .iter()
                            .zip(&b.params)
                            .all(|(p, q)| p.ty == q.ty || self.identical(p.ty.0, q.ty.0, depth - 1))
                }
                _ => false,
            };
        }
        false
    }

    /// libbpf 1.1's `btf_dedup_identical_arrays` and
    /// `btf_dedup_identical_structs`: equal ARRAY records with equal ids;
    /// shallow-equal structs whose members have equal ids or are, in
    /// turn, identical arrays or structs. Only by-value members are
    /// followed, and C has no by-value cycles, so this ends; the depth
    /// cap only guards against malformed input.
    fn identical_v1_1(&self, id1: u32, id2: u32) -> bool {
        self.identical_v1_1_within(id1, id2, CHAIN_LIMIT)
    }

    fn identical_v1_1_within(&self, id1: u32, id2: u32, depth: u32) -> bool {
        if depth == 0 {
            return false;
        }
        let (t1, t2) = (self.types.get(id1), self.types.get(id2));
        match (t1, t2) {
            (Some(Type::Array(a)), Some(Type::Array(b))) => {
                equal_common(t1, t2)
                    && a.elem == b.elem
                    && a.index == b.index
                    && a.nelems == b.nelems
            }
            (Some(Type::Struct(a)), Some(Type::Struct(b)))
            | (Some(Type::Union(a)), Some(Type::Union(b))) => {
                shallow_equal_struct(t1, t2)
                    && a.members.iter().zip(&b.members).all(|(m, n)| {
                        m.ty == n.ty || self.identical_v1_1_within(m.ty.0, n.ty.0, depth - 1)
                    })
            }
            _ => false,
        }
    }

    /// `btf_dedup_merge_hypot_map`: records FWD resolutions found by a
    /// successful check and, as a shortcut, maps candidate-graph structs
    /// onto canonical structs that are themselves settled.
    pub(super) fn merge_hypot(&mut self) {
        for i in 0..self.hypot_list.len() {
            let canon_id = self.hypot_list[i];
            let targ_id = self.hypot[canon_id as usize];
            // Only FWDs are ever mapped to a type of another kind (enum
            // declarations map to enums of either width, neither of which
            // counts here), so a pair of which neither side is a FWD keeps
            // its kinds through resolution, and without a STRUCT/UNION on
            // the candidate side it can change nothing below. Most pairs
            // of a graph (pointers, ints, prototypes) are such pairs.
            let (targ_kind, canon_kind) = (self.kind(targ_id), self.kind(canon_id));
            if targ_kind != kind::FWD
                && canon_kind != kind::FWD
                && targ_kind != kind::STRUCT
                && targ_kind != kind::UNION
            {
                continue;
            }
            let t_id = self.resolve(targ_id);
            let c_id = self.resolve(canon_id);
            let t_kind = self.kind(t_id);
            let c_kind = self.kind(c_id);
            // Also in the split case: base FWDs must point at the split
            // STRUCT/UNION so that split FWDs resolving to them follow.
            if t_kind != kind::FWD && c_kind == kind::FWD {
                self.map[c_id as usize] = t_id;
            }
            if self.hypot_adjust_canon {
                continue;
            }
            if t_kind == kind::FWD && c_kind != kind::FWD {
                self.map[t_id as usize] = c_id;
            }
            if (t_kind == kind::STRUCT || t_kind == kind::UNION)
                && c_kind != kind::FWD
                && is_mapped(self.map[c_id as usize])
                && !is_mapped(self.map[t_id as usize])
            {
                self.map[t_id as usize] = c_id;
            }
        }
    }
}

/// STRUCT or UNION, the kind a FWD stands for.
fn fwd_kind(t: Option<&Type<'_>>) -> u8 {
    match t {
        Some(Type::Fwd(f)) if f.union => kind::UNION,
        _ => kind::STRUCT,
    }
}
