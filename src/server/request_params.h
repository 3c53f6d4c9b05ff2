#pragma once
// Small request readers shared by the route groups.

#include <cstdint>
#include <initializer_list>
#include <string>

#include "common/status.h"
#include "net/http_types.h"

namespace rota::server {

// `text` as a positive id; InvalidArgument "<what> id 'x' must be a positive integer of at most 18 digits".
Result<int64_t> ParsePositiveId(const std::string& what, const std::string& text);

// Query parameter `key` as a whole number up to `max`; `def` when absent.
// InvalidArgument naming the parameter otherwise.
Result<uint64_t> UintParam(const net::HttpRequest& req, const char* key, uint64_t def, uint64_t max);

// Query parameter `key` as an RFC 3339 time in Unix ms; `fallback` when absent.
// InvalidArgument naming the parameter otherwise.
Result<int64_t> TimeParam(const net::HttpRequest& req, const char* key, int64_t fallback);

// InvalidArgument naming the first query parameter not in `allowed`.
Status OnlyQueryParams(const net::HttpRequest& req, std::initializer_list<const char*> allowed);

}  // namespace rota::server
