//! DWARF model → BTF, with pahole's rules.
//!
//! ## API Structure
//! - [`Features`] says what to encode (pahole's `--btf_features`, or the
//!   legacy flags through [`Features::legacy`]) and which pahole
//!   generation's selection [`Rules`] to follow.
//! - [`Context`] holds what every CU needs: the features, the ELF symbol
//!   facts (indexed once), the language filter, the target's pointer size
//!   and argument registers. It is `Sync`, so CUs can be lowered in
//!   parallel.
//! - [`lower_cu`] turns one [`CuModel`] into a [`LoweredCu`]: its types with
//!   CU-local ids `1..=n`, plus the functions and variables it proposes for
//!   FUNC and VAR. Nothing in it borrows the CU's arena, so the arena can be
//!   dropped right after.
//! - [`add_functions_and_variables`] applies pahole's cross-CU rules to the
//!   candidates of every CU (renumbered with [`LoweredCu::remap_candidates`]
//!   into the table they were added to) and adds the FUNCs, VARs and
//!   DATASECs.
//!
//! Putting the CUs together (collapsing the types they repeat, dedup) is
//! not lowering: [`crate::encode`] does it, and this module knows nothing
//! of it.

mod base;
mod candidate;
mod error;
mod features;
mod functions;
mod known;
mod loops;
mod true_signature;
mod type_map;
mod types;
mod vars;

use dwarf::model::{CuModel, Language};
use dwarf::SymbolFacts;

pub use self::base::SANITIZED_INT_NAME;
pub use self::candidate::FunctionCandidate;
pub use self::error::Error;
pub use self::features::{
    FeatureNotes, FeatureOption, Features, LegacyFlags, Rules, UnknownFeature,
};
pub use self::functions::register_params_for_machine;
pub use self::known::{KnownTypes, Shape};
pub use self::vars::{VariableCandidate, PERCPU_SECTION};

use self::functions::FunctionTable;
use self::type_map::TypeMap;
use self::vars::{DataSymbols, VariableRules};
use crate::types::{Btf, Type, TypeId};

/// `EM_X86_64`, the machine [`Context::new`] assumes.
const X86_64: u16 = 62;

/// What lowering needs besides the CU, shared by all CUs.
#[derive(Debug)]
pub struct Context<'facts, 'input> {
    /// What to encode.
    pub features: Features,
    /// The file's symbol facts.
    pub symbols: &'facts SymbolFacts<'input>,
    /// CUs in these languages are skipped (`--lang_exclude`).
    pub lang_exclude: Vec<Language>,
    /// Address size in bytes (8 for ELFCLASS64), for pointer sizes.
    pub pointer_size: u32,
    /// The file is ET_REL (a kernel module): section addresses are all 0.
    pub relocatable: bool,
    /// The file's ELF `e_machine`.
    pub machine: u16,
    /// DWARF register numbers of the argument registers, in order (see
    /// [`register_params_for_machine`]); empty disables the check.
    pub register_params: &'static [u16],
    functions: FunctionTable<'input>,
    data: DataSymbols<'facts, 'input>,
}

impl<'facts, 'input> Context<'facts, 'input> {
    /// A context for a 64-bit, non-relocatable x86-64 file; adjust the pub
    /// fields for other targets.
    pub fn new(features: Features, symbols: &'facts SymbolFacts<'input>) -> Self {
        // A kernel has tens of thousands of each: building the two tables
        // side by side takes a sizable part off the sequential start.
        let (functions, data) = rayon::join(
            || FunctionTable::for_features(symbols, &features),
            || DataSymbols::new(symbols),
        );
        Context {
            features,
            symbols,
            lang_exclude: Vec::new(),
            pointer_size: 8,
            relocatable: false,
            machine: X86_64,
            register_params: register_params_for_machine(X86_64),
            functions,
            data,
        }
    }

    /// Whether CUs of this language are left out.
    pub fn is_excluded(&self, language: Language) -> bool {
        self.lang_exclude.contains(&language)
    }

    /// Parses pahole's `--lang_exclude` list into languages. The names
    /// are pahole's (dwarves.c `languages[]`, each one `DW_LANG_*` value),
    /// compared without case, plus `asm` for `DW_LANG_Mips_Assembler`; a
    /// name pahole does not know is an error, as it is there, and so is an
    /// empty one (`rust,`, or an empty list): pahole splits at commas only.
    pub fn parse_languages(list: &str) -> Result<Vec<Language>, Error> {
        let mut languages = Vec::new();
        for name in list.split(',') {
            let language = PAHOLE_LANGUAGE_NAMES
                .iter()
                .find(|(known, _)| known.eq_ignore_ascii_case(name))
                .map(|&(_, code)| Language(code))
                .ok_or_else(|| Error::UnknownLanguage {
                    name: name.to_string(),
                })?;
            if !languages.contains(&language) {
                languages.push(language);
            }
        }
        Ok(languages)
    }
}

/// The names pahole 1.31 gives languages (dwarves.c: `lang__str2int` looks
/// up `languages[]` from `DW_LANG_C89` to `DW_LANG_BLISS`, and takes `asm`
/// for `DW_LANG_Mips_Assembler`), with their `DW_LANG_*` values (DWARF 5,
/// table 7.17). Later languages (C17, C++17, ...) have no name there.
const PAHOLE_LANGUAGE_NAMES: &[(&str, u16)] = &[
    ("c89", 0x0001),
    ("c", 0x0002),
    ("ada83", 0x0003),
    ("c++", 0x0004),
    ("cobol74", 0x0005),
    ("cobol85", 0x0006),
    ("fortran77", 0x0007),
    ("fortran90", 0x0008),
    ("pascal83", 0x0009),
    ("modula2", 0x000a),
    ("java", 0x000b),
    ("c99", 0x000c),
    ("ada95", 0x000d),
    ("fortran95", 0x000e),
    ("pli", 0x000f),
    ("objc", 0x0010),
    ("objc++", 0x0011),
    ("upc", 0x0012),
    ("d", 0x0013),
    ("python", 0x0014),
    ("opencl", 0x0015),
    ("go", 0x0016),
    ("modula3", 0x0017),
    ("haskell", 0x0018),
    ("c++03", 0x0019),
    ("c++11", 0x001a),
    ("ocaml", 0x001b),
    ("rust", 0x001c),
    ("c11", 0x001d),
    ("swift", 0x001e),
    ("julia", 0x001f),
    ("dylan", 0x0020),
    ("c++14", 0x0021),
    ("fortran03", 0x0022),
    ("fortran08", 0x0023),
    ("renderscript", 0x0024),
    ("bliss", 0x0025),
    ("asm", 0x8001),
];

/// One CU, lowered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoweredCu<'input> {
    /// The CU's `.debug_info` offset (for ordering and diagnostics).
    pub offset: u64,
    /// Its types; `types[i]` has CU-local id `i + 1`, references are
    /// CU-local too (0 is void).
    pub types: Vec<Type<'input>>,
    /// Functions proposed for FUNC, in DIE order.
    pub functions: Vec<FunctionCandidate<'input>>,
    /// Variables proposed for VAR, in DIE order.
    pub variables: Vec<VariableCandidate<'input>>,
    /// What `encode_force` left out of the CU's types, one line each
    /// (empty without `encode_force`: it is an error then).
    pub warnings: Vec<String>,
    /// The types found in the [`KnownTypes`] instead of lowered: index in
    /// `types` (which holds a stand-in) and table id.
    pub known: Vec<(u32, u32)>,
    /// The shapes to file in the [`KnownTypes`] once the CU's table ids
    /// are known, with the local id of their type (none when anything
    /// was left out of the CU: a shape stands for a lowering that says
    /// nothing).
    pub shaped: Vec<(Shape, TypeId)>,
}

impl LoweredCu<'_> {
    /// Turns the ids of the candidates' types from CU-local ones into the
    /// table's, through `remap` (which fails on an id the CU does not have).
    pub fn remap_candidates<E>(
        functions: &mut [FunctionCandidate<'_>],
        variables: &mut [VariableCandidate<'_>],
        remap: impl Fn(TypeId) -> Result<TypeId, E>,
    ) -> Result<(), E> {
        for candidate in functions {
            functions::remap_candidate(candidate, &remap)?;
        }
        for candidate in variables {
            candidate.ty = remap(candidate.ty)?;
        }
        Ok(())
    }
}

/// Picks, with pahole's cross-CU rules, the FUNCs and VARs among the
/// candidates of every CU (given in `.debug_info` order, their ids already
/// the table's) and adds them to `btf`, with one DATASEC per section.
/// Returns pahole's `--verbose` lines for the functions left out (1.31
/// rules; none for 1.24's), and what `encode_force` left out.
pub fn add_functions_and_variables<'input>(
    btf: &mut Btf<'input>,
    functions: Vec<FunctionCandidate<'input>>,
    variables: Vec<VariableCandidate<'input>>,
    ctx: &Context<'_, 'input>,
) -> Result<Added, Error> {
    let mut skips = Vec::new();
    functions::emit_functions(btf, functions, &ctx.features, &mut skips);
    let warnings = vars::emit_variables(btf, variables, &ctx.features)?;
    Ok(Added { skips, warnings })
}

/// What [`add_functions_and_variables`] reports besides the types it adds.
#[derive(Debug, Default)]
pub struct Added {
    /// pahole's `--verbose` lines for the functions left out.
    pub skips: Vec<String>,
    /// What `encode_force` left out, one line each (naming the CU).
    pub warnings: Vec<String>,
}

/// Lowers one CU. A CU whose language is excluded lowers to nothing.
pub fn lower_cu<'input>(
    cu: &CuModel<'input, '_>,
    ctx: &Context<'_, 'input>,
) -> Result<LoweredCu<'input>, Error> {
    lower_cu_with(cu, ctx, None)
}

/// [`lower_cu`], not lowering again the nodes `known` holds an earlier
/// CU's type for (see [`KnownTypes`]).
pub fn lower_cu_with<'input>(
    cu: &CuModel<'input, '_>,
    ctx: &Context<'_, 'input>,
    known: Option<&KnownTypes>,
) -> Result<LoweredCu<'input>, Error> {
    if ctx.is_excluded(cu.language) {
        return Ok(LoweredCu {
            offset: cu.offset,
            ..LoweredCu::default()
        });
    }
    let mut map = TypeMap::new(cu, ctx.pointer_size)?;
    map.force = ctx.features.encode_force;
    map.float = ctx.features.float;
    let types::LoweredTypes {
        types,
        known,
        mut shaped,
    } = types::lower_types(&map, &ctx.features, known)?;
    let functions = functions::function_candidates(
        cu,
        &map,
        &ctx.functions,
        ctx.pointer_size,
        ctx.relocatable,
        ctx.machine,
        ctx.features.decl_tag,
    )?;
    let rules = VariableRules {
        features: &ctx.features,
        symbols: ctx.symbols,
        index: &ctx.data,
        relocatable: ctx.relocatable,
        machine: ctx.machine,
    };
    let variables = vars::variable_candidates(cu, &map, &rules)?;
    let warnings = map.take_warnings();
    if !warnings.is_empty() {
        shaped.clear();
    }
    Ok(LoweredCu {
        offset: cu.offset,
        types,
        functions,
        variables,
        warnings,
        known,
        shaped,
    })
}

/// Builders for hand-made CU models in unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use dwarf::model::*;

    use super::{Context, Features};

    /// A real file opened for lowering: its DWARF, and a context with
    /// `features` for it. Both are leaked, so that what is lowered can
    /// borrow the file for the test's duration.
    pub fn open_for_lowering(
        path: &std::path::Path,
        features: Features,
    ) -> (&'static dwarf::Dwarf<'static>, Context<'static, 'static>) {
        let elf: &'static dwarf::ElfFile =
            Box::leak(Box::new(dwarf::ElfFile::open(path).expect("open")));
        let symbols = Box::leak(Box::new(elf.symbols().expect("symbols")));
        let dwarf = Box::leak(Box::new(elf.dwarf().expect("dwarf")));
        let mut ctx = Context::new(features, symbols);
        ctx.relocatable = matches!(elf.kind(), dwarf::ElfKind::Relocatable);
        (dwarf, ctx)
    }

    pub fn cu_with<'arena>(nodes: Vec<Node<'static, 'arena>>) -> CuModel<'static, 'arena> {
        CuModel {
            offset: 0,
            name: Some("test.c"),
            language: Language::C11,
            producer_clang: false,
            nodes,
            functions: Vec::new(),
            variables: Vec::new(),
            die_count: 0,
            node_offsets: Vec::new(),
            // Hand-made models: lowering checks every name, and looks for
            // tags everywhere.
            odd_names: true,
            decl_tags: true,
        }
    }

    pub fn node(index: u32) -> TypeRef {
        TypeRef::Node(NodeId(index))
    }

    pub fn base(
        name: &'static str,
        byte_size: u32,
        encoding: BaseEncoding,
    ) -> Node<'static, 'static> {
        Node::Base {
            name,
            byte_size,
            encoding,
            bit_size: None,
        }
    }

    pub fn base_int() -> Node<'static, 'static> {
        base("int", 4, BaseEncoding::Signed)
    }

    pub fn composite<'arena>(
        kind: CompositeKind,
        name: Option<&'static str>,
        byte_size: u32,
        declaration: bool,
        members: &'arena [Member<'static, 'arena>],
    ) -> Node<'static, 'arena> {
        Node::Composite {
            kind,
            name,
            byte_size,
            declaration,
            members,
            decl_tags: &[],
        }
    }

    pub fn param(
        name: Option<&'static str>,
        ty: TypeRef,
        location: ParamLocation,
    ) -> Param<'static, 'static> {
        // The facts pahole 1436daf would have recorded for a DIE with
        // that location.
        let entry = match location {
            ParamLocation::Register(register) => ParamEntry {
                has_location: true,
                register: u8::try_from(register).ok(),
                wide_register: u8::try_from(register).ok(),
                ..ParamEntry::default()
            },
            ParamLocation::Other => ParamEntry {
                has_location: true,
                ..ParamEntry::default()
            },
            ParamLocation::Constant => ParamEntry {
                has_const_value: true,
                ..ParamEntry::default()
            },
            ParamLocation::OptimizedOut | ParamLocation::Unknown => ParamEntry::default(),
        };
        Param {
            name,
            ty,
            location,
            entry,
            decl_tags: &[],
        }
    }

    pub fn function<'arena>(
        name: &'static str,
        params: &'arena [Param<'static, 'arena>],
        declaration: bool,
    ) -> Function<'static, 'arena> {
        Function {
            die_offset: 0,
            name,
            linkage_name: None,
            ret: node(0),
            params,
            varargs: false,
            external: false,
            declaration,
            inline: false,
            low_pc: Some(0x1000),
            entry_pc: Some(0x1000),
            nocall: false,
            signature_changed: false,
            reordered: false,
            decl_tags: &[],
        }
    }

    pub(crate) use crate::test_types::int;
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use crate::encode::{assemble, SplitBase};
    use crate::test_types::test_name;
    use crate::types::{FuncProto, Linkage, Object, Param};
    use dwarf::model::{Language, ParamLocation};
    use dwarf::symbols::FuncSymbol;

    #[test]
    fn assemble_collapses_repeated_types_and_adds_funcs() {
        let arena = bumpalo::Bump::new();
        let params =
            arena.alloc_slice_copy(&[param(Some("x"), node(1), ParamLocation::Register(5))]);
        let mut cu0 = cu_with(vec![
            base_int(),
            dwarf::model::Node::Pointer {
                target: node(0),
                type_tags: &[],
            },
        ]);
        cu0.functions = vec![function("f", params, false)];
        let mut cu1 = cu_with(vec![
            base_int(),
            dwarf::model::Node::Pointer {
                target: node(0),
                type_tags: &[],
            },
        ]);
        cu1.offset = 0x100;
        cu1.functions = vec![function("f", params, false)];

        let mut facts = SymbolFacts::default();
        facts.functions.push(FuncSymbol {
            name: "f",
            address: 0x10,
            size: 4,
            section_index: 1,
            global: true,
        });
        let ctx = Context::new(Features::default(), &facts);
        let lowered = vec![lower_cu(&cu0, &ctx).unwrap(), lower_cu(&cu1, &ctx).unwrap()];
        assert_eq!(
            lowered[1].types[1],
            crate::types::Type::Ptr(TypeId(1)),
            "CU-local before assembly"
        );

        let mut lowered = lowered;
        let cu2 = cu_with(vec![base(
            "char",
            1,
            dwarf::model::BaseEncoding::SignedChar,
        )]);
        lowered.push(lower_cu(&cu2, &ctx).unwrap());

        let btf = assemble(
            lowered,
            &ctx,
            Some(SplitBase {
                type_count: 10,
                str_len: 100,
            }),
        )
        .unwrap();
        assert_eq!(btf.first_id(), TypeId(11));
        // CU 1 repeats CU 0 exactly, so it adds nothing; CU 2's new type
        // continues the ids.
        assert_eq!(
            btf.get(TypeId(12)),
            Some(&crate::types::Type::Ptr(TypeId(11)))
        );
        assert!(
            matches!(btf.get(TypeId(13)), Some(crate::types::Type::Int(i)) if i.name == "char")
        );
        // One FUNC for "f" (1.24: first definition), after the types.
        assert_eq!(btf.count(), 5);
        assert_eq!(
            btf.get(TypeId(14)),
            Some(&crate::types::Type::FuncProto(FuncProto {
                ret: TypeId(11),
                params: vec![Param {
                    name: test_name("x"),
                    ty: TypeId(12)
                }]
                .into()
            }))
        );
        assert_eq!(
            btf.get(TypeId(15)),
            Some(&crate::types::Type::Func(Object {
                name: "f",
                ty: TypeId(14),
                linkage: Linkage::Static
            }))
        );
        assert_eq!(btf.base_str_len, 100);
    }

    #[test]
    fn excluded_language_lowers_to_nothing() {
        let mut cu = cu_with(vec![base_int()]);
        cu.language = Language::RUST;
        let facts = SymbolFacts::default();
        let mut ctx = Context::new(Features::default(), &facts);
        ctx.lang_exclude = Context::parse_languages("rust").unwrap();
        assert!(lower_cu(&cu, &ctx).unwrap().types.is_empty());
        cu.language = Language::C11;
        assert_eq!(lower_cu(&cu, &ctx).unwrap().types.len(), 1);
        assert!(Context::parse_languages("klingon").is_err());
        // pahole splits at commas only: an empty name is unknown too.
        assert!(Context::parse_languages("rust,").is_err());
        assert!(Context::parse_languages("").is_err());
        assert_eq!(
            Context::parse_languages("RUST,c89,asm").unwrap(),
            [Language::RUST, Language::C89, Language::MIPS_ASSEMBLER]
        );
    }
}
