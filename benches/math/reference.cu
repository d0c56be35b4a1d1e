// Accuracy and speed of device_std::math on the GPU, against CUDA's own math library.
//
// Our functions run as the kernels of benches/math/kernels (linked PTX, loaded through
// the driver API: acc_<f> writes f of each input, thr_<f> is the throughput kernel);
// CUDA's run as the twins below, compiled into this binary by nvcc. The function list
// is benches/math/functions.def (every target function; one whose acc_/thr_ kernels are
// not in the PTX is reported missing). Built and run on the GPU machine by
// scripts/gpu-math.sh:
//   nvcc -O3 -arch=sm_90 -o math-bench benches/math/reference.cu -lcuda
//   ./math-bench --ptx .gpu/math/math-bench-kernels.ptx [--only NAME] [--quick]
//       [--chunk-log2 N] [--pairs N] [--f64 N] [--rounds N] [--no-accuracy] [--no-speed]
// (counts as integers or 2^k; --quick: 2^18 strided f32 inputs, 2^17 pairs and f64
// inputs, chunks of 2^16, 2^16 evaluations and one round of throughput).
//
// a. Accuracy. f32 unary: all 2^32 inputs, in chunks of 2^chunk-log2 per launch (our
//    acc_ kernel into a poisoned buffer, then one fused error kernel that reads the
//    chunk once). Reference: CUDA's f64 function of the exact input (within ~2^-28 f32
//    ulp). Error of a result o in f32 ulps: |o - ref| / ulp_f32(ref), the ulp at ref's
//    exponent (2^-149 below 2^-126); o NaN where ref is NaN: 0; ref infinite or rounding
//    to ±inf in f32: o must be that infinity; any other NaN/inf mismatch: infinite.
//    CUDA's own f32 function is measured the same way on the same inputs. "spec" counts
//    infinite errors and results of the wrong zero sign.
//    f32 binary: --pairs random pairs (default 2^32): pair p is
//    (bits, bits) for p % 4 == 0, (bits, uniform y) for 1, uniform both for 2 and 3;
//    "uniform" is over the ranges in functions.def (acc_pair_f32 below).
//    f64: no better reference on the GPU: the max ulp DIFFERENCE between ours and CUDA's
//    f64 function (ulp at the exponent of CUDA's result; NaN/inf rules as above, exact),
//    and the number of results whose bits differ, over --f64 inputs (default 2^30; 1/4
//    random bits, 3/4 uniform over the range; acc_f64 below).
//    Maxima are reduced with a 64-bit atomicMax of (error bits << 32 | tag): the tag is
//    the input's bits (f32 unary) or the sample index, from which the input is
//    regenerated here.
//    Within bound: CUDA's bounds count ulps from the correctly rounded result, so an
//    error against the exact value of at most bound + 0.5 is within (f32); for f64 the
//    difference to CUDA must be at most twice the bound (a proxy: ours and CUDA's may
//    each be off by the bound, in opposite directions; the f64 errors themselves are
//    measured on the host against mpmath, device-std/tests/math_f64_accuracy.py, since
//    the host computes the GPU's bits).
// b. One table per group, rows printed as they finish.
// c. Throughput: ours against CUDA's twin over 2^28 evaluations (K = 16 per thread),
//    interleaved round robin, 3 warm-up rounds then the median of --rounds (21) rounds,
//    CUDA events around each launch; ratio = CUDA's time / ours (>= 1: as fast).
// d. Identity hashes: FNV-1a 64 of our outputs on fixed samples (see "Identity sample");
//    benches/math/kernels/tests/identity.rs computes the same on the host.
// e. The summary line, PASS/FAIL lines; exit 0 all pass, 1 a CUDA or harness failure,
//    2 a function out of bound, missing, or an output left unwritten.
//
// Every output buffer is filled with 0xff bytes before each launch.
//
// Time on an H100 (estimate): memory-bound at ~12 bytes per f32 input (poison, our
// store, the error kernel's load): 2^32 inputs ≈ 52 GB ≈ 20 ms per function, plus the
// f64 reference (~2^32 × 100 DFMA-pipe instructions ≈ 30 ms); f32 binary at 2^32 pairs
// and f64 at 2^30 inputs well under a second each; throughput ≈ 24 rounds × 2 × 0.3-5
// ms per function. Module JIT a few seconds. Whole run: under a minute expected.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CHECK_CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* m_ = nullptr; \
    cuGetErrorString(r_, &m_); fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, m_ ? m_ : "?"); exit(1); } } while (0)
#define CHECK_LAUNCH() CHECK(cudaGetLastError())
#define HD __host__ __device__ __forceinline__

constexpr int TB = 256;    // threads per block, every kernel
constexpr int ELEMS = 8;   // elements per thread of the error and generator kernels
constexpr int K = 16;      // inputs per thread of a thr_ kernel (K in kernels/src/lib.rs)

// ---- bits ----
HD float f32_of(uint32_t b) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(b);
#else
    float f; memcpy(&f, &b, 4); return f;
#endif
}
HD uint32_t bits_of(float f) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t b; memcpy(&b, &f, 4); return b;
#endif
}
HD double f64_of(uint64_t b) {
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)b);
#else
    double f; memcpy(&f, &b, 8); return f;
#endif
}
HD uint64_t bits_of(double f) {
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(f);
#else
    uint64_t b; memcpy(&b, &f, 8); return b;
#endif
}
HD float fma32(float a, float b, float c) {
#ifdef __CUDA_ARCH__
    return __fmaf_rn(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}
HD double fma64(double a, double b, double c) {
#ifdef __CUDA_ARCH__
    return __fma_rn(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}
HD float sub32(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}
HD double sub64(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}

// ---- throughput inputs: the same operations as seed/step/unit_* in kernels/src/lib.rs ----
HD uint32_t seed(uint32_t g) { return g * 0x9E3779B9u; }
HD uint32_t step(uint32_t s) { return s * 1664525u + 1013904223u; }
HD float unit_f32(uint32_t s) { return f32_of(0x3f800000u | (s >> 9)); }             // [1, 2)
HD double unit_f64(uint32_t s) { return f64_of(0x3ff0000000000000ull | ((uint64_t)s << 20)); }

// ---- splitmix64, FNV-1a: the same as kernels/src/sample.rs ----
// sm(j): output j (from 0) of splitmix64 seeded with 0.
HD uint64_t sm(uint64_t j) {
    uint64_t z = (j + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
// The exponent field replaced by one in [-8, 8]; sign and mantissa kept.
HD uint32_t tame32(uint32_t b) { return (b & 0x807FFFFFu) | ((119u + ((b >> 23) & 0xFFu) % 17u) << 23); }
HD uint64_t tame64(uint64_t b) {
    return (b & 0x800FFFFFFFFFFFFFull) | ((1015ull + ((b >> 52) & 0x7FFull) % 17ull) << 52);
}
constexpr uint64_t FNV_OFFSET = 0xCBF29CE484222325ull;
static uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
    const unsigned char* p = (const unsigned char*)data;  // little-endian host: the bits' bytes in order
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001B3ull;
    return h;
}

// Identity sample (65,536 inputs per function; sample.rs has the same): f32 unary:
// bits j * 65537; f32 binary pair j: (bits(sm(j) low 32), bits(sm(j) high 32));
// f64 unary j: bits(sm(j)); f64 binary j: (bits(sm(2j)), bits(sm(2j + 1))); for odd j
// every value is tamed (tame32/tame64).
constexpr uint32_t SAMPLE_N = 65536, SAMPLE_STRIDE = 65537;
static void sample_f32_pair(uint32_t j, float* x, float* y) {
    uint64_t z = sm(j);
    uint32_t a = (uint32_t)z, b = (uint32_t)(z >> 32);
    if (j & 1) { a = tame32(a); b = tame32(b); }
    *x = f32_of(a); *y = f32_of(b);
}
static double sample_f64(uint32_t j) {
    uint64_t b = sm(j);
    return f64_of((j & 1) ? tame64(b) : b);
}
static void sample_f64_pair(uint32_t j, double* x, double* y) {
    uint64_t a = sm(2ull * j), b = sm(2ull * j + 1);
    if (j & 1) { a = tame64(a); b = tame64(b); }
    *x = f64_of(a); *y = f64_of(b);
}

// ---- accuracy inputs (made on the GPU, remade here to print where a maximum is) ----
constexpr uint64_t ACC_OFF = 1ull << 33;  // apart from the identity sample's sm indices
HD float uni32(uint64_t z, float lo, float hi) { return fma32(sub32(hi, lo), (float)(z >> 40) * 0x1p-24f, lo); }
HD double uni64(uint64_t z, double lo, double hi) { return fma64(sub64(hi, lo), (double)(z >> 11) * 0x1p-53, lo); }
// Pair p: p % 4 == 0 both random bits; 1: x random bits, y uniform; 2, 3: both uniform.
HD void acc_pair_f32(uint64_t p, float xlo, float xhi, float ylo, float yhi, float* x, float* y) {
    uint64_t z1 = sm(ACC_OFF + 2 * p), z2 = sm(ACC_OFF + 2 * p + 1);
    unsigned kind = (unsigned)(p & 3);
    *x = kind <= 1 ? f32_of((uint32_t)z1) : uni32(z1, xlo, xhi);
    *y = kind == 0 ? f32_of((uint32_t)z2) : uni32(z2, ylo, yhi);
}
HD void acc_pair_f64(uint64_t p, double xlo, double xhi, double ylo, double yhi, double* x, double* y) {
    uint64_t z1 = sm(ACC_OFF + 2 * p), z2 = sm(ACC_OFF + 2 * p + 1);
    unsigned kind = (unsigned)(p & 3);
    *x = kind <= 1 ? f64_of(z1) : uni64(z1, xlo, xhi);
    *y = kind == 0 ? f64_of(z2) : uni64(z2, ylo, yhi);
}
// Input p: p % 4 == 0 random bits, else uniform.
HD double acc_f64(uint64_t p, double lo, double hi) {
    uint64_t z = sm(ACC_OFF + p);
    return (p & 3) == 0 ? f64_of(z) : uni64(z, lo, hi);
}

// ---- error measures ----
// Error of o against the exact value r, in f32 ulps of r (rules in the header comment);
// *sign_bad: both zero with different signs.
__device__ __forceinline__ float ulp_err_f32(float o, double r, bool* sign_bad) {
    if (isnan(r)) return isnan(o) ? 0.0f : INFINITY;
    if (isnan(o)) return INFINITY;
    float rf = __double2float_rn(r);
    if (isinf(rf)) return o == rf ? 0.0f : INFINITY;
    if (isinf(o)) return INFINITY;
    if (rf == 0.0f && o == 0.0f && signbit(rf) != signbit(o)) *sign_bad = true;
    int e = (int)((bits_of(r) >> 52) & 0x7ff) - 1023;
    e = max(e, -126);
    return __double2float_ru(scalbn(fabs((double)o - r), 23 - e));
}
// |o - r| in f64 ulps of r.
__device__ __forceinline__ float ulp_diff_f64(double o, double r) {
    if (isnan(r)) return isnan(o) ? 0.0f : INFINITY;
    if (isnan(o)) return INFINITY;
    if (isinf(r) || isinf(o)) return o == r ? 0.0f : INFINITY;
    int e = (int)((bits_of(r) >> 52) & 0x7ff) - 1023;
    e = max(e, -1022);
    return __double2float_ru(scalbn(fabs(o - r), 52 - e));
}
HD unsigned long long pack(float err, uint32_t tag) { return ((unsigned long long)bits_of(err) << 32) | tag; }

// ---- block reduction into the per-function record ----
struct Red {
    unsigned long long ours, cuda;      // max of pack(error, tag)
    unsigned long long n_ours, n_cuda;  // f32: special-value mismatches; f64: bit mismatches (n_ours)
};
__device__ __forceinline__ unsigned long long umax64(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
// Every thread of the block (blockDim.x == TB) calls it once.
__device__ void push(Red* red, unsigned long long a, unsigned long long b, unsigned ca, unsigned cb) {
    __shared__ unsigned long long sa[TB / 32], sb[TB / 32];
    __shared__ unsigned sca[TB / 32], scb[TB / 32];
    for (int o = 16; o > 0; o >>= 1) {
        a = umax64(a, __shfl_xor_sync(0xffffffffu, a, o));
        b = umax64(b, __shfl_xor_sync(0xffffffffu, b, o));
    }
    ca = __reduce_add_sync(0xffffffffu, ca);
    cb = __reduce_add_sync(0xffffffffu, cb);
    int w = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) { sa[w] = a; sb[w] = b; sca[w] = ca; scb[w] = cb; }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 1; k < TB / 32; k++) { a = umax64(a, sa[k]); b = umax64(b, sb[k]); ca += sca[k]; cb += scb[k]; }
        if (a) atomicMax(&red->ours, a);
        if (b) atomicMax(&red->cuda, b);
        if (ca) atomicAdd(&red->n_ours, (unsigned long long)ca);
        if (cb) atomicAdd(&red->n_cuda, (unsigned long long)cb);
    }
}

// ---- kernel bodies (one instance per function, below) ----
// Element e of thread t of block b: b * TB * ELEMS + e * TB + t (coalesced).
#define FOR_ELEMS(n, i) \
    for (int e_ = 0; e_ < ELEMS; e_++) \
        if (uint64_t i = (uint64_t)blockIdx.x * (TB * ELEMS) + (uint64_t)e_ * TB + threadIdx.x; i < (n))

// Inputs where CUDA documents no bound (lgamma near its zeros, CUDA C++ Programming
// Guide: "larger inside"): left out of the accuracy measure.
template <class F>
struct Skip {
    static __device__ __forceinline__ bool in(double) { return false; }
};
struct lgammaf_t;
struct lgamma_t;
// jn/yn of order 5: CUDA's ulp bound (ynf's) for 0 < x < 5; below 2^-80 CUDA's jn and
// yn return NaN (its recurrence underflows), so the reference is unusable there.
#define SKIP_OUTSIDE_ORDER5(T)                                                                   \
    struct T;                                                                                    \
    template <>                                                                                  \
    struct Skip<T> {                                                                             \
        static __device__ __forceinline__ bool in(double x) { return !(x >= 0x1p-80 && x < 5.0); } \
    };
#define SKIP_AT_LEAST(T, A)                                                              \
    struct T;                                                                            \
    template <>                                                                          \
    struct Skip<T> {                                                                     \
        static __device__ __forceinline__ bool in(double x) { return !(fabs(x) < (A)); } \
    };
// The Bessel functions: CUDA's ulp bounds hold for |x| < 8 (|x| < n for yn).
SKIP_AT_LEAST(j0f_t, 8.0)
SKIP_AT_LEAST(j1f_t, 8.0)
SKIP_AT_LEAST(y0f_t, 8.0)
SKIP_AT_LEAST(y1f_t, 8.0)
SKIP_OUTSIDE_ORDER5(jn5f_t)
SKIP_OUTSIDE_ORDER5(yn5f_t)
SKIP_AT_LEAST(j0_t, 8.0)
SKIP_AT_LEAST(j1_t, 8.0)
SKIP_AT_LEAST(y0_t, 8.0)
SKIP_AT_LEAST(y1_t, 8.0)
SKIP_OUTSIDE_ORDER5(jn5_t)
SKIP_OUTSIDE_ORDER5(yn5_t)
template <>
struct Skip<lgammaf_t> {
    static __device__ __forceinline__ bool in(double x) { return x >= -10.001 && x <= -2.264; }
};
template <>
struct Skip<lgamma_t> {
    static __device__ __forceinline__ bool in(double x) { return x >= -23.0001 && x <= -2.2637; }
};

template <class F>
__device__ __forceinline__ void err_f32u(uint32_t base, uint32_t stride, uint32_t n, const float* ours, Red* red) {
    unsigned long long mo = 0, mc = 0;
    unsigned co = 0, cc = 0;
    FOR_ELEMS(n, i) {
        uint32_t xb = base + (uint32_t)i * stride;
        float x = f32_of(xb);
        if (Skip<F>::in((double)x)) continue;
        double r = F::refv((double)x);
        bool so = false, sc = false;
        float eo = ulp_err_f32(ours[i], r, &so), ec = ulp_err_f32(F::cuda(x), r, &sc);
        mo = umax64(mo, pack(eo, xb));
        mc = umax64(mc, pack(ec, xb));
        co += isinf(eo) || so;
        cc += isinf(ec) || sc;
    }
    push(red, mo, mc, co, cc);
}

template <class F>
__device__ __forceinline__ void err_f32b(uint32_t p0, uint32_t n, const float* xs, const float* ys, const float* ours, Red* red) {
    unsigned long long mo = 0, mc = 0;
    unsigned co = 0, cc = 0;
    FOR_ELEMS(n, i) {
        float x = xs[i], y = ys[i];
        double r = F::refv((double)x, (double)y);
        bool so = false, sc = false;
        float eo = ulp_err_f32(ours[i], r, &so), ec = ulp_err_f32(F::cuda(x, y), r, &sc);
        uint32_t tag = p0 + (uint32_t)i;
        mo = umax64(mo, pack(eo, tag));
        mc = umax64(mc, pack(ec, tag));
        co += isinf(eo) || so;
        cc += isinf(ec) || sc;
    }
    push(red, mo, mc, co, cc);
}

__device__ __forceinline__ bool differ(double a, double b) {
    return bits_of(a) != bits_of(b) && !(isnan(a) && isnan(b));
}

template <class F>
__device__ __forceinline__ void err_f64u(uint32_t p0, uint32_t n, const double* xs, const double* ours, Red* red) {
    unsigned long long mo = 0;
    unsigned co = 0;
    FOR_ELEMS(n, i) {
        if (Skip<F>::in(xs[i])) continue;
        double o = ours[i], r = F::cuda(xs[i]);
        mo = umax64(mo, pack(ulp_diff_f64(o, r), p0 + (uint32_t)i));
        co += differ(o, r);
    }
    push(red, mo, 0, co, 0);
}

template <class F>
__device__ __forceinline__ void err_f64b(uint32_t p0, uint32_t n, const double* xs, const double* ys, const double* ours, Red* red) {
    unsigned long long mo = 0;
    unsigned co = 0;
    FOR_ELEMS(n, i) {
        double o = ours[i], r = F::cuda(xs[i], ys[i]);
        mo = umax64(mo, pack(ulp_diff_f64(o, r), p0 + (uint32_t)i));
        co += differ(o, r);
    }
    push(red, mo, 0, co, 0);
}

// The twins of thr_ in kernels/src/lib.rs: the same inputs, the same additions.
template <class F>
__device__ __forceinline__ void thr_f32u(float lo, float hi, float* out, uint32_t n) {
    uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    float w = __fsub_rn(hi, lo), c = __fsub_rn(lo, w), acc = 0.0f;
    uint32_t s = seed(g);
#pragma unroll
    for (int k = 0; k < K; k++) {
        s = step(s);
        acc = __fadd_rn(acc, F::cuda(__fmaf_rn(w, unit_f32(s), c)));
    }
    if (g < n) out[g] = acc;
}

template <class F>
__device__ __forceinline__ void thr_f32b(float xlo, float xhi, float ylo, float yhi, float* out, uint32_t n) {
    uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    float wx = __fsub_rn(xhi, xlo), wy = __fsub_rn(yhi, ylo), acc = 0.0f;
    float cx = __fsub_rn(xlo, wx), cy = __fsub_rn(ylo, wy);
    uint32_t s = seed(g);
#pragma unroll
    for (int k = 0; k < K; k++) {
        s = step(s);
        float x = __fmaf_rn(wx, unit_f32(s), cx);
        s = step(s);
        float y = __fmaf_rn(wy, unit_f32(s), cy);
        acc = __fadd_rn(acc, F::cuda(x, y));
    }
    if (g < n) out[g] = acc;
}

template <class F>
__device__ __forceinline__ void thr_f64u(double lo, double hi, double* out, uint32_t n) {
    uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    double w = __dsub_rn(hi, lo), c = __dsub_rn(lo, w), acc = 0.0;
    uint32_t s = seed(g);
#pragma unroll
    for (int k = 0; k < K; k++) {
        s = step(s);
        acc = __dadd_rn(acc, F::cuda(__fma_rn(w, unit_f64(s), c)));
    }
    if (g < n) out[g] = acc;
}

template <class F>
__device__ __forceinline__ void thr_f64b(double xlo, double xhi, double ylo, double yhi, double* out, uint32_t n) {
    uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    double wx = __dsub_rn(xhi, xlo), wy = __dsub_rn(yhi, ylo), acc = 0.0;
    double cx = __dsub_rn(xlo, wx), cy = __dsub_rn(ylo, wy);
    uint32_t s = seed(g);
#pragma unroll
    for (int k = 0; k < K; k++) {
        s = step(s);
        double x = __fma_rn(wx, unit_f64(s), cx);
        s = step(s);
        double y = __fma_rn(wy, unit_f64(s), cy);
        acc = __dadd_rn(acc, F::cuda(x, y));
    }
    if (g < n) out[g] = acc;
}

// ---- input generators, poison counter ----
__global__ void gen_f32b(uint64_t p0, uint32_t n, float xlo, float xhi, float ylo, float yhi, float* xs, float* ys) {
    FOR_ELEMS(n, i) acc_pair_f32(p0 + i, xlo, xhi, ylo, yhi, &xs[i], &ys[i]);
}
__global__ void gen_f64u(uint64_t p0, uint32_t n, double lo, double hi, double* xs) {
    FOR_ELEMS(n, i) xs[i] = acc_f64(p0 + i, lo, hi);
}
__global__ void gen_f64b(uint64_t p0, uint32_t n, double xlo, double xhi, double ylo, double yhi, double* xs, double* ys) {
    FOR_ELEMS(n, i) acc_pair_f64(p0 + i, xlo, xhi, ylo, yhi, &xs[i], &ys[i]);
}
template <class T>
__global__ void count_poison(const T* p, uint32_t n, unsigned long long* count) {
    unsigned c = 0;
    FOR_ELEMS(n, i) c += p[i] == (T)~(T)0;
    if (c) atomicAdd(count, (unsigned long long)c);
}

// Fixed-order twins of device-std's jnf/ynf for the unary harness.
__device__ __forceinline__ float jn5f(float x) { return jnf(5, x); }
__device__ __forceinline__ float yn5f(float x) { return ynf(5, x); }
__device__ __forceinline__ double jn5(double x) { return jn(5, x); }
__device__ __forceinline__ double yn5(double x) { return yn(5, x); }

// ---- one instance per function of functions.def ----
struct ErrArgs {
    uint32_t base, stride, n, p0;
    const void *xs, *ys, *ours;
    Red* red;
};
struct ThrArgs {
    double xlo, xhi, ylo, yhi;
    void* out;
    uint32_t n;
};
using ErrFn = void (*)(unsigned grid, const ErrArgs&);
using ThrFn = void (*)(unsigned grid, const ThrArgs&);

#define F32U(NAME, REF, BOUND, LO, HI)                                                                    \
    struct NAME##_t {                                                                                     \
        static __device__ __forceinline__ float cuda(float x) { return ::NAME(x); }                       \
        static __device__ __forceinline__ double refv(double x) { return ::REF(x); }                      \
    };                                                                                                    \
    extern "C" __global__ void thr_##NAME(float lo, float hi, float* out, uint32_t n) {                   \
        thr_f32u<NAME##_t>(lo, hi, out, n);                                                               \
    }                                                                                                     \
    extern "C" __global__ void err_##NAME(uint32_t base, uint32_t stride, uint32_t n, const float* ours,  \
                                          Red* red) {                                                     \
        err_f32u<NAME##_t>(base, stride, n, ours, red);                                                   \
    }                                                                                                     \
    static void err_launch_##NAME(unsigned grid, const ErrArgs& a) {                                      \
        err_##NAME<<<grid, TB>>>(a.base, a.stride, a.n, (const float*)a.ours, a.red);                     \
    }                                                                                                     \
    static void thr_launch_##NAME(unsigned grid, const ThrArgs& a) {                                      \
        thr_##NAME<<<grid, TB>>>((float)a.xlo, (float)a.xhi, (float*)a.out, a.n);                         \
    }
#define F32B(NAME, REF, BOUND, XLO, XHI, YLO, YHI)                                                        \
    struct NAME##_t {                                                                                     \
        static __device__ __forceinline__ float cuda(float x, float y) { return ::NAME(x, y); }           \
        static __device__ __forceinline__ double refv(double x, double y) { return ::REF(x, y); }         \
    };                                                                                                    \
    extern "C" __global__ void thr_##NAME(float xlo, float xhi, float ylo, float yhi, float* out,         \
                                          uint32_t n) {                                                   \
        thr_f32b<NAME##_t>(xlo, xhi, ylo, yhi, out, n);                                                   \
    }                                                                                                     \
    extern "C" __global__ void err_##NAME(uint32_t p0, uint32_t n, const float* xs, const float* ys,      \
                                          const float* ours, Red* red) {                                  \
        err_f32b<NAME##_t>(p0, n, xs, ys, ours, red);                                                     \
    }                                                                                                     \
    static void err_launch_##NAME(unsigned grid, const ErrArgs& a) {                                      \
        err_##NAME<<<grid, TB>>>(a.p0, a.n, (const float*)a.xs, (const float*)a.ys, (const float*)a.ours, \
                                 a.red);                                                                  \
    }                                                                                                     \
    static void thr_launch_##NAME(unsigned grid, const ThrArgs& a) {                                      \
        thr_##NAME<<<grid, TB>>>((float)a.xlo, (float)a.xhi, (float)a.ylo, (float)a.yhi, (float*)a.out,   \
                                 a.n);                                                                    \
    }
#define F64U(NAME, BOUND, LO, HI)                                                                         \
    struct NAME##_t {                                                                                     \
        static __device__ __forceinline__ double cuda(double x) { return ::NAME(x); }                     \
    };                                                                                                    \
    extern "C" __global__ void thr_##NAME(double lo, double hi, double* out, uint32_t n) {                \
        thr_f64u<NAME##_t>(lo, hi, out, n);                                                               \
    }                                                                                                     \
    extern "C" __global__ void err_##NAME(uint32_t p0, uint32_t n, const double* xs, const double* ours,  \
                                          Red* red) {                                                     \
        err_f64u<NAME##_t>(p0, n, xs, ours, red);                                                         \
    }                                                                                                     \
    static void err_launch_##NAME(unsigned grid, const ErrArgs& a) {                                      \
        err_##NAME<<<grid, TB>>>(a.p0, a.n, (const double*)a.xs, (const double*)a.ours, a.red);           \
    }                                                                                                     \
    static void thr_launch_##NAME(unsigned grid, const ThrArgs& a) {                                      \
        thr_##NAME<<<grid, TB>>>(a.xlo, a.xhi, (double*)a.out, a.n);                                      \
    }
#define F64B(NAME, BOUND, XLO, XHI, YLO, YHI)                                                             \
    struct NAME##_t {                                                                                     \
        static __device__ __forceinline__ double cuda(double x, double y) { return ::NAME(x, y); }        \
    };                                                                                                    \
    extern "C" __global__ void thr_##NAME(double xlo, double xhi, double ylo, double yhi, double* out,     \
                                          uint32_t n) {                                                   \
        thr_f64b<NAME##_t>(xlo, xhi, ylo, yhi, out, n);                                                   \
    }                                                                                                     \
    extern "C" __global__ void err_##NAME(uint32_t p0, uint32_t n, const double* xs, const double* ys,    \
                                          const double* ours, Red* red) {                                 \
        err_f64b<NAME##_t>(p0, n, xs, ys, ours, red);                                                     \
    }                                                                                                     \
    static void err_launch_##NAME(unsigned grid, const ErrArgs& a) {                                      \
        err_##NAME<<<grid, TB>>>(a.p0, a.n, (const double*)a.xs, (const double*)a.ys,                     \
                                 (const double*)a.ours, a.red);                                           \
    }                                                                                                     \
    static void thr_launch_##NAME(unsigned grid, const ThrArgs& a) {                                      \
        thr_##NAME<<<grid, TB>>>(a.xlo, a.xhi, a.ylo, a.yhi, (double*)a.out, a.n);                        \
    }
#include "functions.def"
#undef F32U
#undef F32B
#undef F64U
#undef F64B

enum Group { F32U_G, F32B_G, F64U_G, F64B_G };
struct Fn {
    const char* name;
    Group group;
    const char* ref;
    double bound, xlo, xhi, ylo, yhi;
    ErrFn err;
    ThrFn thr;
};
static const Fn FNS[] = {
#define F32U(NAME, REF, BOUND, LO, HI) {#NAME, F32U_G, #REF, BOUND, LO, HI, 0, 0, err_launch_##NAME, thr_launch_##NAME},
#define F32B(NAME, REF, BOUND, XLO, XHI, YLO, YHI) \
    {#NAME, F32B_G, #REF, BOUND, XLO, XHI, YLO, YHI, err_launch_##NAME, thr_launch_##NAME},
#define F64U(NAME, BOUND, LO, HI) {#NAME, F64U_G, "", BOUND, LO, HI, 0, 0, err_launch_##NAME, thr_launch_##NAME},
#define F64B(NAME, BOUND, XLO, XHI, YLO, YHI) \
    {#NAME, F64B_G, "", BOUND, XLO, XHI, YLO, YHI, err_launch_##NAME, thr_launch_##NAME},
#include "functions.def"
#undef F32U
#undef F32B
#undef F64U
#undef F64B
};

// ---- host ----
struct Slice {  // &[T] and DisjointSlice<T>: (ptr, len), 16 bytes aligned to 8
    const void* ptr;
    uint64_t len;
};

struct Options {
    std::string ptx = ".gpu/math/math-bench-kernels.ptx";
    std::string only;
    bool quick = false, accuracy = true, speed = true;
    int chunk_log2 = 28;
    uint64_t pairs = 1ull << 32, f64n = 1ull << 30;
    int rounds = 21;
};

static uint64_t parse_count(const char* s) {
    if (!strncmp(s, "2^", 2)) {
        int k = atoi(s + 2);
        if (k < 0 || k > 32) { fprintf(stderr, "count %s out of range (2^0..2^32)\n", s); exit(1); }
        return 1ull << k;
    }
    char* end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v == 0 || v > (1ull << 32)) { fprintf(stderr, "bad count %s (1..2^32)\n", s); exit(1); }
    return v;
}

static Options parse(int argc, char** argv) {
    Options o;
    auto need = [&](int& i) {
        if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", argv[i]); exit(1); }
        return argv[++i];
    };
    bool pairs_set = false, f64_set = false, chunk_set = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--ptx") o.ptx = need(i);
        else if (a == "--only") o.only = need(i);
        else if (a == "--quick") o.quick = true;
        else if (a == "--chunk-log2") { o.chunk_log2 = atoi(need(i)); chunk_set = true; }
        else if (a == "--pairs") { o.pairs = parse_count(need(i)); pairs_set = true; }
        else if (a == "--f64") { o.f64n = parse_count(need(i)); f64_set = true; }
        else if (a == "--rounds") o.rounds = atoi(need(i));
        else if (a == "--no-accuracy") o.accuracy = false;
        else if (a == "--no-speed") o.speed = false;
        else { fprintf(stderr, "unknown option %s\n", argv[i]); exit(1); }
    }
    if (o.chunk_log2 < 16 || o.chunk_log2 > 30) { fprintf(stderr, "--chunk-log2 must be 16..30\n"); exit(1); }
    if (o.rounds < 1) { fprintf(stderr, "--rounds must be at least 1\n"); exit(1); }
    if (o.quick) {  // small, and several chunks per function
        if (!chunk_set) o.chunk_log2 = 16;
        if (!pairs_set) o.pairs = 1ull << 17;
        if (!f64_set) o.f64n = 1ull << 17;
        o.rounds = std::min(o.rounds, 1);
    }
    return o;
}

static unsigned grid_for(uint64_t n, uint64_t per_block) { return (unsigned)((n + per_block - 1) / per_block); }

// The parameter sizes of a kernel of our module, checked against the signature we launch.
static bool params_match(CUfunction f, const char* name, std::vector<size_t> sizes) {
    // Only the expected parameters are asked for: probing one past the last returns
    // CUDA_ERROR_INVALID_VALUE, which compute-sanitizer counts as an error. (A kernel
    // with extra parameters is caught by the ABI records the lists are built from.)
    for (size_t i = 0; i < sizes.size(); i++) {
        size_t off = 0, sz = 0;
        CUresult r = cuFuncGetParamInfo(f, i, &off, &sz);
        if (r != CUDA_SUCCESS) { fprintf(stderr, "%s: parameter %zu missing\n", name, i); return false; }
        if (sz != sizes[i]) { fprintf(stderr, "%s: parameter %zu is %zu bytes, expected %zu\n", name, i, sz, sizes[i]); return false; }
    }
    return true;
}

struct Result {
    bool present = false;
    float err_ours = 0, err_cuda = 0;
    uint32_t tag_ours = 0, tag_cuda = 0;
    unsigned long long n_ours = 0, n_cuda = 0, count = 0;
    bool within = false, measured = false;
    double ms_ours = 0, ms_cuda = 0;
    bool timed = false;
};

static bool is_f32(Group g) { return g == F32U_G || g == F32B_G; }
static bool is_binary(Group g) { return g == F32B_G || g == F64B_G; }

int main(int argc, char** argv) {
    Options opt = parse(argc, argv);
    auto t_start = std::chrono::steady_clock::now();
    auto secs = [](std::chrono::steady_clock::time_point t0) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    CHECK_CU(cuInit(0));
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));  // the primary context, current for the driver API too
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int drv = 0;
    CHECK_CU(cuDriverGetVersion(&drv));
    printf("math-bench: %s, %d SMs, driver %d.%d%s\n", prop.name, prop.multiProcessorCount, drv / 1000,
           drv % 1000 / 10, opt.quick ? ", --quick" : "");

    // Our module.
    std::ifstream file(opt.ptx);
    std::stringstream text;
    text << file.rdbuf();
    std::string ptx = text.str();
    if (ptx.empty()) { fprintf(stderr, "cannot read %s\n", opt.ptx.c_str()); return 1; }
    CUmodule module;
    {
        static char log[1 << 14];
        CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void* vals[] = {log, (void*)(uintptr_t)sizeof(log)};
        auto t0 = std::chrono::steady_clock::now();
        CUresult r = cuModuleLoadDataEx(&module, ptx.c_str(), 2, keys, vals);
        if (r != CUDA_SUCCESS) {
            const char* m = nullptr;
            cuGetErrorString(r, &m);
            fprintf(stderr, "loading %s: %s\n%s\n", opt.ptx.c_str(), m ? m : "?", log);
            return 1;
        }
        printf("loaded %s (%zu bytes) in %.2f s\n", opt.ptx.c_str(), ptx.size(), secs(t0));
    }

    const size_t nfn = sizeof(FNS) / sizeof(FNS[0]);
    std::vector<Result> res(nfn);
    std::vector<CUfunction> acc(nfn), thr(nfn);
    bool any = false, harness_ok = true;
    for (size_t k = 0; k < nfn; k++) {
        const Fn& f = FNS[k];
        if (!opt.only.empty() && opt.only != f.name) continue;
        any = true;
        std::string a = std::string("acc_") + f.name, t = std::string("thr_") + f.name;
        CUresult ra = cuModuleGetFunction(&acc[k], module, a.c_str());
        CUresult rt = cuModuleGetFunction(&thr[k], module, t.c_str());
        if (ra == CUDA_ERROR_NOT_FOUND && rt == CUDA_ERROR_NOT_FOUND) continue;  // missing
        CHECK_CU(ra);
        CHECK_CU(rt);
        std::vector<size_t> pa, pt;
        switch (f.group) {
            case F32U_G: pa = {4, 4, 16}; pt = {4, 4, 16}; break;
            case F32B_G: pa = {16, 16, 16}; pt = {4, 4, 4, 4, 16}; break;
            case F64U_G: pa = {16, 16}; pt = {8, 8, 16}; break;
            case F64B_G: pa = {16, 16, 16}; pt = {8, 8, 8, 8, 16}; break;
        }
        if (!params_match(acc[k], a.c_str(), pa) || !params_match(thr[k], t.c_str(), pt)) { harness_ok = false; continue; }
        res[k].present = true;
    }
    if (!any) { fprintf(stderr, "--only %s: no such function in functions.def\n", opt.only.c_str()); return 1; }
    if (!harness_ok) { fprintf(stderr, "kernel signatures do not match\n"); return 1; }

    // Buffers: a chunk of outputs (f64) and inputs, the reduction record, throughput outputs.
    const uint64_t chunk = 1ull << opt.chunk_log2;
    void *out, *xs, *ys;
    Red* red;
    unsigned long long* poison_count;
    CHECK(cudaMalloc(&out, chunk * 8));
    CHECK(cudaMalloc(&xs, chunk * 8));
    CHECK(cudaMalloc(&ys, chunk * 8));
    CHECK(cudaMalloc(&red, sizeof(Red)));
    CHECK(cudaMalloc(&poison_count, sizeof(unsigned long long)));
    const uint64_t evals = opt.quick ? 1ull << 16 : 1ull << 28, threads = evals / K;
    void *tout_ours, *tout_cuda;
    CHECK(cudaMalloc(&tout_ours, threads * 8));
    CHECK(cudaMalloc(&tout_cuda, threads * 8));

    auto launch_ours = [&](CUfunction f, uint64_t n, std::vector<void*> params) {
        CHECK_CU(cuLaunchKernel(f, grid_for(n, TB), 1, 1, TB, 1, 1, 0, nullptr, params.data(), nullptr));
    };

    // ---- a, b: accuracy ----
    const uint64_t f32u_total = opt.quick ? 1ull << 18 : 1ull << 32;
    const uint32_t f32u_stride = opt.quick ? 16385 : 1;  // odd: distinct inputs
    if (opt.accuracy) {
        auto t_acc = std::chrono::steady_clock::now();
        int header = -1;
        for (size_t k = 0; k < nfn; k++) {
            const Fn& f = FNS[k];
            Result& r = res[k];
            if (!opt.only.empty() && opt.only != f.name) continue;
            if (header != (int)f.group) {
                header = f.group;
                switch (f.group) {
                    case F32U_G:
                        printf("\nf32 unary: max error in f32 ulps against CUDA's f64 function of the exact input, all %llu inputs%s\n",
                               (unsigned long long)f32u_total, opt.quick ? " of a strided sample" : "");
                        break;
                    case F32B_G:
                        printf("\nf32 binary: the same, over %llu pairs (1/4 random bits, 1/4 (bits, uniform y), 1/2 uniform)\n",
                               (unsigned long long)opt.pairs);
                        break;
                    case F64U_G:
                    case F64B_G:
                        printf("\nf64 %s: max ulp DIFFERENCE to CUDA's f64 function (not an error), over %llu inputs (1/4 random bits, 3/4 uniform)\n",
                               f.group == F64U_G ? "unary" : "binary", (unsigned long long)opt.f64n);
                        break;
                }
                if (is_f32(f.group))
                    printf("%-11s %12s  %-44s %12s %5s %-6s %s\n", "function", "ours ulp", "at input", "CUDA ulp",
                           "bound", "within", "spec ours/CUDA");
                else
                    printf("%-11s %12s  %-44s %12s %5s %-6s\n", "function", "diff ulp", "at input", "differing",
                           "bound", "within");
            }
            if (!r.present) {
                printf("%-11s missing from the PTX\n", f.name);
                continue;
            }
            auto t0 = std::chrono::steady_clock::now();
            CHECK(cudaMemset(red, 0, sizeof(Red)));
            uint64_t total = f.group == F32U_G ? f32u_total : f.group == F32B_G ? opt.pairs : opt.f64n;
            size_t esz = is_f32(f.group) ? 4 : 8;
            for (uint64_t j0 = 0; j0 < total; j0 += chunk) {
                uint32_t n = (uint32_t)std::min(chunk, total - j0);
                ErrArgs ea{0, 0, n, (uint32_t)j0, xs, ys, out, red};
                unsigned ggen = grid_for(n, TB * ELEMS);
                switch (f.group) {
                    case F32U_G: break;
                    case F32B_G:
                        gen_f32b<<<ggen, TB>>>(j0, n, (float)f.xlo, (float)f.xhi, (float)f.ylo, (float)f.yhi, (float*)xs, (float*)ys);
                        break;
                    case F64U_G: gen_f64u<<<ggen, TB>>>(j0, n, f.xlo, f.xhi, (double*)xs); break;
                    case F64B_G: gen_f64b<<<ggen, TB>>>(j0, n, f.xlo, f.xhi, f.ylo, f.yhi, (double*)xs, (double*)ys); break;
                }
                CHECK_LAUNCH();
                CHECK(cudaMemsetAsync(out, 0xff, n * esz));
                Slice so{out, n}, sx{xs, n}, sy{ys, n};
                if (f.group == F32U_G) {
                    ea.base = (uint32_t)(j0 * f32u_stride);
                    ea.stride = f32u_stride;
                    launch_ours(acc[k], n, {&ea.base, &ea.stride, &so});
                } else if (is_binary(f.group)) {
                    launch_ours(acc[k], n, {&sx, &sy, &so});
                } else {
                    launch_ours(acc[k], n, {&sx, &so});
                }
                f.err(ggen, ea);
                CHECK_LAUNCH();
            }
            Red h;
            CHECK(cudaMemcpy(&h, red, sizeof(Red), cudaMemcpyDeviceToHost));
            r.measured = true;
            r.err_ours = f32_of((uint32_t)(h.ours >> 32));
            r.err_cuda = f32_of((uint32_t)(h.cuda >> 32));
            r.tag_ours = (uint32_t)h.ours;
            r.tag_cuda = (uint32_t)h.cuda;
            r.n_ours = h.n_ours;
            r.n_cuda = h.n_cuda;
            r.count = total;
            // f32: within bound + 0.5 against the exact value (plus the reference's own ~2^-28).
            r.within = is_f32(f.group) ? r.err_ours <= f.bound + 0.5 + 1e-6 : r.err_ours <= 2 * f.bound;
            char at[96] = "-";
            uint32_t p = r.tag_ours;
            if (r.err_ours > 0) {
                switch (f.group) {
                    case F32U_G: snprintf(at, sizeof at, "0x%08x (%.9g)", p, f32_of(p)); break;
                    case F32B_G: {
                        float x, y;
                        acc_pair_f32(p, (float)f.xlo, (float)f.xhi, (float)f.ylo, (float)f.yhi, &x, &y);
                        snprintf(at, sizeof at, "0x%08x,0x%08x (%.9g, %.9g)", bits_of(x), bits_of(y), x, y);
                        break;
                    }
                    case F64U_G: {
                        double x = acc_f64(p, f.xlo, f.xhi);
                        snprintf(at, sizeof at, "0x%016llx (%.17g)", (unsigned long long)bits_of(x), x);
                        break;
                    }
                    case F64B_G: {
                        double x, y;
                        acc_pair_f64(p, f.xlo, f.xhi, f.ylo, f.yhi, &x, &y);
                        snprintf(at, sizeof at, "(%.17g, %.17g)", x, y);
                        break;
                    }
                }
            }
            if (is_f32(f.group))
                printf("%-11s %12.3f  %-44s %12.3f %5g %-6s %llu/%llu  (%.1f s)\n", f.name, r.err_ours, at, r.err_cuda,
                       f.bound, r.within ? "yes" : "NO", r.n_ours, r.n_cuda, secs(t0));
            else
                printf("%-11s %12.3f  %-44s %12llu %5g %-6s (%.1f s)\n", f.name, r.err_ours, at, r.n_ours, f.bound,
                       r.within ? "yes" : "NO", secs(t0));
            fflush(stdout);
        }
        printf("accuracy: %.1f s\n", secs(t_acc));
    }

    // ---- c: throughput ----
    bool poison_ok = true;
    if (opt.speed) {
        auto t_thr = std::chrono::steady_clock::now();
        printf("\nthroughput: %llu evaluations per launch, %d threads per block, %d warm-up + %d rounds, median ms\n",
               (unsigned long long)evals, TB, 3, opt.rounds);
        printf("%-11s %10s %10s %8s\n", "function", "ours ms", "CUDA ms", "CUDA/ours");
        cudaEvent_t e0, e1;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        for (size_t k = 0; k < nfn; k++) {
            const Fn& f = FNS[k];
            Result& r = res[k];
            if (!r.present) continue;
            size_t esz = is_f32(f.group) ? 4 : 8;
            float xlo = (float)f.xlo, xhi = (float)f.xhi, ylo = (float)f.ylo, yhi = (float)f.yhi;
            double dxlo = f.xlo, dxhi = f.xhi, dylo = f.ylo, dyhi = f.yhi;
            Slice so{tout_ours, threads};
            std::vector<void*> params;
            switch (f.group) {
                case F32U_G: params = {&xlo, &xhi, &so}; break;
                case F32B_G: params = {&xlo, &xhi, &ylo, &yhi, &so}; break;
                case F64U_G: params = {&dxlo, &dxhi, &so}; break;
                case F64B_G: params = {&dxlo, &dxhi, &dylo, &dyhi, &so}; break;
            }
            ThrArgs ta{f.xlo, f.xhi, f.ylo, f.yhi, tout_cuda, (uint32_t)threads};
            std::vector<float> ms[2];
            for (int round = 0; round < 3 + opt.rounds; round++) {
                CHECK(cudaMemsetAsync(tout_ours, 0xff, threads * esz));
                CHECK(cudaMemsetAsync(tout_cuda, 0xff, threads * esz));
                for (int s = 0; s < 2; s++) {
                    int who = (round + s) % 2;  // 0 ours, 1 CUDA; alternate who goes first
                    CHECK(cudaEventRecord(e0));
                    if (who == 0) launch_ours(thr[k], threads, params);
                    else { f.thr(grid_for(threads, TB), ta); CHECK_LAUNCH(); }
                    CHECK(cudaEventRecord(e1));
                    CHECK(cudaEventSynchronize(e1));
                    float x;
                    CHECK(cudaEventElapsedTime(&x, e0, e1));
                    if (round >= 3) ms[who].push_back(x);
                }
            }
            // Every thread's sum written (a NaN sum is 0x7fffffff, never all ones).
            CHECK(cudaMemset(poison_count, 0, sizeof(unsigned long long)));
            for (void* buf : {tout_ours, tout_cuda}) {
                if (esz == 4) count_poison<uint32_t><<<grid_for(threads, TB * ELEMS), TB>>>((const uint32_t*)buf, (uint32_t)threads, poison_count);
                else count_poison<uint64_t><<<grid_for(threads, TB * ELEMS), TB>>>((const uint64_t*)buf, (uint32_t)threads, poison_count);
                CHECK_LAUNCH();
            }
            unsigned long long left = 0;
            CHECK(cudaMemcpy(&left, poison_count, sizeof left, cudaMemcpyDeviceToHost));
            for (auto& v : ms) std::sort(v.begin(), v.end());
            r.ms_ours = ms[0][ms[0].size() / 2];
            r.ms_cuda = ms[1][ms[1].size() / 2];
            r.timed = true;
            printf("%-11s %10.4f %10.4f %8.2f%s\n", f.name, r.ms_ours, r.ms_cuda, r.ms_cuda / r.ms_ours,
                   left ? "  UNWRITTEN OUTPUTS" : "");
            if (left) poison_ok = false;
            fflush(stdout);
        }
        printf("throughput: %.1f s\n", secs(t_thr));
    }

    // ---- d: identity hashes ----
    {
        std::vector<unsigned char> host(SAMPLE_N * 8);
        std::vector<float> hx(SAMPLE_N), hy(SAMPLE_N);
        std::vector<double> dx(SAMPLE_N), dy(SAMPLE_N);
        printf("\n");
        for (size_t k = 0; k < nfn; k++) {
            const Fn& f = FNS[k];
            if (!res[k].present) continue;
            size_t esz = is_f32(f.group) ? 4 : 8;
            Slice so{out, SAMPLE_N}, sx{xs, SAMPLE_N}, sy{ys, SAMPLE_N};
            CHECK(cudaMemset(out, 0xff, SAMPLE_N * esz));
            switch (f.group) {
                case F32U_G: {
                    uint32_t base = 0, stride = SAMPLE_STRIDE;
                    launch_ours(acc[k], SAMPLE_N, {&base, &stride, &so});
                    break;
                }
                case F32B_G:
                    for (uint32_t j = 0; j < SAMPLE_N; j++) sample_f32_pair(j, &hx[j], &hy[j]);
                    CHECK(cudaMemcpy(xs, hx.data(), SAMPLE_N * 4, cudaMemcpyHostToDevice));
                    CHECK(cudaMemcpy(ys, hy.data(), SAMPLE_N * 4, cudaMemcpyHostToDevice));
                    launch_ours(acc[k], SAMPLE_N, {&sx, &sy, &so});
                    break;
                case F64U_G:
                    for (uint32_t j = 0; j < SAMPLE_N; j++) dx[j] = sample_f64(j);
                    CHECK(cudaMemcpy(xs, dx.data(), SAMPLE_N * 8, cudaMemcpyHostToDevice));
                    launch_ours(acc[k], SAMPLE_N, {&sx, &so});
                    break;
                case F64B_G:
                    for (uint32_t j = 0; j < SAMPLE_N; j++) sample_f64_pair(j, &dx[j], &dy[j]);
                    CHECK(cudaMemcpy(xs, dx.data(), SAMPLE_N * 8, cudaMemcpyHostToDevice));
                    CHECK(cudaMemcpy(ys, dy.data(), SAMPLE_N * 8, cudaMemcpyHostToDevice));
                    launch_ours(acc[k], SAMPLE_N, {&sx, &sy, &so});
                    break;
            }
            CHECK(cudaMemcpy(host.data(), out, SAMPLE_N * esz, cudaMemcpyDeviceToHost));
            // NaN payloads are not compared (sample.rs's canonical_f32/f64): every NaN as
            // the all-ones-but-sign pattern.
            for (size_t j = 0; j < SAMPLE_N; j++) {
                if (esz == 4) {
                    uint32_t b; memcpy(&b, &host[4 * j], 4);
                    if ((b & 0x7fffffffu) > 0x7f800000u) { b = 0x7fffffffu; memcpy(&host[4 * j], &b, 4); }
                } else {
                    uint64_t b; memcpy(&b, &host[8 * j], 8);
                    if ((b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) {
                        b = 0x7fffffffffffffffull; memcpy(&host[8 * j], &b, 8);
                    }
                }
            }
            printf("hash %s %016llx\n", f.name, (unsigned long long)fnv1a(FNV_OFFSET, host.data(), SAMPLE_N * esz));
        }
    }
    CHECK(cudaDeviceSynchronize());

    // ---- e: summary ----
    int a32 = 0, b32 = 0, a64 = 0, b64 = 0;
    std::string bad32, bad64;
    double lg32 = 0, lg64 = 0;
    int n32 = 0, n64 = 0;
    double worst = INFINITY;
    const char* worst_name = "-";
    for (size_t k = 0; k < nfn; k++) {
        const Fn& f = FNS[k];
        const Result& r = res[k];
        if (!opt.only.empty() && opt.only != f.name) continue;
        bool f32 = is_f32(f.group);
        (f32 ? b32 : b64)++;
        std::string& bad = f32 ? bad32 : bad64;
        if (!r.present) bad += std::string(" ") + f.name + "(missing)";
        else if (opt.accuracy && !r.within) bad += std::string(" ") + f.name;
        else if (opt.accuracy) (f32 ? a32 : a64)++;
        if (r.timed) {
            double ratio = r.ms_cuda / r.ms_ours;
            (f32 ? lg32 : lg64) += log(ratio);
            (f32 ? n32 : n64)++;
            if (ratio < worst) { worst = ratio; worst_name = f.name; }
        }
    }
    auto geo = [](double lg, int n) {
        char b[32];
        if (n) snprintf(b, sizeof b, "%.2f", exp(lg / n));
        else snprintf(b, sizeof b, "n/a");
        return std::string(b);
    };
    bool pass = true;
    if (opt.accuracy) {
        if (b32) {
            printf("%s accuracy f32: %d/%d within bound%s%s\n", bad32.empty() ? "PASS" : "FAIL", a32, b32,
                   bad32.empty() ? "" : "; not:", bad32.c_str());
            pass &= bad32.empty();
        }
        if (b64) {
            printf("%s accuracy f64: %d/%d differ from CUDA by at most twice its bound%s%s\n", bad64.empty() ? "PASS" : "FAIL",
                   a64, b64, bad64.empty() ? "" : "; not:", bad64.c_str());
            pass &= bad64.empty();
        }
    }
    if (opt.speed) {
        printf("%s throughput outputs all written\n", poison_ok ? "PASS" : "FAIL");
        pass &= poison_ok;
    }
    char worst_s[32] = "n/a";
    if (worst_name[0] != '-') snprintf(worst_s, sizeof worst_s, "%.2f", worst);
    std::string acc32 = opt.accuracy ? std::to_string(a32) + "/" + std::to_string(b32) : "n/a";
    std::string acc64 = opt.accuracy ? std::to_string(a64) + "/" + std::to_string(b64) : "n/a";
    printf("math bars: accuracy f32 %s within bound, f64 %s; speed geomean f32 %s, f64 %s, worst %s (%s); "
           "emulator identical n/a\n",
           acc32.c_str(), acc64.c_str(), geo(lg32, n32).c_str(), geo(lg64, n64).c_str(), worst_s, worst_name);
    printf("total %.1f s\n", secs(t_start));
    CHECK(cudaFree(out));
    CHECK(cudaFree(xs));
    CHECK(cudaFree(ys));
    CHECK(cudaFree(red));
    CHECK(cudaFree(poison_count));
    CHECK(cudaFree(tout_ours));
    CHECK(cudaFree(tout_cuda));
    CHECK_CU(cuModuleUnload(module));
    return pass ? 0 : 2;
}
