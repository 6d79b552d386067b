/* The C interface between a module's kernels.so (its generated driver) and the runtime that
 * loads it. Plain C: the generated driver includes it (a copy is written to the module's build/
 * directory) and the runtime resolves these symbols with dlsym.
 *
 * Every kernel's buffers are fixed when the module is generated: the driver computes each
 * pointer as a region base plus a constant offset. The runtime gives the bases per run:
 *   arena    the context's intermediate arena (64-byte aligned)
 *   weights  the memory-mapped weights.bin
 *   inputs   one pointer per module input, outputs one per module output
 * Kernels run by the runtime (dnnl, reference: "external") are called back through `external`
 * with their input and output pointers; `after_kernel`, when not null, runs after every kernel
 * (validation compares kernel outputs with the interpreter through it).
 */
#ifndef ORCH_RUNTIME_MODULE_ABI_H
#define ORCH_RUNTIME_MODULE_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bump when the entry points or the frame change; the runtime refuses another version. */
#define ORCH_MODULE_ABI_VERSION 1

/* Runs external kernel `kernel`; returns 0 on success. */
typedef int (*orch_external_fn)(void* user, int kernel, const void* const* inputs,
                                void* const* outputs);
/* Called after kernel `kernel` ran; a non-zero return stops the run. */
typedef int (*orch_after_kernel_fn)(void* user, int kernel);

/* The per-run region bases and callbacks. */
typedef struct orch_module_frame {
  uint8_t* arena;
  const uint8_t* weights;
  const void* const* inputs;
  void* const* outputs;
  void* user;
  orch_external_fn external;
  orch_after_kernel_fn after_kernel; /* may be null */
  int failed_kernel;                 /* set by orch_module_run when it returns non-zero */
} orch_module_frame;

/* ORCH_MODULE_ABI_VERSION of the driver. */
int orch_module_abi_version(void);
/* The number of kernels the driver runs. */
int orch_module_num_kernels(void);
/* Runs every kernel in plan order; 0 on success, otherwise frame->failed_kernel names the
 * kernel and orch_module_last_error() (for Halide kernels) says why. Thread-safe. */
int orch_module_run(orch_module_frame* frame);
/* OpenMP threads of the calling thread's Halide kernels, whose parallel loops run on OpenMP
 * (0: one per core). */
void orch_module_set_threads(int threads);
/* The calling thread's last Halide error message ("" when none). */
const char* orch_module_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* ORCH_RUNTIME_MODULE_ABI_H */
