/*!
Walking and lowering a file's units in parallel, adding them to the
pre-dedup table in `.debug_info` order as they come.

The table collapses exact duplicates as CUs are added
([`btf::dedup::Collapser`]), so each CU's own types are freed soon after
it is lowered instead of all CUs waiting for an assembly at the end: that
is what bounds the peak memory. Workers take units in `.debug_info` order,
so the CUs waiting for their turn stay few; the table only ever sees them
in that order, which keeps the output independent of the thread count.
Adding is sequential; the worker that finishes the CU whose turn it is does
it, so no thread sits waiting and the CU is added while still in cache.
*/

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::Duration;

use anyhow::{Context as _, Result};
use bumpalo::Bump;

use btf::lower::{self, Assembler, ReadyCu, SplitBase};
use dwarf::{Dwarf, ElfFile, UnitHeader};

/// Units walked between two releases of every mapped page. Units share
/// pages of the other sections (location and range lists, abbreviations,
/// strings) that no single unit can give back, and reading one unit's
/// header maps the pages around it (fault-around): released now and then,
/// they never add up. Pages still in use are simply read back.
const RELEASE_EVERY: usize = 64;

/// What the walk counted.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counts {
    /// DIEs visited.
    pub dies: u64,
    /// Types the CUs lowered to, before collapsing.
    pub types: usize,
    /// CPU time the workers spent walking DIEs, summed over CUs.
    pub walk_cpu: Duration,
    /// CPU time the workers spent lowering to BTF and preparing the CUs
    /// for the table, summed over CUs.
    pub lower_cpu: Duration,
    /// CPU time spent adding the CUs to the table, one worker at a time:
    /// the sequential part of the phase.
    pub adding_cpu: Duration,
}

/// What one unit cost its worker.
#[derive(Debug, Default, Clone, Copy)]
struct UnitCosts {
    dies: u64,
    walk_cpu: Duration,
    lower_cpu: Duration,
}

/// A CU walked and lowered, or why it could not be.
type Lowered<'input> = Result<(UnitCosts, ReadyCu<'input>)>;

/// CUs waiting for their turn to be added, and whose turn it is.
struct Queue<'input> {
    waiting: BTreeMap<usize, Lowered<'input>>,
    next: usize,
}

/// The table, what adding to it counted, and the first failure in unit
/// order (after which nothing more is added).
struct Table<'input> {
    assembler: Assembler<'input>,
    counts: Counts,
    failed: Option<anyhow::Error>,
}

/// Walks, lowers and adds every unit of `units` (see the module docs).
/// `inline_names` has one arena per unit for the names stored in
/// `.debug_info` itself.
pub(crate) fn walk_and_assemble<'input>(
    elf: &ElfFile,
    dwarf: &Dwarf<'input>,
    units: &[UnitHeader<'input>],
    inline_names: &'input mut [Bump],
    ctx: &lower::Context<'_, 'input>,
    split: Option<SplitBase>,
) -> Result<(Assembler<'input>, Counts)> {
    let work = Mutex::new(units.iter().zip(inline_names.iter_mut()).enumerate());
    let stop = AtomicBool::new(false);
    let queue = Mutex::new(Queue { waiting: BTreeMap::new(), next: 0 });
    let table = Mutex::new(Table { assembler: Assembler::new(split), counts: Counts::default(), failed: None });
    let (work, stop, queue, table) = (&work, &stop, &queue, &table);
    rayon::scope(|workers| {
        for _ in 0..rayon::current_num_threads() {
            workers.spawn(move |_| loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let next = lock(work).next();
                let Some((index, (unit, names))) = next else { break };
                let names: &'input Bump = names;
                let lowered = walk_and_lower(elf, dwarf, unit, names, ctx);
                if index % RELEASE_EVERY == RELEASE_EVERY - 1 {
                    elf.release_resident_pages();
                }
                if lowered.is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
                lock(queue).waiting.insert(index, lowered);
                add_whose_turn_it_is(queue, table, stop, Wait::No);
            });
        }
    });
    add_whose_turn_it_is(queue, table, stop, Wait::Yes);
    let mut table = lock(table);
    let assembler = std::mem::replace(&mut table.assembler, Assembler::new(split));
    match table.failed.take() {
        Some(err) => Err(err),
        None => Ok((assembler, table.counts)),
    }
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
    queue: &Mutex<Queue<'input>>,
    table: &Mutex<Table<'input>>,
    stop: &AtomicBool,
    wait: Wait,
) {
    loop {
        let mut table = match (wait, table.try_lock()) {
            (_, Ok(table)) => table,
            (_, Err(TryLockError::Poisoned(poisoned))) => poisoned.into_inner(),
            (Wait::Yes, Err(TryLockError::WouldBlock)) => lock(table),
            (Wait::No, Err(TryLockError::WouldBlock)) => return,
        };
        let start = thread_cpu_time();
        loop {
            let turn = {
                let mut queue = lock(queue);
                let next = queue.next;
                let turn = queue.waiting.remove(&next);
                if turn.is_some() {
                    queue.next += 1;
                }
                turn
            };
            let Some(lowered) = turn else { break };
            if table.failed.is_some() {
                continue;
            }
            let added = lowered.and_then(|(costs, cu)| {
                table.counts.dies += costs.dies;
                table.counts.walk_cpu += costs.walk_cpu;
                table.counts.lower_cpu += costs.lower_cpu;
                table.counts.types += cu.type_count();
                table.assembler.add(cu).map_err(anyhow::Error::from)
            });
            if let Err(err) = added {
                table.failed = Some(err);
                stop.store(true, Ordering::Relaxed);
            }
        }
        table.counts.adding_cpu += thread_cpu_time().saturating_sub(start);
        drop(table);
        // A CU queued while this worker held the table would otherwise
        // wait for the next worker to finish one.
        let queue = lock(queue);
        if !queue.waiting.contains_key(&queue.next) {
            return;
        }
    }
}

/// Locks `mutex`; a worker that panicked while holding it is reported by
/// rayon, so the data is still usable for unwinding.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One unit, up to the point where it needs the others.
fn walk_and_lower<'input>(
    elf: &ElfFile,
    dwarf: &Dwarf<'input>,
    unit: &UnitHeader<'input>,
    names: &'input Bump,
    ctx: &lower::Context<'_, 'input>,
) -> Result<(UnitCosts, ReadyCu<'input>)> {
    let start = thread_cpu_time();
    let arena = Bump::new();
    let cu = dwarf::walk::walk_unit_copying_inline_names(dwarf, unit, &arena, names)?;
    // Nothing borrows the unit's bytes any more: keeping them resident
    // would only add to the peak.
    elf.release_pages_of(dwarf.unit_bytes(unit));
    let walked = thread_cpu_time();
    let ready = lower::lower_cu(&cu, ctx)
        .and_then(lower::LoweredCu::prepare)
        .with_context(|| format!("{}: CU at .debug_info+{:#x}", dwarf.path().display(), cu.offset))?;
    let costs = UnitCosts {
        dies: cu.die_count,
        walk_cpu: walked.saturating_sub(start),
        lower_cpu: thread_cpu_time().saturating_sub(walked),
    };
    Ok((costs, ready))
}

/// CPU time of the calling thread so far.
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the struct it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec.max(0) as u64, now.tv_nsec.clamp(0, 999_999_999) as u32)
}

/// Whether walking failed only because a DIE refers into another unit.
pub(crate) fn is_cross_unit_reference(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<dwarf::Error>()
            .is_some_and(|e| matches!(e.kind(), dwarf::ErrorKind::CrossUnitReference(_)))
    })
}
