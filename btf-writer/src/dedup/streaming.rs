//! Deduplicating a table while it is still being filled, CU after CU.
//!
//! The primitive and graph passes only look back: a type's outcome depends
//! on the types before it and on those it reaches, and a CU's types reach
//! only their own CU and earlier ones (the collapse keeps it so). Those
//! two passes can therefore run on each CU as it is added, while other
//! CUs are still being walked, and only FWD resolution, the reference
//! pass and the compaction wait for the whole table.
//!
//! One thing is not known before the end: libbpf runs the graph pass after
//! the primitive pass of *all* types, so the growth of its candidate map,
//! and with it the order in which a key's candidates are tried, depends on
//! how many primitives the whole table has. The graph pass therefore runs
//! on a table of its own whose order is provisional, and settles a type
//! with several candidates only when the order cannot matter (see
//! `Deduper::dedup_composite_unordered`). At the first type where it
//! could, the pass stops; at the end its entries are filed after the
//! primitives' in libbpf's order, and the pass goes on from there. On
//! Debian's vmlinux it never stops: 770 types have several candidates, and
//! none of them is equivalent to more than one.
//!
//! The order of the passes over different CUs also changes (primitives of
//! a later CU come after the graph pass of an earlier one), which no
//! outcome can see: the graph pass of a CU reads nothing a later CU's
//! primitives decide, except the full enum that an enum forward
//! declaration resolves to, and enums of one name are equivalent to a
//! forward declaration of it whichever full enum it resolved to.

use super::common::{Dedup, Error, Flavor};
use super::state::{Deduper, Suspended};
use super::table::CandidateTable;
use super::view::Types;
use crate::types::{Btf, Type};

/// A dedup fed a growing standalone table (no base).
#[derive(Debug)]
pub struct StreamingDedup {
    /// The state between steps, with the primitive pass's table, which is
    /// in libbpf's order (only primitives have been filed in it); or what
    /// went wrong in a step, for [`StreamingDedup::finish`] to report.
    state: Result<Suspended, Error>,
    /// The graph pass's table, in a provisional order, journaled.
    composites: CandidateTable<'static>,
    /// The first id the primitive pass has not seen.
    primitives_done: u32,
    /// The first id the graph pass has not settled.
    composites_done: u32,
}

impl StreamingDedup {
    /// Starts a dedup reproducing `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        StreamingDedup {
            state: Deduper::new(Types::new(&[], &[]), flavor).map(Deduper::suspend),
            composites: CandidateTable::journaled(),
            primitives_done: 1,
            composites_done: 1,
        }
    }

    /// Whether the graph pass met a type whose outcome depends on the
    /// order: only then does it lag behind the primitive pass.
    fn composites_stopped(&self) -> bool {
        self.composites_done < self.primitives_done
    }

    /// Runs the passes that only look back on the types added since the
    /// last step. `types` is the whole table so far; it must begin with
    /// the types of the last step, and its types may refer to no later
    /// type. A failure is kept for [`StreamingDedup::finish`].
    pub fn advance(&mut self, types: &[Type<'_>]) {
        let Ok(state) = &mut self.state else { return };
        let state = std::mem::take(state);
        self.state = self.step(Types::new(&[], types), state);
    }

    fn step(&mut self, types: Types<'_, '_>, state: Suspended) -> Result<Suspended, Error> {
        let mut d = Deduper::resume(types, state)?;
        let end = d.types.id_count();
        let composites_stopped = self.composites_stopped();
        d.primitive_pass(self.primitives_done..end);
        self.primitives_done = end;
        if !composites_stopped {
            let primitives = std::mem::replace(&mut d.table, std::mem::take(&mut self.composites));
            d.provisional_order = true;
            let stopped = d.composite_pass(self.composites_done..end);
            self.composites = std::mem::replace(&mut d.table, primitives).into_frozen();
            self.composites_done = stopped?.unwrap_or(end);
        }
        Ok(d.suspend())
    }

    /// Deduplicates `btf`, whose types begin with those of the last step
    /// ([`super::dedup_as`] of `btf`, without a base).
    pub fn finish<'a>(self, btf: &Btf<'a>) -> Result<Dedup<'a>, Error> {
        if btf.base_type_count != 0 {
            return Err(Error::BaseMismatch {
                expected: btf.base_type_count,
                found: 0,
            });
        }
        let mut d = Deduper::resume_last(Types::new(&[], &btf.types), self.state?)?;
        let end = d.types.id_count();
        d.primitive_pass(self.primitives_done..end);
        // libbpf filed the graph pass's candidates after all primitives.
        d.table.refile(&self.composites);
        d.composite_pass(self.composites_done..end)?;
        d.later_passes()?;
        let (btf, remap) = d.finish(btf)?;
        Ok(Dedup { btf, remap })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::dedup_as;
    use crate::test_types::int;
    use crate::types::{Composite, Fwd, IntEncoding, TypeId};

    fn st(name: &'static str, size: u32, members: &[(&'static str, u32)]) -> Type<'static> {
        Type::Struct(Composite {
            name,
            size,
            members: crate::test_types::members(members),
            kind_flag: false,
        })
    }

    /// Streams `btf` CU by CU (`ends`: the type count at the end of each
    /// CU), returning whether the graph pass had to stop, and checks the
    /// result against deduplicating the whole table at once, in both
    /// flavors.
    fn streamed_as_whole(btf: &Btf<'static>, ends: &[usize]) -> bool {
        let mut stopped = false;
        for flavor in [Flavor::Libbpf1_1, Flavor::Libbpf1_7] {
            let mut streaming = StreamingDedup::new(flavor);
            for &end in ends {
                streaming.advance(&btf.types[..end]);
            }
            stopped = streaming.composites_stopped();
            let streamed = streaming.finish(btf).expect("streamed");
            let whole = dedup_as(btf, None, flavor).expect("whole");
            assert_eq!(streamed.btf.types, whole.btf.types, "{flavor:?}");
            assert_eq!(streamed.remap, whole.remap, "{flavor:?}");
        }
        stopped
    }

    /// Three CUs with a `struct s { struct t *p; }`: two different full
    /// `t`s, then `t` only declared. The third `s` is equivalent to both
    /// earlier ones, so which it becomes depends on the candidate order.
    fn two_fitting_candidates() -> Btf<'static> {
        // libbpf's map grows (which reverses every chain) between filing
        // the second `s` and looking up the third while the graph pass's
        // own table, which started empty, does not: the three `u`s fill
        // the one but not the other past a growth. The orders differ.
        let types = vec![
            int("char", 1, IntEncoding::SIGNED),
            int("short", 2, IntEncoding::SIGNED),
            int("int", 4, IntEncoding::SIGNED),
            st("t", 4, &[("x", 3)]),
            Type::Ptr(TypeId(4)),
            st("s", 8, &[("p", 5)]),
            int("u32", 4, 0),
            st("t", 4, &[("x", 7)]),
            Type::Ptr(TypeId(8)),
            st("s", 8, &[("p", 9)]),
            st("u1", 0, &[]),
            st("u2", 0, &[]),
            st("u3", 0, &[]),
            Type::Fwd(Fwd {
                name: "t",
                union: false,
            }),
            Type::Ptr(TypeId(14)),
            st("s", 8, &[("p", 15)]),
        ];
        Btf {
            types,
            ..Btf::default()
        }
    }

    #[test]
    fn an_order_dependent_type_waits_for_the_order() {
        let btf = two_fitting_candidates();
        assert!(streamed_as_whole(&btf, &[6, 10, 16]));
    }

    #[test]
    fn types_with_one_fitting_candidate_are_settled_while_streaming() {
        let mut btf = two_fitting_candidates();
        // The declared `t` becomes a third full one: each `s` now fits
        // only its own kind.
        btf.types[13] = st("t", 4, &[("y", 3)]);
        assert!(!streamed_as_whole(&btf, &[6, 10, 16]));
    }

    #[test]
    fn functions_and_variables_added_at_the_end_are_deduplicated_too() {
        let mut btf = two_fitting_candidates();
        btf.types[13] = st("t", 4, &[("y", 3)]);
        let streamed_types = btf.types.len();
        btf.types.push(Type::FuncProto(crate::types::FuncProto {
            ret: TypeId(1),
            params: Box::default(),
        }));
        btf.types.push(Type::FuncProto(crate::types::FuncProto {
            ret: TypeId(1),
            params: Box::default(),
        }));
        btf.types.push(int("int", 4, IntEncoding::SIGNED));
        let mut streaming = StreamingDedup::new(Flavor::Libbpf1_7);
        streaming.advance(&btf.types[..streamed_types]);
        let streamed = streaming.finish(&btf).expect("streamed");
        let whole = dedup_as(&btf, None, Flavor::Libbpf1_7).expect("whole");
        assert_eq!(streamed.btf.types, whole.btf.types);
        assert!(whole.btf.types.len() < btf.types.len());
    }

    /// Several canonical candidates under one key while streaming (the
    /// unordered check): candidates whose members refer to types of other
    /// names are passed over without a walk, and the result is the whole
    /// dedup's. The last union's `handler` typedef matches the second
    /// union's, so it merges there; the one before matches none.
    #[test]
    fn candidates_of_one_key_apart_by_their_members_types() {
        let tp = |name| {
            Type::Typedef(crate::types::Named {
                name,
                ty: TypeId(1),
            })
        };
        let union_of = |event, handler| {
            Type::Union(Composite {
                name: "",
                size: 8,
                members: crate::test_types::members(&[("event", event), ("handler", handler)]),
                kind_flag: false,
            })
        };
        let types = vec![
            int("int", 4, IntEncoding::SIGNED), // 1
            st("ev", 8, &[("x", 1)]),           // 2
            tp("h_a"),                          // 3
            union_of(2, 3),                     // 4
            tp("h_b"),                          // 5
            union_of(2, 5),                     // 6
            tp("h_c"),                          // 7
            union_of(2, 7),                     // 8
            tp("h_d"),                          // 9
            union_of(2, 9),                     // 10
            tp("h_b"),                          // 11
            union_of(2, 11),                    // 12
        ];
        let btf = Btf {
            types,
            ..Btf::default()
        };
        streamed_as_whole(&btf, &[4, 8, 10, 12]);
        let whole = dedup_as(&btf, None, Flavor::Libbpf1_7).expect("whole");
        assert_eq!(whole.btf.types.len(), 10);
        assert_eq!(whole.remap[12], TypeId(6));
    }

    #[test]
    fn a_bad_reference_is_reported_at_the_end() {
        let mut btf = two_fitting_candidates();
        btf.types[4] = Type::Ptr(TypeId(99));
        let mut streaming = StreamingDedup::new(Flavor::Libbpf1_7);
        streaming.advance(&btf.types);
        assert_eq!(
            streaming.finish(&btf).map(|d| d.btf.types.len()),
            Err(Error::DanglingReference {
                type_id: TypeId(5),
                referenced: TypeId(99)
            })
        );
    }
}
