/* orch's C interface: load a module directory written by `orch optimize` and run it.
 *
 *   orch_module* m = orch_module_load("out");
 *   if (!m) { fprintf(stderr, "%s\n", orch_last_error()); return 1; }
 *   orch_context* ctx = orch_context_create(m);
 *   const void* inputs[] = {x};          // row-major, dtype and shape as the module declares
 *   void* outputs[] = {y};               // preallocated: orch_module_output_bytes(m, 0) bytes
 *   if (orch_run(m, ctx, inputs, outputs) != 0) fprintf(stderr, "%s\n", orch_last_error());
 *   orch_context_destroy(ctx);
 *   orch_module_destroy(m);
 *
 * Every function that can fail returns NULL or a non-zero status and leaves a message for
 * orch_last_error() (per thread); no C++ exception crosses this interface. A module may be run
 * by several threads at once, each with its own context.
 */
#ifndef ORCH_ORCH_H
#define ORCH_ORCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct orch_module orch_module;
typedef struct orch_context orch_context;

/* Loads the module in directory `dir`; NULL on failure (see orch_last_error). */
orch_module* orch_module_load(const char* dir);
void orch_module_destroy(orch_module* module);

/* The module's inputs and outputs: count, name, dtype ("f32", "i64", ...), rank, dims and the
 * size in bytes of a row-major buffer. `index` out of range gives NULL / 0 / -1. */
int orch_module_num_inputs(const orch_module* module);
int orch_module_num_outputs(const orch_module* module);
const char* orch_module_input_name(const orch_module* module, int index);
const char* orch_module_output_name(const orch_module* module, int index);
const char* orch_module_input_dtype(const orch_module* module, int index);
const char* orch_module_output_dtype(const orch_module* module, int index);
int orch_module_input_rank(const orch_module* module, int index);
int orch_module_output_rank(const orch_module* module, int index);
int64_t orch_module_input_dim(const orch_module* module, int index, int axis);
int64_t orch_module_output_dim(const orch_module* module, int index, int axis);
size_t orch_module_input_bytes(const orch_module* module, int index);
size_t orch_module_output_bytes(const orch_module* module, int index);

/* An execution context (its own intermediate arena); NULL on failure. */
orch_context* orch_context_create(const orch_module* module);
void orch_context_destroy(orch_context* context);

/* Runs the module: inputs[i] points to input i, outputs[i] to a buffer of
 * orch_module_output_bytes(module, i) bytes. Returns 0 on success, -1 on failure. */
int orch_run(const orch_module* module, orch_context* context, const void* const* inputs,
             void* const* outputs);

/* Worker threads of the kernels (0: one per core); process-wide. */
void orch_set_threads(const orch_module* module, int threads);

/* The calling thread's last error message ("" when none). */
const char* orch_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* ORCH_ORCH_H */
