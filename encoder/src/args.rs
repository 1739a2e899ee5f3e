/*!
Command-line flags, pahole-compatible where pahole has the flag.

Why the argv pre-pass: pahole parses with argp, where `-j` takes an
*optional* argument that must be attached (`-j`, `-j8`) and a long option's
optional argument must follow `=` (`--jobs=8`). clap would read `-j vmlinux`
as "8 jobs named vmlinux", so `-j` forms are normalised to `--jobs=N` before
clap sees them. Kernel build scripts pass exactly these forms.
*/

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// btfenc: DWARF to BTF, a drop-in replacement for `pahole -J`.
#[derive(Debug, Parser)]
#[command(
    name = "btfenc",
    disable_version_flag = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    /// A tool subcommand; without one, btfenc behaves like `pahole`.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The pahole-compatible encoding flags.
    #[command(flatten)]
    pub encode: EncodeArgs,
}

/// Subcommands that pahole does not have.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print BTF in bpftool's raw text format (`bpftool btf dump file`).
    Dump {
        /// A raw BTF blob, or an ELF file with a `.BTF` section.
        file: PathBuf,
        /// Base BTF for a split file (raw BTF or ELF with `.BTF`).
        #[arg(long = "base", short = 'B')]
        base: Option<PathBuf>,
    },
    /// Compare two BTFs semantically, independent of type-id order.
    /// Prints nothing and exits 0 when they hold the same types; otherwise
    /// prints `KIND: a=N b=N only_a=N only_b=N` per kind and exits 1.
    Diff {
        /// First BTF (raw or ELF).
        a: PathBuf,
        /// Second BTF (raw or ELF).
        b: PathBuf,
        /// Base of A, when A is split.
        #[arg(long = "base-a")]
        base_a: Option<PathBuf>,
        /// Base of B, when B is split.
        #[arg(long = "base-b")]
        base_b: Option<PathBuf>,
        /// How many example descriptions to print per kind and side.
        #[arg(long, default_value_t = 5)]
        examples: usize,
        /// Compare DATASECs by the variables they hold only, not by where
        /// they sit (offsets, section size): for the same objects linked
        /// in another order.
        #[arg(long = "ignore-datasec-layout")]
        ignore_datasec_layout: bool,
    },
    /// Move split BTF from its distilled base (`.BTF.base`) onto a full
    /// base, with libbpf's btf_relocate rules (what the kernel does when it
    /// loads a module that carries `.BTF.base`). Writes raw split BTF.
    Relocate {
        /// The split BTF: raw, or an ELF with `.BTF` (and `.BTF.base`).
        split: PathBuf,
        /// The distilled base (raw or ELF `.BTF.base`); default: SPLIT's
        /// own `.BTF.base` section.
        #[arg(long = "distilled-base", value_name = "FILE")]
        distilled_base: Option<PathBuf>,
        /// The full base to relocate onto (raw, or an ELF with `.BTF`).
        #[arg(long = "base", short = 'B', value_name = "FILE")]
        base: PathBuf,
        /// Where to write the relocated split BTF.
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: PathBuf,
        /// Afterwards, fold the base types distilling copied into the split
        /// (pointers, typedefs, ...) back into the full base's, leaving the
        /// split's own types alone: the result is what encoding directly on
        /// that base gives.
        #[arg(long)]
        dedup: bool,
    },
    /// Check BTF as the running kernel's `BPF_BTF_LOAD` would: exit 0 when
    /// it would be accepted, else one line per violation (type id, kind,
    /// name, the kernel's rule) and exit 1. FILE is raw BTF or an ELF with
    /// `.BTF` (a module with `.BTF.base` is checked on that distilled
    /// base); several files are checked independently.
    Verify {
        /// Raw BTF blobs or ELF files with `.BTF`.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Base for split files (raw BTF or an ELF with `.BTF`); checked too.
        #[arg(long = "base", short = 'B')]
        base: Option<PathBuf>,
    },
    /// Print btfenc's own version and the pahole version it implements.
    Version,
}

/// pahole's flags that matter for BTF encoding.
#[derive(Debug, Args)]
pub struct EncodeArgs {
    /// Encode as BTF (`-J`, `--btf_encode`).
    #[arg(short = 'J', long = "btf_encode")]
    pub btf_encode: bool,

    /// Worker threads; `-j` alone means one per CPU (pahole's meaning).
    #[arg(long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,

    /// Write BTF to this file instead of patching `.BTF` into the input.
    #[arg(long = "btf_encode_detached", value_name = "OUT")]
    pub btf_encode_detached: Option<PathBuf>,

    /// Base BTF (raw, or an ELF with `.BTF`) for split BTF.
    #[arg(long = "btf_base", value_name = "FILE")]
    pub btf_base: Option<PathBuf>,

    /// BTF features, comma separated; may be given more than once.
    #[arg(long = "btf_features", value_name = "LIST")]
    pub btf_features: Vec<String>,

    /// As --btf_features, but unknown feature names are an error.
    #[arg(long = "btf_features_strict", value_name = "LIST")]
    pub btf_features_strict: Vec<String>,

    /// pahole < 1.26: encode FLOAT.
    #[arg(long = "btf_gen_floats")]
    pub btf_gen_floats: bool,

    /// pahole < 1.26: allow all features this encoder has.
    #[arg(long = "btf_gen_all")]
    pub btf_gen_all: bool,

    /// pahole 1.25: encode optimized functions whose signature is intact.
    #[arg(long = "btf_gen_optimized")]
    pub btf_gen_optimized: bool,

    /// pahole 1.25: skip functions with inconsistent prototypes.
    #[arg(long = "skip_encoding_btf_inconsistent_proto")]
    pub skip_inconsistent_proto: bool,

    /// Do not encode VAR/DATASEC.
    #[arg(long = "skip_encoding_btf_vars")]
    pub skip_vars: bool,

    /// Do not encode DECL_TAG.
    #[arg(long = "skip_encoding_btf_decl_tag")]
    pub skip_decl_tag: bool,

    /// Do not encode TYPE_TAG.
    #[arg(long = "skip_encoding_btf_type_tag")]
    pub skip_type_tag: bool,

    /// Do not encode ENUM64.
    #[arg(long = "skip_encoding_btf_enum64")]
    pub skip_enum64: bool,

    /// Ignore invalid symbols instead of failing (pahole's meaning).
    #[arg(long = "btf_encode_force")]
    pub btf_encode_force: bool,

    /// Skip CUs in these languages (comma separated, e.g. `rust`).
    #[arg(long = "lang_exclude", value_name = "LANGS")]
    pub lang_exclude: Option<String>,

    /// Print per-phase times and counts on stderr.
    #[arg(short = 'V', long = "verbose")]
    pub verbose: bool,

    /// Print the pahole version this encoder implements (`v1.31`).
    #[arg(long = "version")]
    pub version: bool,

    /// Input files (vmlinux, .ko or .o), directories of modules, or @LISTFILE.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Rewrites argp-style `-j`/`-jN` (alone or clustered after other short
/// flags, as in `-Jj`) into `--jobs=N`; `--jobs` without a value becomes
/// `--jobs=0` (meaning: one per CPU).
pub fn normalize_argv(argv: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut after_double_dash = false;
    for arg in argv {
        let Some(text) = arg.to_str() else {
            out.push(arg);
            continue;
        };
        if after_double_dash {
            out.push(arg);
            continue;
        }
        if text == "--" {
            after_double_dash = true;
            out.push(arg);
            continue;
        }
        if text == "--jobs" {
            out.push("--jobs=0".into());
            continue;
        }
        if let Some(cluster) = text.strip_prefix('-').filter(|c| !c.starts_with('-')) {
            if let Some(pos) = cluster.find('j') {
                let (flags, rest) = cluster.split_at(pos);
                let jobs = &rest[1..];
                // Only rewrite when everything before `j` is a plain
                // boolean short flag pahole has (e.g. `-Jj`).
                if flags.chars().all(|c| c == 'J' || c == 'V') {
                    if !flags.is_empty() {
                        out.push(format!("-{flags}").into());
                    }
                    let n = if jobs.is_empty() { "0" } else { jobs };
                    out.push(format!("--jobs={n}").into());
                    continue;
                }
            }
        }
        out.push(arg);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Vec<String> {
        normalize_argv(args.iter().map(OsString::from))
            .into_iter()
            .map(|s| s.into_string().unwrap_or_default())
            .collect()
    }

    #[test]
    fn bare_j_does_not_swallow_the_input_file() {
        assert_eq!(
            norm(&["btfenc", "-J", "-j", "vmlinux"]),
            ["btfenc", "-J", "--jobs=0", "vmlinux"]
        );
        let cli = Cli::try_parse_from(norm(&["btfenc", "-J", "-j", "vmlinux"])).expect("parses");
        assert_eq!(cli.encode.jobs, Some(0));
        assert_eq!(cli.encode.files, [PathBuf::from("vmlinux")]);
    }

    #[test]
    fn attached_and_clustered_job_counts() {
        assert_eq!(norm(&["x", "-j8"]), ["x", "--jobs=8"]);
        assert_eq!(norm(&["x", "-Jj2"]), ["x", "-J", "--jobs=2"]);
        assert_eq!(norm(&["x", "--jobs", "f"]), ["x", "--jobs=0", "f"]);
        assert_eq!(norm(&["x", "--", "-j"]), ["x", "--", "-j"]);
    }

    #[test]
    fn kernel_flag_sets_parse() {
        // scripts/pahole-flags.sh (6.1) and scripts/Makefile.btf (6.2+).
        for line in [
            "-J --btf_gen_floats -j --lang_exclude=rust .tmp_vmlinux.btf",
            "-J --skip_encoding_btf_vars --btf_gen_floats -j --skip_encoding_btf_inconsistent_proto --btf_gen_optimized x",
            "-J -j2 --btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func --btf_features=distilled_base --lang_exclude=rust --btf_base vmlinux m.ko",
            "-J --btf_encode_detached=out.btf -j1 vmlinux",
        ] {
            let argv = std::iter::once("btfenc").chain(line.split(' '));
            let cli = Cli::try_parse_from(norm(&argv.collect::<Vec<_>>()));
            assert!(cli.is_ok(), "{line}: {:?}", cli.err());
        }
    }

    #[test]
    fn subcommands_parse() {
        let cli =
            Cli::try_parse_from(["btfenc", "diff", "a", "b", "--base-a", "c"]).expect("parses");
        assert!(matches!(cli.command, Some(Command::Diff { .. })));
    }
}
