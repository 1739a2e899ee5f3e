//! The per-worker cache of abbreviation declarations, and parsing a
//! unit's table into its [`UnitAbbrevs`].
//!
//! Every unit of a kernel has its own abbreviation table, but gcc emits
//! nearly the same declarations (tag, children flag, attribute specs) in
//! each: what the walker derives from a declaration (its fixed
//! [`Layout`], its attribute plans, the scopes that want its DIEs) is
//! worked out once per distinct declaration a worker thread meets, not
//! once per unit, and copied into the unit's own compact table, dense by
//! code, so that reading a DIE touches only that table (a few dozen KB)
//! instead of declarations scattered over the worker's megabytes. No
//! allocation per abbreviation either: gimli's `Abbreviations::parse` and
//! our per-unit derivations took 4% of a vmlinux run, most of it in malloc.
//!
//! Parsing follows gimli's `Abbreviations::parse` step by step, through
//! gimli's own readers, so that a malformed table gives gimli's error.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use foldhash::fast::FixedState;
use gimli::constants as dw;
use gimli::{AttributeSpecification, Reader as _};

use super::abbrevs::{Abbrev, Table, UnitAbbrevs, NO_ABBREV};
use super::layout::Layout;
use super::locals;
use super::plan::{self, Purpose};
use super::scope;
use crate::reader::Reader;

/// The declarations met by one worker in units of one encoding (plans and
/// layouts depend on the sizes of addresses and offsets).
struct Declarations {
    encoding: gimli::Encoding,
    table: Table,
    /// By the declaration's bytes in `.debug_abbrev` (all but the code):
    /// its index in `table`.
    by_bytes: HashMap<Box<[u8]>, u32, FixedState>,
}

/// Once a worker has met this many distinct declarations of one encoding
/// they are forgotten before the next walk, so that memory stays bounded
/// whatever the inputs, one file or many in one process. A vmlinux has
/// about 8,500 (5,500 per worker with two), which cost 3.5 MB of peak RSS
/// on one worker; this bound keeps a worker under about 7 MB.
const MAX_DECLARATIONS: usize = 1 << 14;

impl Declarations {
    fn new(encoding: gimli::Encoding) -> Self {
        Declarations {
            encoding,
            table: Table::default(),
            by_bytes: HashMap::default(),
        }
    }

    /// The index of the declaration `bytes` (tag to terminating specs,
    /// as in `.debug_abbrev`), already parsed into `tag`, `has_children`
    /// and `specs`, deriving what the walker needs if it is new.
    fn intern(
        &mut self,
        bytes: &[u8],
        tag: dw::DwTag,
        has_children: bool,
        specs: &[AttributeSpecification],
    ) -> u32 {
        if let Some(&id) = self.by_bytes.get(bytes) {
            // Met before under bytes `declaration_len` did not measure.
            return id;
        }
        let table = &mut self.table;
        let id = table.abbrevs.len() as u32;
        let spec_start = table.specs.len() as u32;
        table.specs.extend_from_slice(specs);
        let mut plan = |purpose| {
            plan::plan(
                specs,
                has_children,
                purpose,
                self.encoding,
                &mut table.steps,
            )
        };
        let plans = [plan(Purpose::Visit), plan(Purpose::Skip)];
        table.abbrevs.push(Abbrev {
            layout: Layout::of(tag, has_children, specs, self.encoding),
            tag,
            has_children,
            wanted_in: scope::wanted_in(tag, locals::never_static(specs)),
            plans,
            specs: (spec_start, specs.len() as u32),
        });
        self.by_bytes.insert(bytes.into(), id);
        id
    }
}

/// What one worker thread keeps between the units it walks.
#[derive(Default)]
pub(super) struct Worker {
    by_encoding: Vec<Declarations>,
    /// Tables of units walked before, for the next units to reuse.
    spare: Vec<UnitAbbrevs>,
    /// What every unit's `gimli::Unit` gets for abbreviations: the walker
    /// reads its own, and gimli only needs some for calls that never look
    /// at them.
    no_abbreviations: Option<Arc<gimli::Abbreviations>>,
}

thread_local! {
    static WORKER: RefCell<Worker> = RefCell::new(Worker::default());
}

impl Worker {
    /// Runs `walk` with this thread's worker state.
    pub(super) fn with<T>(walk: impl FnOnce(&mut Worker) -> T) -> T {
        // Taken out rather than borrowed, so that a nested walk (none
        // today) would start afresh instead of panicking.
        let mut worker = WORKER.with(|cell| std::mem::take(&mut *cell.borrow_mut()));
        for declarations in &mut worker.by_encoding {
            if declarations.table.abbrevs.len() > MAX_DECLARATIONS {
                *declarations = Declarations::new(declarations.encoding);
            }
        }
        let result = walk(&mut worker);
        WORKER.with(|cell| *cell.borrow_mut() = worker);
        result
    }

    /// Keeps `unit`'s storage for the next unit.
    pub(super) fn recycle(&mut self, unit: UnitAbbrevs) {
        // One is all a worker walking units one by one needs.
        if self.spare.is_empty() {
            self.spare.push(unit);
        }
    }

    /// An empty gimli abbreviation table, shared.
    pub(super) fn no_abbreviations(&mut self) -> Arc<gimli::Abbreviations> {
        self.no_abbreviations
            .get_or_insert_with(Default::default)
            .clone()
    }

    /// Parses the abbreviation table at `offset` in `debug_abbrev` for a
    /// unit of `encoding`, with gimli's errors for a malformed one.
    pub(super) fn parse(
        &mut self,
        debug_abbrev: Reader<'_>,
        offset: gimli::DebugAbbrevOffset,
        encoding: gimli::Encoding,
    ) -> gimli::Result<UnitAbbrevs> {
        let declarations = match self
            .by_encoding
            .iter()
            .position(|declarations| declarations.encoding == encoding)
        {
            Some(index) => self.by_encoding.get_mut(index),
            None => {
                self.by_encoding.push(Declarations::new(encoding));
                self.by_encoding.last_mut()
            }
        };
        let mut unit = self.spare.pop().unwrap_or_default();
        unit.table.clear();
        unit.sparse.clear();
        // Code 0 is the null entry, never a declaration's.
        unit.table.abbrevs.push(NO_ABBREV);
        let Some(declarations) = declarations else {
            return Ok(unit);
        };
        let mut input = debug_abbrev;
        input.skip(offset.0)?;
        let mut specs = Vec::new();
        // As gimli does: a table may end without its null entry.
        while !input.is_empty() {
            let code = input.read_uleb128()?;
            if code == 0 {
                break;
            }
            let start = input.slice();
            // A declaration met before is only measured and looked up:
            // bytes that gimli parsed once parse the same way again.
            let known = declaration_len(start)
                .and_then(|len| Some((len, *declarations.by_bytes.get(start.get(..len)?)?)));
            let id = match known {
                Some((len, id)) => {
                    input.skip(len)?;
                    id
                }
                None => {
                    let tag = input.read_uleb128_u16()?;
                    if tag == 0 {
                        return Err(gimli::Error::AbbreviationTagZero);
                    }
                    let has_children = match dw::DwChildren(input.read_u8()?) {
                        dw::DW_CHILDREN_no => false,
                        dw::DW_CHILDREN_yes => true,
                        other => return Err(gimli::Error::InvalidAbbreviationChildren(other)),
                    };
                    specs.clear();
                    loop {
                        let name = input.read_uleb128_u16()?;
                        let form = input.read_uleb128_u16()?;
                        match (name, form) {
                            (0, 0) => break,
                            (0, _) => return Err(gimli::Error::AttributeNameZero),
                            (_, 0) => return Err(gimli::Error::AttributeFormZero),
                            _ => {}
                        }
                        let form = dw::DwForm(form);
                        let implicit = match form {
                            dw::DW_FORM_implicit_const => Some(input.read_sleb128()?),
                            _ => None,
                        };
                        specs.push(AttributeSpecification::new(dw::DwAt(name), form, implicit));
                    }
                    let bytes = start.get(..start.len() - input.len()).unwrap_or(start);
                    declarations.intern(bytes, dw::DwTag(tag), has_children, &specs)
                }
            };
            if unit.insert(code, &declarations.table, id).is_err() {
                return Err(gimli::Error::DuplicateAbbreviationCode(code));
            }
        }
        Ok(unit)
    }
}

/// The length of the declaration (tag to terminating null spec) at the
/// start of `bytes`, measured without decoding it; `None` for bytes that
/// end first or LEB128 numbers too long to be gimli's. Only a hint for
/// looking the bytes up: what is not found is parsed by gimli's rules.
fn declaration_len(bytes: &[u8]) -> Option<usize> {
    // The tag, then the children byte.
    let (_, mut at) = leb(bytes, 0)?;
    at += 1;
    loop {
        let (name, next) = leb(bytes, at)?;
        let (form, next) = leb(bytes, next)?;
        at = next;
        match (name, form) {
            (0, 0) => return (at <= bytes.len()).then_some(at),
            (_, form) if form == u64::from(dw::DW_FORM_implicit_const.0) => {
                at = leb(bytes, at)?.1;
            }
            _ => {}
        }
    }
}

/// The LEB128 number at `at` in `bytes`, as long as it fits 64 bits, and
/// where the next one starts.
#[inline(always)]
fn leb(bytes: &[u8], at: usize) -> Option<(u64, usize)> {
    let rest = bytes.get(at..)?;
    // Names and forms below 128, nearly all of them, take one byte.
    match rest.first() {
        Some(&byte) if byte < 0x80 => return Some((u64::from(byte), at + 1)),
        None => return None,
        _ => {}
    }
    let mut value = 0u64;
    for (index, &byte) in rest.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            return Some((value, at + index + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENCODING: gimli::Encoding = gimli::Encoding {
        format: gimli::Format::Dwarf32,
        version: 5,
        address_size: 8,
    };

    fn parse(bytes: &[u8]) -> gimli::Result<UnitAbbrevs> {
        let reader = Reader::new(bytes, gimli::RunTimeEndian::Little);
        Worker::default().parse(reader, gimli::DebugAbbrevOffset(0), ENCODING)
    }

    /// The same bytes give gimli's error, or gimli's abbreviations, read
    /// afresh and by a worker that has read `primed` before (whose
    /// declarations it only looks up).
    fn agrees_with_gimli(bytes: &[u8]) {
        agrees_with_gimli_after(&[], bytes);
    }

    fn agrees_with_gimli_after(primed: &[u8], bytes: &[u8]) {
        let reader = Reader::new(bytes, gimli::RunTimeEndian::Little);
        let expected = gimli::DebugAbbrev::from(reader).abbreviations(gimli::DebugAbbrevOffset(0));
        let mut worker = Worker::default();
        let primer = Reader::new(primed, gimli::RunTimeEndian::Little);
        worker
            .parse(primer, gimli::DebugAbbrevOffset(0), ENCODING)
            .expect("primer parses");
        let got = worker.parse(reader, gimli::DebugAbbrevOffset(0), ENCODING);
        match (expected, got) {
            (Err(expected), Err(got)) => assert_eq!(expected, got, "{bytes:?}"),
            (Ok(expected), Ok(unit)) => {
                for code in 0..300u64 {
                    let ours = unit.get(code);
                    match (expected.get(code), ours) {
                        (None, None) => {}
                        (Some(theirs), Some(ours)) => {
                            assert_eq!(theirs.tag(), ours.tag);
                            assert_eq!(theirs.has_children(), ours.has_children);
                            assert_eq!(theirs.attributes(), unit.specs(ours));
                        }
                        (theirs, ours) => panic!("code {code}: {theirs:?} vs {}", ours.is_some()),
                    }
                }
            }
            (expected, got) => panic!("{bytes:?}: gimli {expected:?}, ours {:?}", got.err()),
        }
    }

    #[test]
    fn malformed_tables_give_gimli_errors() {
        let member = [dw::DW_TAG_member.0 as u8, 0, 0x03, 0x08, 0x49, 0x13, 0, 0];
        let mut good = vec![1u8];
        good.extend(member);
        good.push(2);
        good.extend(member);
        // implicit_const with a negative value, and a two-byte tag.
        good.extend([3, 0x80, 0x40, 1, 0x0b, 0x21, 0x7f, 0, 0, 0]);
        agrees_with_gimli(&good);
        // Without the final null entry.
        agrees_with_gimli(&good[..good.len() - 1]);
        // Every truncation, and every single byte changed to a few values.
        for len in 0..good.len() {
            agrees_with_gimli(&good[..len]);
            agrees_with_gimli_after(&good, &good[..len]);
        }
        for at in 0..good.len() {
            for value in [0u8, 1, 2, 0x21, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[at] = value;
                agrees_with_gimli(&bad);
                agrees_with_gimli_after(&good, &bad);
            }
        }
        // The named errors.
        assert!(matches!(
            parse(&[1, 0x0d, 0, 0, 0, 1, 0x0d, 0, 0, 0, 0]),
            Err(gimli::Error::DuplicateAbbreviationCode(1))
        ));
        assert!(matches!(
            parse(&[1, 0, 0, 0, 0]),
            Err(gimli::Error::AbbreviationTagZero)
        ));
        assert!(matches!(
            parse(&[1, 0x0d, 2, 0, 0]),
            Err(gimli::Error::InvalidAbbreviationChildren(_))
        ));
        assert!(matches!(
            parse(&[1, 0x0d, 0, 0, 0x08, 0, 0]),
            Err(gimli::Error::AttributeNameZero)
        ));
        assert!(matches!(
            parse(&[1, 0x0d, 0, 0x03, 0, 0, 0]),
            Err(gimli::Error::AttributeFormZero)
        ));
        // Large and sparse codes.
        let mut sparse = vec![0x80, 0x80, 0x80, 0x01];
        sparse.extend(member);
        sparse.push(5);
        sparse.extend(member);
        sparse.extend([0x80, 0x80, 0x80, 0x01]);
        sparse.extend(member);
        agrees_with_gimli(&sparse[..sparse.len() - 9]);
        agrees_with_gimli(&sparse);
    }

    /// Units with the same declarations share them, under other codes.
    #[test]
    fn declarations_are_shared_between_units() {
        let member = [dw::DW_TAG_member.0 as u8, 0, 0x03, 0x08, 0x49, 0x13, 0, 0];
        let pointer = [dw::DW_TAG_pointer_type.0 as u8, 0, 0x49, 0x13, 0, 0];
        let mut first = vec![1u8];
        first.extend(member);
        first.push(2);
        first.extend(pointer);
        let mut second = vec![1u8];
        second.extend(pointer);
        second.push(7);
        second.extend(member);
        second.push(0);
        let mut worker = Worker::default();
        let read = |worker: &mut Worker, bytes: &[u8], encoding| {
            let reader = Reader::new(bytes, gimli::RunTimeEndian::Little);
            worker
                .parse(reader, gimli::DebugAbbrevOffset(0), encoding)
                .expect("parses")
        };
        let a = read(&mut worker, &first, ENCODING);
        let b = read(&mut worker, &second, ENCODING);
        let tags = |unit: &UnitAbbrevs, codes: &[u64]| -> Vec<_> {
            codes
                .iter()
                .map(|&code| unit.get(code).map(|abbrev| abbrev.tag))
                .collect()
        };
        assert_eq!(tags(&a, &[1, 2]), tags(&b, &[7, 1]));
        assert_eq!(tags(&b, &[0, 2, 8]), [None, None, None]);
        let [declarations] = &worker.by_encoding[..] else {
            panic!("one encoding")
        };
        assert_eq!(declarations.table.abbrevs.len(), 2);
        // A recycled table forgets its codes.
        worker.recycle(a);
        let c = read(&mut worker, &second, ENCODING);
        assert_eq!(tags(&c, &[1, 2, 7]), tags(&b, &[1, 2, 7]));
        // Another encoding has its own declarations: sizes differ.
        let dwarf4 = gimli::Encoding {
            version: 4,
            ..ENCODING
        };
        read(&mut worker, &first, dwarf4);
        assert_eq!(worker.by_encoding.len(), 2);
    }
}
