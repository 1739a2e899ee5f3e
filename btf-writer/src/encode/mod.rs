//! ELF in, BTF out: the whole of `pahole -J` as one call.
//!
//! [`encode`] takes a file and [`Options`] and returns the bytes of its
//! `.BTF` (standalone, or split on a base given as [`SplitOn`], with a
//! distilled `.BTF.base` when the `distilled_base` feature asks for one).
//!
//! One DIE's way to one BTF type:
//! 1. [`dwarf`] opens the ELF (relocated, decompressed) and walks each unit's
//!    DIEs into a per-CU model ([`dwarf::model::CuModel`]); units are walked
//!    in parallel (module `units`).
//! 2. [`crate::lower::lower_cu`] turns that CU model into BTF types with
//!    CU-local ids, plus the functions and variables it proposes for FUNC
//!    and VAR, with pahole's rules.
//! 3. [`Assembler`] adds the lowered CUs in `.debug_info` order to one
//!    table, keeping one copy of the types CUs repeat exactly, then lets
//!    [`crate::lower::add_functions_and_variables`] pick the FUNCs and VARs.
//! 4. [`crate::dedup`] deduplicates the table with `btf__dedup`'s rules
//!    (as it grows, for a standalone encoding), and [`crate::write`] (or
//!    [`crate::distill`]) serializes it.
//!
//! Nothing assigns a global id out of `.debug_info` order, which is what
//! makes the output independent of the thread count.
//!
//! ```no_run
//! use btf::encode::{encode, Options};
//! use btf::lower::Features;
//!
//! let options = Options::new(Features::parse("default", true).unwrap());
//! let encoded = encode("vmlinux".as_ref(), &options, None)?;
//! std::fs::write("vmlinux.btf", &encoded.btf)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod assemble;
mod check;
mod cpu_clock;
mod error;
#[cfg(test)]
mod tests;
mod turns;
mod units;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bumpalo::Bump;
use dwarf::ElfFile;

pub use self::assemble::{assemble, Assembled, Assembler, ReadyCu, SpentCu, SplitBase};
pub use self::cpu_clock::enable_thread_times;
pub use self::error::Error;
pub use self::units::Counts;

use self::error::ResultExt as _;
use self::units::TableKind;
use crate::dedup::PreparedBase;
use crate::lower::{self, Features};
use crate::raw::{Endian, HeaderFormat};
use crate::read::Parsed;
use crate::strings::StringIndex;
use crate::types::Btf;
use crate::validate::{
    validate, validate_base_records, Checked, Options as ValidateOptions, UnresolvedBase,
};

/// What one encoding needs to know besides the input file.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// Features and selection rules.
    pub features: Features,
    /// Languages whose CUs are skipped.
    pub lang_exclude: Vec<dwarf::model::Language>,
    /// The process ends after this file: the pre-dedup table is left for
    /// the system to take back at exit, which it does at once, instead of
    /// being freed type by type (~60 ms for a vmlinux, on the critical
    /// path). Batches, which go on to other files, free it.
    pub last_in_process: bool,
    /// The supplementary DWARF file (`dwz -m`'s common file) of inputs
    /// that name one, instead of looking for it.
    pub dwarf_alt: Option<PathBuf>,
    /// Where supplementary files are looked up by build-id
    /// (`/usr/lib/debug`; see [`dwarf::find_supplementary`]).
    pub debug_dir: PathBuf,
    /// Most lowered CUs that may wait for their turn to be added to the
    /// table (at least 1; [`DEFAULT_LOWERED_AHEAD`] by default): with that
    /// many waiting, a worker takes no new unit but helps add them, or
    /// waits for the unit holding them up. Fewer keep less memory, at the
    /// cost of idle workers behind large units; the output is the same.
    pub lowered_ahead: usize,
}

/// [`Options::lowered_ahead`] by default. Without a bound, lowered CUs
/// piled up behind a unit still being walked, or behind the table while
/// the worker adding to it was descheduled: up to 40 CUs on Debian
/// 7.3.4's vmlinux on a quiet machine, and 92 at the end of the walk,
/// where memory peaks, with one busy process beside it. With that
/// competitor, peak RSS on Debian 6.1's vmlinux was 168-199 MB without
/// the bound and 168-175 MB with it (159-161 MB on a quiet machine).
/// Sixteen cover a unit sixteen times the average size with no core left
/// idle: the walk kept 1.99 cores of CPU time per wall time on two, where
/// a bound of 8 took it to 1.98.
pub const DEFAULT_LOWERED_AHEAD: usize = 16;

/// Per-phase times and counts, for `-V`.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Opening the ELF, symbols, DWARF section setup.
    pub open: Phase,
    /// Walking DIEs and lowering each CU (parallel), and adding each to
    /// the pre-dedup table as it comes (overlapped, in CU order).
    pub walk_and_lower: Phase,
    /// Selecting FUNCs and VARs across CUs.
    pub assemble: Phase,
    /// Deduplication.
    pub dedup: Phase,
    /// Serialization.
    pub write: Phase,
    /// The kernel's checks of what was written.
    pub check: Phase,
    /// Compilation units.
    pub cus: usize,
    /// What the walk phase counted: DIEs, types lowered, and the CPU time
    /// of its parts.
    pub walk: Counts,
    /// Types before dedup: those left when exact copies are collapsed, plus
    /// FUNCs, VARs and DATASECs.
    pub types_before: usize,
    /// Types after dedup.
    pub types_after: usize,
}

/// How long one phase took: wall-clock time, and the CPU time the whole
/// process spent meanwhile. On a shared machine the wall time says how busy
/// the others were; the CPU time is what the phase costs.
#[derive(Debug, Default, Clone, Copy)]
pub struct Phase {
    /// Elapsed wall-clock time.
    pub wall: Duration,
    /// User + system CPU time of all threads.
    pub cpu: Duration,
}

/// A phase being timed.
struct PhaseTimer {
    wall: Instant,
    cpu: Duration,
}

impl Options {
    /// Encodes `features`, every language, freeing everything before
    /// returning.
    pub fn new(features: Features) -> Options {
        Options {
            features,
            lang_exclude: Vec::new(),
            last_in_process: false,
            dwarf_alt: None,
            debug_dir: PathBuf::from("/usr/lib/debug"),
            lowered_ahead: DEFAULT_LOWERED_AHEAD,
        }
    }
}

impl PhaseTimer {
    fn start() -> Self {
        PhaseTimer {
            wall: Instant::now(),
            cpu: cpu_clock::process(),
        }
    }

    fn stop(self) -> Phase {
        Phase {
            wall: self.wall.elapsed(),
            cpu: cpu_clock::process().saturating_sub(self.cpu),
        }
    }
}

/// The encoded BTF of one file. Both blobs passed the kernel's own checks
/// ([`crate::validate`], as `BPF_BTF_LOAD` would run them; a split on its
/// base or on its distilled base): [`encode`] returns an error
/// ([`crate::ErrorKind::WouldBeRejected`]) rather than BTF the kernel
/// would reject.
#[derive(Debug)]
pub struct Encoded {
    /// `.BTF` contents.
    pub btf: Vec<u8>,
    /// `.BTF.base` contents: the distilled base the split in `btf` is on,
    /// with the `distilled_base` feature and a base.
    pub distilled_base: Option<Vec<u8>>,
    /// What `encode_force` left out (a member that cannot be placed, a
    /// name the kernel would refuse, ...), one line each naming the file,
    /// in unit order: the same for any thread count.
    pub warnings: Vec<String>,
    /// pahole 1.31's `--verbose` lines for the functions it leaves out
    /// (`NAME : skipping BTF encoding of function due to REASON`), in its
    /// order: by name, then unit.
    pub skips: Vec<String>,
    /// Figures for `--timings`.
    pub stats: Stats,
}

/// The base of split encodings, loaded and indexed once for every input
/// (a batch of modules shares one): its types, its strings by name, and
/// its types filed for dedup. Per module, only the module's own types
/// then cost time.
#[derive(Debug)]
pub struct SplitOn<'p, 'a> {
    /// The parsed base.
    pub parsed: &'p Parsed<'a>,
    /// The base's strings by name, for every split (`None` with
    /// [`SplitsOn::One`]: the one split's writer gets an index of its own
    /// names, [`Parsed::string_index_for`]).
    strings: Option<StringIndex<'a>>,
    dedup: PreparedBase<'p, 'a>,
    /// The base as the kernel's checks took it: what a split on it is
    /// checked on before it is handed out.
    checked: CheckedBase<'a>,
    /// Where the base was read from, for what its checks find.
    path: PathBuf,
}

/// How many splits [`SplitOn::new`] prepares a base for, which says what
/// is worth doing for all of the base up front.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitsOn {
    /// Several (a batch): the base's references are all resolved as the
    /// kernel would, and all its strings indexed, once.
    Many,
    /// One, such as a module encoded by a kernel build, which runs a
    /// process per module: only the base types the split refers to are
    /// resolved, when it is checked (see
    /// [`crate::validate::UnresolvedBase`]; every record of the base is
    /// still checked up front), and only the split's own names looked up
    /// in the base's strings.
    One,
}

/// The base as [`SplitsOn`] had it checked.
#[derive(Debug)]
pub(crate) enum CheckedBase<'a> {
    Whole(Checked<'a>),
    Reached(UnresolvedBase<'a>),
}

impl<'p, 'a> SplitOn<'p, 'a> {
    /// Indexes `parsed` (read from `path`, whose raw BTF is `raw`) for
    /// splits deduplicated as `features` ask (see [`dedup_flavor`]), and
    /// checks it as the kernel would, as far as `splits` says: a base it
    /// rejects makes every split on it useless.
    pub fn new(
        path: &Path,
        parsed: &'p Parsed<'a>,
        raw: &'a [u8],
        features: &Features,
        splits: SplitsOn,
    ) -> Result<Self, Error> {
        let (dedup, checked) = rayon::join(
            || PreparedBase::new(&parsed.btf, dedup_flavor(features)),
            || match splits {
                SplitsOn::Many => {
                    validate(raw, None, ValidateOptions::AS_WRITTEN).map(CheckedBase::Whole)
                }
                SplitsOn::One => validate_base_records(raw, ValidateOptions::AS_WRITTEN)
                    .map(CheckedBase::Reached),
            },
        );
        let checked =
            checked.map_err(|violations| check::rejected(path, "base BTF", false, &violations))?;
        let dedup = dedup.with_context(|| format!("{}: base BTF", path.display()))?;
        Ok(SplitOn {
            parsed,
            strings: (splits == SplitsOn::Many).then(|| parsed.string_index()),
            dedup,
            checked,
            path: path.to_path_buf(),
        })
    }

    /// The base's strings by name, as the writer of `split` (a split on
    /// this base) looks them up: the index of all of them, or with
    /// [`SplitsOn::One`] one of the split's own names.
    fn strings_for(&self, split: &Btf<'a>) -> Cow<'_, StringIndex<'a>> {
        match &self.strings {
            Some(all) => Cow::Borrowed(all),
            None => Cow::Owned(
                self.parsed
                    .string_index_for(crate::write::names_looked_up(split)),
            ),
        }
    }
}

/// The libbpf whose `btf__dedup` the emulated pahole links: 1.24 (legacy
/// flags) has Debian's libbpf 1.1, 1.31 (`--btf_features`) embeds 1.7.
/// They differ visibly for split BTF: 1.7 never merges a module's TYPEDEF
/// into the base's.
pub fn dedup_flavor(features: &Features) -> crate::dedup::Flavor {
    match features.rules {
        lower::Rules::V1_24 => crate::dedup::Flavor::Libbpf1_1,
        lower::Rules::V1_31 => crate::dedup::Flavor::Libbpf1_7,
    }
}

/// Encodes `path`, split on `base` when given.
pub fn encode(
    path: &Path,
    config: &Options,
    base: Option<&SplitOn<'_, '_>>,
) -> Result<Encoded, Error> {
    let mut stats = Stats::default();
    // One arena per worker for the names that sit in `.debug_info` itself,
    // declared before the file so that it outlives everything borrowing
    // the file's strings.
    let mut inline_names: Vec<Bump> = Vec::new();
    let phase = PhaseTimer::start();
    let elf = ElfFile::open(path)?;
    // dwz's common file, when the DWARF refers to one; a missing one is
    // an error naming where it was looked for.
    let sup = match elf.supplementary_link()? {
        Some(link) => Some(dwarf::find_supplementary(
            &elf,
            &link,
            config.dwarf_alt.as_deref(),
            &config.debug_dir,
        )?),
        None => None,
    };
    // Independent reads of the file: the symbol table, and the unit list
    // with its abbreviations.
    let (symbols, dwarf) = rayon::join(|| elf.symbols(), || elf.dwarf_with_sup(sup.as_ref()));
    let (symbols, dwarf) = (symbols?, dwarf?);
    let mut ctx = lower::Context::new(config.features, &symbols);
    ctx.lang_exclude = config.lang_exclude.clone();
    ctx.pointer_size = if elf.is_64() { 8 } else { 4 };
    ctx.relocatable = matches!(elf.kind(), dwarf::ElfKind::Relocatable);
    ctx.machine = elf.machine();
    ctx.register_params = lower::register_params_for_machine(elf.machine());
    let endian = if elf.is_big_endian() {
        Endian::Big
    } else {
        Endian::Little
    };
    // Sections copied out of the map (relocated, as in modules, or
    // decompressed) were read whole: their pages would stay resident through
    // the walk (xfs.ko: +11 MB at the peak). Otherwise what is left mapped
    // is the symbol table's pages and the last few units' headers (the
    // listing gives the rest back as it goes), which the walk's first
    // release of mapped pages gives back long before memory peaks:
    // releasing them here would only cost time (5 ms for a vmlinux).
    if elf.has_copied_sections() {
        elf.release_resident_pages();
    }
    stats.open = phase.stop();

    let phase = PhaseTimer::start();
    let units = dwarf.units();
    stats.cus = units.len();
    inline_names.resize_with(rayon::current_num_threads().max(1), Bump::new);
    let table = match base {
        Some(b) => TableKind::Split(SplitBase {
            type_count: b.parsed.total_type_count(),
            str_len: b.parsed.str_end(),
        }),
        None => TableKind::Standalone(dedup_flavor(&config.features)),
    };
    let units::Walked {
        assembler,
        counts,
        mut warnings,
    } = units::walk_and_assemble(
        &elf,
        &dwarf,
        units,
        &mut inline_names,
        &ctx,
        table,
        config.lowered_ahead,
    )?;
    stats.walk = counts;
    // Only the DWARF string sections are read from now on (names borrow
    // them; they are mapped apart and stay); the other sections the walk
    // read (locations, abbreviations, lines, symbol names) can go.
    elf.release_resident_pages();
    stats.walk_and_lower = phase.stop();

    let phase = PhaseTimer::start();
    let Assembled {
        btf: assembled,
        dedup: streamed,
        skips,
        warnings: assembly_warnings,
    } = assembler
        .finish(&ctx)
        .with_context(|| path.display().to_string())?;
    warnings.extend(
        assembly_warnings
            .iter()
            .map(|w| format!("{}: {w}", path.display())),
    );
    stats.types_before = assembled.types.len();
    stats.assemble = phase.stop();

    let phase = PhaseTimer::start();
    let deduped = match (base, streamed) {
        (Some(base), _) => crate::dedup::dedup_on(&assembled, &base.dedup),
        (None, Some(streamed)) => streamed.finish(&assembled),
        (None, None) => crate::dedup::dedup_as(&assembled, None, dedup_flavor(&config.features)),
    }
    .with_context(|| format!("{}: dedup", path.display()))?;
    if base.is_none() && deduped.btf.types.is_empty() {
        return Err(
            Error::from(crate::ErrorKind::NoTypes("its DWARF describes no type"))
                .context(path.display().to_string()),
        );
    }
    stats.types_after = deduped.btf.types.len();
    stats.dedup = phase.stop();

    let phase = PhaseTimer::start();
    // Freeing the pre-dedup types takes longer than writing the result;
    // the two are independent, so the freeing overlaps the write.
    let last_in_process = config.last_in_process;
    let ((), written) = rayon::join(
        move || {
            if last_in_process {
                std::mem::forget(assembled);
            } else {
                drop(assembled);
            }
        },
        || -> Result<_, Error> {
            let header = header_format(&config.features, base.is_some());
            let options = |base_strings| crate::write::WriteOptions {
                endian,
                base_strings,
                strings: None,
                header,
            };
            Ok(match base {
                Some(base) if config.features.distilled_base => {
                    let mut distilled =
                        crate::distill::distill_base(&deduped.btf, &base.parsed.btf)
                            .with_context(|| format!("{}: distilling the base", path.display()))?;
                    if distilled.base.types.is_empty() {
                        return Err(Error::from(crate::ErrorKind::NoTypes(
                            "it refers to no base type, so its distilled base would be empty",
                        ))
                        .context(path.display().to_string()));
                    }
                    let written = crate::distill::write_with_header(&mut distilled, endian, header)
                        .with_context(|| format!("{}: writing BTF", path.display()))?;
                    (written.split, Some(written.base))
                }
                Some(base) => (
                    crate::write::write_with(
                        &deduped.btf,
                        options(Some(&base.strings_for(&deduped.btf))),
                    )
                    .with_context(|| format!("{}: writing BTF", path.display()))?,
                    None,
                ),
                None => (
                    crate::write::write_with(&deduped.btf, options(None))
                        .with_context(|| format!("{}: writing BTF", path.display()))?,
                    None,
                ),
            })
        },
    );
    let (bytes, distilled_base) = written?;
    stats.write = phase.stop();

    // Nothing the kernel would reject leaves the library, whatever the
    // input made of it.
    let phase = PhaseTimer::start();
    // Independent: the second core takes one.
    let (declarations, written) = rayon::join(
        || check::by_value_declarations(path, &deduped.btf, base.map(|b| &b.parsed.btf)),
        || check::written(path, &bytes, distilled_base.as_deref(), base),
    );
    declarations?;
    written?;
    stats.check = phase.stop();
    if last_in_process {
        // As for the pre-dedup table: the system takes all of this back at
        // exit at once, where freeing it piece by piece (tens of thousands
        // of types, a few thousand arenas, the file's map) would delay the
        // output by several milliseconds.
        // Each value borrowing another is forgotten before what it
        // borrows: moving a value out needs its borrows to be over.
        std::mem::forget(deduped);
        std::mem::forget(ctx);
        std::mem::forget(symbols);
        std::mem::forget(dwarf);
        std::mem::forget(inline_names);
        std::mem::forget(sup);
        std::mem::forget(elf);
    }
    Ok(Encoded {
        btf: bytes,
        distilled_base,
        warnings,
        skips,
        stats,
    })
}

/// The header btfenc writes, as pahole does: without `layout`, the 24-byte
/// header every reader knows (pahole 1.31 with the libbpf it ships);
/// with it, libbpf 1.8's 32-byte header, and the kind layout section on
/// base BTF only (pahole passes `add_layout` only without a base; split BTF
/// and its distilled base get the 32-byte header with zero layout fields).
pub fn header_format(features: &Features, split: bool) -> HeaderFormat {
    match (features.layout, split) {
        (false, _) => HeaderFormat::Short,
        (true, true) => HeaderFormat::Long,
        (true, false) => HeaderFormat::WithLayout,
    }
}
