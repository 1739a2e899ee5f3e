//! Reading only the attributes the model needs, by the plan of their
//! declaration (`plan.rs`), into one slot each.

use gimli::constants as dw;
use gimli::AttributeValue;

use super::abbrevs::Abbrev;
use super::entries::Entries;
use super::plan::{needs_typing, slot_of, wants, Decode, Purpose, Step, SLOTS};
use super::rules::{unsigned, Value};
use crate::reader::Reader;

/// The wanted attributes of one DIE, each in its own slot: a lookup by
/// name is a bit test, and forgetting the previous DIE's attributes is
/// clearing one mask.
///
/// How to read a declaration's DIEs is worked out once per distinct
/// declaration (see `abbrev_cache.rs`), not once per DIE (a kernel unit uses a
/// few hundred abbreviations for tens of thousands of DIEs): a plan of
/// [`Step`]s that skips each run of fixed-size unwanted attributes as one
/// byte count and decodes each wanted attribute by a form-specific reader
/// chosen in advance, instead of gimli's generic per-attribute decoding.
pub(crate) struct Attrs<'input> {
    /// By [`slot_of`] the attribute's name; meaningful where `present`
    /// has the slot's bit.
    values: [Value<'input>; SLOTS],
    present: u32,
}

impl Default for Attrs<'_> {
    fn default() -> Self {
        Attrs {
            values: [AttributeValue::Flag(false); SLOTS],
            present: 0,
        }
    }
}

/// Decodes one attribute into `slot`; `None` when the bytes run out or
/// gimli fails, which the caller then reports through gimli's own
/// reading. Each value is stored where it is made: returning it through
/// an `Option` costs a copy that stalls on store forwarding.
#[inline(always)]
fn decode_into<'input>(
    entries: &mut Entries<'_, 'input>,
    decode: Decode,
    specs: &[gimli::AttributeSpecification],
    slot: &mut Value<'input>,
) -> Option<()> {
    use gimli::{DebugInfoOffset, DebugLineStrOffset, DebugStrOffset, DebugStrOffsetsIndex};
    use AttributeValue as V;
    let mut push = |value: Value<'input>| *slot = value;
    let unit_ref = |offset: u64| Some(V::UnitRef(gimli::UnitOffset(usize::try_from(offset).ok()?)));
    let str_index = |index: u64| {
        Some(V::DebugStrOffsetsIndex(DebugStrOffsetsIndex(
            usize::try_from(index).ok()?,
        )))
    };
    match decode {
        Decode::Data1 => push(V::Data1(entries.u8()?)),
        Decode::Data2 => push(V::Data2(entries.u16()?)),
        Decode::Data4 => push(V::Data4(entries.u32()?)),
        Decode::Data8 => push(V::Data8(entries.u64()?)),
        Decode::Udata => push(V::Udata(entries.uleb()?)),
        Decode::Sdata => push(V::Sdata(entries.sleb()?)),
        Decode::Flag => push(V::Flag(entries.u8()? != 0)),
        Decode::Present => push(V::Flag(true)),
        Decode::Implicit(position) => push(V::Sdata(
            specs.get(position as usize)?.implicit_const_value()?,
        )),
        Decode::Ref1 => push(unit_ref(entries.u8()?.into())?),
        Decode::Ref2 => push(unit_ref(entries.u16()?.into())?),
        Decode::Ref4 => push(unit_ref(entries.u32()?.into())?),
        Decode::Ref8 => push(unit_ref(entries.u64()?)?),
        Decode::RefUdata => push(unit_ref(entries.uleb()?)?),
        Decode::RefAddr(size) => push(V::DebugInfoRef(DebugInfoOffset(entries.offset(size)?))),
        Decode::Strp(size) => push(V::DebugStrRef(DebugStrOffset(entries.offset(size)?))),
        Decode::LineStrp(size) => push(V::DebugLineStrRef(DebugLineStrOffset(
            entries.offset(size)?,
        ))),
        Decode::Strx1 => push(str_index(entries.u8()?.into())?),
        Decode::Strx2 => push(str_index(entries.u16()?.into())?),
        Decode::Strx4 => push(str_index(entries.u32()?.into())?),
        Decode::Strx => push(str_index(entries.uleb()?)?),
        Decode::String => push(V::String(Reader::new(entries.cstr()?, entries.endian))),
        Decode::Exprloc => push(V::Exprloc(gimli::Expression(Reader::new(
            entries.leb_block()?,
            entries.endian,
        )))),
        Decode::Addr(4) => push(V::Addr(entries.u32()?.into())),
        Decode::Addr(_) => push(V::Addr(entries.u64()?)),
        Decode::MemberOffset1 => push(V::Udata(entries.u8()?.into())),
        Decode::MemberOffset2 => push(V::Udata(entries.u16()?.into())),
        Decode::MemberOffsetUdata => push(V::Udata(entries.uleb()?)),
        Decode::Other { spec, typed } => {
            let attr = entries.gimli_attribute(*specs.get(spec as usize)?).ok()?;
            push(if typed {
                attr.value()
            } else {
                attr.raw_value()
            })
        }
    }
    Some(())
}

impl<'input> Attrs<'input> {
    /// Reads the wanted attributes of the DIE whose abbreviation was just
    /// read, skipping the others.
    pub(crate) fn read(
        &mut self,
        entries: &mut Entries<'_, 'input>,
        abbrev: &Abbrev,
    ) -> gimli::Result<()> {
        self.run(entries, abbrev, Purpose::Visit)
    }

    /// Reads past the attributes of a DIE that is being skipped, returning
    /// its `DW_AT_sibling`, the place its subtree ends, if it has children.
    /// The attributes read before are forgotten.
    pub(crate) fn skip(
        &mut self,
        entries: &mut Entries<'_, 'input>,
        abbrev: &Abbrev,
    ) -> gimli::Result<Option<gimli::UnitOffset>> {
        self.run(entries, abbrev, Purpose::Skip)?;
        Ok(match self.get(dw::DW_AT_sibling) {
            Some(AttributeValue::UnitRef(offset)) => Some(offset),
            _ => None,
        })
    }

    fn run(
        &mut self,
        entries: &mut Entries<'_, 'input>,
        abbrev: &Abbrev,
        purpose: Purpose,
    ) -> gimli::Result<()> {
        let steps = entries.abbrevs().steps(abbrev, purpose);
        let specs = entries.abbrevs().specs(abbrev);
        let before = entries.position();
        if run_steps(steps, specs, entries, &mut self.values, &mut self.present).is_some() {
            return Ok(());
        }
        // Something is wrong with the bytes: read them again the general
        // way, for gimli's error.
        entries.rewind(before);
        self.run_with_gimli(entries, abbrev, purpose)
    }

    /// What `run` does, through gimli's generic decoding only: the
    /// reference the plans are tested against, and the source of errors.
    fn run_with_gimli(
        &mut self,
        entries: &mut Entries<'_, 'input>,
        abbrev: &Abbrev,
        purpose: Purpose,
    ) -> gimli::Result<()> {
        self.present = 0;
        for spec in entries.abbrevs().specs(abbrev) {
            let slot =
                slot_of(spec.name()).filter(|_| wants(abbrev.has_children, purpose, spec.name()));
            // The first of repeated attributes counts.
            let Some(slot) = slot.filter(|&slot| self.present & (1 << slot) == 0) else {
                entries.gimli_skip(std::slice::from_ref(spec))?;
                continue;
            };
            let attr = entries.gimli_attribute(*spec)?;
            let value = if needs_typing(spec.name()) {
                attr.value()
            } else {
                attr.raw_value()
            };
            if let Some(stored) = self.values.get_mut(slot) {
                *stored = value;
                self.present |= 1 << slot;
            }
        }
        Ok(())
    }

    /// The value of `name`, if the DIE has it.
    #[inline(always)]
    pub(crate) fn get(&self, name: dw::DwAt) -> Option<Value<'input>> {
        let slot = slot_of(name)?;
        if self.present & (1 << slot) == 0 {
            return None;
        }
        self.values.get(slot).copied()
    }

    /// The attributes read, by slot, for comparing two reads in tests.
    #[cfg(test)]
    fn read_values(&self) -> Vec<(usize, Value<'input>)> {
        (0..SLOTS)
            .filter(|slot| self.present & (1 << slot) != 0)
            .filter_map(|slot| Some((slot, *self.values.get(slot)?)))
            .collect()
    }

    /// Whether a flag attribute is present and true.
    pub(crate) fn flag(&self, name: dw::DwAt) -> bool {
        matches!(self.get(name), Some(AttributeValue::Flag(true)))
    }

    /// The value of `name` as an unsigned constant.
    pub(crate) fn udata(&self, name: dw::DwAt) -> Option<u64> {
        self.get(name).as_ref().and_then(unsigned)
    }
}

/// Follows a plan; `None` if the bytes do not fit it.
#[inline]
fn run_steps<'input>(
    steps: &[Step],
    specs: &[gimli::AttributeSpecification],
    entries: &mut Entries<'_, 'input>,
    values: &mut [Value<'input>; SLOTS],
    present: &mut u32,
) -> Option<()> {
    *present = 0;
    for step in steps {
        match *step {
            Step::Skip(count) => {
                entries.take(count as usize)?;
            }
            Step::SkipLeb => entries.skip_leb()?,
            Step::SkipLebBlock => {
                entries.leb_block()?;
            }
            Step::SkipString => {
                entries.cstr()?;
            }
            Step::SkipOther(spec) => {
                let spec = specs.get(spec as usize)?;
                entries.gimli_skip(std::slice::from_ref(spec)).ok()?
            }
            Step::Read(slot, how) => {
                decode_into(entries, how, specs, values.get_mut(usize::from(slot))?)?;
                *present |= 1 << slot;
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_stay_small() {
        assert!(std::mem::size_of::<Step>() <= 12);
    }

    /// The plans decode every DIE of every fixture exactly as gimli's
    /// generic reading does, and stop at the same byte.
    #[test]
    fn plans_read_what_gimli_reads() {
        let files = crate::test_fixtures::fixture_objects();
        assert!(files.len() > 20, "fixtures missing: {files:?}");
        let mut dies = 0;
        for path in files {
            let file = crate::ElfFile::open(&path).expect("fixture opens");
            let dwarf = file.dwarf().expect("fixture has DWARF");
            let mut worker = super::super::abbrev_cache::Worker::default();
            for header in dwarf.units() {
                let (unit, codes) =
                    super::super::open_unit(&dwarf.gimli, *header, &mut worker).expect("unit");
                let mut entries = Entries::new(&unit, &codes).expect("entries");
                let mut planned = Attrs::default();
                let mut reference = Attrs::default();
                while !entries.is_empty() {
                    let Some(abbrev) = entries.read_abbreviation().expect("abbreviation") else {
                        continue;
                    };
                    dies += 1;
                    for purpose in [Purpose::Skip, Purpose::Visit] {
                        let mut fast = entries;
                        planned
                            .run(&mut fast, abbrev, purpose)
                            .expect("planned read");
                        let mut slow = entries;
                        reference
                            .run_with_gimli(&mut slow, abbrev, purpose)
                            .expect("gimli read");
                        assert_eq!(
                            planned.read_values(),
                            reference.read_values(),
                            "{path:?} {:?}",
                            abbrev.tag
                        );
                        assert_eq!(fast.next_offset(), slow.next_offset(), "{path:?}");
                        if matches!(purpose, Purpose::Visit) {
                            entries = fast;
                        }
                    }
                }
            }
        }
        assert!(dies > 1000, "only {dies} DIEs read");
    }

    /// Bytes that end inside a DIE give gimli's error, not a shorter read.
    #[test]
    fn truncated_attributes_are_gimli_errors() {
        let path = crate::test_fixtures::fixture_objects()
            .into_iter()
            .find(|path| path.ends_with("gcc-dwarf5/structs.o"))
            .expect("fixture");
        let file = crate::ElfFile::open(&path).expect("fixture opens");
        let dwarf = file.dwarf().expect("fixture has DWARF");
        let header = dwarf.units().first().expect("a unit");
        let mut worker = super::super::abbrev_cache::Worker::default();
        let (unit, codes) =
            super::super::open_unit(&dwarf.gimli, *header, &mut worker).expect("unit");
        let mut entries = Entries::new(&unit, &codes).expect("entries");
        let abbrev = entries
            .read_abbreviation()
            .expect("root")
            .expect("root DIE");
        let mut attrs = Attrs::default();
        let mut whole = entries;
        attrs.read(&mut whole, abbrev).expect("root reads");
        let size = whole.next_offset() - entries.next_offset();
        assert!(size > 1);
        entries.truncate_for_test(size - 1);
        let err = attrs.read(&mut entries, abbrev).expect_err("truncated");
        assert!(matches!(err, gimli::Error::UnexpectedEof(_)), "{err:?}");
    }
}
