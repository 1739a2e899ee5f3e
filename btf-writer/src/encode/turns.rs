//! The units lowered ahead of their turn, between the workers that lower
//! them in parallel and the table that takes them in `.debug_info` order.
//!
//! A unit is lowered by whichever worker is free, but added only once every
//! earlier unit has been: the ones finished early wait here. Their number is
//! bounded, because each holds all of its CU's lowered types (see
//! [`Turns::wait_for_room`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Units waiting for their turn (by index), and the signal that their
/// number or the turn changed.
pub(super) struct Turns<T> {
    queue: Mutex<Queue<T>>,
    changed: Condvar,
    max_waiting: usize,
}

struct Queue<T> {
    waiting: BTreeMap<usize, T>,
    /// The index whose turn it is.
    next: usize,
    /// The most units that waited at once.
    most_waiting: usize,
}

impl<T> Queue<T> {
    /// Whether the unit whose turn it is waits.
    fn turn_is_ready(&self) -> bool {
        self.waiting.contains_key(&self.next)
    }
}

impl<T> Turns<T> {
    /// No unit waiting; unit 0's turn. Workers hold back once
    /// `max_waiting` units wait (at least one must be let in, so that the
    /// unit whose turn it is can always join them).
    pub(super) fn new(max_waiting: usize) -> Self {
        Turns {
            queue: Mutex::new(Queue {
                waiting: BTreeMap::new(),
                next: 0,
                most_waiting: 0,
            }),
            changed: Condvar::new(),
            max_waiting: max_waiting.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue<T>> {
        lock(&self.queue)
    }

    /// Queues unit `index`.
    pub(super) fn push(&self, index: usize, item: T) {
        {
            let mut queue = self.lock();
            queue.waiting.insert(index, item);
            queue.most_waiting = queue.most_waiting.max(queue.waiting.len());
        }
        self.changed.notify_all();
    }

    /// The unit whose turn it is, if it waits; the turn then passes to the
    /// next one.
    pub(super) fn take_turn(&self) -> Option<T> {
        let item = {
            let mut queue = self.lock();
            let next = queue.next;
            let item = queue.waiting.remove(&next);
            if item.is_some() {
                queue.next += 1;
            }
            item
        };
        if item.is_some() {
            self.changed.notify_all();
        }
        item
    }

    /// Whether the unit whose turn it is waits.
    pub(super) fn turn_is_ready(&self) -> bool {
        self.lock().turn_is_ready()
    }

    /// The most units that waited at once so far.
    pub(super) fn most_waiting(&self) -> usize {
        self.lock().most_waiting
    }

    /// Returns once fewer units than the bound wait, or `stop` is set.
    /// Meanwhile, when the unit whose turn it is waits too, whoever adds
    /// is behind: `add` is called to wait for the table and take turns.
    /// Otherwise another worker is still on that unit, and this one sleeps
    /// until the queue changes.
    ///
    /// This is what keeps a slow unit, or an adding worker that the system
    /// put aside, from letting the other workers lower unit after unit
    /// that can only wait.
    pub(super) fn wait_for_room(&self, stop: &AtomicBool, mut add: impl FnMut()) {
        let mut queue = self.lock();
        while queue.waiting.len() >= self.max_waiting && !stop.load(Ordering::Relaxed) {
            if queue.turn_is_ready() {
                drop(queue);
                add();
                queue = self.lock();
            } else {
                queue = self
                    .changed
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
    }

    /// Wakes the workers waiting for room, so that they see `stop`.
    pub(super) fn wake_all(&self) {
        self.changed.notify_all();
    }
}

/// Locks `mutex`; a worker that panicked while holding it is reported by
/// rayon, so the data is still usable for unwinding.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `wait_for_room` on another thread, whose `add` takes every
    /// turn it can; sends the units it took once it returns.
    fn waiter(turns: &'static Turns<u32>, stop: &'static AtomicBool) -> mpsc::Receiver<Vec<u32>> {
        let (done, returned) = mpsc::channel();
        std::thread::spawn(move || {
            let mut taken = Vec::new();
            turns.wait_for_room(stop, || {
                while let Some(unit) = turns.take_turn() {
                    taken.push(unit);
                }
            });
            let _ = done.send(taken);
        });
        returned
    }

    fn leak<T>(value: T) -> &'static T {
        Box::leak(Box::new(value))
    }

    #[test]
    fn a_worker_waits_for_the_unit_holding_the_others_up_then_adds() {
        let turns = leak(Turns::new(2));
        let stop = leak(AtomicBool::new(false));
        // Units 1 and 2 are done; unit 0, whose turn it is, is not.
        turns.push(1, 1);
        turns.push(2, 2);
        let returned = waiter(turns, stop);
        assert!(
            returned.recv_timeout(Duration::from_millis(100)).is_err(),
            "with two units waiting behind unit 0, the worker must not go on"
        );
        turns.push(0, 0);
        let taken = returned
            .recv_timeout(Duration::from_secs(10))
            .expect("once unit 0 is queued, the worker adds and goes on");
        assert_eq!(taken, [0, 1, 2]);
        assert_eq!(turns.most_waiting(), 3);
    }

    #[test]
    fn a_worker_goes_on_while_fewer_units_wait_than_the_bound() {
        let turns = leak(Turns::new(3));
        let stop = leak(AtomicBool::new(false));
        turns.push(1, 1);
        turns.push(2, 2);
        let taken = waiter(turns, stop)
            .recv_timeout(Duration::from_secs(10))
            .expect("two units waiting are below the bound of three");
        assert!(taken.is_empty());
        assert!(!turns.turn_is_ready());
    }

    #[test]
    fn stopping_releases_a_waiting_worker() {
        let turns = leak(Turns::new(1));
        let stop = leak(AtomicBool::new(false));
        turns.push(5, 5);
        let returned = waiter(turns, stop);
        assert!(returned.recv_timeout(Duration::from_millis(100)).is_err());
        stop.store(true, Ordering::Relaxed);
        turns.wake_all();
        let taken = returned
            .recv_timeout(Duration::from_secs(10))
            .expect("a stopped walk lets its workers go");
        assert!(taken.is_empty());
    }
}
