//! Node ids by DIE offset.
//!
//! Every type reference of a unit looks its target up here, so the lookup
//! is one load from a table indexed by the offset inside the walked units
//! instead of a hash probe. The table (four bytes per four bytes of DIEs)
//! is kept by each thread and reused for its next unit: only the slots a
//! unit set are cleared, and no fresh pages are faulted in per unit.
//!
//! One slot serves four offsets: a DIE is at least one byte long, but two
//! DIEs less than four bytes apart that both get ids are rare (a type DIE
//! of one to three bytes, `const void` say, followed by another), so the
//! later ones of a group go to the hash table. A type reference's cost is
//! mostly the cache miss on its slot: with a quarter of the table,
//! `fixed_type` fell from 2.3-2.9% to 1.6-1.7% of the samples on Debian's
//! vmlinux, and the simulated last-level misses of the lookup from 55 k
//! to 16 k on xfs.ko (34 k with a slot per two bytes).

use std::cell::Cell;

use super::offset_table::OffsetMap;
use crate::model::NodeId;

/// Units spanning more bytes than this (LTO output walked as one) use a
/// hash table instead: the dense table would be too large.
const MAX_DENSE_SPAN: u64 = 16 << 20;

/// Log2 of the number of offsets one slot of the table serves.
const SHIFT: u32 = 2;

/// The low bits of an offset (relative to the table), kept in its slot.
const LOW: u64 = (1 << SHIFT) - 1;

thread_local! {
    /// The dense table of this thread's previous walk, all zero.
    static SPARE_TABLE: Cell<Vec<u32>> = const { Cell::new(Vec::new()) };
}

/// Node ids of the DIEs of the units being walked.
pub(super) struct NodeIds {
    /// By offset minus `base`, shifted right by `SHIFT`: (id + 1) <<
    /// `SHIFT` with the offset's `LOW` bits, or 0 for a slot without an id
    /// yet.
    table: Vec<u32>,
    /// Section offset of the first walked byte.
    base: u64,
    /// Indexes of `table` that were set, to clear them for reuse.
    set: Vec<u32>,
    /// Offsets outside the table (references past the units' ends, or
    /// units too large for a dense table).
    others: OffsetMap<NodeId>,
}

impl NodeIds {
    /// Ids for DIEs in the section offset ranges `spans`.
    pub(super) fn new(spans: &[(u64, u64)], expected: usize) -> Self {
        let base = spans.iter().map(|&(start, _)| start).min().unwrap_or(0);
        let end = spans.iter().map(|&(_, end)| end).max().unwrap_or(base);
        let span = end.saturating_sub(base);
        let mut table = Vec::new();
        if span <= MAX_DENSE_SPAN {
            table = SPARE_TABLE.take();
            let len = usize::try_from(span.div_ceil(1 << SHIFT)).unwrap_or(0);
            if table.len() < len {
                table.resize(len, 0);
            }
        }
        NodeIds {
            table,
            base,
            set: Vec::with_capacity(expected),
            others: OffsetMap::default(),
        }
    }

    /// The id of the DIE at section offset `offset`, if it has one in the
    /// table: the common case, cheap enough to be inlined.
    #[inline(always)]
    pub(super) fn get(&self, offset: u64) -> Option<NodeId> {
        let relative = offset.checked_sub(self.base)?;
        let index = usize::try_from(relative >> SHIFT).ok()?;
        let slot = *self.table.get(index)?;
        // An empty slot, or one another offset of the group holds.
        if slot == 0 || u64::from(slot) & LOW != relative & LOW {
            return None;
        }
        Some(NodeId((slot >> SHIFT) - 1))
    }

    /// The id of the DIE at section offset `offset`, or the one `make`
    /// gives it if it has none yet.
    #[inline]
    pub(super) fn get_or_insert(&mut self, offset: u64, make: impl FnOnce() -> NodeId) -> NodeId {
        let relative = offset.checked_sub(self.base);
        let index = relative.and_then(|relative| usize::try_from(relative >> SHIFT).ok());
        let low = relative.map_or(0, |relative| (relative & LOW) as u32);
        match index.and_then(|index| Some((index, self.table.get_mut(index)?))) {
            Some((_, &mut slot)) if slot != 0 && slot & LOW as u32 == low => {
                NodeId((slot >> SHIFT) - 1)
            }
            Some((index, slot)) if *slot == 0 => {
                // An id too large for a slot was kept aside.
                if let Some(&id) = self.others.get(&offset) {
                    return id;
                }
                let id = make();
                match id
                    .0
                    .checked_add(1)
                    .filter(|&value| value <= u32::MAX >> SHIFT)
                {
                    Some(value) => {
                        *slot = (value << SHIFT) | low;
                        // Table indexes fit u32: the table is at most
                        // MAX_DENSE_SPAN >> SHIFT.
                        self.set.push(index as u32);
                    }
                    None => {
                        self.others.insert(offset, id);
                    }
                }
                id
            }
            // Another offset of the group holds the slot, or out of the
            // table.
            _ => *self.others.entry(offset).or_insert_with(make),
        }
    }
}

impl Drop for NodeIds {
    /// Clears the slots this walk set and hands the table to the thread's
    /// next walk.
    fn drop(&mut self) {
        for &index in &self.set {
            if let Some(slot) = self.table.get_mut(index as usize) {
                *slot = 0;
            }
        }
        let table = std::mem::take(&mut self.table);
        if !table.is_empty() {
            SPARE_TABLE.set(table);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_per_offset_and_tables_come_back_clean() {
        let mut next = 0;
        let mut make = || {
            next += 1;
            NodeId(next - 1)
        };
        {
            let mut ids = NodeIds::new(&[(100, 200)], 4);
            let a = ids.get_or_insert(150, &mut make);
            let b = ids.get_or_insert(199, &mut make);
            // Out of the units: still an id, kept aside.
            let c = ids.get_or_insert(5000, &mut make);
            assert_eq!((a, b, c), (NodeId(0), NodeId(1), NodeId(2)));
            assert_eq!(ids.get_or_insert(150, &mut make), a);
            assert_eq!(ids.get(150), Some(a));
            assert_eq!(ids.get(151), None);
            // Ids out of the table are only found the slow way.
            assert_eq!(ids.get(5000), None);
            assert_eq!(ids.get_or_insert(5000, &mut make), c);
            assert_eq!(ids.get_or_insert(99, &mut make), NodeId(3));
        }
        // The next walk on this thread reuses the table, with nothing set.
        let mut ids = NodeIds::new(&[(0, 100)], 4);
        assert_eq!(ids.get_or_insert(50, || NodeId(7)), NodeId(7));
        assert_eq!(ids.get_or_insert(99, || NodeId(8)), NodeId(8));
        assert_eq!(ids.get_or_insert(50, || NodeId(9)), NodeId(7));
    }

    /// Two offsets that share a slot keep their own ids, whichever comes
    /// first, and neither is found at the other's offset.
    #[test]
    fn neighbouring_offsets_keep_their_own_ids() {
        for (first, second) in [(10, 11), (11, 10), (100, 101)] {
            let mut ids = NodeIds::new(&[(0, 200)], 4);
            // The pairs do share a slot.
            assert_eq!(first >> SHIFT, second >> SHIFT);
            let a = ids.get_or_insert(first, || NodeId(1));
            let b = ids.get_or_insert(second, || NodeId(2));
            assert_eq!((a, b), (NodeId(1), NodeId(2)));
            assert_eq!(ids.get_or_insert(first, || NodeId(3)), a);
            assert_eq!(ids.get_or_insert(second, || NodeId(4)), b);
            assert_ne!(ids.get(second), Some(a));
            assert_ne!(ids.get(first), Some(b));
        }
    }

    /// An id too large for a slot is kept aside and still found.
    #[test]
    fn ids_too_large_for_a_slot_are_kept_aside() {
        let large = NodeId(u32::MAX >> SHIFT);
        let mut ids = NodeIds::new(&[(0, 100)], 4);
        assert_eq!(ids.get_or_insert(40, || large), large);
        assert_eq!(ids.get_or_insert(40, || NodeId(0)), large);
        assert_eq!(ids.get_or_insert(41, || NodeId(1)), NodeId(1));
        assert_eq!(ids.get(41), Some(NodeId(1)));
    }
}
