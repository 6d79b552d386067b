// Names and constants of the module directory (documented in src/stitch/manifest.h), shared by
// the stitcher that writes it and the runtime that reads it.
#pragma once

#include <cstdint>

namespace orch::runtime {

/// The manifest's "format" and "version"; the runtime refuses any other.
inline constexpr const char* kManifestFormat = "orch-module";
inline constexpr int kManifestVersion = 1;

/// File names inside a module directory.
inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kWeightsFile = "weights.bin";
inline constexpr const char* kLibraryFile = "kernels.so";
inline constexpr const char* kReportFile = "report.md";
inline constexpr const char* kKernelGraphDir = "kernels";
inline constexpr const char* kBuildDir = "build";

/// Alignment of weights.bin entries and arena buffers.
inline constexpr int64_t kAlignment = 64;

}  // namespace orch::runtime
