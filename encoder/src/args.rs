/*!
Command-line flags, pahole-compatible where pahole has the flag.

Why the argv pre-pass: pahole parses with argp, where `-j` takes an
*optional* argument that must be attached (`-j`, `-j8`) and a long option's
optional argument must follow `=` (`--jobs=8`). clap would read `-j vmlinux`
as "8 jobs named vmlinux", so `-j` forms are normalised to `--jobs=N` before
clap sees them. Kernel build scripts pass exactly these forms.

Repeated options: argp lets every option be given again; a scalar option
keeps the last value (Linux 6.12 and 7.3's `scripts/Makefile.btf` pass
`-j` twice), a boolean stays set, and `--btf_features` acts once per
occurrence. clap's `args_override_self` gives the first two; the lists
are appended. pahole also acts on the feature options in command-line
order (a `--btf_features` wipes the legacy flags before it), so [`parse`]
records that order from clap's indices for [`crate::config`].
*/

use std::ffi::OsString;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use btf::lower::FeatureOption;

/// btfenc: DWARF to BTF, a drop-in replacement for `pahole -J`.
#[derive(Debug, Parser)]
#[command(
    name = "btfenc",
    disable_version_flag = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    args_override_self = true
)]
pub struct Cli {
    /// A tool subcommand; without one, btfenc behaves like `pahole`.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The pahole-compatible encoding flags.
    #[command(flatten)]
    pub encode: EncodeArgs,
}

/// What `btfenc dump` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DumpFormat {
    /// bpftool's raw text format.
    Raw,
    /// A compilable C header (bpftool's `format c`).
    C,
}

/// Subcommands that pahole does not have.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print BTF as `bpftool btf dump file` does: its raw text format, or
    /// (`--format c`) a C header like `... format c` (vmlinux.h).
    Dump {
        /// A raw BTF blob, or an ELF file with a `.BTF` section.
        file: PathBuf,
        /// Base BTF for a split file (raw BTF or ELF with `.BTF`).
        #[arg(long = "base", short = 'B')]
        base: Option<PathBuf>,
        /// Output format: `raw` (bpftool's default) or `c`.
        #[arg(long, value_enum, default_value_t = DumpFormat::Raw)]
        format: DumpFormat,
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
    /// Deduplicate existing BTF with libbpf's `btf__dedup` rules (those of
    /// the libbpf pahole 1.31 links). Writes raw BTF; split when `--base`
    /// is given, deduplicated against the base as libbpf does.
    Dedup {
        /// The BTF to deduplicate: raw, or an ELF with `.BTF`.
        input: PathBuf,
        /// The base INPUT is split on (raw, or an ELF with `.BTF`).
        #[arg(long = "base", short = 'B', value_name = "FILE")]
        base: Option<PathBuf>,
        /// Where to write the result.
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: PathBuf,
        /// `1.24`: the rules of libbpf 1.1, which pahole 1.24 links
        /// (TYPEDEFs deduplicated as plain reference types).
        #[arg(long = "compat", value_name = "PAHOLE_VERSION")]
        compat: Option<String>,
    },
    /// Distill the base of split BTF with libbpf's `btf__distill_base`
    /// rules: writes the split, renumbered onto the distilled base, to OUT
    /// and the distilled base to OUT.base (what pahole's `distilled_base`
    /// feature puts in `.BTF` and `.BTF.base`).
    Distill {
        /// The split BTF: raw, or an ELF with `.BTF`.
        split: PathBuf,
        /// The full base SPLIT was encoded on (raw, or an ELF with `.BTF`).
        #[arg(long = "base", short = 'B', value_name = "FILE")]
        base: PathBuf,
        /// Where to write the split (and, with `.base` appended, the
        /// distilled base).
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: PathBuf,
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

    /// pahole: make the output reproducible whatever `-j` (btfenc's
    /// always is).
    #[arg(long = "reproducible_build")]
    pub reproducible_build: bool,

    /// Emulate this pahole release: `1.31` (the default) or `1.24`
    /// (Debian bookworm's pahole and libbpf 1.1: its FUNC/VAR rules and
    /// dedup). Default from the environment variable BTFENC_COMPAT.
    #[arg(long = "compat", value_name = "VERSION")]
    pub compat: Option<String>,

    /// pahole 1.31: `parse_btf_features("all")`, which switches every
    /// feature off (pahole < 1.26: all features it had).
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

    /// Skip CUs in these languages (comma separated, e.g. `rust`), read
    /// no further than their unit DIE. The names are pahole's, one
    /// `DW_LANG_*` value each: `c` is DW_LANG_C, not `c89`, `c99` or `c11`.
    #[arg(long = "lang_exclude", value_name = "LANGS")]
    pub lang_exclude: Option<String>,

    /// The supplementary DWARF file (`dwz -m`'s common file) of inputs
    /// that name one in `.gnu_debugaltlink` or `.debug_sup`, instead of
    /// looking for it (beside the input, by build-id under the debug
    /// directory, BTFENC_DEBUG_DIR or /usr/lib/debug).
    #[arg(long = "dwarf-alt", value_name = "FILE")]
    pub dwarf_alt: Option<PathBuf>,

    /// pahole's `-V`: one line on stderr per function left out,
    /// `NAME : skipping BTF encoding of function due to REASON`.
    #[arg(short = 'V', long = "verbose")]
    pub verbose: bool,

    /// Print per-phase times and counts on stderr (also with the
    /// environment variable `BTFENC_TIMINGS=1`).
    #[arg(long = "timings")]
    pub timings: bool,

    /// Print the BTF features btfenc can encode, comma separated, and exit
    /// (pahole lists those its libbpf supports).
    #[arg(long = "supported_btf_features")]
    pub supported_btf_features: bool,

    /// Print the pahole version this encoder implements (`v1.31`).
    #[arg(long = "version")]
    pub version: bool,

    /// Input files (vmlinux, .ko or .o), directories of modules, or @LISTFILE.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The options above that decide features, in command-line order
    /// (filled by [`parse`]).
    #[arg(skip)]
    pub feature_order: Vec<OrderedFeature>,
}

/// One feature option of the command line, owned (see [`FeatureOption`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OrderedFeature {
    /// `--btf_features` (`strict`: `--btf_features_strict`) and its list.
    List { list: String, strict: bool },
    /// A legacy flag.
    Flag(FeatureOption<'static>),
}

impl OrderedFeature {
    /// The borrowed form the feature replay takes.
    pub fn as_option(&self) -> FeatureOption<'_> {
        match self {
            OrderedFeature::List { list, strict } => FeatureOption::List {
                list,
                strict: *strict,
            },
            OrderedFeature::Flag(flag) => *flag,
        }
    }
}

/// Legacy flags, by clap id (the field name), and what each does.
const LEGACY_FLAGS: &[(&str, FeatureOption<'static>)] = &[
    ("btf_gen_all", FeatureOption::GenAll),
    ("btf_encode_force", FeatureOption::EncodeForce),
    ("btf_gen_floats", FeatureOption::GenFloats),
    ("skip_vars", FeatureOption::SkipVars),
    ("skip_decl_tag", FeatureOption::SkipDeclTag),
    ("skip_type_tag", FeatureOption::SkipTypeTag),
    ("skip_enum64", FeatureOption::SkipEnum64),
    ("btf_gen_optimized", FeatureOption::GenOptimized),
    (
        "skip_inconsistent_proto",
        FeatureOption::SkipInconsistentProto,
    ),
    ("reproducible_build", FeatureOption::ReproducibleBuild),
];

/// Parses an already [normalized](normalize_argv) command line, recording
/// the order of the feature options.
pub fn parse(argv: Vec<OsString>) -> Result<Cli, clap::Error> {
    let matches = Cli::command().try_get_matches_from(argv)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if cli.command.is_none() {
        cli.encode.feature_order = feature_order(&matches);
    }
    Ok(cli)
}

/// The feature options in the order they were given. A repeated boolean
/// flag counts at its last position (clap keeps that one): it sets the
/// same switch each time, so its earlier occurrences cannot change the
/// result.
fn feature_order(matches: &ArgMatches) -> Vec<OrderedFeature> {
    let mut ordered: Vec<(usize, OrderedFeature)> = Vec::new();
    for (id, strict) in [("btf_features", false), ("btf_features_strict", true)] {
        let (Some(indices), Some(lists)) = (matches.indices_of(id), matches.get_many::<String>(id))
        else {
            continue;
        };
        for (index, list) in indices.zip(lists) {
            let list = list.clone();
            ordered.push((index, OrderedFeature::List { list, strict }));
        }
    }
    for &(id, flag) in LEGACY_FLAGS {
        if matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        if let Some(index) = matches.index_of(id) {
            ordered.push((index, OrderedFeature::Flag(flag)));
        }
    }
    ordered.sort_by_key(|(index, _)| *index);
    ordered.into_iter().map(|(_, option)| option).collect()
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

    fn parsed(line: &str) -> Cli {
        let argv: Vec<&str> = std::iter::once("btfenc").chain(line.split(' ')).collect();
        parse(norm(&argv).into_iter().map(OsString::from).collect())
            .unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    /// The exact command lines of the kernel's BTF steps, flags as the
    /// kernel's scripts compute them for a pahole reporting v1.31 (and,
    /// for 6.1, for >= 1.25, which 6.1 never gives --btf_features).
    #[test]
    fn kernel_command_lines_parse_as_pahole_reads_them() {
        let f6_12 = "-j --btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs";
        let f7_3 = "-j8 --btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func --btf_features=layout";
        let cases: &[(&str, String, Option<usize>)] = &[
            // 6.1 scripts/pahole-flags.sh; link-vmlinux.sh and Makefile.modfinal.
            (
                "6.1 vmlinux",
                "-J --btf_gen_floats -j --lang_exclude=rust --skip_encoding_btf_inconsistent_proto --btf_gen_optimized .tmp_vmlinux.btf".into(),
                Some(0),
            ),
            (
                "6.1 module",
                "-J --btf_gen_floats -j --lang_exclude=rust --skip_encoding_btf_inconsistent_proto --btf_gen_optimized --btf_base vmlinux m.ko".into(),
                Some(0),
            ),
            // 6.12 scripts/Makefile.btf: -j twice without a timestamp...
            ("6.12 vmlinux", format!("-J {f6_12} -j --lang_exclude=rust .tmp_vmlinux1"), Some(0)),
            // ... and with KBUILD_BUILD_TIMESTAMP, plus an out-of-tree
            // module's MODULE_PAHOLE_FLAGS.
            (
                "6.12 module",
                format!("-J {f6_12} -j --btf_features=+reproducible_build --lang_exclude=rust --btf_features=distilled_base --btf_base vmlinux m.ko"),
                Some(0),
            ),
            // 7.3 scripts/Makefile.btf (JOBS from MAKEFLAGS) and gen-btf.sh.
            (
                "7.3 vmlinux",
                format!("-J {f7_3} -j8 --btf_features=+reproducible_build --lang_exclude=rust --btf_encode_detached=.tmp_vmlinux1.BTF.1 .tmp_vmlinux1"),
                Some(8),
            ),
            (
                "7.3 module, make -j",
                format!("-J {} -j --lang_exclude=rust --btf_base vmlinux --btf_encode_detached=m.ko.BTF.1 m.ko", f7_3.replace("-j8", "-j")),
                Some(0),
            ),
            ("last -j wins", "-J -j3 -j --jobs=5 -j2 x".into(), Some(2)),
        ];
        for (what, line, jobs) in cases {
            let cli = parsed(line);
            assert_eq!(cli.encode.jobs, *jobs, "{what}");
            assert!(cli.encode.btf_encode, "{what}");
            assert_eq!(cli.encode.files.len(), 1, "{what}: {:?}", cli.encode.files);
        }

        // 7.3 with a timestamp: the lists in order, as pahole meets them.
        let cli = parsed(&cases[4].1);
        let lists: Vec<OrderedFeature> = cli.encode.feature_order.clone();
        assert_eq!(
            lists,
            [
                OrderedFeature::List {
                    list: "encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func".into(),
                    strict: false
                },
                OrderedFeature::List { list: "layout".into(), strict: false },
                OrderedFeature::List { list: "+reproducible_build".into(), strict: false },
            ]
        );
        assert_eq!(
            cli.encode.btf_encode_detached,
            Some(PathBuf::from(".tmp_vmlinux1.BTF.1"))
        );
    }

    #[test]
    fn scalar_options_keep_the_last_value() {
        let cli = parsed("-J --lang_exclude=rust --lang_exclude=c --btf_base a --btf_base b --btf_encode_detached=x --btf_encode_detached=y -V -V --timings -J in");
        assert_eq!(cli.encode.lang_exclude.as_deref(), Some("c"));
        assert_eq!(cli.encode.btf_base, Some(PathBuf::from("b")));
        assert_eq!(cli.encode.btf_encode_detached, Some(PathBuf::from("y")));
        assert!(cli.encode.verbose && cli.encode.timings);
        let cli = parsed("-J --compat=1.24 --compat=1.31 in");
        assert_eq!(cli.encode.compat.as_deref(), Some("1.31"));
    }

    #[test]
    fn feature_options_keep_command_line_order() {
        let cli = parsed("-J --btf_gen_floats --btf_features=var --skip_encoding_btf_vars --btf_features_strict=float --btf_gen_floats --btf_gen_all in");
        let flag = OrderedFeature::Flag;
        let list = |list: &str, strict| OrderedFeature::List {
            list: list.into(),
            strict,
        };
        // The first --btf_gen_floats is dropped (clap keeps the last); it
        // sets the same switch as the later one, so the result is the same.
        assert_eq!(
            cli.encode.feature_order,
            [
                list("var", false),
                flag(FeatureOption::SkipVars),
                list("float", true),
                flag(FeatureOption::GenFloats),
                flag(FeatureOption::GenAll),
            ]
        );
        assert!(parsed("-J in").encode.feature_order.is_empty());
    }

    #[test]
    fn subcommands_parse() {
        let cli =
            Cli::try_parse_from(["btfenc", "diff", "a", "b", "--base-a", "c"]).expect("parses");
        assert!(matches!(cli.command, Some(Command::Diff { .. })));
    }
}
