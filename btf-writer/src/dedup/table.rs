//! The table of canonical candidates, keyed by type signature, that
//! reproduces the order in which libbpf visits candidates.
//!
//! The order matters: when several canonical types pass the cheap check
//! (two different `struct foo` with the same layout, an enum forward
//! declaration and two full enums of that name), the first one whose graph
//! is equivalent wins. libbpf keeps candidates in a chained hash map
//! (`hashmap__append`): a new entry goes to the head of its bucket, and
//! every time the map grows each chain is rebuilt by prepending, which
//! reverses the relative order of the entries sharing a key. So the order
//! of a key's candidates depends on how many growths happened since each
//! insertion. We keep, per key, the entries in a deque plus the growth
//! parity at which the deque's front is the chain head, and count growths
//! exactly as libbpf does (first insert, then whenever the fill would
//! exceed 75%).
//!
//! Keys are our own hashes of the same fields libbpf hashes. Only the
//! grouping of candidates that can pass an equality check matters, and any
//! two such candidates have equal hashed fields in both schemes.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

use foldhash::fast::FixedState;

/// A signature key, built a word or a string at a time: each step hashes
/// the new part with foldhash (the workspace's hasher, fixed seed), seeded
/// by the key so far. Cheap and good enough for keys whose collisions are
/// resolved by full comparisons anyway.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Key(u64);

/// The multiplier of [`PassThrough`]'s fallback for byte input.
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Key {
    /// Starts a key for one family of signatures; different tags keep the
    /// families apart as libbpf's differently-shaped hashes do.
    #[inline]
    pub(super) fn new(tag: u64) -> Key {
        Key(FixedState::default().hash_one(tag))
    }

    #[inline]
    pub(super) fn word(self, v: u64) -> Key {
        Key(FixedState::with_seed(self.0).hash_one(v))
    }

    #[inline]
    pub(super) fn str(self, s: &str) -> Key {
        Key(FixedState::with_seed(self.0).hash_one(s))
    }

    #[inline]
    pub(super) fn finish(self) -> u64 {
        self.0
    }
}

/// Hasher for keys that are already well-mixed hashes ([`Key`]s): the key
/// itself is the hash, so there is nothing for foldhash to do. Only
/// `u64` keys reach it; bytes get a cheap mix so that it stays a valid
/// `Hasher`.
#[derive(Default, Clone, Copy, Debug)]
pub(super) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(SEED);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

pub(super) type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<PassThrough>>;

/// Name -> the unique canonical STRUCT/UNION of that name, or 0 when
/// several carry it.
pub(super) type NameMap<'n> = HashMap<&'n str, u32, FixedState>;

/// One key's entries as a deque, its front half stored reversed (pushed
/// in order) so that a layer can sit between a frozen base chain and the
/// entries added on top of it: the deque is `front.rev() ++ back`.
///
/// Most keys have a single candidate: the front's first entry is kept
/// inline and the rest boxed, so that a map bucket is small (more of the
/// map stays in cache) and a lookup reads no memory beyond the map's own.
#[derive(Clone, Debug)]
struct Chain {
    /// `front[0]`, or [`NO_ID`] while the front is empty.
    front_first: u32,
    /// Growth parity at which the deque's front is the chain head.
    front_parity: bool,
    more: Option<Box<MoreEntries>>,
}

/// The entries of a [`Chain`] beyond the inline one.
#[derive(Clone, Debug, Default)]
struct MoreEntries {
    /// `front[1..]`.
    front_rest: Vec<u32>,
    back: Vec<u32>,
}

/// Marks an empty inline slot; ids are below 2^31.
const NO_ID: u32 = u32::MAX;

impl Chain {
    fn new(front_parity: bool) -> Chain {
        Chain {
            front_first: NO_ID,
            front_parity,
            more: None,
        }
    }

    fn push_front(&mut self, id: u32) {
        if self.front_first == NO_ID {
            self.front_first = id;
        } else {
            self.more.get_or_insert_default().front_rest.push(id);
        }
    }

    fn push_back(&mut self, id: u32) {
        self.more.get_or_insert_default().back.push(id);
    }

    /// The only entry, if there is exactly one.
    fn single(&self) -> Option<u32> {
        (self.more.is_none() && self.front_first != NO_ID).then_some(self.front_first)
    }

    /// The front half in the order stored (the deque's front is its end).
    fn front(&self) -> impl DoubleEndedIterator<Item = &u32> {
        let first: &[u32] = if self.front_first == NO_ID {
            &[]
        } else {
            std::slice::from_ref(&self.front_first)
        };
        let rest: &[u32] = self.more.as_ref().map_or(&[], |m| &m.front_rest);
        first.iter().chain(rest)
    }

    /// The back half, in deque order.
    fn back(&self) -> &[u32] {
        self.more.as_ref().map_or(&[], |m| &m.back)
    }
}

/// Multimap from signature to canonical type ids, iterated in libbpf order.
///
/// With a `base` (a table frozen after filing a base BTF's types, shared by
/// every split deduplicated on it), new entries are layered on top of the
/// base chains: the base table is never copied or modified, and the
/// growth counters continue from the base's, so iteration order is exactly
/// that of one table holding both.
#[derive(Debug, Default)]
pub(super) struct CandidateTable<'b> {
    base: Option<&'b CandidateTable<'static>>,
    chains: KeyMap<Chain>,
    len: u64,
    capacity: u64,
    capacity_bits: u32,
    parity: bool,
    /// Every entry in the order it was added, when kept (see
    /// [`CandidateTable::journaled`]).
    journal: Option<Vec<(u64, u32)>>,
}

impl<'b> CandidateTable<'b> {
    /// An empty table that also remembers the order of its entries, so
    /// that they can be filed again into another table later
    /// ([`CandidateTable::refile`]).
    pub(super) fn journaled() -> Self {
        CandidateTable {
            journal: Some(Vec::new()),
            ..CandidateTable::default()
        }
    }

    /// Adds the entries of `journaled` (a [`CandidateTable::journaled`]
    /// table) in the order they were added to it: the table `self` would
    /// have become had they been added to it in the first place.
    pub(super) fn refile(&mut self, journaled: &CandidateTable<'_>) {
        for &(key, id) in journaled.journal.iter().flatten() {
            self.add(key, id);
        }
    }

    /// An empty layer on top of `base`.
    pub(super) fn on_base(base: &'b CandidateTable<'static>) -> Self {
        CandidateTable {
            base: Some(base),
            chains: KeyMap::default(),
            len: base.len,
            capacity: base.capacity,
            capacity_bits: base.capacity_bits,
            parity: base.parity,
            journal: None,
        }
    }

    /// This table as a base for layers (it must have no base itself).
    pub(super) fn into_frozen(self) -> CandidateTable<'static> {
        debug_assert!(self.base.is_none(), "a layered table cannot be a base");
        CandidateTable {
            base: None,
            chains: self.chains,
            len: self.len,
            capacity: self.capacity,
            capacity_bits: self.capacity_bits,
            parity: self.parity,
            journal: self.journal,
        }
    }

    fn base_chain(&self, key: u64) -> Option<&Chain> {
        self.base.and_then(|b| b.chains.get(&key))
    }

    pub(super) fn add(&mut self, key: u64, id: u32) {
        // hashmap_needs_to_grow(): empty, or more than 75% full after adding.
        if self.capacity == 0 || (self.len + 1) * 4 / 3 > self.capacity {
            self.capacity_bits = (self.capacity_bits + 1).max(2);
            self.capacity = 1 << self.capacity_bits;
            self.parity = !self.parity;
        }
        self.len += 1;
        if let Some(journal) = &mut self.journal {
            journal.push((key, id));
        }
        let parity = self.parity;
        // A layer over a base chain keeps the base's orientation.
        let front_parity = self.base_chain(key).map_or(parity, |c| c.front_parity);
        let chain = self
            .chains
            .entry(key)
            .or_insert_with(|| Chain::new(front_parity));
        if chain.front_parity == parity {
            chain.push_front(id);
        } else {
            chain.push_back(id);
        }
    }

    /// Replaces `out` with the candidates for `key`, head of chain first.
    pub(super) fn candidates(&self, key: u64, out: &mut Vec<u32>) {
        out.clear();
        let own = self.chains.get(&key);
        let base = self.base_chain(key);
        let Some(front_parity) = own.or(base).map(|c| c.front_parity) else {
            return;
        };
        // The common case: one candidate, in either order.
        if let (Some(c), None) = (own, base) {
            if let Some(only) = c.single() {
                out.push(only);
                return;
            }
        }
        // The deque, front to back.
        let own_front = own.into_iter().flat_map(Chain::front);
        let base_front = base.into_iter().flat_map(Chain::front);
        let deque = own_front
            .rev()
            .chain(base_front.rev())
            .chain(base.into_iter().flat_map(Chain::back))
            .chain(own.into_iter().flat_map(Chain::back))
            .copied();
        if front_parity == self.parity {
            out.extend(deque);
        } else {
            let start = out.len();
            out.extend(deque);
            out[start..].reverse();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A direct model of libbpf's chained map: buckets are vectors with
    /// the head at index 0, growth re-inserts every chain by prepending.
    struct Model {
        buckets: Vec<Vec<(u64, u32)>>,
        len: usize,
    }

    impl Model {
        fn bucket(key: u64, cap: usize) -> usize {
            (key.wrapping_mul(11400714819323198485) >> (64 - cap.trailing_zeros())) as usize
        }
        fn add(&mut self, key: u64, id: u32) {
            let cap = self.buckets.len();
            if cap == 0 || (self.len + 1) * 4 / 3 > cap {
                let new_cap = (cap * 2).max(4);
                let mut next = vec![Vec::new(); new_cap];
                for chain in &self.buckets {
                    for &(k, v) in chain {
                        next[Self::bucket(k, new_cap)].insert(0, (k, v));
                    }
                }
                self.buckets = next;
            }
            let cap = self.buckets.len();
            self.buckets[Self::bucket(key, cap)].insert(0, (key, id));
            self.len += 1;
        }
        fn candidates(&self, key: u64) -> Vec<u32> {
            let cap = self.buckets.len();
            self.buckets[Self::bucket(key, cap)]
                .iter()
                .filter(|(k, _)| *k == key)
                .map(|&(_, v)| v)
                .collect()
        }
    }

    #[test]
    fn order_matches_chained_map_with_growth_reversals() {
        let mut model = Model {
            buckets: Vec::new(),
            len: 0,
        };
        let mut table = CandidateTable::default();
        let mut out = Vec::new();
        // A few hot keys interleaved with many cold ones, so that hot keys
        // see many growths between their insertions.
        let mut state = 12345u64;
        for id in 1..5000u32 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = if state >> 60 < 4 {
                state >> 62
            } else {
                state >> 20
            };
            model.add(key, id);
            table.add(key, id);
            if id % 97 == 0 {
                for hot in 0..4 {
                    table.candidates(hot, &mut out);
                    assert_eq!(out, model.candidates(hot), "key {hot} after {id} inserts");
                }
            }
        }
    }

    #[test]
    fn a_layer_on_a_frozen_base_iterates_as_one_table() {
        let mut keys = Vec::new();
        let mut state = 987u64;
        for _ in 1..6000u32 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            keys.push(if state >> 60 < 4 {
                state >> 62
            } else {
                state >> 20
            });
        }
        let (base_keys, split_keys) = keys.split_at(4000);
        let mut one = CandidateTable::default();
        let mut base = CandidateTable::default();
        for (id, &key) in base_keys.iter().enumerate() {
            one.add(key, id as u32);
            base.add(key, id as u32);
        }
        let mut layer = CandidateTable::on_base(&base);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (id, &key) in split_keys.iter().enumerate() {
            let id = 4000 + id as u32;
            one.add(key, id);
            layer.add(key, id);
            for probe in [0, 1, 2, 3, key, base_keys[id as usize % 4000]] {
                one.candidates(probe, &mut a);
                layer.candidates(probe, &mut b);
                assert_eq!(a, b, "key {probe} after {id} inserts");
            }
        }
    }

    #[test]
    fn key_distinguishes_strings_and_tags() {
        let a = Key::new(1).str("abc").finish();
        let b = Key::new(1).str("abd").finish();
        let c = Key::new(2).str("abc").finish();
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, Key::new(1).str("abc").finish());
    }
}
