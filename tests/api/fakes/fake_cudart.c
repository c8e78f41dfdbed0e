// SPDX-License-Identifier: Apache-2.0
/* A stand-in CUDA runtime for tests of the NCCL layer without a GPU.
 * FAKE_CUDA_DEVICES: device count (default 1); FAKE_CUDA_ERROR: cudaGetDeviceCount's error code.
 * Built once per CUDA major (FAKE_CUDART_MAJOR, the SONAME's number): with FAKE_CUDA_DRIVER_MAJOR
 * below it, cudaGetDeviceCount answers cudaErrorInsufficientDriver, as a runtime newer than the
 * driver does. fake_cudart_major() says which copy a caller got.
 * Built with FAKE_HIP it is libamdhip64 instead (RCCL's runtime): the same entry points named
 * hip*, and hipErrorNotReady (600) for a busy stream.
 * Bus ids are "0000:3B:0N.0" (upper case, as CUDA reports them), N the physical index: a numeric
 * CUDA_VISIBLE_DEVICES entry, or the trailing digits of a UUID entry ("GPU-fake-1" is GPU 1, so
 * that one GPU named by index in one task and by UUID in another is the same bus id).
 * Device memory is host memory; a stream is never busy, unless FAKE_NCCL has the word
 * allreduce_hang (fake_nccl.c), where cudaStreamQuery answers cudaErrorNotReady for ever.
 * fake_cuda_device() is the last device set; fake_cuda_live() counts the buffers and streams
 * allocated and not yet freed (a failure path that leaks them shows there). */
#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FAKE_HIP
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaSetDevice hipSetDevice
#define cudaDeviceGetPCIBusId hipDeviceGetPCIBusId
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMemcpy hipMemcpy
#define cudaStreamCreate hipStreamCreate
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamQuery hipStreamQuery
#define FAKE_NOT_READY ((cudaError_t)600)
#else
#define FAKE_NOT_READY cudaErrorNotReady
#endif

#ifndef FAKE_CUDART_MAJOR
#define FAKE_CUDART_MAJOR (CUDART_VERSION / 1000)
#endif

static int current = -1;

int fake_cudart_major(void) {
    return FAKE_CUDART_MAJOR;
}
static int live = 0;

int fake_cuda_live(void) {
    return __atomic_load_n(&live, __ATOMIC_SEQ_CST);
}

int fake_cuda_device(void) {
    return current;
}

cudaError_t cudaGetDeviceCount(int* count) {
    const char* e = getenv("FAKE_CUDA_ERROR");
    if (e) return (cudaError_t)atoi(e);
    const char* driver = getenv("FAKE_CUDA_DRIVER_MAJOR");
    if (driver && atoi(driver) < FAKE_CUDART_MAJOR) return cudaErrorInsufficientDriver;
    const char* n = getenv("FAKE_CUDA_DEVICES");
    *count = n ? atoi(n) : 1;
    return *count > 0 ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaSetDevice(int device) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || device < 0 || device >= n)
        return cudaErrorInvalidDevice;
    current = device;
    return cudaSuccess;
}

/* The bus id of a device follows the CUDA_VISIBLE_DEVICES entry it stands for (so that tasks
 * of one node that see different GPUs report different ones, as real GPUs would). */
cudaError_t cudaDeviceGetPCIBusId(char* bus, int len, int device) {
    int physical = device;
    const char* v = getenv("CUDA_VISIBLE_DEVICES");
    for (int i = 0; v && *v; ++i) {
        if (i == device) {
            if (*v >= '0' && *v <= '9') {
                physical = atoi(v);
            } else {
                const char* end = strchr(v, ',');
                if (!end) end = v + strlen(v);
                const char* digits = end;
                while (digits > v && digits[-1] >= '0' && digits[-1] <= '9') --digits;
                if (digits < end) physical = atoi(digits);
            }
            break;
        }
        v = strchr(v, ',');
        if (v) ++v;
    }
    snprintf(bus, (size_t)len, "0000:3B:%02X.0", physical);
    return cudaSuccess;
}

const char* cudaGetErrorName(cudaError_t e) {
    switch (e) {
        case cudaErrorSystemNotReady:
            return "cudaErrorSystemNotReady";
        case cudaErrorNoDevice:
            return "cudaErrorNoDevice";
        case cudaErrorInvalidDevice:
            return "cudaErrorInvalidDevice";
        case cudaErrorInsufficientDriver:
            return "cudaErrorInsufficientDriver";
        default:
            return "cudaErrorUnknown";
    }
}

const char* cudaGetErrorString(cudaError_t e) {
    (void)e;
    return "fake CUDA error";
}

cudaError_t cudaMalloc(void** p, size_t size) {
    *p = calloc(1, size);
    if (!*p) return cudaErrorMemoryAllocation;
    __atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
    return cudaSuccess;
}

cudaError_t cudaFree(void* p) {
    if (p) __atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, enum cudaMemcpyKind kind) {
    (void)kind;
    memcpy(dst, src, n);
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* s) {
    *s = (cudaStream_t)malloc(1);
    __atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
    if (s) __atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
    free((void*)s);
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t s) {
    (void)s;
    const char* f = getenv("FAKE_NCCL");
    return f && strstr(f, "allreduce_hang") ? FAKE_NOT_READY : cudaSuccess;
}
