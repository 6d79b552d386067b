#include "codegen/dnnl/dnnl_scratch.h"

#include <cstdlib>
#include <memory>
#include <new>

namespace orch::codegen {
namespace {

// Cache-line alignment for every buffer; oneDNN asks no more of user memory.
constexpr size_t kAlign = 64;

size_t aligned(size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};

// The calling thread's scratch, at least `bytes` long. It only grows: a model's largest kernel
// sets its size once.
std::byte* thread_scratch(size_t bytes) {
  thread_local std::unique_ptr<std::byte, FreeDeleter> buffer;
  thread_local size_t capacity = 0;
  if (bytes > capacity) {
    buffer.reset();
    buffer.reset(static_cast<std::byte*>(std::aligned_alloc(kAlign, aligned(bytes))));
    if (buffer == nullptr) throw std::bad_alloc();
    capacity = bytes;
  }
  return buffer.get();
}

}  // namespace

dnnl::memory DnnlTransients::add(const dnnl::memory::desc& desc, const dnnl::engine& engine) {
  dnnl::memory m(desc, engine, static_cast<void*>(nullptr));
  memories_.emplace_back(m, bytes_);
  bytes_ += aligned(desc.get_size());
  return m;
}

void DnnlTransients::bind() {
  if (memories_.empty()) return;
  std::byte* base = thread_scratch(bytes_);
  for (auto& [m, offset] : memories_) m.set_data_handle(base + offset);
}

}  // namespace orch::codegen
