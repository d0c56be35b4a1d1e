//! `device_println!`: `printf` on the device through `vprintf` (CUDA's
//! device-side `printf`; the driver collects the output and prints it after
//! the launch, or when the host synchronises).
//!
//! The format string is C `printf` syntax, not Rust's: `%d`/`%u` for 32-bit
//! integers, `%lld`/`%llu` for 64-bit ones, `%f`/`%e`/`%g` for floats (an
//! `f32` is passed as a `double`, as C's default promotions do), `%s` for a
//! `&CStr` (`c"..."` literals), `%p` for pointers. Arguments are packed the
//! way `vprintf` reads them: each promoted value aligned to its own size.
//! Under the emulator the same buffer is formatted on the host and printed
//! to stdout.

/// A value `device_println!` can pass to `vprintf`, after C's default
/// argument promotions. Sealed.
pub trait PrintArg: sealed::Sealed {
    #[doc(hidden)]
    fn push_to(self, buf: &mut ArgBuffer);
}

mod sealed {
    pub trait Sealed {}
}

/// The argument buffer `vprintf` reads: up to 16 values of at most 8 bytes,
/// each aligned to its size.
#[doc(hidden)]
#[derive(Debug)]
#[repr(C, align(8))]
pub struct ArgBuffer {
    bytes: [u8; 128],
    len: usize,
}

impl ArgBuffer {
    /// An empty buffer.
    #[inline(always)]
    pub fn new() -> Self {
        ArgBuffer {
            bytes: [0; 128],
            len: 0,
        }
    }

    #[inline(always)]
    fn push_bytes<const N: usize>(&mut self, value: [u8; N]) {
        let at = self.len.next_multiple_of(N);
        assert!(
            at + N <= self.bytes.len(),
            "device_println!: too many arguments (at most 16)"
        );
        self.bytes[at..at + N].copy_from_slice(&value);
        self.len = at + N;
    }

    /// Pointer to the packed arguments.
    #[inline(always)]
    pub fn as_ptr(&self) -> *const u8 {
        self.bytes.as_ptr()
    }
}

impl Default for ArgBuffer {
    fn default() -> Self {
        Self::new()
    }
}

macro_rules! print_arg {
    ($($t:ty => $promoted:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl PrintArg for $t {
            #[inline(always)]
            fn push_to(self, buf: &mut ArgBuffer) {
                buf.push_bytes((self as $promoted).to_ne_bytes());
            }
        }
    )*};
}
print_arg!(
    i8 => i32, i16 => i32, i32 => i32, u8 => u32, u16 => u32, u32 => u32,
    i64 => i64, u64 => u64, isize => i64, usize => u64, f32 => f64, f64 => f64
);

impl sealed::Sealed for bool {}
impl PrintArg for bool {
    #[inline(always)]
    fn push_to(self, buf: &mut ArgBuffer) {
        buf.push_bytes((self as u32).to_ne_bytes());
    }
}

impl sealed::Sealed for &core::ffi::CStr {}
impl PrintArg for &core::ffi::CStr {
    #[inline(always)]
    fn push_to(self, buf: &mut ArgBuffer) {
        buf.push_bytes((self.as_ptr() as u64).to_ne_bytes());
    }
}

impl<T> sealed::Sealed for *const T {}
impl<T> PrintArg for *const T {
    #[inline(always)]
    fn push_to(self, buf: &mut ArgBuffer) {
        buf.push_bytes((self as u64).to_ne_bytes());
    }
}

impl<T> sealed::Sealed for *mut T {}
impl<T> PrintArg for *mut T {
    #[inline(always)]
    fn push_to(self, buf: &mut ArgBuffer) {
        buf.push_bytes((self as u64).to_ne_bytes());
    }
}

/// Calls `vprintf(format, args)`; `format` ends in a NUL byte.
#[doc(hidden)]
#[inline(always)]
pub fn vprintf(format: &'static str, args: &ArgBuffer) {
    debug_assert!(format.ends_with('\0'));
    crate::host::on_device!("device_println", {
        // SAFETY: `format` is NUL-terminated (the macro appends it) and
        // `args` holds the promoted arguments, packed as vprintf reads them.
        unsafe {
            core::arch::nvptx::vprintf(format.as_ptr(), args.as_ptr().cast());
        }
    }, emulated: {
        crate::emulator::printf::vprintf(format, &args.bytes[..args.len])
    })
}

/// Prints a line from the device through `vprintf`, with C `printf`
/// formatting (see [`print`](crate::print)):
///
/// ```ignore
/// device_println!("block %u: sum %f", thread::blockIdx_x(), sum);
/// ```
///
/// Every thread that runs it prints. At most 16 arguments.
#[macro_export]
macro_rules! device_println {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {{
        #[allow(unused_mut)]
        let mut args = $crate::print::ArgBuffer::new();
        $( $crate::print::PrintArg::push_to($arg, &mut args); )*
        $crate::print::vprintf(concat!($fmt, "\n\0"), &args);
    }};
}

/// Copies `text` into `buf` with a NUL, cut to fit: a `%s` argument for `vprintf`.
#[cfg(target_arch = "nvptx64")]
pub(crate) fn c_string<'a>(text: &str, buf: &'a mut [u8; 160]) -> &'a core::ffi::CStr {
    let n = text.len().min(buf.len() - 1);
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    buf[n] = 0;
    // An interior NUL cuts the string early; there is always one at `n`.
    core::ffi::CStr::from_bytes_until_nul(&buf[..=n]).unwrap_or(c"?")
}
