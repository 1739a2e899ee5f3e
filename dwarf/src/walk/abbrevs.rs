//! A unit's abbreviations, as the walker reads them: each declaration
//! (tag, children flag, attribute specs) with what the walker derived from
//! it, in a compact table dense by code, so that reading a DIE touches only
//! that table. How they are parsed and shared between the units a worker
//! walks is `abbrev_cache.rs`.

use gimli::constants as dw;
use gimli::AttributeSpecification;

use super::layout::Layout;
use super::plan::{Purpose, Step};

/// One declaration and what the walker derived from it.
#[derive(Clone, Copy)]
pub(super) struct Abbrev {
    /// How its DIEs are read on the fast path, if they can be.
    pub(super) layout: Option<Layout>,
    /// `DW_TAG_null` (0) in the slots of codes a unit does not have.
    pub(super) tag: dw::DwTag,
    pub(super) has_children: bool,
    /// The scopes its DIEs are decoded in (see [`wanted_in`](super::scope::wanted_in)).
    pub(super) wanted_in: u16,
    /// By [`Purpose`]: where its plan's steps are in its [`Table`].
    pub(super) plans: [(u32, u32); 2],
    /// Where its attribute specs are in its [`Table`].
    pub(super) specs: (u32, u32),
}

/// What stands in the slots of codes a unit does not have.
pub(super) const NO_ABBREV: Abbrev = Abbrev {
    layout: None,
    tag: dw::DwTag(0),
    has_children: false,
    wanted_in: 0,
    plans: [(0, 0); 2],
    specs: (0, 0),
};

/// Declarations with their specs and plans' steps.
#[derive(Default)]
pub(super) struct Table {
    pub(super) abbrevs: Vec<Abbrev>,
    pub(super) specs: Vec<AttributeSpecification>,
    pub(super) steps: Vec<Step>,
}

impl Table {
    pub(super) fn specs(&self, abbrev: &Abbrev) -> &[AttributeSpecification] {
        let (start, len) = abbrev.specs;
        let start = start as usize;
        self.specs.get(start..start + len as usize).unwrap_or(&[])
    }

    #[inline(always)]
    pub(super) fn steps(&self, abbrev: &Abbrev, purpose: Purpose) -> &[Step] {
        let (start, len) = abbrev.plans[purpose as usize];
        let start = start as usize;
        self.steps.get(start..start + len as usize).unwrap_or(&[])
    }

    /// A copy of `abbrev` of table `from`, with its specs and steps
    /// appended to this table's.
    pub(super) fn copy(&mut self, from: &Table, abbrev: &Abbrev) -> Abbrev {
        let mut copy = *abbrev;
        copy.specs.0 = self.specs.len() as u32;
        self.specs.extend_from_slice(from.specs(abbrev));
        for purpose in [Purpose::Visit, Purpose::Skip] {
            copy.plans[purpose as usize].0 = self.steps.len() as u32;
            self.steps.extend_from_slice(from.steps(abbrev, purpose));
        }
        copy
    }

    pub(super) fn clear(&mut self) {
        self.abbrevs.clear();
        self.specs.clear();
        self.steps.clear();
    }
}

/// A unit's abbreviations: its own copies of the declarations its codes
/// stand for.
#[derive(Default)]
pub(super) struct UnitAbbrevs {
    /// Declarations by code up to [`MAX_DENSE_CODE`] ([`NO_ABBREV`] for
    /// codes the table does not have), with the specs and steps of all.
    pub(super) table: Table,
    /// Larger codes and their declarations (gcc and clang number codes
    /// densely from 1; this is for odd producers).
    pub(super) sparse: Vec<(u64, Abbrev)>,
}

/// Codes up to this are looked up by index.
const MAX_DENSE_CODE: u64 = 1 << 16;

impl UnitAbbrevs {
    /// The declaration of `code`, if the unit has it.
    #[inline(always)]
    pub(super) fn get(&self, code: u64) -> Option<&Abbrev> {
        if code <= MAX_DENSE_CODE {
            return self
                .table
                .abbrevs
                .get(code as usize)
                .filter(|abbrev| abbrev.tag.0 != 0);
        }
        let (_, abbrev) = self.sparse.iter().find(|(known, _)| *known == code)?;
        Some(abbrev)
    }

    /// `abbrev`'s attribute specs.
    pub(super) fn specs(&self, abbrev: &Abbrev) -> &[AttributeSpecification] {
        self.table.specs(abbrev)
    }

    /// The steps of `abbrev`'s plan for `purpose`.
    #[inline(always)]
    pub(super) fn steps(&self, abbrev: &Abbrev, purpose: Purpose) -> &[Step] {
        self.table.steps(abbrev, purpose)
    }

    /// Gives `code` a copy of declaration `id` of `declarations`; `Err`
    /// if the unit had the code already.
    pub(super) fn insert(&mut self, code: u64, declarations: &Table, id: u32) -> Result<(), ()> {
        let abbrev = declarations.abbrevs.get(id as usize).ok_or(())?;
        if code > MAX_DENSE_CODE {
            if self.sparse.iter().any(|(known, _)| *known == code) {
                return Err(());
            }
            let copy = self.table.copy(declarations, abbrev);
            self.sparse.push((code, copy));
            return Ok(());
        }
        let slot = code as usize;
        match self.table.abbrevs.get(slot) {
            Some(known) if known.tag.0 != 0 => return Err(()),
            Some(_) => {}
            None => self.table.abbrevs.resize(slot + 1, NO_ABBREV),
        }
        let copy = self.table.copy(declarations, abbrev);
        if let Some(place) = self.table.abbrevs.get_mut(slot) {
            *place = copy;
        }
        Ok(())
    }
}
#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A unit without abbreviations, for readers that never look one up.
    pub(in crate::walk) fn empty() -> &'static UnitAbbrevs {
        Box::leak(Box::default())
    }
}
