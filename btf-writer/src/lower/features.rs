//! Which BTF features to encode, and which pahole generation's selection
//! rules to follow.
//!
//! pahole has two ways to say what to encode. Up to 1.25 there were only
//! flags (`--btf_gen_floats`, `--skip_encoding_btf_vars`, ...), each flipping
//! one default. Since 1.26 `--btf_features=LIST` names every feature to turn
//! on and everything not named is off. pahole 1.31 still takes both
//! spellings, in one pass over its command line that mutates one set of
//! switches ([`Features::from_pahole_options`] replays that pass). Both
//! spellings give pahole 1.31's selection rules ([`Rules::V1_31`]);
//! [`Features::legacy`] is pahole 1.24, for when 1.24 is asked for
//! explicitly.

use std::fmt;

/// Which pahole release's selection rules (for FUNC and VAR) to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rules {
    /// pahole 1.24: a FUNC for the first definition of each exact ELF
    /// function name; VARs for per-CPU symbols, named after the symbol
    /// (function-local statics included).
    V1_24,
    /// pahole 1.31: ELF names compared without their `.suffix`; functions
    /// seen in several CUs merged and checked for consistency; VARs named
    /// after DWARF, top-level variables only.
    V1_31,
}

/// The BTF features of pahole 1.31 (`--btf_features`), plus the rule set.
///
/// Field names follow pahole's feature names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Features {
    /// `encode_force`: skip symbols with invalid names, and variables of
    /// type void, instead of failing.
    pub encode_force: bool,
    /// `var`: VARs and a DATASEC for per-CPU variables.
    pub var: bool,
    /// `float`: FLOAT for floating point base types (else INT, as old
    /// pahole did).
    pub float: bool,
    /// `decl_tag`: DECL_TAG for `btf_decl_tag` annotations.
    pub decl_tag: bool,
    /// `type_tag`: TYPE_TAG for `btf_type_tag` annotations.
    pub type_tag: bool,
    /// `enum64`: ENUM64 for enums wider than 4 bytes (else a truncated
    /// ENUM).
    pub enum64: bool,
    /// `optimized_func`: encode functions whose symbol carries an
    /// optimization suffix (`.isra.0`, `.constprop.0`).
    pub optimized_func: bool,
    /// `consistent_func`: leave out functions whose prototypes disagree
    /// between CUs, or whose parameters are not where the ABI puts them.
    pub consistent_func: bool,
    /// `decl_tag_kfuncs`: DECL_TAG `bpf_kfunc` on kfuncs found in
    /// `.BTF_ids` sets.
    pub decl_tag_kfuncs: bool,
    /// `reproducible_build`: byte-identical output whatever the thread
    /// count. Our output always is, so this changes nothing.
    pub reproducible_build: bool,
    /// `distilled_base`: for split BTF, also write a distilled base.
    pub distilled_base: bool,
    /// `global_var`: VARs and DATASECs for every global variable, not only
    /// per-CPU ones.
    pub global_var: bool,
    /// `attributes`: type attributes for BPF arena kfunc arguments.
    pub attributes: bool,
    /// `true_signature`: FUNCs for `.isra`/`.constprop` clones under their
    /// suffixed symbol name, and for clang's `DW_CC_nocall` functions the
    /// signature the code has (see `lower/true_signature.rs`).
    pub true_signature: bool,
    /// `layout`: write the 32-byte header, and for base (not split) BTF
    /// the kind layout section after the types (libbpf 1.8's
    /// `add_layout`; Linux 7.2+ asks pahole >= 1.31 for it). See
    /// [`crate::raw::HeaderFormat`].
    pub layout: bool,
    /// Which pahole generation's FUNC/VAR selection rules apply.
    pub rules: Rules,
}

/// One `--btf_features` name, whether `default` includes it, and the field
/// it sets.
struct FeatureName {
    name: &'static str,
    in_default: bool,
    set: fn(&mut Features),
}

/// pahole 1.31's feature table (pahole.c `btf_features[]`), in its order.
const FEATURE_NAMES: &[FeatureName] = &[
    FeatureName {
        name: "encode_force",
        in_default: true,
        set: |f| f.encode_force = true,
    },
    FeatureName {
        name: "var",
        in_default: true,
        set: |f| f.var = true,
    },
    FeatureName {
        name: "float",
        in_default: true,
        set: |f| f.float = true,
    },
    FeatureName {
        name: "decl_tag",
        in_default: true,
        set: |f| f.decl_tag = true,
    },
    FeatureName {
        name: "type_tag",
        in_default: true,
        set: |f| f.type_tag = true,
    },
    FeatureName {
        name: "enum64",
        in_default: true,
        set: |f| f.enum64 = true,
    },
    FeatureName {
        name: "optimized_func",
        in_default: true,
        set: |f| f.optimized_func = true,
    },
    FeatureName {
        name: "consistent_func",
        in_default: true,
        set: |f| f.consistent_func = true,
    },
    FeatureName {
        name: "decl_tag_kfuncs",
        in_default: true,
        set: |f| f.decl_tag_kfuncs = true,
    },
    FeatureName {
        name: "reproducible_build",
        in_default: false,
        set: |f| f.reproducible_build = true,
    },
    FeatureName {
        name: "distilled_base",
        in_default: false,
        set: |f| f.distilled_base = true,
    },
    FeatureName {
        name: "global_var",
        in_default: false,
        set: |f| f.global_var = true,
    },
    FeatureName {
        name: "attributes",
        in_default: false,
        set: |f| f.attributes = true,
    },
    FeatureName {
        name: "true_signature",
        in_default: false,
        set: |f| f.true_signature = true,
    },
    FeatureName {
        name: "layout",
        in_default: false,
        set: |f| f.layout = true,
    },
];

/// Feature names pahole 1.31 knows that btfenc does not encode yet
/// (issue 14). They are not unknown: `--btf_features_strict` takes them as
/// pahole does, and the encoder reports that it leaves them out. A name
/// moved into [`FEATURE_NAMES`] is found there first.
const NOT_IMPLEMENTED: &[&str] = &[];

/// pahole copies a `--btf_features` argument into a buffer of this many
/// bytes before splitting it (pahole.c `BTF_MAX_FEATURE_STR`); the rest is
/// not read.
const MAX_FEATURE_STR: usize = 1024;

/// One option of pahole's command line that decides BTF features. pahole
/// acts on each when argp hands it over, in command-line order, so the
/// order matters (see [`Features::from_pahole_options`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureOption<'a> {
    /// `--btf_features=LIST`, or with `strict` `--btf_features_strict=LIST`.
    List {
        /// The argument as given.
        list: &'a str,
        /// Unknown names are an error.
        strict: bool,
    },
    /// `--btf_gen_all`: pahole 1.31 runs `parse_btf_features("all",
    /// false)`, and "all" is no feature name since pahole 1.27 renamed it
    /// `default`: so it switches every feature off, like an empty list.
    GenAll,
    /// `--btf_encode_force`.
    EncodeForce,
    /// `--btf_gen_floats`.
    GenFloats,
    /// `--skip_encoding_btf_vars`.
    SkipVars,
    /// `--skip_encoding_btf_decl_tag`.
    SkipDeclTag,
    /// `--skip_encoding_btf_type_tag`.
    SkipTypeTag,
    /// `--skip_encoding_btf_enum64`.
    SkipEnum64,
    /// `--btf_gen_optimized`.
    GenOptimized,
    /// `--skip_encoding_btf_inconsistent_proto`.
    SkipInconsistentProto,
    /// `--reproducible_build`.
    ReproducibleBuild,
}

/// What [`Features::from_pahole_options`] found besides the features.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeatureNotes {
    /// Names pahole ignores (not strict, not a feature), in order; pahole
    /// reports them with `-V`.
    pub ignored: Vec<String>,
    /// Names pahole 1.31 knows and enables that btfenc does not implement.
    pub not_implemented: Vec<String>,
}

/// The legacy (pahole 1.24 style) command line flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LegacyFlags {
    /// `--btf_encode_force`.
    pub btf_encode_force: bool,
    /// `--btf_gen_floats`.
    pub btf_gen_floats: bool,
    /// `--btf_gen_all` (1.24 meaning: floats).
    pub btf_gen_all: bool,
    /// `--skip_encoding_btf_vars`.
    pub skip_encoding_btf_vars: bool,
    /// `--skip_encoding_btf_decl_tag`.
    pub skip_encoding_btf_decl_tag: bool,
    /// `--skip_encoding_btf_type_tag`.
    pub skip_encoding_btf_type_tag: bool,
    /// `--skip_encoding_btf_enum64`.
    pub skip_encoding_btf_enum64: bool,
    /// `--skip_encoding_btf_inconsistent_proto` (pahole 1.25+).
    pub skip_encoding_btf_inconsistent_proto: bool,
    /// `--btf_gen_optimized` (pahole 1.25+).
    pub btf_gen_optimized: bool,
}

/// An unknown name in a strict `--btf_features` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFeature(pub String);

impl fmt::Display for UnknownFeature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown BTF feature '{}'; supported:", self.0)?;
        for (i, feature) in FEATURE_NAMES.iter().enumerate() {
            write!(f, "{}{}", if i == 0 { " " } else { "," }, feature.name)?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownFeature {}

impl Features {
    /// Everything off, pahole 1.31 rules: the starting point of
    /// `--btf_features`, where only named features are on.
    pub fn none() -> Features {
        Features {
            encode_force: false,
            var: false,
            float: false,
            decl_tag: false,
            type_tag: false,
            enum64: false,
            optimized_func: false,
            consistent_func: false,
            decl_tag_kfuncs: false,
            reproducible_build: false,
            distilled_base: false,
            global_var: false,
            attributes: false,
            true_signature: false,
            layout: false,
            rules: Rules::V1_31,
        }
    }

    /// What `pahole -J` (1.24) encodes given its legacy flags: VARs, DECL_TAG,
    /// TYPE_TAG and ENUM64 on unless skipped, FLOAT off unless asked for.
    pub fn legacy(flags: LegacyFlags) -> Features {
        Features {
            encode_force: flags.btf_encode_force,
            var: !flags.skip_encoding_btf_vars,
            float: flags.btf_gen_floats || flags.btf_gen_all,
            decl_tag: !flags.skip_encoding_btf_decl_tag,
            type_tag: !flags.skip_encoding_btf_type_tag,
            enum64: !flags.skip_encoding_btf_enum64,
            optimized_func: flags.btf_gen_optimized,
            consistent_func: flags.skip_encoding_btf_inconsistent_proto,
            decl_tag_kfuncs: false,
            reproducible_build: false,
            distilled_base: false,
            global_var: false,
            attributes: false,
            true_signature: false,
            layout: false,
            rules: Rules::V1_24,
        }
    }

    /// `--btf_features=LIST` (pahole 1.31 rules). See [`Features::parse`].
    pub fn from_btf_features(list: &str, strict: bool) -> Result<Features, UnknownFeature> {
        Features::parse(list, strict)
    }

    /// One `--btf_features=LIST` (`--btf_features_strict` if `strict`) and
    /// nothing else on the command line: only what LIST names is on.
    pub fn parse(list: &str, strict: bool) -> Result<Features, UnknownFeature> {
        Features::from_pahole_options([FeatureOption::List { list, strict }]).map(|(f, _)| f)
    }

    /// What `pahole -J` 1.31 encodes with neither `--btf_features` nor a
    /// legacy flag: its `conf_load` starts zeroed, so everything with a
    /// `--skip_encoding_btf_*` flag is on (VAR, DECL_TAG, TYPE_TAG,
    /// ENUM64) and the rest off (FLOAT, optimized and consistent
    /// functions, kfunc tags).
    pub fn pahole_default() -> Features {
        Features {
            var: true,
            decl_tag: true,
            type_tag: true,
            enum64: true,
            ..Features::none()
        }
    }

    /// Replays, in command-line order, what pahole 1.31's option parser
    /// (pahole.c `pahole__options_parser` at dwarves 1436daf) does with
    /// the options that decide features:
    ///
    /// - It starts from [`Features::pahole_default`].
    /// - Each legacy flag sets its one switch when it is reached.
    /// - The first `--btf_features`/`--btf_features_strict`/`--btf_gen_all`
    ///   (`parse_btf_features` -> `init_btf_features`) switches every
    ///   feature off once, legacy flags seen so far included; later lists
    ///   only add (`set_btf_features_initial`).
    /// - A list that is exactly `default` turns on the default features. A
    ///   leading `+` turns them on too, then the rest is read as a list.
    /// - The list (its first 1024 bytes) is split at commas, empty pieces
    ///   skipped (`strtok_r`), names compared exactly (no trimming). A name
    ///   turns its feature on; `default` turns the default set on; any
    ///   other name is ignored, unless the list is strict: then it is an
    ///   error (pahole exits), whatever came before.
    pub fn from_pahole_options<'a>(
        options: impl IntoIterator<Item = FeatureOption<'a>>,
    ) -> Result<(Features, FeatureNotes), UnknownFeature> {
        let mut features = Features::pahole_default();
        let mut notes = FeatureNotes::default();
        let mut lists_seen = false;
        for option in options {
            match option {
                FeatureOption::List { list, strict } => parse_list(
                    &mut features,
                    &mut lists_seen,
                    list.as_bytes(),
                    strict,
                    &mut notes,
                )?,
                FeatureOption::GenAll => {
                    parse_list(&mut features, &mut lists_seen, b"all", false, &mut notes)?
                }
                FeatureOption::EncodeForce => features.encode_force = true,
                FeatureOption::GenFloats => features.float = true,
                FeatureOption::SkipVars => features.var = false,
                FeatureOption::SkipDeclTag => features.decl_tag = false,
                FeatureOption::SkipTypeTag => features.type_tag = false,
                FeatureOption::SkipEnum64 => features.enum64 = false,
                FeatureOption::GenOptimized => features.optimized_func = true,
                FeatureOption::SkipInconsistentProto => features.consistent_func = true,
                FeatureOption::ReproducibleBuild => features.reproducible_build = true,
            }
        }
        notes.not_implemented.sort();
        notes.not_implemented.dedup();
        Ok((features, notes))
    }

    /// The names pahole's `--supported_btf_features` lists, in its order.
    pub fn supported_names() -> impl Iterator<Item = &'static str> {
        FEATURE_NAMES.iter().map(|feature| feature.name)
    }
}

/// pahole.c `parse_btf_features`, one `--btf_features` argument.
fn parse_list(
    features: &mut Features,
    lists_seen: &mut bool,
    list: &[u8],
    strict: bool,
    notes: &mut FeatureNotes,
) -> Result<(), UnknownFeature> {
    if !*lists_seen {
        // init_btf_features: every switch to its "feature off" value.
        *lists_seen = true;
        *features = Features::none();
    }
    if list == b"default" {
        enable_default(features);
        return Ok(());
    }
    let list = match list.strip_prefix(b"+") {
        Some(rest) => {
            enable_default(features);
            rest
        }
        None => list,
    };
    let list = &list[..list.len().min(MAX_FEATURE_STR)];
    for name in list
        .split(|&byte| byte == b',')
        .filter(|name| !name.is_empty())
    {
        if let Some(feature) = FEATURE_NAMES.iter().find(|f| f.name.as_bytes() == name) {
            (feature.set)(features);
        } else if let Some(known) = NOT_IMPLEMENTED.iter().find(|n| n.as_bytes() == name) {
            notes.not_implemented.push((*known).to_string());
        } else if name == b"default" {
            enable_default(features);
        } else if strict {
            return Err(UnknownFeature(String::from_utf8_lossy(name).into_owned()));
        } else {
            notes
                .ignored
                .push(String::from_utf8_lossy(name).into_owned());
        }
    }
    Ok(())
}

/// pahole.c `btf_features__enable_default`.
fn enable_default(features: &mut Features) {
    FEATURE_NAMES
        .iter()
        .filter(|feature| feature.in_default)
        .for_each(|feature| (feature.set)(features));
}

impl Default for Features {
    /// `pahole -J` with no feature flags, as pahole 1.24 does it.
    fn default() -> Features {
        Features::legacy(LegacyFlags::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_defaults_match_pahole_1_24() {
        // pahole 1.24 -J: vars, decl tags, type tags and enum64 are on by
        // default (each has a --skip flag), floats need --btf_gen_floats.
        let features = Features::default();
        assert!(features.var && features.decl_tag && features.type_tag && features.enum64);
        assert!(!features.float && !features.global_var && !features.consistent_func);
        assert_eq!(features.rules, Rules::V1_24);

        let floats = Features::legacy(LegacyFlags {
            btf_gen_floats: true,
            ..LegacyFlags::default()
        });
        assert!(floats.float);
        let no_vars = Features::legacy(LegacyFlags {
            skip_encoding_btf_vars: true,
            ..LegacyFlags::default()
        });
        assert!(!no_vars.var);
    }

    #[test]
    fn kernel_feature_list() {
        // scripts/Makefile.btf's list for pahole >= 1.26.
        let list = "encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs";
        let features = Features::parse(list, true).unwrap();
        assert!(features.encode_force && features.var && features.float && features.enum64);
        assert!(features.decl_tag && features.type_tag && features.optimized_func);
        assert!(features.consistent_func && features.decl_tag_kfuncs);
        assert!(!features.global_var && !features.distilled_base && !features.attributes);
        assert_eq!(features.rules, Rules::V1_31);
        // `default` is the same set.
        assert_eq!(Features::parse("default", true).unwrap(), features);
    }

    /// The names of the features that are on, in pahole's table order.
    fn on(features: &Features) -> Vec<&'static str> {
        let f = features;
        [
            ("encode_force", f.encode_force),
            ("var", f.var),
            ("float", f.float),
            ("decl_tag", f.decl_tag),
            ("type_tag", f.type_tag),
            ("enum64", f.enum64),
            ("optimized_func", f.optimized_func),
            ("consistent_func", f.consistent_func),
            ("decl_tag_kfuncs", f.decl_tag_kfuncs),
            ("reproducible_build", f.reproducible_build),
            ("distilled_base", f.distilled_base),
            ("global_var", f.global_var),
            ("attributes", f.attributes),
            ("true_signature", f.true_signature),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect()
    }

    /// Every form of pahole 1.31's feature options, against what pahole.c
    /// at dwarves 1436daf does with it: `pahole__options_parser` (legacy
    /// flags set one `conf_load` switch each; `--btf_gen_all` calls
    /// `parse_btf_features("all", false)`), `parse_btf_features` (exact
    /// `default`; leading `+` = defaults then the rest; `strtok_r` on ',';
    /// `default` inside a list; unknown names ignored unless strict, which
    /// exits) and `init_btf_features` (the first list switches everything
    /// off, once). Expected values are read off that code, not off ours.
    #[test]
    fn pahole_1_31_option_table() {
        use FeatureOption::*;
        const DEFAULT: &[&str] = &[
            "encode_force",
            "var",
            "float",
            "decl_tag",
            "type_tag",
            "enum64",
            "optimized_func",
            "consistent_func",
            "decl_tag_kfuncs",
        ];
        fn list(list: &str) -> FeatureOption<'_> {
            List {
                list,
                strict: false,
            }
        }
        fn strict(list: &str) -> FeatureOption<'_> {
            List { list, strict: true }
        }
        fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
            let mut names: Vec<&str> = base.iter().chain(extra).copied().collect();
            let order = |n: &&str| FEATURE_NAMES.iter().position(|f| f.name == *n);
            names.sort_by_key(order);
            names.dedup();
            names
        }
        let kernel =
            "encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func";
        let legacy_default: &[&str] = &["var", "decl_tag", "type_tag", "enum64"];
        let cases: Vec<(&str, Vec<FeatureOption>, Vec<&str>)> = vec![
            // Neither spelling: conf_load zeroed, every skip_* false.
            ("nothing", vec![], legacy_default.to_vec()),
            // Linux 6.1 pahole-flags.sh for pahole >= 1.25.
            (
                "6.1 legacy",
                vec![GenFloats, SkipInconsistentProto, GenOptimized],
                with(
                    legacy_default,
                    &["float", "optimized_func", "consistent_func"],
                ),
            ),
            (
                "skip flags",
                vec![SkipVars, SkipDeclTag, SkipTypeTag, SkipEnum64],
                vec![],
            ),
            (
                "force",
                vec![EncodeForce],
                with(legacy_default, &["encode_force"]),
            ),
            (
                "--reproducible_build",
                vec![ReproducibleBuild],
                with(legacy_default, &["reproducible_build"]),
            ),
            // "all" is no name since pahole renamed it "default": the
            // first list switches everything off and nothing back on.
            ("--btf_gen_all", vec![GenAll], vec![]),
            (
                "--btf_gen_all then floats",
                vec![GenAll, GenFloats],
                vec!["float"],
            ),
            ("all", vec![list("all")], vec![]),
            ("empty list", vec![list("")], vec![]),
            ("default", vec![list("default")], DEFAULT.to_vec()),
            (
                "kernel list",
                vec![list(kernel)],
                with(DEFAULT, &[])
                    .into_iter()
                    .filter(|n| *n != "decl_tag_kfuncs")
                    .collect(),
            ),
            (
                "default inside a list",
                vec![list("global_var,default")],
                with(DEFAULT, &["global_var"]),
            ),
            (
                "+X: defaults plus X",
                vec![list("+reproducible_build")],
                with(DEFAULT, &["reproducible_build"]),
            ),
            ("+ alone", vec![list("+")], DEFAULT.to_vec()),
            ("+ only at the start", vec![list("var,+float")], vec!["var"]),
            (
                "lists accumulate",
                vec![list("var"), list("float")],
                vec!["var", "float"],
            ),
            // Linux 6.12/7.3 Makefile.btf with KBUILD_BUILD_TIMESTAMP set:
            // the later `+` brings decl_tag_kfuncs back in.
            (
                "7.3 reproducible",
                vec![list(kernel), list("layout"), list("+reproducible_build")],
                with(DEFAULT, &["reproducible_build"]),
            ),
            (
                "empty pieces skipped",
                vec![list(",,var,,float,")],
                vec!["var", "float"],
            ),
            ("no trimming", vec![list("var, float")], vec!["var"]),
            ("case matters", vec![list("VAR,float")], vec!["float"]),
            ("unknown ignored", vec![list("bogus,var")], vec!["var"]),
            // Legacy flags before the first list are wiped by it; after it
            // they apply.
            (
                "floats before a list",
                vec![GenFloats, list("var")],
                vec!["var"],
            ),
            (
                "floats after a list",
                vec![list("var"), GenFloats],
                vec!["var", "float"],
            ),
            (
                "skip after a list",
                vec![list("default"), SkipVars],
                with(DEFAULT, &[])
                    .into_iter()
                    .filter(|n| *n != "var")
                    .collect(),
            ),
            (
                "skip before a list",
                vec![SkipVars, list("default")],
                DEFAULT.to_vec(),
            ),
            (
                "strict and lenient mix",
                vec![strict("var"), list("bogus,float")],
                vec!["var", "float"],
            ),
            (
                "strict default",
                vec![strict("default,global_var")],
                with(DEFAULT, &["global_var"]),
            ),
            (
                "strict, layout and true_signature",
                vec![strict("layout,true_signature,var")],
                vec!["var", "true_signature"],
            ),
        ];
        for (what, options, expected) in cases {
            let (features, _) = Features::from_pahole_options(options.iter().copied())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(on(&features), expected, "{what}: {options:?}");
            assert_eq!(features.rules, Rules::V1_31, "{what}");
        }

        // Strict: an unknown name fails the whole command line, wherever
        // it is; "all" is unknown.
        for options in [
            vec![strict("var,bogus")],
            vec![list("var"), strict("bogus")],
            vec![strict("all")],
            vec![strict("+bogus")],
        ] {
            assert!(
                Features::from_pahole_options(options.iter().copied()).is_err(),
                "{options:?}"
            );
        }
        let err = Features::parse("var,bogus", true).unwrap_err();
        assert_eq!(err, UnknownFeature("bogus".to_string()));
        assert!(err.to_string().contains("bogus"));

        // pahole reads only the first 1024 bytes of a list.
        let long = format!("{}float", ",".repeat(MAX_FEATURE_STR));
        assert_eq!(
            on(&Features::parse(&long, true).unwrap()),
            Vec::<&str>::new()
        );
        let fits = format!("{}float", ",".repeat(MAX_FEATURE_STR - 5));
        assert_eq!(on(&Features::parse(&fits, true).unwrap()), ["float"]);

        // The notes: ignored names (pahole -V prints them); every name
        // pahole 1.31 has is implemented now.
        let (features, notes) = Features::from_pahole_options([
            list("bogus,true_signature,var"),
            list("true_signature"),
        ])
        .unwrap();
        assert_eq!(notes.ignored, ["bogus"]);
        assert!(notes.not_implemented.is_empty());
        assert!(features.true_signature);
    }

    #[test]
    fn empty_list_is_nothing() {
        assert_eq!(Features::parse("", true).unwrap(), Features::none());
    }
}
