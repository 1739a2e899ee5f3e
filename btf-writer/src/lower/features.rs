//! Which BTF features to encode, and which pahole generation's selection
//! rules to follow.
//!
//! pahole has two ways to say what to encode. Up to 1.25 there were only
//! flags (`--btf_gen_floats`, `--skip_encoding_btf_vars`, ...), each flipping
//! one default. Since 1.26 `--btf_features=LIST` names every feature to turn
//! on and everything not named is off. The two also imply different function
//! and variable selection rules, because the kernel only passes
//! `--btf_features` to pahole versions that have the newer rules; so
//! [`Features::legacy`] gives pahole 1.24's rules and
//! [`Features::from_btf_features`] gives pahole 1.31's.

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
        name: "layout",
        in_default: false,
        set: |f| f.layout = true,
    },
];

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
            layout: false,
            rules: Rules::V1_24,
        }
    }

    /// `--btf_features=LIST` (pahole 1.31 rules). See [`Features::parse`].
    pub fn from_btf_features(list: &str, strict: bool) -> Result<Features, UnknownFeature> {
        Features::parse(list, strict)
    }

    /// Parses a comma-separated feature list. `default` stands for every
    /// feature pahole enables by default, `all` for every feature. Unknown
    /// names are ignored, as pahole does, unless `strict`
    /// (`--btf_features_strict`).
    pub fn parse(list: &str, strict: bool) -> Result<Features, UnknownFeature> {
        let mut features = Features::none();
        for name in list
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
        {
            match name {
                "default" => FEATURE_NAMES
                    .iter()
                    .filter(|feature| feature.in_default)
                    .for_each(|feature| (feature.set)(&mut features)),
                "all" => FEATURE_NAMES
                    .iter()
                    .for_each(|feature| (feature.set)(&mut features)),
                _ => match FEATURE_NAMES.iter().find(|feature| feature.name == name) {
                    Some(feature) => (feature.set)(&mut features),
                    None if strict => return Err(UnknownFeature(name.to_string())),
                    None => {}
                },
            }
        }
        Ok(features)
    }

    /// The names pahole's `--supported_btf_features` lists, in its order.
    pub fn supported_names() -> impl Iterator<Item = &'static str> {
        FEATURE_NAMES.iter().map(|feature| feature.name)
    }
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

    #[test]
    fn all_and_unknown_names() {
        let all = Features::parse("all", true).unwrap();
        assert!(all.global_var && all.distilled_base && all.reproducible_build && all.attributes);

        let lenient = Features::parse("var, bogus ,global_var", false).unwrap();
        assert!(lenient.var && lenient.global_var && !lenient.float);
        let strict = Features::parse("var,bogus", true);
        assert_eq!(strict, Err(UnknownFeature("bogus".to_string())));
        assert!(strict.unwrap_err().to_string().contains("bogus"));
    }

    #[test]
    fn empty_list_is_nothing() {
        assert_eq!(Features::parse("", true).unwrap(), Features::none());
    }
}
