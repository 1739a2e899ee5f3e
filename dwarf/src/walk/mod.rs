//! Walking one compilation unit's DIE tree into a [`CuModel`].
//!
//! One forward pass over the unit's DIE bytes (no tree building): the
//! commonest DIEs (members, pointers, typedefs, aggregates, ...) are read
//! at byte offsets worked out once per abbreviation (`layout.rs`), any
//! other DIE's wanted attributes are decoded by a plan made once per
//! abbreviation (`plan.rs`, run by `attrs.rs`), everything else is skipped
//! undecoded, and subtrees that cannot contribute to BTF (inlined copies,
//! call sites, most of a function body) are jumped over through
//! `DW_AT_sibling` when the compiler gave one. Facts that need another DIE
//! (`DW_AT_abstract_origin`, `DW_AT_specification`, an enum's underlying
//! type, a DWARF 4 bitfield's storage size) are settled in `resolve.rs` once
//! the whole unit has been seen, so forward references cost nothing.
//!
//! The modules, each depending only on those above it (no cycles; a test
//! in `tests/integration/module_cycles.rs` keeps it so):
//! - `rules.rs`: pure DWARF rules (type tags, constant forms, bounds,
//!   DWARF 4 bit offsets, languages); `location.rs`, `locals.rs`: what a
//!   location expression or a variable's declaration says.
//! - `plan.rs`: which attributes are wanted and how each form is read;
//!   `layout.rs`: the fixed byte layout of the commonest declarations.
//! - `abbrevs.rs`: a unit's abbreviations with what was derived from each;
//!   `abbrev_cache.rs`: the per-worker cache that parses and shares them.
//! - `entries.rs`: the cursor over a unit's DIE bytes; `attrs.rs`: one
//!   DIE's wanted attributes, read by its plan.
//! - `pending.rs`: functions, variables, enums and bitfields recorded for
//!   the unit's end; `scope.rs`: an open DIE's `Scope` and which
//!   children it wants; `offset_table.rs`, `node_ids.rs`: tables by DIE
//!   offset.
//! - This file: the `Walker` and its main loop, which for each DIE takes
//!   the fast path (`fixed.rs`) or the general one (`visit.rs`), pushes the
//!   scope its children open and closes it when they end (`close.rs`);
//!   then `resolve.rs` settles what waited and makes the [`CuModel`].
//!   Those four files add methods to the `Walker` and are used by no one.

mod abbrev_cache;
mod abbrevs;
mod attrs;
mod close;
mod entries;
mod fixed;
mod layout;
mod locals;
mod location;
mod node_ids;
mod offset_table;
mod pending;
mod plan;
mod resolve;
mod rules;
mod scope;
mod visit;

pub use self::location::{
    aggregates_use_two_registers, entry_register_params, nr_register_params, register_params,
};

use bumpalo::Bump;
use gimli::constants as dw;

use crate::elf::{Dwarf, SupDwarf, UnitHeader};
use crate::error::{Error, ErrorKind, Result};
use crate::model::{CuModel, Language, Member, Node, NodeId, Param, TypeRef};
use crate::reader::Reader;
use crate::strings::{StringError, Strings};

use self::abbrev_cache::Worker;
use self::abbrevs::UnitAbbrevs;
use self::attrs::Attrs;
use self::entries::Entries;
use self::node_ids::NodeIds;
use self::offset_table::{OffsetMap, OffsetTable};
use self::pending::{
    ParamOrigin, PendingBitfield, PendingEnum, RawFunction, RawParam, RawVariable,
};
use self::rules::{language, Value};
use self::scope::{Scope, Scopes};

/// Walks one unit of `dwarf` into a model whose slices live in `arena`.
///
/// Errors name the file, `.debug_info` and the DIE offset (section
/// offset) where reading failed or met something unsupported, such as a
/// `DW_FORM_ref_addr` into another unit (see [`walk_units`]).
pub fn walk_unit<'input, 'arena>(
    dwarf: &Dwarf<'input>,
    header: &UnitHeader<'input>,
    arena: &'arena Bump,
) -> Result<CuModel<'input, 'arena>> {
    walk(dwarf, std::slice::from_ref(header), arena, None, &[], false)
}

/// Like [`walk_unit`], but the strings that sit inside `.debug_info`
/// itself (`DW_FORM_string`, which gcc uses for short and unshared names)
/// are copied into `names`. The model, and what is made of it, then
/// borrows nothing of the unit's bytes, so their pages can be given back
/// once the unit is walked ([`crate::ElfFile::release_resident_pages`]):
/// the names would otherwise bring most of a vmlinux's `.debug_info` back
/// in when the output is written, one short string per page.
///
/// `names` is borrowed for as long as the file's own strings, so it must be
/// created before the [`crate::ElfFile`].
pub fn walk_unit_copying_inline_names<'input, 'arena>(
    dwarf: &Dwarf<'input>,
    header: &UnitHeader<'input>,
    arena: &'arena Bump,
    names: &'input Bump,
) -> Result<CuModel<'input, 'arena>> {
    walk_unit_keeping_inline_names(dwarf, header, arena, &InlineNames::new(names), &[])
}

/// [`walk_unit_copying_inline_names`] with the copies kept in `names`,
/// which copies each short name once however many units it walks.
///
/// A unit whose `DW_AT_language` is one of `excluded` is read no further
/// than its unit DIE, as pahole's loader does with the units its
/// `--lang_exclude` names: its model has the unit's name and language and
/// nothing else, and what its other DIEs hold, well-formed or not, is
/// never looked at.
pub fn walk_unit_keeping_inline_names<'input, 'arena>(
    dwarf: &Dwarf<'input>,
    header: &UnitHeader<'input>,
    arena: &'arena Bump,
    names: &InlineNames<'input>,
    excluded: &[Language],
) -> Result<CuModel<'input, 'arena>> {
    walk(
        dwarf,
        std::slice::from_ref(header),
        arena,
        Some(names),
        excluded,
        false,
    )
}

/// Where the walker copies the names that sit in `.debug_info` itself
/// (`DW_FORM_string`): an arena, and the short names already in it. gcc
/// writes a name there when it is no longer than a `.debug_str` offset, so
/// the same few thousand names of 1 to 3 bytes (`id`, `len`, `dev`...)
/// come back in every unit: copying each once per worker rather than once
/// per occurrence took 2.1 MB off the peak on Debian 6.1's vmlinux.
/// Not `Sync`: one per worker.
#[derive(Debug)]
pub struct InlineNames<'input> {
    arena: &'input Bump,
    /// The names of at most [`InlineNames::SHORT`] bytes copied, by their
    /// bytes and length packed in a number.
    short:
        std::cell::RefCell<std::collections::HashMap<u64, &'input str, foldhash::fast::FixedState>>,
}

impl<'input> InlineNames<'input> {
    /// Names up to this long are copied once.
    const SHORT: usize = 7;

    /// Copies names into `arena`.
    pub fn new(arena: &'input Bump) -> Self {
        InlineNames {
            arena,
            short: Default::default(),
        }
    }

    /// `text`, copied into the arena (once, if short).
    fn keep(&self, text: &str) -> &'input str {
        if text.len() > Self::SHORT {
            return self.arena.alloc_str(text);
        }
        let key = text
            .bytes()
            .enumerate()
            .fold(text.len() as u64, |key, (i, byte)| {
                key | u64::from(byte) << (8 * (i + 1))
            });
        let mut short = self.short.borrow_mut();
        if let Some(&kept) = short.get(&key) {
            return kept;
        }
        let kept = self.arena.alloc_str(text);
        short.insert(key, kept);
        kept
    }
}

/// Walks several units into one model, as if they were one unit: what LTO
/// output needs, where DIEs refer to other units' DIEs (`DW_FORM_ref_addr`).
/// References into units that are not in `headers` are still refused.
/// The model's `offset`, `name` and `language` are the first compile
/// unit's.
///
/// With a supplementary file ([`crate::ElfFile::dwarf_with_sup`]), its
/// units that `headers` import (`DW_TAG_imported_unit`) or refer to, and
/// those these reach in turn, are walked too, after `headers`: what
/// `dwz -m` moved there. Its other units are not.
pub fn walk_units<'input, 'arena>(
    dwarf: &Dwarf<'input>,
    headers: &[UnitHeader<'input>],
    arena: &'arena Bump,
) -> Result<CuModel<'input, 'arena>> {
    walk(dwarf, headers, arena, None, &[], true)
}

fn walk<'input, 'arena>(
    dwarf: &Dwarf<'input>,
    headers: &[UnitHeader<'input>],
    arena: &'arena Bump,
    inline_names: Option<&InlineNames<'input>>,
    excluded: &[Language],
    together: bool,
) -> Result<CuModel<'input, 'arena>> {
    Worker::with(|worker| {
        walk_with(
            worker,
            dwarf,
            headers,
            arena,
            inline_names,
            excluded,
            together,
        )
    })
}

fn walk_with<'input, 'arena>(
    worker: &mut Worker,
    dwarf: &Dwarf<'input>,
    headers: &[UnitHeader<'input>],
    arena: &'arena Bump,
    inline_names: Option<&InlineNames<'input>>,
    excluded: &[Language],
    together: bool,
) -> Result<CuModel<'input, 'arena>> {
    let mut units = Vec::with_capacity(headers.len());
    let mut codes = Vec::with_capacity(headers.len());
    for header in headers {
        let unit_offset = header.offset().0 as u64;
        let (unit, unit_codes) = open_unit(&dwarf.gimli, *header, worker).map_err(|err| {
            Error::new(dwarf.path(), ErrorKind::Dwarf(err)).at(".debug_info", unit_offset)
        })?;
        units.push(unit);
        codes.push(unit_codes);
    }
    let Some(first) = units.first() else {
        return Err(Error::new(
            dwarf.path(),
            ErrorKind::InvalidDwarf("no unit to walk".into()),
        ));
    };
    let mut spans: Vec<(u64, u64)> = units
        .iter()
        .map(|unit| {
            let start = unit.header.offset().0 as u64;
            (start, start + unit.header.length_including_self() as u64)
        })
        .collect();
    // Walked together, the units may reach into the supplementary file:
    // every one of its units is a span (in the offsets above `SUP_BASE`),
    // and those the walked units import or refer to are walked after them.
    let sup = match (&dwarf.sup, dwarf.gimli.sup()) {
        (Some(sup), Some(sup_gimli)) if together => {
            if let Some(&(_, end)) = spans.iter().max_by_key(|span| span.1) {
                if end > SUP_BASE {
                    return Err(Error::new(
                        dwarf.path(),
                        ErrorKind::UnsupportedDwarf(format!(
                            ".debug_info of {end:#x} bytes with a supplementary file"
                        )),
                    ));
                }
            }
            spans.extend(sup.units.iter().map(|header| {
                let start = SUP_BASE + header.offset().0 as u64;
                (start, start + header.length_including_self() as u64)
            }));
            Some((sup, sup_gimli))
        }
        _ => None,
    };
    // The supplementary file's units are opened (abbreviations and unit
    // DIE) up front, so that they outlive the walker that borrows them;
    // only those reached are walked.
    let mut sup_units = Vec::new();
    let mut sup_codes = Vec::new();
    if let Some((sup, sup_gimli)) = sup {
        for header in &sup.units {
            let unit_offset = header.offset().0 as u64;
            let opened = open_unit(sup_gimli, *header, worker).map_err(|err| {
                Error::new(sup.path, ErrorKind::Dwarf(err)).at(".debug_info", unit_offset)
            });
            match opened {
                Ok((unit, unit_codes)) => {
                    sup_units.push(unit);
                    sup_codes.push(unit_codes);
                }
                Err(err) => {
                    for unit_codes in codes.into_iter().chain(sup_codes) {
                        worker.recycle(unit_codes);
                    }
                    return Err(err);
                }
            }
        }
    }
    let mut walker = Walker::new(dwarf, first, spans, arena);
    walker.inline_names = inline_names;
    walker.excluded = excluded;
    walker.follow_sup = sup.is_some();
    walker.sup_path = dwarf.sup.as_ref().map(|sup| sup.path);
    let mut walked = Ok(());
    for (unit, codes) in units.iter().zip(&codes) {
        walker.unit = unit;
        walker.unit_offset = unit.header.offset().0 as u64;
        walked = walker.walk(codes);
        if walked.is_err() {
            break;
        }
    }
    if let (Ok(()), Some((sup, sup_gimli))) = (&walked, sup) {
        walked = walker.walk_sup_units(&sup_units, &sup_codes, sup, sup_gimli);
    }
    let model = walked.and_then(|()| walker.finish());
    drop(units);
    drop(sup_units);
    for unit_codes in codes.into_iter().chain(sup_codes) {
        worker.recycle(unit_codes);
    }
    model
}

/// Where the supplementary file's `.debug_info` offsets start in the
/// walker's offsets: the main file's are below, and every offset the
/// walker keeps stays unique.
const SUP_BASE: u64 = 1 << 40;

impl<'a, 'input, 'arena> Walker<'a, 'input, 'arena> {
    /// Walks the supplementary file's units that the walked units reach
    /// (imported, or referred to), and those they reach in turn, each
    /// once, in section order per round: a loop, not recursion, so that
    /// chains of imports cost no stack.
    fn walk_sup_units(
        &mut self,
        units: &'a [gimli::Unit<Reader<'input>>],
        codes: &[UnitAbbrevs],
        sup: &'a SupDwarf<'input>,
        sup_gimli: &'a gimli::Dwarf<Reader<'input>>,
    ) -> Result<()> {
        let mut walked = vec![false; units.len()];
        // Unit start offsets, ascending (gimli lists them in order).
        let starts: Vec<u64> = units
            .iter()
            .map(|unit| unit.header.offset().0 as u64)
            .collect();
        self.dwarf = sup_gimli;
        self.strings = &sup.strings;
        self.in_sup = true;
        loop {
            let targets = std::mem::take(&mut self.sup_targets);
            let mut next: Vec<usize> = targets
                .iter()
                .filter_map(|&target| {
                    let offset = target.checked_sub(SUP_BASE)?;
                    let index = starts
                        .partition_point(|&start| start <= offset)
                        .checked_sub(1)?;
                    let unit = units.get(index)?;
                    let end =
                        unit.header.offset().0 as u64 + unit.header.length_including_self() as u64;
                    (offset < end).then_some(index)
                })
                .filter(|&index| !walked.get(index).copied().unwrap_or(true))
                .collect();
            if next.is_empty() {
                return Ok(());
            }
            next.sort_unstable();
            next.dedup();
            for index in next {
                let (Some(unit), Some(unit_codes)) = (units.get(index), codes.get(index)) else {
                    continue;
                };
                if let Some(flag) = walked.get_mut(index) {
                    *flag = true;
                }
                self.unit = unit;
                self.unit_offset = SUP_BASE + unit.header.offset().0 as u64;
                self.walk(unit_codes)?;
            }
        }
    }
}

/// gimli's `Unit::new` without the line program: the walker never looks
/// at source lines, and parsing every unit's file table costs more than
/// reading its abbreviations. The unit DIE's bases and `DW_AT_low_pc`
/// (the base address of DWARF 4 location lists) are read as gimli does.
/// The unit's abbreviations are read into `worker` (see `abbrevs.rs`),
/// and the codes returned; gimli's table of the unit is left empty.
fn open_unit<'input>(
    dwarf: &gimli::Dwarf<Reader<'input>>,
    header: UnitHeader<'input>,
    worker: &mut Worker,
) -> gimli::Result<(gimli::Unit<Reader<'input>>, UnitAbbrevs)> {
    let encoding = header.encoding();
    let debug_abbrev = *gimli::Section::reader(&dwarf.debug_abbrev);
    let codes = worker.parse(debug_abbrev, header.debug_abbrev_offset(), encoding)?;
    let mut unit = gimli::Unit {
        abbreviations: worker.no_abbreviations(),
        name: None,
        comp_dir: None,
        low_pc: 0,
        str_offsets_base: gimli::DebugStrOffsetsBase::default_for_encoding_and_file(
            encoding,
            dwarf.file_type,
        ),
        addr_base: gimli::DebugAddrBase(0),
        loclists_base: gimli::DebugLocListsBase::default_for_encoding_and_file(
            encoding,
            dwarf.file_type,
        ),
        rnglists_base: gimli::DebugRngListsBase::default_for_encoding_and_file(
            encoding,
            dwarf.file_type,
        ),
        line_program: None,
        dwo_id: match header.type_() {
            gimli::UnitType::Skeleton(id) | gimli::UnitType::SplitCompilation(id) => Some(id),
            _ => None,
        },
        header,
    };
    let mut low_pc = None;
    {
        // What `EntriesRaw::read_abbreviation` does, on our table.
        let root_offset = unit.header.root_offset();
        let mut input = unit.header.range_from(root_offset..)?;
        let code = gimli::Reader::read_uleb128(&mut input)?;
        if code == 0 {
            return Err(gimli::Error::MissingUnitDie);
        }
        let root = codes
            .get(code)
            .ok_or(gimli::Error::InvalidAbbreviationCode(code))?;
        let mut entries = gimli::EntriesRaw::new(input, encoding, &unit.abbreviations, root_offset);
        for spec in codes.specs(root) {
            let value = entries.read_attribute(*spec)?.value();
            match (spec.name(), value) {
                (dw::DW_AT_low_pc, value) => low_pc = Some(value),
                (dw::DW_AT_str_offsets_base, gimli::AttributeValue::DebugStrOffsetsBase(base)) => {
                    unit.str_offsets_base = base;
                }
                (
                    dw::DW_AT_addr_base | dw::DW_AT_GNU_addr_base,
                    gimli::AttributeValue::DebugAddrBase(base),
                ) => unit.addr_base = base,
                (dw::DW_AT_loclists_base, gimli::AttributeValue::DebugLocListsBase(base)) => {
                    unit.loclists_base = base;
                }
                (
                    dw::DW_AT_rnglists_base | dw::DW_AT_GNU_ranges_base,
                    gimli::AttributeValue::DebugRngListsBase(base),
                ) => unit.rnglists_base = base,
                (dw::DW_AT_GNU_dwo_id, gimli::AttributeValue::DwoId(id)) => {
                    unit.dwo_id.get_or_insert(id);
                }
                _ => {}
            }
        }
    }
    if let Some(value) = low_pc {
        if let Some(address) = dwarf.attr_address(&unit, value)? {
            unit.low_pc = address;
        }
    }
    Ok((unit, codes))
}

/// The state of one unit's walk.
struct Walker<'a, 'input, 'arena> {
    dwarf: &'a gimli::Dwarf<Reader<'input>>,
    strings: &'a Strings<'input>,
    unit: &'a gimli::Unit<Reader<'input>>,
    arena: &'arena Bump,
    /// Where `DW_FORM_string` values are copied, when the caller wants the
    /// model not to borrow `.debug_info`.
    inline_names: Option<&'a InlineNames<'input>>,
    /// Languages whose units are read only up to their unit DIE.
    excluded: &'a [Language],
    path: &'input std::path::Path,
    big_endian: bool,
    register_params: &'static [u16],
    /// Offset of the current unit in `.debug_info`: every offset the
    /// walker keeps is a section offset, so that several units can share
    /// one model.
    unit_offset: u64,
    /// Section offset ranges of the units being walked together, by start
    /// offset: a reference out of the current unit (LTO output has one for
    /// every few DIEs) finds its unit by a binary search.
    spans: Vec<(u64, u64)>,
    /// Offset of the first unit walked, which the model is named after.
    first_unit_offset: u64,
    /// Whether a unit DIE gave the model its name and language yet.
    root_seen: bool,
    /// Whether that unit DIE was a partial unit's (dwz's), which a
    /// compile unit's replaces.
    root_partial: bool,
    /// Whether references into the supplementary file are followed (units
    /// walked together), rather than refused as cross-unit references.
    follow_sup: bool,
    /// Whether the unit being walked is the supplementary file's.
    in_sup: bool,
    /// The supplementary file, for errors in its units.
    sup_path: Option<&'input std::path::Path>,
    /// Offsets (from `SUP_BASE`) in the supplementary file that the walked
    /// units import or refer to: the units to walk next.
    sup_targets: Vec<u64>,

    name: Option<&'input str>,
    language: Language,
    producer_clang: bool,
    nodes: Vec<Node<'input, 'arena>>,
    /// Node id of every type DIE referenced or visited, by unit offset.
    ids: NodeIds,
    stack: Scopes<'input, 'arena>,
    /// Members of the open aggregates, innermost last: one list reused for
    /// the whole unit instead of one growing list per aggregate (nested
    /// aggregates close before their parent takes more members).
    open_members: Vec<Member<'input, 'arena>>,
    /// Parameters of the open function types, innermost last, likewise.
    open_params: Vec<Param<'input, 'arena>>,
    /// Parameters of the open functions, innermost last, likewise.
    open_function_params: Vec<RawParam<'input, 'arena>>,
    functions: Vec<RawFunction<'input, 'arena>>,
    function_by_offset: OffsetTable<usize>,
    /// Every formal parameter of a subprogram: name and type, for
    /// parameters that only give `DW_AT_abstract_origin`.
    param_by_offset: OffsetTable<ParamOrigin<'input>>,
    /// Location facts of concrete parameters, by their abstract origin.
    /// pahole 1436daf's location facts of concrete parameters, merged in
    /// DIE order, by their abstract origin.
    shared_entries: OffsetMap<crate::model::ParamEntry>,
    variables: Vec<RawVariable<'input, 'arena>>,
    /// The expressions of the location list being looked at: one buffer
    /// for all parameters' lists.
    location_exprs: Vec<Reader<'input>>,
    variable_by_offset: OffsetTable<usize>,
    enums: Vec<PendingEnum<'input, 'arena>>,
    bitfields: Vec<PendingBitfield>,
    die_count: u64,
    /// Offset of the DIE being read, the referrer of the nodes it makes.
    current_die: u64,
    /// Whether a name that is no C identifier was read (see `note_required_name`).
    odd_names: bool,
    /// Whether a `btf_decl_tag` annotation was read (the model's
    /// `decl_tags`).
    decl_tags: bool,
    /// For each node: the offset of its DIE (the model's `node_offsets`).
    node_offsets: Vec<u64>,
    /// Nodes a reference made before their DIE was read, with the DIE
    /// that referred to them: who to name if no type DIE is read there.
    first_refs: Vec<(u32, u64)>,
}

impl<'a, 'input, 'arena> Walker<'a, 'input, 'arena> {
    fn new(
        dwarf: &'a Dwarf<'input>,
        unit: &'a gimli::Unit<Reader<'input>>,
        spans: Vec<(u64, u64)>,
        arena: &'arena Bump,
    ) -> Self {
        // Sized from the units' length so that the tables do not grow
        // (and copy) DIE by DIE: the kernel's units have a type node per
        // 36 to 52 bytes of DIEs (10% and 50% of units). Capacity that is
        // never written costs no memory.
        let length: u64 = spans.iter().map(|(start, end)| end - start).sum();
        let expected_nodes = usize::try_from(length / 32).unwrap_or(0);
        let ids = NodeIds::new(&spans, expected_nodes);
        // Likewise for functions, their parameters and variables, whose
        // lists would otherwise be copied as they grow (vmlinux has a
        // function per 740 bytes, a parameter per 400 and a variable per
        // 2.4 KB on average; twice that is reserved).
        let expected = |bytes_each: u64| usize::try_from(length / bytes_each).unwrap_or(0);
        let mut spans = spans;
        spans.sort_unstable();
        Walker {
            dwarf: &dwarf.gimli,
            strings: &dwarf.strings,
            unit,
            arena,
            inline_names: None,
            excluded: &[],
            path: dwarf.path(),
            big_endian: dwarf.is_big_endian(),
            register_params: location::register_params(dwarf.machine()),
            unit_offset: unit.header.offset().0 as u64,
            spans,
            first_unit_offset: unit.header.offset().0 as u64,
            root_seen: false,
            root_partial: false,
            follow_sup: false,
            in_sup: false,
            sup_path: None,
            sup_targets: Vec::new(),
            name: None,
            language: Language(0),
            producer_clang: false,
            nodes: Vec::with_capacity(expected_nodes),
            node_offsets: Vec::with_capacity(expected_nodes),
            first_refs: Vec::new(),
            current_die: 0,
            odd_names: false,
            decl_tags: false,
            ids,
            stack: Scopes::default(),
            open_members: Vec::new(),
            open_params: Vec::new(),
            open_function_params: Vec::new(),
            functions: Vec::with_capacity(expected(370)),
            function_by_offset: OffsetTable::with_capacity(expected(370)),
            param_by_offset: OffsetTable::with_capacity(expected(200)),
            shared_entries: OffsetMap::default(),
            variables: Vec::with_capacity(expected(1200)),
            location_exprs: Vec::new(),
            variable_by_offset: OffsetTable::with_capacity(expected(1200)),
            enums: Vec::new(),
            bitfields: Vec::new(),
            die_count: 0,
        }
    }

    /// An error at a section offset: the supplementary file's above
    /// `SUP_BASE`.
    fn error(&self, kind: ErrorKind, offset: u64) -> Error {
        let unit = self.unit_offset;
        match (offset.checked_sub(SUP_BASE), self.sup_path) {
            (Some(offset), Some(sup)) => Error::new(sup, kind)
                .at(".debug_info", offset)
                .in_unit(unit.saturating_sub(SUP_BASE)),
            _ => Error::new(self.path, kind)
                .at(".debug_info", offset)
                .in_unit(unit),
        }
    }

    fn gimli_error(&self, err: gimli::Error, offset: u64) -> Error {
        self.error(ErrorKind::Dwarf(err), offset)
    }

    fn walk(&mut self, abbrevs: &UnitAbbrevs) -> Result<()> {
        let unit = self.unit;
        let unit_offset = self.unit_offset;
        let mut entries =
            Entries::new(unit, abbrevs).map_err(|err| self.gimli_error(err, unit_offset))?;
        let mut attrs = Attrs::default();
        let mut root_seen = false;
        let mut root_offset = unit_offset;
        while !entries.is_empty() {
            let offset = unit_offset + entries.next_offset() as u64;
            let abbrev = entries
                .read_abbreviation()
                .map_err(|err| self.gimli_error(err, offset))?;
            let Some(abbrev) = abbrev else {
                // A null entry ends the innermost open list of children.
                if let Some(scope) = self.stack.pop() {
                    self.close(scope);
                }
                if self.stack.is_empty() {
                    self.check_unit_end(&entries, root_offset)?;
                    break;
                }
                continue;
            };
            self.die_count += 1;
            self.current_die = offset;
            let tag = abbrev.tag;
            if !root_seen {
                root_seen = true;
                root_offset = offset;
                attrs
                    .read(&mut entries, abbrev)
                    .map_err(|err| self.gimli_error(err, offset))?;
                self.visit_root(&attrs, offset, tag == dw::DW_TAG_partial_unit)?;
                // pahole's early CU filter: nothing past the unit DIE.
                if self.excluded.contains(&self.language) {
                    break;
                }
                if !abbrev.has_children {
                    self.check_unit_end(&entries, root_offset)?;
                    break;
                }
                self.stack.push(Scope::Unit);
                continue;
            }
            // A function body's variable whose abbreviation rules out a
            // static address would be read only to be dropped: its mask
            // says so (see `scope::wanted_in`).
            let wanted = self.stack.wants(abbrev.wanted_in);
            if wanted {
                if let Some(layout) = &abbrev.layout {
                    let before = entries.position();
                    if let Some(die) = entries.read_fixed(layout) {
                        let has_children = abbrev.has_children;
                        if self.visit_fixed(layout, die, offset, has_children)? {
                            continue;
                        }
                    }
                    entries.rewind(before);
                }
            } else {
                let sibling = attrs
                    .skip(&mut entries, abbrev)
                    .map_err(|err| self.gimli_error(err, offset))?;
                if abbrev.has_children {
                    match sibling {
                        // Only forward jumps: a bad sibling must not loop.
                        Some(sibling) if unit_offset + sibling.0 as u64 > offset => {
                            entries
                                .seek(sibling.0)
                                .map_err(|err| self.gimli_error(err, offset))?;
                        }
                        _ => self.stack.push(Scope::Skip),
                    }
                }
                continue;
            }
            attrs
                .read(&mut entries, abbrev)
                .map_err(|err| self.gimli_error(err, offset))?;
            let scope = self.visit(tag, &attrs, offset)?;
            if abbrev.has_children {
                self.stack.push(scope);
            } else {
                self.close(scope);
            }
        }
        // A truncated unit leaves scopes open: close them so that what was
        // read is not lost, the caller already got every DIE there was.
        while let Some(scope) = self.stack.pop() {
            self.close(scope);
        }
        Ok(())
    }

    /// The unit DIE's children ended (or it has none): DWARF (5, 7.5.1.1;
    /// 2-4 likewise) has the unit header followed by one DIE, the unit DIE,
    /// and its children, so whatever follows can only be padding. gimli
    /// reads zero bytes there as null entries; a DIE there is not part of
    /// the unit's tree and would be lost, so it is an error.
    fn check_unit_end(&self, entries: &Entries<'_, 'input>, unit_die: u64) -> Result<()> {
        let rest = entries.position();
        match rest.iter().position(|&byte| byte != 0) {
            None => Ok(()),
            Some(skip) => {
                let at = self.unit_offset + (entries.next_offset() + skip) as u64;
                Err(self.error(
                    ErrorKind::InvalidDwarf(format!(
                        "unit at {:#x}: bytes after the unit DIE ({unit_die:#x}) and its \
                         children ended, {} before the unit's end",
                        self.unit_offset,
                        rest.len() - skip
                    )),
                    at,
                ))
            }
        }
    }

    fn visit_root(&mut self, attrs: &Attrs<'input>, offset: u64, partial: bool) -> Result<()> {
        // The first compile unit names the model; a partial unit (dwz
        // puts them first) only until one comes.
        if self.root_seen && (partial || !self.root_partial) {
            return Ok(());
        }
        self.root_seen = true;
        self.root_partial = partial;
        self.name = self.string(attrs, dw::DW_AT_name, offset)?;
        self.language = match attrs.udata(dw::DW_AT_language) {
            Some(lang) => language(lang),
            None => Language(0),
        };
        // pahole's attr_producer_clang.
        self.producer_clang = self
            .string(attrs, dw::DW_AT_producer, offset)?
            .is_some_and(|producer| producer.contains("clang"));
        Ok(())
    }

    /// The string value of `name`, if present.
    fn string(
        &self,
        attrs: &Attrs<'input>,
        name: dw::DwAt,
        offset: u64,
    ) -> Result<Option<&'input str>> {
        match attrs.get(name) {
            Some(value) => self.string_at(value, offset).map(Some),
            None => Ok(None),
        }
    }

    /// The string a string-class attribute value names, with errors at the
    /// DIE at `offset`. Names in `.debug_str`, nearly all of them, are
    /// taken straight from the section, inline.
    #[inline(always)]
    fn string_at(&self, value: Value<'input>, offset: u64) -> Result<&'input str> {
        if let gimli::AttributeValue::DebugStrRef(strp) = value {
            if let Some(text) = self.strings.debug_str(strp.0) {
                return Ok(text);
            }
        }
        self.string_at_slowly(value, offset)
    }

    /// The `DW_AT_name` of a DIE, noted ([`Walker::note_required_name`]): a name
    /// in `.debug_str` says whether it is a C identifier as it is looked
    /// up, without a second look at its bytes.
    #[inline(always)]
    fn noted_name(&mut self, attrs: &Attrs<'input>, offset: u64) -> Result<Option<&'input str>> {
        match attrs.get(dw::DW_AT_name) {
            Some(value) => self.noted_name_at(value, offset).map(Some),
            None => Ok(None),
        }
    }

    /// [`Walker::string_at`] for a name, noted ([`Walker::noted_name`]).
    #[inline(always)]
    fn noted_name_at(&mut self, value: Value<'input>, offset: u64) -> Result<&'input str> {
        let strp = match value {
            gimli::AttributeValue::DebugStrRef(strp) => Some(strp.0),
            gimli::AttributeValue::DebugStrOffsetsIndex(index) => self.strx_offset(index.0),
            _ => None,
        };
        if let Some(text) = strp.and_then(|strp| self.debug_str_noted(strp)) {
            return Ok(text);
        }
        let text = self.string_at_slowly(value, offset)?;
        self.note_required_name(text);
        Ok(text)
    }

    /// The name at `strp` in `.debug_str`, noted as it is looked up: the
    /// lookup says whether it is a C identifier. `None` where the fast
    /// lookup cannot answer (see [`crate::strings::Strings::debug_str_name`]).
    #[inline(always)]
    pub(super) fn debug_str_noted(&mut self, strp: usize) -> Option<&'input str> {
        let (text, identifier) = self.strings.debug_str_name(strp)?;
        self.odd_names |= !identifier;
        Some(text)
    }

    /// The `.debug_str` offset that string `index` of the unit's string
    /// offsets table names (`DW_FORM_strx*`, clang's DWARF 5), read as
    /// gimli's `attr_string` reads it; `None` where gimli fails, for the
    /// slow path to report.
    #[inline]
    pub(super) fn strx_offset(&self, index: usize) -> Option<usize> {
        self.dwarf
            .string_offset(self.unit, gimli::DebugStrOffsetsIndex(index))
            .ok()
            .map(|offset| offset.0)
    }

    /// A name that must be there: an absent one is empty, and odd.
    #[inline(always)]
    fn required_name(&mut self, name: Option<&'input str>) -> &'input str {
        name.unwrap_or_else(|| {
            self.odd_names = true;
            ""
        })
    }

    /// [`Walker::string_at`] for the other cases.
    fn string_at_slowly(&self, value: Value<'input>, offset: u64) -> Result<&'input str> {
        if let gimli::AttributeValue::DebugStrRefSup(strp) = value {
            if self.in_sup {
                return Err(self.error(
                    ErrorKind::InvalidDwarf(format!(
                        "the supplementary file refers to string {:#x} of another \
                         supplementary file",
                        strp.0
                    )),
                    offset,
                ));
            }
            if self.dwarf.sup().is_none() {
                return Err(self.error(
                    ErrorKind::UnsupportedDwarf(format!(
                        "string {:#x} of the supplementary file, which was not read",
                        strp.0
                    )),
                    offset,
                ));
            }
        }
        match self.string_value(value) {
            Ok(text) => Ok(text),
            Err(StringError::Dwarf(err)) => Err(self.gimli_error(err, offset)),
            Err(StringError::NotUtf8) => Err(self.error(
                ErrorKind::InvalidDwarf("string is not UTF-8".into()),
                offset,
            )),
        }
    }

    /// The string a string-class attribute value names.
    fn string_value(&self, value: Value<'input>) -> std::result::Result<&'input str, StringError> {
        let text = self.strings.get(self.dwarf, self.unit, value)?;
        match (value, self.inline_names) {
            (gimli::AttributeValue::String(_), Some(names)) => Ok(names.keep(text)),
            _ => Ok(text),
        }
    }

    /// The node id of the type DIE at unit offset `target`, reserving one
    /// for a DIE not visited yet.
    #[inline(always)]
    fn node_id(&mut self, target: u64) -> NodeId {
        match self.ids.get(target) {
            Some(id) => id,
            None => self.new_node_id(target),
        }
    }

    /// [`Walker::node_id`] for a DIE not in the table yet (or out of it).
    fn new_node_id(&mut self, target: u64) -> NodeId {
        let nodes = &mut self.nodes;
        let offsets = &mut self.node_offsets;
        let first_refs = &mut self.first_refs;
        let referrer = self.current_die;
        self.ids.get_or_insert(target, || {
            let id = NodeId(nodes.len() as u32);
            // Stays a placeholder (tag 0, which no DIE has) if no type DIE
            // is read at `target`: `finish` refuses that.
            nodes.push(Node::Unsupported { tag: 0 });
            offsets.push(target);
            if target != referrer {
                first_refs.push((id.0, referrer));
            }
            id
        })
    }

    /// The unit offset a reference attribute points at. References out of
    /// the unit (`DW_FORM_ref_addr`) and to type units are refused: the
    /// model is per unit and must not silently lose the link.
    fn reference(
        &mut self,
        attrs: &Attrs<'input>,
        name: dw::DwAt,
        offset: u64,
    ) -> Result<Option<u64>> {
        match attrs.get(name) {
            None => Ok(None),
            Some(gimli::AttributeValue::UnitRef(target)) => {
                Ok(Some(self.unit_offset + target.0 as u64))
            }
            Some(gimli::AttributeValue::DebugInfoRef(target)) => {
                let target = target.0 as u64;
                // The supplementary file's own references stay in it.
                let target = if self.in_sup {
                    SUP_BASE + target
                } else {
                    target
                };
                self.cross_unit_target(target, name, "DW_FORM_ref_addr", offset)
                    .map(Some)
            }
            Some(gimli::AttributeValue::DebugInfoRefSup(target)) => {
                let form = "DW_FORM_GNU_ref_alt/DW_FORM_ref_sup";
                if self.in_sup {
                    return Err(self.error(
                        ErrorKind::InvalidDwarf(format!(
                            "{name} of the supplementary file refers to another \
                             supplementary file ({form} to {:#x})",
                            target.0
                        )),
                        offset,
                    ));
                }
                if self.dwarf.sup().is_none() {
                    return Err(self.error(
                        ErrorKind::UnsupportedDwarf(format!(
                            "{name} refers to the supplementary file ({form} to {:#x}), which \
                             was not read",
                            target.0
                        )),
                        offset,
                    ));
                }
                if !self.follow_sup {
                    return Err(self.error(
                        ErrorKind::CrossUnitReference(format!(
                            "{name} refers to the supplementary file ({form} to {:#x}); walk \
                             the units together with walk_units",
                            target.0
                        )),
                        offset,
                    ));
                }
                let target = SUP_BASE.saturating_add(target.0 as u64);
                self.cross_unit_target(target, name, form, offset).map(Some)
            }
            Some(gimli::AttributeValue::DebugTypesRef(signature)) => Err(self.error(
                ErrorKind::UnsupportedDwarf(format!(
                    "{name} refers to a type unit (DW_FORM_ref_sig8 {:#x})",
                    signature.0
                )),
                offset,
            )),
            Some(other) => Err(self.error(
                ErrorKind::InvalidDwarf(format!("{name} is not a reference: {other:?}")),
                offset,
            )),
        }
    }

    /// A reference to `target` (a walker offset) out of the unit: in one
    /// of the units walked, or refused. Targets in the supplementary file
    /// are noted, for their units to be walked.
    fn cross_unit_target(
        &mut self,
        target: u64,
        name: dw::DwAt,
        form: &str,
        offset: u64,
    ) -> Result<u64> {
        // Units do not overlap: only the last one starting at or before
        // `target` can hold it.
        let before = self.spans.partition_point(|&(start, _)| start <= target);
        let inside = before
            .checked_sub(1)
            .and_then(|last| self.spans.get(last))
            .is_some_and(|&(_, end)| target < end);
        if inside {
            if target >= SUP_BASE {
                self.sup_targets.push(target);
            }
            return Ok(target);
        }
        let shown = target.checked_sub(SUP_BASE).unwrap_or(target);
        let place = if target >= SUP_BASE {
            "the supplementary file's units"
        } else {
            "the units walked"
        };
        Err(self.error(
            ErrorKind::CrossUnitReference(format!(
                "{name} refers to another unit ({form} to {shown:#x}, outside {place}); \
                 walk the units together with walk_units"
            )),
            offset,
        ))
    }

    /// `DW_AT_type` as a [`TypeRef`]; absent means `void`.
    fn type_ref(&mut self, attrs: &Attrs<'input>, offset: u64) -> Result<TypeRef> {
        Ok(match self.reference(attrs, dw::DW_AT_type, offset)? {
            Some(target) => TypeRef::Node(self.node_id(target)),
            None => TypeRef::Void,
        })
    }

    /// Like [`Walker::type_ref`] but keeps "absent" apart, for DIEs whose
    /// type may come from their abstract origin or specification.
    fn optional_type_ref(&mut self, attrs: &Attrs<'input>, offset: u64) -> Result<Option<TypeRef>> {
        Ok(self
            .reference(attrs, dw::DW_AT_type, offset)?
            .map(|target| TypeRef::Node(self.node_id(target))))
    }

    /// A size attribute that must fit 32 bits.
    fn size_u32(&self, attrs: &Attrs<'input>, name: dw::DwAt, offset: u64) -> Result<Option<u32>> {
        match attrs.get(name) {
            None => Ok(None),
            Some(value) => match rules::unsigned(&value).and_then(|v| u32::try_from(v).ok()) {
                Some(size) => Ok(Some(size)),
                // Sizes given by expressions (variable-length types) or
                // beyond 4 GiB have no BTF form; pahole reads them as 0.
                None if matches!(
                    value,
                    gimli::AttributeValue::Exprloc(_) | gimli::AttributeValue::UnitRef(_)
                ) =>
                {
                    Ok(Some(0))
                }
                None => Err(self.error(
                    ErrorKind::InvalidDwarf(format!("{name} {value:?} does not fit 32 bits")),
                    offset,
                )),
            },
        }
    }
}
