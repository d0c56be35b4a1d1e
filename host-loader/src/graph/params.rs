//! Graph node arguments: [`GraphParam`] (what the recorder takes for each kernel
//! parameter, and its lowering through the binding table), [`GraphSignature`] for the
//! tuples, and the check that no writable buffer aliases another argument.

use std::ffi::c_void;

use super::error::GraphError;
use super::tokens::{Binding, BindingTable, Buf, BufMut};
use crate::error::Error;
use crate::param::{
    KernelParam, OptSlice, OptSliceMut, Ptr, PtrMut, RawSlice, Slice, SliceMut, Struct,
};
use crate::signature::KernelSignature;

/// The device memory one graph argument names, for the aliasing check.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Access {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) writable: bool,
}

/// A [`KernelParam`] that can be a graph node's argument: what the recorder takes for
/// it ([`GraphArg`](Self::GraphArg)).
///
/// | parameter | graph argument |
/// |---|---|
/// | scalars (`u8` … `u64`, `i8` … `i64`, `usize`, `isize`, `bool`, `f32`, `f64`) | the value |
/// | [`Struct<T>`] | `T` by value |
/// | [`Slice<T>`], [`Ptr<T>`] | [`Buf<T>`] |
/// | [`SliceMut<T>`], [`PtrMut<T>`] | [`BufMut<T>`] |
///
/// [`HostPtr`](crate::memory::HostPtr) (pageable host memory) is not a graph parameter.
///
/// # Safety
///
/// [`lower_graph`](Self::lower_graph) returns the bytes [`KernelParam::lower`] would for
/// the registered buffer or value, and names in its [`Access`] every byte of device
/// memory the parameter gives the kernel.
pub unsafe trait GraphParam: KernelParam {
    /// What the recorder takes for this parameter.
    type GraphArg: Copy;

    /// The parameter's bytes, and the device memory it names.
    #[doc(hidden)]
    fn lower_graph(
        arg: Self::GraphArg,
        table: &BindingTable,
    ) -> Result<(Self::Raw, Option<Access>), Error>;
}

macro_rules! scalar_graph_params {
    ($($t:ty),*) => {$(
        // SAFETY: a scalar's bytes are its value, as in `KernelParam::lower`; no memory.
        unsafe impl GraphParam for $t {
            type GraphArg = $t;
            #[inline]
            fn lower_graph(arg: $t, _: &BindingTable) -> Result<($t, Option<Access>), Error> {
                Ok((arg, None))
            }
        }
    )*};
}

scalar_graph_params!(u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, bool, f32, f64);

// SAFETY: a struct's bytes are its value, as in `KernelParam::lower`; it names no memory.
unsafe impl<T: device_std::KernelStruct> GraphParam for Struct<T> {
    type GraphArg = T;
    #[inline]
    fn lower_graph(arg: T, _: &BindingTable) -> Result<(T, Option<Access>), Error> {
        Ok((arg, None))
    }
}

fn access(b: &Binding, writable: bool) -> Option<Access> {
    Some(Access {
        start: b.ptr,
        end: b.ptr + b.bytes,
        writable,
    })
}

// SAFETY: `(ptr, len)` of the registered slice, as `Slice<T>::lower` builds it; the whole
// buffer is named.
unsafe impl<T: device_std::HasValueClass> GraphParam for Slice<T> {
    type GraphArg = Buf<T>;
    #[inline]
    fn lower_graph(arg: Buf<T>, table: &BindingTable) -> Result<(RawSlice, Option<Access>), Error> {
        let b = table.get(arg.graph, arg.index)?;
        Ok((RawSlice::present::<T>(b.ptr, b.len), access(&b, false)))
    }
}

// SAFETY: as for `Slice<T>`; a `BufMut` is only made for a writable registration.
unsafe impl<T: device_std::HasValueClass> GraphParam for SliceMut<T> {
    type GraphArg = BufMut<T>;
    #[inline]
    fn lower_graph(
        arg: BufMut<T>,
        table: &BindingTable,
    ) -> Result<(RawSlice, Option<Access>), Error> {
        let b = table.get(arg.graph, arg.index)?;
        debug_assert!(b.writable);
        Ok((RawSlice::present::<T>(b.ptr, b.len), access(&b, true)))
    }
}

// SAFETY: a present buffer as for `Slice<T>`, an absent one as `OptSlice<T>::lower`.
unsafe impl<T: device_std::HasValueClass> GraphParam for OptSlice<T> {
    type GraphArg = Option<Buf<T>>;
    #[inline]
    fn lower_graph(
        arg: Option<Buf<T>>,
        table: &BindingTable,
    ) -> Result<(RawSlice, Option<Access>), Error> {
        match arg {
            Some(arg) => <Slice<T> as GraphParam>::lower_graph(arg, table),
            None => Ok((RawSlice::ABSENT, None)),
        }
    }
}

// SAFETY: as for `OptSlice<T>`, writable.
unsafe impl<T: device_std::HasValueClass> GraphParam for OptSliceMut<T> {
    type GraphArg = Option<BufMut<T>>;
    #[inline]
    fn lower_graph(
        arg: Option<BufMut<T>>,
        table: &BindingTable,
    ) -> Result<(RawSlice, Option<Access>), Error> {
        match arg {
            Some(arg) => <SliceMut<T> as GraphParam>::lower_graph(arg, table),
            None => Ok((RawSlice::ABSENT, None)),
        }
    }
}

// SAFETY: the registered buffer's first address, as `Ptr<T>::lower`.
unsafe impl<T: device_std::HasValueClass> GraphParam for Ptr<T> {
    type GraphArg = Buf<T>;
    #[inline]
    fn lower_graph(arg: Buf<T>, table: &BindingTable) -> Result<(u64, Option<Access>), Error> {
        let b = table.get(arg.graph, arg.index)?;
        Ok((b.ptr, access(&b, false)))
    }
}

// SAFETY: as for `Ptr<T>`, writable.
unsafe impl<T: device_std::HasValueClass> GraphParam for PtrMut<T> {
    type GraphArg = BufMut<T>;
    #[inline]
    fn lower_graph(arg: BufMut<T>, table: &BindingTable) -> Result<(u64, Option<Access>), Error> {
        let b = table.get(arg.graph, arg.index)?;
        debug_assert!(b.writable);
        Ok((b.ptr, access(&b, true)))
    }
}

#[inline]
pub(super) fn check_aliasing(kernel: &str, uses: &[Option<Access>]) -> Result<(), Error> {
    for (i, a) in uses.iter().enumerate() {
        let Some(a) = a else { continue };
        for (j, b) in uses.iter().enumerate().skip(i + 1) {
            let Some(b) = b else { continue };
            let empty = a.start >= a.end || b.start >= b.end;
            if (a.writable || b.writable) && !empty && a.start < b.end && b.start < a.end {
                return Err(Error::Graph(GraphError::Aliased {
                    kernel: kernel.to_string(),
                    first: i,
                    second: j,
                }));
            }
        }
    }
    Ok(())
}

mod sealed {
    pub trait Sealed {}
}

/// A kernel signature whose every parameter is a [`GraphParam`]: what
/// [`Recorder::launch`](super::Recorder::launch) and
/// [`GraphExec::set_kernel_args`](super::GraphExec::set_kernel_args) take arguments for.
///
/// [`GraphArgs`](Self::GraphArgs) is the tuple of [`GraphParam::GraphArg`]s: for
/// `(Slice<f32>, Slice<f32>, SliceMut<f32>, u32)` it is
/// `(Buf<f32>, Buf<f32>, BufMut<f32>, u32)`. Sealed: implemented for tuples only.
///
/// # Safety
///
/// [`with_params`](Self::with_params) hands `f` one pointer per parameter, in order, each
/// to bytes of the parameter's [`KernelParam::Raw`] type.
pub unsafe trait GraphSignature: KernelSignature + sealed::Sealed {
    /// The graph argument tuple.
    type GraphArgs: Copy;

    /// Lowers `args` (checking their tokens, that no writable buffer aliases another
    /// argument and, when `slice_align` is above 1, that every slice starts at a
    /// multiple of it: `#[kernel(slice_align = N)]`) and calls `f` with the parameter
    /// pointer array.
    #[doc(hidden)]
    fn with_params<R>(
        args: Self::GraphArgs,
        table: &BindingTable,
        kernel: &str,
        slice_align: u32,
        f: impl FnOnce(&mut [*mut c_void]) -> R,
    ) -> Result<R, Error>;
}

impl<S: GraphSignature> crate::Kernel<S> {
    /// [`GraphSignature::with_params`] with this kernel's name and declared slice
    /// alignment: the lowering a captured node, a node update and a sequence launch share.
    pub(crate) fn with_graph_params<R>(
        &self,
        args: S::GraphArgs,
        table: &BindingTable,
        f: impl FnOnce(&mut [*mut c_void]) -> R,
    ) -> Result<R, Error> {
        S::with_params(args, table, self.name(), self.slice_align().unwrap_or(0), f)
    }
}

macro_rules! graph_signature {
    ($n:literal; $($T:ident $arg:ident $raw:ident $acc:ident),*) => {
        impl<$($T: GraphParam),*> sealed::Sealed for ($($T,)*) {}

        // SAFETY: one slot per tuple element, in order, each lowered by its own
        // `GraphParam::lower_graph`; the slots live until `f` returns.
        unsafe impl<$($T: GraphParam),*> GraphSignature for ($($T,)*) {
            type GraphArgs = ($($T::GraphArg,)*);

            #[inline]
            #[allow(unused_variables, clippy::unused_unit)]
            fn with_params<R>(
                args: Self::GraphArgs,
                table: &BindingTable,
                kernel: &str,
                slice_align: u32,
                f: impl FnOnce(&mut [*mut c_void]) -> R,
            ) -> Result<R, Error> {
                let ($($arg,)*) = args;
                $(let ($raw, $acc) = $T::lower_graph($arg, table)?;)*
                check_aliasing(kernel, &[$($acc),*])?;
                if slice_align > 1 {
                    let starts = [$(<$T as KernelParam>::slice_start(&$raw)),*];
                    crate::launch::check_slice_align(kernel, slice_align, &starts)?;
                }
                let mut params: [*mut c_void; $n] =
                    [$(&$raw as *const $T::Raw as *mut c_void),*];
                Ok(f(&mut params))
            }
        }
    };
}

graph_signature!(0;);
graph_signature!(1; A a ra xa);
graph_signature!(2; A a ra xa, B b rb xb);
graph_signature!(3; A a ra xa, B b rb xb, C c rc xc);
graph_signature!(4; A a ra xa, B b rb xb, C c rc xc, D d rd xd);
graph_signature!(5; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe);
graph_signature!(6; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf);
graph_signature!(7; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg);
graph_signature!(8; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg, H h rh xh);
graph_signature!(9; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg, H h rh xh, I i ri xi);
graph_signature!(10; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg, H h rh xh, I i ri xi, J j rj xj);
graph_signature!(11; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg, H h rh xh, I i ri xi, J j rj xj, K k rk xk);
graph_signature!(12; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg, H h rh xh, I i ri xi, J j rj xj, K k rk xk, L l rl xl);
