//! Interning the names of a big BTF on two threads, with the offsets the
//! sequential interning (`StringTable::add` in name order) would give.
//!
//! Two names can only be equal if their lengths are, so the names split
//! into two independent sets by the parity of their byte length, one per
//! thread, at no cost: the length is in the `&str`. Each thread dedups its
//! set and notes the size of every new name at the index of its first
//! occurrence; a prefix sum over those sizes, in name order, is then the
//! offset every new name would have got from one thread adding the names
//! in order. The names are copied into the section, and every name
//! occurrence resolved to its offset, on two threads again.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::hash_table::{Entry, HashTable};

use crate::strings::{StringIndex, StringTable};

/// Which of the two sets `name` belongs to: 0 or 1.
#[inline]
pub(super) fn parity(name: &str) -> usize {
    name.len() & 1
}

/// The interned names.
#[derive(Debug)]
pub(super) struct Interned {
    /// The offset of every name, in name order, filed by [`parity`].
    pub offsets: [Vec<u32>; 2],
    /// The output buffer: zeros up to the string section, then the
    /// table's own bytes and the new names.
    pub out: Vec<u8>,
}

/// One distinct name of a set.
struct Distinct<'a> {
    name: &'a str,
    /// Index of its first occurrence among all names.
    first: u32,
    /// Its offset if the base or the table already holds it.
    known: Option<u32>,
}

/// One set's names deduplicated.
struct Set<'a> {
    /// Index into `distinct` of every name of the set, in name order.
    slots: Vec<u32>,
    distinct: Vec<Distinct<'a>>,
    /// For every name (of either set), the bytes it adds to the section
    /// if it is the first occurrence of a new name of this set, else 0.
    sizes: Vec<u32>,
}

/// Interns `names` (the concatenation of the slices; `per_parity` of each
/// parity) into a copy of `table`, looking every name up in `base` first,
/// and writes the string section at `strings_at` of a zeroed output
/// buffer. `None` if a name cannot be stored (a NUL in it, or the section
/// would outgrow u32 offsets): the sequential path reports which.
pub(super) fn intern(
    names: &[&[&str]],
    per_parity: [usize; 2],
    base: Option<&StringIndex<'_>>,
    table: &StringTable,
    strings_at: usize,
) -> Option<Interned> {
    // A new table holds no name but "" (whose offset 0 is known): looking
    // names up there would only cost time.
    let seeded = table.len() > 1;
    let lookup = |name: &str| {
        let in_table = || if seeded { table.find(name) } else { None };
        base.and_then(|b| b.find(name)).or_else(in_table)
    };
    let (even, odd) = rayon::join(
        || dedup_set(names, 0, per_parity[0], &lookup),
        || dedup_set(names, 1, per_parity[1], &lookup),
    );
    let (mut even, odd) = (even?, odd?);
    // The new names start after the table's bytes.
    let new_start = u64::from(table.start()) + table.len() as u64;
    let new_len = prefix_sums(&mut even.sizes, &odd.sizes);
    if new_start + new_len > u64::from(u32::MAX) {
        return None;
    }
    // Fits u32 (checked above), and so do all the sums.
    let new_start = new_start as u32;
    let starts = even.sizes;
    let strings_len = table.len() + new_len as usize;
    let (((even_slots, even), even_offsets), ((odd_slots, odd), odd_offsets)) = rayon::join(
        || resolve(even.slots, even.distinct, &starts, new_start),
        || resolve(odd.slots, odd.distinct, &starts, new_start),
    );
    // The kernel rejects an empty string section, split or not: a lone
    // NUL (the buffer's zero) stands for it.
    let mut out = vec![0; strings_at + strings_len.max(1)];
    let strings = out.get_mut(strings_at..)?;
    let (own, new) = strings.split_at_mut(table.len());
    own.copy_from_slice(table.as_bytes());
    let half = new.len() / 2;
    let (low, high) = new.split_at_mut(half);
    let sets = [
        (&even, even_offsets.as_slice()),
        (&odd, odd_offsets.as_slice()),
    ];
    let (low_copied, high_copied) = rayon::join(
        || copy_names(sets, new_start as usize, low),
        || copy_names(sets, new_start as usize + half, high),
    );
    if !(low_copied && high_copied) {
        return None;
    }
    Some(Interned {
        offsets: [even_slots, odd_slots],
        out,
    })
}

/// Deduplicates the names of parity `parity` (`count` of them).
fn dedup_set<'a>(
    names: &[&[&'a str]],
    parity: usize,
    count: usize,
    lookup: &(impl Fn(&str) -> Option<u32> + Sync),
) -> Option<Set<'a>> {
    let hasher = FixedState::default();
    // Ids into `distinct`: small entries keep the table in cache. At most
    // one entry per name: it never grows.
    let mut index: HashTable<u32> = HashTable::with_capacity(count);
    let mut distinct: Vec<Distinct<'a>> = Vec::with_capacity(count / 2);
    let mut slots = Vec::with_capacity(count);
    let total: usize = names.iter().map(|part| part.len()).sum();
    let mut sizes = vec![0; total];
    let all = names.iter().flat_map(|part| part.iter());
    for ((at, &name), size) in all.enumerate().zip(&mut sizes) {
        if self::parity(name) != parity {
            continue;
        }
        let hash = hasher.hash_one(name.as_bytes());
        let name_of = |id: u32| distinct.get(id as usize).map_or("", |d| d.name);
        let entry = index.entry(
            hash,
            // Most repeats are the very same bytes (one `.debug_str`
            // entry), which spares the comparison.
            |&id| {
                let seen = name_of(id);
                std::ptr::eq(seen, name) || seen == name
            },
            |&id| hasher.hash_one(name_of(id).as_bytes()),
        );
        let id = match entry {
            Entry::Occupied(found) => *found.get(),
            Entry::Vacant(slot) => {
                // Offset 0 is the empty string's in every section.
                let known = if name.is_empty() {
                    Some(0)
                } else {
                    lookup(name)
                };
                if known.is_none() {
                    if name.as_bytes().contains(&0) {
                        return None;
                    }
                    *size = u32::try_from(name.len() + 1).ok()?;
                }
                let id = u32::try_from(distinct.len()).ok()?;
                slot.insert(id);
                distinct.push(Distinct {
                    name,
                    first: u32::try_from(at).ok()?,
                    known,
                });
                id
            }
        };
        slots.push(id);
    }
    Some(Set {
        slots,
        distinct,
        sizes,
    })
}

/// Turns `even` into the exclusive prefix sums of `even + odd`: where the
/// new name first occurring at each index starts, relative to the first
/// new name. Returns the total.
fn prefix_sums(even: &mut [u32], odd: &[u32]) -> u64 {
    let mut sum: u64 = 0;
    for (start, &odd) in even.iter_mut().zip(odd) {
        let size = u64::from(*start) + u64::from(odd);
        // Saturates only past u32 offsets, which the caller rejects.
        *start = u32::try_from(sum).unwrap_or(u32::MAX);
        sum += size;
    }
    sum
}

/// Every slot of a set resolved to its name's offset, given where each
/// new name starts (`starts`, by first occurrence, relative to
/// `new_start`); with the offset of every distinct name of the set.
fn resolve<'a>(
    mut slots: Vec<u32>,
    distinct: Vec<Distinct<'a>>,
    starts: &[u32],
    new_start: u32,
) -> ((Vec<u32>, Vec<Distinct<'a>>), Vec<u32>) {
    let offsets: Vec<u32> = distinct
        .iter()
        .map(|d| {
            d.known.unwrap_or_else(|| {
                new_start + starts.get(d.first as usize).copied().unwrap_or_default()
            })
        })
        .collect();
    for slot in &mut slots {
        *slot = offsets.get(*slot as usize).copied().unwrap_or_default();
    }
    ((slots, distinct), offsets)
}

/// Copies the bytes of the new names (of each set, with the offsets of its
/// distinct names) that fall in `out` (which starts at absolute offset
/// `out_start`) there; the NULs after the names are the buffer's zeros.
/// False if a name did not fit: a bug.
fn copy_names(sets: [(&Vec<Distinct<'_>>, &[u32]); 2], out_start: usize, out: &mut [u8]) -> bool {
    let out_end = out_start + out.len();
    for (distinct, offsets) in sets {
        for (d, &offset) in distinct.iter().zip(offsets) {
            let (start, end) = (offset as usize, offset as usize + d.name.len());
            // A name may straddle the two halves: each copies its part.
            let (from, to) = (start.max(out_start), end.min(out_end));
            if d.known.is_some() || from >= to {
                continue;
            }
            let src = d.name.as_bytes().get(from - start..to - start);
            match (out.get_mut(from - out_start..to - out_start), src) {
                (Some(dst), Some(src)) => dst.copy_from_slice(src),
                _ => return false,
            }
        }
    }
    true
}
