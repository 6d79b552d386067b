#include "interp/kernel.h"

#include "interp/kernels/families.h"

namespace orch::interp {
namespace {

KernelTable build_table() {
  KernelTable table;
  add_elementwise_kernels(table);
  add_reduce_kernels(table);
  add_normalization_kernels(table);
  add_linear_kernels(table);
  add_pooling_kernels(table);
  add_layout_kernels(table);
  add_indexing_kernels(table);
  add_generator_kernels(table);
  add_opaque_kernels(table);
  add_quantize_kernels(table);
  add_loss_kernels(table);
  add_primitive_kernels(table);
  return table;
}

}  // namespace

Kernel find_kernel(std::string_view op) {
  static const KernelTable kTable = build_table();
  for (const auto& [name, kernel] : kTable)
    if (name == op) return kernel;
  return nullptr;
}

}  // namespace orch::interp
