/*!
Resolving parsed flags into what the pipeline runs with.

pahole has two generations of flags: `--btf_features` (1.26 and later)
names every feature to turn on, while the older flags each flip one default.
When any `--btf_features` list is given it wins, as in pahole; the older
flags then only add what they name.
*/

use anyhow::{Context, Result};

use btf::lower::{Context as LowerContext, Features, LegacyFlags};

use crate::args::EncodeArgs;
use btf::encode::Options;

/// Builds the pipeline configuration from the encoding flags.
pub fn resolve(args: &EncodeArgs) -> Result<Options> {
    let features = resolve_features(args)?;
    let lang_exclude = match &args.lang_exclude {
        Some(list) => {
            LowerContext::parse_languages(list).with_context(|| format!("--lang_exclude={list}"))?
        }
        None => Vec::new(),
    };
    let mut options = Options::new(features);
    options.lang_exclude = lang_exclude;
    Ok(options)
}

fn resolve_features(args: &EncodeArgs) -> Result<Features> {
    if args.btf_features.is_empty() && args.btf_features_strict.is_empty() {
        return Ok(Features::legacy(LegacyFlags {
            btf_encode_force: args.btf_encode_force,
            btf_gen_floats: args.btf_gen_floats,
            btf_gen_all: args.btf_gen_all,
            skip_encoding_btf_vars: args.skip_vars,
            skip_encoding_btf_decl_tag: args.skip_decl_tag,
            skip_encoding_btf_type_tag: args.skip_type_tag,
            skip_encoding_btf_enum64: args.skip_enum64,
            skip_encoding_btf_inconsistent_proto: args.skip_inconsistent_proto,
            btf_gen_optimized: args.btf_gen_optimized,
        }));
    }
    // Lists accumulate across repeated flags; a leading `+` (as in
    // `--btf_features=+distilled_base`) also means "in addition".
    for list in &args.btf_features_strict {
        Features::parse(list.trim_start_matches('+'), true)
            .map_err(|unknown| anyhow::anyhow!("--btf_features_strict: {unknown}"))?;
    }
    let all: Vec<&str> = args
        .btf_features
        .iter()
        .chain(&args.btf_features_strict)
        .map(|list| list.trim_start_matches('+'))
        .collect();
    let mut features = Features::parse(&all.join(","), false)
        .map_err(|unknown| anyhow::anyhow!("--btf_features: {unknown}"))?;
    // The legacy switches still apply on top, as pahole 1.31 keeps them.
    if args.btf_gen_floats {
        features.float = true;
    }
    if args.skip_vars {
        features.var = false;
        features.global_var = false;
    }
    if args.btf_encode_force {
        features.encode_force = true;
    }
    Ok(features)
}
