//! Matching the types of the two sides: both are described into one
//! interner, and what is left over after pairing equal descriptions, per
//! kind, is the difference.

use std::collections::HashMap;

use super::desc::{Interner, NodeId};
use super::describe::Describer;
use super::hasher::FastBuild;
use super::report::{examples, DiffReport, KindDiff};
use super::DiffOptions;
use crate::raw::Kind;
use crate::types::{Btf, TypeId};

// One lifetime for both sides' strings so that one interner serves both;
// `Btf` is covariant, so the callers' distinct lifetimes shrink to it.
pub(super) fn compare<'t, 's>(
    a: &'t Btf<'s>,
    a_base: Option<&'t Btf<'s>>,
    b: &'t Btf<'s>,
    b_base: Option<&'t Btf<'s>>,
    options: &DiffOptions,
) -> DiffReport {
    let max_examples = options.max_examples;
    let mut interner = Interner::default();
    let mut counts: HashMap<(Kind, NodeId), [usize; 2], FastBuild> = HashMap::default();
    let mut totals: HashMap<Kind, [usize; 2]> = HashMap::new();
    for (side, (btf, base)) in [(a, a_base), (b, b_base)].into_iter().enumerate() {
        let mut describer = Describer::new(btf, base, options.datasec_layout);
        let mut id = btf.first_id().0;
        for ty in &btf.types {
            let kind = ty.kind();
            let node = describer.describe(&mut interner, TypeId(id));
            bump(counts.entry((kind, node)).or_default(), side);
            bump(totals.entry(kind).or_default(), side);
            id = id.wrapping_add(1);
        }
    }

    let mut extras: HashMap<Kind, [Vec<(NodeId, usize)>; 2]> = HashMap::new();
    for (&(kind, node), &[in_a, in_b]) in &counts {
        if in_a > in_b {
            extras.entry(kind).or_default()[0].push((node, in_a - in_b));
        } else if in_b > in_a {
            extras.entry(kind).or_default()[1].push((node, in_b - in_a));
        }
    }

    let mut kinds = Vec::new();
    for kind in (Kind::INT.0..=Kind::MAX.0).map(Kind) {
        let Some(&[a_total, b_total]) = totals.get(&kind) else {
            continue;
        };
        let [extra_a, extra_b] = extras.remove(&kind).unwrap_or_default();
        kinds.push(KindDiff {
            kind,
            a_total,
            b_total,
            only_a: extra_a.iter().map(|&(_, n)| n).sum(),
            only_b: extra_b.iter().map(|&(_, n)| n).sum(),
            examples_a: examples(&interner, &extra_a, max_examples),
            examples_b: examples(&interner, &extra_b, max_examples),
        });
    }
    DiffReport { kinds }
}

fn bump(pair: &mut [usize; 2], side: usize) {
    if let Some(count) = pair.get_mut(side) {
        *count += 1;
    }
}
