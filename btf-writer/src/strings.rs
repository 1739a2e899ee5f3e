//! The BTF string section: NUL-terminated names addressed by byte offset.
//!
//! [`StringTable`] builds a section, storing each distinct name once.
//! Offsets depend only on the order of insertion, never on hashing, so the
//! output is reproducible. [`StringIndex`] finds names in an existing
//! section: a split BTF reuses its base's offsets for names the base
//! already has, as libbpf's `btf__add_str` does (it looks a string up in
//! the base BTF before adding it to the split's own strings).

use std::borrow::Cow;
use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::hash_table::{Entry, HashTable};
use hashbrown::{HashMap, HashSet};

use crate::error::{ErrorKind, FormatError};

/// How the model holds a name read from BTF whose bytes are not UTF-8.
///
/// The kernel takes such names: its name checks (`btf_name_valid_identifier`
/// and co., kernel/bpf/btf.c) classify bytes with `<linux/ctype.h>`, whose
/// table (lib/ctype.c) reads bytes 0xc0-0xff (but 0xd7, 0xf7) as ISO 8859-1
/// letters, and do not check the names of INT, FLOAT or decl tag values
/// at all. The model's names are `&str`; such a name is held as a NUL (no
/// name in a string section can hold one: it ends the name) followed by
/// its bytes decoded as ISO 8859-1, one char U+0000-U+00FF per byte:
/// equal names stay equal, different ones different, and
/// [`section_bytes`] gives the string section its bytes back. Names that
/// are UTF-8 (all DWARF-derived ones) are held as they are.
pub const RAW_NAME_MARK: char = '\0';

/// `bytes` (a name from a string section, not UTF-8) in the model's form:
/// see [`RAW_NAME_MARK`].
pub fn raw_name(bytes: &[u8]) -> String {
    let mut name = String::with_capacity(1 + 2 * bytes.len());
    name.push(RAW_NAME_MARK);
    name.extend(bytes.iter().map(|&b| char::from(b)));
    name
}

/// The bytes `name` has in a string section: its own, or for a name read
/// as not UTF-8 (see [`RAW_NAME_MARK`]) the bytes it was read from.
pub fn section_bytes(name: &str) -> Cow<'_, [u8]> {
    let Some(rest) = name.strip_prefix(RAW_NAME_MARK) else {
        return Cow::Borrowed(name.as_bytes());
    };
    let bytes: Option<Vec<u8>> = rest
        .chars()
        .map(|c| u8::try_from(u32::from(c)).ok().filter(|&b| b != 0))
        .collect();
    // Anything else with a leading NUL is no name read from BTF: its own
    // bytes, which the NUL makes unwritable.
    bytes.map_or(Cow::Borrowed(name.as_bytes()), Cow::Owned)
}

/// `name` for messages and dumps: its section bytes, with what is not
/// UTF-8 shown as U+FFFD (a name read as not UTF-8 loses its marker).
pub fn display_name(name: &str) -> Cow<'_, str> {
    match section_bytes(name) {
        Cow::Borrowed(_) => Cow::Borrowed(name),
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// A deduplicating string section under construction.
///
/// A standalone table starts with the empty string at offset 0. A split
/// table starts empty at the base's string section length: its first string
/// gets that offset, and `""` maps to the base's offset 0.
#[derive(Clone)]
pub struct StringTable {
    /// The section bytes, every string followed by a NUL.
    bytes: Vec<u8>,
    /// Absolute offset of `bytes[0]`.
    start: u32,
    /// (offset in `bytes`, length) of every string stored.
    index: HashTable<(u32, u32)>,
    /// Fixed seed: hashing never influences offsets, but a fixed state keeps
    /// the run-to-run behaviour (and timing) identical.
    hasher: FixedState,
}

impl std::fmt::Debug for StringTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StringTable")
            .field("start", &self.start)
            .field("len", &self.bytes.len())
            .field("strings", &self.index.len())
            .finish()
    }
}

impl Default for StringTable {
    fn default() -> Self {
        Self::new()
    }
}

impl StringTable {
    /// A standalone table holding only `""` at offset 0.
    pub fn new() -> Self {
        let mut table = StringTable {
            bytes: Vec::new(),
            start: 0,
            index: HashTable::new(),
            hasher: FixedState::default(),
        };
        table.bytes.push(0);
        let hash = table.hasher.hash_one(b"".as_slice());
        table.index.insert_unique(hash, (0, 0), |_| hash);
        table
    }

    /// An empty table for a split BTF whose base string section is
    /// `base_str_len` bytes long.
    pub fn new_split(base_str_len: u32) -> Self {
        StringTable {
            bytes: Vec::new(),
            start: base_str_len,
            index: HashTable::new(),
            hasher: FixedState::default(),
        }
    }

    /// A table that starts as a copy of an existing section whose first
    /// byte has absolute offset `start` (0 for a standalone section), so
    /// that names already there keep their offsets and new ones are
    /// appended. Rewriting a parsed BTF through such a table reproduces its
    /// string section byte for byte. As in libbpf, the first occurrence of
    /// a duplicate wins. A standalone section must start with `""`; any
    /// non-empty section must end with a NUL.
    pub fn from_section(start: u32, section: &[u8]) -> Result<Self, FormatError> {
        if start == 0 && section.first() != Some(&0) {
            return Err(ErrorKind::StringSectionNoLeadingNul.into());
        }
        if section.last().is_some_and(|&b| b != 0) {
            return Err(ErrorKind::StringSectionNotTerminated.into());
        }
        let end = u64::from(start) + section.len() as u64;
        if end > u64::from(u32::MAX) {
            return Err(ErrorKind::StringsTooLarge(end).into());
        }
        let mut table = StringTable {
            bytes: section.to_vec(),
            start,
            index: HashTable::with_capacity(section.len() / 16),
            hasher: FixedState::default(),
        };
        let StringTable {
            bytes,
            index,
            hasher,
            ..
        } = &mut table;
        let mut rel = 0usize;
        // The last piece after the final NUL is empty and not a string.
        let count = bytes.split(|&b| b == 0).count().saturating_sub(1);
        for piece in bytes.split(|&b| b == 0).take(count) {
            // Fits u32: the section end was checked above.
            let (off, len) = (rel as u32, piece.len() as u32);
            let hash = hasher.hash_one(piece);
            let data: &[u8] = bytes;
            if let Entry::Vacant(slot) = index.entry(
                hash,
                |&(o, l)| slice(data, o, l) == piece,
                |&(o, l)| hasher.hash_one(slice(data, o, l)),
            ) {
                slot.insert((off, len));
            }
            rel += piece.len() + 1;
        }
        Ok(table)
    }

    /// Pre-allocates room for about `strings` more names of `bytes` bytes in
    /// total.
    pub fn reserve(&mut self, strings: usize, bytes: usize) {
        self.bytes.reserve(bytes);
        let hasher = &self.hasher;
        let data = &self.bytes;
        self.index.reserve(strings, |&(off, len)| {
            hasher.hash_one(slice(data, off, len))
        });
    }

    /// The absolute offset of `s`, adding it if it is new. `""` is always
    /// offset 0 (in a split table, the base's empty string).
    ///
    /// Fails if `s` contains a NUL byte or the section would outgrow u32
    /// offsets.
    pub fn add(&mut self, s: &str) -> Result<u32, FormatError> {
        if s.is_empty() {
            return Ok(0);
        }
        let key = section_bytes(s);
        let key: &[u8] = &key;
        let hash = self.hasher.hash_one(key);
        let StringTable {
            bytes,
            start,
            index,
            hasher,
        } = self;
        let data: &Vec<u8> = bytes;
        let entry = index.entry(
            hash,
            |&(off, len)| slice(data, off, len) == key,
            |&(off, len)| hasher.hash_one(slice(data, off, len)),
        );
        match entry {
            Entry::Occupied(found) => Ok(*start + found.get().0),
            Entry::Vacant(slot) => {
                if key.contains(&0) {
                    return Err(ErrorKind::NameContainsNul.into());
                }
                let rel = bytes.len();
                let end = rel as u64 + key.len() as u64 + 1;
                if u64::from(*start) + end > u64::from(u32::MAX) {
                    return Err(ErrorKind::StringsTooLarge(u64::from(*start) + end).into());
                }
                // Both fit u32: checked just above.
                let rel = rel as u32;
                slot.insert((rel, key.len() as u32));
                bytes.extend_from_slice(key);
                bytes.push(0);
                Ok(*start + rel)
            }
        }
    }

    /// Makes a split table that received no string hold a lone NUL: the
    /// kernel rejects a zero-length string section, split or not.
    pub fn ensure_not_empty(&mut self) {
        if self.bytes.is_empty() {
            self.bytes.push(0);
        }
    }

    /// The offset of `s` if it is already stored.
    pub fn find(&self, s: &str) -> Option<u32> {
        if s.is_empty() {
            return Some(0);
        }
        let key = section_bytes(s);
        let key: &[u8] = &key;
        let hash = self.hasher.hash_one(key);
        self.index
            .find(hash, |&(off, len)| slice(&self.bytes, off, len) == key)
            .map(|&(off, _)| self.start + off)
    }

    /// The string at absolute offset `offset`, if one starts there.
    pub fn get(&self, offset: u32) -> Option<&str> {
        let rel = offset.checked_sub(self.start)? as usize;
        let tail = self.bytes.get(rel..)?;
        let len = tail.iter().position(|&b| b == 0)?;
        std::str::from_utf8(tail.get(..len)?).ok()
    }

    /// Absolute offset of the first byte of this table.
    pub fn start(&self) -> u32 {
        self.start
    }

    /// Length of this table's section in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the section has no bytes (only a split table can be empty).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The section bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The section bytes, consuming the table.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// `data[off..off + len]`, empty if out of range (never, for entries the
/// table made itself).
#[inline]
fn slice(data: &[u8], off: u32, len: u32) -> &[u8] {
    let off = off as usize;
    data.get(off..off + len as usize).unwrap_or_default()
}

/// Bits in [`StringIndex::narrowed_to`]'s filter.
const SKETCH_BITS: usize = 1 << 16;

/// A string's bit in that filter: its length and first and last bytes.
fn sketch(s: &[u8]) -> usize {
    let (first, last) = (s.first().copied(), s.last().copied());
    let mixed =
        (s.len() as u64) << 16 | u64::from(first.unwrap_or(0)) << 8 | u64::from(last.unwrap_or(0));
    (mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as usize % SKETCH_BITS
}

/// Name → offset lookup over existing string sections (a base BTF's), with
/// libbpf's rule: every string that starts right after a NUL (or at the
/// section start) is indexed, and the first occurrence of a duplicate wins.
#[derive(Clone, Debug, Default)]
pub struct StringIndex<'a> {
    offsets: HashMap<&'a [u8], u32, FixedState>,
    /// End of the highest section added: where a split's strings start.
    end: u32,
}

impl<'a> StringIndex<'a> {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// An index over one standalone section.
    pub fn from_section(bytes: &'a [u8]) -> Self {
        let mut index = Self::new();
        index.add_section(0, bytes);
        index
    }

    /// Indexes a section whose first byte has absolute offset `start`. Add
    /// sections base first, so that a base's offset wins over a duplicate
    /// in a split on top of it.
    pub fn add_section(&mut self, start: u32, bytes: &'a [u8]) {
        self.offsets.reserve(bytes.len() / 16);
        self.add_section_keeping(start, bytes, |_| true);
    }

    /// An index over `sections` (absolute start, bytes; base first) that
    /// answers [`StringIndex::find`] as the whole index would for the
    /// strings in `wanted`, and knows no other. A split's writer asks for
    /// its own names only: a module has a few thousand, where its vmlinux
    /// base has about 100,000 strings to file (a tenth of a small module's
    /// encoding, in a kernel build's process per module).
    pub fn narrowed_to<'w>(
        sections: impl IntoIterator<Item = (u32, &'a [u8])>,
        wanted: impl IntoIterator<Item = &'w str>,
    ) -> Self {
        let wanted: HashSet<Cow<'w, [u8]>, FixedState> =
            wanted.into_iter().map(section_bytes).collect();
        // Most of the base's strings are not wanted, and most of those
        // differ from every wanted one in length or in their first or last
        // byte: a bit per such triple (8 KB) turns them away before they
        // are hashed.
        let mut sketches = vec![0u64; SKETCH_BITS / 64];
        for name in &wanted {
            let bit = sketch(name);
            sketches[bit / 64] |= 1 << (bit % 64);
        }
        let maybe_wanted = |piece: &[u8]| {
            let bit = sketch(piece);
            sketches[bit / 64] >> (bit % 64) & 1 == 1 && wanted.contains(piece)
        };
        let mut index = Self::new();
        for (start, bytes) in sections {
            index.add_section_keeping(start, bytes, maybe_wanted);
        }
        index
    }

    /// [`StringIndex::add_section`] of the strings `keep` accepts.
    fn add_section_keeping(&mut self, start: u32, bytes: &'a [u8], keep: impl Fn(&[u8]) -> bool) {
        let mut rel = 0usize;
        // A trailing piece without its NUL is not a string.
        while let Some(len) = bytes.get(rel..).and_then(|rest| memchr::memchr(0, rest)) {
            let Some(piece) = bytes.get(rel..rel + len) else {
                break;
            };
            let next = rel + len + 1;
            if let (Ok(off), true) = (u32::try_from(rel), keep(piece)) {
                self.offsets
                    .entry(piece)
                    .or_insert(start.saturating_add(off));
            }
            rel = next;
        }
        let end = u64::from(start) + bytes.len() as u64;
        self.end = self.end.max(u32::try_from(end).unwrap_or(u32::MAX));
    }

    /// The offset of `s`, if some section holds it.
    pub fn find(&self, s: &str) -> Option<u32> {
        if s.is_empty() {
            return Some(0);
        }
        self.offsets.get(section_bytes(s).as_ref()).copied()
    }

    /// End offset of the sections indexed: the `base_str_len` of a split
    /// on top of them.
    pub fn end(&self) -> u32 {
        self.end
    }

    /// Number of distinct strings indexed.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standalone_starts_with_empty_string_and_dedups() {
        let mut t = StringTable::new();
        assert_eq!(t.add("").unwrap(), 0);
        assert_eq!(t.add("int").unwrap(), 1);
        assert_eq!(t.add("char").unwrap(), 5);
        assert_eq!(t.add("int").unwrap(), 1);
        assert_eq!(t.as_bytes(), b"\0int\0char\0");
        assert_eq!(t.find("char"), Some(5));
        assert_eq!(t.find("long"), None);
        assert_eq!(t.get(5), Some("char"));
        assert_eq!(t.get(100), None);
    }

    #[test]
    fn split_continues_after_base() {
        let mut t = StringTable::new_split(100);
        assert!(t.is_empty());
        assert_eq!(t.add("").unwrap(), 0);
        assert_eq!(t.add("xfs").unwrap(), 100);
        assert_eq!(t.add("inode").unwrap(), 104);
        assert_eq!(t.add("xfs").unwrap(), 100);
        assert_eq!(t.into_bytes(), b"xfs\0inode\0");
    }

    #[test]
    fn offsets_depend_only_on_insertion_order() {
        let names: Vec<String> = (0..5000).map(|i| format!("name_{}", i % 3000)).collect();
        let mut a = StringTable::new();
        let mut b = StringTable::new();
        b.reserve(4000, 40000);
        let offs_a: Vec<u32> = names.iter().map(|n| a.add(n).unwrap()).collect();
        let offs_b: Vec<u32> = names.iter().map(|n| b.add(n).unwrap()).collect();
        assert_eq!(offs_a, offs_b);
        assert_eq!(a.as_bytes(), b.as_bytes());
        for (name, off) in names.iter().zip(&offs_a) {
            assert_eq!(a.get(*off), Some(name.as_str()));
        }
    }

    #[test]
    fn seeded_table_keeps_offsets_and_appends() {
        let mut t = StringTable::from_section(0, b"\0zeta\0alpha\0zeta\0").unwrap();
        assert_eq!(t.add("alpha").unwrap(), 6);
        assert_eq!(t.add("zeta").unwrap(), 1);
        assert_eq!(t.add("new").unwrap(), 17);
        assert_eq!(t.as_bytes(), b"\0zeta\0alpha\0zeta\0new\0");
        let mut split = StringTable::from_section(50, b"x\0").unwrap();
        assert_eq!(split.add("x").unwrap(), 50);
        assert_eq!(split.add("").unwrap(), 0);
        assert!(StringTable::from_section(0, b"x\0").is_err());
        assert!(StringTable::from_section(0, b"\0x").is_err());
    }

    #[test]
    fn rejects_nul_in_name() {
        let mut t = StringTable::new();
        assert_eq!(t.add("a\0b").unwrap_err().kind, ErrorKind::NameContainsNul);
    }

    #[test]
    fn index_first_occurrence_wins_and_ignores_unterminated_tail() {
        let section = b"\0int\0char\0int\0tail";
        let index = StringIndex::from_section(section);
        assert_eq!(index.find(""), Some(0));
        assert_eq!(index.find("int"), Some(1));
        assert_eq!(index.find("char"), Some(5));
        assert_eq!(index.find("tail"), None);
        assert_eq!(index.end(), section.len() as u32);
    }

    #[test]
    fn index_over_base_and_split_sections() {
        let mut index = StringIndex::new();
        index.add_section(0, b"\0a\0");
        index.add_section(3, b"b\0a\0");
        assert_eq!(index.find("a"), Some(1));
        assert_eq!(index.find("b"), Some(3));
        assert_eq!(index.end(), 7);
    }

    /// A narrowed index finds each wanted string where the whole one does
    /// (first occurrences across sections, names that are not UTF-8, an
    /// unterminated tail), ends where it does, and knows nothing else.
    #[test]
    fn narrowed_index_answers_as_the_whole_one_for_what_is_wanted() {
        let raw = raw_name(b"caf\xe9");
        let sections: [(u32, &[u8]); 2] = [
            (0, b"\0int\0char\0int\0caf\xe9\0x\0"),
            (20, b"char\0y\0int\0tail"),
        ];
        let mut whole = StringIndex::new();
        for (start, bytes) in sections {
            whole.add_section(start, bytes);
        }
        // Enough wanted strings that some share a filter bit with others.
        let mut wanted: Vec<String> = ["int", "char", "y", "tail", "absent", "", raw.as_str()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        wanted.extend((0..3000).map(|n| format!("w{n}")));
        let narrowed = StringIndex::narrowed_to(sections, wanted.iter().map(String::as_str));
        for name in &wanted {
            assert_eq!(narrowed.find(name), whole.find(name), "{name:?}");
        }
        assert_eq!(narrowed.find(&raw), Some(14));
        assert_eq!(narrowed.find("y"), Some(25));
        assert_eq!(narrowed.find("x"), None);
        assert_eq!(narrowed.end(), whole.end());
    }
}
