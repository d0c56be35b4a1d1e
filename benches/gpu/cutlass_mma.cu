// The mma.sync reference for gemm_mma (issue 15): CUTLASS's sm80 tensor-op GEMM
// (mma.sync.m16n8k16, cp.async multistage pipeline, ldmatrix), the same operands as
// gemm_mma and the gemm_bf16 case of gpu-bench: c = a · bᵀ, a m × k row-major, b n × k
// row-major (CUTLASS ColumnMajor k × n), c m × n row-major bf16, f32 accumulation,
// timed against cuBLAS (cublasGemmEx, bf16 in/out, f32 compute) interleaved in one
// process, at 4096³ and 8192³. One block shape per binary, picked by -DCFG=0..4 (the
// table below; 0 is gemm_mma's).
//
// Optionally also times kernels of a linked PTX module with gemm_mma's signature and
// launch (`cutlass_mma PTX NAME...`, e.g. target/ptx/mma_gemm-kernels.ptx gemm_mma:
// 128 × 256 tiles, 256 threads, 96 KiB of dynamic shared memory) in the same
// round-robin, so that all of them run under the same clocks and power limit.
//
// CUTLASS is header-only and not vendored: copy a checkout's include/ (NVIDIA/cutlass at
// 7107b05 was used) to .gpu/cutlass/include here, carry .gpu, and build on the GPU
// machine from benches/gpu:
//   nvcc -O3 -std=c++17 -arch=sm_90 -DCFG=0 -I ../../.gpu/cutlass/include cutlass_mma.cu \
//     -lcublas -lcuda -o /tmp/cut0
//   /tmp/cut0 ../../.gpu/bench/mma_gemm-kernels.ptx gemm_mma   # after scripts/stage-bench.sh
// SOLO=1 adds, at 8192³, each kernel alone for 600 launches (the median of the last 300)
// with wall-clock times to line up against `nvidia-smi -lms 50` (clocks and power).
// Prints, per size and kernel: the median ms and TFLOP/s of 21 interleaved rounds (after
// 3 warm-up rounds), the ratio to cuBLAS, and the largest error on 512 sampled elements
// against an f64 CPU reference, relative to the sum of the products' magnitudes.
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <random>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)
#define CHECK_CU(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char* m = nullptr; \
    cuGetErrorString(r, &m); fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, m ? m : "?"); exit(1); } } while (0)
#define CHECK_BLAS(x) do { cublasStatus_t s = (x); if (s != CUBLAS_STATUS_SUCCESS) { \
    fprintf(stderr, "%s:%d: cuBLAS status %d\n", __FILE__, __LINE__, int(s)); exit(1); } } while (0)

#ifndef CFG
#define CFG 0
#endif

// Block tile (m, n, k), warp tile (m, n), stages.
#if CFG == 0
constexpr int BM = 128, BN = 256, BK = 32, WM = 64, WN = 64, STAGES = 4;  // gemm_mma's shape
#elif CFG == 1
constexpr int BM = 128, BN = 256, BK = 64, WM = 64, WN = 64, STAGES = 3;  // CUTLASS's sm80 bf16 default
#elif CFG == 2
constexpr int BM = 256, BN = 128, BK = 64, WM = 64, WN = 64, STAGES = 3;
#elif CFG == 3
constexpr int BM = 128, BN = 128, BK = 64, WM = 64, WN = 64, STAGES = 3;  // 2 blocks per SM
#elif CFG == 4
constexpr int BM = 256, BN = 128, BK = 32, WM = 64, WN = 64, STAGES = 4;
#else
#error "CFG must be 0..4"
#endif

using E = cutlass::bfloat16_t;
using Gemm = cutlass::gemm::device::Gemm<
    E, cutlass::layout::RowMajor,     // a: m × k
    E, cutlass::layout::ColumnMajor,  // b: k × n column-major = n × k row-major
    E, cutlass::layout::RowMajor,     // c: m × n
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<BM, BN, BK>, cutlass::gemm::GemmShape<WM, WN, BK>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<E, 8, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>, STAGES>;

static float bf(uint16_t bits) {
    uint32_t w = uint32_t(bits) << 16;
    float f;
    memcpy(&f, &w, 4);
    return f;
}

int main(int argc, char** argv) {
    printf("cutlass_mma cfg %d: block %d x %d x %d, warp %d x %d, %d stages, %d threads, smem %zu B\n",
           CFG, BM, BN, BK, WM, WN, STAGES, int(Gemm::GemmKernel::kThreadCount),
           sizeof(typename Gemm::GemmKernel::SharedStorage));
    // The Rust kernels: (ptr, len) slices, then m, n, k; 128 x 256 tiles, 256 threads,
    // 96 KiB of dynamic shared memory (examples/mma_gemm's MMA shape).
    CHECK(cudaFree(nullptr));  // the primary context, shared with the runtime
    const unsigned smem = 98304;  // gemm_mma's dynamic shared memory (96 KiB)
    std::vector<std::pair<std::string, CUfunction>> rust;
    if (argc > 1) {
        std::ifstream f(argv[1]);
        std::stringstream text;
        text << f.rdbuf();
        std::string ptx = text.str();
        if (ptx.empty()) { fprintf(stderr, "cannot read %s\n", argv[1]); return 1; }
        CUmodule module;
        CHECK_CU(cuModuleLoadData(&module, ptx.c_str()));
        for (int i = 2; i < argc; i++) {
            CUfunction fn;
            CHECK_CU(cuModuleGetFunction(&fn, module, argv[i]));
            CHECK_CU(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
            rust.push_back({argv[i], fn});
        }
    }
    cublasHandle_t blas;
    CHECK_BLAS(cublasCreate(&blas));
    const int runs = 21;
    for (int n : {4096, 8192}) {
        size_t nn = size_t(n) * n;
        std::vector<uint16_t> ha(nn), hb(nn);
        std::mt19937 gen(11 + n);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        for (auto* v : {&ha, &hb})
            for (auto& x : *v) {
                __nv_bfloat16 h = __float2bfloat16(dist(gen));
                memcpy(&x, &h, 2);
            }
        E *a, *b, *c_cut, *c_blas;
        CHECK(cudaMalloc(&a, nn * 2));
        CHECK(cudaMalloc(&b, nn * 2));
        CHECK(cudaMalloc(&c_cut, nn * 2));
        CHECK(cudaMalloc(&c_blas, nn * 2));
        CHECK(cudaMemcpy(a, ha.data(), nn * 2, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(b, hb.data(), nn * 2, cudaMemcpyHostToDevice));

        // One CUTLASS operator per output buffer, initialized outside the timed launches.
        Gemm gemm_cut, gemm_blas;
        for (auto [g, c] : {std::make_pair(&gemm_cut, c_cut), std::make_pair(&gemm_blas, c_blas)}) {
            Gemm::Arguments args({n, n, n}, {a, n}, {b, n}, {c, n}, {c, n}, {1.0f, 0.0f});
            if (g->can_implement(args) != cutlass::Status::kSuccess ||
                g->initialize(args) != cutlass::Status::kSuccess) {
                fprintf(stderr, "CUTLASS cannot run %d^3\n", n);
                return 1;
            }
        }
        float one = 1.0f, zero = 0.0f;
        struct Slice { const void* ptr; uint64_t len; };
        std::vector<std::pair<std::string, std::function<void(E*)>>> runners;
        runners.push_back({"cutlass", [&](E* c) {
            if ((c == c_cut ? gemm_cut() : gemm_blas()) != cutlass::Status::kSuccess) {
                fprintf(stderr, "CUTLASS launch failed\n");
                exit(1);
            }
        }});
        for (auto& [name, fn] : rust) {
            CUfunction f = fn;
            runners.push_back({name, [&, f](E* c) {
                Slice sa{a, nn}, sb{b, nn}, sc{c, nn};
                uint32_t m32 = n, n32 = n, k32 = n;
                void* params[] = {&sa, &sb, &sc, &m32, &n32, &k32};
                CHECK_CU(cuLaunchKernel(f, (n / 128) * (n / 256), 1, 1, 256, 1, 1, smem, nullptr, params, nullptr));
            }});
        }
        runners.push_back({"cuBLAS", [&](E* c) {
            CHECK_BLAS(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, b, CUDA_R_16BF,
                                    n, a, CUDA_R_16BF, n, &zero, c, CUDA_R_16BF, n,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }});
        const size_t count = runners.size();

        // Each kernel once into a poisoned output (0xffff is a NaN: an unwritten element
        // fails), checked on 512 sampled elements against f64.
        std::vector<uint16_t> got(nn);
        std::mt19937 pick(7 + n);
        std::vector<std::pair<int, int>> at(512);
        for (auto& p : at) p = {int(pick() % n), int(pick() % n)};
        std::vector<double> worst(count, 0.0);
        for (size_t o = 0; o < count; o++) {
            CHECK(cudaMemset(c_cut, 0xff, nn * 2));
            runners[o].second(c_cut);
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(got.data(), c_cut, nn * 2, cudaMemcpyDeviceToHost));
            for (auto [i, j] : at) {
                double want = 0, scale = 0;
                for (int k = 0; k < n; k++) {
                    double x = double(bf(ha[size_t(i) * n + k])) * bf(hb[size_t(j) * n + k]);
                    want += x;
                    scale += std::fabs(x);
                }
                double g = bf(got[size_t(i) * n + j]);
                double err = std::isfinite(g) ? std::fabs(g - want) / std::max(scale, 1e-30) : INFINITY;
                worst[o] = std::max(worst[o], err);
            }
        }

        cudaEvent_t t0, t1;
        CHECK(cudaEventCreate(&t0));
        CHECK(cudaEventCreate(&t1));
        // One launch of kernel o into c_blas, timed with events (ms).
        auto timed = [&](size_t o) {
            CHECK(cudaEventRecord(t0));
            runners[o].second(c_blas);
            CHECK(cudaEventRecord(t1));
            CHECK(cudaEventSynchronize(t1));
            float x;
            CHECK(cudaEventElapsedTime(&x, t0, t1));
            return x;
        };
        std::vector<std::vector<float>> ms(count);
        for (int round = 0; round < 3 + runs; round++) {
            for (size_t i = 0; i < count; i++) {
                size_t o = (round + i) % count;
                float x = timed(o);
                if (round >= 3) ms[o].push_back(x);
            }
        }
        double flops = 2.0 * n * double(n) * n;
        std::vector<double> med(count);
        for (size_t o = 0; o < count; o++) {
            std::sort(ms[o].begin(), ms[o].end());
            med[o] = ms[o][runs / 2];
        }
        for (size_t o = 0; o < count; o++)
            printf("%d^3  %-14s %.3f ms %6.1f TF/s  /cuBLAS %.3f  err %.2e\n", n,
                   runners[o].first.c_str(), med[o], flops / med[o] / 1e9, med[count - 1] / med[o], worst[o]);
        // SOLO=1: each kernel alone for about 1.5 s (8192^3) after the interleaved rounds:
        // the median of its last 300 launches, with wall-clock times to line up against
        // a power and clock log (nvidia-smi) taken beside it.
        if (getenv("SOLO") && n == 8192) {
            for (size_t o = 0; o < count; o++) {
                std::vector<float> solo;
                auto wall = [] { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); };
                double w0 = wall();
                for (int r = 0; r < 600; r++) {
                    float x = timed(o);
                    if (r >= 300) solo.push_back(x);
                }
                std::sort(solo.begin(), solo.end());
                printf("solo %d^3 %-14s %.3f ms %6.1f TF/s  wall %.2f..%.2f\n", n, runners[o].first.c_str(),
                       solo[solo.size() / 2], flops / solo[solo.size() / 2] / 1e9, w0, wall());
            }
        }
        CHECK(cudaFree(a));
        CHECK(cudaFree(b));
        CHECK(cudaFree(c_cut));
        CHECK(cudaFree(c_blas));
    }
    cublasDestroy(blas);
    return 0;
}
