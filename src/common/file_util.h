#pragma once
// File-system helpers returning Status.

#include <cstdint>
#include <string>
#include <sys/types.h>

#include "common/status.h"

namespace rota {

// Reads a whole file. NotFound if it does not exist, IoError otherwise.
// InvalidArgument once more than `max_bytes` are read (a file people name: a
// device or a huge file must not exhaust memory).
Result<std::string> ReadFile(const std::string& path, size_t max_bytes = SIZE_MAX);
// Writes `data` to `path` atomically (temp file + fsync + rename) with `mode`.
Status WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode = 0644);
// mkdir -p with `mode` for created directories.
Status MakeDirs(const std::string& path, mode_t mode = 0755);
// `bytes` random bytes from the kernel, hex encoded (2*bytes characters).
Result<std::string> RandomHex(size_t bytes);

}  // namespace rota
