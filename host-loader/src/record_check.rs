//! The second half of the verdict: Rust argument types against a kernel's ABI record.
//!
//! Runs after the PTX check ([`crate::signature`]) has accepted every parameter's size,
//! alignment and class, and only for kernels whose module holds a record (`#[kernel]`
//! emits one; hand-written PTX has none). It sees what the PTX cannot: a slice from a
//! writable slice, the element size behind a pointer or slice, and a struct's fields.

use ptx_linker::EntrySignature;

use crate::abi_record::{AbiField, AbiKind, AbiParam, AbiRecord};
use crate::error::{AbiMismatch, AbiMismatchDetail, AbiRecordProblem, Error};
use crate::param::HostAbi;

/// Checks the Rust parameters `host` (one [`HostAbi`] per parameter, named by `names`)
/// against `record`, the ABI record of `entry`. `module` names the module in messages.
///
/// Errors: [`Error::AbiRecord`] when the record contradicts the PTX `.entry` (parameter
/// count, or a parameter's size or alignment); else [`Error::AbiMismatch`] for the first
/// parameter whose kind, element size or struct fields differ.
pub(crate) fn verify_record(
    entry: &EntrySignature,
    module: &str,
    record: &AbiRecord,
    host: &[HostAbi],
    names: &dyn Fn() -> Vec<String>,
) -> Result<(), Error> {
    let stale = |problem| Error::AbiRecord {
        module: module.to_string(),
        kernel: entry.name.clone(),
        problem,
    };
    if record.params.len() != entry.params.len() {
        return Err(stale(AbiRecordProblem::ParamCount {
            record: record.params.len(),
            ptx: entry.params.len(),
        }));
    }
    for (index, (rec, ptx)) in record.params.iter().zip(&entry.params).enumerate() {
        if rec.size != ptx.size || rec.align != ptx.align {
            return Err(stale(AbiRecordProblem::ParamLayout {
                param: index,
                record_size: rec.size,
                record_align: rec.align,
                ptx_size: ptx.size,
                ptx_align: ptx.align,
            }));
        }
    }
    // The PTX check ran first, so `host` has one entry per parameter; `zip` keeps this
    // total even if a caller broke that.
    for (index, ((rec, ptx), host)) in record
        .params
        .iter()
        .zip(&entry.params)
        .zip(host)
        .enumerate()
    {
        if let Some(detail) = param_detail(rec, host) {
            return Err(Error::AbiMismatch(Box::new(AbiMismatch {
                module: Some(module.to_string()),
                line: entry.line,
                kernel: entry.name.clone(),
                param_index: index,
                param_name: ptx.name.clone(),
                rust_type: names().swap_remove(index),
                detail,
            })));
        }
    }
    Ok(())
}

/// What differs between one record entry and one Rust parameter, if anything.
pub(crate) fn param_detail(rec: &AbiParam, host: &HostAbi) -> Option<AbiMismatchDetail> {
    if rec.kind != host.kind {
        return Some(AbiMismatchDetail::Kind {
            device: rec.kind,
            host: host.kind,
        });
    }
    match rec.kind {
        // The PTX check compared size and integer/float class already.
        AbiKind::Scalar => None,
        AbiKind::Pointer | AbiKind::Slice | AbiKind::DisjointSlice => {
            (rec.elem_size != host.elem_size).then_some(AbiMismatchDetail::ElemSize {
                device: rec.elem_size,
                host: host.elem_size,
            })
        }
        AbiKind::Struct => {
            if rec.fields.len() != host.fields.len() {
                return Some(AbiMismatchDetail::FieldCount {
                    device: rec.fields.len(),
                    host: host.fields.len(),
                });
            }
            rec.fields
                .iter()
                .zip(host.fields)
                .enumerate()
                .find_map(|(index, (dev, h))| {
                    let h_field = AbiField {
                        offset: h.offset,
                        size: h.size,
                    };
                    (*dev != h_field).then_some(AbiMismatchDetail::Field {
                        index,
                        host_name: h.name,
                        device: *dev,
                        host: h_field,
                    })
                })
        }
    }
}
