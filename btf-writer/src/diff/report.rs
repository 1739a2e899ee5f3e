//! The result of a comparison, per kind, and its text form (`btfenc
//! diff`'s output).

use std::fmt::{self, Write as _};

use super::desc::{Interner, NodeId};
use crate::raw::Kind;

/// The comparison of one kind's types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindDiff {
    /// The kind.
    pub kind: Kind,
    /// Number of types of this kind in `a` (split part only).
    pub a_total: usize,
    /// Number of types of this kind in `b` (split part only).
    pub b_total: usize,
    /// Types of `a` without an equal counterpart in `b` (multiset
    /// difference: two equal types in `a` and one in `b` count one).
    pub only_a: usize,
    /// Types of `b` without an equal counterpart in `a`.
    pub only_b: usize,
    /// Some of `a`'s extra descriptions, sorted, at most the requested count.
    pub examples_a: Vec<String>,
    /// Some of `b`'s extra descriptions, sorted.
    pub examples_b: Vec<String>,
}

impl KindDiff {
    /// Whether the two sides hold the same multiset of this kind.
    pub fn is_empty(&self) -> bool {
        self.only_a == 0 && self.only_b == 0
    }
}

/// The result of [`diff`](super::diff): one entry per kind present on either side, in
/// kind-number order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffReport {
    /// Per-kind comparisons.
    pub kinds: Vec<KindDiff>,
}

impl DiffReport {
    /// Whether both sides hold exactly the same types.
    pub fn is_empty(&self) -> bool {
        self.kinds.iter().all(KindDiff::is_empty)
    }

    /// The entries with differences whose kind is not in `allowed`; empty
    /// when all differences are of the allowed kinds.
    pub fn differences_outside(&self, allowed: &[Kind]) -> Vec<&KindDiff> {
        self.kinds
            .iter()
            .filter(|entry| !entry.is_empty())
            .filter(|entry| !allowed.contains(&entry.kind))
            .collect()
    }

    /// The entry of `kind`, if either side has that kind.
    pub fn kind(&self, kind: Kind) -> Option<&KindDiff> {
        self.kinds.iter().find(|entry| entry.kind == kind)
    }

    /// Total number of unmatched types, both sides together.
    pub fn difference_count(&self) -> usize {
        self.kinds
            .iter()
            .map(|entry| entry.only_a + entry.only_b)
            .sum()
    }
}

/// Like `diff(1)`, an empty report prints nothing, so that "no output"
/// means "same types". Otherwise every kind gets its count line (equal
/// kinds too, for context), followed by its examples.
impl fmt::Display for DiffReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return Ok(());
        }
        for entry in &self.kinds {
            let kind = entry.kind;
            writeln!(
                f,
                "{kind}: a={} b={} only_a={} only_b={}",
                entry.a_total, entry.b_total, entry.only_a, entry.only_b
            )?;
            for example in &entry.examples_a {
                writeln!(f, "  only in a: {example}")?;
            }
            for example in &entry.examples_b {
                writeln!(f, "  only in b: {example}")?;
            }
        }
        Ok(())
    }
}

/// Renders the extras and keeps the first `max` in sorted order, so that
/// the report does not depend on hash-map iteration order.
pub(super) fn examples(
    interner: &Interner<'_>,
    extras: &[(NodeId, usize)],
    max: usize,
) -> Vec<String> {
    if max == 0 {
        return Vec::new();
    }
    let mut rendered: Vec<String> = extras
        .iter()
        .map(|&(node, count)| {
            let mut text = interner.render(node);
            if count > 1 {
                let _ = write!(text, " (x{count})");
            }
            text
        })
        .collect();
    rendered.sort_unstable();
    rendered.truncate(max);
    rendered
}
