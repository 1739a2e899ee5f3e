/*!
Walking and lowering a file's units in parallel, adding them to the
pre-dedup table in `.debug_info` order as they come.

The table collapses exact duplicates as CUs are added
([`crate::dedup::Collapser`]), so each CU's own types are freed soon after
it is lowered instead of all CUs waiting for an assembly at the end: that
is what bounds the peak memory. Workers take units in `.debug_info` order,
and the table only ever sees them in that order, which keeps the output
independent of the thread count. Adding is sequential; the worker that
finishes the CU whose turn it is does it, so no thread sits waiting and the
CU is added while still in cache. The CUs lowered ahead of their turn are
bounded ([`super::Options::lowered_ahead`]): a worker with that many
waiting helps add them, or waits for the unit holding them up, before it
takes another.
A standalone table is also deduplicated as far as it can be while it
grows ([`crate::dedup::StreamingDedup`]): that work then overlaps the walk of
later CUs instead of waiting for the last one.
*/

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError, TryLockError};
use std::time::Duration;

use bumpalo::Bump;
use dwarf::model::CuModel;
use dwarf::{Dwarf, ElfFile, UnitHeader};

use super::assemble::{Assembler, ReadyCu, SpentCu, SplitBase};
use super::error::ResultExt as _;
use super::turns::{lock, Turns};
use super::{cpu_clock, Error};
use crate::dedup::{Flavor, MergedNames};
use crate::lower::{self, KnownTypes};

/// Units walked between two releases of the mapped pages (the string
/// sections, which every unit reads, are mapped apart and stay; see
/// `ElfFile::release_resident_pages`): the walked units' part of
/// `.debug_info`, and the pages of the other sections (location and range
/// lists, abbreviations, lines) that the units read. Released now and
/// then, they never add up; pages still in use are simply read back. The
/// peak comes at the end of the walk, with the mapped pages of the last
/// units on top of the table: every 16 units, that is 7 MB less than
/// every 64 on Debian 6.1's vmlinux (5-9 MB on 7.3.4's), for about the
/// same page faults (85 K on 7.3.4) and 68 ms in madvise instead of 55.
/// Every 8 units saved 2 MB more for more faults and slower runs; giving
/// back each unit's pages as soon as it was walked costs 2172 madvise
/// calls, each with a TLB shootdown on the other core (about 60 ms of CPU
/// and 40 ms of wall time).
const RELEASE_EVERY: usize = 16;

/// CUs added between two steps of the dedup passes that can run before
/// the table is complete. Each step interrupts the collapse, and on
/// Debian's vmlinux the passes took 10-20% more CPU when run after every
/// CU than in steps of 16 to 64, whose own caches stay warmer.
const DEDUP_EVERY: usize = 16;

/// Slots of the known types' registry for a file of `units` units: a
/// registry that fills up only stops filing (see [`KnownTypes`]), and one
/// that stays small stays in the cache of the core looking types up,
/// where nearly every one of a vmlinux's units looks up thousands. Debian
/// 6.1's vmlinux (2,172 units) files 13,295 shapes and 7.3.4's (2,556)
/// 16,943: both get 32 K slots (512 KB), of which 24 K can be filled.
fn known_slots(units: usize) -> usize {
    units.saturating_mul(12).clamp(1 << 10, 1 << 16)
}

/// What the walk counted.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// DIEs visited.
    pub dies: u64,
    /// Types the CUs lowered to, before collapsing.
    pub types: usize,
    /// Of those, the types found known from an earlier CU instead of
    /// lowered again (see [`KnownTypes`]).
    pub known: usize,
    /// CPU time the workers spent walking DIEs, summed over CUs.
    pub walk_cpu: Duration,
    /// CPU time the workers spent lowering to BTF and preparing the CUs
    /// for the table, summed over CUs.
    pub lower_cpu: Duration,
    /// CPU time spent adding the CUs to the table, one worker at a time:
    /// with `early_dedup_cpu`, the sequential part of the phase.
    pub adding_cpu: Duration,
    /// CPU time spent on the dedup passes that can run before the table is
    /// complete, right after adding each CU.
    pub early_dedup_cpu: Duration,
    /// The most lowered CUs that waited for their turn to be added at once
    /// (at most [`super::Options::lowered_ahead`], and a few more: a unit
    /// being lowered when the bound was reached still joins them).
    pub most_waiting: usize,
}

/// The table the units are added to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TableKind {
    /// Split on a base: deduplicated once complete.
    Split(SplitBase),
    /// Standalone: deduplicated as `Flavor` while it grows, as far as it
    /// can be ([`crate::dedup::StreamingDedup`]).
    Standalone(Flavor),
}

/// What the walk built: the table, what it counted, and what
/// `encode_force` left out.
pub(crate) struct Walked<'input> {
    pub assembler: Assembler<'input>,
    pub counts: Counts,
    /// One line each, in unit order, naming the file.
    pub warnings: Vec<String>,
}

/// What one unit cost its worker, and which worker that was.
#[derive(Debug, Default, Clone, Copy)]
struct UnitCosts {
    dies: u64,
    walk_cpu: Duration,
    lower_cpu: Duration,
    /// The rayon thread that lowered the CU, which frees what the table
    /// leaves of it ([`Returns`]).
    worker: Option<usize>,
}

/// What the table left of each CU, waiting to be freed by the worker that
/// lowered it: glibc's malloc keeps an arena per thread, and the worker
/// adding a CU is often not the one that lowered it. Freeing into the other
/// worker's arena would take that arena's lock while its owner allocates
/// (see [`SpentCu`]).
struct Returns<'input> {
    /// One list per worker; CUs lowered outside the pool are freed by
    /// whoever adds them.
    by_worker: Vec<Mutex<Vec<SpentCu<'input>>>>,
}

impl<'input> Returns<'input> {
    fn new(workers: usize) -> Self {
        Returns {
            by_worker: (0..workers).map(|_| Mutex::new(Vec::new())).collect(),
        }
    }

    /// Hands `spent` to the worker that lowered it, or frees it now when
    /// that is the current thread (or no worker).
    fn give_back(&self, worker: Option<usize>, spent: SpentCu<'input>) {
        let list = worker
            .filter(|&w| Some(w) != rayon::current_thread_index())
            .and_then(|w| self.by_worker.get(w));
        match list {
            Some(list) => lock(list).push(spent),
            None => drop(spent),
        }
    }

    /// Frees what was handed back to the current thread.
    fn free_mine(&self) {
        let Some(list) = rayon::current_thread_index().and_then(|w| self.by_worker.get(w)) else {
            return;
        };
        let mine = std::mem::take(&mut *lock(list));
        drop(mine);
    }
}

/// A CU walked and lowered, or why it could not be.
type Lowered<'input> = Result<(UnitCosts, ReadyCu<'input>), Error>;

/// Stops the walk if its worker unwinds, so that no other worker waits
/// for a unit it will never queue.
struct StopOnUnwind<'a, 'input> {
    stop: &'a AtomicBool,
    turns: &'a Turns<Lowered<'input>>,
}

impl Drop for StopOnUnwind<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.stop.store(true, Ordering::Relaxed);
            self.turns.wake_all();
        }
    }
}

/// The table, what adding to it counted, and the first failure in unit
/// order (after which nothing more is added).
///
/// Nothing done while holding it waits in rayon (see
/// `Deduper::resume`), and neither does walking and lowering a unit:
/// workers block on the table, or sleep until a unit is queued
/// ([`Turns::wait_for_room`]), and a rayon wait can run another job on
/// the same thread, nested, which, blocked there, would keep the thread
/// from ever returning to the table or the unit beneath it. That happens
/// in a batch, where every thread is busy with other files.
struct Table<'input> {
    path: &'input Path,
    assembler: Assembler<'input>,
    /// CUs added so far.
    added: usize,
    counts: Counts,
    /// What `encode_force` left out, one line each, in unit order.
    warnings: Vec<String>,
    failed: Option<Error>,
}

impl<'input> Table<'input> {
    fn new(path: &'input Path, kind: TableKind) -> Self {
        let assembler = match kind {
            TableKind::Split(base) => Assembler::new(Some(base)),
            TableKind::Standalone(flavor) => Assembler::deduplicating(flavor),
        };
        Table {
            path,
            assembler,
            added: 0,
            counts: Counts::default(),
            warnings: Vec::new(),
            failed: None,
        }
    }

    /// Adds the next CU in unit order, returning what is left of it with
    /// the worker that lowered it (see [`Returns`]); `None` once the table
    /// has failed.
    fn add(
        &mut self,
        lowered: Lowered<'input>,
        known: Option<&KnownTypes>,
    ) -> Option<(Option<usize>, SpentCu<'input>)> {
        if self.failed.is_some() {
            return None;
        }
        let start = cpu_clock::thread();
        let added = lowered.and_then(|(costs, cu)| {
            self.counts.dies += costs.dies;
            self.counts.walk_cpu += costs.walk_cpu;
            self.counts.lower_cpu += costs.lower_cpu;
            self.counts.types += cu.type_count();
            self.counts.known += cu.known_count();
            let path = self.path;
            // In unit order, as the CUs are added: the same lines for any -j.
            self.warnings.extend(
                cu.warnings()
                    .iter()
                    .map(|w| format!("{}: {w}", path.display())),
            );
            let spent = self
                .assembler
                .add_filing(cu, known)
                .with_context(|| path.display().to_string())?;
            Ok((costs.worker, spent))
        });
        let added_at = cpu_clock::thread();
        self.counts.adding_cpu += added_at.saturating_sub(start);
        self.added += 1;
        if added.is_ok() && self.added.is_multiple_of(DEDUP_EVERY) {
            self.assembler.dedup_so_far();
            self.counts.early_dedup_cpu += cpu_clock::thread().saturating_sub(added_at);
        }
        match added {
            Ok(spent) => Some(spent),
            Err(err) => {
                self.failed = Some(err);
                None
            }
        }
    }

    fn finish(self) -> Result<Walked<'input>, Error> {
        match self.failed {
            Some(err) => Err(err),
            None => Ok(Walked {
                assembler: self.assembler,
                counts: self.counts,
                warnings: self.warnings,
            }),
        }
    }
}

/// Walks, lowers and adds every unit of `units` (see the module docs).
/// `inline_names` has an arena per worker for the names stored in
/// `.debug_info` itself (as many workers are started as there are arenas;
/// see [`dwarf::walk::InlineNames`]).
/// One arena per unit instead, each growing by doubling chunks, held
/// 3.0 MB on Debian 6.1's vmlinux, a good part of it never written, until
/// the output was written.
pub(crate) fn walk_and_assemble<'input>(
    elf: &ElfFile,
    dwarf: &Dwarf<'input>,
    units: &[UnitHeader<'input>],
    inline_names: &'input mut [Bump],
    ctx: &lower::Context<'_, 'input>,
    kind: TableKind,
    lowered_ahead: usize,
) -> Result<Walked<'input>, Error> {
    // dwz's common file holds what the units import: they are read with
    // it, together.
    if dwarf.sup_path().is_some() {
        return walk_together(dwarf, units, ctx, kind);
    }
    match walk_each_unit(elf, dwarf, units, inline_names, ctx, kind, lowered_ahead) {
        // LTO output refers across units, so no unit can be read alone:
        // read them as one (sequentially; such DWARF is rare). Asking
        // first would cost every ordinary file a scan of its abbreviations.
        Err(err) if is_cross_unit_reference(&err) => walk_together(dwarf, units, ctx, kind),
        other => other,
    }
}

/// Every unit on its own, in parallel.
fn walk_each_unit<'input>(
    elf: &ElfFile,
    dwarf: &Dwarf<'input>,
    units: &[UnitHeader<'input>],
    inline_names: &'input mut [Bump],
    ctx: &lower::Context<'_, 'input>,
    kind: TableKind,
    lowered_ahead: usize,
) -> Result<Walked<'input>, Error> {
    let work = Mutex::new(units.iter().enumerate());
    let stop = AtomicBool::new(false);
    let turns = Turns::new(lowered_ahead);
    let table = Mutex::new(Table::new(dwarf.path(), kind));
    let returns = Returns::new(rayon::current_num_threads());
    // Shapes take names by address: only where equal names are the same
    // bytes, in a `.debug_str` a linker merged, can a copy be found. A
    // module's holds every unit's names again; its copies are left to the
    // collapse, as shaping them would cost more than it found (5% more
    // instructions on xfs.ko, 1% of its types found).
    let known = dwarf
        .merged_debug_str()
        .map(|_| KnownTypes::new(known_slots(units.len())));
    rayon::scope(|workers| {
        let known = known.as_ref();
        let (work, stop, turns, table, returns) = (&work, &stop, &turns, &table, &returns);
        for names in inline_names.iter_mut() {
            workers.spawn(move |_| {
                let _unwinding = StopOnUnwind { stop, turns };
                let names = dwarf::walk::InlineNames::new(names);
                loop {
                    returns.free_mine();
                    turns.wait_for_room(stop, || {
                        add_whose_turn_it_is(turns, table, stop, returns, known, Wait::Yes);
                    });
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let next = lock(work).next();
                    let Some((index, unit)) = next else {
                        break;
                    };
                    let lowered = walk_and_lower(dwarf, unit, &names, ctx, known);
                    if index % RELEASE_EVERY == RELEASE_EVERY - 1 {
                        elf.release_resident_pages();
                    }
                    if lowered.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    turns.push(index, lowered);
                    add_whose_turn_it_is(turns, table, stop, returns, known, Wait::No);
                }
            });
        }
    });
    add_whose_turn_it_is(&turns, &table, &stop, &returns, known.as_ref(), Wait::Yes);
    let mut walked = table
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .finish()?;
    walked.counts.most_waiting = turns.most_waiting();
    Ok(walked)
}

/// Whether to wait for the table when another worker is adding to it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    Yes,
    No,
}

/// Adds the CUs whose turn has come. The worker that lowered a CU adds it
/// right away when it is its turn, while the CU is still in that core's
/// cache; a worker that finds another one adding leaves its CU queued for
/// it instead of waiting.
fn add_whose_turn_it_is<'input>(
    turns: &Turns<Lowered<'input>>,
    table: &Mutex<Table<'input>>,
    stop: &AtomicBool,
    returns: &Returns<'input>,
    known: Option<&KnownTypes>,
    wait: Wait,
) {
    loop {
        let mut table = match (wait, table.try_lock()) {
            (_, Ok(table)) => table,
            (_, Err(TryLockError::Poisoned(poisoned))) => poisoned.into_inner(),
            (Wait::Yes, Err(TryLockError::WouldBlock)) => lock(table),
            (Wait::No, Err(TryLockError::WouldBlock)) => return,
        };
        while let Some(lowered) = turns.take_turn() {
            match table.add(lowered, known) {
                // Freed or handed back at once, not after the run's last
                // CU: a run can be 16 CUs long, or longer when this worker
                // was descheduled meanwhile, and the leftovers of a run
                // (most of each CU's types) held together added up to
                // 25 MB at the peak on Debian 7.3.4's vmlinux with one busy
                // process beside it (238-265 MB against 239-242 MB).
                Some((worker, left)) => returns.give_back(worker, left),
                None => stop.store(true, Ordering::Relaxed),
            }
        }
        drop(table);
        // A CU queued while this worker held the table would otherwise
        // wait for the next worker to finish one.
        if !turns.turn_is_ready() {
            return;
        }
    }
}

/// One unit, up to the point where it needs the others.
fn walk_and_lower<'input>(
    dwarf: &Dwarf<'input>,
    unit: &UnitHeader<'input>,
    names: &dwarf::walk::InlineNames<'input>,
    ctx: &lower::Context<'_, 'input>,
    known: Option<&KnownTypes>,
) -> Lowered<'input> {
    let start = cpu_clock::thread();
    let arena = Bump::new();
    let cu =
        dwarf::walk::walk_unit_keeping_inline_names(dwarf, unit, &arena, names, &ctx.lang_exclude)?;
    lower_walked(&cu, start, ctx, known, merged_names(dwarf), || {
        format!(
            "{}: CU at .debug_info+{:#x}",
            dwarf.path().display(),
            cu.offset
        )
    })
}

/// All units as one, for DWARF whose units refer to each other.
fn walk_together<'input>(
    dwarf: &Dwarf<'input>,
    units: &[UnitHeader<'input>],
    ctx: &lower::Context<'_, 'input>,
    kind: TableKind,
) -> Result<Walked<'input>, Error> {
    let start = cpu_clock::thread();
    let arena = Bump::new();
    let cu = dwarf::walk::walk_units(dwarf, units, &arena)?;
    let what = || match dwarf.sup_path() {
        Some(sup) => format!(
            "{}: units walked together with {}",
            dwarf.path().display(),
            sup.display()
        ),
        None => format!("{}: units walked together (LTO)", dwarf.path().display()),
    };
    let mut table = Table::new(dwarf.path(), kind);
    drop(table.add(
        lower_walked(&cu, start, ctx, None, merged_names(dwarf), what),
        None,
    ));
    table.finish()
}

/// Where the names of `dwarf`'s units mostly are, when a linker merged
/// them (see [`MergedNames`]).
fn merged_names(dwarf: &Dwarf<'_>) -> MergedNames {
    dwarf
        .merged_debug_str()
        .map_or(MergedNames::NONE, MergedNames::of)
}

/// Lowers a walked CU and prepares it for the table; `walk_start` is the
/// thread's CPU time when its walk began.
fn lower_walked<'input>(
    cu: &CuModel<'input, '_>,
    walk_start: Duration,
    ctx: &lower::Context<'_, 'input>,
    known: Option<&KnownTypes>,
    names: MergedNames,
    what: impl Fn() -> String,
) -> Lowered<'input> {
    let walked = cpu_clock::thread();
    let ready = lower::lower_cu_with(cu, ctx, known)
        .map_err(Error::from)
        .and_then(|lowered| ReadyCu::new(lowered, names))
        .with_context(what)?;
    let costs = UnitCosts {
        dies: cu.die_count,
        walk_cpu: walked.saturating_sub(walk_start),
        lower_cpu: cpu_clock::thread().saturating_sub(walked),
        worker: rayon::current_thread_index(),
    };
    Ok((costs, ready))
}

/// Whether walking failed only because a DIE refers into another unit.
fn is_cross_unit_reference(err: &Error) -> bool {
    matches!(err.root(), Error::Dwarf(e) if matches!(e.kind(), dwarf::ErrorKind::CrossUnitReference(_)))
}
