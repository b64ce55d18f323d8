// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// A minimal rpc-server for ggml's RPC backend (tools/bench-ggml-rpc, docs/tools.md,
// "llama.cpp RPC over RDMA"): ggml's own repository has the server in its library
// (ggml_backend_rpc_start_server, include/ggml-rpc.h) but not llama.cpp's
// tools/rpc/rpc-server.cpp front end.  Serves the CPU device on ENDPOINT with N threads.
//
//   rpc-server-min [HOST:PORT] [THREADS]
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-rpc.h"

#include <cstdio>
#include <cstdlib>

int main(int argc, char ** argv) {
    const char * ep = argc > 1 ? argv[1] : "127.0.0.1:50052";
    int nt = argc > 2 ? atoi(argv[2]) : 1;
    ggml_backend_load_all();
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (!cpu) {
        fprintf(stderr, "rpc-server-min: no CPU device\n");
        return 1;
    }
    ggml_backend_rpc_start_server(ep, nullptr, nt > 0 ? nt : 1, 1, &cpu);
    return 1;   // returns only when the server could not start
}
