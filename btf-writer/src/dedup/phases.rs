//! The deduplication passes, in libbpf's order: primitive types,
//! struct/union/typedef graphs, unambiguous FWD resolution, reference types.
//! Each pass walks the split types in id order; a type that finds no
//! equivalent canonical candidate becomes canonical and is filed as a
//! candidate for later ones.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use rayon::prelude::*;

use super::state::{is_mapped, Deduper, IN_PROGRESS, UNPROCESSED};
use super::table::{KeyMap, NameMap};
use super::view::{
    self, compat_enum, equal_common, equal_enum, equal_int_tag, equal_typedef, info, is_enum_fwd,
    kind, same_str, shallow_equal_struct, size_or_type,
};
use super::{keys, Error, Flavor};
use crate::types::{Param, Type, TypeId};

/// Canonical candidates of the reference pass of a standalone table for
/// the kinds it settles most, kept apart from the candidate table so that
/// a lookup reads no candidate's type. On Debian 7.3.4's vmlinux, 993,000
/// reference types are left after the collapse, among them 486,000 PTRs
/// and 362,000 FUNC_PROTOs, and the pass is most of what is left to do
/// once the last unit is walked: through the candidate table each read
/// its candidate's type, parameters and slots at random places in a table
/// of 1.2 million types.
///
/// The candidate table's order (see `table`) is no concern: the reference
/// pass finds at most one equal candidate per type (equality after
/// resolution is exact), and nothing looks a candidate up after it.
#[derive(Default)]
struct Shortcuts<'a> {
    /// The bare reference kinds (`kind::is_bare_reference`, called the
    /// modifiers here) are wholly their kind and the one canonical id they
    /// point to: the canonical one of each pair. PTRs, most of them, by
    /// target id (`UNPROCESSED`: none yet), in the graph pass's
    /// hypothetical map, which nothing reads after that pass: a lookup is
    /// one read at the target's place where a hash map read its control
    /// bytes and then its bucket, two cache misses (of Debian 7.3.4's
    /// vmlinux's 545,000 pairs, 486,000 are PTRs). The other kinds by kind
    /// and target.
    pointers: Vec<u32>,
    modifiers: std::collections::HashMap<u64, u32, foldhash::fast::FixedState>,
    /// FUNC_PROTOs by key (a hash already, filed as it is): the first of
    /// the key's chain in `protos`.
    proto_heads: KeyMap<u32>,
    protos: Vec<ProtoEntry>,
    /// The entries' parameters, one run per entry: each name with its
    /// canonical type, side by side, so that comparing a prototype reads
    /// one run (a cache miss or two) where names and types apart read two.
    proto_params: Vec<Param<'a>>,
}

/// A canonical FUNC_PROTO of [`Shortcuts`]: its id, the next entry of its
/// key (or `u32::MAX`), its canonical return type, and where its run of
/// parameters starts and how long it is.
struct ProtoEntry {
    id: u32,
    next: u32,
    ret: u32,
    params_at: u32,
    param_count: u32,
}

impl<'a> Shortcuts<'a> {
    /// Shortcuts whose PTRs are kept in `pointers`, one `UNPROCESSED`
    /// entry per id of the table.
    fn new(pointers: Vec<u32>) -> Self {
        Shortcuts {
            pointers,
            ..Shortcuts::default()
        }
    }

    /// The kind and canonical target of a type of the modifier kinds.
    #[inline]
    fn modifier(kind: u8, slots: &[u32]) -> Option<(u8, u32)> {
        match slots {
            &[target] if kind::is_bare_reference(kind) => Some((kind, target)),
            _ => None,
        }
    }

    /// The canonical type of `kind` pointing to `target`; `id` becomes it
    /// when there is none.
    #[inline]
    fn canonical_modifier(&mut self, (kind, target): (u8, u32), id: u32) -> u32 {
        if kind == kind::PTR {
            if let Some(slot) = self.pointers.get_mut(target as usize) {
                if *slot == UNPROCESSED {
                    *slot = id;
                }
                return *slot;
            }
        }
        *self
            .modifiers
            .entry(u64::from(kind) << 32 | u64::from(target))
            .or_insert(id)
    }

    /// The canonical FUNC_PROTO with `slots` (canonical ids: the return
    /// type, then one per parameter) and the parameter names of `params`,
    /// filed under `key`; `id` becomes it when there is none
    /// (btf_equal_fnproto: return type, and each parameter's name and
    /// type; a prototype has no name of its own, and its vlen is its
    /// number of parameters).
    fn proto(&mut self, key: u64, id: u32, slots: &[u32], params: &[Param<'a>]) -> u32 {
        let (ret, param_types) = match slots.split_first() {
            Some((&ret, rest)) if rest.len() == params.len() => (ret, rest),
            // Not a prototype's slots (none of the pass's has these): no
            // entry can equal it, nor should it be filed as one.
            _ => return id,
        };
        let head = self.proto_heads.get(&key).copied().unwrap_or(u32::MAX);
        let mut at = head;
        while let Some(entry) = self.protos.get(at as usize) {
            let from = entry.params_at as usize;
            let same = entry.ret == ret
                && entry.param_count as usize == params.len()
                && self
                    .proto_params
                    .get(from..from + params.len())
                    .is_some_and(|filed| {
                        filed.iter().zip(params.iter().zip(param_types)).all(
                            |(filed, (param, &ty))| {
                                filed.ty.0 == ty && same_str(&filed.name, &param.name)
                            },
                        )
                    });
            if same {
                return entry.id;
            }
            at = entry.next;
        }
        self.proto_heads.insert(key, self.protos.len() as u32);
        self.protos.push(ProtoEntry {
            id,
            next: head,
            ret,
            params_at: self.proto_params.len() as u32,
            param_count: params.len() as u32,
        });
        self.proto_params
            .extend(params.iter().zip(param_types).map(|(param, &ty)| Param {
                name: param.name,
                ty: TypeId(ty),
            }));
        id
    }
}

/// What the graph pass did with one type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Settled (or not the pass's kind).
    Settled,
    /// Left for a pass in libbpf's candidate order (see
    /// [`Deduper::composite_pass`]).
    Undecided,
}

/// How many ids ahead of the one being deduplicated the reference pass
/// starts loading what it will read first (a type's variable-length part,
/// the map entries of its targets, which sit at random places): far enough
/// for the loads to land in time, near enough for them to stay in cache.
const PREFETCH_DISTANCE: u32 = 16;

/// Ids per block of [`Seeds`]: large enough that publishing a block costs
/// nothing next to computing it, small enough that the reference pass
/// finds the block of its id ready soon after the start.
const SEED_BLOCK: u32 = 1 << 12;

/// Ids looked through by one task of [`Deduper::unique_aggregate_names`].
const NAME_SCAN_CHUNK: u32 = 1 << 16;

/// Files aggregate `id` (0: several) under `name`: a name met again is
/// carried by several.
fn file_name<'a>(unique: &mut NameMap<'a>, name: &'a str, id: u32) {
    unique.entry(name).and_modify(|v| *v = 0).or_insert(id);
}

/// The [`keys::reference_seed`] of every split id, computed by one task in
/// blocks of [`SEED_BLOCK`] ids, in id order, while the reference pass
/// reads them. A block not yet published (the pass ran ahead, or follows a
/// reference forward) is simply computed again by the pass: both give the
/// same value, so the output does not depend on the timing.
struct Seeds {
    ids: Range<u32>,
    blocks: Vec<OnceLock<Box<[keys::Key]>>>,
    /// Set when the reference pass is over: what is left is not needed.
    stop: AtomicBool,
}

impl Seeds {
    fn new(ids: Range<u32>) -> Seeds {
        let count = ids.len().div_ceil(SEED_BLOCK as usize);
        Seeds {
            ids,
            blocks: (0..count).map(|_| OnceLock::new()).collect(),
            stop: AtomicBool::new(false),
        }
    }

    /// Computes and publishes the blocks in order, until all are done or
    /// the pass stops.
    fn fill(&self, types: view::Types<'_, '_>) {
        for (index, block) in self.blocks.iter().enumerate() {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            let first = self.ids.start + index as u32 * SEED_BLOCK;
            let last = first.saturating_add(SEED_BLOCK).min(self.ids.end);
            let seeds: Box<[keys::Key]> = (first..last)
                .map(|id| match types.get(id) {
                    Some(t) if kind::is_reference(view::kind_of(t)) => {
                        keys::reference_seed(Some(t))
                    }
                    // Not read: the pass settles these kinds earlier.
                    _ => keys::Key::default(),
                })
                .collect();
            // Only this task sets blocks.
            let _ = block.set(seeds);
        }
    }

    /// The seed of `id`, if its block is published.
    #[inline]
    fn get(&self, id: u32) -> Option<keys::Key> {
        let offset = id.checked_sub(self.ids.start)?;
        let block = self.blocks.get((offset / SEED_BLOCK) as usize)?.get()?;
        block.get((offset % SEED_BLOCK) as usize).copied()
    }
}

impl<'a> Deduper<'_, 'a> {
    /// Runs all passes.
    pub(super) fn run(&mut self) -> Result<(), Error> {
        let ids = self.start..self.types.id_count();
        self.primitive_pass(ids.clone());
        self.composite_pass(ids)?;
        self.later_passes()
    }

    /// The primitive pass over `ids`.
    pub(super) fn primitive_pass(&mut self, ids: Range<u32>) {
        for id in ids {
            self.dedup_primitive(id);
        }
    }

    /// The graph pass over `ids`. With a [`Deduper::provisional_order`] it
    /// may stop early, at the first id whose outcome depends on that
    /// order, which it returns: it is left, with those after it, for when
    /// the order is known.
    pub(super) fn composite_pass(&mut self, ids: Range<u32>) -> Result<Option<u32>, Error> {
        for id in ids {
            if self.dedup_composite(id)? == Outcome::Undecided {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    /// The passes after the graph pass, which look at every type: FWD
    /// resolution and reference types.
    ///
    /// The reference pass is sequential, but the part of each key that
    /// does not depend on canonical ids is computed ahead of it, in id
    /// order, by a second task ([`Seeds`]); with one thread, the pass
    /// computes every key itself. On Debian's vmlinux this takes the
    /// name loads and hashing off the tail: the pass's own thread CPU went
    /// from 87 to 78 ms (medians of 8 alternated runs).
    pub(super) fn later_passes(&mut self) -> Result<(), Error> {
        let end = self.types.id_count();
        self.resolve_fwds();
        let seeds = Seeds::new(self.start..end);
        let types = self.types;
        let (result, ()) = rayon::join(
            || {
                let result = self.reference_pass(end, &seeds);
                seeds.stop.store(true, Ordering::Relaxed);
                result
            },
            || seeds.fill(types),
        );
        result
    }

    /// The reference pass over the split ids below `end`.
    fn reference_pass(&mut self, end: u32, seeds: &Seeds) -> Result<(), Error> {
        let mut stack = Vec::new();
        // Without a base, whose candidates sit in the table, the modifier
        // kinds and FUNC_PROTOs have candidates of their own.
        let mut shortcuts = (self.start == 1).then(|| {
            self.clear_hypot();
            let mut pointers = std::mem::take(&mut self.hypot);
            pointers.resize(end as usize, UNPROCESSED);
            Shortcuts::new(pointers)
        });
        for id in self.start..end {
            let ahead = id.saturating_add(PREFETCH_DISTANCE);
            self.types.prefetch_tail(ahead);
            for &target in self.slots_of(ahead) {
                view::prefetch(self.map.as_ptr().wrapping_add(target as usize));
            }
            self.dedup_reference(id, seeds, &mut shortcuts, &mut stack)?;
        }
        Ok(())
    }

    /// Settles `id` to `new_id`, filing it as a candidate if canonical.
    fn settle(&mut self, id: u32, new_id: u32, key: u64) {
        self.map[id as usize] = new_id;
        if new_id == id {
            self.table.add(key, id);
        }
    }

    /// `btf_dedup_prim_type`: INT, FLOAT, FWD and enums, which reference
    /// nothing, match by plain equality. An enum forward declaration
    /// merges into a full enum of the same name (either width); a full
    /// enum adopts earlier canonical forward declarations.
    fn dedup_primitive(&mut self, id: u32) {
        let t = self.types.get(id);
        let (key, kind) = match t {
            Some(Type::Int(x)) => (keys::int_tag(t, x.size), kind::INT),
            Some(Type::Enum(_) | Type::Enum64(_)) => (keys::enumeration(t), kind::ENUM),
            Some(Type::Fwd(_) | Type::Float(_)) => (keys::common(t, size_or_type(t)), kind::FWD),
            _ => return,
        };
        let mut cands = std::mem::take(&mut self.cands);
        self.table.candidates(key, &mut cands);
        let mut new_id = id;
        for &cand_id in &cands {
            let cand = self.types.get(cand_id);
            match kind {
                kind::INT if equal_int_tag(t, cand) => {
                    new_id = cand_id;
                    break;
                }
                kind::ENUM if equal_enum(t, cand) => {
                    new_id = cand_id;
                    break;
                }
                kind::ENUM if compat_enum(t, cand) => {
                    if is_enum_fwd(t) {
                        new_id = cand_id;
                        break;
                    }
                    self.map[cand_id as usize] = id;
                }
                kind::FWD if equal_common(t, cand) => {
                    new_id = cand_id;
                    break;
                }
                _ => {}
            }
        }
        self.cands = cands;
        self.settle(id, new_id, key);
    }

    /// `btf_dedup_struct_type`: STRUCT, UNION and (libbpf 1.7) TYPEDEF
    /// find a canonical candidate whose whole type graph is
    /// equivalent.
    fn dedup_composite(&mut self, id: u32) -> Result<Outcome, Error> {
        // Already settled, possibly as part of an earlier verified graph.
        if is_mapped(self.map[id as usize]) {
            return Ok(Outcome::Settled);
        }
        let t = self.types.get(id);
        let is_typedef = match t {
            Some(Type::Struct(_) | Type::Union(_)) => false,
            Some(Type::Typedef(_)) if self.flavor == Flavor::Libbpf1_7 => true,
            _ => return Ok(Outcome::Settled),
        };
        let key = if is_typedef {
            keys::typedef(t)
        } else {
            keys::composite(t)
        };
        let mut cands = std::mem::take(&mut self.cands);
        self.table.candidates(key, &mut cands);
        if self.provisional_order && cands.len() > 1 {
            let outcome = self.dedup_composite_unordered(id, key, is_typedef, &cands);
            self.cands = cands;
            return Ok(outcome);
        }
        let mut new_id = id;
        let mut outcome = Ok(());
        // With one candidate, which mostly matches, hashing both sides
        // would only add to the walk.
        let several = cands.len() > 1;
        for &cand_id in &cands {
            if !self.shallow_match(t, cand_id, is_typedef)
                || (several && !self.may_be_equiv(id, cand_id))
            {
                continue;
            }
            self.clear_hypot();
            match self.is_equiv(id, cand_id) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
            self.merge_hypot();
            if self.hypot_adjust_canon {
                continue;
            }
            new_id = cand_id;
            break;
        }
        self.cands = cands;
        outcome?;
        self.settle(id, new_id, key);
        Ok(Outcome::Settled)
    }

    /// The cheap check before graph equivalence. It guards against picking
    /// a FWD through a hash collision, which could map FWD -> STRUCT -> FWD.
    fn shallow_match(&self, t: Option<&Type<'a>>, cand_id: u32, is_typedef: bool) -> bool {
        let cand = self.types.get(cand_id);
        if is_typedef {
            equal_typedef(t, cand)
        } else {
            shallow_equal_struct(t, cand)
        }
    }

    /// [`Deduper::dedup_composite`] for several candidates in an order
    /// that may not be libbpf's: settles `id` only if the order cannot
    /// matter, which is when at most one candidate is equivalent and no
    /// check touched the FWDs that a rejected candidate would still
    /// resolve. Anything else, errors included, is left undecided for the
    /// ordered pass to settle (or report) as libbpf would.
    fn dedup_composite_unordered(
        &mut self,
        id: u32,
        key: u64,
        is_typedef: bool,
        cands: &[u32],
    ) -> Outcome {
        let t = self.types.get(id);
        let mut accepted = None;
        for &cand_id in cands {
            if !self.shallow_match(t, cand_id, is_typedef) || !self.may_be_equiv(id, cand_id) {
                continue;
            }
            self.clear_hypot();
            match self.is_equiv(id, cand_id) {
                Ok(false) => continue,
                Ok(true) if !self.hypot_adjust_canon && accepted.is_none() => {
                    accepted = Some(cand_id)
                }
                Ok(true) | Err(_) => return Outcome::Undecided,
            }
        }
        let new_id = match accepted {
            Some(cand_id) => {
                // The hypothetical map of the accepted check, again.
                self.clear_hypot();
                if !matches!(self.is_equiv(id, cand_id), Ok(true)) {
                    return Outcome::Undecided;
                }
                self.merge_hypot();
                cand_id
            }
            None => id,
        };
        self.settle(id, new_id, key);
        Outcome::Settled
    }

    /// `btf_dedup_resolve_fwds`: a FWD still unresolved after the graph
    /// pass is pointed at the canonical STRUCT/UNION of its name and kind,
    /// if exactly one canonical STRUCT/UNION (of either kind, base
    /// included) carries that name.
    fn resolve_fwds(&mut self) {
        let end = self.types.id_count();
        // A prepared base brings its own names (all its aggregates are
        // canonical); only the split's are collected here.
        let first = if self.base_names.is_some() {
            self.start
        } else {
            1
        };
        let unique = self.unique_aggregate_names(first..end);
        for id in self.start..end {
            // The dense kinds pick out the few FWDs without reading every
            // type of the table.
            if self.kind(id) != kind::FWD || self.map[id as usize] != id {
                continue;
            }
            let Some(Type::Fwd(fwd)) = self.types.get(id) else {
                continue;
            };
            let in_base = self.base_names.and_then(|names| names.get(fwd.name));
            let cand_id = match (unique.get(fwd.name), in_base) {
                (Some(_), Some(_)) => 0,
                (Some(&only), None) | (None, Some(&only)) => only,
                (None, None) => continue,
            };
            if cand_id == 0 {
                continue;
            }
            let wanted = if fwd.union { kind::UNION } else { kind::STRUCT };
            if self.kind(cand_id) == wanted {
                self.map[id as usize] = cand_id;
            }
        }
    }

    /// The canonical STRUCT/UNIONs among `ids`, by name (0 when a name is
    /// carried by several). Ranges of ids are looked through side by side
    /// (on Debian 6.1's vmlinux, 850,000 types for 7,500 names, on the
    /// sequential tail), and their names then merged.
    pub(super) fn unique_aggregate_names(&self, ids: Range<u32>) -> NameMap<'a> {
        let pieces = ids.len().div_ceil(NAME_SCAN_CHUNK as usize) as u32;
        let parts: Vec<NameMap<'a>> = (0..pieces)
            .into_par_iter()
            .map(|piece| {
                let from = ids.start + piece * NAME_SCAN_CHUNK;
                let mut unique = NameMap::default();
                for id in from..ids.end.min(from.saturating_add(NAME_SCAN_CHUNK)) {
                    if matches!(self.kind(id), kind::STRUCT | kind::UNION)
                        && self.map[id as usize] == id
                    {
                        file_name(&mut unique, view::name(self.types.get(id)), id);
                    }
                }
                unique
            })
            .collect();
        let mut parts = parts.into_iter();
        let mut unique = parts.next().unwrap_or_default();
        for (name, id) in parts.flatten() {
            file_name(&mut unique, name, id);
        }
        unique
    }

    /// `btf_dedup_ref_type`: resolves the referenced ids to canonical ones
    /// first (rewriting the slots, as libbpf rewrites the record), after
    /// which plain equality finds the canonical representative. Returns
    /// the canonical id of `id`.
    ///
    /// libbpf recurses; this walks the chain with a stack of its own, so
    /// that a long but legal chain (a 1,001-level pointer) is no "loop":
    /// only a type met again while it is being resolved is.
    /// `stack` is scratch space, empty on entry and on return.
    fn dedup_reference(
        &mut self,
        id: u32,
        seeds: &Seeds,
        shortcuts: &mut Option<Shortcuts<'a>>,
        stack: &mut Vec<(u32, usize)>,
    ) -> Result<u32, Error> {
        if let Some(canonical) = self.enter_reference(id)? {
            return Ok(canonical);
        }
        // (type, its next slot to resolve), innermost last.
        stack.clear();
        stack.push((id, self.slot_start[id as usize] as usize));
        while let Some(&mut (current, ref mut slot)) = stack.last_mut() {
            if *slot < self.slot_start[current as usize + 1] as usize {
                let target = self.slots[*slot];
                match self.enter_reference(target)? {
                    Some(canonical) => {
                        self.slots[*slot] = canonical;
                        *slot += 1;
                    }
                    None => stack.push((target, self.slot_start[target as usize] as usize)),
                }
                continue;
            }
            stack.pop();
            let canonical = self.settle_reference(current, seeds, shortcuts);
            match stack.last_mut() {
                Some((_, slot)) => {
                    self.slots[*slot] = canonical;
                    *slot += 1;
                }
                None => return Ok(canonical),
            }
        }
        Err(Error::ReferenceLoop {
            type_id: TypeId(id),
        })
    }

    /// The first step of [`Self::dedup_reference`] on `id`: its canonical
    /// id when it has one already; `None` when it is now being resolved.
    fn enter_reference(&mut self, id: u32) -> Result<Option<u32>, Error> {
        let state = self.map[id as usize];
        if state == IN_PROGRESS {
            return Err(Error::ReferenceLoop {
                type_id: TypeId(id),
            });
        }
        if is_mapped(state) {
            return Ok(Some(self.resolve(id)));
        }
        let kind = self.kind(id);
        if !kind::is_reference(kind) {
            return Err(Error::UnexpectedKind {
                type_id: TypeId(id),
                kind,
            });
        }
        self.map[id as usize] = IN_PROGRESS;
        Ok(None)
    }

    /// The last step of [`Self::dedup_reference`] on `id`, whose slots
    /// hold canonical ids: its canonical id, found by equality.
    fn settle_reference(
        &mut self,
        id: u32,
        seeds: &Seeds,
        shortcuts: &mut Option<Shortcuts<'a>>,
    ) -> u32 {
        if let Some(shortcuts) = shortcuts.as_mut() {
            if let Some(modifier) = Shortcuts::modifier(self.kind(id), self.slots_of(id)) {
                let canonical = shortcuts.canonical_modifier(modifier, id);
                self.map[id as usize] = canonical;
                return canonical;
            }
        }
        let t = self.types.get(id);
        let seed = seeds.get(id).unwrap_or_else(|| keys::reference_seed(t));
        let key = keys::reference(seed, t, self.slots_of(id));
        if let (Some(shortcuts), Some(Type::FuncProto(proto))) = (shortcuts.as_mut(), t) {
            let canonical = shortcuts.proto(key, id, self.slots_of(id), &proto.params);
            self.map[id as usize] = canonical;
            return canonical;
        }
        let mut cands = std::mem::take(&mut self.cands);
        self.table.candidates(key, &mut cands);
        let new_id = cands
            .iter()
            .copied()
            .find(|&c| self.equal_resolved(id, c))
            .unwrap_or(id);
        self.cands = cands;
        self.settle(id, new_id, key);
        new_id
    }

    /// Exact equality of two reference types whose slots hold canonical
    /// ids (`btf_equal_common`, `_int_tag`, `_array`, `_fnproto`).
    fn equal_resolved(&self, a_id: u32, b_id: u32) -> bool {
        let a = self.types.get(a_id);
        let b = self.types.get(b_id);
        if info(a) != info(b) || !same_str(view::name(a), view::name(b)) {
            return false;
        }
        if self.slots_of(a_id) != self.slots_of(b_id) {
            return false;
        }
        match (a, b) {
            (Some(Type::DeclTag(x)), Some(Type::DeclTag(y))) => x.component_idx == y.component_idx,
            (Some(Type::Array(x)), Some(Type::Array(y))) => x.nelems == y.nelems,
            (Some(Type::FuncProto(x)), Some(Type::FuncProto(y))) => x
                .params
                .iter()
                .zip(&y.params)
                .all(|(p, q)| same_str(&p.name, &q.name)),
            (Some(_), Some(_)) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::Name;
    use crate::test_types::int;

    fn params(names: &[&'static str], types: &[u32]) -> Vec<Param<'static>> {
        names
            .iter()
            .zip(types)
            .map(|(&name, &ty)| Param {
                name: Name::new(name).expect("short name"),
                ty: TypeId(ty),
            })
            .collect()
    }

    /// A name carried by aggregates in two pieces of the scan is carried
    /// by several; one carried once, in any piece, is unique; a STRUCT and
    /// a UNION of one name are several too.
    #[test]
    fn aggregate_names_are_unique_across_the_scan_pieces() {
        use crate::dedup::view::Types;
        use crate::types::{Composite, Type};
        let aggregate = |name: &'static str| Composite {
            name,
            size: 4,
            members: crate::test_types::members(&[("m", 1)]),
            kind_flag: false,
        };
        let far = 3 * NAME_SCAN_CHUNK as usize;
        let mut types = vec![int("int", 4, 0)];
        types.resize(far + 10, Type::Ptr(TypeId(1)));
        types[4] = Type::Struct(aggregate("twice"));
        types[far] = Type::Struct(aggregate("twice"));
        types[far + 1] = Type::Struct(aggregate("once"));
        types[9] = Type::Struct(aggregate("both"));
        types[far + 2] = Type::Union(aggregate("both"));
        types[far + 3] = Type::Union(aggregate("alone"));
        let d = Deduper::new(Types::new(&types, &[]), Flavor::Libbpf1_7).expect("valid");
        let names = d.unique_aggregate_names(1..d.start);
        assert_eq!(names.get("twice"), Some(&0));
        assert_eq!(names.get("both"), Some(&0));
        assert_eq!(names.get("once"), Some(&(far as u32 + 2)));
        assert_eq!(names.get("alone"), Some(&(far as u32 + 4)));
        assert_eq!(names.len(), 4);
    }

    /// Prototypes whose keys collide are told apart by their slots, their
    /// parameter names and their lengths; an equal one finds the first.
    /// (Keys hash all of these, so only a collision gets this far: the
    /// dedup tests cannot reach it.)
    #[test]
    fn prototype_shortcut_compares_what_shares_a_key() {
        let mut shortcuts = Shortcuts::default();
        let key = 7;
        let one = params(&["a"], &[1]);
        assert_eq!(shortcuts.proto(key, 10, &[0, 1], &one), 10);
        let renamed = params(&["b"], &[1]);
        assert_eq!(shortcuts.proto(key, 11, &[0, 1], &renamed), 11);
        let retyped = params(&["a"], &[2]);
        assert_eq!(shortcuts.proto(key, 12, &[0, 2], &retyped), 12);
        let returning = params(&["a"], &[1]);
        assert_eq!(shortcuts.proto(key, 13, &[3, 1], &returning), 13);
        let longer = params(&["a", "a"], &[1, 1]);
        assert_eq!(shortcuts.proto(key, 14, &[0, 1, 1], &longer), 14);
        assert_eq!(shortcuts.proto(key, 15, &[0], &[]), 15);
        // Equal ones, whatever came between.
        assert_eq!(shortcuts.proto(key, 20, &[0, 1], &one), 10);
        assert_eq!(shortcuts.proto(key, 21, &[0, 1, 1], &longer), 14);
        assert_eq!(shortcuts.proto(key, 22, &[0], &[]), 15);
        // Another key holds nothing of these.
        assert_eq!(shortcuts.proto(8, 23, &[0, 1], &one), 23);
    }

    /// The modifier kinds are keyed by kind and target: the first type of
    /// a pair is the canonical one of any later; other kinds, or a slot
    /// count they never have, get no shortcut. A PTR whose target is past
    /// the pointer table (no table of the pass has one) is kept by the
    /// others' map.
    #[test]
    fn modifier_shortcut_keys_kind_and_target() {
        let mut shortcuts = Shortcuts::new(vec![UNPROCESSED; 8]);
        let mut settle = |kind, slots: &[u32], id| {
            Shortcuts::modifier(kind, slots)
                .map(|modifier| shortcuts.canonical_modifier(modifier, id))
        };
        assert_eq!(settle(kind::PTR, &[5], 1), Some(1));
        assert_eq!(settle(kind::CONST, &[5], 2), Some(2));
        assert_eq!(settle(kind::VOLATILE, &[5], 3), Some(3));
        assert_eq!(settle(kind::RESTRICT, &[5], 4), Some(4));
        assert_eq!(settle(kind::PTR, &[6], 5), Some(5));
        assert_eq!(settle(kind::PTR, &[0], 6), Some(6));
        assert_eq!(settle(kind::PTR, &[9], 7), Some(7));
        for (kind, canonical) in [
            (kind::PTR, 1),
            (kind::CONST, 2),
            (kind::VOLATILE, 3),
            (kind::RESTRICT, 4),
        ] {
            assert_eq!(settle(kind, &[5], 8), Some(canonical));
        }
        assert_eq!(settle(kind::PTR, &[0], 8), Some(6));
        assert_eq!(settle(kind::PTR, &[9], 8), Some(7));
        assert_eq!(settle(kind::CONST, &[9], 8), Some(8));
        assert_eq!(settle(kind::TYPEDEF, &[5], 8), None);
        assert_eq!(settle(kind::FUNC_PROTO, &[5], 8), None);
        assert_eq!(settle(kind::PTR, &[5, 6], 8), None);
    }

    /// Filled seeds are those the pass would compute itself; ids outside
    /// the split, or of a block not yet published, have none.
    #[test]
    fn seeds_are_the_keys_the_pass_would_compute() {
        let split: Vec<Type<'static>> = (0..SEED_BLOCK + 3)
            .map(|i| {
                if i % 2 == 0 {
                    int("int", 4, 0)
                } else {
                    Type::Ptr(TypeId(1))
                }
            })
            .collect();
        let types = view::Types::new(&[], &split);
        let seeds = Seeds::new(1..types.id_count());
        assert!(seeds.get(2).is_none());
        seeds.fill(types);
        assert!(seeds.get(0).is_none());
        assert!(seeds.get(types.id_count()).is_none());
        for id in [2, SEED_BLOCK, SEED_BLOCK + 2] {
            let expected = keys::reference_seed(types.get(id)).finish();
            assert_eq!(
                seeds.get(id).map(keys::Key::finish),
                Some(expected),
                "id {id}"
            );
        }
    }

    /// A pass that is over stops the filling: nothing more is published.
    #[test]
    fn a_stopped_pass_gets_no_more_seeds() {
        let split = vec![Type::Ptr(TypeId(0))];
        let types = view::Types::new(&[], &split);
        let seeds = Seeds::new(1..types.id_count());
        seeds.stop.store(true, Ordering::Relaxed);
        seeds.fill(types);
        assert!(seeds.get(1).is_none());
    }
}
