//! The one writer of an engine's store, as a type (as tantivy's `IndexWriter` is of its
//! `Index`): [`EngineWriter`] holds the store's write connection, and every method that
//! changes the store is one of its methods. [`Engine`] keeps the reads (and the indexes'
//! upkeep, which writes derived files and the embedding cache on a connection of its
//! own), so code handed `&Engine` cannot write the store: it does not compile.
//!
//! [`Engine::writer`] hands the connection out once at a time; the writer gives it back
//! when dropped. The daemon's writer thread takes it for its lifetime, so a second taker
//! (a read that tried to write) gets [`Error::WriterTaken`] instead of a second writer.

use std::ops::Deref;

use amber_store::MemoryStore;

use super::{Engine, lock};
use crate::{Error, Result};

/// The store's one writer. Derefs to the [`Engine`] it writes, for the reads a write
/// needs; dropped, it gives its connection back ([`Engine::writer`]).
///
/// A write goes through it:
/// ```no_run
/// # use amber_engine::{Engine, EngineOptions};
/// fn file(e: &Engine) -> amber_engine::Result<()> {
///     e.writer()?.remember(amber_core::NewMemory::new("the CI cache lives in target/"))?;
///     Ok(())
/// }
/// ```
/// and not through a read's engine, which does not compile:
/// ```compile_fail
/// # use amber_engine::{Engine, EngineOptions};
/// fn file(e: &Engine) -> amber_engine::Result<()> {
///     e.remember(amber_core::NewMemory::new("the CI cache lives in target/"))?;
///     Ok(())
/// }
/// ```
pub struct EngineWriter<'a> {
    engine: &'a Engine,
    /// The write connection (None only while it is being given back).
    store: Option<Box<dyn MemoryStore>>,
}

impl Engine {
    /// The store's writer: the one write connection, until the writer is dropped.
    /// [`Error::WriterTaken`] while another holds it (the daemon's writer thread holds it
    /// for as long as the daemon runs: writes go through its queue).
    pub fn writer(&self) -> Result<EngineWriter<'_>> {
        let store = lock(&self.writer).take().ok_or(Error::WriterTaken)?;
        Ok(EngineWriter { engine: self, store: Some(store) })
    }
}

impl<'a> EngineWriter<'a> {
    /// The engine it writes, for as long as the writer lives (not tied to a borrow of
    /// the writer: a write holds an engine lock while it uses the connection).
    pub(super) fn engine(&self) -> &'a Engine {
        self.engine
    }

    /// The write connection.
    pub(super) fn store(&mut self) -> &mut dyn MemoryStore {
        match self.store.as_deref_mut() {
            Some(s) => s,
            None => unreachable!("the writer's connection is given back only when it is dropped"),
        }
    }

    /// The engine it writes and the write connection, borrowed apart (a write reads
    /// the engine's state while it holds the connection).
    pub(super) fn parts(&mut self) -> (&'a Engine, &mut dyn MemoryStore) {
        let engine = self.engine;
        (engine, self.store())
    }
}

impl Deref for EngineWriter<'_> {
    type Target = Engine;

    fn deref(&self) -> &Engine {
        self.engine
    }
}

impl Drop for EngineWriter<'_> {
    fn drop(&mut self) {
        *lock(&self.engine.writer) = self.store.take();
    }
}

// The daemon's writer thread owns one; tests share one between threads behind a mutex.
const _: () = {
    const fn sendable<T: Send>() {}
    sendable::<EngineWriter<'static>>();
};
