//! The tokens a graph or a sequence hands out: [`Buf`] / [`BufMut`] for registered
//! buffers, [`KernelNode`] for kernel nodes, and the [`BindingTable`] they index.

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::GraphError;
use crate::error::Error;

static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

/// A new id for a capture or a [`sequence`](crate::sequence): the tokens of one are
/// foreign to every other.
pub(crate) fn next_id() -> u64 {
    NEXT_GRAPH.fetch_add(1, Ordering::Relaxed)
}

macro_rules! token {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub struct $name<T> {
            pub(super) graph: u64,
            pub(super) index: u32,
            _t: PhantomData<fn() -> T>,
        }

        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<T> Copy for $name<T> {}

        impl<T> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "{}<{}>(graph #{}, buffer {})",
                    stringify!($name),
                    crate::layout::short_type_name(std::any::type_name::<T>()),
                    self.graph,
                    self.index
                )
            }
        }

        impl<T> $name<T> {
            pub(crate) fn new(graph: u64, index: u32) -> Self {
                $name {
                    graph,
                    index,
                    _t: PhantomData,
                }
            }
        }
    };
}

token!(
    /// A buffer of `T` registered read-only with a graph
    /// ([`Recorder::read`](super::Recorder::read)), or a writable one read
    /// ([`BufMut::read`]): the launch argument of a [`Slice<T>`](crate::Slice) or
    /// [`Ptr<T>`](crate::Ptr) parameter in a graph.
    ///
    /// A small `Copy` token (graph id, buffer index); valid only with the graph that made
    /// it ([`GraphError::ForeignToken`] otherwise).
    Buf
);
token!(
    /// A buffer of `T` registered writable with a graph
    /// ([`Recorder::write`](super::Recorder::write)): the launch argument of a
    /// [`SliceMut<T>`](crate::SliceMut) or [`PtrMut<T>`](crate::PtrMut) parameter (and,
    /// through [`read`](BufMut::read), of a [`Slice<T>`](crate::Slice) one) in a graph.
    ///
    /// A small `Copy` token; valid only with the graph that made it.
    BufMut
);

impl<T> BufMut<T> {
    /// The same buffer as a read-only argument (for a `Slice<T>` or `Ptr<T>` parameter).
    pub fn read(self) -> Buf<T> {
        Buf::new(self.graph, self.index)
    }
}

impl<T> From<BufMut<T>> for Buf<T> {
    fn from(b: BufMut<T>) -> Self {
        b.read()
    }
}

/// A kernel node of a captured graph, made by
/// [`Recorder::launch`](super::Recorder::launch): names the node for
/// [`GraphExec::set_kernel_args`](super::GraphExec::set_kernel_args), which takes
/// arguments of the same signature `S`.
pub struct KernelNode<S> {
    pub(super) graph: u64,
    pub(super) index: usize,
    pub(super) _sig: PhantomData<fn(S)>,
}

impl<S> Clone for KernelNode<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for KernelNode<S> {}

impl<S> fmt::Debug for KernelNode<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "KernelNode(graph #{}, launch {}, {})",
            self.graph,
            self.index,
            std::any::type_name::<S>()
        )
    }
}

impl<S> KernelNode<S> {
    /// The position of this launch among the graph's kernel launches (0-based, in
    /// capture order).
    pub fn index(&self) -> usize {
        self.index
    }
}

/// One registered buffer: what a token stands for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Binding {
    pub(crate) ptr: u64,
    pub(crate) len: u64,
    pub(crate) bytes: u64,
    pub(crate) writable: bool,
}

/// The buffers a graph has registered; the lowering of graph arguments reads it.
///
/// Not constructible outside this crate; it appears in [`GraphParam`]'s hidden method.
#[doc(hidden)]
#[derive(Debug)]
pub struct BindingTable {
    pub(super) graph: u64,
    pub(super) bindings: Vec<Binding>,
}

impl BindingTable {
    /// An empty table for the capture or sequence `id` ([`next_id`]).
    pub(crate) fn new(id: u64) -> Self {
        BindingTable {
            graph: id,
            bindings: Vec::new(),
        }
    }

    /// Adds `binding`; returns its index.
    pub(crate) fn push(&mut self, binding: Binding) -> u32 {
        let index = self.bindings.len() as u32;
        self.bindings.push(binding);
        index
    }

    /// How many buffers are registered.
    pub(crate) fn len(&self) -> usize {
        self.bindings.len()
    }

    #[inline]
    pub(super) fn get(&self, graph: u64, index: u32) -> Result<Binding, Error> {
        if graph != self.graph {
            return Err(Error::Graph(GraphError::ForeignToken {
                what: "buffer",
                token_graph: graph,
                graph: self.graph,
            }));
        }
        // Tokens of this graph are only made with an index of this table.
        Ok(self.bindings[index as usize])
    }
}
