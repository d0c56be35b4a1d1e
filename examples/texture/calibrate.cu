// Texture-unit reference samples: what the GPU's texture unit returns for fixed
// textures and coordinates, written to a file that the emulator's tests compare with
// (device_std::emulator::texture; examples/texture/gpu-samples.bin).
//
// Every texel and coordinate comes from splitmix64 with a fixed seed per case, so the
// Rust side regenerates them exactly; the file holds only the results, in case order:
// for each case, `n` fetches of `channels` floats (little-endian f32).
//
//   nvcc -O3 -arch=sm_90 -o calibrate examples/texture/calibrate.cu && ./calibrate OUT.bin [N]
//
// N fetches per case (default 2048); the first k fetches of a case do not depend on N.
// The committed gpu-samples-256.bin is N = 256 from an H100.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                    \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi) with 24 random bits.
  float uniform(float lo, float hi) { return lo + (hi - lo) * (float)(next() >> 40) * (1.0f / 16777216.0f); }
};

// Case parameters, mirrored by the Rust test (same order).
struct Case {
  int format;      // 0: f32 x1, 1: u8 x4 read as normalized float
  int dims;        // 1, 2, 3
  int w, h, d;     // extent in texels
  int linear;      // 0: point, 1: linear filtering
  int normalized;  // normalized coordinates
  int address;     // cudaAddressModeWrap 0, Clamp 1, Mirror 2, Border 3
  int n;           // fetches
};

__global__ void fetch(cudaTextureObject_t t, int dims, int ch, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 v;
  if (ch == 1) {
    float s = dims == 1 ? tex1D<float>(t, c[3 * i])
            : dims == 2 ? tex2D<float>(t, c[3 * i], c[3 * i + 1])
                        : tex3D<float>(t, c[3 * i], c[3 * i + 1], c[3 * i + 2]);
    v = make_float4(s, 0, 0, 0);
  } else {
    v = dims == 1 ? tex1D<float4>(t, c[3 * i])
      : dims == 2 ? tex2D<float4>(t, c[3 * i], c[3 * i + 1])
                  : tex3D<float4>(t, c[3 * i], c[3 * i + 1], c[3 * i + 2]);
  }
  for (int k = 0; k < ch; k++) out[ch * i + k] = (&v.x)[k];
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "gpu-samples.bin";
  int per_case = argc > 2 ? atoi(argv[2]) : 2048;
  std::vector<Case> cases;
  int shapes[3][3] = {{100, 1, 1}, {37, 23, 1}, {9, 7, 5}};
  for (int format = 0; format < 2; format++)
    for (int dims = 1; dims <= 3; dims++)
      for (int linear = 0; linear < 2; linear++)
        for (int normalized = 0; normalized < 2; normalized++)
          for (int address = 0; address < 4; address++)
            cases.push_back({format, dims, shapes[dims - 1][0], shapes[dims - 1][1], shapes[dims - 1][2],
                             linear, normalized, address, per_case});
  FILE* f = fopen(path, "wb");
  if (!f) { perror(path); return 1; }
  size_t total = 0;
  for (size_t ci = 0; ci < cases.size(); ci++) {
    const Case& k = cases[ci];
    Rng rng{0x7e47u + ci};
    int ch = k.format == 0 ? 1 : 4;
    size_t texels = (size_t)k.w * k.h * k.d;
    cudaChannelFormatDesc cf = k.format == 0 ? cudaCreateChannelDesc<float>() : cudaCreateChannelDesc<uchar4>();
    std::vector<float> tf(texels);
    std::vector<uint8_t> tb(texels * 4);
    for (size_t i = 0; i < texels; i++) tf[i] = rng.uniform(-2.0f, 2.0f);
    for (size_t i = 0; i < texels * 4; i++) tb[i] = (uint8_t)(rng.next() >> 56);
    cudaArray_t arr;
    cudaExtent ext = make_cudaExtent(k.w, k.dims >= 2 ? k.h : 0, k.dims == 3 ? k.d : 0);
    CHECK(cudaMalloc3DArray(&arr, &cf, ext));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(k.format == 0 ? (void*)tf.data() : (void*)tb.data(),
                                   k.w * (k.format == 0 ? 4 : 4), k.w, k.h);
    p.dstArray = arr;
    p.extent = make_cudaExtent(k.w, k.h, k.d);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = arr;
    cudaTextureDesc td = {};
    for (int a = 0; a < 3; a++) td.addressMode[a] = (cudaTextureAddressMode)k.address;
    td.filterMode = k.linear ? cudaFilterModeLinear : cudaFilterModePoint;
    td.readMode = k.format == 0 ? cudaReadModeElementType : cudaReadModeNormalizedFloat;
    td.normalizedCoords = k.normalized;
    td.borderColor[0] = td.borderColor[1] = td.borderColor[2] = td.borderColor[3] = 0.0f;
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &rd, &td, nullptr));
    // Coordinates: a margin of a third of the extent on each side, 24 random bits.
    std::vector<float> c(3 * k.n);
    int ext3[3] = {k.w, k.h, k.d};
    for (int i = 0; i < k.n; i++)
      for (int a = 0; a < 3; a++) {
        float lo = k.normalized ? -0.35f : -0.35f * ext3[a], hi = k.normalized ? 1.35f : 1.35f * ext3[a];
        c[3 * i + a] = rng.uniform(lo, hi);
      }
    float *dc, *dout;
    CHECK(cudaMalloc(&dc, c.size() * 4));
    CHECK(cudaMalloc(&dout, (size_t)k.n * ch * 4));
    CHECK(cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dout, 0xff, (size_t)k.n * ch * 4));
    fetch<<<(k.n + 127) / 128, 128>>>(t, k.dims, ch, dc, dout, k.n);
    CHECK(cudaGetLastError());
    std::vector<float> out((size_t)k.n * ch);
    CHECK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
    fwrite(out.data(), 4, out.size(), f);
    total += out.size();
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(dc));
    CHECK(cudaFree(dout));
  }
  fclose(f);
  printf("calibrate: %zu cases, %zu floats -> %s\n", cases.size(), total, path);
  return 0;
}
