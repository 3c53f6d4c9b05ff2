#pragma once
// Client commands. Each returns the process exit status: 0 success, 1 error
// reported on stderr (server unreachable, not found, ...), 2 usage error.

#include <string>

#include "cli/client.h"

namespace rota::cli {

struct OutputOptions {
  std::string format = "table";  // "table" or "json"
};

// Checks -o; prints the error and returns false on an unknown format.
bool ValidOutput(const OutputOptions& out);

int RunNodes(const ClientOptions& client, const OutputOptions& out);
int RunGpus(const ClientOptions& client, const OutputOptions& out, const std::string& node);

struct TopOptions {
  std::string node;     // only this node
  int frames = 0;       // stop after this many frames (0: until interrupted)
  double refresh_s = 1; // at most one redraw per this many seconds
};
int RunTop(const ClientOptions& client, const OutputOptions& out, const TopOptions& top);

// Renders the GPU table of `gpus` (array of GPU rows as GET /api/v1/gpus returns).
std::string RenderGpuTable(const api::Json& gpus, bool show_processes);

}  // namespace rota::cli
