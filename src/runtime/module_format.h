// Names and constants of the module directory (documented in src/stitch/manifest.h), shared by
// the stitcher that writes it and the runtime that reads it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace orch::runtime {

/// The manifest's "format" and "version"; the runtime refuses any other.
inline constexpr const char* kManifestFormat = "orch-module";
inline constexpr int kManifestVersion = 1;
/// The "format" of a module compiled for CUDA (orch optimize --target cuda): the same manifest
/// plus the target architecture, the cubin and each kernel's launches (stitch/manifest.h).
inline constexpr const char* kCudaManifestFormat = "orch-cuda-module";

/// File names inside a module directory.
inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kWeightsFile = "weights.bin";
inline constexpr const char* kLibraryFile = "kernels.so";
inline constexpr const char* kCubinFile = "kernels.cubin";
inline constexpr const char* kCudaSourceFile = "kernels.cu";
inline constexpr const char* kReportFile = "report.md";
inline constexpr const char* kKernelGraphDir = "kernels";
inline constexpr const char* kBuildDir = "build";

/// Alignment of weights.bin entries and arena buffers.
inline constexpr int64_t kAlignment = 64;

/// The regions a value's bytes live in (see stitch/manifest.h).
enum class Region { arena, weights, input, output };

/// The manifest's name of a region: "arena", "weights", "input", "output".
inline std::string_view region_name(Region region) {
  constexpr std::string_view kNames[] = {"arena", "weights", "input", "output"};
  return kNames[static_cast<int>(region)];
}

/// Where a value's bytes are: `index` for inputs and outputs, `offset` for the arena and weights.
struct Location {
  Region region = Region::arena;
  int index = 0;
  int64_t offset = 0;
  int64_t bytes = 0;
};

/// A kernel input or output: the primitive graph value, its type and where it lives.
struct KernelValue {
  std::string value;
  TensorType type;
  Location at;
  /// 0: stored in its type's row-major layout; else channel-blocked, the channels (dim 1) in
  /// blocks of this many innermost (oneDNN's nChw16c for 16), C a multiple of it.
  int64_t channel_block = 0;
};

}  // namespace orch::runtime
