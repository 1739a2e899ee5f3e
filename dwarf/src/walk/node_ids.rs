//! Node ids by DIE offset.
//!
//! Every type reference of a unit looks its target up here, so the lookup
//! is one load from a table indexed by the offset inside the walked units
//! instead of a hash probe. The table (four bytes per byte of DIEs) is
//! kept by each thread and reused for its next unit: only the slots a
//! unit set are cleared, and no fresh pages are faulted in per unit.

use std::cell::Cell;

use super::OffsetMap;
use crate::model::NodeId;

/// Units spanning more bytes than this (LTO output walked as one) use a
/// hash table instead: the dense table would be too large.
const MAX_DENSE_SPAN: u64 = 16 << 20;

thread_local! {
    /// The dense table of this thread's previous walk, all zero.
    static SPARE_TABLE: Cell<Vec<u32>> = const { Cell::new(Vec::new()) };
}

/// Node ids of the DIEs of the units being walked.
pub(super) struct NodeIds {
    /// By offset minus `base`: id + 1, or 0 for a DIE without an id yet.
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
            let len = usize::try_from(span).unwrap_or(0);
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
        let index = usize::try_from(offset.checked_sub(self.base)?).ok()?;
        match *self.table.get(index)? {
            0 => None,
            slot => Some(NodeId(slot - 1)),
        }
    }

    /// The id of the DIE at section offset `offset`, or the one `make`
    /// gives it if it has none yet.
    #[inline]
    pub(super) fn get_or_insert(&mut self, offset: u64, make: impl FnOnce() -> NodeId) -> NodeId {
        let index = offset
            .checked_sub(self.base)
            .and_then(|index| usize::try_from(index).ok());
        match index.and_then(|index| Some((index, self.table.get_mut(index)?))) {
            Some((_, &mut slot)) if slot != 0 => NodeId(slot - 1),
            Some((index, slot)) => {
                let id = make();
                *slot = id.0.wrapping_add(1);
                // Table indexes fit u32: the table is at most MAX_DENSE_SPAN.
                self.set.push(index as u32);
                id
            }
            None => *self.others.entry(offset).or_insert_with(make),
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
}
