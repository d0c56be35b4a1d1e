#!/usr/bin/env python3
"""Minimax polynomial coefficients for device-std's math functions (mpmath, 30 digits).

    python3 device-std/src/math/remez.py NAME      # prints the Rust constants of NAME

Each table in single/ names the entry of TABLES below that produced it. A fit
approximates g(t) by sum(c_i * t^i), i = 0..deg, minimising the maximum of
|w(t) * (g(t) - p(t))| over [a, b] with the Remez exchange on a dense grid; the
coefficients are then rounded to f32 one at a time from the lowest degree up, each
later coefficient refitted to absorb the rounding of the earlier ones.
"""
import sys
import mpmath as mp

mp.mp.dps = 30


def memo(f):
    """f with its values kept: the fits evaluate g and w at the same points many times."""
    seen = {}

    def g(t):
        k = mp.nstr(t, 40)
        if k not in seen:
            seen[k] = f(t)
        return seen[k]
    return g


def remez(g, w, a, b, deg, fixed=(), iters=12, grid=800):
    """Coefficients c[0..deg] of the weighted minimax fit, with c[i] = v for (i, v) in fixed."""
    free = [i for i in range(deg + 1) if i not in dict(fixed)]
    fx = dict(fixed)
    n = len(free)
    xs = [a + (b - a) * (1 - mp.cos(mp.pi * k / grid)) / 2 for k in range(grid + 1)]
    ref = [a + (b - a) * (1 - mp.cos(mp.pi * k / (n))) / 2 for k in range(n + 1)]

    def resid(c, t):
        p = sum(c[i] * t**i for i in range(deg + 1))
        return w(t) * (g(t) - p)

    c = None
    for _ in range(iters):
        # Solve w(t_j) (g(t_j) - sum c_i t_j^i) = (-1)^j E for the free c_i and E.
        rows, rhs = [], []
        for j, t in enumerate(ref):
            known = sum(v * t**i for i, v in fx.items())
            rows.append([w(t) * t**i for i in free] + [(-1) ** j])
            rhs.append(w(t) * (g(t) - known))
        sol = mp.lu_solve(mp.matrix(rows), mp.matrix(rhs))
        c = [mp.mpf(0)] * (deg + 1)
        for i, v in fx.items():
            c[i] = mp.mpf(v)
        for k, i in enumerate(free):
            c[i] = sol[k]
        errs = [resid(c, t) for t in xs]
        # New reference: the extremum of each run of equal sign.
        ext, run = [], [0]
        for k in range(1, len(xs)):
            if mp.sign(errs[k]) == mp.sign(errs[run[0]]):
                run.append(k)
            else:
                ext.append(max(run, key=lambda q: abs(errs[q])))
                run = [k]
        ext.append(max(run, key=lambda q: abs(errs[q])))
        while len(ext) > n + 1:
            # Drop the smaller end, keeping the alternation.
            if abs(errs[ext[0]]) < abs(errs[ext[-1]]):
                ext.pop(0)
            else:
                ext.pop()
        if len(ext) < n + 1:
            break
        ref = [xs[k] for k in ext]
    return c, max(abs(e) for e in errs)


def f32(v):
    """v rounded to the nearest f32, as an mpf."""
    import struct
    return mp.mpf(struct.unpack("f", struct.pack("f", float(v)))[0])


def fit_f32(g, w, a, b, deg, fixed=()):
    """Coefficients rounded to f32 one by one (lowest degree first), refitting the rest;
    or all rounded at once after one fit, where that is better (the refits can stall)."""
    xs = [a + (b - a) * k / 4000 for k in range(4001)]

    def error(c):
        return max(abs(w(t) * (g(t) - sum(c[i] * t**i for i in range(deg + 1)))) for t in xs)

    once, _ = remez(g, w, a, b, deg, fixed=fixed)
    once = [f32(v) for v in once]
    fixed = dict(fixed)
    for i in range(deg + 1):
        if i in fixed:
            continue
        c, _ = remez(g, w, a, b, deg, fixed=tuple(fixed.items()))
        fixed[i] = f32(c[i])
    refit = [fixed[i] for i in range(deg + 1)]
    return min(((c, error(c)) for c in (refit, once)), key=lambda ce: ce[1])


def q_exp(t):
    # (e^r - 1 - r) / r^2 in s = r: expm1(r) = r + r^2 * q(r).
    return mp.mpf(1) / 2 if t == 0 else (mp.expm1(t) - t) / t**2


def q_log1p(t):
    # (log1p(f) - f) / f^2: log1p(f) = f + f^2 * q(f).
    return mp.mpf(-1) / 2 if t == 0 else (mp.log1p(t) - t) / t**2


def q_atanh_s(u):
    # log(m) = 2s + s^3 q(s^2), s = (m - 1)/(m + 1): q(u) = (2 atanh(s) - 2s)/s^3, u = s^2.
    if u == 0:
        return mp.mpf(2) / 3
    s = mp.sqrt(u)
    return (2 * mp.atanh(s) - 2 * s) / s**3


def q_sin(u):
    # sin(r) = r + r^3 q(r^2).
    if u == 0:
        return mp.mpf(-1) / 6
    r = mp.sqrt(u)
    return (mp.sin(r) - r) / r**3


def q_cos(u):
    # cos(r) = 1 - r^2/2 + r^4 q(r^2).
    if u == 0:
        return mp.mpf(1) / 24
    r = mp.sqrt(u)
    return (mp.cos(r) - 1 + u / 2) / u**2


def q_tan(u):
    # tan(r) = r + r^3 q(r^2).
    if u == 0:
        return mp.mpf(1) / 3
    r = mp.sqrt(u)
    return (mp.tan(r) - r) / r**3


def q_atan(u):
    # atan(t) = t + t^3 q(t^2).
    if u == 0:
        return mp.mpf(-1) / 3
    t = mp.sqrt(u)
    return (mp.atan(t) - t) / t**3


def q_asin(u):
    # asin(t) = t + t^3 q(t^2).
    if u == 0:
        return mp.mpf(1) / 6
    t = mp.sqrt(u)
    return (mp.asin(t) - t) / t**3


def q_sinpi(u):
    # sin(pi r) = pi r + r^3 q(r^2).
    if u == 0:
        return -mp.pi**3 / 6
    r = mp.sqrt(u)
    return (mp.sin(mp.pi * r) - mp.pi * r) / r**3


def q_cospi(u):
    # cos(pi r) = 1 + r^2 q(r^2).
    if u == 0:
        return -mp.pi**2 / 2
    r = mp.sqrt(u)
    return (mp.cos(mp.pi * r) - 1) / u


def q_tanh(u):
    # tanh(t) = t + t^3 q(t^2).
    if u == 0:
        return mp.mpf(-1) / 3
    t = mp.sqrt(u)
    return (mp.tanh(t) - t) / t**3


def q_sinh(u):
    # sinh(t) = t + t^3 q(t^2).
    if u == 0:
        return mp.mpf(1) / 6
    t = mp.sqrt(u)
    return (mp.sinh(t) - t) / t**3


def q_erf(u):
    # erf(x) = x (2/sqrt(pi) + x^2 q(x^2)).
    if u == 0:
        return -2 / (3 * mp.sqrt(mp.pi))
    x = mp.sqrt(u)
    return (mp.erf(x) / x - 2 / mp.sqrt(mp.pi)) / u


def h_erfc(w):
    # erfc(t) = e^(-t^2) w h(w), w = 1/t.
    t = 1 / w
    return mp.erfc(t) * mp.exp(t * t) / w


def erfcinv_hp(y):
    """erfcinv(y) for 0 < y <= 1 at the working precision (erfinv(1 - y) with the
    digits 1 - y cancels added first)."""
    y = mp.mpf(y)
    with mp.workdps(mp.mp.dps + int(-mp.log10(y)) + 10):
        return +mp.erfinv(1 - y)


def erfinv_central(v):
    # erfinv(x) = x P(v), v = w - 2.5, w = -ln(1 - x^2) in [0, 5].
    w = v + mp.mpf(5) / 2
    if w == 0:
        return mp.sqrt(mp.pi) / 2
    u = mp.exp(-w)  # 1 - x^2
    return erfcinv_hp(u / (1 + mp.sqrt(1 - u))) / mp.sqrt(1 - u)


def erfinv_tail(c):
    # erfinv(x) = T(v), v = s - c, s = sqrt(w), w = -ln(1 - x^2).
    def g(v):
        u = mp.exp(-((v + c) ** 2))
        return erfcinv_hp(u / (1 + mp.sqrt(1 - u)))
    return g


def bessel_i_small(n):
    # I0(x) = 1 + t g(t), I1(x) = (x/2)(1 + t g(t)), t = x^2.
    def g(t):
        if t == 0:
            return mp.mpf(1) / 4 if n == 0 else mp.mpf(1) / 8
        x = mp.sqrt(t)
        if n == 0:
            return (mp.besseli(0, x) - 1) / t
        return (2 * mp.besseli(1, x) / x - 1) / t
    return g


def bessel_i_small_w(n):
    # Relative error of the function: t |g - p| / (1 + t g).
    g = bessel_i_small(n)
    return lambda t: t / (1 + t * g(t))


def bessel_i_large(n):
    # I_n(x) = e^x / sqrt(x) h(w), w = 1/x.
    def h(w):
        if w == 0:
            return 1 / mp.sqrt(2 * mp.pi)
        x = 1 / w
        return mp.besseli(n, x) * mp.sqrt(x) * mp.exp(-x)
    return h


def gamma_q(v):
    # 1/Gamma(1 + v) = 1 + v(v - 1) Q(v).
    if v == 0:
        v = mp.mpf(10) ** -25
    if v == 1:
        v = 1 - mp.mpf(10) ** -25
    return (mp.rgamma(1 + v) - 1) / (v * (v - 1))


def lgamma_s(z):
    # lgamma(x) = (x - 1/2) ln x - x + ln sqrt(2 pi) + S(z)/x, z = 1/x^2.
    if z == 0:
        return mp.mpf(1) / 12
    x = 1 / mp.sqrt(z)
    return x * (mp.loggamma(x) - (x - mp.mpf(1) / 2) * mp.log(x) + x - mp.log(2 * mp.pi) / 2)


LN2_2 = mp.log(2) / 2
# name: (g, weight, a, b, degree, fixed coefficients, what the weight measures)
TABLES = {
    # expm1(r) = r + r^2 q(r) on |r| <= ln2/2 (+ margin for the rounded reduction).
    "EXPM1_Q": (q_exp, lambda t: t**2 / mp.expm1(t) if t != 0 else 0, -LN2_2 * 1.01, LN2_2 * 1.01, 5, ()),
    # log1p(f) = f + f^2 q(f), f = m - 1, m in [2/3, 4/3) (no division: logf's path).
    "LOG1P_Q3": (q_log1p, lambda t: t**2 / mp.log1p(t) if t != 0 else 0, -mp.mpf(1) / 3 - 1e-7, mp.mpf(1) / 3 + 1e-7, 10, ()),
    # log1p(f) = f + f^2 q(f), f = m - 1, m in [sqrt(1/2), sqrt(2)).
    "LOG1P_Q": (q_log1p, lambda t: t**2 / mp.log1p(t) if t != 0 else 0, mp.sqrt(0.5) - 1, mp.sqrt(2) - 1, 8, ()),
    # e^t = 1 + t + t^2 q(t), |t| <= ln2/2: expf's fast path, error relative to e^t.
    "EXP_Q": (q_exp, lambda t: t**2 / mp.exp(t), -LN2_2 * 1.01, LN2_2 * 1.01, 5, ()),
    # 2^t = 1 + t p(t), |t| <= 1/2: exp2f's fast path, relative to 2^t.
    "EXP2_P": (lambda t: (mp.power(2, t) - 1) / t if t != 0 else mp.log(2),
               lambda t: t / mp.power(2, t) if t != 0 else 0, -0.5, 0.5, 6, ()),
    # 10^t = 1 + t p(t), |t| <= log10(2)/2: exp10f's fast path, relative to 10^t.
    "EXP10_P": (lambda t: (mp.power(10, t) - 1) / t if t != 0 else mp.log(10),
                lambda t: t / mp.power(10, t) if t != 0 else 0, -0.1506, 0.1506, 6, ()),
    # log2(1 + t) = t/ln2 + t^2 q(t), 1 + t in [sqrt(1/2), sqrt(2)): log2f, relative error.
    "LOG2_Q": (lambda t: (mp.log1p(t) - t) / mp.log(2) / t**2 if t != 0 else -1 / (2 * mp.log(2)),
               lambda t: t**2 / (mp.log1p(t) / mp.log(2)) if t != 0 else 0, mp.sqrt(0.5) - 1, mp.sqrt(2) - 1, 10, ()),
    # log10(1 + t) = t/ln10 + t^2 q(t), as LOG2_Q: log10f.
    "LOG10_Q": (lambda t: (mp.log1p(t) - t) / mp.log(10) / t**2 if t != 0 else -1 / (2 * mp.log(10)),
                lambda t: t**2 / (mp.log1p(t) / mp.log(10)) if t != 0 else 0, mp.sqrt(0.5) - 1, mp.sqrt(2) - 1, 10, ()),
    # log(m) = 2s + s^3 q(s^2), |s| <= (sqrt2-1)/(sqrt2+1).
    "LOG_ATANH_Q": (q_atanh_s, lambda u: 1 / q_atanh_s(u), 0, ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2 * 1.01, 4, ()),
    # sin(r) = r + r^3 q(r^2) on |r| <= pi/4, relative error of sin.
    "SIN_Q": (q_sin, lambda u: (mp.sqrt(u) ** 3 / mp.sin(mp.sqrt(u))) if u != 0 else 0, 0, (mp.pi / 4) ** 2 * 1.01, 3, ()),
    # cos(r) = 1 - r^2/2 + r^4 q(r^2) on |r| <= pi/4, absolute (cos >= 0.7).
    "COS_Q": (q_cos, lambda u: u**2, 0, (mp.pi / 4) ** 2 * 1.01, 3, ()),
    "TAN_Q": (q_tan, lambda u: (mp.sqrt(u) ** 3 / mp.tan(mp.sqrt(u))) if u != 0 else 0, 0, (mp.pi / 4) ** 2 * 1.01, 6, ()),
    "ATAN_Q": (q_atan, lambda u: (mp.sqrt(u) ** 3 / mp.atan(mp.sqrt(u))) if u != 0 else 0, 0, 1, 8, ()),
    "ASIN_Q": (q_asin, lambda u: (mp.sqrt(u) ** 3 / mp.asin(mp.sqrt(u))) if u != 0 else 0, 0, 0.25, 5, ()),
    "SINPI_Q": (q_sinpi, lambda u: (mp.sqrt(u) ** 3 / mp.sin(mp.pi * mp.sqrt(u))) if u != 0 else 0, 0, 0.0625 * 1.01, 3, ()),
    "COSPI_Q": (q_cospi, lambda u: u / mp.cos(mp.pi * mp.sqrt(u)), 0, 0.0625 * 1.01, 4, ()),
    "TANH_Q": (q_tanh, lambda u: (mp.sqrt(u) ** 3 / mp.tanh(mp.sqrt(u))) if u != 0 else 0, 0, 0.5625 * 1.01, 5, ()),
    "ERF_Q": (q_erf, lambda u: u / (2 / mp.sqrt(mp.pi)) if u != 0 else 0, 0, 0.5625 * 1.01, 6, ()),
    # ln erfc(t) on [0.75, 3.93], absolute error weighted by erfc(t): erff above 0.75.
    "LN_ERFC": (lambda t: mp.log(mp.erfc(t)), lambda t: mp.erfc(t), 0.75, 3.93, 9, ()),
    # erfc(t) = e^(-t^2) g(t - 11/8), t in [0.75, 2]: g is entire, so low degrees do.
    "ERFC_NEAR": (lambda v: mp.erfc(v + mp.mpf(11) / 8) * mp.exp((v + mp.mpf(11) / 8) ** 2),
                  lambda v: 1 / (mp.erfc(v + mp.mpf(11) / 8) * mp.exp((v + mp.mpf(11) / 8) ** 2)),
                  -0.626, 0.626, 9, ()),
    # erfc(t) = e^(-t^2) w g(w), w = 1/t in [0.099, 0.5].
    "ERFC_FAR": (h_erfc, lambda w: 1 / h_erfc(w), 0.0989, 0.5001, 9, ()),
    # erfinv(x) = x P(w - 1) for w = -ln(1 - x^2) in [0, 2], x P(w - 3.5) in [2, 5];
    # relative error.
    "ERFINV_A": (lambda v: erfinv_central(v - 1.5), lambda v: 1 / erfinv_central(v - 1.5), -1, 1.0001, 8, ()),
    "ERFINV_B": (lambda v: erfinv_central(v + 1), lambda v: 1 / erfinv_central(v + 1), -1.5001, 1.5, 8, ()),
    # erfinv(x) = T(s - 3.125), s = sqrt(w) in [sqrt 5, 4]: the rest of erfinvf.
    "ERFINV_TAIL": (erfinv_tail(mp.mpf("3.125")), lambda v: 1 / erfinv_tail(mp.mpf("3.125"))(v), -0.9, 0.875, 8, ()),
    # erfcinv(y) = T(s - 7.125), s in [4, 10.25]: y down to the least subnormal.
    "ERFCINV_FAR": (erfinv_tail(mp.mpf("7.125")), lambda v: 1 / erfinv_tail(mp.mpf("7.125"))(v), -3.125, 3.125, 10, ()),
    "SINH_Q": (q_sinh, lambda u: (mp.sqrt(u) ** 3 / mp.sinh(mp.sqrt(u))) if u != 0 else 0, 0, 1.0201, 5, ()),
    # cyl_bessel_i0f/i1f: 1 + t P(t) and (x/2)(1 + t P(t)), t = x^2 <= 7.75^2; then
    # e^x/sqrt(x) h(1/x), relative error.
    "BESSEL_I0_SMALL": (bessel_i_small(0), bessel_i_small_w(0), 0, 60.07, 9, ()),
    "BESSEL_I1_SMALL": (bessel_i_small(1), bessel_i_small_w(1), 0, 60.07, 9, ()),
    "BESSEL_I0_LARGE": (bessel_i_large(0), lambda w: 1 / bessel_i_large(0)(w), 0, 0.12904, 7, ()),
    "BESSEL_I1_LARGE": (bessel_i_large(1), lambda w: 1 / bessel_i_large(1)(w), 0, 0.12904, 7, ()),
    # lgammaf, tgammaf: Q on [-0.5, 1] (relative error), Stirling's S for x >= 8.
    "GAMMA_Q": (gamma_q, lambda v: 1 / gamma_q(v), -0.501, 1.001, 9, ()),
    "LGAMMA_S": (lgamma_s, lambda z: 1 / lgamma_s(z), 0, 1 / 64 + 1e-6, 2, ()),
    # 1/m on [1, 2], relative error (a start for Newton's method).
    "RECIP_P": (lambda m: 1 / m, lambda m: m, 1, 2, 2, ()),
}


# Tables whose constant term is kept as f32 head and tail (`NAME_LO`): its rounding
# alone would cost more than the fit's error.
HEAD_TAIL = {"ERFINV_A", "ERFINV_B", "BESSEL_I0_LARGE", "BESSEL_I1_LARGE", "GAMMA_Q"}


def fit_f32_head_tail(g, w, a, b, deg):
    """One fit, c[0] as head + tail, the rest rounded to f32."""
    c, _ = remez(g, w, a, b, deg)
    hi = f32(c[0])
    lo = f32(c[0] - hi)
    r = [hi + lo] + [f32(v) for v in c[1:]]
    xs = [a + (b - a) * k / 4000 for k in range(4001)]
    err = max(abs(w(t) * (g(t) - sum(r[i] * t**i for i in range(deg + 1)))) for t in xs)
    return [hi] + r[1:], lo, err


def main():
    names = sys.argv[1:] or list(TABLES)
    for name in names:
        g, w, a, b, deg, fixed = TABLES[name]
        g, w = memo(g), memo(w)
        lo = None
        if name in HEAD_TAIL:
            c, lo, err = fit_f32_head_tail(g, w, mp.mpf(a), mp.mpf(b), deg)
        else:
            c, err = fit_f32(g, w, mp.mpf(a), mp.mpf(b), deg, fixed)
        print(f"// {name}: degree {deg} on [{mp.nstr(a, 8)}, {mp.nstr(b, 8)}], weighted error {mp.nstr(err, 4)} (2^{mp.nstr(mp.log(err, 2), 4)})")
        print(f"const {name}: [f32; {deg + 1}] = [")
        for v in c:
            print(f"    {float(v)!r:},")
        print("];")
        if lo is not None:
            print(f"const {name}_LO: f32 = {float(lo)!r};")


if __name__ == "__main__":
    main()
