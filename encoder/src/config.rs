/*!
Resolving parsed flags into what the pipeline runs with.

btfenc emulates pahole 1.31 (dwarves 1436daf) whatever the spelling:
`--btf_features` lists and the older flags are replayed in command-line
order as pahole's option parser applies them (see
[`Features::from_pahole_options`]), and every spelling gets pahole 1.31's
FUNC/VAR rules and libbpf dedup. Only `--compat=1.24` (or
`BTFENC_COMPAT=1.24`) asks for pahole 1.24, the release Debian bookworm
ships: its legacy flags, its rules and libbpf 1.1's dedup.
*/

use anyhow::{bail, Context, Result};

use btf::lower::{Context as LowerContext, Features, LegacyFlags};

use crate::args::EncodeArgs;
use btf::encode::Options;

/// The environment variable that picks the emulated pahole when
/// `--compat` is not given.
pub const COMPAT_ENV: &str = "BTFENC_COMPAT";

/// The environment variable that replaces `/usr/lib/debug` as the
/// directory where supplementary DWARF files are looked up by build-id
/// (`.build-id/NN/REST.debug`, and below `.dwz/`).
pub const DEBUG_DIR_ENV: &str = "BTFENC_DEBUG_DIR";

/// The environment variable pahole 1.31 reads its `--lang_exclude` list
/// from when the flag is not given (dwarves.c `languages__init`); pahole
/// 1.24 has no such variable.
pub const LANG_EXCLUDE_ENV: &str = "PAHOLE_LANG_EXCLUDE";

/// Which pahole release btfenc behaves as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compat {
    /// pahole 1.24 with Debian's libbpf 1.1.
    V1_24,
    /// pahole 1.31 (dwarves 1436daf) with its libbpf: the default.
    V1_31,
}

/// Builds the pipeline configuration from the encoding flags.
pub fn resolve(args: &EncodeArgs) -> Result<Options> {
    let env = std::env::var(COMPAT_ENV).ok();
    let compat = compat(args.compat.as_deref(), env.as_deref())?;
    let features = resolve_features(args, compat)?;
    let lang_env = match compat {
        Compat::V1_31 => std::env::var(LANG_EXCLUDE_ENV).ok(),
        Compat::V1_24 => None,
    };
    let lang_exclude = match (&args.lang_exclude, lang_env) {
        (Some(list), _) => {
            LowerContext::parse_languages(list).with_context(|| format!("--lang_exclude={list}"))?
        }
        (None, Some(list)) => LowerContext::parse_languages(&list)
            .with_context(|| format!("{LANG_EXCLUDE_ENV}={list}"))?,
        (None, None) => Vec::new(),
    };
    let mut options = Options::new(features);
    options.lang_exclude = lang_exclude;
    options.dwarf_alt = args.dwarf_alt.clone();
    if let Some(dir) = std::env::var_os(DEBUG_DIR_ENV).filter(|dir| !dir.is_empty()) {
        options.debug_dir = dir.into();
    }
    Ok(options)
}

/// `--compat` wins over the environment; neither means 1.31.
fn compat(flag: Option<&str>, env: Option<&str>) -> Result<Compat> {
    let (value, source) = match (flag, env) {
        (Some(value), _) => (value, "--compat"),
        (None, Some(value)) if !value.is_empty() => (value, COMPAT_ENV),
        _ => return Ok(Compat::V1_31),
    };
    match value.trim_start_matches('v') {
        "1.24" => Ok(Compat::V1_24),
        "1.31" => Ok(Compat::V1_31),
        other => bail!(
            "{source}={other}: unknown pahole version; btfenc emulates 1.31 (the default) or 1.24"
        ),
    }
}

fn resolve_features(args: &EncodeArgs, compat: Compat) -> Result<Features> {
    if compat == Compat::V1_24 {
        if !args.btf_features.is_empty() || !args.btf_features_strict.is_empty() {
            bail!("--compat=1.24: pahole 1.24 has no --btf_features (it came with 1.26)");
        }
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
    let (features, notes) =
        Features::from_pahole_options(args.feature_order.iter().map(|o| o.as_option()))
            .map_err(|unknown| anyhow::anyhow!("--btf_features_strict: {unknown}"))?;
    if args.verbose {
        for name in &notes.ignored {
            say!("btfenc: ignoring unsupported feature '{name}'");
        }
    }
    for name in &notes.not_implemented {
        say!("btfenc: warning: BTF feature '{name}' (pahole 1.31) is not implemented yet; encoding without it");
    }
    Ok(features)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compat_flag_env_and_default() {
        assert_eq!(compat(None, None).unwrap(), Compat::V1_31);
        assert_eq!(compat(None, Some("")).unwrap(), Compat::V1_31);
        assert_eq!(compat(None, Some("1.24")).unwrap(), Compat::V1_24);
        assert_eq!(compat(Some("1.31"), Some("1.24")).unwrap(), Compat::V1_31);
        assert_eq!(compat(Some("1.24"), None).unwrap(), Compat::V1_24);
        assert_eq!(compat(Some("v1.24"), None).unwrap(), Compat::V1_24);
        let err = compat(None, Some("1.25")).unwrap_err().to_string();
        assert!(err.contains("BTFENC_COMPAT=1.25"), "{err}");
    }
}
