//! The pre-dedup table: lowered CUs added one at a time in `.debug_info`
//! order, exact duplicates collapsed as they come, then the FUNCs, VARs
//! and DATASECs that pahole's cross-CU rules pick.

use crate::dedup::{Collapser, Flavor, Leftovers, MergedNames, PreparedCu, StreamingDedup};
use crate::lower::{
    self, Context, FunctionCandidate, KnownTypes, LoweredCu, Shape, VariableCandidate,
};
use crate::types::{Btf, TypeId};

use super::Error;

/// The base a split BTF continues from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SplitBase {
    /// Number of types in the base (its last id).
    pub type_count: u32,
    /// Length of the base's string section.
    pub str_len: u32,
}

/// A lowered CU, prepared for [`Assembler::add`].
#[derive(Debug)]
pub struct ReadyCu<'input> {
    offset: u64,
    types: PreparedCu<'input>,
    functions: Vec<FunctionCandidate<'input>>,
    variables: Vec<VariableCandidate<'input>>,
    warnings: Vec<String>,
    /// To file in the known types once added (see [`lower::KnownTypes`]).
    shaped: Vec<(Shape, TypeId)>,
}

impl<'input> ReadyCu<'input> {
    /// Does the part of [`Assembler::add`] that needs no other CU, so that
    /// it can run in parallel with lowering. `names` is where most of the
    /// CU's names are (see [`MergedNames`]).
    pub fn new(cu: LoweredCu<'input>, names: MergedNames) -> Result<ReadyCu<'input>, Error> {
        let types = PreparedCu::with_known(cu.types, names, cu.known)?;
        Ok(ReadyCu {
            offset: cu.offset,
            types,
            functions: cu.functions,
            variables: cu.variables,
            warnings: cu.warnings,
            shaped: cu.shaped,
        })
    }

    /// Number of types the CU lowered to, counting those found known.
    pub fn type_count(&self) -> usize {
        self.types.len()
    }

    /// Number of the CU's types found known instead of lowered.
    pub fn known_count(&self) -> usize {
        self.types.known_count()
    }

    /// What `encode_force` left out of the CU, one line each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// What is left of a CU once [`Assembler::add`] took what it needed: the
/// memory the CU's lowering allocated and the table did not keep. Dropping
/// it frees that memory; freeing it on the thread that lowered the CU
/// spares glibc's malloc a contended lock (see [`Leftovers`]).
#[derive(Debug)]
pub struct SpentCu<'input> {
    _leftovers: Leftovers<'input>,
    _functions: Vec<FunctionCandidate<'input>>,
    _variables: Vec<VariableCandidate<'input>>,
}

/// Builds the pre-dedup table one lowered CU at a time, in `.debug_info`
/// order, collapsing exact duplicates as it goes
/// ([`crate::dedup::Collapser`]), then adds the FUNCs, VARs and DATASECs.
/// A CU's own table can be dropped as soon as it is added, which is what
/// keeps the peak memory of a vmlinux encoding down.
#[derive(Debug)]
pub struct Assembler<'input> {
    table: Collapser<'input>,
    functions: Vec<FunctionCandidate<'input>>,
    variables: Vec<VariableCandidate<'input>>,
    dedup: Option<StreamingDedup>,
}

/// What an [`Assembler`] built: the pre-dedup table, and the dedup that
/// already ran on it as it grew, if one did.
#[derive(Debug)]
pub struct Assembled<'input> {
    /// The pre-dedup table.
    pub btf: Btf<'input>,
    /// For [`StreamingDedup::finish`] on `btf`.
    pub dedup: Option<StreamingDedup>,
    /// pahole's `--verbose` lines for the functions left out, in its
    /// order (by name, then unit).
    pub skips: Vec<String>,
    /// What `encode_force` left out of the FUNCs and VARs, one line each
    /// naming its CU (without the file).
    pub warnings: Vec<String>,
}

impl<'input> Assembler<'input> {
    /// An empty table; with a `base`, ids continue after the base's.
    pub fn new(base: Option<SplitBase>) -> Self {
        let base = base.unwrap_or_default();
        Assembler {
            table: Collapser::new(base.type_count, base.str_len),
            functions: Vec::new(),
            variables: Vec::new(),
            dedup: None,
        }
    }

    /// An empty standalone table that is deduplicated as `flavor` as far
    /// as it can be while CUs are still being added (see
    /// [`StreamingDedup`]).
    pub fn deduplicating(flavor: Flavor) -> Self {
        Assembler {
            dedup: Some(StreamingDedup::new(flavor)),
            ..Assembler::new(None)
        }
    }

    /// Adds the next CU; returns what is left of it, to be dropped where
    /// the caller sees fit (see [`Leftovers`]).
    pub fn add(&mut self, cu: ReadyCu<'input>) -> Result<SpentCu<'input>, Error> {
        self.add_filing(cu, None)
    }

    /// [`Assembler::add`], then files the table ids of the CU's shaped
    /// types in `known`, for the CUs lowered next.
    pub fn add_filing(
        &mut self,
        cu: ReadyCu<'input>,
        known: Option<&KnownTypes>,
    ) -> Result<SpentCu<'input>, Error> {
        let ReadyCu {
            offset,
            types,
            functions: mut cu_functions,
            variables: mut cu_variables,
            shaped,
            ..
        } = cu;
        let in_cu = || format!("CU at .debug_info+{offset:#x}");
        let (ids, leftovers) = self
            .table
            .add(types)
            .map_err(|err| Error::from(err).context(in_cu()))?;
        if let Some(known) = known {
            // Only a type the table already had: its first copies may
            // refer to a duplicate made in their own CU (compilers repeat
            // an array or a pointer within one unit) where a later copy
            // is matched to the oldest one, and a type once matched is
            // matched to the same table type by every later copy. Filed
            // so, the table is the one lowering every copy gives.
            for (shape, local) in shaped {
                match ids.get(local) {
                    Some(id) if !ids.is_new(id) => known.file(shape, id.0),
                    _ => {}
                }
            }
        }
        let remap = |id: TypeId| {
            ids.get(id).ok_or(lower::Error::DanglingReference {
                cu_offset: offset,
                node: id.0,
            })
        };
        LoweredCu::remap_candidates(&mut cu_functions, &mut cu_variables, remap)?;
        // Drained, not consumed: the emptied lists go back with the rest.
        self.functions.append(&mut cu_functions);
        self.variables.append(&mut cu_variables);
        Ok(SpentCu {
            _leftovers: leftovers,
            _functions: cu_functions,
            _variables: cu_variables,
        })
    }

    /// For a [`Assembler::deduplicating`] table: runs the dedup passes
    /// that can already run on the CUs added so far, which saves
    /// [`StreamingDedup::finish`] that work. Optional, and a no-op for
    /// other tables.
    pub fn dedup_so_far(&mut self) {
        if let Some(dedup) = &mut self.dedup {
            dedup.advance(&self.table.btf().types);
        }
    }

    /// Picks FUNCs and VARs across the CUs added and adds them, with the
    /// DATASECs: the pre-dedup [`Btf`].
    pub fn finish(self, ctx: &Context<'_, 'input>) -> Result<Assembled<'input>, Error> {
        let mut btf = self.table.into_btf();
        let lower::Added { skips, warnings } =
            lower::add_functions_and_variables(&mut btf, self.functions, self.variables, ctx)?;
        Ok(Assembled {
            btf,
            dedup: self.dedup,
            skips,
            warnings,
        })
    }
}

/// [`Assembler`] over `cus`, given in `.debug_info` order. With a `base`,
/// ids continue after the base's.
pub fn assemble<'input>(
    cus: Vec<LoweredCu<'input>>,
    ctx: &Context<'_, 'input>,
    base: Option<SplitBase>,
) -> Result<Btf<'input>, Error> {
    let mut assembler = Assembler::new(base);
    for cu in cus {
        assembler.add(ReadyCu::new(cu, MergedNames::NONE)?)?;
    }
    Ok(assembler.finish(ctx)?.btf)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use bumpalo::Bump;

    use super::*;
    use crate::lower::test_support::open_for_lowering;
    use crate::lower::{lower_cu_with, Features};

    /// The table `path`'s units make, added in order: with the known
    /// types found and filed as the pipeline does, or without any; and
    /// how many types were found known.
    fn table(path: &Path, with_known: bool) -> (Btf<'static>, usize) {
        let features = Features::parse(
            "encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func",
            true,
        )
        .expect("a known feature list");
        let (dwarf, ctx) = open_for_lowering(path, features);
        let names = dwarf
            .merged_debug_str()
            .map_or(MergedNames::NONE, MergedNames::of);
        let known = KnownTypes::new(1 << 12);
        let registry = with_known.then_some(&known);
        let mut assembler = Assembler::new(None);
        let mut found = 0;
        for unit in dwarf.units() {
            let arena = Bump::new();
            let cu = dwarf::walk::walk_unit(dwarf, unit, &arena).expect("walk");
            let lowered = lower_cu_with(&cu, &ctx, registry).expect("lower");
            found += lowered.known.len();
            let ready = ReadyCu::new(lowered, names).expect("prepare");
            drop(assembler.add_filing(ready, registry).expect("add"));
        }
        (assembler.finish(&ctx).expect("finish").btf, found)
    }

    /// Types found known leave the table exactly as lowering every copy
    /// leaves it: the same types, in the same order, with the same ids.
    fn check(path: &Path) -> usize {
        let (plain, none) = table(path, false);
        let (with_known, found) = table(path, true);
        assert_eq!(none, 0);
        assert!(
            plain.types == with_known.types,
            "{}: {} types lowering every copy, {} with {found} found known",
            path.display(),
            plain.types.len(),
            with_known.types.len()
        );
        found
    }

    #[test]
    fn known_types_leave_the_table_as_it_was() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/obj");
        let mut found = 0;
        for file in [
            "multi-cu/gcc-dwarf5.o",
            "multi-cu/clang.o",
            "exec/prog-gcc",
            "exec/prog-clang",
        ] {
            found += check(&root.join(file));
        }
        // Their units share headers: some types must have been found.
        assert!(found > 0, "no type was found known");
    }

    #[test]
    fn known_types_leave_debian_modules_tables_as_they_were() {
        let modules = crate::test_reference::debian_debug(crate::test_reference::DEBIAN_MODULES);
        let mut checked = 0;
        // af_key.ko is one unit: nothing to find. The others are dozens.
        for (module, at_least) in [
            ("net/key/af_key.ko", 0),
            ("net/netfilter/nf_conntrack.ko", 1),
            ("fs/xfs/xfs.ko", 1),
        ] {
            let path = modules.join(module);
            if !path.exists() {
                eprintln!("SKIPPED: {} (run `make corpus`)", path.display());
                continue;
            }
            let found = check(&path);
            eprintln!("{module}: {found} types found known");
            assert!(
                found >= at_least,
                "{}: only {found} types found known",
                path.display()
            );
            checked += 1;
        }
        eprintln!("{checked} modules checked");
    }
}
