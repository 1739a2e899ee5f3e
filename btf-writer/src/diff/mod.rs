//! Semantic comparison of two BTF tables, independent of type-id order:
//! the project's `btfdiff`.
//!
//! Every type is reduced to a canonical description: its kind and all its
//! fields, with each referenced type described in place of its id. A
//! reference to a *named* STRUCT, UNION, ENUM, ENUM64, FWD or TYPEDEF is
//! described by kind and name only; that cuts the cycles C allows (they all
//! go through a named aggregate) and keeps descriptions small, while the
//! named type's own fields are still compared through its own description.
//! Everything else (pointers, qualifiers, arrays, prototypes, anonymous
//! aggregates, ints, ...) is expanded inline.
//!
//! Descriptions are hash-consed: each distinct description gets a node id,
//! children are node ids, and two types have equal descriptions exactly
//! when their node ids are equal (the interner compares full values, the
//! hash only picks the bucket). Both sides share one interner, so comparing
//! the two tables is comparing multisets of node ids, per kind.
//!
//! Types of a base table are described the same way as the split's, so a
//! split referencing base type X equals one referencing an equal X in
//! another base, whatever X's id. Only the split's own types are counted.
//!
//! Everything the model holds is compared, including a STRUCT/UNION's
//! `kind_flag` (libbpf, hence pahole, sets it when a member is a bitfield) and
//! parameter names. ENUM values are compared on their 32 stored bits.
//! A loop that does not pass through a named type is invalid BTF (the
//! kernel rejects it); it is cut with a `<cycle>` marker, and the result
//! then depends on where the walk entered the loop.
//!
//! The parts: `describe` turns one side's types into descriptions, `desc`
//! holds the descriptions and their interner, `compare` matches the two
//! sides' descriptions per kind, `report` and `render` turn what is left
//! over into the report and its text.

mod compare;
mod desc;
mod describe;
mod hasher;
#[cfg(test)]
mod real_files;
mod render;
mod report;
#[cfg(test)]
mod tests;

use crate::types::Btf;

pub use self::report::{DiffReport, KindDiff};

/// How many example descriptions [`diff`] keeps per kind and side.
pub const DEFAULT_MAX_EXAMPLES: usize = 5;

/// What [`diff_with`] compares and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffOptions {
    /// Example descriptions kept per kind and side.
    pub max_examples: usize,
    /// Compare DATASECs' layout too: the section size and each variable's
    /// offset. Off by default: the layout is the linker's, not the types'
    /// (the same objects linked in another order place the variables
    /// elsewhere), so by default a DATASEC is its name and the multiset of
    /// its variables with their sizes.
    pub datasec_layout: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            max_examples: DEFAULT_MAX_EXAMPLES,
            datasec_layout: false,
        }
    }
}

/// Compares `a` and `b` (each optionally split on a base) semantically,
/// with the default [`DiffOptions`].
pub fn diff(a: &Btf, a_base: Option<&Btf>, b: &Btf, b_base: Option<&Btf>) -> DiffReport {
    diff_with(a, a_base, b, b_base, &DiffOptions::default())
}

/// [`diff`] keeping up to `max_examples` example descriptions per kind and
/// side.
pub fn diff_with_examples(
    a: &Btf,
    a_base: Option<&Btf>,
    b: &Btf,
    b_base: Option<&Btf>,
    max_examples: usize,
) -> DiffReport {
    let options = DiffOptions {
        max_examples,
        ..DiffOptions::default()
    };
    diff_with(a, a_base, b, b_base, &options)
}

/// [`diff`] with explicit options.
pub fn diff_with(
    a: &Btf,
    a_base: Option<&Btf>,
    b: &Btf,
    b_base: Option<&Btf>,
    options: &DiffOptions,
) -> DiffReport {
    compare::compare(a, a_base, b, b_base, options)
}
