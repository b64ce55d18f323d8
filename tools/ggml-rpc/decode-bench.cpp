// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// A decode-shaped workload through ggml's RPC backend (tools/bench-ggml-rpc): an MLP of
// L layers of d x d f32 weights, uploaded once (set_tensor in 256 KiB RDMA chunks), then
// T "tokens", each set_tensor(input) + graph_compute + get_tensor(output), the RPC
// commands a llama.cpp decode step makes, each token's input derived from the last
// output.  The same graph runs on the local CPU backend first; the final outputs must
// be bit-identical (exit 2 otherwise).  Prints tokens/s and the upload rate.
//
//   decode-bench [HOST:PORT] [d] [L] [T]        (defaults 127.0.0.1:50052 512 8 200)
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-rpc.h"
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cinttypes>

struct model {
    ggml_context * ctx_w = nullptr;
    std::vector<ggml_tensor *> w;
    ggml_backend_buffer_t buf = nullptr;
};

static uint64_t fnv(const void * p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) { h ^= ((const uint8_t *)p)[i]; h *= 1099511628211ull; }
    return h;
}

static double run(ggml_backend_t be, int d, int L, int T, std::vector<float> & out, double * upload_s) {
    ggml_init_params ip = { ggml_tensor_overhead() * (L + 1), nullptr, true };
    model m;
    m.ctx_w = ggml_init(ip);
    for (int l = 0; l < L; l++) m.w.push_back(ggml_new_tensor_2d(m.ctx_w, GGML_TYPE_F32, d, d));
    auto t0 = std::chrono::steady_clock::now();
    m.buf = ggml_backend_alloc_ctx_tensors(m.ctx_w, be);
    std::vector<float> wd((size_t)d * d);
    uint32_t s = 12345;
    for (int l = 0; l < L; l++) {
        for (auto & x : wd) { s = s * 1664525u + 1013904223u; x = ((s >> 8) / 16777216.0f - 0.5f) * 2.0f / std::sqrt((float)d); }
        ggml_backend_tensor_set(m.w[l], wd.data(), 0, wd.size() * sizeof(float));
    }
    auto t1 = std::chrono::steady_clock::now();
    *upload_s = std::chrono::duration<double>(t1 - t0).count();

    ggml_init_params gp = { ggml_tensor_overhead() * (4 * L + 8) + ggml_graph_overhead(), nullptr, true };
    ggml_context * cg = ggml_init(gp);
    ggml_tensor * x = ggml_new_tensor_1d(cg, GGML_TYPE_F32, d);
    ggml_set_input(x);
    ggml_tensor * h = x;
    for (int l = 0; l < L; l++) h = ggml_add(cg, ggml_gelu(cg, ggml_mul_mat(cg, m.w[l], h)), h);
    ggml_set_output(h);
    ggml_cgraph * gf = ggml_new_graph(cg);
    ggml_build_forward_expand(gf, h);
    ggml_gallocr_t ga = ggml_gallocr_new(ggml_backend_get_default_buffer_type(be));
    ggml_gallocr_alloc_graph(ga, gf);

    std::vector<float> in(d, 0.0f);
    out.assign(d, 0.0f);
    auto t2 = std::chrono::steady_clock::now();
    for (int t = 0; t < T; t++) {
        // the next token's input is derived from the last output, as decoding feeds back
        for (int i = 0; i < d; i++) in[i] = std::tanh(out[i]) + (float)((t * 31 + i) % 17) / 17.0f;
        ggml_backend_tensor_set(x, in.data(), 0, d * sizeof(float));
        if (ggml_backend_graph_compute(be, gf) != GGML_STATUS_SUCCESS) { fprintf(stderr, "compute failed\n"); exit(1); }
        ggml_backend_tensor_get(h, out.data(), 0, d * sizeof(float));
    }
    auto t3 = std::chrono::steady_clock::now();
    ggml_gallocr_free(ga);
    ggml_free(cg);
    ggml_backend_buffer_free(m.buf);
    ggml_free(m.ctx_w);
    return std::chrono::duration<double>(t3 - t2).count();
}

int main(int argc, char ** argv) {
    const char * ep = argc > 1 ? argv[1] : "127.0.0.1:50052";
    int d = argc > 2 ? atoi(argv[2]) : 512;
    int L = argc > 3 ? atoi(argv[3]) : 8;
    int T = argc > 4 ? atoi(argv[4]) : 200;
    ggml_backend_load_all();
    std::vector<float> ref, got;
    double up;
    ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, nullptr);
    ggml_backend_cpu_set_n_threads(cpu, 1);
    double tl = run(cpu, d, L, T, ref, &up);
    ggml_backend_free(cpu);
    ggml_backend_t rpc = ggml_backend_rpc_init(ep, 0);
    if (!rpc) { fprintf(stderr, "cannot reach %s\n", ep); return 1; }
    double tr = run(rpc, d, L, T, got, &up);
    ggml_backend_free(rpc);
    bool same = memcmp(ref.data(), got.data(), d * sizeof(float)) == 0;
    printf("d=%d L=%d weights=%.1f MiB upload=%.3f s (%.0f MB/s) tokens=%d local=%.0f tok/s rpc=%.1f tok/s (%.0f us/token) out=%016" PRIx64 " %s\n",
           d, L, (double)d * d * L * 4 / 1048576, up, (double)d * d * L * 4 / up / 1e6, T, T / tl, T / tr, tr / T * 1e6,
           fnv(got.data(), d * sizeof(float)), same ? "same-as-local" : "DIFFERS-FROM-LOCAL");
    return same ? 0 : 2;
}
