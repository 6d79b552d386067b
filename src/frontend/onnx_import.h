// ONNX import: a .onnx file (or bytes) becomes a verified Graph in orch's internal form
// (ONNX opset 17 semantics; older opsets rewritten), with every dim bound and every
// shape-computing subgraph folded to constants.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace orch::frontend {

struct ImportOptions {
  /// Bindings for symbolic (or any) input dims: input name -> shape.
  std::map<std::string, Shape> shapes;
  /// Known values of graph inputs. An input that feeds a slot which must be constant
  /// (Reshape's shape, ...) is bound to its value and stops being a graph input; other
  /// known inputs are ignored.
  std::map<std::string, Tensor> known_inputs;
  /// Fold every node whose inputs are all constants (shape chains always fold).
  bool fold_constants = true;
};

/// Loads a model file. External data files are read relative to the model's folder.
/// Throws Error naming the problem (file, node, value) on anything it cannot import: an
/// Unsupported (ir/error.h) for a valid model that uses what orch lacks (an op, a dtype, a
/// domain, an old op form), a plain Error for a broken model or a missing binding.
Graph import_onnx_file(const std::string& path, const ImportOptions& options = {});
/// Loads a model from serialized bytes; external data is resolved against `base_dir`.
Graph import_onnx_bytes(const std::string& bytes, const std::string& base_dir,
                        const ImportOptions& options = {});

/// One graph input as the file declares it, before binding: dims are numbers or names.
struct DeclaredInput {
  std::string name;
  std::string dtype;              // orch dtype name, or the ONNX name when orch lacks it
  std::vector<std::string> dims;  // "3", "N", "?" for an unnamed unknown dim
};

/// The model's declared (non-initializer) inputs, for `orch info` and error messages.
std::vector<DeclaredInput> declared_inputs(const std::string& path);

}  // namespace orch::frontend
