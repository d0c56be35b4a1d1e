#!/usr/bin/env python3
"""Polynomial coefficients for device-std's f64 math functions (`device-std/src/math/double/`, each table beside the functions that use it).

    python3 scripts/math_coeffs_f64.py            # every table
    python3 scripts/math_coeffs_f64.py exp sin    # some

Each table in double/ names the entry of TABLES below that produced it. A fit
interpolates g(v) at the n+1 Chebyshev points of [a, b] (a near-minimax fit, within a
small factor of the minimax error), solves for the monomial coefficients in v with
mpmath at 60 digits, rounds them to f64 (Python floats) and reports the largest
|g - p| / |g| over 4000 points of [a, b] with the rounded coefficients, evaluated
exactly. The degree of each entry was raised until that error was below about 2^-58
(the kernels add their own rounding errors on top); the second figure printed,
with the coefficients rounded, is dominated by the rounding of the leading one.
"""
import sys
import mpmath as mp

mp.mp.dps = 60


def fit(g, a, b, deg, scale=None):
    """scale(v): what the error is relative to (default g(v))."""
    a, b = mp.mpf(a), mp.mpf(b)
    n = deg + 1
    xs = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    A = mp.matrix([[x**i for i in range(n)] for x in xs])
    y = mp.matrix([g(x) for x in xs])
    c = mp.lu_solve(A, y)
    return rounded_errors(g, a, b, [c[i] for i in range(n)], scale)


def rounded_errors(g, a, b, c, scale=None):
    """The coefficients c rounded to f64 (Python floats), and the largest |g - p| /
    scale(v) over 4001 points of [a, b] with the rounded ones and with c itself."""
    cs = [float(ci) for ci in c]
    err = 0
    terr = 0
    for k in range(4001):
        v = a + (b - a) * k / 4000
        gv = g(v)
        p = sum(mp.mpf(ci) * v**i for i, ci in enumerate(cs))
        pe = sum(ci * v**i for i, ci in enumerate(c))
        sv = gv if scale is None else scale(v)
        if sv != 0:
            err = max(err, abs((gv - p) / sv))
            terr = max(terr, abs((gv - pe) / sv))
    return cs, err, terr


def fit_lawson(g, a, b, deg, scale, points=300, rounds=40):
    """Weighted minimax by Lawson's iteration: least squares on `points` Chebyshev
    points of [a, b], each round reweighting every point by its error, the error
    being |g - p| / scale(v). Where one polynomial covers a wide range whose error
    weight varies by orders of magnitude, interpolation (fit) wastes its accuracy
    where none is needed."""
    a, b = mp.mpf(a), mp.mpf(b)
    n = deg + 1
    xs = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * k / (points - 1)) for k in range(points)]
    ys = [g(x) for x in xs]
    inv = [1 / scale(x) for x in xs]
    w = [mp.mpf(1)] * points
    for _ in range(rounds):
        A = mp.matrix([[mp.sqrt(w[i]) * inv[i] * xs[i]**j for j in range(n)] for i in range(points)])
        y = mp.matrix([mp.sqrt(w[i]) * inv[i] * ys[i] for i in range(points)])
        c, _ = mp.qr_solve(A, y)
        e = [abs(ys[i] - sum(c[j] * xs[i]**j for j in range(n))) * inv[i] for i in range(points)]
        tot = sum(w[i] * e[i] for i in range(points))
        w = [w[i] * e[i] / tot for i in range(points)]
    return rounded_errors(g, a, b, [c[i] for i in range(n)], scale)


def g_erf_q(a):
    """q(a) = (Q/a - 2/sqrt(pi))/a, Q = -ln erfc(a): erf(a) = 1 - e^(-Q) with
    Q = a (2/sqrt(pi) + a q(a)), the constant term exact in head and tail."""
    if a == 0:
        a = mp.mpf(10) ** -40
    return (-mp.log(mp.erfc(a)) / a - 2 / mp.sqrt(mp.pi)) / a


def erf_q_scale(a):
    """How much of an error in q reaches erf, inverted: d erf / erf = a^2 erfc(a) dq / erf(a)."""
    if a == 0:
        a = mp.mpf(10) ** -40
    return mp.erf(a) / (a * a * mp.erfc(a))


def hp(g, v):
    """g(v) at 150 digits (the tails cancel), returned at the working precision."""
    with mp.workdps(150):
        r = g(mp.mpf(v))
    return +r


def odd_tail(f):
    """(f(sqrt z) - sqrt z) / z^(3/2), continuous at 0 via a series guard."""
    def g(z):
        if z == 0:
            z = mp.mpf(10) ** -40
        s = mp.sqrt(z)
        return (f(s) - s) / (s * z)
    return g


def g_exp(r):
    if r == 0:
        return mp.mpf(1) / 2
    return (mp.exp(r) - 1 - r) / r**2


def g_exp2(f):
    # 2^f = 1 + f P2(f)
    if f == 0:
        return mp.log(2)
    return (mp.mpf(2) ** f - 1) / f


def g_exp10(y):
    # 10^y = 1 + y P10(y)
    if y == 0:
        return mp.log(10)
    return (mp.mpf(10) ** y - 1) / y


def g_cos(z):
    if z == 0:
        return mp.mpf(1) / 24
    return (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z**2


def g_log(w):
    # log((1+s)/(1-s)) = 2s + 2s^3/3 + s^5 U(s^2)
    if w == 0:
        return mp.mpf(2) / 5
    s = mp.sqrt(w)
    return (mp.log((1 + s) / (1 - s)) - 2 * s - 2 * s**3 / 3) / s**5


def g_coshr(z):
    # cosh r = 1 + r^2 E(r^2)
    if z == 0:
        return mp.mpf(1) / 2
    return (mp.cosh(mp.sqrt(z)) - 1) / z


def g_erf(z):
    # erf(x) = x + x * G(x^2)
    if z == 0:
        return 2 / mp.sqrt(mp.pi) - 1
    x = mp.sqrt(z)
    return mp.erf(x) / x - 1


ERFC_K = mp.mpf(15) / 4


def g_erfc(t):
    # Shepherd & Laframboise (1981): (1 + 2x) e^(x^2) erfc(x) as a polynomial in
    # t = (x - K) / (x + K), K = 3.75.
    x = ERFC_K * (1 + t) / (1 - t)
    return (1 + 2 * x) * mp.exp(x * x) * mp.erfc(x)


def t_of(x):
    return (x - ERFC_K) / (x + ERFC_K)


def erfcinv_hp(y):
    """erfcinv(y), 0 < y <= 1, with the digits that 1 - y cancels added."""
    y = mp.mpf(y)
    with mp.workdps(mp.mp.dps + int(-mp.log10(y)) + 10):
        return +mp.erfinv(1 - y)


def g_erfinv_central(v):
    # erfinv(x) = x P(v), v = w - 3.125, w = -ln(1 - x^2) in [0, 6.25]
    w = v + mp.mpf("3.125")
    if w == 0:
        return mp.sqrt(mp.pi) / 2
    u = mp.exp(-w)
    return erfcinv_hp(u / (1 + mp.sqrt(1 - u))) / mp.sqrt(1 - u)


def g_erfinv_tail(c):
    # erfinv(x) = T(v), v = s - c, s = sqrt(w); 1 - x = u / (1 + sqrt(1 - u)), u = e^(-w)
    def g(v):
        u = mp.exp(-((v + c) ** 2))
        return erfcinv_hp(u / (1 + mp.sqrt(1 - u)))
    return g


# name: (function, a, b, degree, what it is)
def g_gamma_q(v):
    """Q(v) = (1/Gamma(1+v) - 1)/(v(v - 1)): 1/Gamma is entire, so is Q."""
    if v == 0:
        v = mp.mpf(10) ** -40
    if v == 1:
        v = 1 - mp.mpf(10) ** -40
    return (mp.rgamma(1 + v) - 1) / (v * (v - 1))


def g_lgamma_stirling(z):
    """S(z), z = 1/x^2: lgamma(x) = (x - 1/2) ln x - x + ln sqrt(2 pi) + S(z)/x."""
    if z == 0:
        return mp.mpf(1) / 12
    x = 1 / mp.sqrt(z)
    return x * (mp.loggamma(x) - (x - mp.mpf(1) / 2) * mp.log(x) + x - mp.log(2 * mp.pi) / 2)


def g_bessel_i_small(n):
    """I0(x) = 1 + z P(z), I1(x) = (x/2)(1 + z P(z)), z = x^2."""
    def g(z):
        if z == 0:
            z = mp.mpf(10) ** -40
        x = mp.sqrt(z)
        v = mp.besseli(0, x) if n == 0 else 2 * mp.besseli(1, x) / x
        return (v - 1) / z
    return g


def g_bessel_i_large(n):
    """I_n(x) = e^x / sqrt(x) H(w), w = 1/x."""
    def g(w):
        if w == 0:
            return 1 / mp.sqrt(2 * mp.pi)
        x = 1 / w
        return mp.besseli(n, x) * mp.sqrt(x) * mp.exp(-x)
    return g


TABLES = {
    # e^r = 1 + r + r^2 Q(r) on |r| <= ln2/2 (+ slack)
    "exp": (g_exp, -0.3467, 0.3467, 10, "Q(r) = (e^r - 1 - r) / r^2"),
    # The short path of log, log2, log10: ln m = u + u^3 P(u^2), u = 2(m - 1)/(m + 1)
    "log_short": (odd_tail(lambda u: 2 * mp.atanh(u / 2)), 0, 0.1178, 6, "P(v) = (2 atanh(sqrt(v)/2) - sqrt v) / v^1.5"),
    # The short paths of exp2 and exp10: 2^f = 1 + f P2(f), 10^y = 1 + y P10(y)
    "exp2_short": (g_exp2, -0.5, 0.5, 10, "P2(f) = (2^f - 1) / f"),
    "exp10_short": (g_exp10, -0.1506, 0.1506, 10, "P10(y) = (10^y - 1) / y"),
    # sin r = r + r^3 S(r^2), |r| <= pi/4 (+ slack)
    "sin": (odd_tail(mp.sin), 0, 0.6170, 6, "S(z) = (sin sqrt z - sqrt z) / z^1.5"),
    # cos r = 1 - r^2/2 + r^4 C(r^2)
    "cos": (g_cos, 0, 0.6170, 6, "C(z) = (cos sqrt z - 1 + z/2) / z^2"),
    # atan t = t + t^3 A(t^2), 0 <= t <= 1
    "atan": (odd_tail(mp.atan), 0, 1, 22, "A(z) = (atan sqrt z - sqrt z) / z^1.5"),
    # asin t = t + t^3 B(t^2), 0 <= t <= 1/2
    "asin": (odd_tail(mp.asin), 0, 0.25, 13, "B(z) = (asin sqrt z - sqrt z) / z^1.5"),
    # log((1+s)/(1-s)) = 2s + 2s^3/3 + s^5 U(s^2), |s| <= (sqrt2-1)/(sqrt2+1)
    "log": (g_log, 0, 0.02945, 7, "U(w)"),
    # sinh x = x + x^3 H(x^2), |x| <= 1
    "sinh": (odd_tail(mp.sinh), 0, 1, 7, "H(z) = (sinh sqrt z - sqrt z) / z^1.5"),
    # e^r = cosh r + sinh r with the even and odd parts apart (cosh, sinh), |r| <= ln2/2
    "coshr": (g_coshr, 0, 0.1202, 5, "E(z) = (cosh sqrt z - 1) / z"),
    "sinhr": (odd_tail(mp.sinh), 0, 0.1202, 5, "O(z) = (sinh sqrt z - sqrt z) / z^1.5"),
    # erf x = x + x G(x^2), |x| <= 1
    # (error relative to 1 + G, which is what it is added to)
    "erf": (g_erf, 0, 1, 12, "G(z) = erf(sqrt z)/sqrt z - 1", lambda z: 1 + g_erf(z)),
    # erf x = 1 - e^(-Q), Q = x (2/sqrt(pi) + x q(x)), 0 <= x <= 5.9219 (where erf
    # rounds to 1): Lawson's weighted fit, the error weighted by the share of it that
    # reaches erf
    "erf_q": (g_erf_q, 0, 5.9219, 23, "q(a) = (-ln(erfc a)/a - 2/sqrt(pi))/a", erf_q_scale, "lawson"),
    # erfc x = e^(-x^2) P(t) / (1 + 2x), 0.5 <= x <= 27.3
    "erfc": (g_erfc, float(t_of(mp.mpf("0.5"))) - 1e-3, float(t_of(mp.mpf("27.3"))) + 1e-3, 22,
             "P(t) = (1 + 2x) e^(x^2) erfc(x), t = (x - 3.75)/(x + 3.75)"),
    # erfinv and erfcinv: x P(w - 3.125) for w = -ln(1 - x^2) < 6.25, then T_k(s - c_k)
    # for s = sqrt(w) in [2.5, 4.5], [4.5, 8], [8, 16], [16, 27.5] (y = 1 - x down
    # to the least subnormal).
    "erfinv_central": (g_erfinv_central, -3.125, 3.13, 23, "P(w - 3.125) = erfinv(x)/x"),
    "erfinv_t1": (g_erfinv_tail(mp.mpf("3.5")), -1.01, 1.01, 20, "T1(s - 3.5) = erfinv(x)"),
    "erfinv_t2": (g_erfinv_tail(mp.mpf("6.25")), -1.75, 1.75, 22, "T2(s - 6.25) = erfinv(x)"),
    "erfinv_t3": (g_erfinv_tail(mp.mpf(12)), -4, 4, 19, "T3(s - 12) = erfinv(x)"),
    "erfinv_t4": (g_erfinv_tail(mp.mpf("21.75")), -5.75, 5.75, 15, "T4(s - 21.75) = erfinv(x)"),
    # cyl_bessel_i0/i1: 1 + z P(z), z = x^2 <= 12^2 (error relative to 1 + z P); then
    # e^x/sqrt(x) H(1/x) (H's constant term is split into head and tail in double/erf.rs)
    "bessel_i0_small": (g_bessel_i_small(0), 0, 144.1, 18, "P(z) = (I0(sqrt z) - 1)/z",
                        lambda z: 1 + z * g_bessel_i_small(0)(z)),
    "bessel_i1_small": (g_bessel_i_small(1), 0, 144.1, 18, "P(z) = (2 I1(sqrt z)/sqrt z - 1)/z",
                        lambda z: 1 + z * g_bessel_i_small(1)(z)),
    "bessel_i0_large": (g_bessel_i_large(0), 0, 0.08343, 18, "H(w) = sqrt(x) e^-x I0(x), w = 1/x"),
    "bessel_i1_large": (g_bessel_i_large(1), 0, 0.08343, 18, "H(w) = sqrt(x) e^-x I1(x), w = 1/x"),
    # lgamma, tgamma: 1/Gamma(1+v) = 1 + v(v - 1) Q(v), v in [0, 1]; Stirling's
    # remainder S(1/x^2)/x for x >= 8 (error relative to S: lgamma >= 8.5 there)
    "gamma_q": (g_gamma_q, -0.501, 1.001, 16, "Q(v) = (1/Gamma(1+v) - 1)/(v(v-1))"),
    "lgamma_stirling": (g_lgamma_stirling, 0, 1 / 64 + 1e-6, 6, "S(z), z = 1/x^2"),
}


def two_over_pi_words(n=32):
    """The bits of 2/pi, 64 to a word (the Payne-Hanek table TWO_OVER_PI)."""
    with mp.workprec(64 * n + 64):
        v = 2 / mp.pi
        out = []
        for _ in range(n):
            v *= mp.mpf(2) ** 64
            w = int(mp.floor(v))
            out.append(w)
            v -= w
    return out


def main():
    names = sys.argv[1:] or list(TABLES) + ["two_over_pi"]
    if "two_over_pi" in names:
        names.remove("two_over_pi")
        ws = two_over_pi_words()
        print("static TWO_OVER_PI: [u64; 32] = [")
        for i in range(0, 32, 4):
            print("    " + ", ".join("0x%016X" % w for w in ws[i:i + 4]) + ",")
        print("];")
    for name in names:
        g, a, b, deg, what = TABLES[name][:5]
        scale = TABLES[name][5] if len(TABLES[name]) > 5 else None
        with mp.workdps(60):
            if TABLES[name][6:] == ("lawson",):
                cs, err, terr = fit_lawson(lambda v: hp(g, v), a, b, deg, scale)
            else:
                cs, err, terr = fit(lambda v: hp(g, v), a, b, deg, scale)
        print(f"// {name}: {what} on [{a}, {b}], degree {deg}: max rel err 2^{float(mp.log(terr, 2)):.1f} "
              f"(2^{float(mp.log(err, 2)):.1f} with the coefficients rounded to f64)")
        print(f"const {name.upper()}_C: [f64; {len(cs)}] = [")
        for c in cs:
            print(f"    {c!r},")
        print("];")


if __name__ == "__main__":
    main()
