/* Runs a module compiled by `orch optimize` through orch's C interface (include/orch/orch.h).
 *
 *   run_module MODULE_DIR OUT_PREFIX INPUT0.bin [INPUT1.bin ...]
 *
 * Each input file holds the raw row-major bytes of one module input, in order; output i is
 * written to OUT_PREFIX<i>.bin. Prints each output's name, dtype and dims. */
#include <stdio.h>
#include <stdlib.h>

#include "orch/orch.h"

static void* read_file(const char* path, size_t bytes) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  void* data = malloc(bytes ? bytes : 1);
  size_t got = data ? fread(data, 1, bytes, f) : 0;
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != bytes || extra) {
    free(data);
    return NULL;
  }
  return data;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: run_module MODULE_DIR OUT_PREFIX INPUT0.bin [INPUT1.bin ...]\n");
    return 2;
  }
  orch_module* module = orch_module_load(argv[1]);
  if (!module) {
    fprintf(stderr, "error: %s\n", orch_last_error());
    return 1;
  }
  int num_inputs = orch_module_num_inputs(module), num_outputs = orch_module_num_outputs(module);
  if (argc - 3 != num_inputs) {
    fprintf(stderr, "error: the module has %d inputs, %d files given\n", num_inputs, argc - 3);
    orch_module_destroy(module);
    return 2;
  }
  int status = 1;
  const void** inputs = calloc((size_t)num_inputs + 1, sizeof(void*));
  void** outputs = calloc((size_t)num_outputs + 1, sizeof(void*));
  orch_context* context = orch_context_create(module);
  if (!context) {
    fprintf(stderr, "error: %s\n", orch_last_error());
    goto done;
  }
  for (int i = 0; i < num_inputs; ++i) {
    inputs[i] = read_file(argv[3 + i], orch_module_input_bytes(module, i));
    if (!inputs[i]) {
      fprintf(stderr, "error: %s: not %zu bytes of input '%s'\n", argv[3 + i],
              orch_module_input_bytes(module, i), orch_module_input_name(module, i));
      goto done;
    }
  }
  for (int i = 0; i < num_outputs; ++i)
    outputs[i] = malloc(orch_module_output_bytes(module, i) + 1);
  if (orch_run(module, context, inputs, outputs) != 0) {
    fprintf(stderr, "error: %s\n", orch_last_error());
    goto done;
  }
  for (int i = 0; i < num_outputs; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s%d.bin", argv[2], i);
    FILE* f = fopen(path, "wb");
    size_t bytes = orch_module_output_bytes(module, i);
    if (!f || fwrite(outputs[i], 1, bytes, f) != bytes) {
      fprintf(stderr, "error: cannot write %s\n", path);
      if (f) fclose(f);
      goto done;
    }
    fclose(f);
    printf("%s: %s[", orch_module_output_name(module, i), orch_module_output_dtype(module, i));
    for (int a = 0; a < orch_module_output_rank(module, i); ++a)
      printf("%s%lld", a ? "," : "", (long long)orch_module_output_dim(module, i, a));
    printf("] -> %s\n", path);
  }
  status = 0;
done:
  for (int i = 0; i < num_inputs; ++i) free((void*)inputs[i]);
  for (int i = 0; i < num_outputs; ++i) free(outputs[i]);
  free(inputs);
  free(outputs);
  orch_context_destroy(context);
  orch_module_destroy(module);
  return status;
}
