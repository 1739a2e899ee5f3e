//! The dedup working state: the canonical map, the hypothetical map used
//! by graph equivalence, the candidate table and the per-type reference
//! slots that the reference phase rewrites.

use rayon::prelude::*;

use super::table::CandidateTable;
use super::view::{for_each_ref, kind, kind_of, Types};
use super::{keys, Error, Flavor};
use crate::types::{Type, TypeId};

/// `map` value of a type not yet processed.
pub(super) const UNPROCESSED: u32 = u32::MAX;
/// `map` value of a reference type whose target is being resolved.
pub(super) const IN_PROGRESS: u32 = u32::MAX - 1;
/// BTF ids are below 2^31 (`BTF_MAX_NR_TYPES`).
const MAX_IDS: u64 = 0x7fff_ffff;

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
            slot_start: Vec::new(),
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
            let mut bad = None;
            for_each_ref(t, |r| {
                if r >= count && bad.is_none() {
                    bad = Some(r);
                }
            });
            if let Some(r) = bad {
                return Err(Error::DanglingReference {
                    type_id: TypeId(id),
                    referenced: TypeId(r),
                });
            }
            // VAR and DATASEC are never deduplicated.
            chunk.map.push(match t {
                Type::Var(_) | Type::Datasec(_) => id,
                _ => UNPROCESSED,
            });
            match t {
                Type::Struct(_) | Type::Union(_) | Type::Var(_) | Type::Datasec(_) => {}
                _ => for_each_ref(t, |r| chunk.slots.push(r)),
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
    pub(super) table: CandidateTable,
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
}

impl<'t, 'a> Deduper<'t, 'a> {
    /// Validates ids and sets up the state for `types`.
    pub(super) fn new(types: Types<'t, 'a>, flavor: Flavor) -> Result<Self, Error> {
        let count = types.id_count();
        if count as u64 > MAX_IDS {
            return Err(Error::TooManyTypes {
                count: count as u64,
            });
        }
        // Per-type setup is independent: do it in parallel chunks, then
        // stitch the chunks together in id order.
        let chunks: Vec<Result<Chunk, Error>> = (0..count.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| Chunk::build(&types, c * CHUNK..count.min((c + 1) * CHUNK)))
            .collect();
        let mut map = Vec::with_capacity(count as usize);
        let mut kinds = Vec::with_capacity(count as usize);
        let mut slot_start = Vec::with_capacity(count as usize + 1);
        let mut slots = Vec::new();
        for chunk in chunks {
            let chunk = chunk?;
            let base = slots.len() as u32;
            map.extend_from_slice(&chunk.map);
            kinds.extend_from_slice(&chunk.kinds);
            slot_start.extend(chunk.slot_start.iter().map(|s| s + base));
            slots.extend_from_slice(&chunk.slots);
        }
        slot_start.push(slots.len() as u32);
        let start = types.start_id();
        let mut d = Deduper {
            types,
            flavor,
            start,
            map,
            kinds,
            hypot: vec![UNPROCESSED; count as usize],
            hypot_list: Vec::new(),
            hypot_adjust_canon: false,
            table: CandidateTable::default(),
            slot_start,
            slots,
            work: Vec::new(),
            cands: Vec::new(),
        };
        d.prepare_base();
        Ok(d)
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
