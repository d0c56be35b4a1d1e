// CUDA C++ side of the graph benchmark (`graph-bench`, benches/gpu/host/src/bin):
// the chain of `steps` dependent vecadd_ref launches (reference.cu) ping-ponging
// between x0 and x1, as a plain launch loop and as a stream-captured CUDA graph.
// Built on the GPU machine as a shared library and called by the Rust host in the
// same process, on the same stream and context (the device's primary context):
//   nvcc -O3 -arch=sm_90 -Xcompiler -fPIC -shared graph_reference.cu -o libgraphref.so -lcuda
// (-DGRAPHREF_NO_DRIVER where libcuda cannot be linked: graphref_driver_loop is left out).
#include "reference.cu"
#include <cuda_runtime.h>
#ifndef GRAPHREF_NO_DRIVER
#include <cuda.h>
#endif

extern "C" {

// x[(i+1)%2] = x[i%2] + b for i < steps, launched one by one (cudaLaunchKernel).
int graphref_loop(void* stream, const float* b, float* x0, float* x1,
                  unsigned long long n, int steps, unsigned grid, unsigned block) {
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    float* x[2] = {x0, x1};
    for (int i = 0; i < steps; ++i)
        vecadd_ref<<<grid, block, 0, s>>>(x[i % 2], b, x[(i + 1) % 2], n);
    return static_cast<int>(cudaGetLastError());
}

// The same chain through the driver API, from C++ linked against libcuda: `func` is a
// CUfunction of vecadd_ref (n as its fourth parameter) that the Rust host loaded, so the
// cost of `cuLaunchKernel` itself can be told from the runtime's `<<<>>>` and from the
// same call through Rust's dynamically loaded entry point (launch-bench).
#ifndef GRAPHREF_NO_DRIVER
int graphref_driver_loop(void* func, void* stream, unsigned long long b,
                         unsigned long long x0, unsigned long long x1,
                         unsigned long long n, int steps, unsigned grid, unsigned block) {
    CUdeviceptr x[2] = {x0, x1};
    CUdeviceptr bb = b;
    for (int i = 0; i < steps; ++i) {
        void* params[4] = {&x[i % 2], &bb, &x[(i + 1) % 2], &n};
        CUresult r = cuLaunchKernel(static_cast<CUfunction>(func), grid, 1, 1, block, 1, 1, 0,
                                    static_cast<CUstream>(stream), params, nullptr);
        if (r != CUDA_SUCCESS) return 10000 + static_cast<int>(r);
    }
    return 0;
}
#endif

// The same chain captured into a graph (thread-local capture mode) and instantiated.
int graphref_capture(void* stream, const float* b, float* x0, float* x1,
                     unsigned long long n, int steps, unsigned grid, unsigned block,
                     void** out_exec) {
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) return static_cast<int>(e);
    float* x[2] = {x0, x1};
    for (int i = 0; i < steps; ++i)
        vecadd_ref<<<grid, block, 0, s>>>(x[i % 2], b, x[(i + 1) % 2], n);
    cudaGraph_t graph = nullptr;
    e = cudaStreamEndCapture(s, &graph);
    if (e != cudaSuccess) return static_cast<int>(e);
    cudaGraphExec_t exec = nullptr;
    e = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    if (e != cudaSuccess) return static_cast<int>(e);
    *out_exec = exec;
    return 0;
}

int graphref_launch(void* exec, void* stream) {
    return static_cast<int>(
        cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec), static_cast<cudaStream_t>(stream)));
}

int graphref_upload(void* exec, void* stream) {
    return static_cast<int>(
        cudaGraphUpload(static_cast<cudaGraphExec_t>(exec), static_cast<cudaStream_t>(stream)));
}

int graphref_destroy(void* exec) {
    return static_cast<int>(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec)));
}

}  // extern "C"

// The chain's kernel written for programmatic dependent launch (the Rust vecadd_pdl):
// one element per thread; lets the next launch start at once and waits for the previous
// one before touching memory.
extern "C" __global__ void vecadd_pdl_ref(const float* __restrict__ a,
                                          const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
    cudaTriggerProgrammaticLaunchCompletion();
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    cudaGridDependencySynchronize();
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" {

// The chain of vecadd_pdl_ref, launched one by one with cudaLaunchKernelEx, with the
// programmatic stream serialization attribute when `pdl` is non-zero.
int graphref_pdl_loop(void* stream, const float* b, float* x0, float* x1,
                      unsigned long long n, int steps, unsigned grid, unsigned block, int pdl) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.stream = static_cast<cudaStream_t>(stream);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    float* x[2] = {x0, x1};
    for (int i = 0; i < steps; ++i) {
        cudaError_t e = cudaLaunchKernelEx(&cfg, vecadd_pdl_ref, (const float*)x[i % 2], b,
                                           x[(i + 1) % 2], n);
        if (e != cudaSuccess) return static_cast<int>(e);
    }
    return 0;
}

}  // extern "C"
