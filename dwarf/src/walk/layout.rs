//! A fast path for the DIEs that make most of a kernel's: plain data
//! members (nearly half of all DIEs), pointers, qualifiers, typedefs,
//! aggregates, function and array types, their parameters and dimensions,
//! enumerators, lexical blocks.
//!
//! Such a DIE, whose abbreviation gives every attribute a fixed size (but
//! for at most one inline name), is read from byte offsets worked out once
//! per abbreviation: no plan steps, no attribute slots, no dispatch on the
//! tag for each DIE. Only what the general path would use of the DIE is
//! read (a name, a type, a member's constant offset and DWARF 5 bitfield
//! width and position, an aggregate's size and declaration flag, an
//! enumerator's value); what the walker makes of it is in
//! [`Walker::visit_fixed`]. A member with any other attribute the walker
//! looks at (DWARF 2-4 bitfield position, declaration or external flag)
//! has no layout, nor has a DIE with children other than an aggregate,
//! function or array type. Anything without a layout, and any DIE whose bytes do not fit its
//! layout, takes the general path, which gives the same model and gimli's
//! errors.
//!
//! [`Walker::visit_fixed`]: super::Walker::visit_fixed

use gimli::constants as dw;
use gimli::{AttributeValue, Endianity, RunTimeEndian};

use super::plan;
use super::rules::{count_of_bounds, Value};
use crate::model::{CompositeKind, Qualifier};
use crate::reader::Reader;

/// What the walker makes of a DIE read through a layout.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    /// A data member of the enclosing aggregate.
    Member,
    /// A DWARF 5 bitfield member (`DW_AT_bit_size` or
    /// `DW_AT_data_bit_offset`): a kind of its own, so that plain members
    /// do not pay for reading them.
    Bitfield,
    /// A pointer or C++ reference type.
    Pointer,
    /// A qualified type.
    Qualified(Qualifier),
    /// A typedef.
    Typedef,
    /// A formal parameter (of a function type: parameters of functions
    /// take the general path).
    Param,
    /// An enumerator with a fixed-size value.
    Enumerator,
    /// A struct, union or class type.
    Composite(CompositeKind),
    /// A function type.
    Subroutine,
    /// An array type.
    Array,
    /// An array's dimension.
    Subrange,
    /// A lexical block, read for its children only.
    Block,
}

impl Kind {
    /// Whether DIEs of this kind may have children: those that collect
    /// members, parameters or dimensions. The others' children are
    /// annotations, which only the general path reads.
    fn has_scope(self) -> bool {
        matches!(
            self,
            Kind::Composite(_) | Kind::Subroutine | Kind::Array | Kind::Block
        )
    }
}

/// Where a DIE's wanted attributes sit.
///
/// Every attribute has a fixed size, except at most one `DW_FORM_string`
/// name: the DIE is then `head` bytes, the NUL-terminated name, and
/// `tail` bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Layout {
    pub(super) kind: Kind,
    head: u16,
    tail: u16,
    name_form: NameForm,
    name: Place,
    ty: Place,
    location: Place,
    /// An enumerator's `DW_AT_const_value`.
    constant: Place,
    constant_form: ConstantForm,
    /// A composite's `DW_AT_byte_size`.
    byte_size: Place,
    declaration: Declaration,
    /// A bitfield member's `DW_AT_bit_size`.
    bit_size: Unsigned,
    /// A bitfield member's `DW_AT_data_bit_offset`.
    data_bit_offset: Unsigned,
    /// A subrange's `DW_AT_count`.
    count: Place,
    /// A subrange's `DW_AT_upper_bound`.
    upper_bound: Place,
}

/// Where a member's unsigned constant is, if it has one.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Unsigned {
    /// It has none.
    Absent,
    /// In the DIE's bytes.
    At(Place),
    /// `DW_FORM_implicit_const`: in the abbreviation (GCC gives bitfields
    /// of one width in a unit a shared abbreviation this way).
    Implicit(u32),
}

/// How a DIE says it is a declaration.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Declaration {
    /// It does not.
    Absent,
    /// `DW_FORM_flag_present`: it is.
    Present,
    /// `DW_FORM_flag`: it is if the byte at this place is not 0.
    Flag(Place),
}

/// The form of an enumerator's value, which says how the general path
/// would keep it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ConstantForm {
    /// No value (or not an enumerator).
    Absent,
    /// `DW_FORM_data1`, `data2`, `data4` or `data8`: as many bytes.
    Data,
    /// `DW_FORM_implicit_const`: the value is in the abbreviation.
    Implicit(i64),
}

/// Where a fixed-size value sits in a DIE: `size` bytes (0: absent) at
/// `at`, counted from the DIE's start, plus the inline name's length for
/// a value after it.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
struct Place {
    at: u16,
    size: u8,
    after_name: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum NameForm {
    /// No name.
    Absent,
    /// `DW_FORM_string`, between head and tail.
    Inline,
    /// `DW_FORM_strp`, a `.debug_str` offset.
    Strp,
    /// `DW_FORM_strx1/2/4`, an index into `.debug_str_offsets`.
    Strx,
}

/// The bytes of one DIE read through its layout.
pub(super) struct Die<'input> {
    pub(super) bytes: &'input [u8],
    /// The inline name's length with its NUL (0 without one).
    pub(super) name_len: usize,
    pub(super) endian: RunTimeEndian,
}

/// What DIEs with `tag` are read for, if they can have a layout, and
/// whether every attribute the walker looks at must be one the layout
/// reads: for members, which have bitfield and static variants. Of the
/// other tags' DIEs the general path uses nothing but what their layouts
/// read.
fn kind_of(tag: dw::DwTag) -> Option<(Kind, bool)> {
    Some(match tag {
        dw::DW_TAG_member => (Kind::Member, true),
        dw::DW_TAG_pointer_type | dw::DW_TAG_reference_type | dw::DW_TAG_rvalue_reference_type => {
            (Kind::Pointer, false)
        }
        dw::DW_TAG_const_type => (Kind::Qualified(Qualifier::Const), false),
        dw::DW_TAG_volatile_type => (Kind::Qualified(Qualifier::Volatile), false),
        dw::DW_TAG_restrict_type => (Kind::Qualified(Qualifier::Restrict), false),
        dw::DW_TAG_atomic_type => (Kind::Qualified(Qualifier::Atomic), false),
        dw::DW_TAG_typedef => (Kind::Typedef, false),
        dw::DW_TAG_formal_parameter => (Kind::Param, false),
        dw::DW_TAG_enumerator => (Kind::Enumerator, false),
        dw::DW_TAG_structure_type => (Kind::Composite(CompositeKind::Struct), false),
        dw::DW_TAG_union_type => (Kind::Composite(CompositeKind::Union), false),
        dw::DW_TAG_class_type => (Kind::Composite(CompositeKind::Class), false),
        dw::DW_TAG_subroutine_type => (Kind::Subroutine, false),
        dw::DW_TAG_array_type => (Kind::Array, false),
        // A lower bound, or bounds of other forms, take the general path.
        dw::DW_TAG_subrange_type => (Kind::Subrange, true),
        dw::DW_TAG_lexical_block => (Kind::Block, false),
        _ => return None,
    })
}

impl Layout {
    /// The layout of the DIEs of a declaration, if they can have one.
    pub(super) fn of(
        tag: dw::DwTag,
        has_children: bool,
        specs: &[gimli::AttributeSpecification],
        encoding: gimli::Encoding,
    ) -> Option<Self> {
        let (kind, strict) = kind_of(tag)?;
        if has_children && !kind.has_scope() {
            return None;
        }
        let mut layout = Layout {
            kind,
            head: 0,
            tail: 0,
            name_form: NameForm::Absent,
            name: Place::default(),
            ty: Place::default(),
            location: Place::default(),
            constant: Place::default(),
            constant_form: ConstantForm::Absent,
            byte_size: Place::default(),
            declaration: Declaration::Absent,
            bit_size: Unsigned::Absent,
            data_bit_offset: Unsigned::Absent,
            count: Place::default(),
            upper_bound: Place::default(),
        };
        let mut after_name = false;
        for spec in specs {
            let form = spec.form();
            let size = plan::fixed_size(form, encoding);
            let here = |size: u8| Place {
                at: if after_name { layout.tail } else { layout.head },
                size,
                after_name,
            };
            match spec.name() {
                // The first of repeated attributes counts, as in `Attrs`.
                dw::DW_AT_name if layout.name_form == NameForm::Absent => {
                    layout.name_form = match form {
                        dw::DW_FORM_string if !after_name => NameForm::Inline,
                        dw::DW_FORM_strp => NameForm::Strp,
                        dw::DW_FORM_strx1 | dw::DW_FORM_strx2 | dw::DW_FORM_strx4 => NameForm::Strx,
                        _ => return None,
                    };
                    if layout.name_form == NameForm::Inline {
                        after_name = true;
                        continue;
                    }
                    layout.name = here(size?);
                }
                dw::DW_AT_type if layout.ty.size == 0 => match form {
                    dw::DW_FORM_ref1 | dw::DW_FORM_ref2 | dw::DW_FORM_ref4 | dw::DW_FORM_ref8 => {
                        layout.ty = here(size?);
                    }
                    _ => return None,
                },
                // Wider forms could overflow the offset in bits, and
                // `implicit_const` or expressions need the general path.
                dw::DW_AT_data_member_location if layout.location.size == 0 => match form {
                    dw::DW_FORM_data1 | dw::DW_FORM_data2 | dw::DW_FORM_data4 => {
                        layout.location = here(size?);
                    }
                    _ => return None,
                },
                dw::DW_AT_const_value
                    if kind == Kind::Enumerator && layout.constant_form == ConstantForm::Absent =>
                {
                    layout.constant_form = match form {
                        dw::DW_FORM_data1
                        | dw::DW_FORM_data2
                        | dw::DW_FORM_data4
                        | dw::DW_FORM_data8 => {
                            layout.constant = here(size?);
                            ConstantForm::Data
                        }
                        dw::DW_FORM_implicit_const => {
                            ConstantForm::Implicit(spec.implicit_const_value()?)
                        }
                        _ => return None,
                    };
                }
                // Sizes of more than four bytes may not fit 32 bits, an
                // error the general path reports.
                dw::DW_AT_byte_size
                    if matches!(kind, Kind::Composite(_)) && layout.byte_size.size == 0 =>
                {
                    match form {
                        dw::DW_FORM_data1 | dw::DW_FORM_data2 | dw::DW_FORM_data4 => {
                            layout.byte_size = here(size?);
                        }
                        _ => return None,
                    }
                }
                dw::DW_AT_declaration
                    if matches!(kind, Kind::Composite(_))
                        && layout.declaration == Declaration::Absent =>
                {
                    layout.declaration = match form {
                        dw::DW_FORM_flag_present => Declaration::Present,
                        dw::DW_FORM_flag => Declaration::Flag(here(size?)),
                        _ => return None,
                    };
                }
                // A bitfield's width and position: four bytes at most, so
                // that the width fits 32 bits and the position added to the
                // byte offset in bits cannot overflow, as the general path
                // checks; negative implicit values are left to it too.
                name @ (dw::DW_AT_bit_size | dw::DW_AT_data_bit_offset)
                    if kind == Kind::Member
                        && Unsigned::Absent
                            == if name == dw::DW_AT_bit_size {
                                layout.bit_size
                            } else {
                                layout.data_bit_offset
                            } =>
                {
                    let value = match form {
                        dw::DW_FORM_data1 | dw::DW_FORM_data2 | dw::DW_FORM_data4 => {
                            Unsigned::At(here(size?))
                        }
                        dw::DW_FORM_implicit_const => {
                            Unsigned::Implicit(u32::try_from(spec.implicit_const_value()?).ok()?)
                        }
                        _ => return None,
                    };
                    if name == dw::DW_AT_bit_size {
                        layout.bit_size = value;
                    } else {
                        layout.data_bit_offset = value;
                    }
                }
                // Constant bounds; the general path reads others (variable
                // lengths) as no count.
                name @ (dw::DW_AT_count | dw::DW_AT_upper_bound)
                    if kind == Kind::Subrange
                        && 0 == if name == dw::DW_AT_count {
                            layout.count.size
                        } else {
                            layout.upper_bound.size
                        } =>
                {
                    let place = match form {
                        dw::DW_FORM_data1
                        | dw::DW_FORM_data2
                        | dw::DW_FORM_data4
                        | dw::DW_FORM_data8 => here(size?),
                        _ => return None,
                    };
                    if name == dw::DW_AT_count {
                        layout.count = place;
                    } else {
                        layout.upper_bound = place;
                    }
                }
                // Repeats of the above are skipped, as in `Attrs`.
                dw::DW_AT_name | dw::DW_AT_type | dw::DW_AT_data_member_location => {}
                // An old-style bitfield, a static member or anything else the general
                // path looks at.
                name if strict && name != dw::DW_AT_sibling && plan::is_wanted(name) => {
                    return None
                }
                _ => {}
            }
            let size = u16::from(size?);
            if after_name {
                layout.tail = layout.tail.checked_add(size)?;
            } else {
                layout.head = layout.head.checked_add(size)?;
            }
        }
        if kind == Kind::Member
            && (layout.bit_size != Unsigned::Absent || layout.data_bit_offset != Unsigned::Absent)
        {
            layout.kind = Kind::Bitfield;
        }
        // An enumerator without a value is an error, left to the general path.
        if kind == Kind::Enumerator && layout.constant_form == ConstantForm::Absent {
            return None;
        }
        // Values after the inline name are counted from the DIE's start.
        let head = layout.head;
        for place in [
            &mut layout.name,
            &mut layout.ty,
            &mut layout.location,
            &mut layout.constant,
            &mut layout.byte_size,
            &mut layout.count,
            &mut layout.upper_bound,
        ] {
            if place.after_name {
                place.at = place.at.checked_add(head)?;
            }
        }
        let places = [&mut layout.bit_size, &mut layout.data_bit_offset];
        let places = places.into_iter().filter_map(|value| match value {
            Unsigned::At(place) => Some(place),
            _ => None,
        });
        let flag = match &mut layout.declaration {
            Declaration::Flag(place) => Some(place),
            _ => None,
        };
        for place in places.chain(flag) {
            if place.after_name {
                place.at = place.at.checked_add(head)?;
            }
        }
        Some(layout)
    }

    /// The length of the DIE of this layout at the start of `rest`, and
    /// of its inline name with the NUL (0 if it has none); `None` if
    /// `rest` ends before its name does.
    #[inline(always)]
    pub(super) fn die_len(&self, rest: &[u8]) -> Option<(usize, usize)> {
        let head = usize::from(self.head);
        let name_len = match self.name_form {
            NameForm::Inline => memchr::memchr(0, rest.get(head..)?)? + 1,
            _ => 0,
        };
        Some((head + name_len + usize::from(self.tail), name_len))
    }

    /// The number at `place`; `None` if the layout has no such attribute.
    /// Places lie within the DIE's bytes by construction: reads cannot
    /// fail otherwise.
    #[inline(always)]
    fn value(&self, die: &Die<'_>, place: Place) -> Option<u64> {
        let at = usize::from(place.at) + if place.after_name { die.name_len } else { 0 };
        match place.size {
            0 => None,
            size => number(die.bytes, at, size, die.endian),
        }
    }

    /// The name, as the general path would have decoded it.
    #[inline]
    pub(super) fn name<'input>(&self, die: &Die<'input>) -> Option<Value<'input>> {
        Some(match self.name_form {
            NameForm::Absent => return None,
            NameForm::Inline => {
                AttributeValue::String(Reader::new(self.inline_name(die)?, die.endian))
            }
            NameForm::Strp => AttributeValue::DebugStrRef(gimli::DebugStrOffset(
                usize::try_from(self.value(die, self.name)?).ok()?,
            )),
            NameForm::Strx => AttributeValue::DebugStrOffsetsIndex(gimli::DebugStrOffsetsIndex(
                usize::try_from(self.value(die, self.name)?).ok()?,
            )),
        })
    }

    /// Whether DIEs of this layout have no name.
    #[inline(always)]
    pub(super) fn is_nameless(&self) -> bool {
        matches!(self.name_form, NameForm::Absent)
    }

    /// The name's `.debug_str` offset, if it is given as one
    /// (`DW_FORM_strp`).
    #[inline(always)]
    pub(super) fn strp(&self, die: &Die<'_>) -> Option<usize> {
        match self.name_form {
            NameForm::Strp => usize::try_from(self.value(die, self.name)?).ok(),
            _ => None,
        }
    }

    /// The name's index in the unit's string offsets table, if it is given
    /// as one (`DW_FORM_strx1/2/4`).
    #[inline(always)]
    pub(super) fn strx(&self, die: &Die<'_>) -> Option<usize> {
        match self.name_form {
            NameForm::Strx => usize::try_from(self.value(die, self.name)?).ok(),
            _ => None,
        }
    }

    /// The bytes of the name, without its NUL, if it is given inline
    /// (`DW_FORM_string`).
    #[inline(always)]
    pub(super) fn inline_name<'input>(&self, die: &Die<'input>) -> Option<&'input [u8]> {
        match self.name_form {
            NameForm::Inline => {
                let head = usize::from(self.head);
                die.bytes.get(head..head + die.name_len.checked_sub(1)?)
            }
            _ => None,
        }
    }

    /// The unit offset of the type DIE.
    #[inline]
    pub(super) fn ty(&self, die: &Die<'_>) -> Option<u64> {
        self.value(die, self.ty)
    }

    /// A member's byte offset in the enclosing aggregate (0 if absent).
    #[inline]
    pub(super) fn location(&self, die: &Die<'_>) -> u64 {
        self.value(die, self.location).unwrap_or(0)
    }

    /// A member's `DW_AT_bit_size`, if given (at most 32 bits wide).
    #[inline(always)]
    pub(super) fn bit_size(&self, die: &Die<'_>) -> Option<u32> {
        self.unsigned(die, self.bit_size)
            .and_then(|bits| u32::try_from(bits).ok())
    }

    /// A member's `DW_AT_data_bit_offset`, if given (at most 32 bits wide).
    #[inline(always)]
    pub(super) fn data_bit_offset(&self, die: &Die<'_>) -> Option<u64> {
        self.unsigned(die, self.data_bit_offset)
    }

    #[inline(always)]
    fn unsigned(&self, die: &Die<'_>, value: Unsigned) -> Option<u64> {
        match value {
            Unsigned::Absent => None,
            Unsigned::At(place) => self.value(die, place),
            Unsigned::Implicit(value) => Some(value.into()),
        }
    }

    /// A subrange's number of elements, as [`subrange_count`] gives it
    /// (whose lower bound is 0 here: DIEs with one have no layout).
    ///
    /// [`subrange_count`]: super::visit::subrange_count
    #[inline]
    pub(super) fn subrange_count(&self, die: &Die<'_>) -> u64 {
        if let Some(count) = self.value(die, self.count) {
            return count;
        }
        match self.value(die, self.upper_bound) {
            Some(upper) => count_of_bounds(upper, 0),
            None => 0,
        }
    }

    /// A composite's size in bytes (at most four bytes: the general path's
    /// 32-bit check passes).
    #[inline(always)]
    pub(super) fn byte_size(&self, die: &Die<'_>) -> Option<u32> {
        u32::try_from(self.value(die, self.byte_size)?).ok()
    }

    /// Whether a composite is a declaration.
    #[inline(always)]
    pub(super) fn declaration(&self, die: &Die<'_>) -> bool {
        match self.declaration {
            Declaration::Absent => false,
            Declaration::Present => true,
            Declaration::Flag(place) => self.value(die, place).is_some_and(|flag| flag != 0),
        }
    }

    /// An enumerator's value, in the raw form the general path keeps.
    #[inline(always)]
    pub(super) fn constant<'input>(&self, die: &Die<'input>) -> Option<Value<'input>> {
        match self.constant_form {
            ConstantForm::Absent => None,
            ConstantForm::Implicit(value) => Some(AttributeValue::Sdata(value)),
            ConstantForm::Data => {
                let value = self.value(die, self.constant)?;
                Some(match self.constant.size {
                    1 => AttributeValue::Data1(value as u8),
                    2 => AttributeValue::Data2(value as u16),
                    4 => AttributeValue::Data4(value as u32),
                    _ => AttributeValue::Data8(value),
                })
            }
        }
    }
}

/// The unsigned number of `size` (1, 2, 4 or 8) bytes at `at` in `bytes`.
#[inline(always)]
fn number(bytes: &[u8], at: usize, size: u8, endian: RunTimeEndian) -> Option<u64> {
    let bytes = bytes.get(at..at + usize::from(size))?;
    Some(match size {
        1 => u64::from(*bytes.first()?),
        2 => u64::from(endian.read_u16(bytes)),
        4 => u64::from(endian.read_u32(bytes)),
        _ => endian.read_u64(bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::attrs::Attrs;
    use crate::walk::entries::Entries;
    use crate::walk::rules::unsigned;

    /// On every DIE of every fixture that has a layout, the layout reads
    /// what the general attribute reading reads, and stops at the same
    /// byte; members with layouts have no other attribute the walker uses.
    #[test]
    fn layouts_read_what_the_attribute_plans_read() {
        let mut members = 0;
        let mut plain = 0;
        let mut plain_members = 0;
        let mut enumerators = 0;
        let mut composites = 0;
        let mut bitfields = 0;
        let mut subranges = 0;
        let mut strx_names = 0;
        for path in crate::test_fixtures::fixture_objects() {
            let file = crate::ElfFile::open(&path).expect("fixture opens");
            let dwarf = file.dwarf().expect("fixture has DWARF");
            let mut worker = super::super::abbrev_cache::Worker::default();
            for header in dwarf.units() {
                let (unit, codes) =
                    super::super::open_unit(&dwarf.gimli, *header, &mut worker).expect("unit");
                let mut entries = Entries::new(&unit, &codes).expect("entries");
                let mut attrs = Attrs::default();
                while !entries.is_empty() {
                    let Some(abbrev) = entries.read_abbreviation().expect("abbreviation") else {
                        continue;
                    };
                    let mut general = entries;
                    attrs.read(&mut general, abbrev).expect("general read");
                    if abbrev.tag == dw::DW_TAG_member {
                        members += 1;
                    }
                    if let Some(layout) = &abbrev.layout {
                        plain += 1;
                        let mut fast = entries;
                        let die = fast.read_fixed(layout).expect("layout read");
                        assert_eq!(fast.next_offset(), general.next_offset(), "{path:?}");
                        assert_eq!(layout.name(&die), attrs.get(dw::DW_AT_name), "{path:?}");
                        let strp = match attrs.get(dw::DW_AT_name) {
                            Some(AttributeValue::DebugStrRef(offset)) => Some(offset.0),
                            _ => None,
                        };
                        assert_eq!(layout.strp(&die), strp, "{path:?}");
                        let strx = match attrs.get(dw::DW_AT_name) {
                            Some(AttributeValue::DebugStrOffsetsIndex(index)) => Some(index.0),
                            _ => None,
                        };
                        assert_eq!(layout.strx(&die), strx, "{path:?}");
                        strx_names += usize::from(strx.is_some());
                        let inline = match attrs.get(dw::DW_AT_name) {
                            Some(AttributeValue::String(text)) => Some(text.slice()),
                            _ => None,
                        };
                        assert_eq!(layout.inline_name(&die), inline, "{path:?}");
                        let ty = match attrs.get(dw::DW_AT_type) {
                            Some(AttributeValue::UnitRef(offset)) => Some(offset.0 as u64),
                            None => None,
                            other => panic!("{path:?}: type {other:?}"),
                        };
                        assert_eq!(layout.ty(&die), ty, "{path:?}");
                        let location =
                            attrs
                                .get(dw::DW_AT_data_member_location)
                                .map(|value| match value {
                                    AttributeValue::SecOffset(bytes) => Some(bytes as u64),
                                    AttributeValue::LocationListsRef(bytes) => Some(bytes.0 as u64),
                                    value => unsigned(&value),
                                });
                        assert_eq!(Some(layout.location(&die)), location.unwrap_or(Some(0)));
                        if let Kind::Composite(_) = layout.kind {
                            composites += 1;
                            let byte_size = attrs.udata(dw::DW_AT_byte_size);
                            assert_eq!(layout.byte_size(&die).map(u64::from), byte_size);
                            assert_eq!(layout.declaration(&die), attrs.flag(dw::DW_AT_declaration));
                        }
                        if abbrev.tag == dw::DW_TAG_subrange_type {
                            subranges += 1;
                            assert_eq!(
                                layout.subrange_count(&die),
                                super::super::visit::subrange_count(&attrs)
                            );
                        }
                        if abbrev.tag == dw::DW_TAG_enumerator {
                            enumerators += 1;
                            assert_eq!(layout.constant(&die), attrs.get(dw::DW_AT_const_value));
                        }
                        if abbrev.tag == dw::DW_TAG_member {
                            plain_members += 1;
                            assert_eq!(
                                layout.kind == Kind::Bitfield,
                                attrs.get(dw::DW_AT_bit_size).is_some()
                                    || attrs.get(dw::DW_AT_data_bit_offset).is_some()
                            );
                            let bit_size = attrs.udata(dw::DW_AT_bit_size);
                            assert_eq!(layout.bit_size(&die).map(u64::from), bit_size);
                            let data_bit_offset = attrs.udata(dw::DW_AT_data_bit_offset);
                            assert_eq!(layout.data_bit_offset(&die), data_bit_offset);
                            bitfields += usize::from(bit_size.is_some());
                            for flag in [
                                dw::DW_AT_bit_offset,
                                dw::DW_AT_declaration,
                                dw::DW_AT_external,
                            ] {
                                assert!(attrs.get(flag).is_none(), "{path:?} {:?}", abbrev.tag);
                            }
                        }
                    }
                    entries = general;
                }
            }
        }
        assert!(enumerators > 10, "{enumerators} enumerators");
        assert!(composites > 10, "{composites} composites");
        assert!(bitfields > 0, "{bitfields} bitfields");
        assert!(subranges > 0, "{subranges} subranges");
        // clang's DWARF 5 names strings by index.
        assert!(strx_names > 100, "{strx_names} names by DW_FORM_strx*");
        // DWARF 2-4 bitfields and static members have no layout.
        assert!(
            plain_members > 100 && plain_members < members && plain > plain_members,
            "{plain_members} plain of {members} members, {plain} DIEs with layouts"
        );
    }

    fn layout_of(abbrev: &gimli::Abbreviation, encoding: gimli::Encoding) -> Option<Layout> {
        Layout::of(
            abbrev.tag(),
            abbrev.has_children(),
            abbrev.attributes(),
            encoding,
        )
    }

    /// Bitfields, children and forms the layout does not read are left to
    /// the general path.
    #[test]
    fn only_plain_members_have_layouts() {
        let encoding = gimli::Encoding {
            format: gimli::Format::Dwarf32,
            version: 5,
            address_size: 8,
        };
        // One abbreviation, code 1, in `.debug_abbrev` bytes (all values
        // used here fit one LEB128 byte except the tags and names above 127).
        let abbrev = |tag: dw::DwTag, children: bool, specs: &[(dw::DwAt, dw::DwForm)]| {
            let mut bytes = vec![1u8];
            let uleb = |bytes: &mut Vec<u8>, mut value: u64| loop {
                let byte = (value & 0x7f) as u8;
                value >>= 7;
                if value == 0 {
                    bytes.push(byte);
                    break;
                }
                bytes.push(byte | 0x80);
            };
            uleb(&mut bytes, tag.0.into());
            bytes.push(u8::from(children));
            for &(name, form) in specs {
                uleb(&mut bytes, name.0.into());
                uleb(&mut bytes, form.0.into());
            }
            bytes.extend([0, 0, 0]);
            let abbreviations = gimli::DebugAbbrev::new(&bytes, gimli::LittleEndian)
                .abbreviations(gimli::DebugAbbrevOffset(0))
                .expect("abbreviations parse");
            abbreviations.get(1).expect("code 1").clone()
        };
        let spec = |name, form| (name, form);
        let plain = [
            spec(dw::DW_AT_name, dw::DW_FORM_string),
            spec(dw::DW_AT_decl_line, dw::DW_FORM_data2),
            spec(dw::DW_AT_type, dw::DW_FORM_ref4),
            spec(dw::DW_AT_data_member_location, dw::DW_FORM_data1),
        ];
        let layout =
            layout_of(&abbrev(dw::DW_TAG_member, false, &plain), encoding).expect("plain member");
        assert_eq!((layout.head, layout.tail), (0, 7));
        assert_eq!(
            layout.ty,
            Place {
                at: 2,
                size: 4,
                after_name: true
            }
        );
        assert!(layout_of(&abbrev(dw::DW_TAG_member, true, &plain), encoding).is_none());
        // Only members must not have other attributes the walker uses.
        let pointer = [
            spec(dw::DW_AT_byte_size, dw::DW_FORM_data1),
            spec(dw::DW_AT_type, dw::DW_FORM_ref4),
        ];
        let layout = layout_of(&abbrev(dw::DW_TAG_pointer_type, false, &pointer), encoding)
            .expect("pointer");
        assert_eq!(layout.kind, Kind::Pointer);
        assert_eq!(
            (layout.head, layout.ty),
            (
                5,
                Place {
                    at: 1,
                    size: 4,
                    after_name: false
                }
            )
        );
        assert!(layout_of(&abbrev(dw::DW_TAG_member, false, &pointer), encoding).is_none());
        assert!(layout_of(&abbrev(dw::DW_TAG_variable, false, &plain), encoding).is_none());
        let mut bitfield = plain.to_vec();
        bitfield.push(spec(dw::DW_AT_bit_size, dw::DW_FORM_data1));
        bitfield.push(spec(dw::DW_AT_data_bit_offset, dw::DW_FORM_data2));
        let layout = layout_of(&abbrev(dw::DW_TAG_member, false, &bitfield), encoding)
            .expect("DWARF 5 bitfield");
        assert_eq!((layout.kind, layout.tail), (Kind::Bitfield, 10));
        for odd in [
            spec(dw::DW_AT_bit_offset, dw::DW_FORM_data1),
            spec(dw::DW_AT_byte_size, dw::DW_FORM_data1),
            spec(dw::DW_AT_bit_size, dw::DW_FORM_data8),
            spec(dw::DW_AT_declaration, dw::DW_FORM_flag_present),
            spec(dw::DW_AT_decl_file, dw::DW_FORM_udata),
        ] {
            let mut specs = plain.to_vec();
            specs.push(odd);
            assert!(
                layout_of(&abbrev(dw::DW_TAG_member, false, &specs), encoding).is_none(),
                "{odd:?}"
            );
        }
        let mut specs = plain.to_vec();
        specs[3] = spec(dw::DW_AT_data_member_location, dw::DW_FORM_exprloc);
        assert!(layout_of(&abbrev(dw::DW_TAG_member, false, &specs), encoding).is_none());
    }
}
