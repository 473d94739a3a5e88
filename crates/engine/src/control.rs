//! Progress and cancellation shared between the caller's thread and an engine thread.
//!
//! Plain atomics: the caller polls `progress()` and sets `cancel()`; the engine bumps the
//! counters and checks the flag at page checkpoints. No callbacks cross threads.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::error::{EngineError, Result};

/// Cancellation flag and page progress of one job.
#[derive(Debug, Default)]
pub struct JobControl {
    cancelled: AtomicBool,
    done: AtomicU64,
    total: AtomicU64,
}

/// A snapshot of [`JobControl`] progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Units finished so far (pages, or pages written for split/merge).
    pub done: u64,
    /// Units expected in total; 0 until the engine knows.
    pub total: u64,
}

impl JobControl {
    /// A fresh, uncancelled control with zero progress.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the running operation to stop at its next checkpoint.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    /// Whether `cancel()` was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Current progress.
    pub fn progress(&self) -> Progress {
        Progress { done: self.done.load(Ordering::Relaxed), total: self.total.load(Ordering::Relaxed) }
    }

    /// Announces the amount of work and resets `done`.
    pub(crate) fn start(&self, total: u64) -> Result<()> {
        self.total.store(total, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.checkpoint()
    }

    /// Fails with `cancelled` if cancellation was requested.
    pub(crate) fn checkpoint(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(EngineError::cancelled())
        } else {
            Ok(())
        }
    }

    /// Records one finished unit, then checks for cancellation.
    pub(crate) fn advance(&self) -> Result<()> {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.checkpoint()
    }

    /// Marks all work as done (after the output is in place).
    pub(crate) fn finish(&self) {
        self.done.store(self.total.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}
