//! Compaction and renumbering (`btf_dedup_compact_types`,
//! `btf_dedup_remap_types`): canonical split types keep their relative
//! order and get consecutive ids after the base; every reference is
//! rewritten to the new id of its canonical type.

use rayon::prelude::*;

use super::state::{Deduper, UNPROCESSED};
use super::Error;
use crate::types::{Btf, Type, TypeId};

impl<'a> Deduper<'_, 'a> {
    /// New id of every old id, void and base ids unchanged.
    fn compaction(&self) -> Vec<u32> {
        let count = self.types.id_count();
        let mut new_ids = vec![UNPROCESSED; count as usize];
        for id in 0..self.start.min(count) {
            new_ids[id as usize] = id;
        }
        let mut next = self.start;
        for id in self.start..count {
            if self.map[id as usize] == id {
                new_ids[id as usize] = next;
                next += 1;
            }
        }
        new_ids
    }

    /// Builds the deduplicated table and the old -> new id map.
    pub(super) fn finish(mut self, input: &Btf<'a>) -> Result<(Btf<'a>, Vec<TypeId>), Error> {
        // What only the passes used is freed first, so that it does not
        // add to the memory peak, which is here, at the end of dedup.
        self.release_pass_state();
        let new_ids = self.compaction();
        let final_id = |old: u32| -> Result<TypeId, Error> {
            let id = self.resolve(old);
            match new_ids.get(id as usize) {
                Some(&new) if new != UNPROCESSED => Ok(TypeId(new)),
                _ => Err(Error::Unresolved {
                    type_id: TypeId(old),
                }),
            }
        };
        // Copying out is independent per type; collecting in order keeps
        // the first error (and everything else) deterministic.
        let kept: Vec<Result<Type<'a>, Error>> = input
            .types
            .par_iter()
            .enumerate()
            .filter(|&(index, _)| {
                let id = self.start + index as u32;
                self.map.get(id as usize) == Some(&id)
            })
            .map(|(_, t)| {
                let mut t = t.clone();
                t.remap_refs(|r| final_id(r.0))?;
                Ok(t)
            })
            .collect();
        let types = kept.into_iter().collect::<Result<Vec<_>, _>>()?;
        // One plain id per input id (a `Result` each would be four times
        // the size, millions of times over); the first unresolved id, in id
        // order, is looked for afterwards.
        let remap: Vec<TypeId> = (0..self.types.id_count())
            .into_par_iter()
            .map(|old| final_id(old).unwrap_or(TypeId(UNPROCESSED)))
            .collect();
        if let Some(old) = remap.iter().position(|&new| new == TypeId(UNPROCESSED)) {
            return Err(Error::Unresolved {
                type_id: TypeId(old as u32),
            });
        }
        let btf = Btf {
            types,
            base_type_count: input.base_type_count,
            base_str_len: input.base_str_len,
        };
        Ok((btf, remap))
    }
}
