//! A fast path for plain data members, nearly half of a kernel's DIEs.
//!
//! A member that has no children and no attribute the walker wants besides
//! a name, a type and a constant byte offset (no bitfield, declaration or
//! external flag) is read from offsets worked out once per abbreviation:
//! no plan steps, no attribute slots, no dispatch on the tag. Anything
//! else, and any DIE whose bytes do not fit its layout, takes the general
//! path, which gives the same model and gimli's errors.

use gimli::constants as dw;
use gimli::{AttributeValue, Endianity, RunTimeEndian};

use super::attrs::{self, Value};
use super::entries::Entries;
use crate::elf::Reader;

/// Where a member abbreviation's wanted attributes sit in its DIEs.
///
/// Every attribute has a fixed size, except at most one `DW_FORM_string`
/// name: the DIE is then `head` bytes, the NUL-terminated name, and
/// `tail` bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct MemberLayout {
    head: u32,
    tail: u32,
    name: Option<Field<NameForm>>,
    ty: Option<Field<u8>>,
    location: Option<Field<u8>>,
}

/// One attribute: its form, and the byte where it starts in its part
/// of the DIE.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Field<Form> {
    in_tail: bool,
    at: u32,
    form: Form,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum NameForm {
    /// `DW_FORM_string`, between head and tail.
    Inline,
    /// `DW_FORM_strp`, an offset of this many bytes.
    Strp(u8),
    /// `DW_FORM_strx1/2/4`, an index of this many bytes.
    Strx(u8),
}

/// A member as read through its layout.
pub(super) struct PlainMember<'input> {
    /// The name as the general path would have decoded it.
    pub(super) name: Option<Value<'input>>,
    /// Unit offset of the type DIE.
    pub(super) ty: Option<u64>,
    /// Byte offset in the enclosing aggregate.
    pub(super) location: u64,
}

impl MemberLayout {
    /// The layout of `abbrev`'s DIEs, if it is a plain member's.
    pub(super) fn of(abbrev: &gimli::Abbreviation, encoding: gimli::Encoding) -> Option<Self> {
        if abbrev.tag() != dw::DW_TAG_member || abbrev.has_children() {
            return None;
        }
        let mut layout = MemberLayout {
            head: 0,
            tail: 0,
            name: None,
            ty: None,
            location: None,
        };
        let mut in_tail = false;
        for spec in abbrev.attributes() {
            let form = spec.form();
            let at = if in_tail { layout.tail } else { layout.head };
            match spec.name() {
                // The first of repeated attributes counts, as in `Attrs`.
                dw::DW_AT_name if layout.name.is_none() => {
                    let name = match form {
                        dw::DW_FORM_string if !in_tail => NameForm::Inline,
                        dw::DW_FORM_strp => NameForm::Strp(encoding.format.word_size()),
                        dw::DW_FORM_strx1 => NameForm::Strx(1),
                        dw::DW_FORM_strx2 => NameForm::Strx(2),
                        dw::DW_FORM_strx4 => NameForm::Strx(4),
                        _ => return None,
                    };
                    layout.name = Some(Field {
                        in_tail,
                        at,
                        form: name,
                    });
                    if name == NameForm::Inline {
                        in_tail = true;
                        continue;
                    }
                }
                dw::DW_AT_type if layout.ty.is_none() => {
                    let size = match form {
                        dw::DW_FORM_ref1 => 1,
                        dw::DW_FORM_ref2 => 2,
                        dw::DW_FORM_ref4 => 4,
                        dw::DW_FORM_ref8 => 8,
                        _ => return None,
                    };
                    layout.ty = Some(Field {
                        in_tail,
                        at,
                        form: size,
                    });
                }
                // Wider forms could overflow the offset in bits, and
                // `implicit_const` or expressions need the general path.
                dw::DW_AT_data_member_location if layout.location.is_none() => {
                    let size = match form {
                        dw::DW_FORM_data1 => 1,
                        dw::DW_FORM_data2 => 2,
                        dw::DW_FORM_data4 => 4,
                        _ => return None,
                    };
                    layout.location = Some(Field {
                        in_tail,
                        at,
                        form: size,
                    });
                }
                // Repeats of the above are skipped, as in `Attrs`.
                dw::DW_AT_name | dw::DW_AT_type | dw::DW_AT_data_member_location => {}
                // A bitfield, a static member or anything else the general
                // path looks at.
                name if name != dw::DW_AT_sibling && attrs::is_wanted(name) => return None,
                _ => {}
            }
            let size = u32::from(attrs::fixed_size(form, encoding)?);
            if in_tail {
                layout.tail = layout.tail.checked_add(size)?;
            } else {
                layout.head = layout.head.checked_add(size)?;
            }
        }
        Some(layout)
    }

    /// Reads one DIE's attributes; `None` when the bytes run out, leaving
    /// `entries` anywhere (the caller reads the DIE again the general way,
    /// for its error).
    #[inline]
    pub(super) fn read<'input>(
        &self,
        entries: &mut Entries<'_, 'input>,
    ) -> Option<PlainMember<'input>> {
        let endian = entries.endian;
        let head = entries.take(self.head as usize)?;
        let (inline, tail) = match self.name {
            Some(Field {
                form: NameForm::Inline,
                ..
            }) => (Some(entries.cstr()?), entries.take(self.tail as usize)?),
            _ => (None, &[][..]),
        };
        let part = |in_tail: bool| if in_tail { tail } else { head };
        let name = match self.name {
            None => None,
            Some(Field {
                form: NameForm::Inline,
                ..
            }) => Some(AttributeValue::String(Reader::new(inline?, endian))),
            Some(Field {
                in_tail,
                at,
                form: NameForm::Strp(size),
            }) => {
                let offset = usize::try_from(number(part(in_tail), at, size, endian)?).ok()?;
                Some(AttributeValue::DebugStrRef(gimli::DebugStrOffset(offset)))
            }
            Some(Field {
                in_tail,
                at,
                form: NameForm::Strx(size),
            }) => {
                let index = usize::try_from(number(part(in_tail), at, size, endian)?).ok()?;
                Some(AttributeValue::DebugStrOffsetsIndex(
                    gimli::DebugStrOffsetsIndex(index),
                ))
            }
        };
        let ty = match self.ty {
            None => None,
            Some(field) => Some(number(part(field.in_tail), field.at, field.form, endian)?),
        };
        let location = match self.location {
            None => 0,
            Some(field) => number(part(field.in_tail), field.at, field.form, endian)?,
        };
        Some(PlainMember { name, ty, location })
    }
}

/// The unsigned number of `size` bytes at `at` in `bytes`.
#[inline(always)]
fn number(bytes: &[u8], at: u32, size: u8, endian: RunTimeEndian) -> Option<u64> {
    let start = at as usize;
    let bytes = bytes.get(start..start + usize::from(size))?;
    Some(match size {
        1 => u64::from(*bytes.first()?),
        2 => u64::from(endian.read_u16(bytes)),
        4 => u64::from(endian.read_u32(bytes)),
        _ => endian.read_u64(bytes),
    })
}

/// Member layouts by abbreviation code, worked out when first met.
#[derive(Default)]
pub(super) struct MemberLayouts {
    /// By code: `None` until met, then the layout if there is one.
    by_code: Vec<Option<Option<MemberLayout>>>,
}

/// Codes up to this are cached (compilers number them densely from 1).
const MAX_CACHED_CODE: u64 = 1 << 16;

impl MemberLayouts {
    /// The layout of `abbrev`'s DIEs, if they are plain members.
    #[inline]
    pub(super) fn get(
        &mut self,
        abbrev: &gimli::Abbreviation,
        encoding: gimli::Encoding,
    ) -> Option<MemberLayout> {
        let code = abbrev.code();
        if code > MAX_CACHED_CODE {
            return MemberLayout::of(abbrev, encoding);
        }
        let slot = usize::try_from(code).ok()?;
        if let Some(&Some(known)) = self.by_code.get(slot) {
            return known;
        }
        let layout = MemberLayout::of(abbrev, encoding);
        if self.by_code.len() <= slot {
            self.by_code.resize(slot + 1, None);
        }
        if let Some(cached) = self.by_code.get_mut(slot) {
            *cached = Some(layout);
        }
        layout
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::attrs::Attrs;

    /// On every member DIE of every fixture that has a layout, the layout
    /// reads what the general attribute reading reads, and stops at the
    /// same byte.
    #[test]
    fn layouts_read_what_the_attribute_plans_read() {
        let mut members = 0;
        let mut plain = 0;
        for path in attrs::tests::fixture_objects() {
            let file = crate::ElfFile::open(&path).expect("fixture opens");
            let dwarf = file.dwarf().expect("fixture has DWARF");
            for header in dwarf.units() {
                let unit = super::super::open_unit(&dwarf.gimli, *header).expect("unit");
                let mut entries = Entries::new(&unit).expect("entries");
                let mut attrs = Attrs::default();
                let mut layouts = MemberLayouts::default();
                while !entries.is_empty() {
                    let Some(abbrev) = entries.read_abbreviation().expect("abbreviation") else {
                        continue;
                    };
                    let mut general = entries;
                    attrs.read(&mut general, abbrev).expect("general read");
                    if abbrev.tag() == dw::DW_TAG_member {
                        members += 1;
                    }
                    if let Some(layout) = layouts.get(abbrev, entries.encoding) {
                        plain += 1;
                        let mut fast = entries;
                        let member = layout.read(&mut fast).expect("layout read");
                        assert_eq!(fast.next_offset(), general.next_offset(), "{path:?}");
                        assert_eq!(member.name, attrs.get(dw::DW_AT_name), "{path:?}");
                        let ty = match attrs.get(dw::DW_AT_type) {
                            Some(AttributeValue::UnitRef(offset)) => Some(offset.0 as u64),
                            None => None,
                            other => panic!("{path:?}: type {other:?}"),
                        };
                        assert_eq!(member.ty, ty, "{path:?}");
                        let location =
                            attrs
                                .get(dw::DW_AT_data_member_location)
                                .map(|value| match value {
                                    AttributeValue::SecOffset(bytes) => Some(bytes as u64),
                                    AttributeValue::LocationListsRef(bytes) => Some(bytes.0 as u64),
                                    value => attrs::unsigned(&value),
                                });
                        assert_eq!(Some(member.location), location.unwrap_or(Some(0)));
                        for flag in [
                            dw::DW_AT_bit_size,
                            dw::DW_AT_declaration,
                            dw::DW_AT_external,
                        ] {
                            assert!(attrs.get(flag).is_none(), "{path:?} {abbrev:?}");
                        }
                    }
                    entries = general;
                }
            }
        }
        assert!(
            plain > 100 && plain < members,
            "{plain} plain of {members} members"
        );
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
        let layout = MemberLayout::of(&abbrev(dw::DW_TAG_member, false, &plain), encoding)
            .expect("plain member");
        assert_eq!((layout.head, layout.tail), (0, 7));
        assert_eq!(
            layout.ty,
            Some(Field {
                in_tail: true,
                at: 2,
                form: 4
            })
        );
        assert!(MemberLayout::of(&abbrev(dw::DW_TAG_member, true, &plain), encoding).is_none());
        assert!(MemberLayout::of(&abbrev(dw::DW_TAG_variable, false, &plain), encoding).is_none());
        for odd in [
            spec(dw::DW_AT_bit_size, dw::DW_FORM_data1),
            spec(dw::DW_AT_declaration, dw::DW_FORM_flag_present),
            spec(dw::DW_AT_decl_file, dw::DW_FORM_udata),
        ] {
            let mut specs = plain.to_vec();
            specs.push(odd);
            assert!(
                MemberLayout::of(&abbrev(dw::DW_TAG_member, false, &specs), encoding).is_none(),
                "{odd:?}"
            );
        }
        let mut specs = plain.to_vec();
        specs[3] = spec(dw::DW_AT_data_member_location, dw::DW_FORM_exprloc);
        assert!(MemberLayout::of(&abbrev(dw::DW_TAG_member, false, &specs), encoding).is_none());
    }
}
