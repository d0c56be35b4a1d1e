//! A kernel's `#[kernel(dims = N)]` and `#[kernel(slice_align = N)]` declarations read
//! back from the loaded module's globals (`__kernel_dims_K`, `__kernel_slice_align_K`),
//! for signatures that did not come from the text the driver loaded (built by hand,
//! a link map beside a cubin): what the kernel's code assumes is checked however the
//! signatures were made. The rules (valid values, the stricter of two) are the ones the
//! PTX-text reader in `signature.rs` applies too.

use cudarc::driver::sys;

use crate::error::Error;
use crate::module::Module;

/// `true` for a `#[kernel(dims = N)]` value: 1 or 2 (three dimensions constrain nothing).
pub(crate) fn valid_launch_dims(n: u32) -> bool {
    (1..=2).contains(&n)
}

/// `__kernel_dims_K`'s value when it is 4 bytes holding 1 or 2; anything else is no
/// declaration (ptx-linker refuses such a variable, so no entry was folded for it).
pub(crate) fn image_dims(bytes: usize, value: u32) -> Option<u32> {
    (bytes == 4 && valid_launch_dims(value)).then_some(value)
}

/// `true` for a `#[kernel(slice_align = N)]` value: a power of two from 2 to 256.
pub(crate) fn valid_slice_align(n: u32) -> bool {
    (2..=256).contains(&n) && n.is_power_of_two()
}

/// `__kernel_slice_align_K`'s value when it is 4 bytes holding a valid `N`; otherwise
/// why not (a kernel whose code may assume an alignment that cannot be read must not be
/// launched unchecked).
pub(crate) fn image_slice_align(kernel: &str, bytes: usize, value: u32) -> Result<u32, String> {
    if bytes == 4 && valid_slice_align(value) {
        return Ok(value);
    }
    let read = if bytes == 4 {
        format!("{value}")
    } else {
        format!("{bytes} bytes")
    };
    Err(malformed_slice_align(kernel, &read))
}

/// The refusal of kernel `kernel` whose `__kernel_slice_align_K` holds `read` (the
/// value, or what was wrong with it), from the PTX text or the loaded image.
pub(crate) fn malformed_slice_align(kernel: &str, read: &str) -> String {
    let symbol = format!("{}{kernel}", device_std::abi::SLICE_ALIGN_PREFIX);
    format!(
        "`{symbol}` (kernel `{kernel}`'s `#[kernel(slice_align = N)]`) is not 4 bytes holding \
         a power of two from 2 to 256 (read: {read}): the kernel may assume an alignment this \
         loader cannot check; rebuild the module with device-std's `#[kernel]`"
    )
}

/// The stricter of two launch-dimension declarations: the fewer dimensions.
pub(crate) fn stricter_dims(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// The stricter of two slice alignments: the larger.
pub(crate) fn stricter_align(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    a.max(b)
}

impl Module {
    /// Every kernel's launch dimensions and slice alignment read from the loaded image
    /// into the signatures, each the stricter of the image's and the signatures' value
    /// (a malformed `__kernel_slice_align_K` refuses its kernel when fetched). Done once,
    /// at load: the reads are synchronous driver calls, which a kernel fetch during a
    /// stream capture must not make.
    ///
    /// Errors: [`Error::Driver`] from `cuModuleGetGlobal` or the copy.
    pub(crate) fn read_declarations(mut self) -> Result<Self, Error> {
        let names: Vec<String> = self
            .signatures()
            .entries()
            .iter()
            .map(|e| e.name.clone())
            .collect();
        for kernel in names {
            let dims_symbol = format!(
                "{}{kernel}",
                ptx_linker::entry_directives::LAUNCH_DIMS_PREFIX
            );
            let dims = self
                .global_u32(&dims_symbol)?
                .and_then(|(bytes, value)| image_dims(bytes, value));
            let align_symbol = format!("{}{kernel}", device_std::abi::SLICE_ALIGN_PREFIX);
            let align = match self.global_u32(&align_symbol)? {
                None => Ok(None),
                Some((bytes, value)) => image_slice_align(&kernel, bytes, value).map(Some),
            };
            self.signatures_mut().add_declarations(&kernel, dims, align);
        }
        Ok(self)
    }

    /// The size in bytes of global `name` and its first 4 bytes (0 when it has fewer),
    /// or `None` when the module has no such variable.
    fn global_u32(&self, name: &str) -> Result<Option<(usize, u32)>, Error> {
        let Some((ptr, bytes)) = self.global_symbol(name)? else {
            return Ok(None);
        };
        if bytes < 4 {
            return Ok(Some((bytes, 0)));
        }
        let mut value = 0u32;
        // SAFETY: `ptr` holds `bytes` >= 4 bytes; a synchronous copy of 4 into `value`;
        // `global_symbol` made the module's context current.
        unsafe { sys::cuMemcpyDtoH_v2((&mut value as *mut u32).cast(), ptr, 4) }
            .result()
            .map_err(|source| Error::Driver {
                context: format!("cuMemcpyDtoH of `{name}`"),
                source,
            })?;
        Ok(Some((bytes, value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_values_are_read_as_the_text_reader_reads_them() {
        assert_eq!(image_dims(4, 1), Some(1));
        assert_eq!(image_dims(4, 2), Some(2));
        assert_eq!(image_dims(4, 3), None);
        assert_eq!(image_dims(8, 1), None);
        assert_eq!(image_slice_align("k", 4, 16), Ok(16));
        assert_eq!(image_slice_align("k", 4, 256), Ok(256));
        for bad in [0, 1, 3, 24, 512] {
            let e = image_slice_align("k", 4, bad).unwrap_err();
            assert!(e.contains(&format!("(read: {bad})")), "{e}");
            assert!(e.contains("`__kernel_slice_align_k`"), "{e}");
        }
        let e = image_slice_align("k", 8, 16).unwrap_err();
        assert!(e.contains("(read: 8 bytes)"), "{e}");
    }

    #[test]
    fn the_stricter_declaration_wins() {
        assert_eq!(stricter_dims(None, None), None);
        assert_eq!(stricter_dims(Some(2), None), Some(2));
        assert_eq!(stricter_dims(None, Some(1)), Some(1));
        assert_eq!(stricter_dims(Some(2), Some(1)), Some(1));
        assert_eq!(stricter_align(None, None), None);
        assert_eq!(stricter_align(Some(16), None), Some(16));
        assert_eq!(stricter_align(None, Some(8)), Some(8));
        assert_eq!(stricter_align(Some(8), Some(64)), Some(64));
    }
}
