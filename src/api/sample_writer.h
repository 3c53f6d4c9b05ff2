#pragma once
// DOM-free JSON writers for samples, producing exactly what api::ToJson produces
// (checked by protocol_test). Used on hot paths: the agent's sample messages and
// the server's GPU listings.

#include "api/json_writer.h"
#include "api/types.h"

namespace rota::api {

void WriteGpuProcess(JsonWriter& w, const GpuProcess& p);
// {"index", "uuid", readings...}
void WriteGpuSample(JsonWriter& w, const GpuSample& g);
// The fields of a GpuSample after index and uuid (failed/error, readings, processes),
// inside an object the caller opened.
void WriteGpuSampleReadings(JsonWriter& w, const GpuSample& g);
void WriteHostSample(JsonWriter& w, const HostSample& h);
void WriteNodeSample(JsonWriter& w, const NodeSample& s);

}  // namespace rota::api
