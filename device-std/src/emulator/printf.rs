//! `device_println!` on the host: C `printf` formatting of the argument
//! buffer `vprintf` would read (CUDA C Programming Guide, "Formatted
//! Output"), written to stdout or to the launch's captured output.
//!
//! Conversions: `d i u x X o c s p f F e E g G %`, flags `- + space # 0`,
//! width, precision, and the length modifiers `hh h l ll z j t` (`l`, `ll`,
//! `z`, `j`, `t` read 8 bytes; the others read the promoted 4). Each
//! argument is read at the next offset aligned to its size, as
//! `device_println!` packed it.

use super::context;
use core::ffi::{c_char, CStr};
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// Prints `format` (NUL-terminated) with the packed `args`.
pub(crate) fn vprintf(format: &str, args: &[u8]) {
    let text = format_c(format.trim_end_matches('\0'), args);
    if context::in_kernel() {
        let captured = context::with(|ctx| {
            ctx.block().launch.output.as_ref().map(|out| {
                let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
                out.extend(text.lines().map(str::to_string));
            })
        });
        if captured.is_some() {
            return;
        }
    }
    // `print!` (not a raw stdout handle) so that test harnesses capture it.
    std::print!("{text}");
}

/// A conversion specification: `%[flags][width][.precision][length]conv`.
#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    wide: bool,
}

/// Reads the packed arguments in order.
struct Args<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Args<'_> {
    fn next<const N: usize>(&mut self) -> Option<[u8; N]> {
        let at = self.at.next_multiple_of(N);
        let v = self.bytes.get(at..at + N)?.try_into().ok()?;
        self.at = at + N;
        Some(v)
    }

    fn int(&mut self, wide: bool) -> Option<u64> {
        if wide {
            self.next::<8>().map(u64::from_ne_bytes)
        } else {
            self.next::<4>().map(|b| u32::from_ne_bytes(b) as u64)
        }
    }
}

/// Formats C-style `fmt` with `args` packed as `vprintf` reads them.
pub(crate) fn format_c(fmt: &str, args: &[u8]) -> String {
    let mut args = Args { bytes: args, at: 0 };
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.left = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '#' => spec.alt = true,
                '0' => spec.zero = true,
                _ => break,
            }
            chars.next();
        }
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            spec.width = spec.width * 10 + d as usize;
            chars.next();
        }
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut p = 0;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                p = p * 10 + d as usize;
                chars.next();
            }
            spec.precision = Some(p);
        }
        while let Some(&l) = chars.peek() {
            match l {
                'l' | 'z' | 'j' | 't' | 'q' => spec.wide = true,
                'h' | 'L' => {}
                _ => break,
            }
            chars.next();
        }
        let Some(conv) = chars.next() else {
            out.push('%');
            break;
        };
        let body = match conv {
            '%' => {
                out.push('%');
                continue;
            }
            'd' | 'i' => args.int(spec.wide).map(|v| {
                let v = if spec.wide {
                    v as i64
                } else {
                    v as u32 as i32 as i64
                };
                let sign = if v < 0 {
                    "-"
                } else if spec.plus {
                    "+"
                } else if spec.space {
                    " "
                } else {
                    ""
                };
                number(
                    &spec,
                    sign,
                    "",
                    &digits(&spec, v.unsigned_abs().to_string()),
                )
            }),
            'u' => args
                .int(spec.wide)
                .map(|v| number(&spec, "", "", &digits(&spec, v.to_string()))),
            'x' | 'X' | 'o' => args.int(spec.wide).map(|v| {
                let (text, prefix) = match conv {
                    'x' => (format!("{v:x}"), "0x"),
                    'X' => (format!("{v:X}"), "0X"),
                    _ => (format!("{v:o}"), "0"),
                };
                let prefix = if spec.alt && v != 0 { prefix } else { "" };
                number(&spec, "", prefix, &digits(&spec, text))
            }),
            'c' => args
                .int(false)
                .map(|v| pad(&spec, &((v as u8) as char).to_string())),
            'p' => args.int(true).map(|v| pad(&spec, &format!("{v:#x}"))),
            's' => args.int(true).map(|v| {
                let s = if v == 0 {
                    "(null)".to_string()
                } else {
                    // SAFETY: `device_println!` pushes `%s` arguments from a
                    // `&CStr`, which is NUL-terminated and outlives the call.
                    unsafe { CStr::from_ptr(v as usize as *const c_char) }
                        .to_string_lossy()
                        .into_owned()
                };
                let s: String = match spec.precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                };
                pad(&spec, &s)
            }),
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => args
                .next::<8>()
                .map(|b| float(&spec, conv, f64::from_ne_bytes(b))),
            other => Some(format!("%{other}")),
        };
        out.push_str(&body.unwrap_or_else(|| "(missing argument)".to_string()));
    }
    out
}

/// Applies an integer precision (minimum digits).
fn digits(spec: &Spec, text: String) -> String {
    match spec.precision {
        Some(0) if text == "0" => String::new(),
        Some(p) if text.len() < p => format!("{}{text}", "0".repeat(p - text.len())),
        _ => text,
    }
}

/// Pads `sign prefix body` to the width: zeros after the prefix with `0`
/// (and no precision for integers), else spaces.
fn number(spec: &Spec, sign: &str, prefix: &str, body: &str) -> String {
    let len = sign.len() + prefix.len() + body.len();
    if spec.zero && !spec.left && spec.width > len {
        format!("{sign}{prefix}{}{body}", "0".repeat(spec.width - len))
    } else {
        pad(spec, &format!("{sign}{prefix}{body}"))
    }
}

/// Pads with spaces to the width, left or right.
fn pad(spec: &Spec, s: &str) -> String {
    let n = s.chars().count();
    if n >= spec.width {
        s.to_string()
    } else if spec.left {
        format!("{s}{}", " ".repeat(spec.width - n))
    } else {
        format!("{}{s}", " ".repeat(spec.width - n))
    }
}

/// `%f`, `%e`, `%g` (and their capitals) of `v`.
fn float(spec: &Spec, conv: char, v: f64) -> String {
    let sign = if v.is_sign_negative() && !(v.is_nan()) {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    let upper = conv.is_ascii_uppercase();
    let a = v.abs();
    let body = if !a.is_finite() {
        let s = if a.is_nan() { "nan" } else { "inf" };
        let s = if upper {
            s.to_uppercase()
        } else {
            s.to_string()
        };
        return pad(spec, &format!("{sign}{s}"));
    } else {
        let p = spec.precision.unwrap_or(6);
        match conv.to_ascii_lowercase() {
            'f' => format!("{a:.p$}"),
            'e' => exp_form(a, p, upper),
            'a' => format!("{a:e}"),
            _ => {
                let p = p.max(1);
                let x = if a == 0.0 {
                    0
                } else {
                    // The exponent after rounding to `p` significant digits.
                    let e = format!("{a:.*e}", p - 1);
                    e.split('e')
                        .nth(1)
                        .and_then(|x| x.parse::<i32>().ok())
                        .unwrap_or(0)
                };
                let s = if x < -4 || x >= p as i32 {
                    exp_form(a, p - 1, upper)
                } else {
                    format!("{a:.*}", (p as i32 - 1 - x) as usize)
                };
                if spec.alt {
                    s
                } else {
                    strip_zeros(&s)
                }
            }
        }
    };
    number(spec, sign, "", &body)
}

/// `d.ddde±XX` with `p` digits after the point.
fn exp_form(a: f64, p: usize, upper: bool) -> String {
    let s = format!("{a:.p$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{e}{sign}{:02}", exp.abs())
}

/// Drops trailing zeros of the fraction (and a trailing point), keeping any
/// exponent, as `%g` does.
fn strip_zeros(s: &str) -> String {
    let (num, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let num = if num.contains('.') {
        num.trim_end_matches('0').trim_end_matches('.')
    } else {
        num
    };
    let parts: Vec<&str> = std::vec![num, exp];
    parts.concat()
}

#[cfg(test)]
mod tests {
    use super::format_c;
    use std::vec::Vec;

    fn pack(args: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for a in args {
            while out.len() % a.len() != 0 {
                out.push(0);
            }
            out.extend_from_slice(a);
        }
        out
    }

    #[test]
    fn integers_floats_and_strings() {
        let s = c"hi";
        let args = pack(&[
            &7i32.to_ne_bytes(),
            &(-42i64).to_ne_bytes(),
            &255u32.to_ne_bytes(),
            &1.5f64.to_ne_bytes(),
            &(s.as_ptr() as u64).to_ne_bytes(),
            &0.000123456f64.to_ne_bytes(),
            &12345678.0f64.to_ne_bytes(),
        ]);
        assert_eq!(
            format_c("a %d b %lld c %#x d %05.2f e %-4s| f %g g %e h %%", &args),
            "a 7 b -42 c 0xff d 01.50 e hi  | f 0.000123456 g 1.234568e+07 h %"
        );
    }

    #[test]
    fn g_switches_to_exponent_form_and_missing_arguments_say_so() {
        let args = pack(&[&1e-5f64.to_ne_bytes(), &100.0f64.to_ne_bytes()]);
        assert_eq!(format_c("%g %g %d", &args), "1e-05 100 (missing argument)");
    }
}
