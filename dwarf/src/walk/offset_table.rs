//! Facts kept by DIE offset and looked up once the unit is read.
//!
//! The walk meets DIEs in increasing offset order, so recording a fact is
//! a push onto a list that is already sorted, and a lookup is a binary
//! search: cheaper than a hash table that grows (and rehashes) DIE by DIE.
//! What is looked up as it is read is in an [`OffsetMap`].

use std::collections::HashMap;

use foldhash::fast::FixedState;

/// Values by section offset, recorded in (normally increasing) offset
/// order.
pub(super) struct OffsetTable<V> {
    entries: Vec<(u64, V)>,
    /// Whether `entries` is sorted by offset.
    sorted: bool,
}

impl<V> Default for OffsetTable<V> {
    fn default() -> Self {
        OffsetTable {
            entries: Vec::new(),
            sorted: true,
        }
    }
}

impl<V> OffsetTable<V> {
    /// An empty table with room for `capacity` values.
    pub(super) fn with_capacity(capacity: usize) -> Self {
        OffsetTable {
            entries: Vec::with_capacity(capacity),
            sorted: true,
        }
    }

    /// Records `value` for the DIE at `offset`; a later value for the
    /// same offset replaces it.
    pub(super) fn insert(&mut self, offset: u64, value: V) {
        if self.entries.last().is_some_and(|&(last, _)| last >= offset) {
            self.sorted = false;
        }
        self.entries.push((offset, value));
    }

    /// Sorts what came out of order (units walked together out of
    /// section order), for fast lookups.
    pub(super) fn seal(&mut self) {
        if !self.sorted {
            // Stable: of equal offsets, the last recorded stays last.
            self.entries.sort_by_key(|&(offset, _)| offset);
            self.sorted = true;
        }
    }

    /// The value recorded last for `offset`.
    pub(super) fn get(&self, offset: u64) -> Option<&V> {
        let found = if self.sorted {
            let end = self.entries.partition_point(|&(key, _)| key <= offset);
            end.checked_sub(1).and_then(|index| self.entries.get(index))
        } else {
            self.entries.iter().rev().find(|&&(key, _)| key == offset)
        };
        found
            .filter(|&&(key, _)| key == offset)
            .map(|(_, value)| value)
    }
}

/// Values by section offset, looked up as the walk goes: with the
/// workspace's fixed-seeded foldhash (SipHash's DoS resistance buys
/// nothing for DIE offsets). It replaced a hand-written multiplicative
/// hasher whose lead was within noise: encoding xfs.ko (callgrind, `-j1`,
/// the kernel's flags) took 1,896,125,687 to 1,896,131,132 instructions
/// with it and 1,896,745,428 to 1,896,746,233 with foldhash, 0.03% more
/// (the map holds only parameter locations by abstract origin and the
/// rare references outside the units' dense id table).
pub(super) type OffsetMap<V> = HashMap<u64, V, FixedState>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_find_the_last_value_in_any_order() {
        let mut table = OffsetTable::default();
        for offset in [10, 20, 30] {
            table.insert(offset, offset * 2);
        }
        assert_eq!(table.get(20), Some(&40));
        assert_eq!(table.get(25), None);
        assert_eq!(table.get(5), None);
        assert_eq!(table.get(31), None);
        // Out of order and repeated: right before and after sealing.
        table.insert(15, 1);
        table.insert(20, 2);
        assert_eq!(table.get(20), Some(&2));
        assert_eq!(table.get(15), Some(&1));
        table.seal();
        assert_eq!(table.get(20), Some(&2));
        assert_eq!(table.get(15), Some(&1));
        assert_eq!(table.get(30), Some(&60));
        assert_eq!(OffsetTable::<u8>::default().get(0), None);
    }
}
