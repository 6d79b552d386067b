// A quick look at a model file without importing it.
#pragma once

#include <string>
#include <vector>

namespace orch::frontend {

/// The distinct op types a model uses, sorted; ops of a non-default domain are written
/// "domain::Op". Throws Error when the file cannot be read or parsed.
std::vector<std::string> model_op_types(const std::string& path);

}  // namespace orch::frontend
