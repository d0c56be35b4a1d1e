//! Labels used where ptxas 13.5 takes none ([`check_label_uses`]): a code
//! label is only a branch target, a `.branchtargets` label only the last
//! operand of `brx.idx`, a `.callprototype` or `.calltargets` label only
//! the last operand of an indirect `call`.

use super::scopes::{Kind, Use};
use crate::ast::Name;
use crate::diagnostic::Diagnostic;
use crate::lex::{ident_end, is_blank};

/// The first byte at or after `at` that is no blank and not in a comment.
fn significant(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        match bytes.get(at)? {
            &b if is_blank(b) => at += 1,
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                let close = bytes.get(at + 2..)?.windows(2).position(|w| w == b"*/")?;
                at += 2 + close + 2;
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at += bytes[at..].iter().position(|&b| b == b'\n')?;
            }
            _ => return Some(at),
        }
    }
}

/// Checks the uses of labels that [`super::Scopes::use_name`] listed, as ptxas
/// 13.5 does: a code label is only a branch target (never looked up, see
/// the module docs); a `.branchtargets` label only the last operand of
/// `brx.idx`; a `.callprototype` or `.calltargets` label only the last
/// operand of a `call` through a register. Any other use of a label (`mov`,
/// an address `[L1]`, an arithmetic operand, the callee of a `call`, an
/// initializer, a `.calltargets` entry) is refused.
#[cold]
#[inline(never)]
pub(super) fn check_label_uses(
    src: &str,
    uses: &[(Name<'_>, Kind, Use)],
    errors: &mut Vec<Diagnostic>,
) {
    let bytes = src.as_bytes();
    for &(name, kind, at) in uses {
        let (start, end) = (name.span.start as usize, name.span.end as usize);
        let (message, ptxas) = match at {
            Use::Operand(op) => {
                let op_end = ident_end(bytes, op + 1);
                let opcode = src.get(op..op_end).unwrap_or("");
                // The last operand (the `;` follows), and not the first: a
                // top-level `,` before it, outside `( )`.
                let last = significant(bytes, end).is_some_and(|i| bytes[i] == b';');
                let mut parens = 0i32;
                let mut later = false;
                let mut address = false;
                let mut i = op_end;
                while let Some(j) = significant(bytes, i).filter(|&j| j < start) {
                    match bytes[j] {
                        b'(' => parens += 1,
                        b')' => parens -= 1,
                        b',' if parens == 0 => later = true,
                        _ => {}
                    }
                    address = bytes[j] == b'[';
                    i = j + 1;
                }
                let in_place = last && later;
                let fine = match kind {
                    Kind::BranchTargets => opcode == "brx" && in_place,
                    Kind::CallPrototype | Kind::CallTargets => opcode == "call" && in_place,
                    _ => false,
                };
                if fine {
                    continue;
                }
                let ptxas = match opcode {
                    "brx" => "Label with '.branchtargets' directive expected for argument 1 of \
                              instruction 'brx.idx'"
                        .to_string(),
                    "call" if in_place => "Call target not recognized".to_string(),
                    "call" if later => {
                        format!("Call argument '{}' has illegal state space", name.text)
                    }
                    "call" => "Illegal call target, device function expected".to_string(),
                    _ if address => format!("Illegal operand type to instruction '{opcode}'"),
                    _ => format!("Arguments mismatch for instruction '{opcode}'"),
                };
                (
                    format!("label `{}` cannot be an operand of `{opcode}`", name.text),
                    ptxas,
                )
            }
            Use::Init => (
                format!("label `{}` cannot be an initializer", name.text),
                format!("Invalid initial value symbol '{}'", name.text),
            ),
            Use::CallTargets => (
                format!("label `{}` cannot be an entry of `.calltargets`", name.text),
                "Illegal call target, device function expected".to_string(),
            ),
            Use::Guard => (
                format!("label `{}` cannot be a guard", name.text),
                "Predicate expression expected".to_string(),
            ),
        };
        let what = match kind {
            Kind::BranchTargets => format!(
                "a `.branchtargets` label is only the last operand of `brx.idx` \
                 (`brx.idx %r1, {};`)",
                name.text
            ),
            Kind::CallPrototype | Kind::CallTargets => format!(
                "a `.callprototype` or `.calltargets` label is only the last operand of a \
                 `call` through a register (`call (%r1), %rd1, (%r2), {};`)",
                name.text
            ),
            Kind::Label | Kind::Var => format!(
                "a label is only a branch target (`bra {};`) or an entry of a \
                 `.branchtargets` list (whose own label `brx.idx` takes); to take an \
                 address, name a variable or a function instead",
                name.text
            ),
        };
        errors.push(
            Diagnostic::error(name.span, message)
                .with_label("a label of this function, where ptxas expects a value")
                .with_help(format!("{what} (ptxas: \"{ptxas}\")")),
        );
    }
}
