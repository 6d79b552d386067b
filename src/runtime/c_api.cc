// The C interface (include/orch/orch.h) over orch::Module: every entry point catches, so no C++
// exception crosses it, and failures leave their message in a thread-local string.
#include "orch/orch.h"

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "orch/module.h"

struct orch_module {
  orch::Module module;
};

struct orch_context {
  orch::Context context;
};

namespace {

thread_local std::string last_error;

// Runs `body`, turning any exception into `failed` and the message.
template <typename T, typename F>
T guarded(T failed, F&& body) {
  try {
    last_error.clear();
    return body();
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
  } catch (const std::exception& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "unknown error";
  }
  return failed;
}

const orch::TensorSpec* spec(const std::vector<orch::TensorSpec>& specs, int index) {
  return index >= 0 && static_cast<size_t>(index) < specs.size() ? &specs[index] : nullptr;
}

const orch::TensorSpec* input(const orch_module* m, int index) {
  return m ? spec(m->module.inputs(), index) : nullptr;
}

const orch::TensorSpec* output(const orch_module* m, int index) {
  return m ? spec(m->module.outputs(), index) : nullptr;
}

const char* dtype_of(const orch::TensorSpec* s) {
  return s ? orch::dtype_name(s->type.dtype).data() : nullptr;
}

int rank_of(const orch::TensorSpec* s) {
  return s ? static_cast<int>(s->type.shape.size()) : -1;
}

int64_t dim_of(const orch::TensorSpec* s, int axis) {
  return s && axis >= 0 && axis < rank_of(s) ? s->type.shape[axis] : -1;
}

size_t bytes_of(const orch::TensorSpec* s) {
  return s ? static_cast<size_t>(orch::num_elements(s->type.shape)) *
                 orch::dtype_size(s->type.dtype)
           : 0;
}

}  // namespace

extern "C" {

orch_module* orch_module_load(const char* dir) {
  return guarded<orch_module*>(nullptr, [&] {
    if (!dir) throw std::invalid_argument("orch_module_load: dir is NULL");
    return new orch_module{orch::Module::load(dir)};
  });
}

void orch_module_destroy(orch_module* module) {
  delete module;
}

int orch_module_num_inputs(const orch_module* m) {
  return m ? static_cast<int>(m->module.inputs().size()) : -1;
}
int orch_module_num_outputs(const orch_module* m) {
  return m ? static_cast<int>(m->module.outputs().size()) : -1;
}
const char* orch_module_input_name(const orch_module* m, int i) {
  const orch::TensorSpec* s = input(m, i);
  return s ? s->name.c_str() : nullptr;
}
const char* orch_module_output_name(const orch_module* m, int i) {
  const orch::TensorSpec* s = output(m, i);
  return s ? s->name.c_str() : nullptr;
}
const char* orch_module_input_dtype(const orch_module* m, int i) {
  return dtype_of(input(m, i));
}
const char* orch_module_output_dtype(const orch_module* m, int i) {
  return dtype_of(output(m, i));
}
int orch_module_input_rank(const orch_module* m, int i) {
  return rank_of(input(m, i));
}
int orch_module_output_rank(const orch_module* m, int i) {
  return rank_of(output(m, i));
}
int64_t orch_module_input_dim(const orch_module* m, int i, int axis) {
  return dim_of(input(m, i), axis);
}
int64_t orch_module_output_dim(const orch_module* m, int i, int axis) {
  return dim_of(output(m, i), axis);
}
size_t orch_module_input_bytes(const orch_module* m, int i) {
  return bytes_of(input(m, i));
}
size_t orch_module_output_bytes(const orch_module* m, int i) {
  return bytes_of(output(m, i));
}

orch_context* orch_context_create(const orch_module* m) {
  return guarded<orch_context*>(nullptr, [&] {
    if (!m) throw std::invalid_argument("orch_context_create: module is NULL");
    return new orch_context{m->module.new_context()};
  });
}

void orch_context_destroy(orch_context* context) {
  delete context;
}

int orch_run(const orch_module* m, orch_context* context, const void* const* inputs,
             void* const* outputs) {
  return guarded(-1, [&] {
    if (!m || !context) throw std::invalid_argument("orch_run: module or context is NULL");
    const auto& in_specs = m->module.inputs();
    const auto& out_specs = m->module.outputs();
    if (in_specs.size() > 0 && !inputs) throw std::invalid_argument("orch_run: inputs is NULL");
    if (out_specs.size() > 0 && !outputs) throw std::invalid_argument("orch_run: outputs is NULL");
    std::vector<orch::Tensor> in;
    for (size_t i = 0; i < in_specs.size(); ++i) {
      if (!inputs[i])
        throw std::invalid_argument("orch_run: input " + std::to_string(i) + " ('" +
                                    in_specs[i].name + "') is NULL");
      // A view of the caller's buffer (a no-op owner): the module only reads it during the run.
      std::shared_ptr<const void> view(inputs[i], [](const void*) {});
      in.push_back(orch::Tensor::wrap(in_specs[i].type.dtype, in_specs[i].type.shape,
                                      std::move(view), inputs[i]));
    }
    std::vector<orch::Tensor> results = m->module.run(context->context, in);
    for (size_t i = 0; i < out_specs.size(); ++i) {
      if (!outputs[i])
        throw std::invalid_argument("orch_run: output " + std::to_string(i) + " ('" +
                                    out_specs[i].name + "') is NULL");
      std::memcpy(outputs[i], results[i].bytes(), results[i].nbytes());
    }
    return 0;
  });
}

void orch_set_threads(const orch_module* m, int threads) {
  if (m)
    guarded(0, [&] {
      m->module.set_threads(threads);
      return 0;
    });
}

const char* orch_last_error(void) {
  return last_error.c_str();
}

}  // extern "C"
