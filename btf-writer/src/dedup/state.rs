//! The dedup working state: the canonical map, the hypothetical map used
//! by graph equivalence, the candidate table and the per-type reference
//! slots that the reference phase rewrites.

use rayon::prelude::*;

use super::common::{Error, Flavor};
use super::keys;
use super::table::{CandidateTable, NameMap};
use super::view::{kind, kind_of, Types};
use crate::types::{Type, TypeId};

/// `map` value of a type not yet processed.
pub(super) const UNPROCESSED: u32 = u32::MAX;
/// `map` value of a reference type whose target is being resolved.
pub(super) const IN_PROGRESS: u32 = u32::MAX - 1;

#[inline]
pub(super) fn is_mapped(v: u32) -> bool {
    v < IN_PROGRESS
}

/// Ids set up per parallel task.
const CHUNK: u32 = 1 << 15;

/// Setup of one range of ids: initial map values and reference slots
/// (`slot_start` relative to the chunk's first slot).
struct Chunk {
    map: Vec<u32>,
    kinds: Vec<u8>,
    slot_start: Vec<u32>,
    slots: Vec<u32>,
}

impl Chunk {
    fn build(types: &Types<'_, '_>, ids: std::ops::Range<u32>) -> Result<Chunk, Error> {
        let count = types.id_count();
        let mut chunk = Chunk {
            map: Vec::with_capacity(ids.len()),
            kinds: Vec::with_capacity(ids.len()),
            slot_start: Vec::with_capacity(ids.len()),
            slots: Vec::new(),
        };
        for id in ids {
            chunk.slot_start.push(chunk.slots.len() as u32);
            let Some(t) = types.get(id) else {
                chunk.map.push(id); // void is its own canonical
                chunk.kinds.push(kind::VOID);
                continue;
            };
            chunk.kinds.push(kind_of(t));
            // VAR and DATASEC are never deduplicated.
            chunk.map.push(match t {
                Type::Var(_) | Type::Datasec(_) => id,
                _ => UNPROCESSED,
            });
            // One walk over the references validates them and, for the
            // kinds the reference pass rewrites, records them as slots.
            let keeps_slots = !matches!(
                t,
                Type::Struct(_) | Type::Union(_) | Type::Var(_) | Type::Datasec(_)
            );
            let mut bad = None;
            t.for_each_ref(|TypeId(r)| {
                if r >= count {
                    bad = bad.or(Some(r));
                } else if keeps_slots {
                    chunk.slots.push(r);
                }
            });
            if let Some(r) = bad {
                return Err(Error::DanglingReference {
                    type_id: TypeId(id),
                    referenced: TypeId(r),
                });
            }
        }
        Ok(chunk)
    }
}

#[derive(Debug)]
pub(super) struct Deduper<'t, 'a> {
    pub(super) types: Types<'t, 'a>,
    /// Which libbpf to reproduce.
    pub(super) flavor: Flavor,
    /// First split id; everything below is immutable base.
    pub(super) start: u32,
    /// Type id -> canonical (or FWD resolution) id, libbpf's `d->map`.
    /// Invariant: every value that is mapped is a valid id.
    pub(super) map: Vec<u32>,
    /// Type id -> BTF kind. The equivalence walk asks for kinds far more
    /// often than it reads whole types; a dense byte per id stays in cache
    /// where the 56-byte `Type`s of millions of input types do not.
    kinds: Vec<u8>,
    /// Canonical-graph id -> candidate-graph id during one equivalence check.
    pub(super) hypot: Vec<u32>,
    /// Ids set in `hypot`, in the order they were set.
    pub(super) hypot_list: Vec<u32>,
    /// The last check would only hold if a base FWD were resolved.
    pub(super) hypot_adjust_canon: bool,
    pub(super) table: CandidateTable<'t>,
    /// `slots[slot_start[id]..slot_start[id + 1]]` are the ids a reference
    /// kind points to (target; element and index; return and parameters).
    /// The reference phase rewrites them to canonical ids, as libbpf
    /// rewrites `t->type` in place.
    pub(super) slot_start: Vec<u32>,
    pub(super) slots: Vec<u32>,
    /// Scratch: pending pairs of the equivalence walk.
    pub(super) work: Vec<(u32, u32)>,
    /// Scratch: a snapshot of one key's candidates.
    pub(super) cands: Vec<u32>,
    /// What [`Deduper::target_names`] found for the ids it was asked
    /// about: types never change once added, so neither does this.
    pub(super) target_names: TargetNames,
    /// A prepared base's aggregates by name (see `resolve_fwds`).
    pub(super) base_names: Option<&'t NameMap<'a>>,
    /// The candidate table's order is not libbpf's yet (a streaming
    /// dedup's composite pass, see [`super::streaming`]): a type whose
    /// outcome would depend on it is left undecided.
    pub(super) provisional_order: bool,
}

/// A [`Deduper`] between two steps of a streaming dedup: all of its state
/// but the types, which grow in between.
#[derive(Debug, Default)]
pub(super) struct Suspended {
    flavor: Flavor,
    ids: IdVectors,
    table: CandidateTable<'static>,
    scratch: Scratch,
}

/// The buffers a [`Deduper`] works in, kept across the steps of a
/// streaming dedup so that they are not allocated again.
#[derive(Debug, Default)]
struct Scratch {
    hypot: Vec<u32>,
    hypot_list: Vec<u32>,
    work: Vec<(u32, u32)>,
    cands: Vec<u32>,
    target_names: TargetNames,
}

/// [`Deduper::target_names`] by id, for the ids asked about so far.
pub(super) type TargetNames =
    std::collections::HashMap<u32, Option<u64>, foldhash::fast::FixedState>;

/// The part of the dedup state that depends on the base alone, computed
/// once and shared by every split deduplicated on that base (a kernel's
/// modules): the base's map, reference slots and filed candidates.
#[derive(Debug)]
pub(super) struct BaseState<'a> {
    /// `map` for ids `0..start` (identity).
    map: Vec<u32>,
    /// `kinds` for ids `0..start`.
    kinds: Vec<u8>,
    /// `slot_start` for ids `0..start`.
    slot_start: Vec<u32>,
    slots: Vec<u32>,
    table: CandidateTable<'static>,
    /// The base's STRUCT/UNIONs by name, for FWD resolution.
    names: NameMap<'a>,
}

impl<'a> BaseState<'a> {
    /// Validates and files the types of `base` (a standalone BTF).
    pub(super) fn new(base: &[Type<'a>], flavor: Flavor) -> Result<BaseState<'a>, Error> {
        let d = Deduper::new(Types::new(base, &[]), flavor)?;
        let start = d.start as usize;
        let names = d.unique_aggregate_names(1..d.start);
        let mut slot_start = d.slot_start;
        slot_start.truncate(start);
        Ok(BaseState {
            map: d.map,
            kinds: d.kinds,
            slot_start,
            slots: d.slots,
            table: d.table.into_frozen(),
            names,
        })
    }

    /// Number of ids it covers, void included (the split's first id).
    pub(super) fn id_count(&self) -> usize {
        self.map.len()
    }
}

/// The number of ids of `types` (void included), if BTF can number them.
fn checked_id_count(types: &Types<'_, '_>) -> Result<u32, Error> {
    let count = types.id_count();
    if count > crate::raw::MAX_NR_TYPES {
        return Err(Error::TooManyTypes {
            count: u64::from(count),
        });
    }
    Ok(count)
}

/// How [`set_up_ids`] builds its chunks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Chunks {
    /// As rayon tasks.
    Parallel,
    /// One after another on the calling thread, which then never waits in
    /// rayon (see [`Deduper::resume`]).
    InTurn,
}

/// Per-type setup of `ids`, in chunks stitched together in id order,
/// appended to the vectors of `ids`.
fn set_up_ids(
    types: &Types<'_, '_>,
    ids: std::ops::Range<u32>,
    into: &mut IdVectors,
    chunks: Chunks,
) -> Result<(), Error> {
    let IdVectors {
        map,
        kinds,
        slot_start,
        slots,
    } = into;
    let first = ids.start;
    let count = ids.len().div_ceil(CHUNK as usize) as u32;
    let build = |c: u32| {
        Chunk::build(
            types,
            first + c * CHUNK..ids.end.min(first + (c + 1) * CHUNK),
        )
    };
    let chunks: Vec<Result<Chunk, Error>> = match chunks {
        Chunks::Parallel => (0..count).into_par_iter().map(build).collect(),
        Chunks::InTurn => (0..count).map(build).collect(),
    };
    for chunk in chunks {
        let chunk = chunk?;
        let base = slots.len() as u32;
        map.extend_from_slice(&chunk.map);
        kinds.extend_from_slice(&chunk.kinds);
        slot_start.extend(chunk.slot_start.iter().map(|s| s + base));
        slots.extend_from_slice(&chunk.slots);
    }
    slot_start.push(slots.len() as u32);
    Ok(())
}

/// The per-id vectors of the state that [`set_up_ids`] fills.
#[derive(Debug, Default)]
struct IdVectors {
    map: Vec<u32>,
    kinds: Vec<u8>,
    slot_start: Vec<u32>,
    slots: Vec<u32>,
}

impl IdVectors {
    fn with_capacity(count: u32) -> IdVectors {
        IdVectors {
            map: Vec::with_capacity(count as usize),
            kinds: Vec::with_capacity(count as usize),
            slot_start: Vec::with_capacity(count as usize + 1),
            slots: Vec::new(),
        }
    }
}

impl<'t, 'a> Deduper<'t, 'a> {
    /// Validates ids and sets up the state for `types`.
    pub(super) fn new(types: Types<'t, 'a>, flavor: Flavor) -> Result<Self, Error> {
        let count = checked_id_count(&types)?;
        let mut ids = IdVectors::with_capacity(count);
        set_up_ids(&types, 0..count, &mut ids, Chunks::Parallel)?;
        let mut d = Self::with_state(types, flavor, ids, CandidateTable::default());
        d.prepare_base();
        Ok(d)
    }

    /// As [`Deduper::new`] for a split whose base was set up once in
    /// `base` (which must be the state of `types`' base).
    pub(super) fn on_base(
        types: Types<'t, 'a>,
        flavor: Flavor,
        base: &'t BaseState<'a>,
    ) -> Result<Self, Error> {
        let count = checked_id_count(&types)?;
        let start = types.start_id();
        if base.id_count() != start as usize {
            return Err(Error::BaseMismatch {
                expected: start - 1,
                found: base.id_count().saturating_sub(1) as u32,
            });
        }
        let mut ids = IdVectors::with_capacity(count);
        ids.map.extend_from_slice(&base.map);
        ids.kinds.extend_from_slice(&base.kinds);
        ids.slot_start.extend_from_slice(&base.slot_start);
        ids.slots = base.slots.clone();
        set_up_ids(&types, start..count, &mut ids, Chunks::Parallel)?;
        let mut d = Self::with_state(types, flavor, ids, CandidateTable::on_base(&base.table));
        d.base_names = Some(&base.names);
        Ok(d)
    }

    fn with_state(
        types: Types<'t, 'a>,
        flavor: Flavor,
        ids: IdVectors,
        table: CandidateTable<'t>,
    ) -> Self {
        let mut scratch = Scratch::default();
        scratch.hypot.resize(types.id_count() as usize, UNPROCESSED);
        Self::from_parts(types, flavor, ids, table, scratch)
    }

    /// `scratch.hypot` must cover every id of `types`.
    fn from_parts(
        types: Types<'t, 'a>,
        flavor: Flavor,
        ids: IdVectors,
        table: CandidateTable<'t>,
        scratch: Scratch,
    ) -> Self {
        let IdVectors {
            map,
            kinds,
            slot_start,
            slots,
        } = ids;
        let Scratch {
            hypot,
            hypot_list,
            work,
            cands,
            target_names,
        } = scratch;
        Deduper {
            types,
            flavor,
            start: types.start_id(),
            map,
            kinds,
            hypot,
            hypot_list,
            hypot_adjust_canon: false,
            table,
            slot_start,
            slots,
            work,
            cands,
            target_names,
            base_names: None,
            provisional_order: false,
        }
    }

    /// The state without the types, for [`Deduper::resume`]. Only for a
    /// standalone table: a base's state is borrowed.
    pub(super) fn suspend(self) -> Suspended {
        debug_assert!(
            self.base_names.is_none(),
            "a split dedup cannot be suspended"
        );
        Suspended {
            flavor: self.flavor,
            ids: IdVectors {
                map: self.map,
                kinds: self.kinds,
                slot_start: self.slot_start,
                slots: self.slots,
            },
            table: self.table.into_frozen(),
            scratch: Scratch {
                hypot: self.hypot,
                hypot_list: self.hypot_list,
                work: self.work,
                cands: self.cands,
                target_names: self.target_names,
            },
        }
    }

    /// Takes up a suspended dedup on `types`, which must begin with the
    /// types it had: the ids added since are validated and set up, on the
    /// calling thread. A streaming step runs while its caller holds the
    /// table that CUs are added to, which other workers may block on: a
    /// rayon wait there could run one of them, nested, on this very
    /// thread, where it would wait for itself. The ids added since the
    /// last step are mostly fewer than one chunk anyway.
    pub(super) fn resume(types: Types<'t, 'a>, suspended: Suspended) -> Result<Self, Error> {
        Self::resume_with(types, suspended, Chunks::InTurn)
    }

    /// [`Deduper::resume`] for the last time, when no table is held: the
    /// ids added since (a kernel's FUNCs and VARs, tens of thousands, on
    /// the sequential tail) are set up in parallel.
    pub(super) fn resume_last(types: Types<'t, 'a>, suspended: Suspended) -> Result<Self, Error> {
        Self::resume_with(types, suspended, Chunks::Parallel)
    }

    fn resume_with(
        types: Types<'t, 'a>,
        suspended: Suspended,
        chunks: Chunks,
    ) -> Result<Self, Error> {
        let count = checked_id_count(&types)?;
        let Suspended {
            flavor,
            mut ids,
            table,
            mut scratch,
        } = suspended;
        let known = ids.map.len() as u32;
        if count > known {
            // `set_up_ids` ends `slot_start` with the end of the last
            // type's slots; the new types' starts take its place.
            ids.slot_start.pop();
            set_up_ids(&types, known..count, &mut ids, chunks)?;
        }
        scratch.hypot.resize(count as usize, UNPROCESSED);
        Ok(Self::from_parts(types, flavor, ids, table, scratch))
    }

    /// `btf_dedup_prep`: base types are canonical by definition and are
    /// filed as candidates, in id order, under their kind's signature.
    fn prepare_base(&mut self) {
        for id in 1..self.start {
            self.map[id as usize] = id;
            let t = self.types.get(id);
            let key = match t.map(kind_of) {
                Some(kind::VAR | kind::DATASEC) | None => continue,
                Some(kind::INT | kind::DECL_TAG) => keys::int_tag(t, super::view::size_or_type(t)),
                Some(kind::ENUM | kind::ENUM64) => keys::enumeration(t),
                Some(kind::STRUCT | kind::UNION) => keys::composite(t),
                Some(kind::ARRAY) => keys::array(t, self.slots_of(id)),
                Some(kind::FUNC_PROTO) => keys::func_proto(t, self.slots_of(id)),
                // CONST..TYPE_TAG, FWD, FLOAT and also TYPEDEF: the common
                // signature, target id included (which 1.7's typedef
                // lookups never use).
                Some(_) => keys::common(t, super::view::size_or_type(t)),
            };
            self.table.add(key, id);
        }
    }

    /// The reference slots of `id` (see [`Deduper::slots`]).
    #[inline]
    pub(super) fn slots_of(&self, id: u32) -> &[u32] {
        let from = self.slot_start.get(id as usize).copied().unwrap_or(0) as usize;
        let to = self.slot_start.get(id as usize + 1).copied().unwrap_or(0) as usize;
        self.slots.get(from..to).unwrap_or(&[])
    }

    /// Frees the state that only the passes use (hypothetical map, kinds,
    /// reference slots, candidates); [`Deduper::map`] stays.
    pub(super) fn release_pass_state(&mut self) {
        self.kinds = Vec::new();
        self.hypot = Vec::new();
        self.hypot_list = Vec::new();
        self.slot_start = Vec::new();
        self.slots = Vec::new();
        self.work = Vec::new();
        self.cands = Vec::new();
        self.table = CandidateTable::default();
    }

    /// The BTF kind of `id` ([`kind::VOID`] for void).
    #[inline]
    pub(super) fn kind(&self, id: u32) -> u8 {
        self.kinds.get(id as usize).copied().unwrap_or(kind::VOID)
    }

    /// `resolve_type_id`: follows the canonical map to its end.
    #[inline]
    pub(super) fn resolve(&self, mut id: u32) -> u32 {
        loop {
            let next = self.map[id as usize];
            if !is_mapped(next) || next == id {
                return id;
            }
            id = next;
        }
    }

    /// `resolve_fwd_id`: a FWD already resolved to a STRUCT/UNION becomes
    /// that type; anything else stays as is.
    pub(super) fn resolve_fwd(&self, id: u32) -> u32 {
        if self.kind(id) != kind::FWD {
            return id;
        }
        let end = self.resolve(id);
        if self.kind(end) != kind::FWD {
            end
        } else {
            id
        }
    }
}
