//! Collapsing exact duplicates while CUs are added, before libbpf's dedup.
//!
//! Every CU repeats the types of the headers it includes, so a kernel's
//! CUs lower to about 36 times more types than survive dedup. Most of
//! those copies are exact: the same fields, referring to copies that are
//! exact too. [`Collapser`] keeps one copy of each such type as CUs arrive
//! in `.debug_info` order, so the pre-dedup table holds a fraction of the
//! types, and the CUs' own tables are freed one at a time.
//!
//! Why this leaves libbpf's result alone: a type is only ever replaced by
//! an earlier one identical in every field, whose references are in turn
//! identical (a bisimulation of the two reference graphs). libbpf maps
//! such a copy where it maps the original, so the surviving type graph,
//! and the order of first occurrences that decides canonical ids, are what
//! the full table would give. Whatever is not provably identical (a CU
//! that sees a struct only declared where another sees it defined) is
//! kept, and left to the dedup that follows.
//!
//! How a CU is matched: its reference graph is split into strongly
//! connected components (module `scc`), taken in dependency order.
//! A type outside any cycle, whose targets are already matched, is looked
//! up by its fields and its targets' ids. A cycle (a struct and the
//! pointers back to it) is looked up by a fingerprint of its members'
//! fields and then confirmed by walking both graphs in step. A type that
//! refers to anything new is new.

#[cfg(all(test, feature = "dwarf"))]
mod real_files;
mod scc;
mod shape;

use self::scc::{components_except, Components, Graph};
pub use self::shape::MergedNames;
use self::shape::{own_hash_and_refs, same_shape, shape_key};
use super::common::Error;
use super::table::Key;
use crate::types::{Btf, Type, TypeId};

/// No entry (end of a chain, a node not matched yet).
const NONE: u32 = u32::MAX;
/// A CU type that has no copy in the table yet.
const NEW: u32 = u32::MAX - 1;
/// What a reference inside the component being fingerprinted contributes
/// (mixed with the target's own key): ids there mean nothing across CUs.
const INSIDE: u64 = 0x9e37_79b9_7f4a_7c15;

/// Chains of entries under one key, oldest first: the chains' heads in an
/// open-addressing table, whose one slot per key is all a lookup reads
/// before the first entry (a general hash map reads its control bytes and
/// then the bucket: two cache misses on a table this size, which most
/// lookups of a CU's types are), and the links between entries in `next`.
///
/// A chain is filed under the high half of its key (which also picks the
/// slot), so that a slot is 8 bytes: on Debian's vmlinux the singles'
/// table grows to 2^21 slots, 32 MB with whole keys and the chain's tail
/// beside the head, the size of the whole L3 cache; half that now. Keys
/// that share their high half (a few dozen pairs there) share a chain,
/// which costs a comparison and changes no outcome: callers accept an
/// entry only after comparing it in full, and a chain keeps the order of
/// each key's entries.
///
/// Chains link the positions at which entries were filed, not the entries
/// themselves: the singles' entries are table indices, and links indexed
/// by those would take 4 bytes for every type in the table (3 MB on
/// Debian 6.1's vmlinux) where 1 in 16 of them is filed.
#[derive(Debug, Default)]
struct Chains {
    /// A power of two many slots (or none yet), at most three quarters
    /// used; a free slot's `head` is `NONE`. Heads are positions.
    slots: Vec<ChainHead>,
    /// The last position of the chain in each slot, read only when filing.
    tails: Vec<u32>,
    used: usize,
    /// The entries in the order they were filed.
    entries: Vec<u32>,
    /// The position after each position in its chain.
    next: Vec<u32>,
}

/// Where the chain of the keys whose high half is `key` starts.
#[derive(Clone, Copy, Debug)]
struct ChainHead {
    key: u32,
    head: u32,
}

const FREE: ChainHead = ChainHead { key: 0, head: NONE };

impl Chains {
    /// What a chain is filed under: the high half of `key`. Keys end in a
    /// multiplication: their high bits are the mixed ones.
    fn chain_key(key: u64) -> u32 {
        (key >> 32) as u32
    }

    /// The slot holding chain `key`, or the free slot where it would go.
    fn slot_of(&self, key: u32) -> usize {
        let mask = self.slots.len().wrapping_sub(1);
        let mut at = key as usize & mask;
        // Never all used, so the probe ends.
        while let Some(ends) = self.slots.get(at) {
            if ends.head == NONE || ends.key == key {
                break;
            }
            at = (at + 1) & mask;
        }
        at
    }

    fn push(&mut self, key: u64, entry: u32) {
        let key = Self::chain_key(key);
        // Fewer entries than types, and types have u32 ids.
        let position = self.entries.len() as u32;
        self.entries.push(entry);
        self.next.push(NONE);
        if (self.used + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let at = self.slot_of(key);
        let (Some(ends), Some(tail)) = (self.slots.get_mut(at), self.tails.get_mut(at)) else {
            return;
        };
        if ends.head == NONE {
            *ends = ChainHead {
                key,
                head: position,
            };
            self.used += 1;
        } else if let Some(link) = self.next.get_mut(*tail as usize) {
            *link = position;
        }
        *tail = position;
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1 << 10);
        let old = std::mem::replace(&mut self.slots, vec![FREE; size]);
        let old_tails = std::mem::replace(&mut self.tails, vec![NONE; size]);
        for (ends, tail) in old
            .into_iter()
            .zip(old_tails)
            .filter(|(ends, _)| ends.head != NONE)
        {
            let at = self.slot_of(ends.key);
            if let (Some(slot), Some(slot_tail)) = (self.slots.get_mut(at), self.tails.get_mut(at))
            {
                *slot = ends;
                *slot_tail = tail;
            }
        }
    }

    /// The entries filed under `key` (and under keys sharing its high
    /// half), oldest first. The link after an entry is read only when the
    /// caller asks for the next one: most chains hold one entry, which
    /// most callers accept, and `next` is far from anything else read.
    fn iter(&self, key: u64) -> impl Iterator<Item = u32> + '_ {
        let mut at = match self.slots.get(self.slot_of(Self::chain_key(key))) {
            Some(ends) => ends.head,
            None => NONE,
        };
        let mut started = false;
        std::iter::from_fn(move || {
            if started && at != NONE {
                at = self.next.get(at as usize).copied().unwrap_or(NONE);
            }
            started = true;
            self.entries.get(at as usize).copied()
        })
    }
}

/// A cycle kept in the table: its whole fingerprint (its chain holds the
/// cycles of every fingerprint with the same high half), its size, its
/// smallest member key, and where the members with that key are in
/// `cycle_starts`.
///
/// Only those members are kept because only they can be where a copy's
/// walk starts: a lookup starts from the copy's member with the smallest
/// key, and a copy has the same member keys as the cycle (the fingerprint,
/// which it must share, is a hash of that multiset). Keeping every
/// member's id and key instead took 16 bytes for most of the table's
/// types (11.5 MB on Debian 6.1's vmlinux): nearly all of them are in the
/// few big cycles, one per CU, around `struct task_struct`.
#[derive(Debug)]
struct Cycle {
    fingerprint: u64,
    len: u32,
    min_key: u64,
    starts: std::ops::Range<u32>,
}

/// The pre-dedup table, built one CU at a time (see the module docs).
#[derive(Debug)]
pub struct Collapser<'a> {
    btf: Btf<'a>,
    /// Table types outside cycles, by [`shape_key`] over their targets' ids
    /// (chained by table index).
    singles: Chains,
    /// Cycles by fingerprint (chained by cycle index).
    cycles: Chains,
    cycle_list: Vec<Cycle>,
    /// The table ids of the cycles' members a lookup may start from.
    cycle_starts: Vec<u32>,
    /// Kept from CU to CU (see [`Scratch`]).
    scratch: Scratch,
}

/// One CU's types with what matching them needs that does not depend on
/// the table: the components of their reference graph (its cycles, in
/// dependency order) and the types' own hashes. Preparing needs no table,
/// so CUs are prepared in parallel and then added one at a time.
#[derive(Debug)]
pub struct PreparedCu<'a> {
    types: Vec<Type<'a>>,
    comps: Components,
    own: Vec<u64>,
    /// Types whose table id is already known (index, id): their entries in
    /// `types` only stand in for them.
    known: Vec<(u32, u32)>,
}

impl<'a> PreparedCu<'a> {
    /// Prepares a CU's types (CU-local ids `1..=types.len()`), whose names
    /// are mostly in `names`.
    pub fn new(types: Vec<Type<'a>>, names: MergedNames) -> Result<Self, Error> {
        Self::with_known(types, names, Vec::new())
    }

    /// [`PreparedCu::new`] of a CU some of whose types are known to be
    /// table types already (index in `types`, table id): their entries in
    /// `types` are not read, and must refer to nothing.
    pub fn with_known(
        types: Vec<Type<'a>>,
        names: MergedNames,
        known: Vec<(u32, u32)>,
    ) -> Result<Self, Error> {
        let mut own = Vec::with_capacity(types.len());
        let graph = Graph::new(&types, |t, edges| {
            own.push(own_hash_and_refs(t, names, |id| edges.add(id)))
        })?;
        // Known types stand in with no references: they need no matching.
        let settled: Vec<u32> = known.iter().map(|&(index, _)| index).collect();
        let comps = components_except(&graph, &settled);
        Ok(PreparedCu {
            types,
            comps,
            own,
            known,
        })
    }

    /// Number of types.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether the CU has no types.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// Number of types known to be table types already.
    pub fn known_count(&self) -> usize {
        self.known.len()
    }
}

/// What is left of a CU once it was added: its types that had a copy in
/// the table (most of them), and what matching them needed. Dropping it
/// frees them. It is handed back rather than dropped so that the caller
/// can free it on the thread that allocated it: glibc's malloc keeps an
/// arena per thread, and freeing into another thread's arena takes that
/// arena's lock, which the two threads then contend for (on Debian's
/// vmlinux, 2-3% of the CPU time went to that lock's futex calls).
#[derive(Debug)]
pub struct Leftovers<'a> {
    _types: Vec<Type<'a>>,
    _comps: Components,
    _own: Vec<u64>,
    _known: Vec<(u32, u32)>,
}

/// Where one CU's types went: the table id of each CU-local id.
#[derive(Debug)]
pub struct CuIds {
    ids: Vec<u32>,
    /// The first id handed to a type new to the table.
    first_new: u32,
}

impl CuIds {
    /// The table id of CU-local `id`; `void` stays `void`, ids past the
    /// CU give `None`.
    pub fn get(&self, id: TypeId) -> Option<TypeId> {
        if id == TypeId::VOID {
            return Some(TypeId::VOID);
        }
        self.ids.get(id.0 as usize - 1).map(|&t| TypeId(t))
    }

    /// Whether table id `id` went to one of the CU's types that were new
    /// to the table (rather than to a type already there).
    pub fn is_new(&self, id: TypeId) -> bool {
        id.0 >= self.first_new
    }
}

impl<'a> Collapser<'a> {
    /// An empty table; with a base, ids continue after its types.
    pub fn new(base_type_count: u32, base_str_len: u32) -> Self {
        Collapser {
            btf: Btf {
                types: Vec::new(),
                base_type_count,
                base_str_len,
            },
            singles: Chains::default(),
            cycles: Chains::default(),
            cycle_list: Vec::new(),
            cycle_starts: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// The table so far.
    pub fn btf(&self) -> &Btf<'a> {
        &self.btf
    }

    /// The table, to add more types to (FUNCs, VARs) or to deduplicate.
    pub fn into_btf(self) -> Btf<'a> {
        self.btf
    }

    /// Adds one CU's types, keeping only those without an identical copy
    /// in the table; returns where each went, and the rest of the CU.
    pub fn add(&mut self, prepared: PreparedCu<'a>) -> Result<(CuIds, Leftovers<'a>), Error> {
        let PreparedCu {
            types,
            comps,
            own,
            known,
        } = prepared;
        let mut ids = vec![NONE; types.len()];
        // The table's ids: `first..first_new`; the CU's new types take the
        // ids from `first_new` on (matching adds nothing to the table).
        let first = self.btf.first_id().0;
        let first_new = first + self.btf.types.len() as u32;
        for &(index, id) in &known {
            // Only a type already in the table can be known.
            if id < first || id >= first_new {
                return Err(Error::Unresolved {
                    type_id: TypeId(id),
                });
            }
            if let Some(slot) = ids.get_mut(index as usize) {
                *slot = id;
            }
        }
        let mut cu = CuMatch {
            types: &types,
            comps: &comps,
            own: &own,
            ids,
        };
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.fit(types.len());
        for c in 0..comps.len() {
            self.match_component(&mut cu, c, &mut scratch);
        }

        // New types take the next ids in CU order, so that the table lists
        // types in the order of their first occurrence.
        let mut next = first_new;
        let mut fresh = Vec::new();
        for (index, id) in cu.ids.iter_mut().enumerate() {
            if *id == NEW {
                *id = next;
                // On this error the scratch is not given back: the next
                // CU (if any) starts from a fresh one.
                next = next.checked_add(1).ok_or(Error::TooManyTypes {
                    count: u64::from(next) + 1,
                })?;
                fresh.push(index as u32);
            }
        }
        self.file_new_types(&cu, &fresh, &mut scratch);
        scratch.forget(&fresh);
        self.scratch = scratch;
        let ids = CuIds {
            ids: cu.ids,
            first_new,
        };
        // The new types are taken out of the CU's table, which is then
        // left with the rest (most of it) in place: moving every type out
        // one by one only to drop it cost more than dropping it.
        let mut types = types;
        self.btf.types.reserve(fresh.len());
        for &index in &fresh {
            let Some(slot) = types.get_mut(index as usize) else {
                continue;
            };
            let mut t = std::mem::replace(slot, Type::Ptr(TypeId::VOID));
            t.remap_refs(|id| ids.get(id).ok_or(Error::Unresolved { type_id: id }))?;
            self.btf.types.push(t);
        }
        Ok((
            ids,
            Leftovers {
                _types: types,
                _comps: comps,
                _own: own,
                _known: known,
            },
        ))
    }

    fn match_component(&self, cu: &mut CuMatch<'_, 'a>, c: usize, scratch: &mut Scratch) {
        let members = cu.comps.members(c);
        if let (false, &[node]) = (cu.comps.is_cycle(c), members) {
            self.match_single(cu, node, scratch);
            return;
        }
        let refers_to_new = cu.member_keys(c, scratch);
        let found = if refers_to_new {
            None
        } else {
            self.find_cycle(cu, c, scratch)
        };
        match found {
            Some(()) => {
                for &(node, id) in &scratch.pairs {
                    if let Some(slot) = cu.ids.get_mut(node as usize) {
                        *slot = id;
                    }
                }
            }
            None => {
                for &m in members {
                    if let Some(slot) = cu.ids.get_mut(m as usize) {
                        *slot = NEW;
                    }
                }
            }
        }
        scratch.pairs.clear();
    }

    /// Matches a type outside any cycle, whose targets are all matched or
    /// new: new too when one of them is, else new when the table has no
    /// copy. Whether a target is new is seen while computing the key,
    /// which reads every target's table id anyway.
    fn match_single(&self, cu: &mut CuMatch<'_, 'a>, node: u32, scratch: &mut Scratch) {
        // A known type is matched already.
        if cu.ids.get(node as usize) != Some(&NONE) {
            return;
        }
        let Some(t) = cu.types.get(node as usize) else {
            return;
        };
        let mut refers_to_new = false;
        let own = cu.own.get(node as usize).copied().unwrap_or(0);
        let key = shape_key(own, t, |id| {
            let table_id = cu.id_of(id);
            refers_to_new |= table_id == NEW;
            u64::from(table_id)
        });
        let found = if refers_to_new {
            None
        } else {
            self.find_single(cu, node, key)
        };
        let id = match found {
            Some(id) => id,
            None => {
                if let (false, Some(slot)) =
                    (refers_to_new, scratch.new_keys.get_mut(node as usize))
                {
                    *slot = key;
                }
                NEW
            }
        };
        if let Some(slot) = cu.ids.get_mut(node as usize) {
            *slot = id;
        }
    }

    /// A table type identical to `node` (whose [`CuMatch::key`] is `key`),
    /// whose targets are all matched.
    fn find_single(&self, cu: &CuMatch<'_, 'a>, node: u32, key: u64) -> Option<u32> {
        let t = cu.types.get(node as usize)?;
        let first = self.btf.first_id().0;
        self.singles
            .iter(key)
            .map(|index| first + index)
            .find(|&id| {
                self.btf
                    .get(TypeId(id))
                    .is_some_and(|candidate| same_shape(t, candidate, |a, b| cu.id_of(a) == b.0))
            })
    }

    /// A table cycle identical to component `c`, whose member keys are in
    /// `scratch.keys`; on success its pairs are in `scratch.pairs`, on
    /// failure its keys in `scratch.new_keys` and `scratch.fingerprints`.
    fn find_cycle(&self, cu: &CuMatch<'_, 'a>, c: usize, scratch: &mut Scratch) -> Option<()> {
        let members = cu.comps.members(c);
        let fingerprint = fingerprint(&scratch.keys);
        // The walk starts from the member with the smallest key, ties to
        // the first: any fixed choice finds the same start in a copy.
        let (start, start_key) = members
            .iter()
            .copied()
            .zip(scratch.keys.iter().copied())
            .min_by_key(|&(node, key)| (key, node))?;
        for cycle in self.cycles.iter(fingerprint) {
            let Some(cycle) = self.cycle_list.get(cycle as usize) else {
                continue;
            };
            if cycle.fingerprint != fingerprint
                || cycle.len as usize != members.len()
                || cycle.min_key != start_key
            {
                continue;
            }
            let starts = cycle.starts.start as usize..cycle.starts.end as usize;
            for &id in self.cycle_starts.get(starts).unwrap_or(&[]) {
                if self.pair_up(cu, c, start, id, scratch) {
                    return Some(());
                }
            }
        }
        for (&m, &key) in members.iter().zip(&scratch.keys) {
            if let Some(slot) = scratch.new_keys.get_mut(m as usize) {
                *slot = key;
            }
        }
        if let Some(slot) = members
            .first()
            .and_then(|&m| scratch.fingerprints.get_mut(m as usize))
        {
            *slot = fingerprint;
        }
        None
    }

    /// Walks component `c` from `node` and the table from `id` in step,
    /// pairing types; true when every pair is identical and the whole
    /// component got paired.
    fn pair_up(
        &self,
        cu: &CuMatch<'_, 'a>,
        c: usize,
        node: u32,
        id: u32,
        scratch: &mut Scratch,
    ) -> bool {
        let component = c as u32;
        scratch.pairs.clear();
        let mut stack = std::mem::take(&mut scratch.stack);
        stack.clear();
        stack.push((node, id));
        let mut ok = true;
        while let Some((a, b)) = stack.pop() {
            if cu.comps.of.get(a as usize) != Some(&component) {
                if cu.ids.get(a as usize) != Some(&b) {
                    ok = false;
                    break;
                }
                continue;
            }
            match scratch.tentative.get(a as usize) {
                Some(&NONE) => {}
                Some(&paired) if paired == b => continue,
                _ => {
                    ok = false;
                    break;
                }
            }
            if let Some(slot) = scratch.tentative.get_mut(a as usize) {
                *slot = b;
            }
            scratch.touched.push(a);
            let (Some(t), Some(candidate)) = (cu.types.get(a as usize), self.btf.get(TypeId(b)))
            else {
                ok = false;
                break;
            };
            let same = same_shape(t, candidate, |x, y| {
                if x == TypeId::VOID || y == TypeId::VOID {
                    return x == y;
                }
                stack.push((x.0 - 1, y.0));
                true
            });
            if !same {
                ok = false;
                break;
            }
        }
        ok &= scratch.touched.len() == cu.comps.members(c).len();
        for &a in &scratch.touched {
            if let Some(slot) = scratch.tentative.get_mut(a as usize) {
                if ok {
                    scratch.pairs.push((a, *slot));
                }
                *slot = NONE;
            }
        }
        scratch.touched.clear();
        scratch.stack = stack;
        ok
    }

    /// Files the CU's new types (with their table ids in `cu.ids`) so that
    /// later CUs find them. Keys computed while looking a type up are
    /// reused (0 in `scratch.new_keys` stands for not computed: a type
    /// that referred to another new one was never looked up, and its key
    /// depends on the ids just handed out).
    fn file_new_types(&mut self, cu: &CuMatch<'_, 'a>, fresh: &[u32], scratch: &mut Scratch) {
        let first = self.btf.first_id().0;
        for &node in fresh {
            let Some(&c) = cu.comps.of.get(node as usize) else {
                continue;
            };
            let members = cu.comps.members(c as usize);
            if !cu.comps.is_cycle(c as usize) {
                if let (Some(t), Some(&id)) =
                    (cu.types.get(node as usize), cu.ids.get(node as usize))
                {
                    let key = match scratch.new_keys.get(node as usize) {
                        Some(&key) if key != 0 => key,
                        _ => cu.key(node, t),
                    };
                    self.singles.push(key, id - first);
                }
                continue;
            }
            // A cycle is new as a whole; file it once, at its first member.
            if members.first() != Some(&node) {
                continue;
            }
            let fingerprint = match scratch.fingerprints.get(node as usize) {
                Some(&known) if known != 0 => {
                    scratch.keys.clear();
                    let new_keys = &scratch.new_keys;
                    scratch.keys.extend(
                        members
                            .iter()
                            .map(|&m| new_keys.get(m as usize).copied().unwrap_or(0)),
                    );
                    known
                }
                _ => {
                    cu.member_keys(c as usize, scratch);
                    fingerprint(&scratch.keys)
                }
            };
            let min_key = scratch.keys.iter().copied().min().unwrap_or(0);
            let start = self.cycle_starts.len() as u32;
            for (&m, &key) in members.iter().zip(&scratch.keys) {
                if key == min_key {
                    self.cycle_starts
                        .push(cu.ids.get(m as usize).copied().unwrap_or(NONE));
                }
            }
            let index = self.cycle_list.len() as u32;
            self.cycle_list.push(Cycle {
                fingerprint,
                len: members.len() as u32,
                min_key,
                starts: start..self.cycle_starts.len() as u32,
            });
            self.cycles.push(fingerprint, index);
        }
    }
}

/// One CU being matched.
struct CuMatch<'c, 'a> {
    types: &'c [Type<'a>],
    comps: &'c Components,
    /// Each type's [`shape::own_hash_and_refs`].
    own: &'c [u64],
    /// Table id of each CU type: `NONE` before its component is matched,
    /// `NEW` when it has no copy (until new ids are handed out).
    ids: Vec<u32>,
}

impl CuMatch<'_, '_> {
    /// The key of a type whose references all have table ids.
    fn key(&self, node: u32, t: &Type<'_>) -> u64 {
        let own = self.own.get(node as usize).copied().unwrap_or(0);
        shape_key(own, t, |id| u64::from(self.id_of(id)))
    }

    /// The table id of a CU-local reference (`void` is 0).
    fn id_of(&self, id: TypeId) -> u32 {
        if id == TypeId::VOID {
            return 0;
        }
        self.ids.get(id.0 as usize - 1).copied().unwrap_or(NONE)
    }

    /// Keys of component `c`'s members (into `scratch.keys`) that do not
    /// depend on the CU's own numbering: references out of the component
    /// count by table id, references inside by the target's own hash.
    /// One pass: a second one, mixing in the targets' keys instead of
    /// their own hashes, told hardly any more members apart. Returns
    /// whether a reference out of the component is to a new type (whose
    /// id is not handed out yet: the keys are then good for nothing).
    fn member_keys(&self, c: usize, scratch: &mut Scratch) -> bool {
        let component = c as u32;
        let members = self.comps.members(c);
        let mut refers_to_new = false;
        scratch.keys.clear();
        scratch.keys.extend(members.iter().map(|&node| {
            let own = self.own.get(node as usize).copied().unwrap_or(0);
            self.types.get(node as usize).map_or(0, |t| {
                shape_key(own, t, |r| {
                    let index = r.0.wrapping_sub(1) as usize;
                    if r != TypeId::VOID && self.comps.of.get(index) == Some(&component) {
                        INSIDE ^ self.own.get(index).copied().unwrap_or(0)
                    } else {
                        let id = self.id_of(r);
                        refers_to_new |= id == NEW;
                        u64::from(id)
                    }
                })
            })
        }));
        refers_to_new
    }
}

/// What matching a CU works in, kept from CU to CU. The per-type vectors
/// are kept at the largest CU's length rather than allocated and cleared
/// for each CU (they were the collapse's largest allocations, and it runs
/// one CU at a time): between CUs `tentative` is all `NONE`, and
/// `new_keys` and `fingerprints` all 0, which [`Scratch::forget`]
/// restores.
#[derive(Debug, Default)]
struct Scratch {
    /// The pairs (CU index, table id) of the last successful match.
    pairs: Vec<(u32, u32)>,
    /// The table id a CU type is paired with during a walk.
    tentative: Vec<u32>,
    touched: Vec<u32>,
    /// Pairs still to compare during a walk.
    stack: Vec<(u32, u32)>,
    /// Member keys of the component at hand, in member order.
    keys: Vec<u64>,
    /// Per CU type found new: the key it was looked up by (a single's
    /// [`CuMatch::key`], a cycle member's key from
    /// [`CuMatch::member_keys`]), for filing it; 0 when not looked up.
    new_keys: Vec<u64>,
    /// Per new cycle, at its first member: its fingerprint, or 0.
    fingerprints: Vec<u64>,
}

impl Scratch {
    /// Makes room for a CU of `len` types.
    fn fit(&mut self, len: usize) {
        debug_assert!(
            self.tentative.iter().all(|&t| t == NONE)
                && self.new_keys.iter().all(|&k| k == 0)
                && self.fingerprints.iter().all(|&f| f == 0),
            "a CU left the collapse's scratch set"
        );
        if self.tentative.len() < len {
            self.tentative.resize(len, NONE);
            self.new_keys.resize(len, 0);
            self.fingerprints.resize(len, 0);
        }
    }

    /// Clears what a CU left set. Only types found new (`fresh`) have
    /// `new_keys` or `fingerprints` set; each walk clears the `tentative`
    /// entries it set.
    fn forget(&mut self, fresh: &[u32]) {
        for &node in fresh {
            if let Some(key) = self.new_keys.get_mut(node as usize) {
                *key = 0;
            }
            if let Some(fingerprint) = self.fingerprints.get_mut(node as usize) {
                *fingerprint = 0;
            }
        }
    }
}

/// A cycle's fingerprint: its member keys as a multiset. A sum of the
/// keys, each mixed first, does not depend on their order, so they need
/// no sorting.
fn fingerprint(keys: &[u64]) -> u64 {
    let sum = keys.iter().fold(0u64, |sum, &key| {
        sum.wrapping_add(Key::new(1).word(key).finish())
    });
    Key::new(keys.len() as u64).word(sum).finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_types::test_name;
    use crate::types::{Composite, Fwd, IntEncoding, Member};

    #[test]
    fn chains_keep_each_keys_entries_in_order_across_growth() {
        let mut chains = Chains::default();
        // Keys whose high halves share their low bits probe into each
        // other's slots; a few thousand make the table grow several times.
        let key = |k: u64| ((k << 20) | (k % 7)) << 32 | k;
        let mut expected: Vec<Vec<u32>> = vec![Vec::new(); 3000];
        for entry in 0..9000u32 {
            let k = u64::from(entry) * 7919 % 3000;
            chains.push(key(k), entry);
            expected[k as usize].push(entry);
        }
        for (k, entries) in expected.iter().enumerate() {
            assert_eq!(
                chains.iter(key(k as u64)).collect::<Vec<_>>(),
                *entries,
                "key {k}"
            );
        }
        assert_eq!(chains.iter(key(3000)).count(), 0);
        assert_eq!(Chains::default().iter(1).count(), 0);
    }

    #[test]
    fn keys_sharing_their_high_half_share_a_chain_in_order() {
        let mut chains = Chains::default();
        for entry in 0..6u32 {
            chains.push(7 << 32 | u64::from(entry % 2), entry);
        }
        chains.push(8 << 32, 6);
        assert_eq!(
            chains.iter(7 << 32 | 5).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!(chains.iter(8 << 32 | 1).collect::<Vec<_>>(), [6]);
    }

    fn int(name: &'static str) -> Type<'static> {
        crate::test_types::int(name, 4, IntEncoding::SIGNED)
    }

    /// The CUs' types through the collapse, and simply concatenated (each
    /// CU's ids moved up past the types before it): the two tables whose
    /// dedup must agree.
    pub(super) fn collapsed_and_concatenated<'a>(
        cus: &[Vec<Type<'a>>],
        names: MergedNames,
    ) -> (Btf<'a>, Btf<'a>) {
        let mut collapsed = Collapser::new(0, 0);
        let mut whole = Btf::default();
        for types in cus {
            collapsed
                .add(PreparedCu::new(types.clone(), names).expect("prepare"))
                .expect("add");
            let shift = whole.types.len() as u32;
            whole.types.extend(types.iter().cloned().map(|mut t| {
                let _ = t.remap_refs::<()>(|id| {
                    Ok(if id == TypeId::VOID {
                        id
                    } else {
                        TypeId(id.0 + shift)
                    })
                });
                t
            }));
        }
        (collapsed.into_btf(), whole)
    }

    fn st(name: &'static str, members: &[(&'static str, u32)]) -> Type<'static> {
        Type::Struct(Composite {
            name,
            size: 8 * members.len() as u32,
            members: members
                .iter()
                .enumerate()
                .map(|(i, &(name, ty))| Member {
                    name: test_name(name),
                    ty: TypeId(ty),
                    bit_offset: 64 * i as u32,
                    bitfield_size: 0,
                })
                .collect(),
            kind_flag: false,
        })
    }

    fn add(c: &mut Collapser<'static>, types: Vec<Type<'static>>) -> Vec<u32> {
        let n = types.len() as u32;
        let (ids, _) = c
            .add(PreparedCu::new(types, MergedNames::NONE).unwrap())
            .unwrap();
        (1..=n).map(|i| ids.get(TypeId(i)).unwrap().0).collect()
    }

    fn list_head_cu() -> Vec<Type<'static>> {
        vec![
            st("list_head", &[("next", 2), ("prev", 2)]),
            Type::Ptr(TypeId(1)),
        ]
    }

    #[test]
    fn a_repeated_cycle_is_kept_once_whatever_the_order() {
        let mut c = Collapser::new(0, 0);
        assert_eq!(add(&mut c, list_head_cu()), vec![1, 2]);
        // The same cycle listed pointer first, after a new type.
        let shuffled = vec![
            int("int"),
            Type::Ptr(TypeId(3)),
            st("list_head", &[("next", 2), ("prev", 2)]),
        ];
        assert_eq!(add(&mut c, shuffled), vec![3, 2, 1]);
        assert_eq!(c.btf().types.len(), 3);
    }

    #[test]
    fn a_cycle_of_look_alike_members_is_found_from_any_of_them() {
        // Two structs and two pointers, each pair alike: the smallest
        // member key is shared by two members, and a copy listed from any
        // member is found (the kept key must be the smallest: with any
        // other, no copy is).
        let ring = |first: u32| {
            let at = |i: u32| (i + first) % 4 + 1;
            let mut types = vec![Type::Ptr(TypeId::VOID); 4];
            types[(at(0) - 1) as usize] = st("ring", &[("next", at(1))]);
            types[(at(1) - 1) as usize] = Type::Ptr(TypeId(at(2)));
            types[(at(2) - 1) as usize] = st("ring", &[("next", at(3))]);
            types[(at(3) - 1) as usize] = Type::Ptr(TypeId(at(0)));
            types
        };
        let mut c = Collapser::new(0, 0);
        assert_eq!(add(&mut c, ring(0)), vec![1, 2, 3, 4]);
        for first in 1..4 {
            let ids = add(&mut c, ring(first));
            assert_eq!(c.btf().types.len(), 4, "ring listed from {first}");
            let mut sorted = ids.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, vec![1, 2, 3, 4], "ring listed from {first}");
        }
    }

    #[test]
    fn a_declared_struct_keeps_what_reaches_it_apart() {
        let mut c = Collapser::new(0, 0);
        let full = vec![
            int("int"),
            st("foo", &[("x", 1)]),
            Type::Ptr(TypeId(2)),
            st("bar", &[("f", 3)]),
        ];
        assert_eq!(add(&mut c, full), vec![1, 2, 3, 4]);
        let declared = vec![
            int("int"),
            Type::Fwd(Fwd {
                name: "foo",
                union: false,
            }),
            Type::Ptr(TypeId(2)),
            st("bar", &[("f", 3)]),
        ];
        // Only `int` is identical: bar and the pointer lead to a FWD here.
        assert_eq!(add(&mut c, declared), vec![1, 5, 6, 7]);
    }

    #[test]
    fn every_field_counts() {
        let mut c = Collapser::new(0, 0);
        add(&mut c, list_head_cu());
        let renamed = vec![
            st("list_head", &[("next", 2), ("last", 2)]),
            Type::Ptr(TypeId(1)),
        ];
        assert_eq!(add(&mut c, renamed), vec![3, 4]);
        let mut bitfield = list_head_cu();
        if let Type::Struct(s) = &mut bitfield[0] {
            s.kind_flag = true;
        }
        assert_eq!(add(&mut c, bitfield), vec![5, 6]);
    }

    #[test]
    fn ids_continue_after_a_base() {
        let mut c = Collapser::new(100, 7);
        assert_eq!(add(&mut c, list_head_cu()), vec![101, 102]);
        assert_eq!(add(&mut c, list_head_cu()), vec![101, 102]);
        assert_eq!(c.btf().types.get(1), Some(&Type::Ptr(TypeId(101))));
    }

    #[test]
    fn dedup_gives_the_same_types_with_or_without_collapsing() {
        let cus = [
            list_head_cu(),
            vec![
                int("int"),
                st("foo", &[("x", 1)]),
                Type::Ptr(TypeId(2)),
                st("bar", &[("f", 3)]),
            ],
            vec![
                int("int"),
                Type::Fwd(Fwd {
                    name: "foo",
                    union: false,
                }),
                Type::Ptr(TypeId(2)),
                st("bar", &[("f", 3)]),
            ],
            vec![
                int("int"),
                st("foo", &[("x", 1)]),
                Type::Ptr(TypeId(2)),
                st("bar", &[("f", 3)]),
            ],
            list_head_cu(),
        ];
        let (collapsed, whole) = collapsed_and_concatenated(&cus, MergedNames::NONE);
        assert!(collapsed.types.len() < whole.types.len());
        let a = crate::dedup::dedup(&collapsed, None).unwrap();
        let b = crate::dedup::dedup(&whole, None).unwrap();
        assert_eq!(a.btf.types, b.btf.types);
    }
}
