#pragma once
// JSON codecs for the wire types. Decoders validate: wrong types, missing
// required fields, values out of range and oversized arrays/strings are
// rejected with InvalidArgument naming the field (e.g. "gpus[2].index: ...").

#include <nlohmann/json.hpp>

#include "api/types.h"
#include "common/status.h"

namespace rota::api {

using Json = nlohmann::json;

Json ToJson(const GpuProcess& p);
Json ToJson(const GpuSample& s);
Json ToJson(const CpuTaskSample& t);
Json ToJson(const HostSample& h);
Json ToJson(const NodeSample& s);
Json ToJson(const GpuInfo& g);
Json ToJson(const NodeInfo& n);

Result<GpuProcess> GpuProcessFromJson(const Json& j);
Result<GpuSample> GpuSampleFromJson(const Json& j);
Result<CpuTaskSample> CpuTaskSampleFromJson(const Json& j);
Result<HostSample> HostSampleFromJson(const Json& j);
Result<NodeSample> NodeSampleFromJson(const Json& j);
Result<GpuInfo> GpuInfoFromJson(const Json& j);
Result<NodeInfo> NodeInfoFromJson(const Json& j);

// Arrays and objects nest at most this deep in text ParseJson accepts.
inline constexpr size_t kMaxJsonDepth = 64;

// Parses text as JSON; InvalidArgument with the parser's position on junk, and
// on arrays/objects nested deeper than kMaxJsonDepth (copying or printing such a
// value would overflow the stack).
Result<Json> ParseJson(const std::string& text);

// Parses text people write (API request bodies, configuration files): as ParseJson, and
// an object that names a key twice is InvalidArgument ('key "gpus" appears twice in one
// object'): the writer must not get a different reading than meant (ParseJson keeps the
// last). Slower than ParseJson; machine-written text (agent messages, rows) uses that.
Result<Json> ParseStrictJson(const std::string& text);

// A valid node name: 1..63 chars of [A-Za-z0-9._-], starting alphanumeric.
bool IsValidNodeName(const std::string& name);

}  // namespace rota::api
