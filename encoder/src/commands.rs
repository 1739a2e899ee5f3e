/*!
What each invocation does: encode (pahole mode), `dump`, `diff`, version.
*/

use std::fs;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{bail, Context, Result};
use rayon::prelude::*;

use btf::read::{parse_file_with, NameArena, Parsed};

use crate::args::{Cli, Command, DumpFormat, EncodeArgs};
use crate::output::{self, Sections};
use btf::encode::{self as pipeline, Options};

use crate::{config, inputs, stats};

/// The pahole release whose behaviour btfenc implements; kernel Kconfig
/// gates BTF options on it (scripts/pahole-version.sh).
pub const PAHOLE_COMPAT_VERSION: &str = "v1.31";

/// Runs one invocation.
pub fn run(cli: Cli, invoked_as: &str) -> Result<ExitCode> {
    match cli.command {
        Some(Command::Dump { file, base, format }) => dump(&file, base.as_deref(), format),
        Some(Command::Diff {
            a,
            b,
            base_a,
            base_b,
            examples,
            ignore_datasec_layout,
        }) => {
            // The layout is compared by default: the parity checks judge
            // with this command, and a VAR at the wrong offset is a bug.
            let options = btf::diff::DiffOptions {
                max_examples: examples,
                datasec_layout: !ignore_datasec_layout,
            };
            diff(&a, base_a.as_deref(), &b, base_b.as_deref(), &options)
        }
        Some(Command::Relocate {
            split,
            distilled_base,
            base,
            output,
            dedup,
        }) => relocate(&split, distilled_base.as_deref(), &base, &output, dedup),
        Some(Command::Dedup {
            input,
            base,
            output,
            compat,
        }) => dedup(&input, base.as_deref(), &output, compat.as_deref()),
        Some(Command::Distill {
            split,
            base,
            output,
        }) => distill(&split, &base, &output),
        Some(Command::Verify { files, base }) => crate::verify::run(&files, base.as_deref()),
        Some(Command::Version) => {
            println!(
                "btfenc {} (implements pahole {PAHOLE_COMPAT_VERSION})",
                env!("CARGO_PKG_VERSION")
            );
            Ok(ExitCode::SUCCESS)
        }
        None if cli.encode.version => {
            // stdout must be exactly pahole's shape: the kernel turns it
            // into a number with sed. Our own version goes to stderr where
            // people see it and scripts don't parse it; only when a person
            // is reading stdout, since a kernel build asks dozens of times
            // (Kconfig, pahole-flags.sh per make level, link-vmlinux.sh)
            // and would print it into every build log.
            println!("{PAHOLE_COMPAT_VERSION}");
            if invoked_as != "pahole" && io::stdout().is_terminal() {
                say!("btfenc {} (pahole-compatible)", env!("CARGO_PKG_VERSION"));
            }
            Ok(ExitCode::SUCCESS)
        }
        None if cli.encode.supported_btf_features => {
            let names: Vec<&str> = btf::lower::Features::supported_names().collect();
            println!("{}", names.join(","));
            Ok(ExitCode::SUCCESS)
        }
        None => encode(&cli.encode),
    }
}

/// The bytes of a BTF input (raw, or an ELF with `.BTF`); the parsed form
/// borrows them.
///
/// Mapped rather than read because the kernel's module build passes the
/// whole vmlinux, DWARF included (hundreds of MB in a distribution
/// config), as `--btf_base` of every single module, and only its headers
/// and `.BTF` are ever touched. Files that cannot be mapped (pipes) are read.
pub(crate) enum InputBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for InputBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            InputBytes::Mapped(map) => map,
            InputBytes::Read(bytes) => bytes,
        }
    }
}

pub(crate) fn read_btf_bytes(path: &Path) -> Result<InputBytes> {
    let file = fs::File::open(path).with_context(|| format!("{}: cannot read", path.display()))?;
    // SAFETY: a read-only map of a file this process only reads; a
    // concurrent truncation by someone else would fault, as for any mmap
    // reader (the encoder maps its DWARF input the same way).
    match unsafe { memmap2::Mmap::map(&file) } {
        Ok(map) => Ok(InputBytes::Mapped(map)),
        Err(_) => fs::read(path)
            .map(InputBytes::Read)
            .with_context(|| format!("{}: cannot read", path.display())),
    }
}

/// Where names that are not UTF-8 (which the kernel takes: see
/// `btf::strings::RAW_NAME_MARK`) are kept: for the rest of the process,
/// as the parsed BTF that borrows them is. It allocates only for such
/// names, bounded by the size of the input.
fn name_arena() -> &'static NameArena {
    Box::leak(Box::default())
}

fn parse_btf<'a>(path: &Path, bytes: &'a [u8], base: Option<&Parsed<'a>>) -> Result<Parsed<'a>> {
    parse_file_with(bytes, base, name_arena())
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// A raw BTF blob (a distilled base) read as [`parse_btf`] reads a file.
fn parse_raw<'a>(raw: &'a [u8]) -> Result<Parsed<'a>, btf::FormatError> {
    btf::read::parse_with(raw, None, name_arena())
}

/// Parses an optional standalone BTF file (a `--base`/`--btf_base`) read
/// with [`read_btf_bytes`]; the parsed form borrows `bytes`, so reading and
/// parsing are two steps.
fn parse_optional<'a>(
    path: Option<&Path>,
    bytes: &'a Option<InputBytes>,
) -> Result<Option<Parsed<'a>>> {
    match (path, bytes) {
        (Some(path), Some(bytes)) => Ok(Some(parse_btf(path, bytes, None)?)),
        _ => Ok(None),
    }
}

/// The `.BTF.base` of an ELF file (a module with a distilled base), parsed.
fn distilled_base_of<'a>(path: &Path, bytes: &'a [u8]) -> Result<Option<Parsed<'a>>> {
    if !bytes.starts_with(b"\x7fELF") {
        return Ok(None);
    }
    let section = btf::read::elf_section(bytes, ".BTF.base")
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    section
        .map(|raw| {
            parse_raw(raw).map_err(|e| anyhow::anyhow!("{}: .BTF.base: {e}", path.display()))
        })
        .transpose()
}

/// The types of FILE as libbpf's `btf__parse_elf` sees them, and the base
/// they sit on: a module with a distilled base (`distilled`, its parsed
/// `.BTF.base`) is read on that base, or relocated onto `base` when one is
/// given; anything else is read on `base`.
fn read_on_base<'p, 'a>(
    path: &Path,
    bytes: &'a [u8],
    distilled: Option<&'p Parsed<'a>>,
    base: Option<&'p Parsed<'a>>,
) -> Result<(btf::Btf<'a>, Option<&'p btf::Btf<'a>>)> {
    let Some(small) = distilled else {
        let parsed = parse_btf(path, bytes, base)?;
        return Ok((parsed.btf, base.map(|b| &b.btf)));
    };
    let split = parse_btf(path, bytes, Some(small))?;
    match base {
        None => Ok((split.btf, Some(&small.btf))),
        Some(full) => {
            let moved =
                btf::relocate::relocate(&split.btf, &small.btf, &full.btf).map_err(|e| {
                    anyhow::anyhow!("{}: cannot relocate onto the base: {e}", path.display())
                })?;
            Ok((moved, Some(&full.btf)))
        }
    }
}

/// `dump` and `diff` show BTF as it is, valid or not: what the kernel
/// would reject gets a one-line warning on stderr (see `verify`).
fn warn_invalid(file: &Path, bytes: &[u8], base: Option<(&Path, &[u8])>) {
    let Ok(raw) = crate::verify::raw_btf(file, bytes) else {
        return; // the reader reports it
    };
    let base_raw = base.and_then(|(path, b)| crate::verify::raw_btf(path, b).ok());
    if let (Some((path, _)), Some(b)) = (base, base_raw) {
        crate::verify::warn_input(path, b, None);
    }
    let distilled = bytes
        .starts_with(b"\x7fELF")
        .then(|| btf::read::elf_section(bytes, ".BTF.base").ok().flatten())
        .flatten();
    match distilled {
        Some(small) => crate::verify::warn_input(file, raw, Some(small)),
        None => crate::verify::warn_input(file, raw, base_raw),
    }
}

fn dump(file: &Path, base: Option<&Path>, format: DumpFormat) -> Result<ExitCode> {
    let base_bytes = base.map(read_btf_bytes).transpose()?;
    let bytes = read_btf_bytes(file)?;
    let base_parsed = parse_optional(base, &base_bytes)?;
    let distilled = distilled_base_of(file, &bytes)?;
    let (types, on) = read_on_base(file, &bytes, distilled.as_ref(), base_parsed.as_ref())?;
    // Only what could be read: a read error is the one line then.
    warn_invalid(file, &bytes, base.zip(base_bytes.as_deref()));
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = match format {
        DumpFormat::Raw => btf::dump::dump_raw(&mut out, &types, on),
        DumpFormat::C => btf::dump_c::dump_c(&mut out, &types, on),
    }
    .and_then(|()| out.flush());
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        // The C dumper's verdict on the types (a reference cycle).
        Err(e) if e.kind() == io::ErrorKind::InvalidData => bail!("{}: {e}", file.display()),
        other => other
            .map(|()| ExitCode::SUCCESS)
            .context("writing to stdout"),
    }
}

fn diff(
    a: &Path,
    base_a: Option<&Path>,
    b: &Path,
    base_b: Option<&Path>,
    options: &btf::diff::DiffOptions,
) -> Result<ExitCode> {
    let bytes_a = read_btf_bytes(a)?;
    let bytes_b = read_btf_bytes(b)?;
    let base_a_bytes = base_a.map(read_btf_bytes).transpose()?;
    let base_b_bytes = base_b.map(read_btf_bytes).transpose()?;
    let parsed_base_a = parse_optional(base_a, &base_a_bytes)?;
    let parsed_base_b = parse_optional(base_b, &base_b_bytes)?;
    let (distilled_a, distilled_b) = (
        distilled_base_of(a, &bytes_a)?,
        distilled_base_of(b, &bytes_b)?,
    );
    let (types_a, on_a) = read_on_base(a, &bytes_a, distilled_a.as_ref(), parsed_base_a.as_ref())?;
    let (types_b, on_b) = read_on_base(b, &bytes_b, distilled_b.as_ref(), parsed_base_b.as_ref())?;
    warn_invalid(a, &bytes_a, base_a.zip(base_a_bytes.as_deref()));
    warn_invalid(b, &bytes_b, base_b.zip(base_b_bytes.as_deref()));
    let report = btf::diff::diff_with(&types_a, on_a, &types_b, on_b, options);
    // Like diff(1): silence and status 0 mean "same"; the per-kind lines
    // (all kinds, so that scripts can also judge totals) only when not.
    if report.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    // A reader that stops early (`| head`) is not an error.
    let mut out = io::stdout().lock();
    match write!(out, "{report}").and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::from(1)),
        other => other
            .map(|()| ExitCode::from(1))
            .context("writing to stdout"),
    }
}

/// The distilled base of `split`: the file given, or SPLIT's own
/// `.BTF.base` section. A raw file is taken as it is; an ELF file named
/// explicitly may hold it as `.BTF.base` or `.BTF`.
fn distilled_base_bytes<'a>(
    split_path: &Path,
    split_bytes: &'a [u8],
    given: Option<(&Path, &'a [u8])>,
) -> Result<&'a [u8]> {
    let elf_section = |path: &Path, bytes: &'a [u8], name: &str| {
        btf::read::elf_section(bytes, name).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    };
    match given {
        Some((path, bytes)) if bytes.starts_with(b"\x7fELF") => {
            match elf_section(path, bytes, ".BTF.base")? {
                Some(section) => Ok(section),
                None => elf_section(path, bytes, ".BTF")?
                    .with_context(|| format!("{}: no .BTF.base or .BTF section", path.display())),
            }
        }
        Some((_, bytes)) => Ok(bytes),
        None if split_bytes.starts_with(b"\x7fELF") => {
            elf_section(split_path, split_bytes, ".BTF.base")?.with_context(|| {
                format!(
                    "{}: no .BTF.base section; give the distilled base with --distilled-base",
                    split_path.display()
                )
            })
        }
        None => bail!(
            "{}: a raw split needs its distilled base: --distilled-base FILE",
            split_path.display()
        ),
    }
}

fn relocate(
    split: &Path,
    distilled: Option<&Path>,
    base: &Path,
    output: &Path,
    dedup: bool,
) -> Result<ExitCode> {
    let split_bytes = read_btf_bytes(split)?;
    let distilled_file = distilled.map(read_btf_bytes).transpose()?;
    let base_bytes = read_btf_bytes(base)?;
    let given = distilled.zip(distilled_file.as_deref());
    let distilled_raw = distilled_base_bytes(split, &split_bytes, given)?;
    let distilled_path = distilled.unwrap_or(split);
    let distilled_checked =
        crate::verify::check_input(distilled_path, "distilled base BTF", distilled_raw, None)?;
    crate::verify::check_input(
        split,
        "split BTF",
        crate::verify::raw_btf(split, &split_bytes)?,
        Some(&distilled_checked),
    )?;
    let base_raw = crate::verify::raw_btf(base, &base_bytes)?;
    let base_checked = crate::verify::check_input(base, "base BTF", base_raw, None)?;
    let distilled_parsed = parse_raw(distilled_raw)
        .map_err(|e| anyhow::anyhow!("{}: distilled base: {e}", distilled_path.display()))?;
    let split_parsed = parse_btf(split, &split_bytes, Some(&distilled_parsed))?;
    let base_parsed = parse_btf(base, &base_bytes, None)?;

    let mut relocated =
        btf::relocate::relocate(&split_parsed.btf, &distilled_parsed.btf, &base_parsed.btf)
            .map_err(|e| {
                anyhow::anyhow!(
                    "{}: cannot relocate onto {}: {e}",
                    split.display(),
                    base.display()
                )
            })?;
    if dedup {
        relocated = btf::relocate::fold_distilled_copies(&relocated, &base_parsed.btf)
            .with_context(|| format!("{}: dedup after relocation", split.display()))?;
    }
    relocated.base_str_len = base_parsed.str_end();
    let bytes =
        btf::write::write_split(&relocated, &base_parsed.string_index(), split_parsed.endian)
            .with_context(|| format!("{}: writing relocated BTF", output.display()))?;
    crate::verify::check_output(output, "relocated BTF", &bytes, Some(&base_checked))?;
    output::replace_atomically(output, &bytes)?;
    Ok(ExitCode::SUCCESS)
}

/// `btfenc dedup`: `btf__dedup` on existing BTF.
fn dedup(
    input: &Path,
    base: Option<&Path>,
    output: &Path,
    compat: Option<&str>,
) -> Result<ExitCode> {
    let flavor = match compat {
        None => btf::dedup::Flavor::Libbpf1_7,
        Some("1.24") => btf::dedup::Flavor::Libbpf1_1,
        Some(other) => bail!("--compat={other}: only 1.24 can be asked for"),
    };
    let base_bytes = base.map(read_btf_bytes).transpose()?;
    let base_parsed = parse_optional(base, &base_bytes)?;
    let base_checked = match (base, base_bytes.as_deref()) {
        (Some(path), Some(bytes)) => Some(crate::verify::check_input(
            path,
            "base BTF",
            crate::verify::raw_btf(path, bytes)?,
            None,
        )?),
        _ => None,
    };
    let bytes = read_btf_bytes(input)?;
    let parsed = parse_btf(input, &bytes, base_parsed.as_ref())?;
    let deduped = btf::dedup::dedup_as(&parsed.btf, base_parsed.as_ref().map(|b| &b.btf), flavor)
        .with_context(|| format!("{}: dedup", input.display()))?;
    let written = match &base_parsed {
        Some(base) => btf::write::write_split(&deduped.btf, &base.string_index(), parsed.endian),
        None => btf::write::write(&deduped.btf, parsed.endian),
    }
    .with_context(|| format!("{}: writing BTF", output.display()))?;
    crate::verify::check_output(output, "deduplicated BTF", &written, base_checked.as_ref())?;
    output::replace_atomically(output, &written)?;
    Ok(ExitCode::SUCCESS)
}

/// `btfenc distill`: `btf__distill_base` on existing split BTF.
fn distill(split: &Path, base: &Path, output: &Path) -> Result<ExitCode> {
    let base_bytes = read_btf_bytes(base)?;
    crate::verify::check_input(
        base,
        "base BTF",
        crate::verify::raw_btf(base, &base_bytes)?,
        None,
    )?;
    let base_parsed = parse_btf(base, &base_bytes, None)?;
    let split_bytes = read_btf_bytes(split)?;
    let split_parsed = parse_btf(split, &split_bytes, Some(&base_parsed))?;
    let mut distilled = btf::distill::distill_base(&split_parsed.btf, &base_parsed.btf)
        .with_context(|| format!("{}: distilling the base", split.display()))?;
    let written = btf::distill::write(&mut distilled, split_parsed.endian)
        .with_context(|| format!("{}: writing BTF", output.display()))?;
    let mut base_out = output.as_os_str().to_owned();
    base_out.push(".base");
    let small = crate::verify::check_output(
        Path::new(&base_out),
        "distilled base BTF",
        &written.base,
        None,
    )?;
    crate::verify::check_output(output, "BTF", &written.split, Some(&small))?;
    // The pair belongs together: the base first, so that a split never
    // sits next to a stale base it does not fit.
    output::replace_atomically(Path::new(&base_out), &written.base)?;
    output::replace_atomically(output, &written.split)?;
    Ok(ExitCode::SUCCESS)
}

fn encode(args: &EncodeArgs) -> Result<ExitCode> {
    // pahole's --btf_encode_detached implies -J; BTFHub-style scripts rely
    // on that and never pass -J.
    if !args.btf_encode && args.btf_encode_detached.is_none() {
        bail!("only BTF encoding is supported: pass -J (see --help)");
    }
    let report = Report {
        skips: args.verbose,
        timings: args.timings || std::env::var_os("BTFENC_TIMINGS").is_some_and(|v| v == "1"),
    };
    if report.timings {
        pipeline::enable_thread_times();
    }
    let mut config = config::resolve(args)?;
    let files = inputs::expand(&args.files)?;
    config.last_in_process = files.len() == 1;
    if files.is_empty() {
        bail!("no input file given");
    }
    let threads = match args.jobs {
        Some(0) | None => 0,
        Some(n) => n,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;

    let base_bytes = args.btf_base.as_deref().map(read_btf_bytes).transpose()?;
    let parsed_base = parse_optional(args.btf_base.as_deref(), &base_bytes)?;

    // The base is checked as the kernel would (a base it rejects makes
    // every split on it useless) while it is indexed: a batch resolves all
    // of it once, one module (a kernel build runs a process per module)
    // what it reaches.
    let splits_on = if files.len() == 1 {
        pipeline::SplitsOn::One
    } else {
        pipeline::SplitsOn::Many
    };
    let base = match (
        &parsed_base,
        args.btf_base.as_deref(),
        base_bytes.as_deref(),
    ) {
        (Some(parsed), Some(path), Some(bytes)) => {
            let raw = crate::verify::raw_btf(path, bytes)?;
            let split_on = pool.install(|| {
                pipeline::SplitOn::new(path, parsed, raw, &config.features, splits_on)
            })?;
            Some(split_on)
        }
        _ => None,
    };

    let detached = args.btf_encode_detached.as_deref();
    if files.len() > 1 && detached.is_some_and(|d| !d.is_dir()) {
        bail!(
            "{}: with several input files, --btf_encode_detached must name an existing directory",
            detached
                .map(Path::display)
                .map(|d| d.to_string())
                .unwrap_or_default()
        );
    }

    if files.len() == 1 {
        let file = &files[0];
        // An existing directory gets DIR/NAME.btf, as in a batch.
        let out = detached.map(|d| {
            if d.is_dir() {
                d.join(detached_name(file))
            } else {
                d.to_path_buf()
            }
        });
        pool.install(|| encode_one(file, out.as_deref(), &config, base.as_ref(), report))?;
        // The process ends here, and the system takes the base back at
        // once: freeing its 100,000 types and their indexes one by one was
        // 3% of a small module's encoding (a kernel build runs one per
        // module). Each value is forgotten before what it borrows.
        std::mem::forget(base);
        std::mem::forget(parsed_base);
        std::mem::forget(base_bytes);
        return Ok(ExitCode::SUCCESS);
    }

    // Two modules of the same name would silently overwrite one output.
    if detached.is_some() {
        let mut seen = std::collections::HashMap::new();
        for file in &files {
            if let Some(first) = seen.insert(detached_name(file), file) {
                bail!(
                    "{} and {} would both be written to {}",
                    first.display(),
                    file.display(),
                    detached_name(file).display()
                );
            }
        }
    }

    // Many modules: each is independent, so a bad one fails alone.
    let done = AtomicUsize::new(0);
    let total = files.len();
    let progress = io::stderr().is_terminal();
    let failures: Vec<(PathBuf, anyhow::Error)> = pool.install(|| {
        files
            .par_iter()
            .filter_map(|file| {
                let out = detached.map(|dir| dir.join(detached_name(file)));
                let result = encode_one(file, out.as_deref(), &config, base.as_ref(), report);
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if progress {
                    say_partial!("\rbtfenc: {n}/{total}");
                }
                result.err().map(|e| (file.clone(), e))
            })
            .collect()
    });
    if progress {
        say!();
    }
    let mut failures = failures;
    failures.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, err) in &failures {
        say!("btfenc: {}", crate::error_line(err));
    }
    say!(
        "btfenc: encoded {} of {total} files, {} failed",
        total - failures.len(),
        failures.len()
    );
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// The pipeline's error, with the option that would have avoided it named
/// at the end of the line: the library says what is wrong, the command
/// line is btfenc's to mention.
/// `dwarf_alt` says whether `--dwarf-alt` was given.
fn with_cli_hint(err: btf::Error, dwarf_alt: bool) -> anyhow::Error {
    let forced = matches!(err.root(), btf::Error::Lower(e) if e.skipped_when_forced());
    let missing_sup = matches!(err.root(), btf::Error::Dwarf(e)
        if matches!(e.kind(), dwarf::ErrorKind::MissingSupplementary(_)));
    let err = anyhow::Error::new(err);
    if forced {
        anyhow::anyhow!("{err:#} (use --btf_encode_force to skip it)")
    } else if missing_sup && !dwarf_alt {
        anyhow::anyhow!("{err:#} (give it with --dwarf-alt FILE)")
    } else {
        err
    }
}

/// What goes to stderr besides errors and warnings.
#[derive(Clone, Copy, Debug)]
struct Report {
    /// `-V`/`--verbose`: pahole's skip lines.
    skips: bool,
    /// `--timings` / `BTFENC_TIMINGS=1`: per-phase figures.
    timings: bool,
}

/// `DIR/NAME.btf` for module `NAME.ko` in a batch with a detached directory.
fn detached_name(file: &Path) -> PathBuf {
    let stem = file
        .file_stem()
        .map(|s| s.to_os_string())
        .unwrap_or_default();
    let mut name = stem;
    name.push(".btf");
    PathBuf::from(name)
}

/// An image whose `.BTF` is ALLOC cannot be patched: say so before
/// spending the encoding on it (a vmlinux takes seconds).
fn refuse_unpatchable_early(file: &Path, config: &Options) -> Result<()> {
    let Ok(handle) = fs::File::open(file) else {
        // The encoder reports unreadable files with its own message.
        return Ok(());
    };
    // SAFETY: read-only map of a file this process only reads here; a
    // concurrent truncation by someone else would fault, as for any mmap
    // reader (the encoder maps its input the same way).
    let Ok(map) = (unsafe { memmap2::Mmap::map(&handle) }) else {
        return Ok(());
    };
    if !map.starts_with(b"\x7fELF") {
        return Ok(());
    }
    let mut names = vec![".BTF"];
    if config.features.distilled_base {
        names.push(".BTF.base");
    }
    crate::elf_patch::check_patchable(&map, &names)
        .map_err(|e| anyhow::anyhow!("{}: {e:#}", file.display()))
}

fn encode_one(
    file: &Path,
    detached: Option<&Path>,
    config: &Options,
    base: Option<&pipeline::SplitOn<'_, '_>>,
    report: Report,
) -> Result<()> {
    if detached.is_none() {
        refuse_unpatchable_early(file, config)?;
    }
    // A bug must fail this file, not the whole batch, and must still be
    // reported as one line naming the file.
    let encoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pipeline::encode(file, config, base)
    }))
    .map_err(|_| {
        anyhow::anyhow!(
            "{}: internal error while encoding (a btfenc bug)",
            file.display()
        )
    })?
    .map_err(|err| with_cli_hint(err, config.dwarf_alt.is_some()))?;
    for warning in &encoded.warnings {
        say!("btfenc: warning: {warning}");
    }
    if report.skips && !encoded.skips.is_empty() {
        // One file's lines together, as pahole (one file per process)
        // prints them.
        let mut text = encoded.skips.join("\n");
        text.push('\n');
        let _ = io::stderr().lock().write_all(text.as_bytes());
    }
    if report.timings {
        stats::report(&encoded.stats, file);
    }
    // Nothing the kernel would reject is written: `encode` checked both
    // blobs as the kernel would (its error names the rule broken).
    if report.timings {
        say!(
            "{}: kernel checks of the output: {:.1} ms",
            file.display(),
            encoded.stats.check.wall.as_secs_f64() * 1e3
        );
    }
    let sections = Sections {
        btf: &encoded.btf,
        base: encoded.distilled_base.as_deref(),
    };
    match detached {
        Some(out) => output::write_detached(out, &sections),
        None => {
            let original =
                fs::read(file).with_context(|| format!("{}: cannot read", file.display()))?;
            let patched = output::patch_elf(file, &original, &sections)?;
            output::replace_atomically(file, &patched)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What encode_force would skip gets btfenc's option named at the end
    /// of the line; the library's own message names no option, and other
    /// failures get no hint.
    #[test]
    fn cli_hint_is_btfenc_s_not_the_library_s() {
        let void = btf::lower::Error::VoidVariable {
            cu_offset: 0x10,
            name: "v".into(),
        };
        assert!(!void.to_string().contains("--"), "{void}");
        let err = btf::Error::from(void).context("m.o");
        assert_eq!(
            format!("{:#}", with_cli_hint(err, false)),
            "m.o: CU at .debug_info+0x10: variable 'v' has void type \
             (use --btf_encode_force to skip it)"
        );
        let dedup = btf::Error::from(btf::dedup::Error::TooManyTypes { count: 5 }).context("m.o");
        assert!(!format!("{:#}", with_cli_hint(dedup, false)).contains("--"));
        // A missing dwz file: the library says where it looked, btfenc
        // how to name it, unless it was named.
        let missing = dwarf::Error::new(
            std::path::Path::new("m.o"),
            dwarf::ErrorKind::MissingSupplementary("looked for x.debug".into()),
        );
        assert!(!missing.to_string().contains("--"), "{missing}");
        let missing = || btf::Error::from(missing.clone()).context("m.o");
        assert!(format!("{:#}", with_cli_hint(missing(), false))
            .ends_with("looked for x.debug (give it with --dwarf-alt FILE)"));
        assert!(!format!("{:#}", with_cli_hint(missing(), true)).contains("--"));
    }

    #[test]
    fn inputs_are_mapped_and_unmappable_ones_read() {
        let path = std::env::temp_dir().join(format!("btfenc-input-bytes-{}", std::process::id()));
        fs::write(&path, b"\x9f\xeb\x01\x00rest").expect("write");
        let mapped = read_btf_bytes(&path).expect("reads");
        assert!(
            matches!(mapped, InputBytes::Mapped(_)),
            "a regular file is mapped"
        );
        assert_eq!(&*mapped, b"\x9f\xeb\x01\x00rest");
        drop(mapped);
        fs::remove_file(&path).expect("cleanup");

        // A character device cannot be mapped; it is read instead.
        let read = read_btf_bytes(Path::new("/dev/null")).expect("reads");
        assert!(matches!(read, InputBytes::Read(_)), "/dev/null is read");
        assert!(read.is_empty());

        let missing = read_btf_bytes(Path::new("/nonexistent/btfenc-input"));
        assert!(missing.is_err_and(|e| e.to_string().contains("/nonexistent/btfenc-input")));
    }
}
