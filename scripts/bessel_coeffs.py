#!/usr/bin/env python3
"""Coefficients of device-std's Bessel functions J0, J1, Y0, Y1 (math/bessel.rs).

    python3 scripts/bessel_coeffs.py > device-std/src/math/bessel_coeffs.rs

Below the asymptotic region, [0, A) is cut into pieces, each holding at most one zero z
of the function; on a piece F(x) = ((x - z_hi) - z_lo) * P(x - c), with z = z_hi + z_lo
split into the nearest float and the rest and c the piece's centre. x - z_hi is exact
near the zero, so the relative error stays small there, where CUDA's ulp bounds
(|x| < 8) need it. J1's zero at 0 is a zero like the others; a piece with no zero
takes z = 0 too (F / x is smooth there).
Y0 and Y1 near 0 use their logarithmic forms:
    Y0(x) = (2/pi) ln(x) J0(x) + R0(x^2)
    Y1(x) = (2/pi) ln(x) J1(x) - 2/(pi x) + x R1(x^2)
and for x >= A Hankel's form, with w = 1/x^2:
    J_n(x) = sqrt(2/(pi x)) (P_n(w) cos chi - Q_n(x) sin chi),
    Y_n(x) = sqrt(2/(pi x)) (P_n(w) sin chi + Q_n(x) cos chi),
    chi = x - (2n + 1) pi / 4, Q_n(x) = q_n(w) / x.
Each fit interpolates at the Chebyshev points of its interval (mpmath, 50 digits), one
degree for all pieces of a function (the largest any piece needs for a relative error
below 2^-23.5 for f32 and 2^-52.5 for f64 (the rounding of c_0 alone costs up to
half an ulp), measured with the coefficients rounded to the
float type and evaluated exactly).
"""
import struct
import mpmath as mp

mp.mp.dps = 50

TARGET = {"f32": mp.mpf(2) ** mp.mpf("-23.5"), "f64": mp.mpf(2) ** mp.mpf("-52.5")}


def rnd(v, ty):
    if ty == "f64":
        return mp.mpf(float(v))
    return mp.mpf(struct.unpack("f", struct.pack("f", float(v)))[0])


def cheb_fit(g, a, b, deg, fixed=()):
    """c[0..deg] interpolating g at Chebyshev points of [a, b], with c[:len(fixed)] =
    fixed (the other coefficients at as many points, none at 0; the last one alone at b)."""
    a, b = mp.mpf(a), mp.mpf(b)
    m = len(fixed)
    n = deg + 1 - m
    def nodes(n):
        return [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    xs = nodes(n)
    if m > 0 and min(abs(x) for x in xs) < (b - a) * mp.mpf(10) ** -6:
        # A node at (or next to) 0 fixes nothing above c[m - 1]: take one more and drop it.
        xs = sorted(nodes(n + 1), key=abs)[1:]
    if n == 1:
        xs = [b]
    y = [g(x) - sum(c * x**i for i, c in enumerate(fixed)) for x in xs]
    with mp.workdps(120):  # monomials on small intervals are ill-conditioned
        A = mp.matrix([[x**i for i in range(m, deg + 1)] for x in xs])
        sol = mp.lu_solve(A, mp.matrix(y))
    return list(fixed) + [+v for v in sol]


def rel_err(g, c, a, b, scale=None, pts=400):
    """max |g - p| / |scale| (default |g|) over [a, b]."""
    a, b = mp.mpf(a), mp.mpf(b)
    e = 0
    for k in range(pts + 1):
        v = a + (b - a) * (k + mp.mpf("0.37")) / (pts + 1)
        gv = g(v)
        s = gv if scale is None else scale(v)
        e = max(e, abs((gv - sum(c[i] * v**i for i in range(len(c)))) / s))
    return e


def fit(g, a, b, deg, ty, scale=None):
    """Rounded one at a time from the lowest degree up, the rest refitted each time to
    absorb the rounding (or all at once, where that is better)."""
    once = [rnd(v, ty) for v in cheb_fit(g, a, b, deg)]
    fixed = []
    for _ in range(deg + 1):
        fixed.append(rnd(cheb_fit(g, a, b, deg, fixed)[len(fixed)], ty))
    return min(((c, rel_err(g, c, a, b, scale)) for c in (fixed, once)), key=lambda ce: ce[1])


def least_degree(g, a, b, ty, start=3, scale=None):
    for deg in range(start, 30):
        c, e = fit(g, a, b, deg, ty, scale)
        if e < TARGET[ty]:
            return deg
    raise SystemExit(f"no degree below 30 fits on [{mp.nstr(a, 5)}, {mp.nstr(b, 5)}]")


def J(n):
    return lambda x: mp.besselj(n, x)


def Y(n):
    return lambda x: mp.bessely(n, x)


TINY = mp.mpf(10) ** -30

# name: (function, [(lo, hi, the zero inside or 0)], A)
FUNCS = {
    "J0": (J(0), [(0, 4, mp.besseljzero(0, 1)), (4, 7, mp.besseljzero(0, 2))], 7),
    "J1": (J(1), [(0, "2.2", 0), ("2.2", "5.4", mp.besseljzero(1, 1)),
                  ("5.4", 8, mp.besseljzero(1, 2))], 8),
    "Y0": (Y(0), [("0.6", "1.25", mp.besselyzero(0, 1)), ("1.25", "2.6", 0),
                  ("2.6", "5.5", mp.besselyzero(0, 2)), ("5.5", 8, mp.besselyzero(0, 3))], 8),
    "Y1": (Y(1), [("1.4", "3.4", mp.besselyzero(1, 1)), ("3.4", 7, mp.besselyzero(1, 2))], 7),
}
LOG_FORM = {"Y0": "0.6", "Y1": "1.4"}


def piece_fn(f, c, zh, zl):
    def g(v):
        x = c + v
        if x == zh + zl:
            x += TINY
        return f(x) / ((x - zh) - zl)
    return g


def hankel(n):
    def p(w):
        x = 1 / mp.sqrt(w)
        chi = x - (2 * n + 1) * mp.pi / 4
        return mp.sqrt(mp.pi * x / 2) * (mp.besselj(n, x) * mp.cos(chi) + mp.bessely(n, x) * mp.sin(chi))

    def q(w):
        x = 1 / mp.sqrt(w)
        chi = x - (2 * n + 1) * mp.pi / 4
        return x * mp.sqrt(mp.pi * x / 2) * (mp.bessely(n, x) * mp.cos(chi) - mp.besselj(n, x) * mp.sin(chi))
    return p, q


def r0(t):
    x = mp.sqrt(t)
    return mp.bessely(0, x) - 2 / mp.pi * mp.log(x) * mp.besselj(0, x)


def r1(t):
    x = mp.sqrt(t)
    return (mp.bessely(1, x) + 2 / (mp.pi * x) - 2 / mp.pi * mp.log(x) * mp.besselj(1, x)) / x


def lit(v, ty):
    s = repr(float(v))
    if ty == "f32":
        s = repr(struct.unpack("f", struct.pack("f", float(v)))[0])
    if "e" not in s and "." not in s and "inf" not in s:
        s += ".0"
    return s


def emit_table(name, ty, rows, comment):
    width = len(rows[0])
    print(f"// {comment}")
    print(f"pub(super) const {name}: [[{ty}; {width}]; {len(rows)}] = [")
    for r in rows:
        print("    [" + ", ".join(lit(v, ty) for v in r) + "],")
    print("];")


def emit_poly(name, ty, g, a, b, scale=None, what="relative error"):
    deg = least_degree(g, a, b, ty, 2, scale)
    c, e = fit(g, a, b, deg, ty, scale)
    print(f"// {name}: degree {deg} on [{mp.nstr(mp.mpf(a), 6)}, {mp.nstr(mp.mpf(b), 6)}], {what} 2^{mp.nstr(mp.log(e, 2), 4)}")
    print(f"pub(super) const {name}: [{ty}; {deg + 1}] = [" + ", ".join(lit(v, ty) for v in c) + "];")


def main():
    print("//! Generated by `scripts/bessel_coeffs.py` (see its docstring for the forms); do not")
    print("//! edit. Each piece's row is `[z_hi, z_lo, centre, c_0, …, c_n]`; `BREAKS` holds the upper")
    print("//! end of every piece but the last.")
    print("#![allow(clippy::excessive_precision, clippy::approx_constant)]")
    for ty in ("f32", "f64"):
        T = ty.upper()
        print()
        for name, (f, pieces, A) in FUNCS.items():
            splits = []
            for lo, hi, z in pieces:
                z = mp.mpf(z)
                zh = rnd(z, ty)
                lo, hi = mp.mpf(lo), mp.mpf(hi)
                c = rnd((lo + hi) / 2, ty)
                g = piece_fn(f, c, zh, z - zh)
                splits.append((lo, hi, zh, rnd(z - zh, ty), c, g))
            deg = max(least_degree(g, lo - c, hi - c, ty, 6) for lo, hi, zh, zl, c, g in splits)
            rows, errs = [], []
            for lo, hi, zh, zl, c, g in splits:
                cs, e = fit(g, lo - c, hi - c, deg, ty)
                rows.append([zh, zl, c] + cs)
                errs.append(mp.nstr(mp.log(e, 2), 4))
            lows = [mp.nstr(s[0], 4) for s in splits]
            emit_table(f"{name}_{T}", ty, rows,
                       f"{name}: degree {deg}, pieces from {lows} to {A}, relative errors 2^{errs}")
            print(f"pub(super) const {name}_{T}_BREAKS: [{ty}; {len(splits) - 1}] = [" +
                  ", ".join(lit(s[1], ty) for s in splits[:-1]) + "];")
            print(f"pub(super) const {name}_{T}_ASYMPTOTIC: {ty} = {lit(A, ty)};")
            if name in LOG_FORM:
                b = mp.mpf(LOG_FORM[name]) ** 2
                # R's error counts against |Y0(x)| (resp. |Y1(x)| / x): R0 crosses zero.
                n = int(name[1])
                emit_poly(f"R{n}_{T}", ty, r0 if n == 0 else r1, TINY, b,
                          lambda t: mp.bessely(n, mp.sqrt(t)) / mp.sqrt(t) ** n, "error against Y")
        for n in (0, 1):
            p, q = hankel(n)
            emit_poly(f"P{n}_{T}", ty, p, TINY, mp.mpf(1) / 49)
            emit_poly(f"Q{n}_{T}", ty, q, TINY, mp.mpf(1) / 49)


if __name__ == "__main__":
    main()
