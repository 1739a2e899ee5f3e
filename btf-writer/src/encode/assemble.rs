//! The pre-dedup table: lowered CUs added one at a time in `.debug_info`
//! order, exact duplicates collapsed as they come, then the FUNCs, VARs
//! and DATASECs that pahole's cross-CU rules pick.

use crate::dedup::{Collapser, Flavor, Leftovers, MergedNames, PreparedCu, StreamingDedup};
use crate::lower::{self, Context, FunctionCandidate, LoweredCu, VariableCandidate};
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
}

impl<'input> ReadyCu<'input> {
    /// Does the part of [`Assembler::add`] that needs no other CU, so that
    /// it can run in parallel with lowering. `names` is where most of the
    /// CU's names are (see [`MergedNames`]).
    pub fn new(cu: LoweredCu<'input>, names: MergedNames) -> Result<ReadyCu<'input>, Error> {
        let types = PreparedCu::new(cu.types, names)?;
        Ok(ReadyCu {
            offset: cu.offset,
            types,
            functions: cu.functions,
            variables: cu.variables,
            warnings: cu.warnings,
        })
    }

    /// Number of types the CU lowered to.
    pub fn type_count(&self) -> usize {
        self.types.len()
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
        let ReadyCu {
            offset,
            types,
            functions: mut cu_functions,
            variables: mut cu_variables,
            ..
        } = cu;
        let in_cu = || format!("CU at .debug_info+{offset:#x}");
        let (ids, leftovers) = self
            .table
            .add(types)
            .map_err(|err| Error::from(err).context(in_cu()))?;
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
